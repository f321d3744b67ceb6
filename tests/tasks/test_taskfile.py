"""User task files: the shipped example, and one-line errors for bad files."""

from pathlib import Path

import pytest

import autonesy.tasks.examples as examples
from autonesy.tasks.equivalence import prove_equivalence
from autonesy.tasks.taskfile import TaskFileError, load_task_file

EXAMPLE = Path(examples.__file__).parent / "pizza.toml"

GOOD = """
name = "rain"
[[variables]]
name = "rain"
meaning = "it rains"
[[variables]]
name = "wet"
meaning = "the street is wet"
[descriptions]
detailed = "- If it rains, the street is wet."
not_detailed = "Rain makes the street wet."
"""


def write(tmp_path, text, name="task.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_example_task_file_loads_and_is_proven():
    task = load_task_file(EXAMPLE)
    assert task.name == "pizza" and task.num_vars == 9
    assert task.ground_truth.num_aux_vars > 0
    report = prove_equivalence(task)
    assert report.method == "exhaustive" and report.assignments_checked == 2**9
    # independently: 2 bases × (toppings ≤ 3 without pineapple+salami), vegetarian fixed by the meat
    from itertools import product

    valid = sum(1 for t in product((0, 1), repeat=6) if sum(t) <= 3 and not (t[5] and t[3])) * 2
    assert report.model_count == valid


def test_minimal_file_without_ground_truth_or_oracle(tmp_path):
    task = load_task_file(write(tmp_path, GOOD))
    assert not task.has_ground_truth and not task.has_oracle
    assert task.metadata.equivalence_method == "none"


RAIN_MODULE = "def encode():\n    return [[-1, 2]]\n\ndef oracle(a):\n    return (not a['rain']) or a['wet']\n"
RAIN_WITH_MODULES = GOOD + '[ground_truth]\nencoder = "rain_rules:encode"\n[oracle]\nfunction = "rain_rules:oracle"\n'


def test_encoder_and_oracle_from_modules_next_to_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_TRUST_TASK_CODE", "1")
    (tmp_path / "rain_rules.py").write_text(RAIN_MODULE)
    task = load_task_file(write(tmp_path, RAIN_WITH_MODULES))
    assert prove_equivalence(task).model_count == 3


@pytest.mark.parametrize("value", [None, "0", "yes", ""])
def test_modules_beside_a_received_task_file_are_not_run_unless_trusted(tmp_path, monkeypatch, value):
    # the module would run outside the sandbox: without the user's word it must not even be imported
    if value is None:
        monkeypatch.delenv("AUTONESY_TRUST_TASK_CODE", raising=False)
    else:
        monkeypatch.setenv("AUTONESY_TRUST_TASK_CODE", value)
    marker = tmp_path / "imported"
    (tmp_path / "rain_rules.py").write_text(f"open({str(marker)!r}, 'w').close()\n" + RAIN_MODULE)
    with pytest.raises(TaskFileError, match="--trust-task-code") as error:
        load_task_file(write(tmp_path, RAIN_WITH_MODULES))
    assert "\n" not in str(error.value) and not marker.exists()


def test_cli_flag_trusts_the_task_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    monkeypatch.setenv("AUTONESY_TRUST_TASK_CODE", "0")  # restored after the flag sets it
    (tmp_path / "cli_rain_rules.py").write_text(RAIN_MODULE)
    path = write(tmp_path, RAIN_WITH_MODULES.replace("rain_rules:", "cli_rain_rules:"))
    refused = CliRunner().invoke(app, ["task", "show", str(path)])
    assert refused.exit_code != 0 and "--trust-task-code" in refused.output
    trusted = CliRunner().invoke(app, ["--trust-task-code", "task", "show", str(path)])
    assert trusted.exit_code == 0, trusted.output
    assert "rain" in trusted.output


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda t: t.replace('name = "wet"', 'name = "rain"'), "duplicate variable name 'rain'"),
        (lambda t: t.replace('name = "wet"\n', ""), "'name' must be a non-empty string"),
        (lambda t: t.replace('not_detailed = "Rain makes the street wet."', 'not_detailed = "  "'), "'not_detailed'"),
        (lambda t: t + '[oracle]\nfunction = "no_such_module_xyz:f"\n', "cannot import module 'no_such_module_xyz'"),
        (lambda t: t + '[oracle]\nfunction = "os:abort"\n', "names only modules beside it"),
        (lambda t: t + '[ground_truth]\nencoder = "faulthandler:_sigsegv"\n', "must look like 'module:function'"),
        (lambda t: t + '[oracle]\nfunction = "json"\n', "module:function"),
        (lambda t: t + '[ground_truth]\ndimacs = "rules.cnf"\n', "not found"),
        (lambda t: t.replace('name = "rain"\n[[', 'name = "rain\n[['), "not valid TOML"),
        (lambda t: t.replace('name = "wet"', 'name = "wet street"'), "must start with a letter"),
        (lambda t: t.replace("[descriptions]", "[other]"), r"missing \[descriptions\]"),
    ],
)
def test_bad_task_files_get_one_line_errors(tmp_path, mutate, needle):
    with pytest.raises(TaskFileError, match=needle) as error:
        load_task_file(write(tmp_path, mutate(GOOD)))
    assert "\n" not in str(error.value)


def test_dimacs_variable_out_of_range(tmp_path):
    (tmp_path / "rules.cnf").write_text("p cnf 2 1\n-1 3 0\n")
    with pytest.raises(TaskFileError, match="literal 3 exceeds the 2 declared variables"):
        load_task_file(write(tmp_path, GOOD + '[ground_truth]\ndimacs = "rules.cnf"\n'))


def test_missing_file():
    with pytest.raises(TaskFileError, match="no such task file"):
        load_task_file("/nonexistent/task.toml")
