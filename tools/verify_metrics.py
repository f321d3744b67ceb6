"""Compatibility shim: this module moved to :mod:`autonesy.tools.verify.metrics` (the verifier in one place per layer)."""

from autonesy.tools.verify.metrics import (
    ALIGN_THRESHOLD,
    COST_KEYS,
    align_constraints,
    binary_scores,
    constraint_agreement,
    cost,
    match_score,
    scores,
)

__all__ = [
    "ALIGN_THRESHOLD",
    "COST_KEYS",
    "align_constraints",
    "binary_scores",
    "constraint_agreement",
    "cost",
    "match_score",
    "scores",
]
