"""Tseitin encoding of an expression tree into CNF over task variables 1..N plus fresh auxiliaries.

Every auxiliary is *defined* (a_g ↔ gate), so the models projected onto the task variables are
exactly the models of the expression — the property the metrics rely on. Structurally equal
sub-expressions share one auxiliary; top-level conjunctions are split into separate roots.
"""

from __future__ import annotations

from collections.abc import Iterable

from autonesy.tools.cnf import CNF
from autonesy.tools.formats.expr import Const, Expr, Op, Var


class _Encoder:
    def __init__(self, num_task_vars: int) -> None:
        self.n = num_task_vars
        self.top = num_task_vars
        self.clauses: list[tuple[int, ...]] = []
        self.cache: dict[Expr, int] = {}
        self.true_var: int | None = None

    def fresh(self) -> int:
        self.top += 1
        return self.top

    def literal(self, expr: Expr) -> int:
        if isinstance(expr, Var):
            if not 1 <= expr.index <= self.n:
                raise ValueError(f"variable index {expr.index} outside 1..{self.n}")
            return expr.index
        if isinstance(expr, Const):
            if self.true_var is None:
                self.true_var = self.fresh()
                self.clauses.append((self.true_var,))
            return self.true_var if expr.value else -self.true_var
        if expr.op == "not":
            return -self.literal(expr.args[0])
        if expr in self.cache:
            return self.cache[expr]
        lits = [self.literal(arg) for arg in expr.args]
        out = self.fresh()
        self._define(out, expr.op, lits)
        self.cache[expr] = out
        return out

    def _define(self, out: int, op: str, lits: list[int]) -> None:
        add = self.clauses.append
        if op == "and":
            add((out, *(-lit for lit in lits)))
            for lit in lits:
                add((-out, lit))
        elif op == "or":
            add((-out, *lits))
            for lit in lits:
                add((out, -lit))
        elif op == "implies":
            self._define(out, "or", [-lits[0], lits[1]])
        elif op == "iff":
            if len(lits) == 2:
                a, b = lits
                add((-out, -a, b)), add((-out, a, -b)), add((out, a, b)), add((out, -a, -b))
            else:  # all equal: (∧ lits) ∨ (∧ ¬lits)
                all_true, all_false = self.fresh(), self.fresh()
                self._define(all_true, "and", lits)
                self._define(all_false, "and", [-lit for lit in lits])
                self._define(out, "or", [all_true, all_false])
        elif op == "xor":
            acc = lits[0]
            for position, lit in enumerate(lits[1:], start=2):
                step = out if position == len(lits) else self.fresh()
                a, b = acc, lit
                add((-step, a, b)), add((-step, -a, -b)), add((step, -a, b)), add((step, a, -b))
                acc = step
            if len(lits) == 1:
                self._define(out, "and", [acc])
        else:
            raise ValueError(f"unknown operator {op!r}")


def _roots(expr: Expr) -> Iterable[Expr]:
    if isinstance(expr, Op) and expr.op == "and":
        for arg in expr.args:
            yield from _roots(arg)
    else:
        yield expr


def tseitin(exprs: Iterable[Expr], num_task_vars: int) -> CNF:
    """CNF of the conjunction of ``exprs``; clauses of plain literals are emitted without auxiliaries."""
    encoder = _Encoder(num_task_vars)
    for root in (r for expr in exprs for r in _roots(expr)):
        clause = _as_clause(root)
        if clause is not None:
            encoder.clauses.append(tuple(encoder.literal(lit) for lit in clause))
        else:
            encoder.clauses.append((encoder.literal(root),))
    return CNF(num_task_vars, tuple(encoder.clauses), encoder.top)


def _as_clause(expr: Expr) -> list[Expr] | None:
    """The root as one disjunction of (negated) variables, or None.

    Besides plain ORs of literals this recognises the shapes constraints are usually written in —
    ``NOT (a AND b)``, ``a IMPLIES b``, ``a AND b IMPLIES c OR d``, double negations — so that they
    become a single clause instead of an auxiliary per gate.
    """
    if isinstance(expr, Var):
        return [expr]
    if not isinstance(expr, Op):
        return None
    if expr.op == "or":
        return _concat(_as_clause(arg) for arg in expr.args)
    if expr.op == "implies":
        return _concat([_as_clause(Op("not", (expr.args[0],))), _as_clause(expr.args[1])])
    if expr.op == "not":
        inner = expr.args[0]
        if isinstance(inner, Var):
            return [expr]
        if isinstance(inner, Op) and inner.op == "not":
            return _as_clause(inner.args[0])
        if isinstance(inner, Op) and inner.op == "and":
            return _concat(_as_clause(Op("not", (arg,))) for arg in inner.args)
    return None


def _concat(parts: Iterable[list[Expr] | None]) -> list[Expr] | None:
    out: list[Expr] = []
    for part in parts:
        if part is None:
            return None
        out.extend(part)
    return out
