"""One-line facts about a task: what `autonesy-agent tasks` lists and `task export` records.

Counting the larger ground truths takes seconds (road-r, kand-logic compile an SDD), and `tasks`
lists all 18 each time; the counts are therefore kept on disk under ``$AUTONESY_CACHE_DIR/counts``
(:mod:`autonesy.tools.count_store`), keyed by the ground truth's clauses, so each is counted once per formula.
"""

from __future__ import annotations

from typing import Any

from autonesy.tasks.task import Task
from autonesy.tools.cnf import CNF


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
    from autonesy.tools.count_store import stored_count

    count = stored_count(truth)
    return {"model_count": count.value, "count_method": count.method}
