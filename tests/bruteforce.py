"""Brute-force references and random-formula strategies shared by the differential tests."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from autonesy.tools.cnf import CNF


def satisfies(clauses, assignment: dict[int, bool]) -> bool:
    return all(any(assignment[abs(lit)] == (lit > 0) for lit in clause) for clause in clauses)


def projected_models(cnf: CNF) -> set[tuple[int, ...]]:
    """Every task-variable assignment (0/1 tuple) that some auxiliary assignment extends to a model."""
    n, aux = cnf.num_task_vars, list(range(cnf.num_task_vars + 1, cnf.num_vars + 1))
    found = set()
    for values in itertools.product((0, 1), repeat=n):
        base = {i + 1: bool(v) for i, v in enumerate(values)}
        for aux_values in itertools.product((False, True), repeat=len(aux)):
            if satisfies(cnf.clauses, {**base, **dict(zip(aux, aux_values))}):
                found.add(values)
                break
    return found


@st.composite
def cnfs(draw, max_task_vars: int = 6, max_aux: int = 3, max_clauses: int = 8, min_task_vars: int = 1):
    """Random CNFs over N task variables plus auxiliaries (clauses may be empty, repeat or be tautologies)."""
    n = draw(st.integers(min_task_vars, max_task_vars))
    aux = draw(st.integers(0, max_aux))
    total = n + aux
    literal = st.integers(1, total).flatmap(lambda v: st.sampled_from((v, -v)))
    clause = st.lists(literal, min_size=1, max_size=4).map(tuple)
    clauses = draw(st.lists(clause, min_size=0, max_size=max_clauses))
    return CNF(n, tuple(clauses), total)


def same_task_vars(cnf: CNF, n: int) -> CNF:
    return CNF(n, cnf.clauses, max(cnf.num_vars, n))


def sat_models(cnf, n: int) -> set[tuple[int, ...]]:
    """Every model of ``cnf`` projected on variables 1..n, by SAT enumeration with blocking clauses."""
    from pysat.solvers import Solver

    found = set()
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        while solver.solve():
            model = solver.get_model()
            row = tuple(int(model[i] > 0) for i in range(n))
            found.add(row)
            solver.add_clause([-(i + 1) if bit else i + 1 for i, bit in enumerate(row)])
    return found


def sat_accepts(cnf, row) -> bool:
    """Whether the task-variable assignment ``row`` extends to a model of ``cnf``."""
    from pysat.solvers import Solver

    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        return solver.solve(assumptions=[i + 1 if bit else -(i + 1) for i, bit in enumerate(row)])
