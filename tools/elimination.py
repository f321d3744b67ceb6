"""Auxiliary variables removed by resolution (Davis–Putnam elimination), leaving the same projection.

Counting and compiling are projected on the task variables: auxiliaries (an encoder's sequential
counters, Tseitin definitions) make both harder — Ganak must count projected, and an SDD grows
through the auxiliaries before they are quantified away. Eliminating an auxiliary ``a`` replaces
the clauses that mention it by all their non-tautological resolvents on ``a``; the result is
∃a. F exactly, so the projected model count and the projected models are unchanged. An
auxiliary is eliminated only while that does not grow the clause set by more than a small bound
(bounded variable elimination, as in SatELite), cheapest first, under a time limit; the ones left
stay auxiliaries.
Clauses subsumed by another (a resolvent often subsumes its parents' siblings) are dropped too,
which changes no model.
"""

from __future__ import annotations

import time

from autonesy.tools.cnf import CNF

MAX_GROWTH_PER_STEP = 16  # resolvents minus removed clauses, per eliminated auxiliary
MAX_CLAUSE_FACTOR = 4  # the clause set may grow to this many times its first size at most
MAX_RESOLVENT_LENGTH = 32
DEFAULT_TIME_LIMIT_S = 1.0


def eliminate_auxiliaries(cnf: CNF, time_limit_s: float | None = DEFAULT_TIME_LIMIT_S) -> CNF:
    """An equivalent-under-projection CNF with as few auxiliaries as bounded elimination allows.

    Stops trying once ``time_limit_s`` has passed (what it eliminated so far stands: every step is
    exact). The auxiliaries that remain are renumbered to follow the task variables without gaps.
    """
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    if not cnf.num_aux_vars:
        return cnf
    clauses: set[frozenset[int]] = set()
    for raw in cnf.clauses:
        literals = frozenset(raw)
        if not any(-lit in literals for lit in literals):
            clauses.add(literals)
    n = cnf.num_task_vars
    occurs: dict[int, set[frozenset[int]]] = {}
    for clause in clauses:
        for lit in clause:
            occurs.setdefault(lit, set()).add(clause)
    budget = MAX_CLAUSE_FACTOR * max(len(clauses), 1)
    remaining = {v for v in range(n + 1, cnf.num_vars + 1)}

    def resolvents(var: int) -> set[frozenset[int]] | None:
        found: set[frozenset[int]] = set()
        for pos in occurs.get(var, ()):
            for neg in occurs.get(-var, ()):
                merged = (pos - {var}) | (neg - {-var})
                if any(-lit in merged for lit in merged):
                    continue
                if len(merged) > MAX_RESOLVENT_LENGTH:
                    return None
                found.add(frozenset(merged))
        return found

    def remove(clause: frozenset[int]) -> None:
        clauses.discard(clause)
        for lit in clause:
            occurs[lit].discard(clause)

    def add(clause: frozenset[int]) -> None:
        if clause in clauses or _subsumed(clause, occurs):
            return
        for lit in clause:  # drop what the new clause subsumes
            for other in list(occurs.get(lit, ())):
                if clause < other:
                    remove(other)
        clauses.add(clause)
        for lit in clause:
            occurs.setdefault(lit, set()).add(clause)

    candidates = set(remaining)  # retried only when a neighbouring elimination touched their clauses
    while candidates:
        touched: set[int] = set()
        for var in sorted(candidates, key=lambda v: len(occurs.get(v, ())) * len(occurs.get(-v, ()))):
            if deadline is not None and time.monotonic() > deadline:
                touched.clear()
                break
            if var not in remaining:
                continue
            old = occurs.get(var, set()) | occurs.get(-var, set())
            new = resolvents(var)
            if new is None or len(new) - len(old) > MAX_GROWTH_PER_STEP:
                continue
            if len(clauses) - len(old) + len(new) > budget:
                continue
            for clause in list(old):
                remove(clause)
            for clause in new:
                add(clause)
            remaining.discard(var)
            touched.update(abs(lit) for clause in new for lit in clause if abs(lit) in remaining)
        candidates = touched
    renumber = {v: n + i for i, v in enumerate(sorted(remaining), start=1)}

    def move(lit: int) -> int:
        var = abs(lit)
        if var <= n:
            return lit
        return renumber[var] if lit > 0 else -renumber[var]

    ordered = sorted(clauses, key=lambda c: (len(c), sorted(c, key=abs)))
    return CNF(n, tuple(tuple(sorted((move(lit) for lit in c), key=abs)) for c in ordered), n + len(remaining))


def _subsumed(clause: frozenset[int], occurs: dict[int, set[frozenset[int]]]) -> bool:
    """Whether a clause already present is a subset of ``clause`` (then ``clause`` adds nothing)."""
    return any(other <= clause for lit in clause for other in occurs.get(lit, ()))
