"""Rendering formulas as answer text (tools/formats/render.py) and the tasks' reference formalizations
(tasks/reference.py): what is rendered converts back to a formula with the same models on
the task variables, and every task's reference scores `equal` (F1 = 1) against its ground truth in
every format."""

from __future__ import annotations

import itertools

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autonesy.tasks.reference import NoReference, reference_formalization, reference_origin
from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import enumerate_models
from autonesy.tools.formats import FORMATS, convert
from autonesy.tools.formats.expr import Const, Op, Var, evaluate, tree_size
from autonesy.tools.formats.render import render_cnf, render_expression
from autonesy.tools.formats.tseitin import tseitin
from autonesy.tools.metrics import score_formula

NAMES = ["a", "b2", "cx", "d_1", "e", "f"]
PYTHON_FORMATS = ("pysat", "cpmpy", "sympy")
AUX_TASKS = ("kand-logic-2", "cebab", "kand-logic")  # ground truths with auxiliaries and no rule_list


def _models(cnf: CNF) -> set[tuple[int, ...]]:
    return set(enumerate_models(cnf))


def _converted(text: str, fmt: str, names) -> CNF:
    conversion = convert(f"<cnf>\n{text}</cnf>", fmt, names)
    assert conversion.ok, f"{conversion.error}\n--- source ---\n{conversion.source}"
    assert conversion.autofixes == ()  # rendered text needs no repair
    return conversion.cnf


# --------------------------------------------------------------------------------------------------
# render_cnf
# --------------------------------------------------------------------------------------------------


def _aux_free(cnf: CNF) -> CNF:
    n = cnf.num_task_vars
    return CNF(n, tuple(c for c in cnf.clauses if all(abs(lit) <= n for lit in c)), n)


def _check_cnf_round_trip(fmt: str, cnf: CNF) -> None:
    if fmt in ("nat", "sympy"):
        cnf = _aux_free(cnf)  # these formats have no auxiliary variables
    names = NAMES[: cnf.num_task_vars]
    back = _converted(render_cnf(cnf, names, fmt), fmt, names)
    assert back.num_task_vars == cnf.num_task_vars
    assert _models(back) == projected_models(cnf)


@pytest.mark.parametrize("fmt", ("dimacs", "nat"))
@settings(max_examples=100, deadline=None)
@given(cnf=cnfs(max_task_vars=5, max_aux=3, max_clauses=7))
def test_render_cnf_round_trips(fmt, cnf):
    _check_cnf_round_trip(fmt, cnf)


def test_simplify_memo_survives_reused_ids_of_temporaries():
    # iff(a, a, iff(a, a, a)): expanding the inner n-ary iff makes temporaries whose ids Python
    # reuses; a memo keyed by bare ids returned another expression's result (found by hypothesis).
    a = Var(1)
    formula = (1, [Op("iff", (a, a, Op("iff", (a, a, a))))])
    for fmt in ("dimacs", "nat"):
        _check_expression_round_trip(fmt, formula)
    b = Var(2)
    nested = (2, [Op("iff", (a, b, Op("iff", (b, a, Op("iff", (a, a, b)))))), Op("iff", (b, b, a, a))])
    _check_expression_round_trip("dimacs", nested)


# Each example of a Python format runs a sandboxed program (about a second for CPMpy): a few by
# default, more in the slow suite.
@pytest.mark.parametrize("fmt", PYTHON_FORMATS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cnf=cnfs(max_task_vars=5, max_aux=3, max_clauses=7))
def test_render_cnf_round_trips_in_python_formats(fmt, cnf):
    _check_cnf_round_trip(fmt, cnf)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", PYTHON_FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cnf=cnfs(max_task_vars=5, max_aux=3, max_clauses=7))
def test_render_cnf_round_trips_in_python_formats_more(fmt, cnf):
    _check_cnf_round_trip(fmt, cnf)


