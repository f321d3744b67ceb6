"""Literal counts: the counter's projection against brute force, and which declarations are believed."""

import itertools
import json

import pytest
from bruteforce import cnfs, projected_models, sat_accepts, satisfies
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF, parse_dimacs, to_dimacs
from autonesy.tools.literal_count import COMMENT, LiteralCount, recognised, with_literal_counts


@st.composite
def counted_cnfs(draw):
    """A random CNF and a literal count over its task literals (repeats and negations allowed), with a
    random set of allowed totals or residues."""
    cnf = draw(cnfs(max_task_vars=5, max_aux=2, max_clauses=4))
    n = cnf.num_task_vars
    literals = draw(st.lists(st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v))), min_size=0, max_size=7))
    modulus = draw(st.none() | st.integers(2, 5))
    top = modulus - 1 if modulus else len(literals)
    allowed = draw(st.lists(st.integers(0, top), max_size=top + 1))
    return cnf, literals, modulus, allowed


def holds(assignment, literals, modulus, allowed):
    """The constraint read from its definition: how many listed literals are true, or that modulo ``modulus``."""
    true = sum(assignment[abs(lit)] == (lit > 0) for lit in literals)
    return (true % modulus if modulus else true) in allowed


@settings(max_examples=300, deadline=None)
@given(counted_cnfs())
def test_the_counter_projects_to_exactly_the_assignments_that_satisfy_the_count(case):
    cnf, literals, modulus, allowed = case
    counted = with_literal_counts(cnf, [LiteralCount(tuple(literals), tuple(allowed), modulus)])
    expected = {
        row
        for row in projected_models(cnf)
        if holds({i + 1: bool(v) for i, v in enumerate(row)}, literals, modulus, allowed)
    }
    # the counter's many auxiliaries: each task assignment checked by a SAT call, not by brute force
    rows = itertools.product((0, 1), repeat=cnf.num_task_vars)
    assert {row for row in rows if sat_accepts(counted, row)} == expected


@st.composite
def guarded_cnfs(draw):
    """A counted CNF whose count also has guards: task literals, each with its own allowed set."""
    cnf, literals, modulus, allowed = draw(counted_cnfs())
    top = modulus - 1 if modulus else len(literals)
    n = cnf.num_task_vars
    guard = st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v)))
    guards = draw(st.lists(st.tuples(guard, st.lists(st.integers(0, top), max_size=top + 1)), max_size=3))
    return cnf, literals, modulus, allowed, guards


@settings(max_examples=300, deadline=None)
@given(guarded_cnfs())
def test_a_guarded_counter_projects_to_exactly_the_assignments_that_satisfy_its_guards(case):
    cnf, literals, modulus, allowed, guards = case
    count = LiteralCount(tuple(literals), tuple(allowed), modulus, tuple((g, tuple(a)) for g, a in guards))
    counted = with_literal_counts(cnf, [count])
    expected = set()
    for row in projected_models(cnf):
        assignment = {i + 1: bool(v) for i, v in enumerate(row)}
        if holds(assignment, literals, modulus, allowed) and all(
            holds(assignment, literals, modulus, a) for g, a in guards if assignment[abs(g)] == (g > 0)
        ):
            expected.add(row)
    rows = itertools.product((0, 1), repeat=cnf.num_task_vars)
    assert {row for row in rows if sat_accepts(counted, row)} == expected
    assert [c for c, _ in recognised(counted)] == [count]
    assert count.size() == len(count.clauses(cnf.num_vars + 1)[0])  # the size checked before writing


def test_a_declaration_whose_guards_outgrow_the_formula_is_refused_before_it_is_written(monkeypatch):
    # one literal, 5,000 guards that each allow no total: a clause each, in a formula of 3 clauses
    guards = [[1, []] for _ in range(5_000)]
    comment = COMMENT + json.dumps({"literals": [1], "allowed": [0, 1], "first_aux": 2, "guards": guards})
    cnf = CNF(1, ((2,), (-2, 1, 3), (-2, -1, 3)), 10, comments=(comment,))
    monkeypatch.setattr(
        LiteralCount, "clauses", lambda *a: pytest.fail("a counter larger than the formula was written")
    )
    assert recognised(cnf) == []


