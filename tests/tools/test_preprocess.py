"""Projection-preserving preprocessing: the projected models never change (differential, brute force)."""

from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.preprocess import simplify_projected


@settings(max_examples=300, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=5, max_clauses=14))
def test_projected_models_unchanged(cnf):
    simplified = simplify_projected(cnf)
    assert simplified.num_task_vars == cnf.num_task_vars
    assert projected_models(simplified) == projected_models(cnf)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 6))
def test_chain_of_equal_auxiliaries_disappears(n):
    # x1 ⇔ a1 ⇔ a2 ⇔ … ⇔ a_n and a_n ⇒ x2: the auxiliaries are equal literals of x1, substituted away.
    aux = list(range(3, 3 + n))
    chain = [1, *aux]
    clauses = [c for a, b in zip(chain, chain[1:]) for c in ((-a, b), (a, -b))] + [(-aux[-1], 2)]
    simplified = simplify_projected(CNF(2, tuple(clauses), 2 + n))
    assert simplified.num_aux_vars == 0
    assert projected_models(simplified) == {(0, 0), (0, 1), (1, 1)}


def test_unsatisfiable_becomes_the_empty_clause():
    assert simplify_projected(CNF(1, ((1, 3), (1, -3), (-1,)), 3)).clauses == ((),)
