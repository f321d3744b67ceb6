"""Exact model counts kept on disk (``$AUTONESY_CACHE_DIR/counts``), keyed by the formula itself.

A ground truth is counted by `tasks`, by `task export` and by every scored attempt of its task;
its count is a fact about its clauses, so it is counted once per formula and read back after that.
Only exact counts are kept. A count read back says so (``params["from_cache"]``) and keeps the
method and seconds of the count that produced it. A count that ran out of time is remembered too, per
method: a later request with the same or a shorter limit gets the same
:class:`~autonesy.tools.counting.CountTimedOut` at once (a sweep's attempts, each in its own process,
would otherwise each spend the whole limit on the same ground truth); a longer limit counts again, and
so does any request once the routes have changed (:data:`~autonesy.tools.counting.ROUTES_VERSION`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from autonesy.tools import counting
from autonesy.tools.cnf import CNF
from autonesy.tools.config import cache_dir

COUNT_CACHE_VERSION = 2  # bump when count_models may answer differently for the same formula


def stored_count(
    cnf: CNF,
    count: Callable[[CNF], counting.ModelCount] | None = None,
    *,
    method: str = "auto",
    time_limit_s: float | None = None,
) -> counting.ModelCount:
    """The exact count of ``cnf`` from the disk cache, else ``count(cnf)`` (default: ``auto``), kept if exact.

    ``method`` and ``time_limit_s`` name the count ``count`` makes: its timeout is remembered under them."""
    start = time.perf_counter()
    path = _entry(cnf)
    entry = _read(path)
    value, counted_by = entry.get("model_count"), entry.get("count_method")
    if isinstance(value, int) and isinstance(counted_by, str):
        params = {"from_cache": True, "counted_in_s": entry.get("seconds")}
        return counting.ModelCount(value, counted_by, True, time.perf_counter() - start, params)
    timed_out = _timeout(entry, method)
    if timed_out is not None and time_limit_s is not None and timed_out.time_limit_s >= time_limit_s:
        raise timed_out
    try:
        result = (count or counting.count_models)(cnf)
    except counting.CountTimedOut as error:
        if time_limit_s is not None:
            record = {
                "method": error.method,
                "limit": time_limit_s,
                "tried": list(error.tried),
                "routes": counting.ROUTES_VERSION,
            }
            _write_atomically(path, json.dumps({"timed_out": {**entry.get("timed_out", {}), method: record}}))
        raise
    if result.exact:  # an approximate count is not a fact about the formula
        entry = {"model_count": result.value, "count_method": result.method, "seconds": result.seconds}
        _write_atomically(path, json.dumps(entry))
    return result


def _read(path: Path) -> dict:
    """The entry as written, or {} when absent, unreadable or damaged (then the formula is counted again)."""
    try:
        entry = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return entry if isinstance(entry, dict) else {}


def _timeout(entry: dict, method: str) -> counting.CountTimedOut | None:
    """The remembered timeout of ``method``, if the entry holds a well-formed one."""
    try:
        record = entry["timed_out"][method]
        if record["routes"] != counting.ROUTES_VERSION:
            return None
        return counting.CountTimedOut(str(record["method"]), float(record["limit"]), tuple(map(str, record["tried"])))
    except (KeyError, TypeError, ValueError):
        return None


def _entry(cnf: CNF) -> Path:
    key = json.dumps([COUNT_CACHE_VERSION, cnf.num_task_vars, cnf.num_vars, cnf.clauses], separators=(",", ":"))
    return cache_dir("counts") / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


def _write_atomically(path: Path, text: str) -> None:
    """Readers see the whole entry or none (a unique temporary file, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "w") as file:
            file.write(text)
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only cache only costs the next call a recount
