"""What the three Python-program formats (PySAT, CPMpy, SymPy) share: running in the sandbox and
turning its outcome into a :class:`FormatError` an LLM can act on."""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autonesy.tools.formats.base import FormatError
from autonesy.tools.sandbox import SandboxError, SandboxLimits, SandboxResult, prewarm, run_program

# Defaults for LLM programs that build a formula: generous for the largest tasks, short enough
# that a runaway program costs little. Importing cpmpy alone takes ~1 s of the budget.
DEFAULT_LIMITS = SandboxLimits(cpu_seconds=30.0, wall_seconds=40.0)

# Keep one sandbox per format started ahead of need (its imports done): repeated checks skip the
# start-up cost (about a second for cpmpy). Set to False to start every sandbox cold.
PREWARM = True

# Cheap standard modules an LLM program commonly imports.
COMMON_MODULES = ("itertools", "math", "functools", "collections", "operator")


class SandboxUnavailable(SandboxError):
    """The sandbox itself failed to run (not the program's fault): report it, do not repair."""


def warm_up(preload: Sequence[str]) -> None:
    """Start the format's sandbox ahead of need (a no-op when PREWARM is off)."""
    if PREWARM:
        prewarm((*COMMON_MODULES, *preload))


def limits_from(limits: SandboxLimits | None, overrides: Mapping[str, Any]) -> SandboxLimits:
    base = limits if limits is not None else DEFAULT_LIMITS
    unknown = set(overrides) - {f.name for f in dataclasses.fields(SandboxLimits)}
    if unknown:
        raise TypeError(f"unknown sandbox limits: {', '.join(sorted(unknown))}")
    return dataclasses.replace(base, **overrides)


def check_names(names: Sequence[str], reserved: Iterable[str], fmt: str) -> list[str]:
    """Task variable names must be identifiers that do not hide what the format pre-binds."""
    names = list(names)
    if not names:
        raise ValueError("no task variables")
    if len(set(names)) != len(names):
        raise ValueError("duplicate task variable names")
    reserved = set(reserved)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"task variable {name!r} is not a Python identifier; the {fmt} format binds it as a name")
        if name in reserved or name.startswith("__"):
            raise ValueError(f"task variable {name!r} clashes with a name the {fmt} format pre-binds")
    return names


def run_format_program(
    source: str,
    names: Sequence[str],
    *,
    setup: str,
    collect: str,
    preload: Sequence[str],
    inputs: Mapping[str, Any],
    limits: SandboxLimits,
) -> Any:
    """Run the program; return what ``collect`` produced, or raise FormatError / SandboxUnavailable."""
    if not isinstance(source, str) or not source.strip():
        raise FormatError("no_block", "the program is empty")
    result = run_program(
        source,
        inputs=inputs,
        setup=setup,
        collect=collect,
        preload=(*COMMON_MODULES, *preload),
        limits=limits,
        prewarm=PREWARM,
    )
    if result.ok:
        return result.result
    raise error_from(result, names)


def error_from(result: SandboxResult, names: Sequence[str]) -> Exception:
    kind = result.error_kind or "runtime"
    if kind == "internal":
        return SandboxUnavailable(result.message)
    message = result.message
    if kind == "runtime" and result.exception == "NameError" and result.name:
        message = (
            f"{message}\n`{result.name}` is neither a task variable nor a pre-bound name. "
            f"The task variables are: {names_preview(list(names))}."
        )
        kind = "unknown_variable"
    return FormatError(kind, message, result.line)


def names_preview(names: Sequence[str], limit: int = 40) -> str:
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
