"""The verifier's explanation in words: the verdict, the part of the formula that decided it, each
violated constraint with its evidence (the checker's code and what it returned, or the judge's
reasoning), the conditions that made it required, Z3's minimal reason, and what to change.

``explain(..., with_code=False)`` is the compact form the feedback loop sends to the writer.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence

from autonesy.tools.verify.results import (
    CheckerResult,
    ConstraintResult,
    JudgeResult,
    SolverDecision,
    UserCheckerResult,
)

REASONING_LIMIT = 600


def _short(text: str, limit: int = REASONING_LIMIT) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


SPAN_LIMIT = 3


def _spans(spans: Sequence[str]) -> str:
    """The parts of the response the checker's result rests on (words, sentences, lines), quoted."""
    if not spans:
        return ""
    shown = "; ".join(repr(_short(span, 160)) for span in spans[:SPAN_LIMIT])
    more = f" (and {len(spans) - SPAN_LIMIT} more)" if len(spans) > SPAN_LIMIT else ""
    return f", because of: {shown}{more}"


def evidence(result: ConstraintResult | None, *, with_code: bool = True) -> str:
    """How one constraint's value was obtained (None: it has no result), in one or more lines."""
    if isinstance(result, CheckerResult):
        rounds = result.reflections
        after = f" (after {rounds} self-reflection round{'s' if rounds != 1 else ''})" if rounds else ""
        text = f"checked by generated code{after}: check(response) returned {result.value}" + _spans(result.spans)
        if with_code and result.code:
            text += "\n" + textwrap.indent(result.code.rstrip(), "      ")
        return text
    if isinstance(result, UserCheckerResult):
        shown = ", ".join(f"{k}={v!r}" for k, v in result.arguments.items())
        return (
            f"checked by the user checker {result.checker}(response{', ' + shown if shown else ''}): "
            f"returned {result.value}"
        )
    if isinstance(result, JudgeResult) and result.method == "judge":
        return f"judged by the LLM: {_short(result.reasoning)}"
    if isinstance(result, JudgeResult):
        failures = result.failures
        last = failures[-1] if failures else None
        why = f"; last failure: [{last.error_kind}] {_short(last.message, 200)}" if last else ""
        return (
            f"the generated checker failed {len(failures)} time{'s' if len(failures) != 1 else ''}{why}; "
            f"judged by the LLM instead: {_short(result.reasoning)}"
        )
    return "not determined: "  # no result (the judge gave none for it)


def _label(cid: str, summaries: Mapping[str, str]) -> str:
    return f'{cid} "{summaries.get(cid, "").rstrip(".")}"'


def explain(
    decision: SolverDecision,
    constraints: Sequence[Mapping[str, str]],
    results: Mapping[str, ConstraintResult],
    *,
    with_code: bool = True,
) -> str:
    """The verdict in words: which constraints failed and why, with each one's evidence (checker code when asked)."""
    summaries = {c["id"]: c["summary"] for c in constraints}
    values = decision.values
    lines: list[str] = []
    if decision.verdict == "sat":
        lines.append("Verdict: sat — the response follows the instruction.")
        if decision.core and decision.core_unique:
            lines.append(
                "Decided by (Z3, the only minimal set of results that makes the formula true): "
                + ", ".join(f"{cid} = {str(values.get(cid)).lower()}" for cid in decision.core)
                + "."
            )
        unmet = [cid for cid, value in values.items() if value is False]
        if unmet:
            lines.append(
                "Not met, but not required by the formula here: " + "; ".join(_label(c, summaries) for c in unmet) + "."
            )
        return "\n".join(lines)
    if decision.verdict == "unknown":
        lines.append("Verdict: unknown — the results that could be obtained do not decide the formula.")
        for cid in decision.undetermined:
            lines.append(f"- {_label(cid, summaries)}: {evidence(results.get(cid), with_code=False)}")
        return "\n".join(lines)
    lines.append("Verdict: unsat — the response does not follow the instruction.")
    if decision.falsified_parts:
        lines.append("Requirement(s) of the formula that are false: " + "; ".join(decision.falsified_parts) + ".")
    lines.append("Violated constraints:")
    grouped = {cid for item in decision.alternatives for cid in item.ids}
    for item in decision.alternatives:
        rule = (
            "exactly one of them must hold"
            if item.op == "xor" and len(item.ids) == 2
            else "an odd number of them must hold"
            if item.op == "xor"
            else "both or neither must hold"
        )
        states = " and ".join(
            f"{_label(cid, summaries)} {'holds' if values.get(cid) else 'does not hold'}" for cid in item.ids
        )
        lines.append(f'- "{item.requirement}" is false: {states}; {rule}, so change one of them (not all).')
        for cid in item.ids:
            lines.append(f"  - {cid}: {evidence(results.get(cid), with_code=with_code)}")
    for violated in decision.violated:
        if violated.id in grouped:
            continue
        state = "holds, but the instruction requires that it does not" if violated.value else "does not hold"
        lines.append(
            f"- {_label(violated.id, summaries)} {state}; {evidence(results.get(violated.id), with_code=with_code)}"
        )
    conditions = [item for item in decision.conditions if item.id not in grouped]
    if conditions:
        lines.append(
            "They are required because: "
            + "; ".join(
                f"{_label(item.id, summaries)} {'holds' if item.value else 'does not hold'} "
                f"({evidence(results.get(item.id), with_code=False).split(':')[0]})"
                for item in conditions
            )
            + "."
        )
    if decision.core and decision.core_unique:  # with several independent failures no single one is "the" reason
        lines.append(
            "Minimal reason (Z3 unsat core): "
            + ", ".join(f"{cid} = {str(values.get(cid)).lower()}" for cid in decision.core)
            + "."
        )
    if decision.to_fix:
        lines.append(
            "To follow the instruction, change: "
            + "; ".join(
                f"make {_label(item.id, summaries)} {'hold' if item.should_be else 'not hold'}"
                for item in decision.to_fix
            )
            + "."
        )
    return "\n".join(lines)


def explain_contradiction(conflict: Sequence[str], constraints: Sequence[Mapping[str, str]]) -> str:
    """Why no response can follow the instruction: the requirements that contradict each other."""
    summaries = {c["id"]: c["summary"] for c in constraints}
    named = sorted(
        {cid for text in conflict for cid in re.findall(r"\bC[1-9][0-9]*\b", text)}, key=lambda cid: int(cid[1:])
    )
    lines = [
        "Contradictory instruction — no response can follow it: these requirements cannot all hold: "
        + "; ".join(conflict)
        + ".",
        "Where:",
    ]
    lines += [f"- {_label(cid, summaries)}" for cid in named]
    lines.append("Nothing was checked; change the instruction so that its requirements can hold together.")
    return "\n".join(lines)


__all__ = ["evidence", "explain", "explain_contradiction"]
