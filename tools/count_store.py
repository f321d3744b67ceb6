"""Exact model counts kept on disk (``$AUTONESY_CACHE_DIR/counts``), keyed by the formula itself.

A ground truth is counted by `tasks`, by `task export` and by every scored attempt of its task;
its count is a fact about its clauses, so it is counted once per formula and read back after that.
Only exact counts are kept. A count read back says so (``params["from_cache"]``) and keeps the
method and seconds of the count that produced it.
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

COUNT_CACHE_VERSION = 1  # bump when count_models may answer differently for the same formula


def stored_count(cnf: CNF, count: Callable[[CNF], counting.ModelCount] | None = None) -> counting.ModelCount:
    """The exact count of ``cnf`` from the disk cache, else ``count(cnf)`` (default: ``auto``), kept if exact."""
    start = time.perf_counter()
    path = _entry(cnf)
    try:
        cached = json.loads(path.read_text())
        value, method = cached.get("model_count"), cached.get("count_method")
        if isinstance(value, int) and isinstance(method, str):
            params = {"from_cache": True, "counted_in_s": cached.get("seconds")}
            return counting.ModelCount(value, method, True, time.perf_counter() - start, params)
    except (OSError, ValueError, AttributeError):
        pass  # absent, unreadable or damaged: count again
    result = (count or counting.count_models)(cnf)
    if result.exact:  # an approximate count is not a fact about the formula
        entry = {"model_count": result.value, "count_method": result.method, "seconds": result.seconds}
        _write_atomically(path, json.dumps(entry))
    return result


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
