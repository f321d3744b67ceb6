"""Eliminating auxiliaries by resolution keeps the projection, against brute force."""

from bruteforce import cnfs, projected_models
from hypothesis import given, settings

from autonesy.tools.cnf import CNF
from autonesy.tools.elimination import eliminate_auxiliaries


@settings(max_examples=150, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=5, max_clauses=12))
def test_elimination_keeps_the_projected_models(cnf):
    reduced = eliminate_auxiliaries(cnf)
    assert reduced.num_task_vars == cnf.num_task_vars
    assert reduced.num_aux_vars <= cnf.num_aux_vars
    assert projected_models(reduced) == projected_models(cnf)


def sequential_at_most_one(n: int) -> CNF:
    """Sinz's sequential counter: x_i → s_i, s_{i-1} → s_i, x_i → ¬s_{i-1} (auxiliaries s_1..s_{n-1})."""
    s = {i: n + i for i in range(1, n)}
    clauses = [(-1, s[1])]
    for i in range(2, n):
        clauses += [(-i, s[i]), (-s[i - 1], s[i]), (-i, -s[i - 1])]
    clauses.append((-n, -s[n - 1]))
    return CNF(n, tuple(clauses), 2 * n - 1)


def test_a_sequential_counter_becomes_pairwise_exclusions():
    reduced = eliminate_auxiliaries(sequential_at_most_one(7))
    assert reduced.num_aux_vars == 0
    assert {frozenset(c) for c in reduced.clauses} == {
        frozenset((-i, -j)) for i in range(1, 8) for j in range(i + 1, 8)
    }


def test_a_formula_without_auxiliaries_is_returned_as_it_is():
    cnf = CNF(3, ((1, 2), (-3,)))
    assert eliminate_auxiliaries(cnf) is cnf


def test_elimination_out_of_time_keeps_the_formula_as_it_was():
    cnf = sequential_at_most_one(6)
    stopped = eliminate_auxiliaries(cnf, time_limit_s=0.0)
    assert stopped.num_aux_vars == cnf.num_aux_vars
    assert projected_models(stopped) == projected_models(cnf)
