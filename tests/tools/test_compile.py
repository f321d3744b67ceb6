import itertools
import time

import numpy as np
import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import (
    VTREE_TYPES,
    CompilationBudgetExceeded,
    compile_formula,
    compile_from_models,
    compile_to_sdd,
)


@settings(max_examples=60, deadline=None)
@given(cnfs())
def test_sdd_is_the_projection_of_the_cnf(cnf):
    sdd = compile_to_sdd(cnf)
    rows = np.array(list(itertools.product((0, 1), repeat=cnf.num_task_vars)), dtype=bool)
    expected = projected_models(cnf)
    assert {tuple(int(v) for v in row) for row in rows[sdd.evaluate(rows)]} == expected
    assert sdd.model_count() == len(expected)


@st.composite
def model_sets(draw):
    n = draw(st.integers(1, 7))
    rows = st.tuples(*[st.integers(0, 1)] * n)
    return n, draw(st.sets(rows, max_size=2**n))


@settings(max_examples=80, deadline=None)
@given(model_sets(), st.sampled_from(VTREE_TYPES))
def test_sdd_from_models_holds_exactly_those_models(case, vtree):
    n, models = case
    sdd = compile_from_models(models, n, vtree)
    rows = np.array(list(itertools.product((0, 1), repeat=n)), dtype=bool)
    assert {tuple(int(v) for v in row) for row in rows[sdd.evaluate(rows)]} == models
    assert sdd.model_count() == len(models)


@settings(max_examples=60, deadline=None)
@given(model_sets(), st.sampled_from(VTREE_TYPES), st.sampled_from(VTREE_TYPES))
def test_sdd_from_models_built_before_is_copied_for_its_models_and_vtree_only(case, vtree, other):
    import autonesy.tools.compile as compiling

    n, models = case
    compiling._BUILT.clear()
    rows = np.array(list(itertools.product((0, 1), repeat=n)), dtype=bool)
    built = compile_from_models(models, n, vtree)
    fewer = compile_from_models(set(list(models)[1:]), n, vtree)  # other models: built, not copied
    again = compile_from_models(sorted(models, reverse=True), n, other)
    copied = compile_from_models(list(models), n, vtree)
    assert len(compiling._BUILT) == (2 if not models else 3) - (vtree == other)
    for sdd, holds in ((built, models), (fewer, set(list(models)[1:])), (again, models), (copied, models)):
        assert {tuple(int(v) for v in row) for row in rows[sdd.evaluate(rows)]} == holds
        assert sdd.model_count() == len(holds)
    assert copied.manager is not built.manager  # a manager of its own, whatever the caller does with the first
    assert copied.size == built.size and copied.vtree_type == vtree


@settings(max_examples=30, deadline=None)
@given(cnfs())
def test_sdd_from_models_is_the_clause_compilation(cnf):
    # Canonical for one vtree: building from the models gives the very SDD that conjoining clauses gives.
    from_models = compile_from_models(projected_models(cnf), cnf.num_task_vars)
    from_clauses = compile_to_sdd(cnf, minimize=False)
    quantified = compile_to_sdd(CNF(cnf.num_task_vars, tuple(_dnf_free(cnf)), cnf.num_task_vars), minimize=False)
    assert from_models.model_count() == from_clauses.model_count() == quantified.model_count()
    assert from_models.size == quantified.size


def _dnf_free(cnf):
    """The projection as clauses over the task variables only: one blocking clause per non-model."""
    models = projected_models(cnf)
    for row in itertools.product((0, 1), repeat=cnf.num_task_vars):
        if row not in models:
            yield tuple(-(i + 1) if v else i + 1 for i, v in enumerate(row))


@pytest.mark.parametrize("vtree", VTREE_TYPES)
def test_every_vtree_type_counts_the_same(vtree):
    cnf = CNF(4, ((1, 2), (-2, 5), (-5, 3)), 5)
    assert compile_to_sdd(cnf, vtree_type=vtree).model_count() == len(projected_models(cnf))


def test_saved_sdd_and_vtree_load_back(tmp_path):
    from pysdd.sdd import SddManager, Vtree

    cnf = CNF(3, ((1, 2), (-1, -2), (3, 4)), 4)
    sdd = compile_to_sdd(cnf)
    sdd_path, vtree_path = sdd.save(tmp_path, "f")
    manager = SddManager.from_vtree(Vtree.from_file(str(vtree_path).encode()))
    node = manager.read_sdd_file(str(sdd_path).encode())
    assert node.global_model_count() >> 1 == sdd.model_count() == 4


def test_evaluate_rejects_wrong_shape():
    sdd = compile_to_sdd(CNF(2, ((1,),)))
    with pytest.raises(ValueError, match="shape"):
        sdd.evaluate(np.zeros((3, 5), dtype=bool))


def test_time_budget_overflow_is_reported_not_hung():
    from autonesy.tools.compile import CompilationBudgetExceeded

    with pytest.raises(CompilationBudgetExceeded, match="time budget"):
        compile_to_sdd(CNF(3, ((1, 2), (2, 3), (-1, 3))), time_limit_s=0.0)


