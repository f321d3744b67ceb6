"""LLM backends (docs/architecture.md §8): every call goes through one ``ChatBackend.complete(messages)``.

- ``backend_from_spec("openai:MODEL" | "http://HOST:PORT/v1@MODEL" | "local" | "replay:TRACE" | "x.toml")``
- ``LangChainChatBackend``: any LangChain chat model (``ChatOpenAI`` in production, fake models in
  tests) + retries with backoff, one-line ``LLMError``s, usage/latency, reasoning fallback, cache.
- ``ResponseCache`` (SQLite), ``ReplayBackend`` (answers by prompt hash), ``LocalLlamaServer``
  (the embedded smoke-test model, extra ``[local]``).

The names are imported on first use (LangChain loads only when a backend is), so a policy module
that imports ``LLMError`` or ``ChatBackend`` from here stays light to import.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the submodule that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "KINDS": "errors",
    "LLMError": "errors",
    "LOCAL_NOTICE": "local",
    "LocalChatBackend": "local",
    "LocalLlamaServer": "local",
    "ChatBackend": "chat",
    "LangChainChatBackend": "chat",
    "fold_system_prompt": "chat",
    "LLMResponse": "response",
    "normalize_messages": "response",
    "prompt_hash": "response",
    "ReplayBackend": "replay",
    "read_recorded_calls": "replay",
    "ResponseCache": "cache",
    "shared_cache": "cache",
    "backend_from_spec": "registry",
    "parse_spec": "registry",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
