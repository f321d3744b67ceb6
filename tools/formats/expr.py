"""A tiny Boolean expression tree: what the NAT and SymPy front-ends produce before Tseitin."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Var:
    """A task variable by its DIMACS index."""

    index: int  # DIMACS index of a task variable, 1..N


@dataclass(frozen=True)
class Const:
    """True or false."""

    value: bool


@dataclass(frozen=True)
class Op:
    """``op`` is one of: not, and, or, implies, iff, xor. ``not`` and ``implies`` have fixed arity
    (1 and 2); ``and``/``or``/``xor``/``iff`` take two or more operands (``iff`` of many means all
    equal, ``xor`` of many means an odd number true)."""

    op: str
    args: tuple[Expr, ...]

    def __post_init__(self) -> None:
        arity = {"not": (1, 1), "implies": (2, 2)}.get(self.op, (1, None))
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}")
        low, high = arity
        if len(self.args) < low or (high is not None and len(self.args) > high):
            raise ValueError(f"operator {self.op!r} cannot take {len(self.args)} operands")


Expr = Var | Const | Op
OPERATORS = ("not", "and", "or", "implies", "iff", "xor")


def evaluate(expr: Expr, assignment: dict[int, bool]) -> bool:
    """Reference semantics (used by tests as the brute-force side)."""
    if isinstance(expr, Var):
        return assignment[expr.index]
    if isinstance(expr, Const):
        return expr.value
    values = [evaluate(arg, assignment) for arg in expr.args]
    if expr.op == "not":
        return not values[0]
    if expr.op == "and":
        return all(values)
    if expr.op == "or":
        return any(values)
    if expr.op == "implies":
        return (not values[0]) or values[1]
    if expr.op == "iff":
        return all(v == values[0] for v in values)
    return sum(values) % 2 == 1


# Constructors for hand-written expressions (reference formulas, tests). n-ary ``and``/``or`` of one
# operand collapse to it; of none, to the neutral constant.


def neg(arg: Expr) -> Expr:
    """Negation."""
    return Op("not", (arg,))


def conj(*args: Expr) -> Expr:
    """Conjunction; none is true, one stays itself."""
    if not args:
        return Const(True)
    return args[0] if len(args) == 1 else Op("and", tuple(args))


def disj(*args: Expr) -> Expr:
    """Disjunction; none is false, one stays itself."""
    if not args:
        return Const(False)
    return args[0] if len(args) == 1 else Op("or", tuple(args))


def implies(antecedent: Expr, consequent: Expr) -> Expr:
    """Implication."""
    return Op("implies", (antecedent, consequent))


def iff(left: Expr, right: Expr) -> Expr:
    """Equivalence."""
    return Op("iff", (left, right))


def exactly_one(args: Sequence[Expr]) -> Expr:
    """Exactly one of ``args``: their disjunction and ``NOT (x AND y)`` for every pair, conjoined."""
    args = list(args)
    return conj(disj(*args), *(neg(conj(x, y)) for i, x in enumerate(args) for y in args[i + 1 :]))


def at_least(k: int, args: Sequence[Expr]) -> Expr:
    """At least ``k`` of ``args`` true: the disjunction, over every ``k``-subset, of its conjunction."""
    from itertools import combinations

    return disj(*(conj(*subset) for subset in combinations(list(args), k))) if k > 0 else Const(True)


def tree_size(expr: Expr) -> int:
    """Nodes of the expression written out as a tree (shared sub-expressions counted each time)."""
    if isinstance(expr, Op):
        return 1 + sum(tree_size(arg) for arg in expr.args)
    return 1
