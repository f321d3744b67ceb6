"""The writer agent: responses to an instruction — for the feedback loop (``follow``) and for VifBench
data written by an LLM. The response is read from the last ``<response> … </response>`` block (the
whole answer when there is none)."""

from __future__ import annotations

import re
from typing import Any

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import rewrite_prompt, writer_prompt

_RESPONSE = re.compile(r"<\s*response\s*>\n?(.*?)\n?<\s*/\s*response\s*>", re.IGNORECASE | re.DOTALL)


def extract_response(text: str) -> str:
    """The response inside the writer's last ``<response>`` block (the whole text when it wrote none)."""
    blocks = _RESPONSE.findall(text or "")
    return (blocks[-1] if blocks else (text or "")).strip("\n")


class WriterAgent:
    """Writes responses for ``follow``: a first one, then revisions from the verifier's feedback."""

    def __init__(self, backend: ChatBackend | None, **params: Any) -> None:
        self.backend = backend
        self.params = params

    def _answer(self, turn: AgentTurn) -> tuple[AgentTurn, str | None]:
        if turn.error is not None:
            return turn, None
        text = extract_response(turn.text)
        return turn, text if text.strip() else None

    def write(self, instruction: str, *, salt: str = "0") -> tuple[AgentTurn, str | None]:
        """The first response to an instruction."""
        return self._answer(ask(self.backend, "writer", writer_prompt(instruction), salt, **self.params))

    def rewrite(
        self, instruction: str, previous: str, feedback: str | None, *, salt: str = ""
    ) -> tuple[AgentTurn, str | None]:
        """``feedback`` is the verifier's explanation, or None to pass on the verdict only."""
        prompt = rewrite_prompt(instruction, previous, feedback)
        return self._answer(ask(self.backend, "writer", prompt, salt, **self.params))


__all__ = ["WriterAgent", "extract_response"]
