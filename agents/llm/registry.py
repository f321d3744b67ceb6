"""LLM providers, found by the kind of a parsed ``LLMSpec`` (``tools/llm_spec.py``): each provider
module registers its factory with ``@provider("kind")`` (as inspect_ai's ``@modelapi``), and
:func:`backend_from_spec` builds the backend a spec names through the registry. A new provider is
one module with one decorated function, imported by its package (``agents/llm/__init__.py`` for
the backends here, ``agents/verify`` for the verifier's scripted models)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autonesy.agents.llm.cache import ResponseCache
from autonesy.agents.llm.chat import ChatBackend
from autonesy.agents.llm.errors import LLMError
from autonesy.tools.config import LLM_TIMEOUT_S
from autonesy.tools.llm_spec import LLMSpec, LLMSpecError

DEFAULT_TIMEOUT_S = LLM_TIMEOUT_S
DEFAULT_MAX_TOKENS = 4096

# factory(spec, settings, **context) -> backend; settings: timeout_s, max_tokens, temperature, cache, retries,
# backoff_s; context: what a provider needs beyond a spec (the verifier's scripted models: the evaluated records)
Factory = Callable[..., ChatBackend]
PROVIDERS: dict[str, Factory] = {}


def provider(*kinds: str) -> Callable[[Factory], Factory]:
    """Register the decorated factory as the provider of ``kinds`` (a kind has one provider)."""

    def register(factory: Factory) -> Factory:
        for kind in kinds:
            if kind in PROVIDERS and PROVIDERS[kind] is not factory:
                raise ValueError(f"two providers for LLM specs of kind {kind!r}")
            PROVIDERS[kind] = factory
        return factory

    return register


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
    factory = PROVIDERS.get(parsed.kind)
    if factory is None:
        raise LLMError("config", f"no provider of {parsed.kind!r} LLM specs is loaded ({parsed.redacted})")
    settings: dict[str, Any] = dict(
        timeout_s=timeout_s,
        max_tokens=max_tokens,
        temperature=temperature,
        cache=cache,
        retries=retries,
        backoff_s=backoff_s,
    )
    return factory(parsed, settings, **context)
