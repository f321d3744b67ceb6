"""LLM backends (docs/architecture.md §8): every call goes through one ``ChatBackend.complete(messages)``.

- ``backend_from_spec("openai:MODEL" | "http://HOST:PORT/v1@MODEL" | "local" | "replay:TRACE" | "x.toml")``
- ``LangChainChatBackend``: any LangChain chat model (``ChatOpenAI`` in production, fake models in
  tests) + retries with backoff, one-line ``LLMError``s, usage/latency, reasoning fallback, cache.
- ``ResponseCache`` (SQLite), ``ReplayBackend`` (answers by prompt hash), ``LocalLlamaServer``
  (the embedded smoke-test model, extra ``[local]``).
"""

import autonesy.agents.llm.spec  # noqa: F401 - registers the openai, http and config providers
from autonesy.agents.llm.cache import ResponseCache, shared_cache
from autonesy.agents.llm.chat import ChatBackend, LangChainChatBackend, fold_system_prompt
from autonesy.agents.llm.errors import KINDS, LLMError
from autonesy.agents.llm.local import LOCAL_NOTICE, LocalChatBackend, LocalLlamaServer
from autonesy.agents.llm.registry import backend_from_spec, parse_spec, provider
from autonesy.agents.llm.replay import ReplayBackend, read_recorded_calls
from autonesy.agents.llm.response import LLMResponse, normalize_messages, prompt_hash

__all__ = [
    "KINDS",
    "LOCAL_NOTICE",
    "ChatBackend",
    "LLMError",
    "LLMResponse",
    "LangChainChatBackend",
    "LocalChatBackend",
    "LocalLlamaServer",
    "ReplayBackend",
    "ResponseCache",
    "shared_cache",
    "backend_from_spec",
    "parse_spec",
    "provider",
    "fold_system_prompt",
    "normalize_messages",
    "prompt_hash",
    "read_recorded_calls",
]
