"""Variable elimination over truth tables against brute-force enumeration of all assignments."""

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings

import autonesy.tools.variable_elimination as ve
from autonesy.tools.cnf import CNF
from autonesy.tools.variable_elimination import (
    EliminationTooCostly,
    count_by_elimination,
    defined_auxiliaries,
    plan_elimination,
)


@settings(max_examples=150, deadline=None)
@given(cnfs(max_task_vars=6, max_aux=5, max_clauses=12))
def test_counts_match_brute_force(cnf):
    assert count_by_elimination(plan_elimination(cnf, 10**6)) == len(projected_models(cnf))


@settings(max_examples=40, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=4, max_clauses=10))
def test_python_integers_count_the_same(cnf):
    original = ve.INT64_SUMMED_VARS
    ve.INT64_SUMMED_VARS = 0  # every table of Python integers (the route for more than 62 summed variables)
    try:
        assert count_by_elimination(plan_elimination(cnf, 10**6)) == len(projected_models(cnf))
    finally:
        ve.INT64_SUMMED_VARS = original


@settings(max_examples=60, deadline=None)
@given(cnfs(max_task_vars=4, max_aux=3, max_clauses=10))
def test_a_defined_auxiliary_has_one_value_per_projected_model(cnf):
    import itertools

    from bruteforce import satisfies

    n = cnf.num_task_vars
    aux = list(range(n + 1, cnf.num_vars + 1))
    for var in defined_auxiliaries(cnf):
        values: dict[tuple, set[bool]] = {}
        for bits in itertools.product((False, True), repeat=cnf.num_vars):
            assignment = dict(enumerate(bits, start=1))
            if satisfies(cnf.clauses, assignment):
                values.setdefault(bits[:n], set()).add(assignment[var])
        assert all(len(seen) == 1 for seen in values.values()), var
        assert var in aux


def test_a_tseitin_auxiliary_is_defined_and_a_free_choice_is_not():
    # a3 <-> (x1 AND x2); a4 only needs x1 OR a4: x1 true leaves it free.
    cnf = CNF(2, ((-3, 1), (-3, 2), (3, -1, -2), (1, 4)), 4)
    assert defined_auxiliaries(cnf) == {3}
    assert count_by_elimination(plan_elimination(cnf, 100)) == 4


def test_large_counts_stay_exact_beyond_64_bits():
    # 70 task variables, x1 OR x2: 3 * 2**68 models, past int64 in Python integers.
    cnf = CNF(70, ((1, 2), (1, 2, 71), (-71, 3)), 71)
    assert count_by_elimination(plan_elimination(cnf, 10_000)) == 3 * 2**68


def test_a_plan_over_budget_is_refused_before_any_table_exists():
    wide = CNF(30, (tuple(range(1, 31)),))  # one clause over 30 variables: a table of 2**30 entries
    with pytest.raises(EliminationTooCostly, match="over 1000 table entries"):
        plan_elimination(wide, 1000)


def test_empty_clause_and_unmentioned_variables():
    assert count_by_elimination(plan_elimination(CNF(3, ((1,), ())), 100)) == 0
    assert count_by_elimination(plan_elimination(CNF(5, ()), 100)) == 32
