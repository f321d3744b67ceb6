"""Formula metrics: how far a candidate φ̂ is from the expert's φ*, by the sets of assignments they admit.

Everything is over the N task variables with auxiliaries projected out. Three projected counts
suffice — MC(φ̂), MC(φ*) and MC(φ* ∧ φ̂) (auxiliaries renamed apart, so the conjunction's projection
is the intersection of the two projections) — and no CNF with auxiliaries is ever negated:

    TP = MC(φ* ∧ φ̂)   FP = MC(φ̂) − TP   FN = MC(φ*) − TP   TN = 2^N − TP − FP − FN

With exact counts, FP = 0 ⟺ φ̂ ⊆ φ* and FN = 0 ⟺ φ* ⊆ φ̂, which gives the relation exactly.

The overlap is rarely counted from scratch: when the two are proved equivalent (the same clauses up
to a renaming of auxiliaries, or SAT calls both ways when neither has auxiliaries), one count serves
all three; when one formula's clauses are a subset of the other's, the smaller clause set is
entailed and TP is the other side's count; when one side's models were enumerated, TP is how many
of them extend to a model of the other side (a SAT call each); when a side without auxiliaries is
entailed by the other (a SAT call per clause), TP is the other side's count. The ground truth's
count is cached per CNF, so the attempts of a task count it once (an ``auto`` count, or its timeout,
is also kept on disk, :mod:`autonesy.tools.count_store`, so later runs and other processes read it back).

Degenerate cases (documented values):
- precision = TP/(TP+FP); when φ̂ admits nothing, precision is 1 if φ* admits nothing too, else 0;
- recall = TP/(TP+FN); when φ* admits nothing, recall is 1 if φ̂ admits nothing too, else 0;
- F1 = 2PR/(P+R), 0 when P + R = 0;
- MC-R = MC(φ̂) / max(MC(φ*), 1);
- φ̂ ≡ ⊤: recall 1, precision MC(φ*)/2^N, relation permissive (or equal if φ* ≡ ⊤).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

from autonesy.tools.cnf import CNF
from autonesy.tools.count_store import stored_count
from autonesy.tools.counting import (
    DEFAULT_ENUMERATION_CAP,
    DEFAULT_TIME_LIMIT_S,
    ApproxMCSettings,
    CountTimedOut,
    EnumerationCapReached,
    ModelCount,
    count_by_enumeration,
    count_models,
)
from autonesy.tools.enumeration import count_extensible, extensible_models
from autonesy.tools.equivalence_check import entails_clauses, equivalent, uses_auxiliaries

logger = logging.getLogger(__name__)
RELATIONS = ("equal", "permissive", "strict", "incomparable")
TRUTH_CACHE_SIZE = 64
PROOF_SHARE = 0.2  # of the time limit, for the SAT calls of an equivalence or entailment proof
ENUMERATION_SHARE = 0.3  # of the time limit, to enumerate a candidate when the ground truth's models were


@dataclass(frozen=True)
class FormulaScore:
    """A formula against the ground truth: confusion counts over the task variables, the scores derived from them, the
    relation, and how the counts were made."""

    tp: int | None  # None (with tn, candidate_count, truth_count): the equivalence is proved, the count unknown
    fp: int
    fn: int
    tn: int | None
    precision: float
    recall: float
    f1: float
    relation: str
    mc_ratio: float
    candidate_count: int | None
    truth_count: int | None
    exact: bool
    count_method: str
    counts: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The score as JSON data."""
        return asdict(self)


def _ratio(num: int, den: int, empty_value: float) -> float:
    return float(Fraction(num, den)) if den else empty_value


def relation_of(fp: int, fn: int) -> str:
    """How a formula's models relate to the ground truth's: equal, strict (a subset), permissive (a superset) or
    incomparable."""
    if fp == 0 and fn == 0:
        return "equal"
    if fp == 0:
        return "strict"
    if fn == 0:
        return "permissive"
    return "incomparable"