@pytest.mark.parametrize("fmt", ("dimacs", "pysat"))
def test_render_cnf_keeps_the_clauses_exactly(fmt):
    cnf = CNF(3, ((1, -2), (4, -3), (-4, 5, 2), (3,)), 6)  # auxiliary 6 unused
    back = _converted(render_cnf(cnf, ["a", "b", "c"], fmt), fmt, ["a", "b", "c"])
    assert back.clauses == cnf.clauses


@pytest.mark.parametrize("fmt", FORMATS)
def test_render_cnf_edge_cases(fmt):
    names = ["a", "b"]
    empty = CNF(2, ())  # no clauses: true
    assert _models(_converted(render_cnf(empty, names, fmt), fmt, names)) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    unsat = CNF(2, ((1, 2), ()))  # an empty clause: false (no format writes an empty clause)
    assert _models(_converted(render_cnf(unsat, names, fmt), fmt, names)) == set()


@pytest.mark.parametrize("fmt", FORMATS)
def test_auxiliary_names_avoid_task_names(fmt):
    names = ["aux", "range", "aux_"]  # the rendered program must not shadow these
    cnf = CNF(3, ((1, 4), (-4, 2), (-2, -3, 5), (-5, 1)), 5)
    if fmt in ("nat", "sympy"):
        cnf = _aux_free(cnf)
    text = render_cnf(cnf, names, fmt)
    assert _models(_converted(text, fmt, names)) == projected_models(cnf)


def test_render_cnf_text_per_format():
    names = ["rain", "wet", "slippery"]
    cnf = CNF(3, ((-1, 2), (-2, -3), (1, 3), (4, -1), (-4,)), 4)
    assert render_cnf(cnf, names, "dimacs") == (
        "c var 1 rain\nc var 2 wet\nc var 3 slippery\nc variable 4 is auxiliary\np cnf 4 5\n"
        "-1 2 0\n-2 -3 0\n1 3 0\n4 -1 0\n-4 0\n"
    )
    pysat = render_cnf(cnf, names, "pysat")
    assert "aux = [vpool.id() for _ in range(1)]" in pysat
    assert "    [-rain, wet],\n" in pysat and "    [aux[0], -rain],\n" in pysat
    cpmpy = render_cnf(cnf, names, "cpmpy")
    assert 'aux = cp.boolvar(shape=(1,), name="aux")' in cpmpy
    assert "    cp.any([~rain, wet]),\n" in cpmpy and "    ~aux[0],\n" in cpmpy
    plain = CNF(3, ((-1, 2), (-2, -3), (1, 3), (-1, -2, 3)))
    assert render_cnf(plain, names, "nat") == (
        "rain IMPLIES wet\nNOT (wet AND slippery)\nrain OR slippery\nrain AND wet IMPLIES slippery\n"
    )
    assert render_cnf(plain, names, "sympy") == (
        "constraints = [\n    Implies(rain, wet),\n    ~(wet & slippery),\n    rain | slippery,\n"
        "    Implies(rain & wet, slippery),\n]\n"
    )


@pytest.mark.parametrize("fmt", ("nat", "sympy"))
def test_render_cnf_refuses_auxiliaries_where_the_format_has_none(fmt):
    with pytest.raises(ValueError, match="auxiliary"):
        render_cnf(CNF(2, ((1, 3), (-3, 2)), 3), ["a", "b"], fmt)


def test_render_cnf_checks_its_arguments():
    with pytest.raises(ValueError, match="names"):
        render_cnf(CNF(2, ((1,),)), ["a"], "dimacs")
    with pytest.raises(ValueError, match="unknown format"):
        render_cnf(CNF(1, ((1,),)), ["a"], "prolog")


# --------------------------------------------------------------------------------------------------
# render_expression
# --------------------------------------------------------------------------------------------------


def expressions(n: int):
    leaves = st.one_of(st.integers(1, n).map(Var), st.booleans().map(Const))

    def grow(children):
        nary = st.tuples(st.sampled_from(("and", "or", "xor", "iff")), st.lists(children, min_size=1, max_size=4))
        return st.one_of(
            children.map(lambda c: Op("not", (c,))),
            st.tuples(children, children).map(lambda p: Op("implies", p)),
            nary.map(lambda t: Op(t[0], tuple(t[1]))),
        )

    return st.recursive(leaves, grow, max_leaves=12)


