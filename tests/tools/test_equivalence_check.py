"""Equivalence and entailment proofs against brute-force projected model sets."""

import random

import pytest
from bruteforce import cnfs, projected_models, satisfies
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.equivalence_check import entails_clauses, equivalent, same_up_to_auxiliaries, uses_auxiliaries


def _pair(max_aux=3):
    return st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            cnfs(min_task_vars=n, max_task_vars=n, max_aux=max_aux),
            cnfs(min_task_vars=n, max_task_vars=n, max_aux=max_aux),
        )
    )


def _aux_free(cnf: CNF) -> CNF:
    n = cnf.num_task_vars
    return CNF(n, tuple(c for c in cnf.clauses if all(abs(lit) <= n for lit in c)), n)


def _shuffled_renamed(cnf: CNF, seed: int, reorder: bool = True) -> CNF:
    """The same formula with its clauses reordered and its auxiliaries permuted (and shifted up)."""
    rng = random.Random(seed)
    n = cnf.num_task_vars
    aux = list(range(n + 1, cnf.num_vars + 1))
    image = aux[:]
    rng.shuffle(image)
    rename = {old: new + 3 for old, new in zip(aux, image)}
    clauses = [
        tuple(lit if abs(lit) <= n else (rename[abs(lit)] if lit > 0 else -rename[-lit]) for lit in c)
        for c in cnf.clauses
    ]
    if reorder:
        rng.shuffle(clauses)
    return CNF(n, tuple(clauses), cnf.num_vars + 3)


@settings(max_examples=150, deadline=None)
@given(_pair())
def test_a_proof_of_equivalence_is_never_wrong(pair):
    a, b = pair
    verdict = equivalent(a, b)
    same = projected_models(a) == projected_models(b)
    if verdict is True:
        assert same
    if verdict is False:
        assert not same


@settings(max_examples=150, deadline=None)
@given(_pair(max_aux=0))
def test_without_auxiliaries_equivalence_is_decided(pair):
    a, b = pair
    assert equivalent(a, b) is (projected_models(a) == projected_models(b))


@settings(max_examples=100, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=4), st.integers(0, 10**6))
def test_renamed_auxiliaries_and_reordered_clauses_are_recognised(cnf, seed):
    other = _shuffled_renamed(cnf, seed)
    # With auxiliaries, reordered clauses may defeat the first-occurrence renaming (undecided, never wrong).
    assert same_up_to_auxiliaries(cnf, cnf)
    assert equivalent(cnf, other) in (True, None)
    if not uses_auxiliaries(cnf):
        assert equivalent(cnf, other) is True
    assert equivalent(cnf, _shuffled_renamed(cnf, seed, reorder=False)) is True


@settings(max_examples=150, deadline=None)
@given(_pair())
def test_entailment_of_an_auxiliary_free_side(pair):
    a, b = pair
    b = _aux_free(b)
    expected = all(satisfies(b.clauses, {i + 1: bool(v) for i, v in enumerate(row)}) for row in projected_models(a))
    assert entails_clauses(a, b) is expected


def test_entailment_refuses_auxiliaries_on_the_right():
    with pytest.raises(ValueError):
        entails_clauses(CNF(1, ()), CNF(1, ((1, 2),), 2))


def test_same_clauses_under_a_renaming_are_equivalent_though_not_equal():
    a = CNF(2, ((3, 1), (-3, 2), (3, 4)), 4)
    b = CNF(2, ((5, 1), (-5, 2), (5, 7)), 7)
    assert a != b and same_up_to_auxiliaries(a, b) and equivalent(a, b) is True
