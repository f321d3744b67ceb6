"""The run directory both pipelines share: config identity, checkpoints, atomic outputs, and the
task's data resolved by the runner (not handed in by the command line)."""

from __future__ import annotations

import json
import pickle
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from scripted_llm import INSTRUCTION, SAT, ScriptedRoles

from autonesy.graph import run as run_module
from autonesy.graph import rundir as rundir_module
from autonesy.graph.run import RunConfig, RunError, run_attempt, training_note
from autonesy.graph.rundir import RunDir
from autonesy.graph.verify.run import VerifyConfig, VerifyError, verify_output
from autonesy.tools.errors import AutonesyError
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM the scripted backends stand for

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = ("task", "format", "llm")


class Refused(AutonesyError):
    """The error type a test pipeline gives its RunDir."""


@settings(max_examples=60, deadline=None)
@given(record=st.fixed_dictionaries({k: JSON for k in KEYS}), other=JSON, key=st.sampled_from(KEYS))
def test_a_claimed_directory_accepts_its_run_and_refuses_any_other(tmp_path_factory, record, other, key):
    path = tmp_path_factory.mktemp("run")
    rundir = RunDir.open(path, Refused)
    rundir.claim(record, KEYS)
    written = json.loads((path / "config.json").read_text())
    assert written["versions"]["python"] and written["started"]
    rundir.claim(record, KEYS)  # the same run again: a resume
    changed = {**record, key: other}
    if json.dumps(other, sort_keys=True) == json.dumps(record[key], sort_keys=True):
        return
    with pytest.raises(Refused, match="holds a different run") as refused:
        rundir.claim(changed, KEYS)
    assert "\n" not in str(refused.value) and f"{key}=" in str(refused.value)
    assert json.loads((path / "config.json").read_text()) == written  # the first run's identity is kept


@settings(max_examples=60, deadline=None)
@given(content=JSON | st.binary(max_size=40).map(lambda b: b.decode("latin-1")))
def test_a_hostile_config_is_one_line_or_a_match(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("run")
    text = content if isinstance(content, str) and not content.startswith(("{", "[")) else json.dumps(content)
    (path / "config.json").write_text(text)
    record = {"task": "fashion", "format": "dimacs", "llm": None}
    try:
        RunDir.open(path, Refused).claim(record, KEYS)
    except Refused as error:
        assert "\n" not in str(error)
    else:  # accepted only when it names this very run
        previous = json.loads(text)
        assert isinstance(previous, dict) and all(previous.get(k) == record[k] for k in KEYS)


def test_defaults_fill_keys_that_older_directories_did_not_record(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"task": "fashion"}))
    RunDir(tmp_path, Refused).claim({"task": "fashion", "decoding": "free"}, ("task", "decoding"), {"decoding": "free"})
    with pytest.raises(Refused):
        RunDir(tmp_path, Refused).claim({"task": "fashion", "decoding": "grammar"}, ("task", "decoding"))


def test_a_link_inside_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "answer.txt").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Refused, match="symbolic link"):
        RunDir.open(tmp_path, Refused)
    assert not (tmp_path / "config.json").exists()


def test_outputs_are_written_whole_and_leave_no_temporary_file(tmp_path):
    rundir = RunDir.open(tmp_path)
    rundir.write_text("checkers/C1.py", "x = 1\n")
    rundir.write_json("summary.json", {"n": 2**70}, default=str)
    assert (tmp_path / "checkers" / "C1.py").read_text() == "x = 1\n"
    assert json.loads((tmp_path / "summary.json").read_text()) == {"n": 2**70}
    assert not list(tmp_path.rglob("*.tmp"))


def test_both_pipelines_checkpoint_through_the_run_directory_with_the_same_pragmas(tmp_path, monkeypatch):
    from autonesy.graph import checkpoint_store
    from autonesy.graph.verify import run as verify_run_module

    opened = []

    def spy(rundir):
        manager = checkpoint_store.run_checkpointer(rundir)
        saver = manager.__enter__()
        opened.append(saver.conn.execute("PRAGMA synchronous").fetchone()[0])

        class Wrapped:
            def __enter__(self):
                return saver

            def __exit__(self, *exc):
                return manager.__exit__(*exc)

        return Wrapped()

    for module in (run_module, verify_run_module):
        monkeypatch.setattr(module, "run_checkpointer", spy)
    run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), tmp_path / "attempt")
    verify_output(INSTRUCTION, SAT, VerifyConfig(llm=SCRIPTED), tmp_path / "verify", backend=ScriptedRoles().backend())
    assert opened == [1, 1]  # synchronous=NORMAL for the attempt and for the verification


