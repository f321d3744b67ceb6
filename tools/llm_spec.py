"""The ``--llm`` spec as what reads results needs it: the text that may be shown or written (a password in an
endpoint URL redacted), and the token prices a TOML config names (for the report's costs).

Lives in tools/ so that what reads results (report, viewer) can show a spec without loading the LLM
backends; how a spec becomes a backend is ``agents/llm/spec.py``.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from autonesy.tools import safe_files


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


PRICE_KEYS = ("prompt_price_per_mtok", "completion_price_per_mtok")


@dataclass(frozen=True)
class LLMPrices:
    """What an LLM's tokens cost, per million (the ``[llm]`` table's optional price keys), for the report's costs."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of that many tokens."""
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / 1e6


def llm_prices(spec: str) -> LLMPrices | None:
    """The prices an LLM spec's TOML config names (both keys, numbers ≥ 0); None for any other spec, an unreadable
    file or a config without them (a report then shows no cost, never a guessed one)."""
    path = Path(spec)
    if path.suffix.lower() != ".toml":
        return None
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
