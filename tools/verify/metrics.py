"""Scores of an instruction-following verifier against labelled pairs (the paper's tables 2–4 in shape).

The positive class is ``sat`` (the response follows the instruction): a false positive accepts a
response that violates the instruction, a false negative rejects one that follows it. A verifier that
gives no verdict (``unknown``, or an error) is neither right nor wrong: such pairs are left out of
precision, recall, F1 and pass@1, and ``unknown_share`` says how many there were — a verifier cannot
look better by abstaining without it showing.

- precision, recall, F1 of ``sat``;
- ``pass@1``: the share of decided pairs whose verdict is right in a single verification run;
- ``fp_rate`` / ``fn_rate``: false positives / false negatives as a share of the decided pairs (how
  the paper reports them); ``fpr`` = FP / (FP + TN) is given too.

Constraint-level scores compare the verifier's per-constraint values with the labels. The verifier's
constraints are its own decomposition — numbered, merged or split its own way — so they are aligned
with the labelled ones by meaning (:func:`align_constraints`), never by id; FP/FN are reported per
constraint type, and ``unknown`` values as a share.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def binary_scores(pairs: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """``pairs`` of (label verdict, predicted verdict or None)."""
    tp = fp = fn = tn = unknown = 0
    for label, predicted in pairs:
        if predicted not in ("sat", "unsat"):
            unknown += 1
            continue
        positive = predicted == "sat"
        if label == "sat":
            tp, fn = tp + positive, fn + (not positive)
        else:
            fp, tn = fp + positive, tn + (not positive)
    decided = tp + fp + fn + tn
    n = decided + unknown
    return {
        "n": n,
        "decided": decided,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "unknown": unknown,
        "unknown_share": _ratio(unknown, n),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "pass_at_1": _ratio(tp + tn, decided),
        "fp_rate": _ratio(fp, decided),
        "fn_rate": _ratio(fn, decided),
        "fpr": _ratio(fp, fp + tn),
    }


USAGE_KEYS = (  # what a verification's LLM calls cost, counted as they are made
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "calls_without_usage",
    "cached_tokens",
    "failed_requests",
    "llm_seconds",
)
COST_KEYS = (*USAGE_KEYS, "checker_runs", "checker_seconds", "wall_seconds")


def cost(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals and per-pair means of the usage counters."""
    totals = {k: sum(float(r.get(k) or 0) for r in rows) for k in COST_KEYS}
    n = len(rows)
    return {"pairs": n, "total": totals, "per_pair": {k: (v / n if n else None) for k, v in totals.items()}}


# --------------------------------------------------------------------------------------------------
# constraint alignment by meaning

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an at the response is are be of in to and or with its it each every has have by as that this "
    "written should must".split()
)


def _content(text: str) -> set[str]:
    """The content words of ``text``, a plural and its singular alike ("keywords" = "keyword")."""
    return {
        t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t
        for t in _TOKEN.findall(text.lower())
        if t not in _STOP
    }


