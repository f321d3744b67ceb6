"""cle4evr, kand-logic-2 and kand-logic: variables, hand-checked scenes, counts, proofs, mutations."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from pysat.solvers import Solver

from autonesy.tasks.catalogue.visual import cle4evr, kand_logic, kand_logic_2
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tools.compile import compile_to_sdd
from autonesy.tools.counting import count_by_ganak

KAND_SHAPES = ("square", "circle", "triangle")
KAND_COLOURS = ("red", "yellow", "blue")


@pytest.fixture(scope="module")
def clevr():
    return cle4evr()


@pytest.fixture(scope="module")
def kand2():
    return kand_logic_2()


@pytest.fixture(scope="module")
def kand3():
    return kand_logic()


def ground_truth_accepts(task, assignment) -> bool:
    assumptions = [i + 1 if v else -(i + 1) for i, v in enumerate(assignment)]
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in task.ground_truth.clauses]) as solver:
        return solver.solve(assumptions=assumptions)


def scene(task, objects) -> np.ndarray:
    """objects: {prefix: (shape, colour)} → 0/1 row (prefixes absent from the dict stay all-false)."""
    true_names = {f"{prefix}_{value}" for prefix, values in objects.items() for value in values}
    unknown = true_names - set(task.names)
    assert not unknown, unknown
    return np.array([name in true_names for name in task.names], dtype=bool)


def check(task, objects, expected: bool) -> None:
    x = scene(task, objects)
    assert task.oracle(x) is expected
    assert ground_truth_accepts(task, x) is expected


def kand_scene(images):
    """images: [[(shape, colour), …], …] → {prefix: (shape, colour)}."""
    return {f"img{i}_obj{j}": obj for i, image in enumerate(images, 1) for j, obj in enumerate(image, 1)}


# --------------------------------------------------------------------------------------------------
# cle4evr
# --------------------------------------------------------------------------------------------------


def test_cle4evr_variables(clevr):
    assert clevr.num_vars == 12
    assert clevr.names == [
        f"obj{o}_{v}" for o in (1, 2) for v in ("cube", "sphere", "cylinder", "red", "green", "blue")
    ]


def test_cle4evr_ground_truth_matches_published_size(clevr):
    assert len(clevr.ground_truth.clauses) == 28 == clevr.metadata.published_clauses
    assert clevr.ground_truth.num_aux_vars == 0


@pytest.mark.parametrize(
    "objects, expected",
    [
        ({"obj1": ("cube", "red"), "obj2": ("cube", "red")}, True),
        ({"obj1": ("cylinder", "blue"), "obj2": ("cylinder", "blue")}, True),
        ({"obj1": ("cube", "red"), "obj2": ("sphere", "red")}, False),
        ({"obj1": ("cube", "red"), "obj2": ("cube", "green")}, False),
        ({"obj1": ("cube", "sphere", "red"), "obj2": ("cube", "sphere", "red")}, False),  # two shapes each
        ({"obj1": ("red",), "obj2": ("red",)}, False),  # no shape
        ({}, False),
    ],
)
def test_cle4evr_hand_checked_scenes(clevr, objects, expected):
    check(clevr, objects, expected)


def test_cle4evr_has_nine_models(clevr):
    report = prove_equivalence(clevr)
    assert report.method == "exhaustive"
    assert report.model_count == 3 * 3 == 9
    assert len(list(clevr.enumerate_valid())) == 9
    assert prove_equivalence(clevr, "construction").model_count == 9


def test_cle4evr_dropping_colour_equality_breaks_the_proof(clevr):
    # Each single clause of the published-style encoding is implied by the others (one-hot on one
    # object plus equality transfers to the other), so drop the whole colour equality.
    gt = clevr.ground_truth
    colour_bits = {4, 5, 6, 10, 11, 12}
    cross = [c for c in gt.clauses if len(c) == 2 and {abs(l) for l in c} <= colour_bits and c[0] * c[1] < 0]
    assert len(cross) == 6
    mutated = gt.with_clauses([c for c in gt.clauses if c not in cross])
    with pytest.raises(EquivalenceError):
        prove_equivalence(dataclasses.replace(clevr, encode=lambda: mutated))
    assert compile_to_sdd(mutated).model_count() == 27


# --------------------------------------------------------------------------------------------------
# Kandinsky
# --------------------------------------------------------------------------------------------------


def test_kand_logic_2_variables(kand2):
    assert kand2.num_vars == 24
    assert kand2.names[:6] == [f"img1_obj1_{v}" for v in KAND_SHAPES + KAND_COLOURS]
    assert kand2.names[-1] == "img2_obj2_blue"


def test_kand_logic_variables(kand3):
    assert kand3.num_vars == 36
    assert kand3.names[6:12] == [f"img1_obj2_{v}" for v in KAND_SHAPES + KAND_COLOURS]
    assert kand3.names[18] == "img2_obj1_square"
    assert kand3.names[-1] == "img2_obj3_blue"


@pytest.mark.parametrize(
    "images, expected",
    [
        # shapes: same | same → shared; colours: different | same
        ([[("square", "red"), ("square", "blue")], [("circle", "yellow"), ("circle", "yellow")]], True),
        # shapes: same | different; colours: different | same → nothing shared
        ([[("square", "red"), ("square", "blue")], [("circle", "yellow"), ("triangle", "yellow")]], False),
        # shapes: different | different → shared, although no shape occurs in both images
        ([[("square", "red"), ("circle", "red")], [("triangle", "blue"), ("circle", "yellow")]], True),
        # colours shared (both different), shapes not
        ([[("square", "red"), ("circle", "blue")], [("triangle", "red"), ("triangle", "yellow")]], True),
        # everything identical
        ([[("circle", "red"), ("circle", "red")], [("circle", "red"), ("circle", "red")]], True),
    ],
)
def test_kand_logic_2_hand_checked_scenes(kand2, images, expected):
    check(kand2, kand_scene(images), expected)


def test_kand_logic_2_rejects_rows_that_are_not_one_hot(kand2):
    good = kand_scene([[("square", "red"), ("square", "blue")], [("circle", "yellow"), ("circle", "yellow")]])
    x = scene(kand2, good)
    assert kand2.oracle(x)
    two_colours = dict(good, img2_obj1=("circle", "yellow", "red"))
    check(kand2, two_colours, False)
    no_shape = dict(good, img1_obj2=("blue",))
    check(kand2, no_shape, False)


@pytest.mark.parametrize(
    "images, expected",
    [
        # shapes: pair | pair (different pairs, different shapes) → shared
        (
            [
                [("square", "red"), ("square", "red"), ("circle", "red")],
                [("triangle", "blue"), ("circle", "yellow"), ("circle", "red")],
            ],
            True,
        ),
        # shapes: pair | different; colours: same | different → nothing shared
        (
            [
                [("square", "red"), ("square", "red"), ("circle", "red")],
                [("triangle", "blue"), ("circle", "yellow"), ("square", "red")],
            ],
            False,
        ),
        # shapes: same | different; colours: different | different → colours shared
        (
            [
                [("square", "red"), ("square", "yellow"), ("square", "blue")],
                [("triangle", "blue"), ("circle", "yellow"), ("square", "red")],
            ],
            True,
        ),
        # shapes: same | pair; colours: same | pair → nothing shared
        (
            [
                [("circle", "blue"), ("circle", "blue"), ("circle", "blue")],
                [("circle", "blue"), ("circle", "blue"), ("square", "red")],
            ],
            False,
        ),
        # shapes: different | same; colours: pair | pair → colours shared
        (
            [
                [("square", "red"), ("circle", "red"), ("triangle", "yellow")],
                [("circle", "blue"), ("circle", "yellow"), ("circle", "yellow")],
            ],
            True,
        ),
    ],
)
def test_kand_logic_hand_checked_scenes(kand3, images, expected):
    check(kand3, kand_scene(images), expected)


def pattern_sizes(num_prims):
    """How many value tuples of one image show each pattern, counted by brute force over 3^k tuples."""
    sizes = {}
    for values in itertools.product(range(3), repeat=num_prims):
        distinct = len(set(values))
        sizes[distinct] = sizes.get(distinct, 0) + 1
    return sizes


def expected_kandinsky_count(num_prims):
    sizes = pattern_sizes(num_prims)
    total = sum(sizes.values()) ** 2  # value combinations of the two images, per attribute
    shared = sum(n * n for n in sizes.values())  # combinations whose two images show the same pattern
    return shared * total + total * shared - shared * shared  # shapes shared or colours shared


def test_kandinsky_counts_by_combinatorics():
    assert pattern_sizes(2) == {1: 3, 2: 6}
    assert pattern_sizes(3) == {1: 3, 2: 18, 3: 6}
    assert expected_kandinsky_count(2) == 5_265
    assert expected_kandinsky_count(3) == 401_841


def test_kand_logic_2_model_count_and_construction(kand2):
    expected = expected_kandinsky_count(2)
    valid = np.array(list(kand2.enumerate_valid()), dtype=bool)
    assert len(valid) == expected == len(np.unique(valid, axis=0))
    assert kand2.oracle_batch(valid).all()
    assert compile_to_sdd(kand2.ground_truth).model_count() == expected
    assert count_by_ganak(kand2.ground_truth).value == expected
    assert prove_equivalence(kand2, "construction").model_count == expected


@pytest.mark.slow
def test_kand_logic_2_exhaustive_proof(kand2):
    report = prove_equivalence(kand2)
    assert report.method == "exhaustive"
    assert report.model_count == 5_265 and report.assignments_checked == 2**24


def test_kand_logic_oracle_agrees_with_ground_truth_on_random_one_hot_rows(kand3):
    rng = np.random.default_rng(1)
    values = rng.integers(0, 3, size=(3000, 12))
    x = np.eye(3, dtype=bool)[values].reshape(3000, 36)
    x[:100, rng.integers(0, 36, size=100)] ^= True  # some rows that are not one-hot
    sdd = compile_to_sdd(kand3.ground_truth)
    by_oracle = kand3.oracle_batch(x)
    assert 0.5 < by_oracle.mean() < 0.9
    assert np.array_equal(by_oracle, sdd.evaluate(x))


def test_kand_logic_valid_set_count_and_ground_truth(kand3):
    # The construction proof's checks, done directly (the full proof also checks the oracle on every
    # one-bit neighbour of the valid set, which takes minutes here: see the slow test below).
    expected = expected_kandinsky_count(3)
    valid = np.array(kand3.enumerate_valid(), dtype=bool)
    codes = valid.astype(np.int64) @ (np.int64(1) << np.arange(36, dtype=np.int64))
    assert len(valid) == expected == len(np.unique(codes))
    assert kand3.oracle_batch(valid).all()
    sdd = compile_to_sdd(kand3.ground_truth)
    assert sdd.evaluate(valid).all()
    assert sdd.model_count() == expected == count_by_ganak(kand3.ground_truth).value


@pytest.mark.slow
def test_kand_logic_construction_proof(kand3):
    report = prove_equivalence(kand3)
    assert report.method == "construction"
    assert report.model_count == 401_841 and report.assignments_checked >= 401_841


def without_last_clause(task):
    gt = task.ground_truth
    final = gt.clauses[-1]
    assert all(abs(lit) > task.num_vars for lit in final) and len(final) == 2  # "shapes or colours shared"
    return dataclasses.replace(task, encode=lambda: gt.with_clauses(gt.clauses[:-1]))


def test_kand_logic_2_dropping_the_final_disjunction_breaks_the_proof(kand2):
    mutated = without_last_clause(kand2)
    with pytest.raises(EquivalenceError):
        prove_equivalence(mutated, "construction")
    assert compile_to_sdd(mutated.ground_truth).model_count() == 9**4  # every one-hot assignment


def test_kand_logic_dropping_the_final_disjunction_admits_every_one_hot_row(kand3):
    # (the construction proof would fail on the count; checked directly, as the full proof is slow)
    mutated = without_last_clause(kand3)
    assert compile_to_sdd(mutated.ground_truth).model_count() == 9**6


def test_kand_logic_dropping_a_one_hot_clause_admits_a_square_circle(kand3):
    gt = kand3.ground_truth
    square, circle = kand3.index_of("img1_obj1_square"), kand3.index_of("img1_obj1_circle")
    i = gt.clauses.index((-square, -circle))
    mutated = gt.with_clauses(gt.clauses[:i] + gt.clauses[i + 1 :])
    assert compile_to_sdd(mutated).model_count() > 401_841
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in mutated.clauses]) as solver:
        assert solver.solve(assumptions=[square, circle])
        model = solver.get_model()
    assert not kand3.oracle([lit > 0 for lit in model[:36]])
