"""LLM judges: one constraint at a time (semantic constraints, failed checkers, Nsvif-Neu), or the whole
instruction at once (the two-shot LLM-as-judge baseline).

The answer must end with ``[[SATISFIED]]`` or ``[[VIOLATED]]``; markers are matched case-insensitively
with spaces and markdown emphasis tolerated, and the last one counts. An answer without a marker is
``unclear``: the judge is asked once more (a new call), then the result stays undetermined.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import holistic_judge_prompt, judge_prompt

MARKER = re.compile(r"\[\[\s*(SATISFIED|VIOLATED)\s*\]\]", re.IGNORECASE)
ATTEMPTS = 2


@dataclass(frozen=True)
class Judgement:
    value: bool | None  # None: the judge gave no verdict (or the LLM failed)
    reasoning: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "reasoning": self.reasoning}


def parse_judgement(text: str) -> Judgement:
    text = text or ""
    markers = list(MARKER.finditer(text))
    if not markers:
        return Judgement(None, text.strip())
    last = markers[-1]
    reasoning = MARKER.sub("", text[: last.start()]).strip().strip("*").strip()
    return Judgement(last.group(1).upper() == "SATISFIED", reasoning)


class JudgeAgent:
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

    def judge(self, instruction: str, cid: str, summary: str, question: str, output: str, *,
              salt: str = "") -> tuple[list[AgentTurn], Judgement]:
        return self._judge("judge", judge_prompt(instruction, cid, summary, question, output), f"{cid}:{salt}")

    def holistic(self, instruction: str, output: str, *, salt: str = "") -> tuple[list[AgentTurn], Judgement]:
        return self._judge("holistic_judge", holistic_judge_prompt(instruction, output), salt)


__all__ = ["ATTEMPTS", "Judgement", "JudgeAgent", "parse_judgement"]
