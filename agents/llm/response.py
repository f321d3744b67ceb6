"""One LLM answer as a value: what was asked (by hash), what came back, what it cost.

``LLMResponse`` is what every backend returns and what traces, the response cache and the replay
backend store.  ``prompt_hash`` is the key that ties a recorded answer to its prompt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from autonesy.agents.llm.errors import LLMError

ROLES = ("system", "user", "assistant")
MAX_ANSWER_CHARS = 400_000  # an answer longer than this is cut (and the cut recorded): no task needs more


def bounded_text(text: str, limit: int = MAX_ANSWER_CHARS) -> tuple[str, int]:
    """``text`` as valid UTF-8 (lone surrogates replaced) and at most ``limit`` characters; and how many were cut."""
    cut = max(len(text) - limit, 0)
    text = text[:limit] if cut else text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text, cut


def normalize_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The messages as plain ``[{"role", "content"}]`` dicts, checked.

    Raises ``LLMError`` (kind ``bad_request``) for an empty list, an unknown role or a
    non-string content: these are programming errors of the caller, reported as one line.
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise LLMError("bad_request", "messages must be a list of {'role', 'content'} dicts")
    out: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise LLMError("bad_request", f"message {i} is not a dict with 'role' and 'content'")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise LLMError("bad_request", f"message {i} has role {role!r}; expected one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise LLMError("bad_request", f"message {i} ({role}) has no string 'content'")
        out.append({"role": role, "content": content})
    if not out:
        raise LLMError("bad_request", "no messages to send")
    return out


def prompt_hash(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None) -> str:
    """SHA-256 (hex) of a canonical JSON of the messages and the generation parameters.

    Only ``role`` and ``content`` of each message count; parameters whose value is ``None``
    are dropped, so ``f(m)`` and ``f(m, {"stop": None})`` agree.  Dict key order never matters.
    """
    canonical = {
        "messages": normalize_messages(messages),
        "params": {k: v for k, v in dict(params or {}).items() if v is not None},
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_NONE = type(None)
# What a recorded response (cache, replayed trace; possibly crafted) may hold, field by field.
_RECORDED_TYPES: dict[str, type | tuple[type, ...]] = {
    "text": str,
    "content": str,
    "reasoning": str,
    "prompt_tokens": (int, _NONE),
    "completion_tokens": (int, _NONE),
    "latency_s": (int, float),
    "model": str,
    "endpoint": str,
    "cached": bool,
    "prompt_hash": str,
    "attempts": int,
    "finish_reason": (str, _NONE),
    "truncated_chars": int,
}


@dataclass(frozen=True)
class LLMResponse:
    """An answer of a chat model.

    ``text`` is the answer to use: ``content`` when it is non-empty, otherwise the model's
    reasoning text (reasoning models served by some OpenAI-compatible servers put everything
    there).  ``endpoint`` is a label such as ``http://127.0.0.1:8000/v1`` — never a key.
    ``prompt_hash`` is ``prompt_hash(messages, params)`` of the call that produced it, with
    ``params`` as passed to ``complete`` (backend defaults excluded, so a replay matches a
    recording made with other defaults).  ``attempts`` counts the requests made (retries + 1);
    ``cached`` is true when no model was called (response cache or replay).
    """

    text: str
    content: str = ""
    reasoning: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    model: str = ""
    endpoint: str = ""
    cached: bool = False
    prompt_hash: str = ""
    attempts: int = 1
    finish_reason: str | None = None
    truncated_chars: int = 0  # characters of the answer cut at MAX_ANSWER_CHARS

    @property
    def total_tokens(self) -> int | None:
        """Prompt plus completion tokens; None when the server reported neither."""
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)

    def to_dict(self) -> dict[str, Any]:
        """The response as JSON data (the cache and traces store it)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LLMResponse:
        """Rebuild from ``to_dict`` output; unknown keys are ignored, ``text`` is required."""
        if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
            raise LLMError("config", "a recorded LLM response needs at least a string 'text'")
        values: dict[str, Any] = {  # each value checked against its field's type in _RECORDED_TYPES
            k: v
            for k, v in data.items()
            if k in _RECORDED_TYPES
            and isinstance(v, _RECORDED_TYPES[k])
            and (type(v) is not bool or _RECORDED_TYPES[k] is bool)
        }  # recorded data: a wrong type is dropped
        for key in ("text", "content", "reasoning"):  # recorded data: cap it and make it valid UTF-8 again
            if isinstance(values.get(key), str):
                values[key] = bounded_text(values[key])[0]
        return cls(**values)
