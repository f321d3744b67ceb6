"""The OpenAI-compatible providers of the backend registry (``agents/llm/registry.py``): the
``openai``, ``http`` and ``config`` kinds of a parsed ``LLMSpec`` (``tools/llm_spec.py``) → a
``ChatBackend``; ``local`` and ``replay`` are provided by their own modules.

Accepted forms::

    openai:MODEL                      OpenAI's API; key from OPENAI_API_KEY
    http(s)://HOST:PORT/v1@MODEL      any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio);
                                      key from AUTONESY_LLM_API_KEY, else OPENAI_API_KEY, else a dummy
    local                             the embedded smoke-test model (needs the [local] extra);
                                      max_tokens is capped at 1024 (it generates ~30 tokens/s on 2 cores)
    local:PATH.gguf                   the embedded server with another GGUF file
    replay:TRACE.jsonl                answers recorded in a trace, matched by prompt hash
    PATH.toml                         a config file with an [llm] table: base_url, model, api_key_env,
                                      timeout_s, max_tokens, temperature (and optionally retries, and
                                      grammar = llama.cpp | vllm | vllm-legacy | sglang | json_schema | none:
                                      how the server takes a grammar for --decoding grammar;
                                      prompt_price_per_mtok and completion_price_per_mtok: what a million
                                      tokens cost, for ``report``'s costs)

Grammar dialects (``agents/llm/guided``): ``local`` → llama.cpp, ``openai:`` → json_schema, a bare
``http(s)://…@MODEL`` → none (the server kind is unknown: name it in a TOML config).

Keys only ever come from the environment; they are never part of a label, an error message, a
response or a cache entry. They go only where they belong: ``OPENAI_API_KEY`` only to OpenAI's
API (``api.openai.com``), and no key at all over plain ``http://`` except to a loopback address.
A password in an endpoint URL is redacted (``tools/llm_spec.redact_spec``) wherever the spec is shown or written.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from autonesy.agents.llm.cache import ResponseCache
from autonesy.agents.llm.chat import ChatBackend, LangChainChatBackend
from autonesy.agents.llm.errors import LLMError
from autonesy.agents.llm.openai_compat import openai_chat_model
from autonesy.agents.llm.registry import backend_from_spec
from autonesy.tools.config import (
    LLM_KEY_ENV,
    OPENAI_BASE_URL,
    OPENAI_BASE_URL_ENV,
    OPENAI_KEY_ENV,
    env,
)
from autonesy.tools.llm_spec import PRICE_KEYS, LLMSpec, public_url
from autonesy.tools.registry import provider

OPENAI_HOST = "api.openai.com"
DUMMY_API_KEY = "not-needed"
KEY_ENV_VARS = (LLM_KEY_ENV, OPENAI_KEY_ENV)


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise LLMError("config", f"bad LLM endpoint URL {public_url(url)!r}: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMError("config", f"bad LLM endpoint URL {public_url(url)!r}: expected http(s)://HOST[:PORT]/v1")


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _keys_for(base_url: str) -> tuple[str, ...]:
    """The environment variables whose key may go to this endpoint: OPENAI_API_KEY only to OpenAI."""
    return KEY_ENV_VARS if urlsplit(base_url).hostname == OPENAI_HOST else ("AUTONESY_LLM_API_KEY",)


def _check_key_transport(base_url: str, api_key: str) -> None:
    parts = urlsplit(base_url)
    if (api_key != DUMMY_API_KEY or parts.password) and parts.scheme != "https" and not _is_loopback(parts.hostname):
        raise LLMError(
            "config",
            f"refusing to send an API key or password over plain http to {public_url(base_url)}; "
            "use https (or a loopback address), or unset the key for a server that needs none",
        )


def _key_from_env(names: tuple[str, ...], default: str | None) -> str | None:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return default


def openai_compatible_backend(
    base_url: str,
    model: str,
    api_key: str,
    *,
    timeout_s: float,
    max_tokens: int | None,
    temperature: float | None,
    cache: ResponseCache | None,
    retries: int,
    backoff_s: float,
    max_tokens_in_extra_body: bool,
    fold_system: bool = False,
    grammar_dialect: str = "none",
) -> LangChainChatBackend:
    """A backend on an OpenAI-compatible server, with the URL and key checked first (keys only over https or to
    loopback)."""
    _check_url(base_url)
    _check_key_transport(base_url, api_key)
    if not model:
        raise LLMError("config", f"no model name for the endpoint {public_url(base_url)}")
    known = (api_key, *(os.environ.get(name, "").strip() for name in KEY_ENV_VARS))  # any key we know of, scrubbed
    secrets = [key for key in known if key != DUMMY_API_KEY]  # from errors and answers (the placeholder is none)
    password = urlsplit(base_url).password
    if password:
        secrets.append(password)

    def make_client() -> Any:
        return openai_chat_model(model=model, api_key=api_key, base_url=base_url, timeout_s=timeout_s)

    return LangChainChatBackend(
        make_client,
        public_url(base_url),
        model,
        retries=retries,
        backoff_s=backoff_s,
        fold_system=fold_system,
        cache=cache,
        default_params={"temperature": temperature, "max_tokens": max_tokens},
        max_tokens_in_extra_body=max_tokens_in_extra_body,
        timeout_s=timeout_s,
        secrets=secrets,
        grammar_dialect=grammar_dialect,
    )


def _from_config_file(path: Path, **overrides: Any) -> ChatBackend:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LLMError("config", f"cannot read the LLM config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise LLMError("config", f"the LLM config file {path} is not valid TOML: {exc}") from None
    table = data.get("llm")
    if not isinstance(table, dict):
        raise LLMError("config", f"the LLM config file {path} has no [llm] table")
    if "api_key" in table:
        raise LLMError(
            "config",
            f"{path}: do not write API keys into config files; put the key in an environment "
            "variable and name it with api_key_env",
        )
    known = {
        "base_url",
        "model",
        "api_key_env",
        "timeout_s",
        "max_tokens",
        "temperature",
        "retries",
        "fold_system",
        "spec",
        "grammar",
        *PRICE_KEYS,
    }
    unknown = sorted(set(table) - known)
    if unknown:
        raise LLMError(
            "config", f"{path}: unknown key(s) in [llm]: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    settings = dict(overrides)
    for key in ("timeout_s", "max_tokens", "temperature", "retries"):
        if key in table:
            settings[key] = table[key]
    if "spec" in table:  # e.g. spec = "local" or "replay:trace.jsonl"
        if set(table) - {"spec", "timeout_s", "max_tokens", "temperature", "retries"}:
            raise LLMError("config", f"{path}: 'spec' cannot be combined with base_url/model/api_key_env")
        return backend_from_spec(str(table["spec"]), **settings)
    dialect = table.get(
        "grammar", "json_schema" if public_url(table.get("base_url") or OPENAI_BASE_URL) == OPENAI_BASE_URL else "none"
    )
    from autonesy.agents.llm.guided import DIALECTS

    if dialect not in DIALECTS:
        raise LLMError("config", f"{path}: grammar = {dialect!r} is not one of {', '.join(DIALECTS)}")
    model = table.get("model")
    if not isinstance(model, str) or not model:
        raise LLMError("config", f'{path}: [llm] needs a model name (model = "...")')
    base_url = table.get("base_url") or OPENAI_BASE_URL
    is_openai = public_url(base_url) == OPENAI_BASE_URL
    key_env = table.get("api_key_env")
    if key_env:
        api_key = os.environ.get(str(key_env), "").strip()
        if not api_key:
            raise LLMError("config", f"{path}: the environment variable {key_env} (api_key_env) is not set")
    elif is_openai:
        openai_key = _key_from_env(("OPENAI_API_KEY",), None)
        if not openai_key:
            raise LLMError(
                "config", f"{path}: OpenAI's API needs a key: set OPENAI_API_KEY (or name a variable with api_key_env)"
            )
        api_key = openai_key
    else:
        api_key = _key_from_env(_keys_for(base_url), DUMMY_API_KEY) or DUMMY_API_KEY
    return openai_compatible_backend(
        base_url,
        model,
        api_key,
        timeout_s=float(settings["timeout_s"]),
        max_tokens=settings["max_tokens"],
        temperature=settings["temperature"],
        cache=settings["cache"],
        retries=int(settings["retries"]),
        backoff_s=settings["backoff_s"],
        max_tokens_in_extra_body=not is_openai,
        fold_system=bool(table.get("fold_system", False)),
        grammar_dialect=dialect,
    )


@provider("openai")
def openai_backend(spec: LLMSpec, settings: dict[str, Any]) -> ChatBackend:
    """``openai:MODEL``: OpenAI's API (or ``$OPENAI_BASE_URL``), its key from the environment."""
    base_url = env(OPENAI_BASE_URL_ENV) or OPENAI_BASE_URL
    names = ("OPENAI_API_KEY",) if urlsplit(base_url).hostname == OPENAI_HOST else ("AUTONESY_LLM_API_KEY",)
    api_key = _key_from_env(names, None)
    if not api_key:
        raise LLMError(
            "config",
            f"{spec} needs an API key: set the environment variable {names[0]}"
            + (
                ""
                if names[0] == "OPENAI_API_KEY"
                else f" (OPENAI_BASE_URL points to {public_url(base_url)}, not OpenAI, and OPENAI_API_KEY "
                "goes only to OpenAI)"
            ),
        )
    return openai_compatible_backend(
        base_url, spec.model, api_key, max_tokens_in_extra_body=False, grammar_dialect="json_schema", **settings
    )


@provider("http")
def server_backend(spec: LLMSpec, settings: dict[str, Any]) -> ChatBackend:
    """``http(s)://HOST:PORT/v1@MODEL``: any OpenAI-compatible server."""
    api_key = _key_from_env(_keys_for(spec.base_url), DUMMY_API_KEY) or DUMMY_API_KEY
    return openai_compatible_backend(spec.base_url, spec.model, api_key, max_tokens_in_extra_body=True, **settings)


@provider("config")
def config_file_backend(spec: LLMSpec, settings: dict[str, Any]) -> ChatBackend:
    """``PATH.toml``: the backend its ``[llm]`` table describes."""
    path = Path(spec.path)
    if not path.is_file():
        raise LLMError("config", f"the LLM config file {path} does not exist")
    return _from_config_file(path, **settings)
