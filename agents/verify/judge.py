"""LLM judges: the constraints of one response that code does not decide (semantic constraints, failed
checkers, every constraint for Nsvif-Neu) in one request, or the whole instruction at once (the
two-shot LLM-as-judge baseline).

Verdicts are ``[[SATISFIED]]`` or ``[[VIOLATED]]``, matched case-insensitively with spaces and markdown
emphasis tolerated. The constraint judge answers one line per constraint (``C3: reason [[SATISFIED]]``;
the last marker on a constraint's lines counts); the holistic judge ends its answer with one. What has
no marker is asked once more (a new call, for those constraints only), then stays undetermined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import (
    COT_GUIDANCE,
    PERSONAS,
    cot_judge_prompt,
    holistic_judge_prompt,
    judge_prompt,
    panel_prompt,
)

_ITEM = re.compile(r"^\s*[-*]?\s*\**\s*(C[1-9][0-9]*)\b\**\s*[:.)-]?", re.MULTILINE)

MARKER = re.compile(r"\[\[\s*(SATISFIED|VIOLATED)\s*\]\]", re.IGNORECASE)
ATTEMPTS = 2


@dataclass(frozen=True)
class Judgement:
    """A judge's verdict and its reasoning (shown in the explanation)."""

    value: bool | None  # None: the judge gave no verdict (or the LLM failed)
    reasoning: str

    def to_dict(self) -> dict[str, Any]:
        """The judgement as JSON data."""
        return {"value": self.value, "reasoning": self.reasoning}


def parse_judgement(text: str) -> Judgement:
    """Read the verdict from a judge's answer (the last marker wins); no marker leaves the verdict open."""
    text = text or ""
    markers = list(MARKER.finditer(text))
    if not markers:
        return Judgement(None, text.strip())
    last = markers[-1]
    reasoning = MARKER.sub("", text[: last.start()]).strip().strip("*").strip()
    return Judgement(last.group(1).upper() == "SATISFIED", reasoning)


def parse_judgements(text: str, ids: list[str]) -> dict[str, Judgement]:
    """A judgement per constraint id from a per-constraint answer (lines opened by ``C<k>``); a single
    requested constraint may also be answered without its id."""
    text = text or ""
    marks = [(m.group(1), m.start()) for m in _ITEM.finditer(text)]
    found: dict[str, Judgement] = {}
    for number, (cid, start) in enumerate(marks):
        stop = marks[number + 1][1] if number + 1 < len(marks) else len(text)
        if cid in ids:
            judgement = parse_judgement(text[start:stop])
            if judgement.value is not None or cid not in found:
                found[cid] = judgement
    if len(ids) == 1 and found.get(ids[0], Judgement(None, "")).value is None:
        found[ids[0]] = parse_judgement(text)
    return {cid: found.get(cid, Judgement(None, "the judge gave no verdict for this constraint")) for cid in ids}


class JudgeAgent:
    """An LLM judge: per constraint (semantic constraints, fallback for failed checkers) or for the whole instruction
    (the judge baselines)."""

    def __init__(self, backend: ChatBackend | None, **params: Any) -> None:
        self.backend = backend
        self.params = params

    def _judge(self, role: str, prompt, salt: str) -> tuple[list[AgentTurn], Judgement]:
        turns = []
        for attempt in range(ATTEMPTS):
            turn = ask(self.backend, role, prompt, f"{salt}:{attempt}", **self.params)
            turns.append(turn)
            if turn.error is not None:
                return turns, Judgement(None, f"LLM error ({turn.error.kind}): {turn.error}")
            judgement = parse_judgement(turn.text)
            if judgement.value is not None:
                return turns, judgement
        return turns, Judgement(None, "the judge gave no [[SATISFIED]] / [[VIOLATED]] verdict")

    def judge(
        self, instruction: str | None, items: list[tuple[str, str]], output: str, *, salt: str = ""
    ) -> tuple[list[AgentTurn], dict[str, Judgement]]:
        """Judge ``items`` ((id, summary) pairs) of ``output`` in one request (a second for those left
        without a verdict); ``instruction`` is the context of constraints that need it (None: none)."""
        turns: list[AgentTurn] = []
        verdicts: dict[str, Judgement] = {}
        pending = list(items)
        for attempt in range(ATTEMPTS):
            turn = ask(
                self.backend,
                "judge",
                judge_prompt(instruction, pending, output),
                f"{','.join(c for c, _ in pending)}:{salt}:{attempt}",
                **self.params,
            )
            turns.append(turn)
            if turn.error is not None:
                failed = Judgement(None, f"LLM error ({turn.error.kind}): {turn.error}")
                verdicts.update({cid: failed for cid, _ in pending})
                break
            verdicts.update(parse_judgements(turn.text, [cid for cid, _ in pending]))
            pending = [(cid, summary) for cid, summary in pending if verdicts[cid].value is None]
            if not pending:
                break
        return turns, verdicts

    def holistic(self, instruction: str, output: str, *, salt: str = "") -> tuple[list[AgentTurn], Judgement]:
        """One verdict on the whole instruction (the judge baseline)."""
        return self._judge("holistic_judge", holistic_judge_prompt(instruction, output), salt)

    def cot(
        self, instruction: str, output: str, guidance: str = COT_GUIDANCE, *, salt: str = ""
    ) -> tuple[list[AgentTurn], Judgement]:
        """GEPA-CoT: a chain-of-thought judge whose guidance GEPA optimised (the default one otherwise)."""
        return self._judge("cot_judge", cot_judge_prompt(instruction, output, guidance), salt)

    def panel(self, instruction: str, output: str, *, salt: str = "") -> tuple[list[AgentTurn], Judgement]:
        """Conv-CoT: the literalist, the pragmatist and the skeptic speak in turn, each reading the others;
        the verdict is the majority of their verdicts (no majority: undetermined)."""
        turns: list[AgentTurn] = []
        transcript: list[tuple[str, str]] = []
        votes: list[bool] = []
        for persona in PERSONAS:
            turn = ask(
                self.backend, persona, panel_prompt(persona, instruction, output, transcript), salt, **self.params
            )
            turns.append(turn)
            if turn.error is not None:
                return turns, Judgement(None, f"LLM error ({turn.error.kind}): {turn.error}")
            judgement = parse_judgement(turn.text)
            transcript.append((persona, turn.text))
            if judgement.value is not None:
                votes.append(judgement.value)
        reasoning = " | ".join(f"{name}: {parse_judgement(text).reasoning[:300]}" for name, text in transcript)
        if votes.count(True) > len(PERSONAS) // 2:
            return turns, Judgement(True, reasoning)
        if votes.count(False) > len(PERSONAS) // 2:
            return turns, Judgement(False, reasoning)
        return turns, Judgement(None, "the panel reached no majority: " + reasoning)


__all__ = ["ATTEMPTS", "Judgement", "JudgeAgent", "parse_judgement", "parse_judgements"]
