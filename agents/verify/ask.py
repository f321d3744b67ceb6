"""One LLM request of a verifier agent, as an ``AgentTurn`` (the same record the formalization
pipeline traces): the messages, the answer or the ``LLMError``, never an exception."""

from __future__ import annotations

from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError
from autonesy.agents.policies import AgentTurn
from autonesy.agents.prompts import Prompt


def ask(backend: ChatBackend | None, role: str, prompt: Prompt, salt: str = "", **params: Any) -> AgentTurn:
    """Send ``prompt``; ``salt`` (never sent) keeps apart identical prompts that must be asked anew."""
    turn = AgentTurn(role, prompt.messages())
    if backend is None:
        turn.error = LLMError("config", f"the {role} agent has no LLM backend")
        return turn
    try:
        turn.response = backend.complete(turn.messages, cache_salt=f"{role}:{salt}", **params)
        turn.text = turn.response.text
    except LLMError as error:
        turn.error = error
    return turn


__all__ = ["ask"]
