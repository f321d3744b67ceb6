"""The four digit-arithmetic tasks: mn-add, mn-add-bin, mn-mul, mn-mul-bin."""

import dataclasses
import itertools

import numpy as np
import pytest
from pysat.solvers import Solver

from autonesy.tasks.catalogue.digits import mn_add, mn_add_bin, mn_mul, mn_mul_bin
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tools.compile import compile_to_sdd

BUILDERS = {"mn-add": mn_add, "mn-add-bin": mn_add_bin, "mn-mul": mn_mul, "mn-mul-bin": mn_mul_bin}
OPS = {
    "mn-add": lambda a, b: a + b,
    "mn-add-bin": lambda a, b: a + b,
    "mn-mul": lambda a, b: a * b,
    "mn-mul-bin": lambda a, b: a * b,
}
SHAPE = {  # variables, result width (one-hot size or bit count), binary?
    "mn-add": (39, 19, False),
    "mn-add-bin": (13, 5, True),
    "mn-mul": (102, 82, False),
    "mn-mul-bin": (15, 7, True),
}


@pytest.fixture(scope="module", params=list(BUILDERS))
def task(request):
    return BUILDERS[request.param]()


def encode(name, a, b, r):
    """Assignment for digits a, b and result r, written independently of the task module."""
    _, width, binary = SHAPE[name]
    if binary:
        return (
            [(a >> k) & 1 for k in range(4)] + [(b >> k) & 1 for k in range(4)] + [(r >> k) & 1 for k in range(width)]
        )
    return [int(a == d) for d in range(10)] + [int(b == d) for d in range(10)] + [int(r == v) for v in range(width)]


def cnf_accepts(cnf, row):
    """Whether the CNF (auxiliaries free) has a model extending this task assignment — a SAT call."""
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        return solver.solve(assumptions=[i + 1 if v else -(i + 1) for i, v in enumerate(row)])


def both_say(task, row):
    by_oracle, by_cnf = task.oracle(row), cnf_accepts(task.ground_truth, row)
    assert by_oracle == by_cnf, f"oracle {by_oracle}, ground truth {by_cnf} on {row}"
    return by_oracle


def test_shape_and_names(task):
    n, width, binary = SHAPE[task.name]
    assert task.num_vars == n
    if binary:
        assert task.names[0] == "first_digit_bit0" and "least significant" in task.variables[0].meaning
        assert "weight 8" in task.variables[3].meaning and task.names[-1].endswith(f"_bit{width - 1}")
    else:
        assert task.names[:2] == ["first_digit_0", "first_digit_1"] and task.names[10] == "second_digit_0"
        assert task.names[-1].endswith(f"_{width - 1}")
    assert task.ground_truth.num_aux_vars == 0


def test_model_count_is_the_hundred_digit_pairs(task):
    expected = len(list(itertools.product(range(10), range(10))))
    report = prove_equivalence(task)
    assert report.model_count == expected == 100
    rows = list(task.enumerate_valid())
    assert len(rows) == 100 and len({tuple(r) for r in rows}) == 100
    assert {tuple(r) for r in rows} == {
        tuple(encode(task.name, a, b, OPS[task.name](a, b))) for a in range(10) for b in range(10)
    }


def test_clause_counts_match_the_published_encoding(task):
    assert len(task.ground_truth.clauses) == task.metadata.published_clauses


def test_hand_written_examples(task):
    name = task.name
    op = OPS[name]
    assert both_say(task, encode(name, 3, 4, op(3, 4)))  # 3+4=7 / 3*4=12
    assert both_say(task, encode(name, 0, 9, op(0, 9)))
    assert both_say(task, encode(name, 9, 9, op(9, 9)))
    assert not both_say(task, encode(name, 3, 4, op(3, 4) + 1))  # 3+4=8 / 3*4=13
    assert not both_say(task, encode(name, 4, 3, 0))
    binary = SHAPE[name][2]
    assert both_say(task, [0] * task.num_vars) == binary  # binary: 0∘0 = 0; one-hot: no digit at all
    assert not both_say(task, [1] * task.num_vars)