def test_an_integer_equal_to_a_count_is_one_guard_per_value():
    # x in 0..2 one-hot (task variables 1-3), x = b4 + b5 (4, 5): (x, b4, b5) in (0,0,0), (1,1,0), (1,0,1), (2,1,1)
    one_hot = ((1, 2, 3), (-1, -2), (-1, -3), (-2, -3))
    count = LiteralCount((4, 5), (0, 1, 2), guards=((1, (0,)), (2, (1,)), (3, (2,))))
    cnf = with_literal_counts(CNF(5, one_hot), [count])
    assert projected_models(cnf) == {(1, 0, 0, 0, 0), (0, 1, 0, 1, 0), (0, 1, 0, 0, 1), (0, 0, 1, 1, 1)}


def test_a_guard_that_its_clauses_do_not_say_is_ignored():
    cnf = with_literal_counts(CNF(4, ()), [LiteralCount((1, 2, 3), (0, 1, 2, 3), guards=((4, (1,)),))])
    assert len(recognised(cnf)) == 1
    assert recognised(_declared(cnf, guards=[[4, [1, 2]]])) == []  # another allowed set
    assert recognised(_declared(cnf, guards=[[-4, [1]]])) == []  # the other literal
    assert recognised(_declared(cnf, guards=[])) == []  # the guard's clauses say more than no guard
    # a guard over the counter's own states: its clauses are not the counter's alone
    state = cnf.num_task_vars + 2
    inner = with_literal_counts(CNF(4, (), 4), [LiteralCount((1, 2, 3), (0, 1, 2, 3), guards=((state, (1,)),))])
    assert recognised(inner) == []


def test_exactly_one_of_twelve_needs_three_states_a_literal():
    # totals 0 and 1, then "2 or more": the counter's auxiliaries are 1 + 2 + 3 * 11 (the first steps
    # reach fewer states)
    count = LiteralCount(tuple(range(1, 13)), (1,))
    cnf = with_literal_counts(CNF(12, ()), [count])
    assert cnf.num_aux_vars == 1 + 2 + 3 * 11
    assert [c for c, _ in recognised(cnf)] == [count]


def test_a_declaration_survives_dimacs_and_is_recognised_again():
    cnf = with_literal_counts(CNF(4, ((1, 2),)), [LiteralCount((1, 2, 3, 4, 4), (0, 2), modulus=3)])
    again = parse_dimacs(to_dimacs(cnf, comments=cnf.comments), num_task_vars=4)
    assert [c for c, _ in recognised(again)] == [LiteralCount((1, 2, 3, 4, 4), (0, 2), 3)]


def test_a_ground_truth_s_declaration_is_recognised_in_its_conjunction_with_an_answer():
    truth = with_literal_counts(CNF(3, ()), [LiteralCount((1, 2, 3), (1,))])
    answer = CNF(3, ((1, 4), (-4, 2)), 4)  # an auxiliary of its own, renumbered above the truth's
    both = truth.conjoin(answer)
    assert [c for c, _ in recognised(both)] == [LiteralCount((1, 2, 3), (1,))]
    assert projected_models(both) == {(1, 0, 0), (0, 1, 0)}  # exactly one of three, and x1 or else x2


def _declared(cnf: CNF, **changes) -> CNF:
    """``cnf`` with its one declaration's fields changed (the clauses as they are)."""
    (comment,) = [c for c in cnf.comments if c.startswith(COMMENT)]
    fields = {**json.loads(comment[len(COMMENT) :]), **changes}
    return CNF(cnf.num_task_vars, cnf.clauses, cnf.num_vars, (COMMENT + json.dumps(fields),))


def test_a_declaration_that_its_clauses_do_not_say_is_ignored():
    cnf = with_literal_counts(CNF(4, ()), [LiteralCount((1, 2, 3, 4), (1,))])
    assert len(recognised(cnf)) == 1
    # forged: another allowed set, other literals, or the counter's states elsewhere
    assert recognised(_declared(cnf, allowed=[1, 2])) == []
    assert recognised(_declared(cnf, literals=[1, 2, 3, -4])) == []
    assert recognised(_declared(cnf, first_aux=cnf.num_task_vars + 2)) == []
    assert recognised(_declared(cnf, modulus=2)) == []
    # a state used by another clause: the clauses no longer say only what the declaration says
    extra = CNF(4, (*cnf.clauses, (-(cnf.num_task_vars + 2), 1)), cnf.num_vars, cnf.comments)
    assert recognised(extra) == []
    # a clause of the counter missing
    assert recognised(CNF(4, cnf.clauses[:-1], cnf.num_vars, cnf.comments)) == []


