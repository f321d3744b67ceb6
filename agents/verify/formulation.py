"""The formulation agent: instruction → constraints (one-line summaries, each tagged logic or semantic) +
their composition as a formula.

The answer is read as data: the ``<constraints>`` block gives ``C<k> [logic|semantic]: summary`` lines
(the tag routes the constraint: code for logic, the judge for semantic — no separate request), the
``<formula>`` block a formula in the composition language of :mod:`autonesy.tools.verify.solver`
(NAT notation or SMT-LIB), parsed there — nothing the LLM writes is executed. A problem (no block,
badly numbered constraints, a formula that does not parse, a constraint the formula never uses) is
a :class:`FormulationError` whose message goes back to the agent for another try. A line without a
tag is read as semantic (a judge can always answer) and noted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import formulation_prompt
from autonesy.tools.verify.solver import Composition, CompositionError, parse_composition

_BLOCK = {
    name: re.compile(rf"<\s*{name}\s*>(.*?)<\s*/\s*{name}\s*>", re.IGNORECASE | re.DOTALL)
    for name in ("constraints", "formula")
}
_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?\**\s*(C[1-9][0-9]*)\s*\**\s*(?:[\[(]\s*\**(logic|semantic)\**\s*[\])])?\s*\**"
    r"\s*[:.)-]\s*(?:[\[(]\s*(logic|semantic)\s*[\])]\s*)?(.+?)\s*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^```[a-zA-Z0-9]*\s*$|^```\s*$")


class FormulationError(ValueError):
    """The answer cannot be used; the message is written for the formulation agent."""


@dataclass(frozen=True)
class Formulation:
    """An instruction decomposed: constraint ids and summaries, how they compose into the verdict, and each one's kind."""

    constraints: tuple[tuple[str, str], ...]  # (id, one-line summary)
    composition: Composition
    kinds: tuple[str, ...] = ()  # logic | semantic, per constraint
    note: str = ""

    @property
    def ids(self) -> tuple[str, ...]:
        """The constraint ids in order."""
        return tuple(cid for cid, _ in self.constraints)

    def to_state(self) -> dict[str, Any]:
        """The formulation as graph state data (constraints with kinds, the formula)."""
        kinds = self.kinds or ("semantic",) * len(self.constraints)
        return {
            "constraints": [
                {"id": cid, "summary": summary, "kind": kind} for (cid, summary), kind in zip(self.constraints, kinds)
            ],
            "formula": self.composition.source,
        }


def _last_block(name: str, text: str) -> str | None:
    found = _BLOCK[name].findall(text)
    if not found:
        return None
    lines = [line for line in found[-1].strip().splitlines() if not _FENCE.match(line.strip())]
    return "\n".join(lines).strip()


def parse_formulation(text: str) -> Formulation:
    """Read the formulation agent's answer (the last block of each kind); a missing or malformed block is a
    ``FormulationError`` written for the repair prompt."""
    block = _last_block("constraints", text or "")
    if block is None:
        raise FormulationError("the answer has no <constraints> … </constraints> block")
    constraints: list[tuple[str, str]] = []
    kinds: list[str] = []
    untagged: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        match = _LINE.match(line)
        if not match:
            raise FormulationError(
                f'cannot read the constraint line {line.strip()!r}; write each as "C<number> [logic|semantic]: summary"'
            )
        cid, tag, summary = match.group(1), match.group(2) or match.group(3), match.group(4)
        constraints.append((cid, summary))
        kinds.append((tag or "semantic").lower())
        if tag is None:
            untagged.append(cid)
    if not constraints:
        raise FormulationError("the <constraints> block lists no constraint")
    ids = [cid for cid, _ in constraints]
    expected = [f"C{i}" for i in range(1, len(ids) + 1)]
    if ids != expected:
        raise FormulationError(
            f"number the constraints C1, C2, … in order without gaps or repeats (found {', '.join(ids)})"
        )
    formula = _last_block("formula", text)
    if formula is None:
        raise FormulationError("the answer has no <formula> … </formula> block")
    try:
        composition = parse_composition(formula, ids)
    except CompositionError as error:
        raise FormulationError(str(error)) from None
    unused = [cid for cid in ids if cid not in composition.used()]
    if unused:
        raise FormulationError(
            f"the formula does not use {', '.join(unused)}; every constraint must appear in it (or drop the constraint)"
        )
    note = f"no logic/semantic tag for {', '.join(untagged)}: judged as semantic" if untagged else ""
    return Formulation(tuple(constraints), composition, tuple(kinds), note)


def formulation_from_state(constraints: list[dict[str, str]], formula: str) -> Formulation:
    """Rebuild a formulation from graph state (a resumed run, or reused memory)."""
    ids = [c["id"] for c in constraints]
    return Formulation(
        tuple((c["id"], c["summary"]) for c in constraints),
        parse_composition(formula, ids),
        tuple(c.get("kind", "semantic") for c in constraints),
    )


class FormulationAgent:
    """Decomposes an instruction into constraints and a composition formula, repairing its own answer from the parse
    error."""

    def __init__(self, backend: ChatBackend | None, **params: Any) -> None:
        self.backend = backend
        self.params = params

    def formulate(
        self, instruction: str, *, previous: str | None = None, error: str | None = None, round_number: int = 0
    ) -> tuple[AgentTurn, Formulation | None, str | None]:
        """(turn, formulation or None, the problem when there is none)."""
        turn = ask(
            self.backend,
            "formulation",
            formulation_prompt(instruction, previous, error),
            str(round_number),
            **self.params,
        )
        if turn.error is not None:
            return turn, None, f"LLM error ({turn.error.kind}): {turn.error}"
        try:
            return turn, parse_formulation(turn.text), None
        except FormulationError as problem:
            return turn, None, str(problem)


__all__ = ["Formulation", "FormulationAgent", "FormulationError", "formulation_from_state", "parse_formulation"]
