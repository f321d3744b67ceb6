"""Exact model count of a CNF without auxiliaries, as a CSP over its one-hot groups, by dynamic programming.

Component counters and SDDs fail on all-different grids: a 6 × 6 Sudoku (216 variables, 28,200,960
models) ran out of 60 s in Ganak, ApproxMC and every SDD shape. Read as a CSP, it is small: the
encoder's exactly-one groups (a positive clause whose literals are pairwise exclusive) are the CSP's
variables, every other variable a two-valued one, and every clause a constraint over the groups it
touches. The groups are assigned in the order the encoder wrote them (a grid row by row), layer
by layer, with forward checking: once a clause has one group left and is not yet satisfied, that
group's domain is cut to the values that satisfy it. Two partial assignments with the same future
domains and the same still-open clauses have the same completions, so a layer keeps one count per
such state (6 × 6 Sudoku: at most 291,600 states, about 10 s). The layers' width is the budget:
past ``max_states`` (or the time limit) it gives up with :class:`StateBudgetExceeded`.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict

from autonesy.tools.cnf import CNF
from autonesy.tools.errors import AutonesyError

DEFAULT_MAX_STATES = 600_000  # 6 × 6 Sudoku peaks at 291,600; a 9 × 9 one passes it at its 10th cell (about 1 GB)


class StateBudgetExceeded(AutonesyError, RuntimeError):
    """The dynamic programme outgrew its state or time budget; the message says where."""


def one_hot_groups(cnf: CNF) -> list[tuple[int, ...]]:
    """The task variables split into exactly-one groups (each a positive clause whose literals are pairwise
    exclusive by binary clauses, taken longest first, disjoint) and singletons, ordered by first variable."""
    exclusive = {frozenset((-a, -b)) for a, b in (c for c in cnf.clauses if len(c) == 2) if a < 0 and b < 0}
    taken: set[int] = set()
    groups = []
    for clause in sorted(cnf.clauses, key=len, reverse=True):
        literals = set(clause)
        if len(clause) < 2 or len(literals) < len(clause) or min(clause) < 0 or literals & taken:
            continue
        if all(frozenset(pair) in exclusive for pair in itertools.combinations(clause, 2)):
            groups.append(tuple(sorted(clause)))
            taken |= literals
    groups.extend((var,) for var in cnf.task_vars if var not in taken)
    return sorted(groups, key=min)


def count_one_hot(cnf: CNF, time_limit_s: float | None = None, max_states: int = DEFAULT_MAX_STATES) -> int:
    """The number of models of ``cnf``, which must have no auxiliaries (all its variables are counted).

    A group of m > 1 variables takes one of m values (value i: its i-th variable true, the others
    false); a singleton takes 0 (false) or 1 (true). Raises :class:`StateBudgetExceeded` past
    ``max_states`` states in one layer or past ``time_limit_s``.
    """
    if cnf.num_aux_vars:
        raise ValueError("one-hot counting counts every variable: the CNF must have no auxiliaries")
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    groups = one_hot_groups(cnf)
    place = {var: (g, i) for g, members in enumerate(groups) for i, var in enumerate(members)}
    full = [(1 << len(members)) - 1 if len(members) > 1 else 0b11 for members in groups]

    def values_making_true(lit: int) -> int:
        g, i = place[abs(lit)]
        if len(groups[g]) == 1:
            return 0b10 if lit > 0 else 0b01
        return 1 << i if lit > 0 else full[g] & ~(1 << i)

    domains = list(full)
    # Per group and value: the clauses that value leaves unsatisfied, as (clause, first group?, groups left,
    # offset of the clause's last group from the next group, the values of that group that satisfy it); and
    # the clauses it satisfies that may be open (three groups or more).
    unsatisfied: list[list[list[tuple[int, bool, int, int, int]]]] = [
        [[] for _ in range(full[g].bit_length())] for g in range(len(groups))
    ]
    closes: list[list[list[int]]] = [[[] for _ in range(full[g].bit_length())] for g in range(len(groups))]
    # Two-group clauses a value leaves unsatisfied, merged per target group: (offset, values allowed there).
    cuts: list[list[dict[int, int]]] = [[{} for _ in range(full[g].bit_length())] for g in range(len(groups))]
    for index, clause in enumerate(cnf.clauses):
        masks: dict[int, int] = defaultdict(int)
        for lit in clause:
            masks[place[abs(lit)][0]] |= values_making_true(lit)
        touched = sorted(masks)
        if any(masks[g] == full[g] for g in touched):
            continue  # true whatever the groups take
        if not touched:
            return 0  # the empty clause
        if len(touched) == 1:
            domains[touched[0]] &= masks[touched[0]]
            continue
        last = touched[-1]
        for position, g in enumerate(touched):
            left = len(touched) - 1 - position
            for value in range(full[g].bit_length()):
                if not (full[g] >> value) & 1:
                    continue
                if (masks[g] >> value) & 1:
                    if position > 0 and len(touched) >= 3:
                        closes[g][value].append(index)
                elif position == 0 and len(touched) == 2:
                    cut = cuts[g][value]
                    cut[last - g - 1] = cut.get(last - g - 1, full[last]) & masks[last]
                elif position == 0 or len(touched) >= 3:  # the last of two groups: its domain holds the clause
                    unsatisfied[g][value].append((index, position == 0, left, last - g - 1, masks[last]))
    if not all(domains):
        return 0
    cut_lists = [[list(cut.items()) for cut in per_value] for per_value in cuts]
    layer: dict[tuple[tuple[int, ...], frozenset[int]], int] = {(tuple(domains), frozenset()): 1}
    for g in range(len(groups)):
        following: dict[tuple[tuple[int, ...], frozenset[int]], int] = defaultdict(int)
        cuts_here, closes_here, unsatisfied_here = cut_lists[g], closes[g], unsatisfied[g]
        for (future, open_clauses), count in layer.items():
            domain = future[0]
            for value in range(domain.bit_length()):
                if not (domain >> value) & 1:
                    continue
                rest, dead = list(future[1:]), False
                for offset, allowed in cuts_here[value]:
                    rest[offset] &= allowed
                    if not rest[offset]:
                        dead = True
                        break
                if dead:
                    continue
                if not (closes_here[value] or unsatisfied_here[value]):  # no clause of three groups or more here
                    following[(tuple(rest), open_clauses)] += count
                    continue
                still_open = set(open_clauses)
                still_open.difference_update(closes_here[value])
                for index, first, left, offset, satisfying in unsatisfied_here[value]:
                    if not first and index not in still_open:
                        continue  # satisfied earlier, or its last group's domain already holds it
                    if left >= 2:
                        still_open.add(index)
                        continue
                    still_open.discard(index)
                    if left == 0:
                        dead = True
                        break
                    rest[offset] &= satisfying
                    if not rest[offset]:
                        dead = True
                        break
                if not dead:
                    following[(tuple(rest), frozenset(still_open))] += count
            if len(following) > max_states or (deadline is not None and time.monotonic() > deadline):
                what = "states" if len(following) > max_states else "time"
                raise StateBudgetExceeded(  # checked as the layer grows: a 9 x 9 Sudoku's would take gigabytes
                    f"one-hot counting exceeded its {what} budget ({max_states} states, {time_limit_s} s) "
                    f"at group {g + 1} of {len(groups)} ({len(following)} states)"
                )
        layer = following
    return sum(layer.values())