@pytest.mark.parametrize(
    "comment",
    [
        COMMENT + "not json",
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1]}),  # no first_aux
        COMMENT + json.dumps({"literals": "12", "allowed": [1], "first_aux": 5}),
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 1}),  # a task variable
        COMMENT + json.dumps({"literals": [1, 99], "allowed": [1], "first_aux": 5}),  # beyond the CNF
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [7], "first_aux": 5}),  # more than two can be
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 5, "modulus": "3"}),
        COMMENT + json.dumps({"literals": [1, 2] * 10_000, "allowed": [1], "first_aux": 5}),  # too long
        COMMENT + json.dumps([1, 2]),
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 5, "guards": [[3]]}),
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 5, "guards": [[99, [1]]]}),
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 5, "guards": [[3, [9]]]}),
        COMMENT + json.dumps({"literals": [1, 2], "allowed": [1], "first_aux": 5, "guards": {"3": [1]}}),
    ],
)
def test_malformed_declarations_are_ignored(comment):
    cnf = with_literal_counts(CNF(4, ()), [LiteralCount((1, 2), (1,))])
    assert recognised(CNF(4, cnf.clauses, cnf.num_vars, (comment,))) == []


def test_a_declaration_larger_than_the_formula_is_not_written_out():
    # 10,000 literals modulo 1,000 would be about 20 million clauses: refused at once, by size
    import time

    comment = COMMENT + json.dumps({"literals": [1] * 10_000, "allowed": [0], "first_aux": 2, "modulus": 1_000})
    start = time.process_time()
    assert recognised(CNF(1, ((1,),), 2, (comment,))) == []
    assert time.process_time() - start < 1.0


def test_many_forged_declarations_cost_no_more_than_the_formula():
    # each comment alone would fit (100 literals modulo 50: about 7,400 clauses, in a formula of 20,000),
    # but 2,000 of them (15 million clauses) are written out only while they still fit in it together
    import time

    forged = COMMENT + json.dumps({"literals": list(range(1, 101)), "allowed": [0], "first_aux": 101, "modulus": 50})
    start = time.process_time()
    assert recognised(CNF(100, ((1,),) * 20_000, 10_000, (forged,) * 2_000)) == []
    assert time.process_time() - start < 2.0


def test_two_declarations_cannot_share_states():
    # other clauses enough for both to be read (else the second is not even written out)
    cnf = with_literal_counts(CNF(3, ()), [LiteralCount((1, 2, 3), (1,))])
    extra = tuple((1, 2, 3, v) for v in range(cnf.num_vars + 1, cnf.num_vars + 21))
    padded = CNF(3, cnf.clauses + extra, cnf.num_vars + 20, cnf.comments)
    (comment,) = cnf.comments
    assert len(recognised(padded)) == 1
    assert recognised(CNF(3, padded.clauses, padded.num_vars, (comment, comment))) == []


@pytest.mark.parametrize(
    ("literals", "allowed", "modulus"),
    [((0, 1), (1,), None), ((1, 2), (3,), None), ((1, 2), (1,), 0), ((1, 2), (4,), 3)],
)
def test_a_count_that_cannot_hold_its_values_is_refused(literals, allowed, modulus):
    with pytest.raises(ValueError):
        LiteralCount(literals, allowed, modulus)


def test_the_counter_admits_the_sums_its_declaration_names():
    # x1 + x2 + x2 (x2 listed twice) even: (0,0) sum 0, (1,1) sum 3, (0,1) sum 2, (1,0) sum 1
    cnf = with_literal_counts(CNF(2, ()), [LiteralCount((1, 2, 2), (0,), modulus=2)])
    assert projected_models(cnf) == {(0, 0), (0, 1)}
    assert not satisfies(cnf.clauses, {1: True, 2: True, **{v: False for v in range(3, cnf.num_vars + 1)}})
