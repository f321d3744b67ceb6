"""autonesy: LLM agents that formalize natural-language constraints into CNF, score them against an
expert formula by model counting, and train neuro-symbolic predictors with them — the Python API.

Importing ``autonesy`` loads nothing heavy (no torch, LangGraph, LangChain or Ray): each public name
is imported from its private module the first time it is used.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'autonesy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
