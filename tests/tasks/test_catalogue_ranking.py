"""The sushi task: a complete ranking of four sushi items as a 4 × 4 permutation matrix."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from bruteforce import sat_accepts as _accepts
from bruteforce import sat_models as _models

from autonesy.tasks.catalogue.ranking import sushi
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tasks.registry import get_task

ITEMS = ["tuna", "fatty_tuna", "salmon_roe", "sea_urchin"]


def _row(placements):
    """placements: (item, rank) pairs that are true, rank 1..4."""
    true = {f"{item}_rank_{rank}" for item, rank in placements}
    names = [f"{item}_rank_{rank}" for item in ITEMS for rank in range(1, 5)]
    assert true <= set(names)
    return [int(name in true) for name in names]


@pytest.fixture(scope="module")
def task():
    return sushi()


def test_variables_and_metadata(task):
    assert task.names == [f"{item}_rank_{rank}" for item in ITEMS for rank in range(1, 5)]
    assert task.num_vars == 16
    assert get_task("sushi").names == task.names
    assert task.metadata.published_clauses == 56
    assert task.metadata.equivalence_method == "exhaustive"
    assert task.metadata.redistributable is False
    assert "redistribution" in task.metadata.licence
    assert "most preferred" in task.variables[0].meaning


def test_ground_truth_matches_published_size(task):
    assert len(task.ground_truth.clauses) == 56
    assert task.ground_truth.num_aux_vars == 0


def test_models_are_the_24_rankings(task):
    expected = {tuple(_row(zip(ITEMS, ranks))) for ranks in itertools.permutations(range(1, 5))}
    assert len(expected) == 24
    assert _models(task.ground_truth, 16) == expected
    assert {tuple(r) for r in task.enumerate_valid()} == expected


def test_proof(task):
    report = prove_equivalence(task)
    assert report.method == "exhaustive"
    assert report.model_count == 24
    assert report.assignments_checked == 2**16


@pytest.mark.parametrize(
    "placements, valid",
    [
        ([("tuna", 1), ("fatty_tuna", 2), ("salmon_roe", 3), ("sea_urchin", 4)], True),
        ([("tuna", 4), ("fatty_tuna", 1), ("salmon_roe", 2), ("sea_urchin", 3)], True),
        ([("tuna", 1), ("fatty_tuna", 1), ("salmon_roe", 3), ("sea_urchin", 4)], False),  # tie at rank 1
        ([("tuna", 1), ("tuna", 2), ("fatty_tuna", 3), ("salmon_roe", 4)], False),  # sea urchin unranked
        ([("tuna", 1), ("fatty_tuna", 2), ("salmon_roe", 3)], False),  # rank 4 empty
        ([("tuna", 1), ("tuna", 2), ("fatty_tuna", 2), ("salmon_roe", 3), ("sea_urchin", 4)], False),
        ([], False),
    ],
)
def test_hand_written_assignments(task, placements, valid):
    row = _row(placements)
    assert task.oracle(row) is valid
    assert _accepts(task.ground_truth, row) is valid


def _without(task, dropped_items):
    """The task without the exactly-one constraints of the rows (items) in ``dropped_items``."""
    rows = {ITEMS.index(item) for item in dropped_items}

    def row_of(lit):
        return (abs(lit) - 1) // 4

    def in_dropped_row(clause):
        clause_rows = {row_of(lit) for lit in clause}
        return len(clause_rows) == 1 and clause_rows <= rows

    kept = [c for c in task.ground_truth.clauses if not in_dropped_row(c)]
    assert len(kept) == 56 - 7 * len(rows)
    mutated = task.ground_truth.with_clauses(kept)
    return dataclasses.replace(task, encode=lambda: mutated)


def test_one_item_row_is_implied_by_counting(task):
    # 4 columns with one item each = 4 placements; 3 items with one rank each leave exactly one for the 4th.
    assert prove_equivalence(_without(task, ["sea_urchin"])).model_count == 24


def test_dropping_two_item_rows_breaks_the_proof(task):
    with pytest.raises(EquivalenceError):
        prove_equivalence(_without(task, ["tuna", "sea_urchin"]))
