"""Exact projected model count by a forward dynamic programme whose states are residual formulas.

The projected count is Σ over task assignments of ∃ auxiliaries. Variables are visited in
:func:`~autonesy.tools.compile.anchored_order` (task variable i, then the auxiliaries that hang on it):
a task variable splits every state in two (its literal assigned), a clause joins once its last
variable has been visited, and a variable leaves once its last clause has joined — a task variable by
dropping its literal (summing over it), an auxiliary by resolution (exact ∃). A state is what a
partial assignment leaves for the future: the literals unit propagation forced on live variables and
the clauses still open among them. Two prefixes with the same state have the same completions, so a
state keeps one count for all of them.

It is built for counters: a sequential counter's state is the value counted so far, so an exactly-k
of n has at most k + 1 states per step and costs O(n·k) steps (exactly-100 of 200, 20,200
variables: about 12 s of CPU; Ganak and every SDD route ran out of 60 s). The states' number and size
are its budget: past ``max_states`` states, a residual of over ``max_residual`` clauses or the time
limit it gives up with :class:`StateBudgetExceeded`, so a formula without that structure costs little.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import anchored_order
from autonesy.tools.onehot_count import StateBudgetExceeded

MIN_STATES = 2_000  # the state budget: at least this many,
STATES_PER_TASK_VARIABLE = 16  # or this many per task variable (a sequential counter needs k + 1 ≤ N + 1),
MAX_STATES = 100_000  # and never more: a state holds up to hundreds of literals, and N comes from the formula
DEFAULT_MAX_RESIDUAL = 2_000  # clauses open in one state: resolution that grows past this gives up

State = tuple[frozenset[int], frozenset[frozenset[int]]]


class _Conflict(Exception):
    """A state has no completion (propagation or resolution derived the empty clause)."""


def count_by_frontier(
    cnf: CNF,
    time_limit_s: float | None = None,
    max_states: int | None = None,
    max_residual: int = DEFAULT_MAX_RESIDUAL,
) -> int:
    """The number of models of ``cnf`` projected on its task variables (exact).

    Raises :class:`StateBudgetExceeded` past ``max_states`` states (default: ``STATES_PER_TASK_VARIABLE``
    per task variable, at least ``MIN_STATES``, at most ``MAX_STATES``), ``max_residual`` open clauses in one state, or
    ``time_limit_s``. The budget is tight on purpose: the route races others on the same cores, and a
    formula whose states multiply (a totalizer's pending subtree sums: exactly-30 of 60 passes 2,000
    states within 0.7 s) is better left to them than followed to 100,000.
    """
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    if max_states is None:
        max_states = min(MAX_STATES, max(MIN_STATES, STATES_PER_TASK_VARIABLE * cnf.num_task_vars))
    order = anchored_order(cnf)
    position = {var: index for index, var in enumerate(order)}
    joins: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    last_use: dict[int, int] = {}
    for clause in cnf.clauses:
        literals = set(clause)
        if not literals:
            return 0
        if any(-lit in literals for lit in literals):
            continue  # a tautology constrains nothing
        step = max(position[abs(lit)] for lit in literals)
        joins[step].append(tuple(literals))
        for lit in literals:
            last_use[abs(lit)] = max(last_use.get(abs(lit), -1), step)
    leaves: dict[int, list[int]] = defaultdict(list)
    for var, step in last_use.items():
        leaves[step].append(var)
    unconstrained = sum(1 for var in cnf.task_vars if var not in last_use)
    states: dict[State, int] = {(frozenset(), frozenset()): 1}
    for step, var in enumerate(order):
        branches: tuple[int | None, ...] = (var, -var) if var <= cnf.num_task_vars and var in last_use else (None,)
        clauses, leaving = joins.get(step, ()), leaves.get(step, ())
        if branches == (None,) and not clauses and not leaving:
            continue
        following: dict[State, int] = defaultdict(int)
        for visited, (state, count) in enumerate(states.items()):
            if deadline is not None and visited % 256 == 0 and time.monotonic() > deadline:
                raise StateBudgetExceeded(f"frontier count ran out of time at variable {step + 1} of {len(order)}")
            for branch in branches:
                successor = _step(state, branch, clauses, leaving, max_residual)
                if successor is not None:
                    following[successor] += count
        states = following
        if len(states) > max_states:
            raise StateBudgetExceeded(
                f"frontier count: {len(states)} states at variable {step + 1} of {len(order)}, more than {max_states}"
            )
    return sum(states.values()) << unconstrained


def _step(
    state: State,
    branch: int | None,
    clauses: Sequence[tuple[int, ...]],
    leaving: Sequence[int],
    max_residual: int,
) -> State | None:
    """The state after assigning ``branch``, joining ``clauses`` and dropping ``leaving``; None on a conflict."""
    assigned, open_clauses = set(state[0]), set(state[1])
    try:
        if branch is not None:
            _propagate(assigned, open_clauses, branch)
        for clause in clauses:
            _join(assigned, open_clauses, clause)
        for var in leaving:
            _drop(assigned, open_clauses, var, max_residual)
    except _Conflict:
        return None
    return frozenset(assigned), frozenset(open_clauses)


def _propagate(assigned: set[int], open_clauses: set[frozenset[int]], literal: int) -> None:
    """Assign ``literal`` and whatever unit propagation through the open clauses forces."""
    pending = [literal]
    while pending:
        lit = pending.pop()
        if lit in assigned:
            continue
        if -lit in assigned:
            raise _Conflict
        assigned.add(lit)
        for clause in [c for c in open_clauses if lit in c or -lit in c]:
            open_clauses.discard(clause)
            if lit in clause:
                continue
            rest = clause - {-lit}
            if not rest:
                raise _Conflict
            if len(rest) == 1:
                pending.extend(rest)
            else:
                open_clauses.add(rest)


def _join(assigned: set[int], open_clauses: set[frozenset[int]], clause: tuple[int, ...]) -> None:
    """Add ``clause`` under the assignment: satisfied, unit (propagated), empty (a conflict) or open."""
    rest = []
    for lit in clause:
        if lit in assigned:
            return
        if -lit not in assigned:
            rest.append(lit)
    if not rest:
        raise _Conflict
    if len(rest) == 1:
        _propagate(assigned, open_clauses, rest[0])
    else:
        open_clauses.add(frozenset(rest))


def _drop(assigned: set[int], open_clauses: set[frozenset[int]], var: int, max_residual: int) -> None:
    """∃ ``var``: its literal forgotten when assigned, else every open clause on it replaced by the resolvents
    (:class:`StateBudgetExceeded` once they pass ``max_residual``)."""
    if var in assigned or -var in assigned:
        assigned.discard(var)
        assigned.discard(-var)
        return
    positive = [c for c in open_clauses if var in c]
    negative = [c for c in open_clauses if -var in c]
    open_clauses.difference_update(positive)
    open_clauses.difference_update(negative)
    units: list[int] = []
    for first in positive:
        for second in negative:
            resolvent = (first | second) - {var, -var}
            if any(-lit in resolvent for lit in resolvent):
                continue
            if len(resolvent) == 1:
                units.extend(resolvent)
            else:
                open_clauses.add(resolvent)
                if len(open_clauses) > max_residual:
                    raise StateBudgetExceeded(f"frontier count: a state holds more than {max_residual} open clauses")
    for unit in units:
        _propagate(assigned, open_clauses, unit)
