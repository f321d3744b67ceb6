"""Exact projected model counting by variable elimination over truth tables (numpy), for formulas of small width.

Every clause is a 0/1 table over its variables; eliminating a variable multiplies the tables that
mention it and sums it out. An auxiliary is existential (the sum clipped to 1) unless the task
variables define it (Padoa's test: no two models agree on the task variables and differ on it): a
defined auxiliary has one value per projected model, so it is summed like a task variable, in any
order. The undefined ones go first, while every table is still 0/1 and clipping is the ∃.

The plan (order and table sizes) is worked out on scopes before any table exists, so the cost is
known before the route starts: a plan over its budget is refused, never begun. That is what lets it
run in the counting process without a child to kill (ground truths of the catalogue: 1 ms where a
forked counter takes 20–100 ms). The elimination order is greedy: the variable whose new table is
smallest, undefined auxiliaries first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from pysat.solvers import Solver

from autonesy.tools.cnf import CNF

DEFINABILITY_CONFLICTS = 100  # per auxiliary (a Tseitin definition takes a few), and ...
DEFINABILITY_MAX_S = 0.01  # ... in all: an auxiliary not shown defined in time stays existential (always correct)
SECONDS_PER_ENTRY = 5e-9  # one entry of a product table (int64), measured 2-8 ns on 2 loaded cores
INT64_SUMMED_VARS = 62  # summed variables up to this: every entry fits in int64; above, Python integers ...
PYTHON_INT_ENTRY_COST = 20  # ... which cost about this many int64 entries each


class EliminationTooCostly(RuntimeError):
    """The plan's predicted cost is over the budget given; the message says by how much."""


@dataclass(frozen=True)
class EliminationPlan:
    """The order to eliminate the variables of ``cnf``'s clauses in, and what it will cost."""

    cnf: CNF
    order: tuple[int, ...]
    existential: frozenset[int]
    largest_table: int
    entries: int
    """Entries of every product table the elimination builds (in int64 equivalents): its cost,
    SECONDS_PER_ENTRY each."""


def defined_auxiliaries(
    cnf: CNF, conflicts: int = DEFINABILITY_CONFLICTS, time_limit_s: float = DEFINABILITY_MAX_S
) -> frozenset[int]:
    """The auxiliaries that the task variables determine on every model (Padoa: F(X,Y) ∧ F(X,Y') ∧ y ∧ ¬y'
    unsatisfiable). One whose test needs more than ``conflicts`` conflicts, or comes after
    ``time_limit_s`` has passed, is left out."""
    n, shift = cnf.num_task_vars, cnf.num_aux_vars

    def copy(lit: int) -> int:
        return lit if abs(lit) <= n else lit + shift if lit > 0 else lit - shift

    mentioned = sorted({abs(lit) for clause in cnf.clauses for lit in clause if abs(lit) > n})
    if not mentioned:
        return frozenset()
    clauses = [list(c) for c in cnf.clauses]
    deadline = time.monotonic() + time_limit_s
    with Solver(name="glucose4", bootstrap_with=clauses + [[copy(lit) for lit in c] for c in clauses]) as solver:
        defined = []
        for var in mentioned:
            if time.monotonic() > deadline:
                break
            solver.conf_budget(conflicts)
            if solver.solve_limited(assumptions=[var, -copy(var)]) is False:
                defined.append(var)
    return frozenset(defined)


def plan_elimination(cnf: CNF, max_entries: int) -> EliminationPlan:
    """The greedy order and its table sizes; raises :class:`EliminationTooCostly` as soon as the product
    tables built so far hold more than ``max_entries`` entries in all."""
    n = cnf.num_task_vars
    scopes = {frozenset(abs(lit) for lit in clause) for clause in _clauses(cnf)}
    auxiliaries = {var for scope in scopes for var in scope if var > n}
    existential = auxiliaries - defined_auxiliaries(cnf)
    weight = 1 if _summed_vars(cnf, auxiliaries - existential) <= INT64_SUMMED_VARS else PYTHON_INT_ENTRY_COST
    holding: dict[int, set[frozenset[int]]] = {}
    for scope in scopes:
        for var in scope:
            holding.setdefault(var, set()).add(scope)
    unions = {var: frozenset().union(*held) for var, held in holding.items()}  # kept up to date as it goes
    order: list[int] = []
    largest, entries = 1, 0
    while holding:
        candidates = [var for var in holding if var in existential] or list(holding)
        var = min(candidates, key=lambda v: (len(unions[v]), len(holding[v]), v))
        union, merged = unions.pop(var), holding.pop(var)
        size = 1 << len(union)
        largest, entries = max(largest, size), entries + size * len(merged) * weight
        if entries > max_entries:
            raise EliminationTooCostly(
                f"variable elimination: over {max_entries} table entries after {len(order)} of "
                f"{len(order) + len(holding) + 1} variables (a table of {len(union)} variables)"
            )
        rest = union - {var}
        for other in rest:
            holding[other] -= merged
            holding[other].add(rest)
            unions[other] = frozenset().union(*holding[other])
        order.append(var)
    return EliminationPlan(cnf, tuple(order), frozenset(existential), largest, entries)


def count_by_elimination(plan: EliminationPlan) -> int:
    """The projected model count of ``plan.cnf``, eliminating in ``plan.order``."""
    cnf = plan.cnf
    n = cnf.num_task_vars
    clauses = _clauses(cnf)
    if any(not clause for clause in clauses):
        return 0
    auxiliaries = {abs(lit) for c in clauses for lit in c if abs(lit) > n}
    dtype = np.int64 if _summed_vars(cnf, auxiliaries - plan.existential) <= INT64_SUMMED_VARS else object
    tables: dict[tuple[int, ...], np.ndarray] = {}
    for clause in clauses:
        scope = tuple(sorted({abs(lit) for lit in clause}))
        table = tables.get(scope)
        if table is None:
            table = tables[scope] = np.ones((2,) * len(scope), dtype=dtype)
        sign = {abs(lit): lit > 0 for lit in clause}
        table[tuple(0 if sign[var] else 1 for var in scope)] = 0  # the one assignment that falsifies it
    result = 1
    for var in plan.order:
        mine = [scope for scope in tables if var in scope]
        union = tuple(sorted(set().union(*mine)))
        axis = {v: i for i, v in enumerate(union)}
        product = None
        for scope in mine:
            table = tables.pop(scope)
            shape = [1] * len(union)
            for v in scope:
                shape[axis[v]] = 2
            table = table.reshape(shape)
            product = table if product is None else product * table
        assert product is not None
        product = np.broadcast_to(product, (2,) * len(union))
        reduced = product.sum(axis=axis[var])
        if var in plan.existential:
            reduced = np.minimum(reduced, 1)
        rest = tuple(v for v in union if v != var)
        if not rest:
            result *= int(reduced)
        elif rest in tables:
            tables[rest] = tables[rest] * reduced
        else:
            tables[rest] = np.asarray(reduced, dtype=dtype)
    mentioned = {abs(lit) for clause in clauses for lit in clause}
    return result << sum(1 for var in cnf.task_vars if var not in mentioned)


def _summed_vars(cnf: CNF, defined: set[int] | frozenset[int]) -> int:
    """Variables summed out: a table entry counts assignments of them, at most 2 to this power."""
    return cnf.num_task_vars + len(defined)


def _clauses(cnf: CNF) -> list[frozenset[int]]:
    """The clauses as literal sets, tautologies left out (always true, they change no count)."""
    sets = [frozenset(clause) for clause in cnf.clauses]
    return [clause for clause in sets if not any(-lit in clause for lit in clause)]
