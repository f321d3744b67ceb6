"""One-line facts about a task: what `autonesy-agent tasks` lists and `task export` records.

Counting the larger ground truths takes seconds (road-r, kand-logic compile an SDD), and `tasks`
lists all 18 each time; the counts are therefore kept on disk under ``$AUTONESY_CACHE_DIR/counts``,
keyed by the ground truth's clauses, so each is counted once per formula.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from autonesy.tasks.task import Task
from autonesy.tools.cnf import CNF
from autonesy.tools.config import cache_dir

COUNT_CACHE_VERSION = 1  # bump when count_models may answer differently for the same formula


def task_summary(task: Task, *, with_count: bool = True) -> dict[str, Any]:
    """A task's facts as data (size, encoding, model count, provenance, licence) for ``tasks --json`` and ``task
    show``."""
    meta = task.metadata
    summary: dict[str, Any] = {
        "name": task.name,
        "num_vars": task.num_vars,
        "num_clauses": None,
        "num_aux_vars": None,
        "published_clauses": meta.published_clauses,
        "model_count": None,
        "count_method": None,
        "data_provenance": meta.data_provenance,
        "equivalence_method": meta.equivalence_method,
        "source_dataset": meta.source_dataset,
        "licence": meta.licence,
    }
    if task.has_ground_truth:
        truth = task.ground_truth
        summary.update(num_clauses=len(truth.clauses), num_aux_vars=truth.num_aux_vars)
        if with_count:
            summary.update(ground_truth_count(truth))
    return summary


def task_record(task: Task) -> dict[str, Any]:
    """Everything about a task as JSON data (variables, both descriptions, metadata, statistics)."""
    meta = task.metadata
    return {
        **task_summary(task),
        "variables": [{"index": i, "name": v.name, "meaning": v.meaning} for i, v in enumerate(task.variables, 1)],
        "descriptions": {"detailed": task.descriptions.detailed, "not_detailed": task.descriptions.not_detailed},
        "metadata": {
            "source_dataset": meta.source_dataset,
            "citation": meta.citation,
            "licence": meta.licence,
            "redistributable": meta.redistributable,
            "published_clauses": meta.published_clauses,
            "data_provenance": meta.data_provenance,
            "equivalence_method": meta.equivalence_method,
            "design_notes": meta.design_notes,
        },
    }


def ground_truth_count(truth: CNF) -> dict[str, Any]:
    """``{"model_count", "count_method"}`` of the formula: from the disk cache, else counted and kept."""
    key = json.dumps([COUNT_CACHE_VERSION, truth.num_task_vars, truth.num_vars, truth.clauses], separators=(",", ":"))
    path = cache_dir("counts") / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
    try:
        cached = json.loads(path.read_text())
        if isinstance(cached.get("model_count"), int) and isinstance(cached.get("count_method"), str):
            return {"model_count": cached["model_count"], "count_method": cached["count_method"]}
    except (OSError, ValueError, AttributeError):
        pass  # absent, unreadable or damaged: count again
    from autonesy.tools.counting import count_models

    count = count_models(truth)
    found = {"model_count": count.value, "count_method": count.method}
    if count.exact:  # an approximate count is not a fact about the formula
        _write_atomically(path, json.dumps(found))
    return found


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
