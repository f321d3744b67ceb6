"""Proofs about two CNFs' projections on their task variables, without counting models.

The metrics need MC(φ̂), MC(φ*) and MC(φ* ∧ φ̂); when one projection contains the other, the
overlap is the smaller side's count, and when both are equal, precision = recall = F1 = 1 whatever
the counts are. These checks prove such relations cheaply (they never claim one without a proof):

- :func:`same_up_to_auxiliaries`: the clause sets are equal once each side's auxiliaries are
  renamed by first occurrence (a bijection on auxiliaries preserves the projection). An expert
  answer that renders the ground truth converts to exactly this.
- :func:`entails_clauses`: φ ⊨ C for every clause C of ψ, when ψ has no auxiliaries, proves
  proj(φ) ⊆ ψ — one SAT call (φ ∧ ¬ψ unsatisfiable, ¬ψ written with a selector per clause),
  under a time limit. With auxiliaries in φ this still holds: ψ mentions task variables only.
- :func:`equivalent`: True when proved equal, False when a SAT call found an assignment on one side
  only (both sides free of auxiliaries), None when undecided.
"""

from __future__ import annotations

from autonesy.tools.cnf import CNF
from autonesy.tools.enumeration import CountTimedOut, _InterruptibleSolver


def _canonical(cnf: CNF) -> frozenset[frozenset[int]]:
    """The clause set with auxiliaries renumbered N+1, N+2, … in order of first occurrence."""
    n, rename = cnf.num_task_vars, dict[int, int]()
    clauses = []
    for clause in cnf.clauses:
        renamed = []
        for lit in clause:
            var = abs(lit)
            if var > n:
                var = rename.setdefault(var, n + 1 + len(rename))
            renamed.append(var if lit > 0 else -var)
        clauses.append(frozenset(renamed))
    return frozenset(clauses)


def uses_auxiliaries(cnf: CNF) -> bool:
    """Does a clause mention a variable above N? (Declared but unused auxiliaries change nothing.)"""
    return any(abs(lit) > cnf.num_task_vars for clause in cnf.clauses for lit in clause)


def same_up_to_auxiliaries(a: CNF, b: CNF) -> bool:
    """True when a renaming of auxiliaries maps a's clause set onto b's (so their projections are equal)."""
    return a.num_task_vars == b.num_task_vars and (a == b or _canonical(a) == _canonical(b))


def entails_clauses(a: CNF, b: CNF, time_limit_s: float | None = None) -> bool | None:
    """Does a entail every clause of b? b must have no auxiliary variables (ValueError otherwise).

    One SAT call: a plus "some clause of b is false" (a selector per clause of b, each implying
    its clause's literals false, and one clause asking for a selector). Unsatisfiable proves
    proj(a) ⊆ b: True; a model is an assignment of a outside b: False; None: out of time."""
    if uses_auxiliaries(b):
        raise ValueError("entails_clauses needs a right-hand side without auxiliary variables")
    distinct = list(set(map(frozenset, b.clauses)))
    if not distinct:
        return True
    top = max(a.num_vars, b.num_vars)
    selectors = list(range(top + 1, top + 1 + len(distinct)))
    try:
        with _InterruptibleSolver(a, time_limit_s, "entailment") as sat:
            for selector, clause in zip(selectors, distinct):
                for lit in clause:
                    sat.solver.add_clause([-selector, -lit])
            sat.solver.add_clause(selectors)
            return not sat.solve()
    except CountTimedOut:
        return None


def equivalent(a: CNF, b: CNF, time_limit_s: float | None = None) -> bool | None:
    """True: same projection (proved); False: different (both sides free of auxiliaries, a witness
    found); None: not decided (auxiliaries on a side and no renaming matched, or out of time)."""
    if a.num_task_vars != b.num_task_vars:
        raise ValueError("equivalence of formulas over different task variables")
    if same_up_to_auxiliaries(a, b):
        return True
    if uses_auxiliaries(a) or uses_auxiliaries(b):
        return None
    forward = entails_clauses(a, b, time_limit_s)
    if forward is not True:
        return forward
    return entails_clauses(b, a, time_limit_s)
