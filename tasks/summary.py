"""One-line facts about a task: what `autonesy-agent tasks` lists and `task export` records."""

from __future__ import annotations

from typing import Any

from autonesy.tasks.task import Task
from autonesy.tools.counting import count_models


def task_summary(task: Task, *, with_count: bool = True) -> dict[str, Any]:
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
            count = count_models(truth)
            summary.update(model_count=count.value, count_method=count.method)
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
