"""The command line as a user drives it: exit codes, one-line errors, JSON shapes, files written."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import autonesy.tasks.examples as examples
from autonesy.graph.cli import app
from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tools.cnf import parse_dimacs
from autonesy.tools.counting import count_models

runner = CliRunner()
EXAMPLE = str(Path(examples.__file__).parent / "pizza.toml")


def invoke(*args):
    return runner.invoke(app, list(args))


def test_tasks_json_lists_all_18_with_counts():
    result = invoke("tasks", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    names = [row["name"] for row in rows]
    assert names[: len(TASK_NAMES)] == list(TASK_NAMES)  # the catalogue first, in the published order
    assert all("/" in name for name in names[len(TASK_NAMES) :])  # then installed plugins' tasks, namespaced
    for row in rows:
        assert {"name", "num_vars", "num_clauses", "published_clauses", "model_count"} <= set(row)
    sushi = next(row for row in rows if row["name"] == "sushi")
    assert sushi["num_vars"] == 16 and sushi["model_count"] == 24  # 4! rankings


def test_tasks_table_shows_each_task():
    result = invoke("tasks")
    assert result.exit_code == 0
    for name in TASK_NAMES:
        assert name in result.output


def test_task_show_prints_variables_and_the_chosen_description():
    task = get_task("sushi")
    detailed = invoke("task", "show", "sushi")
    plain = invoke("task", "show", "sushi", "--detail", "not-detailed")
    assert detailed.exit_code == plain.exit_code == 0
    assert task.names[0] in detailed.output
    assert task.descriptions.detailed.splitlines()[0][:40] in detailed.output
    assert task.descriptions.not_detailed[:40] in plain.output


def test_task_show_reads_a_task_file():
    result = invoke("task", "show", EXAMPLE, "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["name"] == "pizza"


def test_task_export_writes_named_dimacs_and_json(tmp_path):
    result = invoke("task", "export", "warcraft", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    task = get_task("warcraft")
    text = (tmp_path / "warcraft.cnf").read_text()
    for index, name in enumerate(task.names, start=1):
        assert f"c var {index} {name}\n" in text
    cnf = parse_dimacs(text)
    assert cnf.num_task_vars == task.num_vars
    assert count_models(cnf).value == count_models(task.ground_truth).value
    record = json.loads((tmp_path / "warcraft.json").read_text())
    assert record["descriptions"]["detailed"] == task.descriptions.detailed
    assert [v["name"] for v in record["variables"]] == task.names


@pytest.mark.parametrize("args", [("task", "show", "mnist"), ("task", "export", "mnist", "--out", "x")])
def test_unknown_task_exits_non_zero_with_known_names(args):
    result = invoke(*args)
    assert result.exit_code != 0
    assert "unknown task 'mnist'" in result.output and "sudoku" in result.output
    assert "Traceback" not in result.output


def test_bad_task_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n')
    result = invoke("task", "show", str(bad))
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "variables" in result.output


def test_score_ground_truth_against_itself(tmp_path):
    formula = tmp_path / "gt.cnf"
    invoke("task", "export", "sudoku", "--out", str(tmp_path))
    shutil.copy(tmp_path / "sudoku.cnf", formula)
    result = invoke("score", str(formula), "--task", "sudoku", "--format", "dimacs", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["f1"] == 1.0 and data["relation"] == "equal" and data["mc_ratio"] == 1.0
    assert data["tp"] == 288 and data["fp"] == data["fn"] == 0
    assert {"precision", "recall", "tn", "count_method"} <= set(data)


def test_score_a_strict_formula(tmp_path):
    formula = tmp_path / "f.txt"
    # fashion: only "trouser" allowed → strict, recall 1/10
    formula.write_text("<cnf>\np cnf 10 10\n2 0\n-1 0\n-3 0\n-4 0\n-5 0\n-6 0\n-7 0\n-8 0\n-9 0\n-10 0\n</cnf>")
    result = invoke("score", str(formula), "--task", "fashion", "--format", "dimacs", "--json")
    data = json.loads(result.output)
    assert data["relation"] == "strict" and data["recall"] == pytest.approx(0.1) and data["precision"] == 1.0


def test_score_syntax_error_exits_non_zero_with_the_message(tmp_path):
    formula = tmp_path / "f.txt"
    formula.write_text("<cnf>\np cnf 10 1\n1 banana 0\n</cnf>")
    result = invoke("score", str(formula), "--task", "fashion", "--format", "dimacs")
    assert result.exit_code == 1
    assert "banana" in result.output and "Traceback" not in result.output


def test_score_an_answer_without_a_block_says_so(tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text("Exactly one class holds – so I would encode it with a one-hot constraint.\n")
    result = invoke("score", str(answer), "--task", "fashion", "--format", "cpmpy")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "no <cnf> block" in result.output


def test_compile_writes_dimacs_and_sdd(tmp_path):
    formula = tmp_path / "onehot.txt"
    formula.write_text("<cnf>p cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0\n</cnf>")
    result = invoke("compile", str(formula), "--task", "fashion", "--format", "dimacs", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    for suffix in (".cnf", ".sdd", ".vtree"):
        assert (tmp_path / "out" / f"onehot{suffix}").is_file()
    assert "1,023 models" in result.output


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "autonesy-agent"
    completed = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 and "tasks" in completed.stdout