def _crafted_checkpoints(path: Path, thread: str) -> None:
    connection = sqlite3.connect(path)
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    SqliteSaver(connection).put(config, empty_checkpoint(), {"source": "input", "step": 0}, {})
    connection.execute("update checkpoints set type = ?, checkpoint = ?", ("pickle", pickle.dumps({"x": 1})))
    connection.commit()
    connection.close()


def test_a_crafted_checkpoint_is_one_error_line_for_a_verification_too(tmp_path):
    run_dir = tmp_path / "verify"
    run_dir.mkdir()
    _crafted_checkpoints(run_dir / "checkpoints.sqlite", "verify")
    with pytest.raises(VerifyError, match="not plain data") as refused:
        verify_output(INSTRUCTION, SAT, VerifyConfig(llm=SCRIPTED), run_dir, backend=ScriptedRoles().backend())
    assert "\n" not in str(refused.value)


class FakeSplit:
    def __init__(self, y):
        self.y = y


class FakeDataset:
    def __init__(self, y):
        self.train = FakeSplit(y)


def test_the_runner_resolves_the_tasks_labels_itself(tmp_path, monkeypatch):
    labels = np.eye(10, dtype=np.uint8)[[0, 3, 7, 9]]
    asked = []

    def load_dataset(task, data_dir=None):
        asked.append((task.name, data_dir))
        return FakeDataset(labels)

    import autonesy.tasks.data.dataset as dataset_module

    monkeypatch.setattr(dataset_module, "load_dataset", load_dataset)
    config = RunConfig(task="fashion", format="dimacs", policy="expert", data=True, data_dir=str(tmp_path / "d"))
    summary = run_attempt(config, tmp_path / "with")
    assert asked == [("fashion", str(tmp_path / "d"))]
    assert summary.oracle_test.labels_checked == len(labels) and summary.oracle_test.passed
    without = run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), tmp_path / "without")
    assert without.oracle_test.labels_checked == 0 and len(asked) == 1  # data only when asked for


def test_training_needs_data_and_auto_trains_only_the_embedded_models_main_job():
    task_file = str(Path(rundir_module.__file__).parents[1] / "tasks" / "examples" / "no-such.toml")
    with pytest.raises(RunError, match="needs annotated data"):
        RunConfig(task=task_file, format="dimacs", policy="expert", train="spl").resolved(has_data=False)
    auto = RunConfig(task="fashion", llm=LLMSpec.parse("local"), train="auto").resolved(has_data=True)
    assert (auto.train, auto.seeds, auto.epochs, auto.data) == ("spl,sl", 1, 3, True)
    other = RunConfig(task="fashion", llm=LLMSpec.parse("openai:gpt-x"), train="auto").resolved(has_data=True)
    assert (other.train, other.data) == ("none", False)
    assert training_note("auto", auto, True) == "training: spl,sl on an accepted formula, 1 seed(s), 3 epochs"
    assert "--train auto trains only with the embedded model" in training_note("auto", other, True)
    no_data = RunConfig(task=task_file, format="dimacs", policy="expert", train="auto").resolved(has_data=False)
    assert "no annotated data" in training_note("auto", no_data, False)
    assert training_note("none", other, True) == "training: none"


def test_a_run_says_each_step_as_it_begins(tmp_path):
    said: list[str] = []
    run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), tmp_path / "r", notify=said.append)
    steps = [line for line in said if line.startswith("… ")]
    assert steps == [
        "… formalizing the description (an LLM call)",
        "… checking the answer",
        "… testing the formula on the annotated labels",
        "… compiling the formula to an SDD",
        "… scoring it against the expert formula (model counting)",
    ]
    assert said[0] == "training: none"