@st.composite
def formulas(draw):
    n = draw(st.integers(1, 4))
    return n, draw(st.lists(expressions(n), min_size=1, max_size=3))


def _truth_table(exprs, n: int) -> set[tuple[int, ...]]:
    out = set()
    for values in itertools.product((0, 1), repeat=n):
        assignment = {i + 1: bool(v) for i, v in enumerate(values)}
        if all(evaluate(e, assignment) for e in exprs):
            out.add(values)
    return out


def _check_expression_round_trip(fmt: str, formula) -> None:
    n, exprs = formula
    names = NAMES[:n]
    back = _converted(render_expression(exprs, names, fmt), fmt, names)
    assert _models(back) == _truth_table(exprs, n)


@pytest.mark.parametrize("fmt", ("dimacs", "nat"))
@settings(max_examples=100, deadline=None)
@given(formula=formulas())
def test_render_expression_round_trips(fmt, formula):
    _check_expression_round_trip(fmt, formula)


# Each example of a Python format runs a sandboxed program (about a second for CPMpy): a few by
# default, more in the slow suite.
@pytest.mark.parametrize("fmt", PYTHON_FORMATS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formula=formulas())
def test_render_expression_round_trips_in_python_formats(fmt, formula):
    _check_expression_round_trip(fmt, formula)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", PYTHON_FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formula=formulas())
def test_render_expression_round_trips_in_python_formats_more(fmt, formula):
    _check_expression_round_trip(fmt, formula)


@pytest.mark.parametrize("fmt", ("nat", "sympy", "cpmpy"))
def test_long_expressions_are_broken_over_lines(fmt):
    names = [f"variable_{i}" for i in range(1, 9)]
    v = [Var(i) for i in range(1, 9)]
    big = Op("or", tuple(Op("and", (v[i], v[(i + 1) % 8], Op("not", (v[(i + 3) % 8],)))) for i in range(8)))
    expr = Op("iff", (big, Op("xor", tuple(v))))
    text = render_expression(expr, names, fmt)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert len(text.splitlines()) > 3
    assert _models(_converted(text, fmt, names)) == _truth_table([expr], 8)


def test_render_expression_text():
    names = ["a", "b", "c"]
    a, b, c = Var(1), Var(2), Var(3)
    expr = Op("and", (Op("or", (a, b)), Op("implies", (Op("not", (a,)), Op("iff", (b, c, Const(True)))))))
    assert render_expression(expr, names, "nat") == "a OR b\nNOT a IMPLIES ((b IFF c) AND b)\n"
    assert render_expression(expr, names, "sympy") == (
        "constraints = [\n    Or(a, b),\n    Implies(~a, And(Equivalent(b, c), b)),\n]\n"
    )
    assert render_expression(expr, names, "cpmpy") == (
        "constraints = [\n    cp.any([a, b]),\n    (~a).implies(cp.all([b == c, b])),\n]\n"
    )
    assert render_expression(Const(True), names, "nat") == "TRUE\n"
    assert render_expression(Op("and", (a, Op("not", (a,)))), names, "nat") == "a\nNOT a\n"


# --------------------------------------------------------------------------------------------------
# Reference formalizations
# --------------------------------------------------------------------------------------------------


def _assert_scores_equal(name: str, cnf: CNF, where: str) -> None:
    task = get_task(name)
    score = score_formula(cnf, task.ground_truth, method="auto")
    assert score.exact
    assert (score.relation, score.f1) == ("equal", 1.0), f"{where}: {score}"