def confusion_scores(tp: int, fp: int, fn: int, tn: int) -> dict[str, float]:
    """Precision, recall and F1 from model counts, with the conventions for empty sets (an empty formula of an empty
    truth is perfect)."""
    precision = _ratio(tp, tp + fp, 1.0 if tp + fn == 0 else 0.0)
    recall = _ratio(tp, tp + fn, 1.0 if tp + fp == 0 else 0.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def score_formula(
    candidate: CNF,
    truth: CNF,
    method: str = "auto",
    approxmc: ApproxMCSettings = ApproxMCSettings(),
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    candidate_count: ModelCount | None = None,
) -> FormulaScore:
    """Score ``candidate`` against ``truth`` (both over the same N task variables).

    Each of the three counts gets ``time_limit_s``; one running out raises
    :class:`~autonesy.tools.counting.CountTimedOut`. ``candidate_count``, when the caller already
    knows it exactly (the pipeline's compiled circuit), is used instead of counting again. A
    candidate proved equivalent (:mod:`.equivalence_check`) needs one count, and none at all for
    its F1: when the ground truth's count runs out of time, the score is F1 = 1, relation
    ``equal``, with the counts None (unknown).
    """
    if candidate.num_task_vars != truth.num_task_vars:
        raise ValueError(
            f"candidate has {candidate.num_task_vars} task variables, the ground truth {truth.num_task_vars}"
        )

    def count(cnf: CNF) -> ModelCount:
        return count_models(cnf, method, approxmc=approxmc, time_limit_s=time_limit_s)

    settings = (method, approxmc, time_limit_s)
    same = candidate == truth or equivalent(candidate, truth, PROOF_SHARE * time_limit_s)
    if same is True and candidate_count is not None and candidate_count.exact:
        _remember_truth_count(truth, settings, candidate_count)  # equal projections: the same count
    try:
        truth_count = _cached_truth_count(truth, settings, count)
    except CountTimedOut:
        if same is not True:
            raise
        return _proved_equal()
    if same is True:  # one count serves all three
        candidate_count = candidate_count if candidate_count is not None and candidate_count.exact else truth_count
        both = ModelCount(candidate_count.value, "equivalence", candidate_count.exact, 0.0)
    else:
        candidate_count = candidate_count or _count_candidate(candidate, truth, truth_count, count, time_limit_s)
        both = _overlap(candidate, truth, candidate_count, truth_count, count, time_limit_s)
    counts: dict[str, ModelCount] = {"candidate": candidate_count, "truth": truth_count, "both": both}
    total = 1 << truth.num_task_vars
    if truth_count.params.get("from_cache") and not _consistent(counts, total):
        # a count read back from disk that contradicts the ones just made is not believed: counted again
        logger.warning(
            "the stored ground-truth count %s contradicts this score's counts; counting again", truth_count.value
        )
        _remember_truth_count(truth, settings, stored_count(truth, count, time_limit_s=time_limit_s, recount=True))
        return score_formula(candidate, truth, method, approxmc, time_limit_s, candidate_count)
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


def _consistent(counts: dict[str, ModelCount], total: int) -> bool:
    """Whether exact counts can all be true: each within 0..2^N, the overlap within each side (approximate counts
    may disagree: they are reconciled below, not refused)."""
    if not all(c.exact for c in counts.values()):
        return True
    values = [c.value for c in counts.values()]
    both = counts["both"].value
    return all(0 <= v <= total for v in values) and both <= min(counts["candidate"].value, counts["truth"].value)


def _count_candidate(candidate: CNF, truth: CNF, truth_count: ModelCount, count, time_limit_s: float) -> ModelCount:
    """MC(φ̂). When φ*'s models were enumerated (a small set) and φ̂ entails φ* (φ* without
    auxiliaries), φ̂'s models are among them: each is checked. Otherwise φ̂ is likely small too: its
    models are enumerated first with a larger share of the limit than the general route gives enumeration, so
    the overlap becomes a model check (a realistic answer with auxiliaries: 184 models, 2 s here,
    where Ganak needs 40 s)."""
    if truth_count.models is not None:
        start = time.perf_counter()
        if not uses_auxiliaries(truth) and entails_clauses(candidate, truth, PROOF_SHARE * time_limit_s):
            # proj(φ̂) ⊆ φ* (one SAT call): φ̂'s models are those of φ* that extend to a model of φ̂.
            models = tuple(extensible_models(truth_count.models, candidate, time_limit_s))
            return ModelCount(len(models), "entailment", True, time.perf_counter() - start, {}, models)
        try:
            return count_by_enumeration(candidate, DEFAULT_ENUMERATION_CAP, ENUMERATION_SHARE * time_limit_s)
        except (EnumerationCapReached, CountTimedOut):
            pass
    return count(candidate)


def _proved_equal() -> FormulaScore:
    """φ̂ ≡ φ* proved, MC(φ*) out of time: the ratios are 1 and the counts unknown (None)."""
    return FormulaScore(
        tp=None,
        fp=0,
        fn=0,
        tn=None,
        precision=1.0,
        recall=1.0,
        f1=1.0,
        relation="equal",
        mc_ratio=1.0,
        candidate_count=None,
        truth_count=None,
        exact=False,
        count_method="equivalence",
        counts={},
    )


_truth_counts: OrderedDict[tuple[CNF, Any], ModelCount | CountTimedOut] = OrderedDict()
_truth_lock = threading.Lock()


def _cached_truth_count(truth: CNF, settings: Any, count) -> ModelCount:
    """The ground truth's count, once per (CNF, counting settings) — in memory, and for ``auto`` on disk
    (:mod:`.count_store`), timeouts included; a remembered timeout is raised again."""
    key = (truth, settings)
    with _truth_lock:
        known = _truth_counts.get(key)
        if known is not None:
            _truth_counts.move_to_end(key)
    if known is None:
        try:
            if settings[0] == "auto":  # other methods are asked for by name: they count
                known = stored_count(truth, count, method="auto", time_limit_s=settings[2])
            else:
                known = count(truth)
        except CountTimedOut as error:
            known = error
        _remember_truth_count(truth, settings, known)
    if isinstance(known, CountTimedOut):
        raise known
    return known


def _remember_truth_count(truth: CNF, settings: Any, result: ModelCount | CountTimedOut) -> None:
    """Keep ``result`` (a count or a timeout) in the in-memory cache, the oldest dropped beyond its size."""
    with _truth_lock:
        _truth_counts[(truth, settings)] = result
        while len(_truth_counts) > TRUTH_CACHE_SIZE:
            _truth_counts.popitem(last=False)


def _clause_set(cnf: CNF) -> set[frozenset[int]]:
    return {frozenset(clause) for clause in cnf.clauses}


def _overlap(
    candidate: CNF, truth: CNF, n_candidate: ModelCount, n_truth: ModelCount, count, time_limit_s: float
) -> ModelCount:
    """MC(φ* ∧ φ̂) by the cheapest sound route (see the module docstring)."""
    start = time.perf_counter()
    candidate_clauses, truth_clauses = _clause_set(candidate), _clause_set(truth)
    # A clause subset is entailed: every model of the larger set, auxiliaries included, satisfies it.
    if candidate_clauses <= truth_clauses:
        return _derived(n_truth, "subset", start)
    if truth_clauses <= candidate_clauses:
        return _derived(n_candidate, "subset", start)
    sides = [(n_candidate, truth), (n_truth, candidate)]
    enumerated = [(side.models, other) for side, other in sides if side.models is not None]
    if enumerated:
        models, other = min(enumerated, key=lambda pair: len(pair[0]))
        value = count_extensible(models, other, time_limit_s)
        return ModelCount(value, "model-check", True, time.perf_counter() - start)
    # A side without auxiliaries that the other entails (a SAT call per clause) contains its projection.
    for inner, outer, n_inner in ((candidate, truth, n_candidate), (truth, candidate, n_truth)):
        if not uses_auxiliaries(outer) and entails_clauses(inner, outer, PROOF_SHARE * time_limit_s):
            return _derived(n_inner, "entailment", start)
    return count(truth.conjoin(candidate))


def _derived(source: ModelCount, how: str, start: float) -> ModelCount:
    return ModelCount(source.value, how, source.exact, time.perf_counter() - start)


def syntax_error_rate(accepted: Iterable[bool]) -> float:
    """Share of attempts whose final answer (after repair) still did not convert to CNF."""
    outcomes = list(accepted)
    if not outcomes:
        raise ValueError("the syntax-error rate of zero attempts is undefined")
    return sum(1 for ok in outcomes if not ok) / len(outcomes)
