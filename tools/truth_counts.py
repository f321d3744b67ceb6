"""Ground-truth model counts remembered on disk, so a task's ground truth is counted once.

A sweep scores many attempts against the same ground truth, often each in its own process (an
attempt time limit runs it in a child); the in-memory cache of :mod:`.metrics` does not reach
across them. Counts that took at least ``MIN_SECONDS`` are written to
``$AUTONESY_CACHE_DIR/truth_counts`` (else the user cache), keyed by a hash of the clauses and the
counting settings — and so are counts that ran out of time: a later request under the same or a
shorter limit gets the same :class:`CountTimedOut` at once, a longer limit counts again.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from autonesy.tools.cnf import CNF
from autonesy.tools.config import cache_dir
from autonesy.tools.counting import CountTimedOut, ModelCount

MIN_SECONDS = 1.0  # quicker counts are not worth a file


def _path(cnf: CNF, settings: str):
    digest = hashlib.sha256()
    digest.update(f"{settings}|{cnf.num_task_vars}|{cnf.num_vars}|".encode())
    for clause in cnf.clauses:
        digest.update((" ".join(map(str, clause)) + " 0\n").encode())
    return cache_dir("truth_counts") / f"{digest.hexdigest()}.json"


def recall(cnf: CNF, settings: str, time_limit_s: float) -> ModelCount | CountTimedOut | None:
    """The remembered count, the remembered timeout (when it was under at least ``time_limit_s``), or None."""
    try:
        data = json.loads(_path(cnf, settings).read_text())
    except (OSError, ValueError):
        return None
    try:
        if "timed_out" in data:
            limit = float(data["timed_out"]["limit"])
            if limit < time_limit_s:
                return None
            return CountTimedOut(str(data["timed_out"]["method"]), limit, tuple(map(str, data["timed_out"]["tried"])))
        return ModelCount(
            int(data["value"]), str(data["method"]), bool(data["exact"]), float(data["seconds"]), dict(data["params"])
        )
    except (KeyError, TypeError, ValueError):
        return None


def remember(cnf: CNF, settings: str, outcome: ModelCount | CountTimedOut) -> None:
    """Write ``outcome`` (a count that took long enough, or a timeout); best effort."""
    if isinstance(outcome, CountTimedOut):
        record: dict[str, Any] = {
            "timed_out": {"method": outcome.method, "limit": outcome.time_limit_s, "tried": list(outcome.tried)}
        }
    elif outcome.seconds >= MIN_SECONDS:
        record = {**outcome.to_dict(), "value": str(outcome.value)}
    else:
        return
    path = _path(cnf, settings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record, default=str))
        os.replace(tmp, path)
    except OSError:
        pass
