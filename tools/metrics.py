"""Formula metrics: how far a candidate φ̂ is from the expert's φ*, by the sets of assignments they admit.

Everything is over the N task variables with auxiliaries projected out. Three projected counts
suffice — MC(φ̂), MC(φ*) and MC(φ* ∧ φ̂) (auxiliaries renamed apart, so the conjunction's projection
is the intersection of the two projections) — and no CNF with auxiliaries is ever negated:

    TP = MC(φ* ∧ φ̂)   FP = MC(φ̂) − TP   FN = MC(φ*) − TP   TN = 2^N − TP − FP − FN

With exact counts, FP = 0 ⟺ φ̂ ⊆ φ* and FN = 0 ⟺ φ* ⊆ φ̂, which gives the relation exactly.

Degenerate cases (documented values):
- precision = TP/(TP+FP); when φ̂ admits nothing, precision is 1 if φ* admits nothing too, else 0;
- recall = TP/(TP+FN); when φ* admits nothing, recall is 1 if φ̂ admits nothing too, else 0;
- F1 = 2PR/(P+R), 0 when P + R = 0;
- MC-R = MC(φ̂) / max(MC(φ*), 1);
- φ̂ ≡ ⊤: recall 1, precision MC(φ*)/2^N, relation permissive (or equal if φ* ≡ ⊤).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Iterable

from autonesy.tools.cnf import CNF
from autonesy.tools.counting import ApproxMCSettings, ModelCount, count_models

RELATIONS = ("equal", "permissive", "strict", "incomparable")


@dataclass(frozen=True)
class FormulaScore:
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    relation: str
    mc_ratio: float
    candidate_count: int
    truth_count: int
    exact: bool
    count_method: str
    counts: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _ratio(num: int, den: int, empty_value: float) -> float:
    return float(Fraction(num, den)) if den else empty_value


def relation_of(fp: int, fn: int) -> str:
    if fp == 0 and fn == 0:
        return "equal"
    if fp == 0:
        return "strict"
    if fn == 0:
        return "permissive"
    return "incomparable"


def confusion_scores(tp: int, fp: int, fn: int, tn: int) -> dict[str, float]:
    precision = _ratio(tp, tp + fp, 1.0 if tp + fn == 0 else 0.0)
    recall = _ratio(tp, tp + fn, 1.0 if tp + fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def score_formula(
    candidate: CNF,
    truth: CNF,
    method: str = "auto",
    approxmc: ApproxMCSettings = ApproxMCSettings(),
) -> FormulaScore:
    """Score ``candidate`` against ``truth`` (both over the same N task variables)."""
    if candidate.num_task_vars != truth.num_task_vars:
        raise ValueError(
            f"candidate has {candidate.num_task_vars} task variables, the ground truth {truth.num_task_vars}"
        )
    counts: dict[str, ModelCount] = {
        "candidate": count_models(candidate, method, approxmc=approxmc),
        "truth": count_models(truth, method, approxmc=approxmc),
        "both": count_models(truth.conjoin(candidate), method, approxmc=approxmc),
    }
    total = 1 << truth.num_task_vars
    n_candidate, n_truth = counts["candidate"].value, counts["truth"].value
    tp = min(counts["both"].value, n_candidate, n_truth)  # approximate counts can disagree; keep them consistent
    fp, fn = n_candidate - tp, n_truth - tp
    tn = max(total - tp - fp - fn, 0)
    methods = sorted({c.method for c in counts.values()})
    return FormulaScore(
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        **confusion_scores(tp, fp, fn, tn),
        relation=relation_of(fp, fn),
        mc_ratio=float(Fraction(n_candidate, max(n_truth, 1))),
        candidate_count=n_candidate,
        truth_count=n_truth,
        exact=all(c.exact for c in counts.values()),
        count_method="+".join(methods),
        counts={name: c.to_dict() for name, c in counts.items()},
    )


def syntax_error_rate(accepted: Iterable[bool]) -> float:
    """Share of attempts whose final answer (after repair) still did not convert to CNF."""
    outcomes = list(accepted)
    if not outcomes:
        raise ValueError("the syntax-error rate of zero attempts is undefined")
    return sum(1 for ok in outcomes if not ok) / len(outcomes)
