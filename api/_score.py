"""Scoring a formula against a task's ground truth by exact model counting: what ``score`` prints."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autonesy.tools.errors import AutonesyError
from autonesy.tools.metrics import FormulaScore

if TYPE_CHECKING:
    from autonesy.tasks.task import Task
    from autonesy.tools.cnf import CNF
    from autonesy.tools.formats.base import Conversion


class FormulaError(AutonesyError, ValueError):
    """A formula that cannot be read or scored as asked: not a formula in its format over the task's
    variables, an unreadable file, an unknown format or counting method (the message says which)."""


@dataclass(frozen=True)
class Score(FormulaScore):
    """A formula against the task's ground truth (the counts and scores of ``FormulaScore``), the
    task and format it was read in, the autofixes its reading needed, and the formula itself as CNF
    over the task's variables (what ``SemanticLoss`` and ``SPL`` are built from)."""

    task: str
    format: str
    autofixes: tuple[str, ...]
    formula: CNF = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The score as ``autonesy-agent score --json`` prints it (the formula left out)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "formula"}
        return {**data, "counts": {k: dict(v) for k, v in self.counts.items()}, "autofixes": list(self.autofixes)}


def read_answer(answer: str | os.PathLike[str], task: Task, fmt: str) -> Conversion:
    """``answer`` (the text, or a file holding it) converted to CNF over ``task``'s variables, with or
    without a ``<cnf>`` block; a ``FormulaError`` says why it is not one."""
    from autonesy.tools.formats import convert
    from autonesy.tools.options import FORMATS

    if fmt not in FORMATS:
        raise FormulaError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if isinstance(answer, str):
        where, text = "the answer", answer
    else:
        where = os.fspath(answer)
        try:
            text = Path(where).read_text(encoding="utf-8")  # a file you name: a link or a pipe (<(…)) is fine
        except (OSError, UnicodeDecodeError) as error:
            raise FormulaError(f"{where}: cannot read it: {error}") from None
    bare = "<cnf" not in text.lower()
    if bare:  # a bare formula: the whole text is the block
        text = f"<cnf>\n{text}\n</cnf>"
    conversion = convert(text, fmt, task.names)
    if conversion.error is not None:
        prefix = f"no <cnf> block, and the whole text is not a {fmt} formula either: " if bare else ""
        raise FormulaError(f"{where}: {prefix}{conversion.error}")
    return conversion


def score(
    answer: str | os.PathLike[str],
    *,
    task: Task | str | os.PathLike[str],
    format: str,
    count: str = "auto",
) -> Score:
    """Score a formula against the task's ground truth by exact model counting (what ``score`` prints).

    Args:
        answer: the formula's text, or a ``pathlib.Path`` to a file holding it, with or without a
            ``<cnf>`` block (a bare formula is read whole).
        task: the task (loaded, or its name or file).
        format: the formula's format: ``dimacs``, ``nat``, ``pysat``, ``cpmpy`` or ``sympy``.
        count: the counting method: ``auto`` (races the exact counters), ``enumeration``, ``sdd``,
            ``ganak`` or ``approxmc``.

    Returns:
        TP/FP/FN/TN over the task's variables, precision, recall, F1, the relation to the ground
        truth, MC-R, how the counts were made, and the formula as CNF.

    Raises:
        FormulaError: the answer is not a formula in that format over the task's variables.

    Examples:
        >>> import autonesy
        >>> names = autonesy.load_task("fashion").names  # exactly one of its 10 classes holds
        >>> s = autonesy.score(" OR ".join(names), task="fashion", format="nat")  # at least one: 2^10 - 1 models
        >>> s.relation, s.tp, s.fp, s.fn, s.recall
        ('permissive', 10, 1013, 0, 1.0)
    """
    from autonesy._tasks import task_of
    from autonesy.tools.metrics import score_formula
    from autonesy.tools.options import COUNT_METHODS

    if count not in COUNT_METHODS:
        raise FormulaError(f"unknown counting method {count!r}; choose one of {', '.join(COUNT_METHODS)}")
    loaded = task_of(task)
    conversion = read_answer(answer, loaded, format)
    assert conversion.cnf is not None  # read_answer raised otherwise
    result = score_formula(conversion.cnf, loaded.ground_truth, count)
    return Score(
        **{f.name: getattr(result, f.name) for f in fields(FormulaScore)},
        task=loaded.name,
        format=format,
        autofixes=tuple(conversion.autofixes),
        formula=conversion.cnf,
    )
