"""The ``--llm`` spec, parsed once: the string a user gives becomes an ``LLMSpec`` value that every
layer carries (the backend registry ``agents/llm/registry.py``, the attempt, the sweep, the
verifier, the results rows). Accepted forms::

    openai:MODEL                      OpenAI's API (kind ``openai``)
    http(s)://HOST:PORT/v1@MODEL      any OpenAI-compatible server (kind ``http``)
    local | local:PATH.gguf           the embedded smoke-test model (kind ``local``)
    replay:TRACE.jsonl                answers recorded in a trace (kind ``replay``)
    PATH.toml                         a config file with an [llm] table (kind ``config``)
    mypkg/kind:ARGUMENT               a plugin's provider (kind ``mypkg/kind``, the argument in ``path``;
                                      ``kind:ARGUMENT`` for one a script registered)

Lives in tools/ because what reads results (report, viewer) shows specs too, without loading a
backend. The text may hold a password in an endpoint URL: :attr:`LLMSpec.redacted` is what may be
shown or written. The report's costs read the token prices a TOML config names (:func:`llm_prices`).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from autonesy.tools import registry
from autonesy.tools.config import DEFAULT_LLM, LLM_ENV, env
from autonesy.tools.errors import AutonesyError

ACCEPTED_FORMS = (
    "'openai:MODEL', 'http(s)://HOST:PORT/v1@MODEL', 'local', 'local:PATH.gguf', "
    "'replay:TRACE.jsonl', 'mypkg/kind:ARGUMENT' (a plugin's provider), or the path of a TOML file with an [llm] table"
)
PLUGIN_KIND = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")  # a plugin's provider (tools/registry.py)


class LLMSpecError(AutonesyError, ValueError):
    """A ``--llm`` string that names no LLM (empty, malformed, or an unknown form)."""


@dataclass(frozen=True)
class LLMSpec:
    """One parsed ``--llm`` spec: its ``kind`` (the provider registered for it, ``tools/registry.py``) and
    the parts that kind has.
    ``str(spec)`` is the text as given (a URL password included: show ``redacted``)."""

    kind: str
    text: str
    model: str = ""  # openai, http
    base_url: str = ""  # http: the endpoint before '@MODEL'
    path: str = ""  # local: a GGUF file; replay: a trace; config: a TOML file; a plugin's: its argument

    @classmethod
    def parse(cls, text: str) -> LLMSpec:
        """The spec ``text`` names; ``LLMSpecError`` with the accepted forms otherwise."""
        text = (text or "").strip()
        if not text:
            raise LLMSpecError(f"empty LLM spec; accepted forms: {ACCEPTED_FORMS}")
        if text.startswith("openai:"):
            model = text[len("openai:") :].strip()
            if not model:
                raise LLMSpecError("'openai:' needs a model name, e.g. openai:gpt-4o-mini")
            return cls("openai", text, model=model)
        if text.startswith(("http://", "https://")):
            if "@" not in text.split("://", 1)[1]:
                raise LLMSpecError(f"{public_url(text)!r} names no model: write it as http://HOST:PORT/v1@MODEL")
            base_url, model = text.rsplit("@", 1)
            return cls("http", text, model=model.strip(), base_url=base_url)
        if text == "local" or text.startswith("local:"):
            return cls("local", text, path=text[len("local:") :].strip() if text.startswith("local:") else "")
        if text.startswith("replay:"):
            path = text[len("replay:") :].strip()
            if not path:
                raise LLMSpecError("'replay:' needs the path of a trace (JSONL), e.g. replay:runs/x/trace.jsonl")
            return cls("replay", text, path=path)
        kind, colon, path = text.partition(":")
        if colon and (PLUGIN_KIND.fullmatch(kind) or registry.registered("provider", kind)):
            return cls(kind, text, path=path.strip())  # a plugin's provider, or one a script registered
        if text == "expert":
            raise LLMSpecError("'expert' is not an LLM backend: it is a policy (the task's reference formalization)")
        file = Path(text)
        try:
            file = file.expanduser()
        except RuntimeError:  # '~user' of no such user: the text is not a file
            pass
        if file.suffix.lower() == ".toml" or file.is_file():
            return cls("config", text, path=str(file))
        raise LLMSpecError(f"unknown LLM spec {text!r}; accepted forms: {ACCEPTED_FORMS}")

    def __str__(self) -> str:
        return self.text

    @property
    def redacted(self) -> str:
        """The spec as it may be shown or written (a password in an endpoint URL as ``***``)."""
        return redact_spec(self.text) or ""

    @property
    def model_name(self) -> str:
        """The model part (after '@' or 'openai:'), so results group attempts by model whatever served it;
        the whole spec for kinds without one."""
        return self.model or self.text

    @property
    def endpoint_group(self) -> str:
        """The endpoint a sweep limits concurrency on: the server URL, 'openai', else the spec itself."""
        if self.kind == "http":
            return self.base_url.rstrip("/")
        return "openai" if self.kind == "openai" else self.text


def default_llm() -> LLMSpec:
    """``$AUTONESY_LLM`` when set, else ``local`` (the embedded smoke-test model), parsed."""
    return LLMSpec.parse(env(LLM_ENV) or DEFAULT_LLM)


def redact_spec(spec: str | None) -> str | None:
    """The spec as it may be shown or written: a password in an endpoint URL becomes ``***``."""
    if not spec or "://" not in spec:
        return spec
    scheme, rest = spec.split("://", 1)
    authority, slash, tail = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return spec
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}{slash}{tail}"


def public_url(url: str) -> str:
    """The URL without user info, query or fragment (what may appear in labels and traces)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


PRICE_KEYS = ("prompt_price_per_mtok", "completion_price_per_mtok")


@dataclass(frozen=True)
class LLMPrices:
    """What an LLM's tokens cost, per million (the ``[llm]`` table's optional price keys), for the report's costs."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        """The cost of that many tokens."""
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


def llm_prices(spec: str) -> LLMPrices | None:
    """The prices an LLM spec's TOML config names (both keys, numbers ≥ 0); None for any other spec, an unreadable
    file or a config without them (a report then shows no cost, never a guessed one)."""
    path = Path(spec)
    if path.suffix.lower() != ".toml":
        return None
    from autonesy.tools import safe_files  # here: the command line imports this module at start-up

    try:  # a spec in a received results file names the path: a regular file only, small, no link followed
        table = tomllib.loads(safe_files.read_text(path, limit=1 << 20)).get("llm")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(table, dict):
        return None
    found = [table.get(key) for key in PRICE_KEYS]
    values = [float(v) for v in found if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(values) != len(PRICE_KEYS) or not all(math.isfinite(v) and v >= 0 for v in values):
        return None
    return LLMPrices(values[0], values[1])