@pytest.mark.parametrize("name", ["mn-add", "mn-mul"])
def test_one_hot_groups_must_hold_exactly_one(name):
    task = BUILDERS[name]()
    row = encode(task.name, 3, 4, OPS[task.name](3, 4))
    two_firsts = list(row)
    two_firsts[5] = 1  # first digit 3 and 5 at once
    assert not both_say(task, two_firsts)
    no_second = list(row)
    no_second[14] = 0
    assert not both_say(task, no_second)
    extra_result = list(row)
    extra_result[20] = 1  # result 0 as well
    assert not both_say(task, extra_result)


@pytest.mark.parametrize("name", ["mn-add-bin", "mn-mul-bin"])
def test_binary_codes_above_nine_are_not_digits(name):
    task = BUILDERS[name]()
    op = OPS[task.name]
    for bad in range(10, 16):
        assert not both_say(task, encode(task.name, bad, 1, op(bad, 1)))  # arithmetic right, digit invalid
        assert not both_say(task, encode(task.name, 2, bad, op(2, bad)))
        assert not both_say(task, encode(task.name, bad, 0, 0))


def test_unreachable_products_are_never_true():
    task = mn_mul()
    reachable = {a * b for a in range(10) for b in range(10)}
    assert len(reachable) == 37 and 11 not in reachable and 81 in reachable
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in task.ground_truth.clauses]) as solver:
        for value in range(82):
            assert solver.solve(assumptions=[task.index_of(f"product_{value}")]) == (value in reachable), value


def test_oracle_agrees_with_ground_truth_near_every_valid_assignment(task):
    """The construction proof only shows the oracle accepts the valid set; here it must also reject
    every single and double bit flip of a valid assignment exactly when the ground truth does."""
    valid = np.array(list(task.enumerate_valid()), dtype=bool)
    n = task.num_vars
    flips = [valid ^ np.eye(n, dtype=bool)[i] for i in range(n)]
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, n, size=(20, 2))
    flips += [valid ^ (np.eye(n, dtype=bool)[i] | np.eye(n, dtype=bool)[j]) for i, j in pairs if i != j]
    flips.append(rng.integers(0, 2, size=(2000, n)).astype(bool))
    rows = np.concatenate(flips)
    sdd = compile_to_sdd(task.ground_truth)
    assert np.array_equal(task.oracle_batch(rows), sdd.evaluate(rows))


def _mutated(task, clauses):
    truth = task.ground_truth
    return dataclasses.replace(task, encode=lambda: truth.with_clauses(clauses))


def test_dropping_a_clause_breaks_the_proof(task):
    clauses = list(task.ground_truth.clauses)
    if SHAPE[task.name][2]:
        picks = [0, 7, 12, len(clauses) - 1]  # blocking first = 10, blocking second = 11, two arithmetic ones
    else:
        result_0, result_1 = 21, 22
        # at-least-one first digit, "not result 0 and result 1 at once", the clause for the pair (9, 9).
        # (A digit's own at-most-one clauses are implied by the result's in mn-add, so they are not picked.)
        picks = [0, clauses.index((-result_0, -result_1)), len(clauses) - 1]
    for pick in picks:
        with pytest.raises(EquivalenceError):
            prove_equivalence(_mutated(task, clauses[:pick] + clauses[pick + 1 :]))


def test_adding_a_clause_breaks_the_proof(task):
    clauses = list(task.ground_truth.clauses)
    if SHAPE[task.name][2]:
        three_and_four = [-(k + 1) if bit else k + 1 for k, bit in enumerate(encode(task.name, 3, 4, 0)[:8])]
    else:
        three_and_four = [-task.index_of("first_digit_3"), -task.index_of("second_digit_4")]
    with pytest.raises(EquivalenceError):
        prove_equivalence(_mutated(task, clauses + [three_and_four]))  # forbids the valid pair (3, 4)