def test_counts_do_not_wrap_around_at_64_variables():
    # PySDD's global count is 64-bit: 3 task variables with 6 models and 63 auxiliaries wrapped to 0.
    aux = tuple((4 + i, -(4 + i)) for i in range(63))
    cnf = CNF(3, ((1, 2),) + aux, 66)
    assert compile_to_sdd(cnf).model_count() == 6


def test_count_above_two_to_the_64():
    cnf = CNF(100, (tuple(range(1, 101)),))  # at least one of 100
    assert compile_to_sdd(cnf).model_count() == 2**100 - 1


@settings(max_examples=40, deadline=None)
@given(cnfs(max_task_vars=7, max_aux=4, max_clauses=14))
def test_compile_formula_is_the_projection_by_whichever_route(cnf):
    from autonesy.tools.compile import compile_formula

    sdd = compile_formula(cnf)
    rows = np.array(list(itertools.product((0, 1), repeat=cnf.num_task_vars)), dtype=bool)
    assert {tuple(int(v) for v in row) for row in rows[sdd.evaluate(rows)]} == projected_models(cnf)


def test_compile_formula_takes_the_clause_route_for_many_models(monkeypatch):
    import autonesy.tools.compile as compile_module

    monkeypatch.setattr(compile_module, "MODELS_ROUTE_CAP", 4)
    cnf = CNF(6, ((1, 2), (-3, 7), (7, 4)), 7)
    sdd = compile_module.compile_formula(cnf)
    assert sdd.model_count() == len(projected_models(cnf))


@settings(max_examples=60, deadline=None)
@given(cnfs(max_aux=4, max_clauses=12))
def test_elimination_order_sdds_count_like_brute_force(cnf):
    from autonesy.tools.compile import elimination_order

    order = elimination_order(cnf)
    assert sorted(order) == list(range(1, cnf.num_vars + 1))
    sdd = compile_to_sdd(cnf, minimize=False, var_order=order)
    assert sdd.model_count() == len(projected_models(cnf))


def scanned_min_degree_order(cnf):
    """The plain definition of min-degree: scan every remaining variable at each step."""
    adjacent = {v: set() for v in range(1, cnf.num_vars + 1)}
    for clause in cnf.clauses:
        variables = {abs(lit) for lit in clause}
        for var in variables:
            adjacent[var] |= variables - {var}
    order = []
    while adjacent:
        var = min(adjacent, key=lambda v: (len(adjacent[v]), v))
        neighbours = adjacent.pop(var)
        for other in neighbours:
            adjacent[other] = (adjacent[other] | neighbours) - {other, var}
        order.append(var)
    return order


@st.composite
def large_cnfs(draw):
    """Past MIN_FILL_MAX_VARS, where the order is min-degree."""
    from autonesy.tools.compile import MIN_FILL_MAX_VARS

    num_vars = draw(st.integers(MIN_FILL_MAX_VARS + 1, MIN_FILL_MAX_VARS + 60))
    literal = st.integers(1, num_vars).flatmap(lambda v: st.sampled_from((v, -v)))
    clauses = draw(st.lists(st.lists(literal, min_size=1, max_size=4), max_size=120))
    return CNF(num_vars, tuple(tuple(c) for c in clauses))


@settings(max_examples=40, deadline=None)
@given(large_cnfs())
def test_min_degree_order_is_the_scanned_order(cnf):
    from autonesy.tools.compile import elimination_order

    assert elimination_order(cnf) == scanned_min_degree_order(cnf)


def test_elimination_order_stops_at_its_deadline():
    import time

    from autonesy.tools.compile import elimination_order

    chain = CNF(5000, tuple((v, v + 1) for v in range(1, 5000)))
    with pytest.raises(CompilationBudgetExceeded, match="elimination order ran out"):
        elimination_order(chain, deadline=time.perf_counter())


@settings(max_examples=60, deadline=None)
@given(cnfs(max_aux=5, max_clauses=12))
def test_compile_formula_past_enumeration_counts_like_brute_force(cnf):
    # No models route: auxiliary elimination, the unminimised orders, then minimisation.
    import autonesy.tools.compile as compile_module

    saved, compile_module.MODELS_ROUTE_CAP = compile_module.MODELS_ROUTE_CAP, -1
    try:
        sdd = compile_formula(cnf)
    finally:
        compile_module.MODELS_ROUTE_CAP = saved
    assert sdd.model_count() == len(projected_models(cnf))


@settings(max_examples=25, deadline=None)
@given(cnfs(max_aux=4, max_clauses=12), st.sampled_from(VTREE_TYPES))
def test_an_sdd_compiled_in_a_child_is_the_projection(cnf, vtree_type):
    from autonesy.tools.compile import compile_in_child

    sdd = compile_in_child(cnf, time_limit_s=30, vtree_type=vtree_type)
    rows = np.array(list(itertools.product((0, 1), repeat=cnf.num_task_vars)), dtype=bool)
    expected = projected_models(cnf)
    assert {tuple(int(v) for v in row) for row in rows[sdd.evaluate(rows)]} == expected
    assert sdd.model_count() == len(expected)


