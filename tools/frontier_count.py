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
variables: about 12 s of CPU; Ganak and every SDD route ran out of 60 s). Its budget is the memory
its states take, measured as they are made (bytes per state, sampled in each step: a state holds from a
few literals to hundreds of clauses), against :func:`~autonesy.tools.onehot_count.state_memory_budget`
for the two steps alive at once, and one state's residual against a share of it; past them or the time
limit it gives up with :class:`StateBudgetExceeded`.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Sequence

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import anchored_order
from autonesy.tools.onehot_count import DICT_ENTRY_BYTES, Footprint, StateBudgetExceeded, state_memory_budget

STATES_PER_RESIDUAL = 1_000  # one state's open clauses may take 1/this of the budget (as many such states fit)
OPEN_CLAUSE_BYTES = 280  # a frozenset of a few literals (216 bytes and up) and its slot in the state's set

State = tuple[frozenset[int], frozenset[frozenset[int]]]


class _Conflict(Exception):
    """A state has no completion (propagation or resolution derived the empty clause)."""


def count_by_frontier(
    cnf: CNF,
    time_limit_s: float | None = None,
    max_states: int | None = None,
    max_residual: int | None = None,
) -> int:
    """The number of models of ``cnf`` projected on its task variables (exact).

    Raises :class:`StateBudgetExceeded` when the states of two steps outgrow
    :func:`~autonesy.tools.onehot_count.state_memory_budget` (or past ``max_states`` states, where given), when
    one state holds more than ``max_residual`` open clauses (default: as many as fit in 1/``STATES_PER_RESIDUAL``
    of the budget), or past ``time_limit_s``.
    """
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    budget_bytes = state_memory_budget()
    if max_residual is None:
        max_residual = budget_bytes // (STATES_PER_RESIDUAL * OPEN_CLAUSE_BYTES)
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
    held = 0  # the bytes of the step being read
    for step, var in enumerate(order):
        branches: tuple[int | None, ...] = (var, -var) if var <= cnf.num_task_vars and var in last_use else (None,)
        clauses, leaving = joins.get(step, ()), leaves.get(step, ())
        if branches == (None,) and not clauses and not leaving:
            continue
        following: dict[State, int] = defaultdict(int)
        footprint = Footprint(_state_bytes)
        for visited, (state, count) in enumerate(states.items()):
            if deadline is not None and visited % 256 == 0 and time.monotonic() > deadline:
                raise StateBudgetExceeded(f"frontier count ran out of time at variable {step + 1} of {len(order)}")
            for branch in branches:
                successor = _step(state, branch, clauses, leaving, max_residual)
                if successor is not None:
                    following[successor] += count
            taking = held + footprint.bytes(following)
            if taking > budget_bytes or (max_states is not None and len(following) > max_states):
                raise StateBudgetExceeded(
                    f"frontier count: {len(following):,} states (about {taking >> 10:,} KiB with the step before) at "
                    f"variable {step + 1} of {len(order)}, more than its memory budget ({budget_bytes >> 10:,} KiB)"
                    + (f" or {max_states} states" if max_states is not None else "")
                )
        states, held = following, footprint.bytes(following)
    return sum(states.values()) << unconstrained


def _state_bytes(state: State) -> int:
    """A state's bytes: its two sets, the open clauses' sets, its count (an integer of up to 32 bytes) and dict entry."""
    assigned, open_clauses = state
    size = sys.getsizeof(state) + sys.getsizeof(assigned) + sys.getsizeof(open_clauses) + 32 + DICT_ENTRY_BYTES
    return size + sum(map(sys.getsizeof, open_clauses))


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
