"""Scores of an instruction-following verifier against labelled pairs (the paper's tables 2–4 in shape).

The positive class is ``sat`` (the response follows the instruction): a false positive accepts a
response that violates the instruction, a false negative rejects one that follows it. A verifier that
gives no verdict (``unknown`` or an error) has not accepted the response: it counts as a negative
prediction, and ``undecided`` says how often it happened.

- precision, recall, F1 of ``sat``;
- ``pass@1``: the share of pairs whose verdict is right in a single verification run (accuracy);
- ``fp_rate`` / ``fn_rate``: false positives / false negatives as a share of *all* pairs (how the
  paper reports them); ``fpr`` = FP / (FP + TN) is given too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def binary_scores(pairs: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """``pairs`` of (label verdict, predicted verdict or None)."""
    tp = fp = fn = tn = undecided = 0
    for label, predicted in pairs:
        positive = predicted == "sat"
        if predicted not in ("sat", "unsat"):
            undecided += 1
        if label == "sat":
            tp, fn = tp + positive, fn + (not positive)
        else:
            fp, tn = fp + positive, tn + (not positive)
    n = tp + fp + fn + tn
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    return {"n": n, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "undecided": undecided, "precision": precision,
            "recall": recall, "f1": f1, "pass_at_1": _ratio(tp + tn, n), "fp_rate": _ratio(fp, n),
            "fn_rate": _ratio(fn, n), "fpr": _ratio(fp, fp + tn)}


COST_KEYS = ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "llm_seconds", "checker_runs",
             "checker_seconds", "wall_seconds")


def cost(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals and per-pair means of the usage counters."""
    totals = {k: sum(float(r.get(k) or 0) for r in rows) for k in COST_KEYS}
    n = len(rows)
    return {"pairs": n, "total": totals, "per_pair": {k: (v / n if n else None) for k, v in totals.items()}}


def constraint_agreement(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-constraint values against the labels, for rows whose decomposition has the labelled ids."""
    agree = total = rows_used = 0
    for row in rows:
        values, labels = row.get("values") or {}, row.get("labels") or {}
        if not values or set(values) != set(labels):
            continue
        rows_used += 1
        for cid, label in labels.items():
            total += 1
            agree += values[cid] is not None and bool(values[cid]) == bool(label)
    return {"rows": rows_used, "constraints": total, "accuracy": _ratio(agree, total)}


def scores(rows: list[Mapping[str, Any]], group_order: Iterable[str] = ()) -> dict[str, Any]:
    """Overall and per-complexity-group scores, cost and constraint agreement of one verifier's rows
    (each row: ``label``, ``predicted``, ``group`` and the usage counters)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row.get("group", "?")].append(row)
    order = [g for g in group_order if g in groups] + sorted(g for g in groups if g not in set(group_order))
    return {
        "overall": binary_scores((r["label"], r.get("predicted")) for r in rows),
        "groups": {g: binary_scores((r["label"], r.get("predicted")) for r in groups[g]) for g in order},
        "cost": cost(rows),
        "group_cost": {g: cost(groups[g]) for g in order},
        "constraints": constraint_agreement(rows),
    }


__all__ = ["COST_KEYS", "binary_scores", "constraint_agreement", "cost", "scores"]
