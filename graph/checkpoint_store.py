"""The checkpointer of a run directory, reading checkpoints as data only.

A run directory (and its ``checkpoints.sqlite``) may come from someone else; resuming it must not
run code. LangGraph's default serializer revives arbitrary ``module.name(*args)`` from msgpack
(and pickles with ``pickle_fallback``); here it is strict: only LangGraph's own safe types
(``SAFE_MSGPACK_TYPES``: datetimes, sets, paths, messages, ...) are rebuilt, anything else comes
back as inert data, pickles and JSON constructors are refused. The project's graph states are
pydantic models whose results are records (``graph/summary.py``): each record is written as its JSON
data, no class name with it, and the graph's state schema validates it back into its record before
the next node runs, so a checkpoint is plain data (str, int, float, list, dict) and nothing is lost.

Before LangGraph touches the file its schema is checked: an SQLite file of another program (other
tables, other columns) or a damaged one is one ``CheckpointError`` line, not a traceback on the
first query; before SQLite opens the file by name, ``run_checkpointer`` refuses a link, a FIFO, a
folder or a file that is not SQLite (``tools/safe_files.check_sqlite``).
"""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from autonesy.graph.rundir import CHECKPOINTS_FILE, FRESH_OUT, RunDir
from autonesy.tools import safe_files

DATA_TYPES = ("null", "bytes", "bytearray", "msgpack")
# The columns LangGraph's SqliteSaver reads (``task_path`` is added by its own migration when missing).
CHECKPOINT_COLUMNS = {
    "checkpoints": {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint"},
    "writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"},
}


class CheckpointError(ValueError):
    """A checkpoint that is not plain data (crafted or from another program)."""


class DataOnlySerializer(JsonPlusSerializer):
    """Strict msgpack: LangGraph's safe types only; no pickle, no JSON constructors."""

    def __init__(self) -> None:
        super().__init__(pickle_fallback=False, allowed_json_modules=None, allowed_msgpack_modules=None)

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize one checkpoint value with every record and enum in it as plain data."""
        return super().dumps_typed(plain_data(obj))

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Deserialize one checkpoint value, refusing any type but plain data with one ``CheckpointError`` line."""
        kind = data[0] if isinstance(data, tuple) and data else None
        if kind not in DATA_TYPES:
            raise CheckpointError(
                f"checkpoints.sqlite holds a {str(kind)[:20]!r} value, not plain data; "
                "delete it to start the run afresh"
            )
        try:
            return super().loads_typed(data)
        except Exception as exc:  # noqa: BLE001 - malformed bytes of any kind: one clear error
            raise CheckpointError(
                f"checkpoints.sqlite cannot be read as data ({type(exc).__name__}); delete it to start the run afresh"
            ) from None


def plain_data(value: Any) -> Any:
    """``value`` with the pydantic records and enums inside dicts, lists and tuples written as their
    JSON data (what the state schema validates back)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {key: plain_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_data(item) for item in value]
    if type(value) is tuple:  # not a named tuple of LangGraph's: those stay as they are
        return tuple(plain_data(item) for item in value)
    return value


def check_schema(connection: sqlite3.Connection) -> None:
    """Refuse a database that is damaged or holds anything but LangGraph's checkpoint tables."""
    try:
        if connection.execute("PRAGMA quick_check").fetchone() != ("ok",):
            raise CheckpointError("checkpoints.sqlite is damaged (SQLite's quick_check fails)")
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            if name not in CHECKPOINT_COLUMNS:
                raise CheckpointError(f"checkpoints.sqlite holds a table {name[:40]!r} that LangGraph does not write")
            columns = {row[1] for row in connection.execute("SELECT * FROM pragma_table_info(?)", (name,))}
            if missing := CHECKPOINT_COLUMNS[name] - columns:
                raise CheckpointError(f"checkpoints.sqlite: table {name!r} lacks LangGraph's column {min(missing)!r}")
    except sqlite3.DatabaseError as exc:
        raise CheckpointError(f"checkpoints.sqlite cannot be read by SQLite ({str(exc)[:80]})") from None


def data_checkpointer(connection: sqlite3.Connection) -> SqliteSaver:
    """A SqliteSaver on ``connection`` whose every deserialisation is data-only, its schema checked and set up."""
    check_schema(connection)
    saver = SqliteSaver(connection, serde=DataOnlySerializer())
    saver.jsonplus_serde = DataOnlySerializer()
    try:
        saver.setup()
    except sqlite3.DatabaseError as exc:
        raise CheckpointError(f"checkpoints.sqlite cannot be set up ({str(exc)[:80]})") from None
    return saver


@contextmanager
def run_checkpointer(rundir: RunDir) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on the run's ``checkpoints.sqlite``, closed on exit. A file that is not
    LangGraph's checkpoints (random bytes, a FIFO, a folder, a link, another schema) or a checkpoint that is not
    plain data (crafted, or from another program) is one error line (the run's error type)."""
    path = rundir.path / CHECKPOINTS_FILE
    try:
        safe_files.check_sqlite(path, root=rundir.path)
    except safe_files.UnsafeFileError as error:
        raise rundir.error(f"{error}; {FRESH_OUT}") from None
    connection = sqlite3.connect(path, check_same_thread=False)  # checked just above: SQLite opens by name
    try:
        try:
            saver = data_checkpointer(connection)
        except CheckpointError as error:
            raise rundir.error(f"{rundir.path}: {error}; {FRESH_OUT}") from None
        # WAL (set by the saver) + NORMAL: a commit survives the process being killed, without an fsync each
        connection.execute("PRAGMA synchronous=NORMAL")
        try:
            yield saver
        except CheckpointError as error:
            raise rundir.error(f"{rundir.path}: {error}") from None
    finally:
        connection.close()


__all__ = [
    "CHECKPOINT_COLUMNS",
    "CheckpointError",
    "DataOnlySerializer",
    "check_schema",
    "data_checkpointer",
    "plain_data",
    "run_checkpointer",
]
