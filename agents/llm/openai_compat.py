"""``ChatOpenAI`` for any OpenAI-compatible endpoint, keeping the reasoning text.

langchain-openai's ``ChatOpenAI`` follows the official OpenAI schema only: the non-standard
``reasoning_content`` / ``reasoning`` fields that vLLM, llama.cpp, DeepSeek-style and other servers
put next to ``content`` are dropped.  Reasoning models served that way often answer with an empty
``content``; ``ReasoningChatOpenAI`` copies those fields into ``additional_kwargs`` so the backend
can still use the answer.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI

from autonesy.agents.llm.transport import BoundedTransport
from autonesy.tools.config import LLM_TIMEOUT_S

REASONING_FIELDS = ("reasoning_content", "reasoning")


class ReasoningChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` that keeps ``reasoning_content`` / ``reasoning`` of each choice's message."""

    def _create_chat_result(self, response: Any, generation_info: dict | None = None) -> ChatResult:
        result = super()._create_chat_result(response, generation_info)
        if isinstance(response, dict):
            data = response
        elif isinstance(response, openai.BaseModel):
            data = response.model_dump(warnings=False)
        else:
            return result
        choices = data.get("choices") or []
        for generation, choice in zip(result.generations, choices):
            raw = (choice or {}).get("message") or {}
            for field in REASONING_FIELDS:
                value = raw.get(field)
                if value and field not in generation.message.additional_kwargs:
                    generation.message.additional_kwargs[field] = value
        return result


def openai_chat_model(
    *,
    model: str,
    api_key: str,
    base_url: str | None = None,
    timeout_s: float = LLM_TIMEOUT_S,
    temperature: float | None = None,
    max_tokens: int | None = None,
    extra_body: dict[str, Any] | None = None,
) -> ReasoningChatOpenAI:
    """A client with its own retries off (the backend retries, with backoff, via tenacity), usage
    reporting on for streamed calls too (``stream_usage``), and a transport that abandons a request at
    the deadline of :func:`~autonesy.agents.llm.transport.call_deadline` and refuses an oversized answer."""
    kwargs: dict[str, Any] = dict(
        model=model,
        api_key=api_key,
        base_url=base_url,
        timeout=timeout_s,
        max_retries=0,
        stream_usage=True,
        http_client=httpx.Client(transport=BoundedTransport()),  # the call's deadline, the answer's size
    )
    if temperature is not None:
        kwargs["temperature"] = temperature
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    if extra_body:
        kwargs["extra_body"] = extra_body
    return ReasoningChatOpenAI(**kwargs)
