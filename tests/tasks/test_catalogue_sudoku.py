"""The 4 × 4 visual Sudoku task."""

import dataclasses
import itertools

import numpy as np
import pytest
from pysat.solvers import Solver

from autonesy.tasks.catalogue.sudoku import sudoku
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tools.compile import compile_to_sdd

GOOD = [
    [1, 2, 3, 4],
    [3, 4, 1, 2],
    [2, 1, 4, 3],
    [4, 3, 2, 1],
]
LATIN_NOT_SUDOKU = [  # rows and columns fine, but the top-left box holds 1, 2, 2, 3
    [1, 2, 3, 4],
    [2, 3, 4, 1],
    [3, 4, 1, 2],
    [4, 1, 2, 3],
]


@pytest.fixture(scope="module")
def task():
    return sudoku()


def one_hot(grid):
    """64 values, cells row by row, digits 1-4 within a cell; 0 in the grid leaves a cell empty."""
    return [int(grid[r][c] == d) for r in range(4) for c in range(4) for d in range(1, 5)]


def var(task, r, c, d):
    return task.index_of(f"r{r}c{c}_is_{d}")


def cnf_accepts(cnf, row):
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        return solver.solve(assumptions=[i + 1 if v else -(i + 1) for i, v in enumerate(row)])


def both_say(task, row):
    by_oracle, by_cnf = task.oracle(row), cnf_accepts(task.ground_truth, row)
    assert by_oracle == by_cnf, f"oracle {by_oracle}, ground truth {by_cnf}"
    return by_oracle


def sudoku_grids_by_rows():
    """Independent count: choose each row as a permutation of 1-4, keep grids whose columns and boxes
    are permutations too (24^4 candidates, pruned row by row)."""
    perms = list(itertools.permutations(range(1, 5)))
    grids = []
    for top in perms:
        for second in perms:
            if any(top[c] == second[c] for c in range(4)) or {*top[:2], *second[:2]} != {1, 2, 3, 4}:
                continue
            for third in perms:
                if any(third[c] in (top[c], second[c]) for c in range(4)):
                    continue
                fourth = tuple(({1, 2, 3, 4} - {top[c], second[c], third[c]}).pop() for c in range(4))
                if {*third[:2], *fourth[:2]} == {*third[2:], *fourth[2:]} == {*top[2:], *second[2:]} == {1, 2, 3, 4}:
                    grids.append((top, second, third, fourth))
    return grids


def test_variables(task):
    assert task.num_vars == 64
    assert task.names[:5] == ["r1c1_is_1", "r1c1_is_2", "r1c1_is_3", "r1c1_is_4", "r1c2_is_1"]
    assert task.names[-1] == "r4c4_is_4"
    assert var(task, 2, 3, 4) == 16 * 1 + 4 * 2 + 4
    assert "row 2, column 3 holds the digit 4" in task.variables[var(task, 2, 3, 4) - 1].meaning


def test_there_are_288_solutions_and_enumeration_finds_exactly_them(task):
    grids = sudoku_grids_by_rows()
    assert len(grids) == 288
    enumerated = {tuple(row) for row in task.enumerate_valid()}
    assert enumerated == {tuple(one_hot(g)) for g in grids}


def test_ground_truth_is_proved_equivalent(task):
    report = prove_equivalence(task)
    assert (report.method, report.model_count) == ("construction", 288)
    truth = task.ground_truth
    assert truth.num_aux_vars == 0 and len(truth.clauses) == 400 == task.metadata.published_clauses


def test_hand_written_grids(task):
    assert both_say(task, one_hot(GOOD))
    assert not both_say(task, one_hot(LATIN_NOT_SUDOKU))
    swapped = [row[:] for row in GOOD]
    swapped[0][0], swapped[0][1] = swapped[0][1], swapped[0][0]  # row still fine, columns broken
    assert not both_say(task, one_hot(swapped))
    empty_cell = [row[:] for row in GOOD]
    empty_cell[2][2] = 0
    assert not both_say(task, one_hot(empty_cell))
    two_digits = one_hot(GOOD)
    two_digits[var(task, 1, 1, 2) - 1] = 1  # r1c1 holds 1 and 2
    assert not both_say(task, two_digits)
    assert not both_say(task, [0] * 64)
    assert not both_say(task, [1] * 64)


def test_oracle_agrees_with_ground_truth_near_every_solution(task):
    valid = np.array(list(task.enumerate_valid()), dtype=bool)
    eye = np.eye(64, dtype=bool)
    rows = [valid ^ eye[i] for i in range(64)]
    rng = np.random.default_rng(1)
    rows += [valid ^ eye[i] ^ eye[j] for i, j in rng.integers(0, 64, size=(40, 2)) if i != j]
    # swap the digits of two cells: keeps one digit per cell, usually breaks a unit
    grids = valid.reshape(-1, 16, 4)
    for a, b in rng.integers(0, 16, size=(30, 2)):
        swapped = grids.copy()
        swapped[:, [a, b]] = swapped[:, [b, a]]
        rows.append(swapped.reshape(-1, 64))
    rows.append(rng.integers(0, 2, size=(2000, 64)).astype(bool))
    rows = np.concatenate(rows)
    assert np.array_equal(task.oracle_batch(rows), compile_to_sdd(task.ground_truth).evaluate(rows))


def _mutated(task, clauses):
    truth = task.ground_truth
    return dataclasses.replace(task, encode=lambda: truth.with_clauses(clauses))


def box_only_clauses(task):
    """At-most-one clauses between the two diagonal cells of a box: no row or column links them."""
    found = []
    for d in range(1, 5):
        for br, bc in ((1, 1), (1, 3), (3, 1), (3, 3)):
            found += [
                (-var(task, br, bc, d), -var(task, br + 1, bc + 1, d)),
                (-var(task, br, bc + 1, d), -var(task, br + 1, bc, d)),
            ]
    return found


def test_dropping_the_box_rule_breaks_the_proof(task):
    # In a 4 x 4 Sudoku most clauses are implied by the others one at a time (pigeonhole, and row or
    # column clauses that repeat box clauses), so drop the box rule's own clauses as a family: the
    # 576 Latin squares of order 4 become models, among them LATIN_NOT_SUDOKU.
    dropped = set(box_only_clauses(task))
    clauses = [c for c in task.ground_truth.clauses if c not in dropped]
    assert len(clauses) == 400 - 32
    mutant = _mutated(task, clauses)
    assert cnf_accepts(mutant.ground_truth, one_hot(LATIN_NOT_SUDOKU))
    assert compile_to_sdd(mutant.ground_truth).model_count() == 576
    with pytest.raises(EquivalenceError, match="288 assignments are valid"):
        prove_equivalence(mutant)


def test_dropping_a_cell_clause_breaks_the_proof(task):
    clauses = list(task.ground_truth.clauses)
    at_least_one = tuple(var(task, 3, 2, d) for d in range(1, 5))
    clauses.remove(at_least_one)
    with pytest.raises(EquivalenceError):
        prove_equivalence(_mutated(task, clauses))


def test_adding_a_clause_breaks_the_proof(task):
    forbid_good = [-lit for lit in range(1, 65) if one_hot(GOOD)[lit - 1]][:16]  # not this whole grid
    with pytest.raises(EquivalenceError, match="rejects valid"):
        prove_equivalence(_mutated(task, list(task.ground_truth.clauses) + [forbid_good]))