def _param_tokens(params: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    for value in params.values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                found |= _content(str(item))
    return found


def match_score(labelled: Mapping[str, Any], summary: str) -> float:
    """How well a predicted constraint's ``summary`` means the labelled constraint (0–1): the same
    summary scores 1; otherwise the overlap of content words (weight 0.4) and the share of the
    labelled parameters (keywords, numbers, tones) that the summary names (weight 0.6)."""
    if " ".join(summary.lower().split()) == " ".join(str(labelled.get("summary", "")).lower().split()):
        return 1.0
    mine, theirs = _content(summary), _content(str(labelled.get("summary", "")))
    words = len(mine & theirs) / len(mine | theirs) if mine | theirs else 0.0
    params = _param_tokens(labelled.get("params") or {})
    if not params:
        return words
    return 0.4 * words + 0.6 * len(params & mine) / len(params)


ALIGN_THRESHOLD = 0.35


def align_constraints(
    labelled: Sequence[Mapping[str, Any]], predicted: Sequence[Mapping[str, Any]], threshold: float = ALIGN_THRESHOLD
) -> dict[str, str]:
    """{labelled id: predicted id}, one to one, best matches first; pairs scoring below ``threshold``
    stay unaligned (a constraint the verifier dropped, or one it merged into another)."""
    scored = sorted(
        ((match_score(l, p["summary"]), i, j) for i, l in enumerate(labelled) for j, p in enumerate(predicted)),
        reverse=True,
    )
    taken_l, taken_p, pairs = set(), set(), {}
    for score, i, j in scored:
        if score < threshold or i in taken_l or j in taken_p:
            continue
        taken_l.add(i)
        taken_p.add(j)
        pairs[labelled[i]["id"]] = predicted[j]["id"]
    return pairs


def constraint_agreement(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-constraint values against the labels, aligned by meaning; overall and per constraint type.

    Each row needs ``constraints`` (the labelled ones: id, type, params, summary), ``labels``,
    ``decomposition`` (the verifier's constraints: id, summary) and ``values`` (by the verifier's ids)."""
    by_type: dict[str, dict[str, int]] = defaultdict(
        lambda: {"n": 0, "aligned": 0, "tp": 0, "tn": 0, "fp": 0, "fn": 0, "unknown": 0}
    )
    rows_used = 0
    for row in rows:
        labelled, predicted = row.get("constraints") or [], row.get("decomposition") or []
        values, labels = row.get("values") or {}, row.get("labels") or {}
        if not labelled or not predicted or not labels:
            continue
        rows_used += 1
        pairs = align_constraints(labelled, predicted)
        for constraint in labelled:
            entry = by_type[constraint.get("type", "?")]
            entry["n"] += 1
            if constraint["id"] not in pairs:
                continue
            entry["aligned"] += 1
            value, label = values.get(pairs[constraint["id"]]), bool(labels[constraint["id"]])
            if value is None:
                entry["unknown"] += 1
            else:
                entry[("tp" if value else "fn") if label else ("fp" if value else "tn")] += 1
    total = {k: sum(e[k] for e in by_type.values()) for k in ("n", "aligned", "tp", "tn", "fp", "fn", "unknown")}

    def summary(e: Mapping[str, int]) -> dict[str, Any]:
        decided = e["tp"] + e["tn"] + e["fp"] + e["fn"]
        return {
            **e,
            "aligned_share": _ratio(e["aligned"], e["n"]),
            "accuracy": _ratio(e["tp"] + e["tn"], decided),
            "unknown_share": _ratio(e["unknown"], e["aligned"]),
            "fp_rate": _ratio(e["fp"], decided),
            "fn_rate": _ratio(e["fn"], decided),
        }

    return {
        "rows": rows_used,
        "constraints": total["n"],
        **summary(total),
        "by_type": {t: summary(e) for t, e in sorted(by_type.items())},
    }


def scores(rows: list[Mapping[str, Any]], group_order: Iterable[str] = ()) -> dict[str, Any]:
    """Overall and per-complexity-group scores, cost and constraint agreement of one verifier's rows
    (each row: ``label``, ``predicted``, ``group`` and the usage counters)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[str(row.get("group", "?"))].append(row)
    order = [g for g in group_order if g in groups] + sorted(g for g in groups if g not in set(group_order))
    return {
        "overall": binary_scores((r["label"], r.get("predicted")) for r in rows),
        "groups": {g: binary_scores((r["label"], r.get("predicted")) for r in groups[g]) for g in order},
        "cost": cost(rows),
        "group_cost": {g: cost(groups[g]) for g in order},
        "constraints": constraint_agreement(rows),
    }


__all__ = [
    "ALIGN_THRESHOLD",
    "COST_KEYS",
    "USAGE_KEYS",
    "align_constraints",
    "binary_scores",
    "constraint_agreement",
    "cost",
    "match_score",
    "scores",
]