def test_a_child_compilation_stops_at_its_time_limit():
    from pysat.examples.genhard import PHP

    from autonesy.tools.compile import compile_in_child

    hard = PHP(9)
    cnf = CNF(hard.nv, tuple(tuple(c) for c in hard.clauses))
    with pytest.raises(CompilationBudgetExceeded, match="time budget"):
        compile_in_child(cnf, time_limit_s=0.5, minimize=False, vtree_type="vertical")


def test_compile_formula_overflow_names_every_try(monkeypatch):
    import autonesy.tools.compile as compile_module

    monkeypatch.setattr(compile_module, "MODELS_ROUTE_CAP", -1)  # straight to the clauses
    parity = CNF(4, ((1, 2, 3, 4), (-1, -2, 3, 4), (1, -2, -3, 4), (-1, 2, -3, 4)))
    with pytest.raises(CompilationBudgetExceeded) as raised:
        compile_formula(parity, size_limit=1)
    message = str(raised.value)
    assert "natural order" in message and "elimination order" in message and "minimised" in message


def test_compile_formula_ends_at_its_budget_when_one_step_does_not(monkeypatch):
    """One conjoin (or a minimisation inside it) can run for minutes without returning to the budget
    check; DCP-Bench-Open's hadamard matrix spent 238 s in a 60 s compile. The clause route runs in a
    child that is killed at the deadline."""
    import autonesy.tools.compile as compile_module

    monkeypatch.setattr(compile_module, "MODELS_ROUTE_CAP", -1)  # straight to the clauses
    monkeypatch.setattr(compile_module, "compile_unminimised", lambda *args, **kwargs: time.sleep(60))
    start = time.perf_counter()
    with pytest.raises(CompilationBudgetExceeded, match="time budget"):
        compile_formula(CNF(3, ((1, 2), (-1, 3))), time_limit_s=1.0)
    assert time.perf_counter() - start < 30  # not the 60 s of the stuck step


@settings(max_examples=80, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=5, max_clauses=12))
def test_bucket_elimination_counts_the_projection(cnf):
    from autonesy.tools.compile import compile_by_elimination

    assert compile_by_elimination(cnf).model_count() == len(projected_models(cnf))


@pytest.mark.parametrize(("n", "k"), [(12, 6), (30, 15)])
def test_bucket_elimination_compiles_a_sequential_counter_small(n, k):
    import math

    from autonesy.tasks.encoding import ClauseBuilder
    from autonesy.tools.compile import compile_by_elimination

    sdd = compile_by_elimination(ClauseBuilder(n).exactly(list(range(1, n + 1)), k).cnf())
    assert sdd.model_count() == math.comb(n, k)
    assert sdd.size <= 2 * n * k  # an exactly-k of n has a polynomial SDD: the counter's state, not its registers


@settings(max_examples=60, deadline=None)
@given(cnfs(max_task_vars=5, max_aux=6, max_clauses=12))
def test_anchored_order_is_a_permutation_with_task_variables_in_order(cnf):
    from autonesy.tools.compile import anchored_order

    order = anchored_order(cnf)
    assert sorted(order) == list(range(1, cnf.num_vars + 1))
    assert [var for var in order if var <= cnf.num_task_vars] == list(cnf.task_vars)


def test_anchored_order_puts_a_counter_register_after_its_input():
    # x1..x3 with registers: a4 hangs on x2 (shares a clause), a5 only on a4.
    cnf = CNF(3, ((-2, 4), (-4, 5), (1, 3)), 5)
    from autonesy.tools.compile import anchored_order

    assert anchored_order(cnf) == [1, 2, 4, 5, 3]


def test_bucket_elimination_refuses_a_vtree_deeper_than_pysdd_can_recurse(monkeypatch):
    import autonesy.tools.compile as compile_module

    monkeypatch.setattr(compile_module, "LINEAR_VTREE_MAX_VARS", 4)
    with pytest.raises(CompilationBudgetExceeded, match="5 variables, more than a right-linear vtree of 4"):
        compile_module.compile_by_elimination(CNF(2, ((1, 5),), 5))


def test_circuits_kept_from_models_stay_within_their_bytes(monkeypatch):
    import autonesy.tools.compile as compiling

    monkeypatch.setattr(compiling, "_BUILT", compiling.OrderedDict())
    monkeypatch.setattr(compiling, "BUILT_BYTES", 4_000)
    for k in range(1, 7):  # exactly-k of 8: six different model sets, about 1.4 KB of texts each
        compile_from_models([row for row in itertools.product((0, 1), repeat=8) if sum(row) == k], 8)
        assert sum(len(a) + len(b) for a, b in compiling._BUILT.values()) <= 4_000
    assert 0 < len(compiling._BUILT) < 6  # the newest kept, the oldest let go
