"""Tseitin encoding, differentially against the expression's truth table (expr.evaluate)."""

from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.counting import enumerate_models
from autonesy.tools.formats.expr import Const, Op, Var, evaluate
from autonesy.tools.formats.tseitin import tseitin


def truth_table(exprs, n):
    rows = set()
    for bits in product((0, 1), repeat=n):
        assignment = {i + 1: bool(b) for i, b in enumerate(bits)}
        if all(evaluate(e, assignment) for e in exprs):
            rows.add(bits)
    return rows


def projected_models(cnf):
    return set(enumerate_models(cnf))


def full_model_count(cnf):
    everything = CNF(cnf.num_vars, cnf.clauses, cnf.num_vars)
    return len(enumerate_models(everything))


NARY = ("and", "or", "xor", "iff")


def decode(n, codes):
    """A list of expression trees from a flat list of integers (cheap to draw, easy to shrink).

    A stack machine: each code pushes a variable or constant, or pops operands into an operator;
    one kind duplicates a stack entry so sub-expressions get shared. The last entry is one root;
    the others are XOR-ed into a second root, so every node drawn is used.
    """
    stack = []
    for code in codes:
        kind, arg = code % 8, code // 8
        if kind <= 1 or not stack or (kind == 2 and arg % 3):
            stack.append(Var(arg % n + 1))
        elif kind == 2:
            stack.append(Const(bool(arg % 2)))
        elif kind == 3:
            stack.append(Op("not", (stack.pop(),)))
        elif kind == 4 and len(stack) >= 2:
            right, left = stack.pop(), stack.pop()
            stack.append(Op("implies", (left, right)))
        elif kind in (4, 5):
            arity = min(len(stack), 1 + (arg // 4) % 4)
            args = tuple(stack[-arity:])
            del stack[-arity:]
            stack.append(Op(NARY[arg % 4], args))
        else:
            stack.append(stack[arg % len(stack)])
    if len(stack) > 2:
        return [Op("xor", tuple(stack[:-1])), stack[-1]]
    return stack


@st.composite
def cases(draw):
    n = draw(st.integers(1, 8))
    codes = draw(st.lists(st.integers(0, 255), min_size=6, max_size=30))
    return n, decode(n, codes)


@settings(max_examples=120, deadline=None)
@given(cases())
def test_projected_models_are_the_truth_table(case):
    n, exprs = case
    cnf = tseitin(exprs, n)
    assert cnf.num_task_vars == n
    assert all(0 < abs(lit) <= cnf.num_vars for clause in cnf.clauses for lit in clause)
    assert projected_models(cnf) == truth_table(exprs, n)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_every_auxiliary_is_defined(case):
    # a_g <-> gate for every auxiliary: each projected model extends in exactly one way
    n, exprs = case
    cnf = tseitin(exprs, n)
    assert full_model_count(cnf) == len(truth_table(exprs, n))


def test_clauses_of_literals_need_no_auxiliary():
    a, b, c = Var(1), Var(2), Var(3)
    cnf = tseitin([Op("or", (a, Op("not", (b,)), Op("or", (c,)))), Op("and", (a, b))], 3)
    assert cnf.clauses == ((1, -2, 3), (1,), (2,))
    assert cnf.num_vars == 3


def test_usual_constraint_shapes_become_single_clauses():
    a, b, c = Var(1), Var(2), Var(3)
    nand = Op("not", (Op("and", (a, b)),))
    rule = Op("implies", (Op("and", (a, Op("not", (b,)))), Op("or", (c, Op("not", (Op("not", (a,)),))))))
    cnf = tseitin([nand, rule, Op("implies", (a, b))], 3)
    assert cnf.clauses == ((-1, -2), (-1, 2, 3, 1), (-1, 2))
    assert cnf.num_aux_vars == 0


def test_shared_subexpressions_share_one_auxiliary():
    gate = Op("xor", (Var(1), Var(2)))
    once = tseitin([Op("or", (gate, Var(3)))], 3)
    twice = tseitin([Op("or", (gate, Var(3))), Op("or", (gate, Op("not", (Var(3),))))], 3)
    assert twice.num_aux_vars == once.num_aux_vars + 1  # the second OR only


@pytest.mark.parametrize(
    "exprs, expected",
    [
        ([], 8),
        ([Const(True)], 8),
        ([Const(False)], 0),
        ([Op("iff", (Var(1),))], 8),  # one operand: always equal
        ([Op("xor", (Var(1),))], 4),
        ([Op("iff", (Var(1), Var(2), Var(3)))], 2),  # all equal
        ([Op("xor", (Var(1), Var(2), Var(3)))], 4),  # odd number true
        ([Op("xor", (Var(1), Var(1)))], 0),
        ([Op("iff", (Var(1), Var(1)))], 8),
        ([Op("or", (Var(1), Const(False)))], 4),
    ],
)
def test_edge_cases(exprs, expected):
    cnf = tseitin(exprs, 3)
    assert len(projected_models(cnf)) == expected == len(truth_table(exprs, 3))


def test_variable_outside_the_task_is_rejected():
    with pytest.raises(ValueError):
        tseitin([Var(4)], 3)
    with pytest.raises(ValueError):
        tseitin([Var(0)], 3)
