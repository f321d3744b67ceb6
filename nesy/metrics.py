"""Downstream metrics of a predictor on a labelled split, and their mean ± std over seeds.

Over a split of B examples with N binary outputs each:

- precision, recall, F1: micro-averaged over all B·N output bits (positives are 1s). Degenerate
  cases: precision is 1 when nothing is predicted positive and nothing is positive, else 0 when
  nothing is predicted positive; recall likewise with the roles swapped; F1 is 0 when P + R = 0.
- accuracy: exact match, the share of examples whose whole assignment is right.
- bit_accuracy: the share of output bits that are right (Hamming accuracy).
- consistency: the share of predictions that satisfy the ground truth φ*.
- formula_consistency (when a formula is given): the share that satisfy the formula the predictor
  was trained with (1 for SPL by construction).

:func:`summarize` reports mean, sample standard deviation (ddof = 1; 0 for a single seed) and the
per-seed values of every numeric metric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

METRICS = ("f1", "precision", "recall", "accuracy", "bit_accuracy", "consistency")


def _ratio(num: int, den: int, empty: float) -> float:
    return num / den if den else empty


def downstream_metrics(y_true: np.ndarray, y_pred: np.ndarray, truth, formula=None) -> dict[str, float]:
    """Metrics of predictions ``y_pred`` against labels ``y_true`` (both (B, N) 0/1).

    ``truth`` and ``formula`` are anything with ``evaluate((B, N)) -> (B,) bool`` (a
    :class:`~autonesy.nesy.constraint.Constraint`).
    """
    t = np.asarray(y_true).astype(bool)
    p = np.asarray(y_pred).astype(bool)
    if t.shape != p.shape or t.ndim != 2:
        raise ValueError(f"labels {t.shape} and predictions {p.shape} must both be (B, N)")
    if len(t) == 0:
        raise ValueError("no examples to score")
    tp = int((t & p).sum())
    fp = int((~t & p).sum())
    fn = int((t & ~p).sum())
    precision = _ratio(tp, tp + fp, 1.0 if tp + fn == 0 else 0.0)
    recall = _ratio(tp, tp + fn, 1.0 if tp + fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    result = {
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "accuracy": float((t == p).all(axis=1).mean()),
        "bit_accuracy": float((t == p).mean()),
        "consistency": float(np.asarray(truth.evaluate(p.astype(np.uint8))).mean()),
    }
    if formula is not None:
        result["formula_consistency"] = float(np.asarray(formula.evaluate(p.astype(np.uint8))).mean())
    return result


def summarize(per_seed: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """{metric: {"mean", "std", "values"}} over the numeric entries of the per-seed dicts."""
    rows = list(per_seed)
    if not rows:
        return {}
    keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        values = [float(r[key]) for r in rows if key in r]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
        out[key] = {"mean": mean, "std": std, "values": values}
    return out


def format_mean_std(summary: Mapping[str, Mapping[str, Any]], key: str, digits: int = 3) -> str:
    """``mean ± std`` of a summary entry for tables; ``—`` when missing."""
    entry = summary.get(key)
    if entry is None:
        return "—"
    return f"{entry['mean']:.{digits}f} ± {entry['std']:.{digits}f}"
