"""A received task file is data (issue 27): the files it names stay below its folder, its DIMACS header
and its size are bounded, its TOML nesting is bounded, and every failure is one line, also through the
command line (``task show``, ``task export``, ``run --task-file``)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.tasks.taskfile import MAX_TASK_FILE_BYTES, TaskFileError, load_task_file
from autonesy.tools.cnf import MAX_AUX_VARS

runner = CliRunner()
SECRET = "c the private key\np cnf 2 1\n1 2 0\n"  # a readable DIMACS: a leak would load without complaint
RAIN = """name = "rain"
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


def task_with_dimacs(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "task.toml"
    path.write_text(RAIN + f"[ground_truth]\ndimacs = {name!r}\n")
    return path


def one_line_error(path: Path, needle: str) -> str:
    with pytest.raises(TaskFileError) as caught:
        load_task_file(path)
    message = str(caught.value)
    assert "\n" not in message and needle in message, message
    return message


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "private" / "id.cnf"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return secret


def test_an_absolute_dimacs_path_is_refused(tmp_path: Path, outside: Path):
    one_line_error(task_with_dimacs(tmp_path / "task", str(outside)), "must be a relative path below")


def test_a_dimacs_path_climbing_out_is_refused(tmp_path: Path, outside: Path):
    one_line_error(task_with_dimacs(tmp_path / "task", "../private/id.cnf"), "must be a relative path below")
    # ".." that would come back inside is refused too: the rule is read from the text, not the disk
    (tmp_path / "task" / "g.cnf").write_text("p cnf 2 1\n-1 2 0\n")
    one_line_error(task_with_dimacs(tmp_path / "task", "../task/g.cnf"), "must be a relative path below")


def test_a_link_leading_out_is_refused(tmp_path: Path, outside: Path):
    path = task_with_dimacs(tmp_path / "task", "sub/g.cnf")
    (tmp_path / "task" / "sub").mkdir()
    (tmp_path / "task" / "sub" / "g.cnf").symlink_to(outside)
    one_line_error(path, "is a link that leads outside")
    (tmp_path / "task" / "sub" / "g.cnf").unlink()
    (tmp_path / "task" / "sub").rmdir()
    (tmp_path / "task" / "sub").symlink_to(outside.parent)  # a linked folder on the way
    one_line_error(task_with_dimacs(tmp_path / "task", "sub/id.cnf"), "is a link that leads outside")


def test_a_file_below_the_folder_and_a_link_inside_it_load(tmp_path: Path):
    folder = tmp_path / "task"
    (folder / "truth").mkdir(parents=True)
    (folder / "truth" / "g.cnf").write_text("p cnf 2 1\n-1 2 0\n")
    (folder / "linked.cnf").symlink_to(folder / "truth" / "g.cnf")
    for name in ("truth/g.cnf", "linked.cnf"):
        assert load_task_file(task_with_dimacs(folder, name)).ground_truth.clauses == ((-1, 2),)


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path):
    path = task_with_dimacs(tmp_path / "task", "g.cnf")
    os.mkfifo(tmp_path / "task" / "g.cnf")
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(one_line_error(path, "not a regular file")), daemon=True)
    worker.start()
    worker.join(10)
    assert outcome, "loading the task file waited on a FIFO"


@pytest.mark.parametrize(
    "dimacs",
    [
        "p cnf 999999999999999999 1\n1 -999999999999999999 0\n",  # a MemoryError in the solver before
        f"p cnf {2 + MAX_AUX_VARS + 1} 1\n1 -2 0\n",
    ],
)
def test_a_dimacs_header_past_the_answers_bound_is_refused(tmp_path: Path, dimacs: str):
    path = task_with_dimacs(tmp_path / "task", "g.cnf")
    (tmp_path / "task" / "g.cnf").write_text(dimacs)
    one_line_error(path, f"above the limit of {2 + MAX_AUX_VARS:,}")


def test_a_dimacs_header_at_the_answers_bound_loads(tmp_path: Path):
    path = task_with_dimacs(tmp_path / "task", "g.cnf")
    (tmp_path / "task" / "g.cnf").write_text(f"p cnf {2 + MAX_AUX_VARS} 1\n1 -2 0\n")
    assert load_task_file(path).ground_truth.num_vars == 2 + MAX_AUX_VARS


def test_toml_nested_60000_deep_is_one_line(tmp_path: Path):
    path = tmp_path / "task.toml"
    path.write_text(RAIN + "deep = " + "[" * 60_000 + "]" * 60_000 + "\n")
    one_line_error(path, "nested too deep")
    path.write_text(RAIN + "deep = " + "{a = " * 60_000 + "1" + "}" * 60_000 + "\n")
    one_line_error(path, "nested too deep")


