"""Exact model counts kept on disk (``$AUTONESY_CACHE_DIR/counts``), keyed by the formula itself.

A ground truth is counted by `tasks`, by `task export` and by every scored attempt of its task;
its count is a fact about its clauses, so it is counted once per formula and read back after that.
Only exact counts are kept. A count read back says so (``params["from_cache"]``) and keeps the
method and seconds of the count that produced it. A count that ran out of time is remembered too, per
method: a later request with the same or a shorter limit gets the same
:class:`~autonesy.tools.counting.CountTimedOut` at once (a sweep's attempts, each in its own process,
would otherwise each spend the whole limit on the same ground truth); a longer limit counts again, and
so does any request once the routes have changed (:data:`~autonesy.tools.counting.ROUTES_VERSION`).

The folder may be shared or copied, and an entry's name is a digest of the clauses anyone can compute:
entries go through :mod:`.cache_entries` (read safely, made for this formula, signed by this user), and
a count must also be possible (at most 2^N over the N task variables) — else it is ignored with one line
and counted again. Counts are stored in hexadecimal, so any size round-trips (Python refuses to read
or write a decimal integer of more than 4,300 digits).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from autonesy.tools import counting
from autonesy.tools.cache_entries import distrust, entry_path, read_entry, write_entry
from autonesy.tools.cnf import CNF
from autonesy.tools.config import cache_dir

COUNT_CACHE_VERSION = 3  # bump when count_models may answer differently for the same formula
ENTRY_KIND = "model-count"


def stored_count(
    cnf: CNF,
    count: Callable[[CNF], counting.ModelCount] | None = None,
    *,
    method: str = "auto",
    time_limit_s: float | None = None,
    recount: bool = False,
) -> counting.ModelCount:
    """The exact count of ``cnf`` from the disk cache, else ``count(cnf)`` (default: ``auto``), kept if exact.

    ``method`` and ``time_limit_s`` name the count ``count`` makes: its timeout is remembered under them.
    ``recount``: the entry contradicted other counts (:mod:`.metrics`): counted again and replaced."""
    start = time.perf_counter()
    material = _material(cnf)
    entry = {} if recount else _read(cnf, material)
    value = _count_of(entry, cnf)
    if value is not None:
        params = {"from_cache": True, "counted_in_s": entry.get("seconds")}
        return counting.ModelCount(value, str(entry["count_method"]), True, time.perf_counter() - start, params)
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
            timeouts: dict[str, Any] = entry["timed_out"] if isinstance(entry.get("timed_out"), dict) else {}
            _write(material, {"timed_out": {**timeouts, method: record}})
        raise
    if result.exact:  # an approximate count is not a fact about the formula
        _write(material, {"model_count": hex(result.value), "count_method": result.method, "seconds": result.seconds})
    return result


def _read(cnf: CNF, material: str) -> dict[str, Any]:
    """The trusted entry for ``cnf`` ({} when absent or untrusted: then the formula is counted again)."""
    return read_entry(cache_dir("counts"), ENTRY_KIND, COUNT_CACHE_VERSION, material) or {}


def _count_of(entry: dict[str, Any], cnf: CNF) -> int | None:
    """The entry's count, if it holds a possible one: 0 ≤ count ≤ 2^N over the N task variables."""
    text, counted_by = entry.get("model_count"), entry.get("count_method")
    if not isinstance(text, str) or not isinstance(counted_by, str):
        return None
    try:
        value = int(text, 16)  # hexadecimal: no digit limit, no quadratic parse
    except ValueError:
        value = -1
    if not 0 <= value <= 1 << cnf.num_task_vars:
        distrust(entry_path(cache_dir("counts"), _material(cnf)), f"not a count of {cnf.num_task_vars} variables")
        return None
    return value


def _timeout(entry: dict, method: str) -> counting.CountTimedOut | None:
    """The remembered timeout of ``method``, if the entry holds a well-formed one."""
    try:
        record = entry["timed_out"][method]
        if record["routes"] != counting.ROUTES_VERSION:
            return None
        return counting.CountTimedOut(str(record["method"]), float(record["limit"]), tuple(map(str, record["tried"])))
    except (KeyError, TypeError, ValueError):
        return None


def _material(cnf: CNF) -> str:
    """What a count answers: the formula itself (its variables and clauses)."""
    return json.dumps([cnf.num_task_vars, cnf.num_vars, cnf.clauses], separators=(",", ":"))


def _write(material: str, data: dict[str, Any]) -> None:
    write_entry(cache_dir("counts"), ENTRY_KIND, COUNT_CACHE_VERSION, material, data)
