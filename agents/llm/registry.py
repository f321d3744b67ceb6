"""LLM providers, found by the kind of a parsed ``LLMSpec`` (``tools/llm_spec.py``) in the one registry
(``tools/registry.py``): each provider module registers its factory with the public
``@autonesy.provider("kind")`` (as inspect_ai's ``@modelapi``), and :func:`backend_from_spec` builds
the backend a spec names. The built-in providers are the modules in ``BUILTIN_PROVIDERS`` (imported
on first use); a plugin's are asked for as ``mypkg/kind:ARGUMENT``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from autonesy.agents.llm.cache import ResponseCache
from autonesy.agents.llm.chat import ChatBackend
from autonesy.agents.llm.errors import LLMError
from autonesy.tools import registry
from autonesy.tools.config import LLM_TIMEOUT_S
from autonesy.tools.llm_spec import LLMSpec, LLMSpecError

DEFAULT_TIMEOUT_S = LLM_TIMEOUT_S
DEFAULT_MAX_TOKENS = 4096

# factory(spec, settings, **context) -> backend; settings: timeout_s, max_tokens, temperature, cache, retries,
# backoff_s; context: what a provider needs beyond a spec (the verifier's scripted models: the evaluated records)
Factory = Callable[..., ChatBackend]
BUILTIN_PROVIDERS = ("spec", "local", "replay")  # the modules of agents/llm that register providers


def builtin_providers() -> None:
    """Import the built-in provider modules (each registers its factories once)."""
    for module in BUILTIN_PROVIDERS:
        importlib.import_module(f"autonesy.agents.llm.{module}")


def parse_spec(spec: LLMSpec | str) -> LLMSpec:
    """``spec`` as an ``LLMSpec``: a string is parsed (a bad one is ``LLMError("config")``)."""
    if isinstance(spec, LLMSpec):
        return spec
    try:
        return LLMSpec.parse(spec)
    except LLMSpecError as error:
        raise LLMError("config", str(error)) from None


def backend_from_spec(
    spec: LLMSpec | str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    temperature: float | None = 0.0,
    cache: ResponseCache | None = None,
    retries: int = 3,
    backoff_s: float = 1.0,
    **context: Any,
) -> ChatBackend:
    """The backend a spec names (``tools/llm_spec.py`` lists the forms); ``LLMError("config")`` otherwise.

    ``retries`` counts attempts in all (1 = no retry).  The ``local`` backend starts its server
    lazily, on the first call that the cache cannot answer; ``close()`` (or exit) stops it.
    """
    parsed = parse_spec(spec)
    builtin_providers()
    try:
        factory: Factory = registry.lookup("provider", parsed.kind).target
    except registry.RegistryError as error:
        raise LLMError("config", f"no provider of {parsed.kind!r} LLM specs ({parsed.redacted}): {error}") from None
    settings: dict[str, Any] = dict(
        timeout_s=timeout_s,
        max_tokens=max_tokens,
        temperature=temperature,
        cache=cache,
        retries=retries,
        backoff_s=backoff_s,
    )
    return factory(parsed, settings, **context)