def test_a_task_file_past_the_size_bound_is_refused(tmp_path: Path):
    path = tmp_path / "task.toml"
    path.write_text(RAIN + "# " + "x" * MAX_TASK_FILE_BYTES + "\n")
    one_line_error(path, "larger than 4 MiB")


def test_a_task_file_that_is_not_utf8_is_one_line(tmp_path: Path):
    path = tmp_path / "task.toml"
    path.write_bytes(RAIN.encode() + b"note = '\xff'\n")
    one_line_error(path, "not UTF-8")


@pytest.mark.parametrize(
    "command",
    [
        ["task", "show", "TASK"],
        ["task", "export", "TASK", "--out", "OUT"],
        ["run", "--task-file", "TASK", "--policy", "expert", "--format", "dimacs", "--train", "none", "--out", "OUT"],
    ],
)
def test_the_command_line_prints_one_line_and_copies_nothing(tmp_path: Path, outside: Path, command: list[str]):
    absolute = task_with_dimacs(tmp_path / "absolute", str(outside))
    deep = tmp_path / "deep.toml"
    deep.write_text(RAIN + "deep = " + "[" * 60_000 + "]" * 60_000 + "\n")
    huge = task_with_dimacs(tmp_path / "huge", "g.cnf")
    (tmp_path / "huge" / "g.cnf").write_text("p cnf 999999999999999999 1\n1 -999999999999999999 0\n")
    for task in (absolute, deep, huge):
        out = tmp_path / "out" / task.parent.name / task.stem
        args = [str(task) if a == "TASK" else str(out) if a == "OUT" else a for a in command]
        done = runner.invoke(app, args)
        assert done.exit_code == 1, done.output
        assert done.exception is None or isinstance(done.exception, SystemExit)
        lines = done.output.splitlines()  # run may say what it decided first ("training: none")
        assert [line for line in lines if line.startswith("error: ")] == lines[-1:], done.output
        assert "Traceback" not in done.output
    written = [p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert not any("private key" in text for text in written)


@pytest.mark.parametrize(
    "benchmark, name, where",
    [
        ("satbench", "copy.json", "copy.json"),
        ("satbench", "copy.jsonl", "copy.jsonl:1"),
        ("dcpbench", "copy.jsonl", "copy.jsonl:1"),
    ],
)
def test_a_benchmark_copy_nested_too_deep_is_one_line(tmp_path: Path, benchmark: str, name: str, where: str):
    (tmp_path / name).write_text("[" * 100_000 + "]" * 100_000 + "\n")  # a RecursionError traceback before
    done = runner.invoke(app, ["task", "show", f"{benchmark}:{tmp_path / name}#0"])
    assert done.exit_code == 1 and (done.exception is None or isinstance(done.exception, SystemExit))
    assert done.output == f"error: {tmp_path / where}: not JSON (arrays or objects nested too deep)\n"


def test_a_benchmark_copy_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path):
    os.mkfifo(tmp_path / "copy.json")
    outcome: list[str] = []
    args = ["task", "show", f"satbench:{tmp_path / 'copy.json'}#0"]
    worker = threading.Thread(target=lambda: outcome.append(runner.invoke(app, args).output), daemon=True)
    worker.start()
    worker.join(20)
    assert outcome == [f"error: satbench: {tmp_path / 'copy.json'} is neither a file nor a directory\n"]


def test_the_rows_of_a_received_sweep_never_load_the_task_files_it_names(tmp_path: Path, monkeypatch):
    """A job.json names its task; building its row (report, view) must not load it: even with
    --trust-task-code, the module beside a task file the sweep points at is never imported."""
    from autonesy.graph.results import collect_rows

    monkeypatch.setenv("AUTONESY_TRUST_TASK_CODE", "1")
    evil = tmp_path / "evil"
    evil.mkdir()
    canary = tmp_path / "imported"
    (evil / "task.toml").write_text(RAIN + '[ground_truth]\nencoder = "payload:encode"\n')
    (evil / "payload.py").write_text(f"open({str(canary)!r}, 'w').close()\ndef encode():\n    return [[1]]\n")
    job = {
        "attempt_id": "a1",
        "llm": "expert",
        "repeat": 0,
        "config": {
            "task": str(evil / "task.toml"),
            "format": "dimacs",
            "prompt": "zs",
            "detail": "detailed",
            "policy": "expert",
            "max_repairs": 5,
            "decoding": None,
        },
    }
    (tmp_path / "sweep" / "attempts" / "a1").mkdir(parents=True)
    (tmp_path / "sweep" / "attempts" / "a1" / "job.json").write_text(json.dumps(job))
    [row] = collect_rows(tmp_path / "sweep")
    assert row["task"] == str(evil / "task.toml") and row["status"] == "pending"
    assert not canary.exists()
