"""The checkpointer of a run directory, reading checkpoints as data only.

A run directory (and its ``checkpoints.sqlite``) may come from someone else; resuming it must not
run code. LangGraph's default serializer revives arbitrary ``module.name(*args)`` from msgpack
(and pickles with ``pickle_fallback``); here it is strict: only LangGraph's own safe types
(``SAFE_MSGPACK_TYPES``: datetimes, sets, paths, messages, ...) are rebuilt, anything else comes
back as inert data, pickles and JSON constructors are refused. The project's graph states hold
plain data (str, int, float, list, dict) only, so nothing is lost.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from autonesy.graph.rundir import CHECKPOINTS_FILE, RunDir

DATA_TYPES = ("null", "bytes", "bytearray", "msgpack")


class CheckpointError(ValueError):
    """A checkpoint that is not plain data (crafted or from another program)."""


class DataOnlySerializer(JsonPlusSerializer):
    """Strict msgpack: LangGraph's safe types only; no pickle, no JSON constructors."""

    def __init__(self) -> None:
        super().__init__(pickle_fallback=False, allowed_json_modules=None, allowed_msgpack_modules=None)

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


def data_checkpointer(connection: sqlite3.Connection) -> SqliteSaver:
    """A SqliteSaver on ``connection`` whose every deserialisation is data-only."""
    saver = SqliteSaver(connection, serde=DataOnlySerializer())
    saver.jsonplus_serde = DataOnlySerializer()
    return saver


@contextmanager
def run_checkpointer(rundir: RunDir) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on the run's ``checkpoints.sqlite``, closed on exit. A checkpoint
    that is not plain data (crafted, or from another program) is one error line (the run's error type)."""
    connection = sqlite3.connect(rundir.path / CHECKPOINTS_FILE, check_same_thread=False)
    # WAL (set by the saver) + NORMAL: a commit survives the process being killed, without an fsync each
    connection.execute("PRAGMA synchronous=NORMAL")
    try:
        yield data_checkpointer(connection)
    except CheckpointError as error:
        raise rundir.error(f"{rundir.path}: {error}") from None
    finally:
        connection.close()


__all__ = ["CheckpointError", "DataOnlySerializer", "data_checkpointer", "run_checkpointer"]
