"""Output formats: an LLM answer → CNF over the task variables 1..N (auxiliaries > N), or an error.

:func:`convert` is the one entry point the pipeline uses (the ``check_syntax`` and ``autofix`` steps
of docs/architecture.md §2): it extracts the ``<cnf>`` block (:mod:`.extract`), hands it to the format's
front-end, and on a :class:`FormatError` applies :mod:`.autofix` and tries once more. It never raises
:class:`FormatError`; the outcome is a :class:`Conversion`.

Front-ends are modules exposing ``parse(source: str, names: Sequence[str], **limits) -> CNF`` that
raise :class:`FormatError`; they are imported lazily (the Python formats pull in the sandbox).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

from autonesy.tools.formats.base import FRONT_ENDS, Conversion, FormatError
from autonesy.tools.formats.extract import extract
from autonesy.tools.options import FORMATS

# Failures no autofix can cure: retrying would only run the program (and its limits) again.
NOT_AUTOFIXABLE = frozenset({"timeout", "resource", "forbidden"})

__all__ = ["FORMATS", "FRONT_ENDS", "Conversion", "FormatError", "convert", "front_end"]


def front_end(fmt: str) -> ModuleType:
    """The module that parses ``fmt``; ``ValueError`` for an unknown format."""
    if fmt not in FRONT_ENDS:
        raise ValueError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    return importlib.import_module(FRONT_ENDS[fmt])


def convert(answer: str, fmt: str, names: Sequence[str], *, autofix: bool = True, **limits) -> Conversion:
    """Turn an LLM answer into CNF in format ``fmt`` over the task variables ``names``.

    Steps: extract the ``<cnf>`` block (its tolerances — last of several blocks, unterminated block,
    fences — are recorded in ``autofixes`` by name whatever ``autofix`` says); parse it; if that
    fails and ``autofix`` is on, apply :func:`.autofix.autofix` and, if it changed anything, parse
    once more (not after a ``timeout``, ``resource`` or ``forbidden`` error: no autofix cures those).
    When the retry also fails, the result carries the retry's error and the fixed source (the fixes
    are kept). A missing block gives ``source == ""``. An error about an answer with several blocks
    names the block read; a parsed formula carries the :mod:`.lint` warnings.

    ``limits`` go to the front-end (e.g. ``wall_seconds=5`` for the Python formats, ``max_var``):
    DIMACS and NAT ignore limits they do not know, the Python formats reject them (``TypeError``).
    ``max_chars`` bounds the answer's size. Errors that are not :class:`FormatError` (bugs, unusable
    task names, unknown limits) propagate.
    """
    module = front_end(fmt)
    max_chars = limits.pop("max_chars", None)
    try:
        extraction = extract(answer) if max_chars is None else extract(answer, max_chars=max_chars)
    except FormatError as error:
        return Conversion(fmt, "", error=error)
    source, notes = extraction.source, extraction.notes
    try:
        return _parsed(fmt, source, module.parse(source, names, **limits), notes, names)
    except FormatError as error:
        first = _located(error, extraction.where)
    if not autofix or first.kind in NOT_AUTOFIXABLE:
        return Conversion(fmt, source, error=first, autofixes=notes)

    from autonesy.tools.formats.autofix import autofix as apply_autofix

    fixed, fixes = apply_autofix(source, fmt, bound=names)
    if not fixes or fixed == source:
        return Conversion(fmt, source, error=first, autofixes=notes)
    applied = notes + tuple(fixes)
    try:
        return _parsed(fmt, fixed, module.parse(fixed, names, **limits), applied, names)
    except FormatError as error:
        return Conversion(fmt, fixed, error=_located(error, extraction.where), autofixes=applied)


def _parsed(fmt: str, source: str, cnf, autofixes: tuple[str, ...], names: Sequence[str]) -> Conversion:
    from autonesy.tools.formats.lint import lint

    return Conversion(
        fmt, source, cnf=cnf, autofixes=autofixes, warnings=tuple(str(w) for w in lint(source, fmt, cnf, names))
    )


def _located(error: FormatError, where: str) -> FormatError:
    """The error, saying which <cnf> block it is about when the answer held several."""
    if not where:
        return error
    return FormatError(
        error.kind,
        f"{error.message}\n(This is about the formula in {where}: the last <cnf> "
        "block that is not empty or a placeholder.)",
        error.line,
    )
