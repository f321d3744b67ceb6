"""A task's reference formalization written as an answer in any output format (the ``expert`` policy).

:func:`reference_formalization` returns a full answer text, its formula in a ``<cnf>`` block, that
:func:`autonesy.tools.formats.convert` turns into a CNF equivalent to the task's ground truth on the
task variables (F1 = 1, relation ``equal``). Where the formula comes from:

- ``dimacs``, ``pysat``, ``cpmpy``: the ground-truth CNF itself, auxiliaries included;
- ``nat``, ``sympy`` (no auxiliary variables): the ground truth when it has no auxiliaries, else the
  task's ``rule_list()`` (an auxiliary-free CNF of its published rules), else its
  ``reference_expression()`` (an auxiliary-free expression tree written from the rule's meaning).

A task offering none of these for NAT/SymPy raises :class:`NoReference`. Deriving an auxiliary-free
CNF mechanically (projecting the auxiliaries out) is not attempted: it blows up (≈1M clauses for
kand-logic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autonesy.tools.formats.render import render_cnf, render_expression
from autonesy.tools.options import FORMATS

if TYPE_CHECKING:
    from autonesy.tasks.task import Task

AUX_FREE_FORMATS = ("nat", "sympy")

__all__ = ["NoReference", "reference_formalization", "reference_source", "reference_origin"]


class NoReference(ValueError):
    """The task has no reference formalization that the format can express."""


def reference_origin(task: Task, fmt: str) -> str:
    """Which of the task's formulas the reference in ``fmt`` is written from: ``ground_truth``,
    ``rule_list`` or ``reference_expression``; :class:`NoReference` when none applies."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    if not task.has_ground_truth:
        raise NoReference(f"task {task.name!r} has no ground truth, so it has no reference formalization")
    if fmt not in AUX_FREE_FORMATS or task.ground_truth.num_aux_vars == 0:
        return "ground_truth"
    if task.rule_list is not None:
        return "rule_list"
    if task.reference_expression is not None:
        return "reference_expression"
    raise NoReference(
        f"task {task.name!r}: its ground truth uses {task.ground_truth.num_aux_vars} auxiliary variables, which "
        f"{fmt} cannot express, and the task gives neither a rule_list nor a reference_expression "
        "(an auxiliary-free form of its constraint)"
    )


def reference_source(task: Task, fmt: str) -> str:
    """The reference formula in ``fmt``: the content of the ``<cnf>`` block."""
    origin = reference_origin(task, fmt)
    if origin == "ground_truth":
        return render_cnf(task.ground_truth, task.names, fmt)
    if origin == "rule_list" and task.rule_list is not None:
        rules = task.rule_list()
        if rules.num_aux_vars:
            raise NoReference(f"task {task.name!r}: its rule_list uses auxiliary variables, which {fmt} cannot express")
        return render_cnf(rules, task.names, fmt)
    if task.reference_expression is None:  # reference_origin names only a formula the task has
        raise NoReference(f"task {task.name!r} has no reference formula in {fmt}")
    return render_expression(task.reference_expression(), task.names, fmt)


_ORIGIN_TEXT = {
    "ground_truth": "the ground-truth formula",
    "rule_list": "the task's published rules",
    "reference_expression": "the constraint written without auxiliary variables",
}


def reference_formalization(task: Task, fmt: str) -> str:
    """A full answer (a sentence, then the formula in a ``<cnf>`` block) holding the task's reference
    formalization in ``fmt``; :class:`NoReference` when the task has none that ``fmt`` can express."""
    origin = reference_origin(task, fmt)
    source = reference_source(task, fmt)
    return (
        f"Reference formalization of task {task.name!r} in {fmt} ({_ORIGIN_TEXT[origin]}).\n"
        f"<cnf>\n{source.rstrip()}\n</cnf>\n"
    )
