"""A crafted checkpoints.sqlite in a run directory cannot run code when the run is resumed."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import ormsgpack
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from autonesy.graph.checkpoint_store import CheckpointError, DataOnlySerializer, data_checkpointer

CONFIG = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
EXT_CONSTRUCTOR_POS_ARGS = 1  # langgraph.checkpoint.serde.jsonplus: module.name(*args) on load


class Touch:
    """Pickled, it creates a file when loaded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def crafted_database(path: Path, value_type: str, value: bytes) -> None:
    """A checkpoint written by LangGraph's default (permissive) saver, its checkpoint blob replaced."""
    connection = sqlite3.connect(path)
    saver = SqliteSaver(connection)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"answer": "placeholder"}
    saver.put(CONFIG, checkpoint, {"source": "input", "step": 0}, {})
    if value_type == "msgpack":
        blob = ormsgpack.unpackb(connection.execute("select checkpoint from checkpoints").fetchone()[0])
        blob["channel_values"]["answer"] = ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, value)
        connection.execute("update checkpoints set checkpoint = ?", (ormsgpack.packb(blob),))
    else:
        connection.execute("update checkpoints set type = ?, checkpoint = ?", (value_type, value))
    connection.commit()
    connection.close()


def test_a_checkpoint_that_constructs_objects_gets_data_back(tmp_path: Path):
    canary = tmp_path / "ran"
    db = tmp_path / "checkpoints.sqlite"
    crafted_database(db, "msgpack", ormsgpack.packb(("os", "system", [f"touch {canary}"])))
    connection = sqlite3.connect(db)
    loaded = data_checkpointer(connection).get_tuple(CONFIG)
    connection.close()
    assert not canary.exists()
    assert loaded.checkpoint["channel_values"]["answer"] == [f"touch {canary}"]  # inert data
    # the default saver would have run it: the test's crafted row is a real attack
    connection = sqlite3.connect(db)
    SqliteSaver(connection).get_tuple(CONFIG)
    connection.close()
    assert canary.exists()


def test_a_pickled_checkpoint_is_refused(tmp_path: Path):
    canary = tmp_path / "ran"
    db = tmp_path / "checkpoints.sqlite"
    crafted_database(db, "pickle", pickle.dumps(Touch(str(canary))))
    connection = sqlite3.connect(db)
    with pytest.raises(CheckpointError, match="not plain data"):
        data_checkpointer(connection).get_tuple(CONFIG)
    connection.close()
    assert not canary.exists()


def test_garbage_bytes_are_one_clear_error(tmp_path: Path):
    db = tmp_path / "checkpoints.sqlite"
    crafted_database(db, "msgpack", b"\xc1\xff")
    connection = sqlite3.connect(db)
    connection.execute("update checkpoints set checkpoint = ?", (b"\xc1\xff\x00",))
    with pytest.raises(CheckpointError, match="cannot be read as data"):
        data_checkpointer(connection).get_tuple(CONFIG)
    connection.close()


def test_records_in_the_state_are_written_as_data_and_read_back_as_records():
    """The attempt state's records go into a checkpoint as their JSON data (no class name a crafted file
    could swap), and the state schema makes them records again."""
    from autonesy.graph.attempt import AttemptState, CheckError
    from autonesy.graph.summary import Compilation, FailureKind, OracleCounterexample, OracleTest, Outcome

    oracle = OracleTest(passed=False, counterexamples=[OracleCounterexample(true_variables=["a"], source="label")])
    values = {
        "status": Outcome.REJECTED,
        "failure": FailureKind.SYNTAX,
        "error": CheckError(kind="syntax", message="bad"),
        "compiled": Compilation(ok=False, note="over budget"),
        "oracle_test": oracle,
    }
    serde = DataOnlySerializer()
    data = serde.loads_typed(serde.dumps_typed(values))
    assert data == {
        "status": "rejected",
        "failure": "syntax",
        "error": {"kind": "syntax", "message": "bad"},
        "compiled": {"ok": False, "note": "over budget"},
        "oracle_test": oracle.model_dump(mode="json"),
    }
    state = AttemptState.model_validate(data)
    assert state.compiled == values["compiled"] and state.oracle_test == oracle and state.error == values["error"]
    assert state.status is Outcome.REJECTED and state.failure is FailureKind.SYNTAX