def _assert_reference_scores_equal(name: str, fmt: str) -> None:
    task = get_task(name)
    answer = reference_formalization(task, fmt)
    conversion = convert(answer, fmt, task.names)
    assert conversion.ok, f"{name} in {fmt}: {conversion.error}"
    assert conversion.autofixes == ()
    if fmt in ("dimacs", "pysat"):  # the ground truth's own clauses, auxiliaries numbered alike
        assert conversion.cnf.clauses == task.ground_truth.clauses
    _assert_scores_equal(name, conversion.cnf, f"{name} in {fmt}")


# The default suite: every task in DIMACS and NAT (NAT exercises the auxiliary-free references:
# road-r's rule list, the reference expressions), every format on six small tasks (two of them with
# auxiliaries). The rest of the 18 × 5 matrix is `slow`: the Python formats run a sandboxed program
# each, and road-r in DIMACS (its ground truth verbatim) takes seconds to count.
SMALL_TASKS = ("chx", "fashion", "cle4evr", "sushi", "kand-logic-2", "cebab")
FAST_CASES = [(t, f) for f in ("dimacs", "nat") for t in TASK_NAMES if (t, f) != ("road-r", "dimacs")] + [
    (t, f) for f in PYTHON_FORMATS for t in SMALL_TASKS
]
SLOW_CASES = [("road-r", "dimacs")] + [(t, f) for f in PYTHON_FORMATS for t in TASK_NAMES if t not in SMALL_TASKS]


@pytest.mark.parametrize(("name", "fmt"), FAST_CASES)
def test_reference_formalization_scores_equal(name, fmt):
    _assert_reference_scores_equal(name, fmt)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "fmt"), SLOW_CASES)
def test_reference_formalization_scores_equal_full_matrix(name, fmt):
    _assert_reference_scores_equal(name, fmt)


def test_matrix_covers_every_task_and_format():
    assert sorted(FAST_CASES + SLOW_CASES) == sorted(itertools.product(TASK_NAMES, FORMATS))
    assert len(TASK_NAMES) == 18


def test_reference_origins():
    for name in TASK_NAMES:
        task = get_task(name)
        for fmt in ("dimacs", "pysat", "cpmpy"):
            assert reference_origin(task, fmt) == "ground_truth"
        expected = (
            "ground_truth"
            if task.ground_truth.num_aux_vars == 0
            else "rule_list"
            if name == "road-r"
            else "reference_expression"
        )
        assert reference_origin(task, "nat") == reference_origin(task, "sympy") == expected, name
    assert {n for n in TASK_NAMES if reference_origin(get_task(n), "nat") == "reference_expression"} == set(AUX_TASKS)


@pytest.mark.parametrize("name", AUX_TASKS)
def test_reference_expression_is_the_ground_truth(name):
    task = get_task(name)
    expr = task.reference_expression()
    assert tree_size(expr) < 3000
    _assert_scores_equal(name, tseitin([expr], task.num_vars), f"{name}'s reference expression")


def _toy_task(**hooks) -> Task:
    return Task(
        name="toy",
        variables=(Variable("p", "p holds"), Variable("q", "q holds")),
        descriptions=Descriptions(detailed="p or q, through an auxiliary", not_detailed="p or q"),
        metadata=TaskMetadata("none", "none", "none", None, "none", "none"),
        encode=lambda: CNF(2, ((3,), (-3, 1, 2)), 3),
        oracle_batch=None,
        **hooks,
    )


def test_no_reference_for_auxiliary_free_formats_is_a_clear_error():
    task = _toy_task()
    assert "<cnf>" in reference_formalization(task, "dimacs")
    with pytest.raises(NoReference, match="neither a rule_list nor a reference_expression"):
        reference_formalization(task, "nat")
    with pytest.raises(ValueError, match="unknown format"):
        reference_formalization(task, "prolog")


def test_reference_expression_hook_is_used():
    task = _toy_task(reference_expression=lambda: Op("or", (Var(1), Var(2))))
    answer = reference_formalization(task, "nat")
    assert "<cnf>\np OR q\n</cnf>" in answer
    assert _models(convert(answer, "nat", task.names).cnf) == {(0, 1), (1, 0), (1, 1)}
