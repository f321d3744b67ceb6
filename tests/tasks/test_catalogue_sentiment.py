"""The cebab task: five crowdworkers' sentiment votes and the majority-vote final label."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter

import numpy as np
import pytest
from bruteforce import sat_accepts as _accepts
from bruteforce import sat_models as _models

from autonesy.tasks.catalogue.sentiment import cebab
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tasks.registry import get_task
from autonesy.tools.compile import compile_to_sdd

SENTIMENTS = ["positive", "negative", "neutral", "unknown"]
FINALS = SENTIMENTS + ["no_majority"]


def _row(votes, finals):
    """votes: one list of labels per worker (normally one label each); finals: the true final labels."""
    row = []
    for labels in votes:
        row += [int(s in labels) for s in SENTIMENTS]
    return row + [int(f in finals) for f in FINALS]


def _majority(ballot):
    """The final label of a ballot (one label per worker), read off a vote count."""
    label, votes = Counter(ballot).most_common(1)[0]
    return label if votes >= 3 else "no_majority"


@pytest.fixture(scope="module")
def task():
    return cebab()


def test_variables_and_metadata(task):
    expected = [f"worker{w}_{s}" for w in range(1, 6) for s in SENTIMENTS] + [f"final_{f}" for f in FINALS]
    assert task.names == expected
    assert task.num_vars == 25
    assert get_task("cebab").names == expected
    assert task.metadata.published_clauses == 1070
    assert task.metadata.licence == "CC BY 4.0"
    assert task.metadata.equivalence_method == "exhaustive"
    assert task.metadata.data_provenance == "synthetic-features"


def test_ground_truth_uses_cardinality_auxiliaries_above_the_task_variables(task):
    cnf = task.ground_truth
    assert cnf.num_task_vars == 25
    assert cnf.num_aux_vars > 0
    used = {abs(lit) for clause in cnf.clauses for lit in clause}
    assert set(range(1, 26)) <= used and max(used) == cnf.num_vars


def test_models_are_one_per_ballot(task):
    expected = {
        tuple(_row([[b] for b in ballot], [_majority(ballot)])) for ballot in itertools.product(SENTIMENTS, repeat=5)
    }
    assert len(expected) == 4**5
    assert _models(task.ground_truth, 25) == expected
    assert {tuple(r) for r in task.enumerate_valid()} == expected


def test_every_ballot_with_every_final_vector(task):
    """4^5 ballots × 2^5 final-label vectors: oracle and ground truth agree with the rule read by hand."""
    rows, truth = [], []
    for ballot in itertools.product(SENTIMENTS, repeat=5):
        winner = _majority(ballot)
        for finals in itertools.product((0, 1), repeat=5):
            chosen = [f for f, bit in zip(FINALS, finals) if bit]
            rows.append(_row([[b] for b in ballot], chosen))
            truth.append(chosen == [winner])
    rows, truth = np.array(rows, dtype=bool), np.array(truth)
    assert truth.sum() == 1024
    assert (task.oracle_batch(rows) == truth).all()
    assert (compile_to_sdd(task.ground_truth).evaluate(rows) == truth).all()


@pytest.mark.parametrize(
    "votes, finals, valid",
    [
        ([["positive"]] * 3 + [["negative"]] * 2, ["positive"], True),
        ([["unknown"]] * 5, ["unknown"], True),
        ([["neutral"], ["neutral"], ["positive"], ["neutral"], ["negative"]], ["neutral"], True),
        ([["positive"]] * 2 + [["negative"]] * 2 + [["neutral"]], ["no_majority"], True),
        ([["positive"]] * 2 + [["negative"], ["neutral"], ["unknown"]], ["no_majority"], True),
        ([["positive"]] * 2 + [["negative"], ["neutral"], ["unknown"]], ["positive"], False),  # plurality
        ([["positive"]] * 3 + [["negative"]] * 2, ["no_majority"], False),
        ([["positive"]] * 3 + [["negative"]] * 2, ["positive", "no_majority"], False),
        ([["positive"]] * 3 + [["negative"]] * 2, [], False),
        ([["positive", "negative"]] + [["positive"]] * 4, ["positive"], False),  # a worker votes twice
        ([[]] + [["positive"]] * 4, ["positive"], False),  # a worker does not vote
        ([[]] * 5, ["no_majority"], False),
    ],
)
def test_hand_written_assignments(task, votes, finals, valid):
    row = _row(votes, finals)
    assert task.oracle(row) is valid
    assert _accepts(task.ground_truth, row) is valid


def _dropped(task, clause):
    clauses = list(task.ground_truth.clauses)
    clauses.remove(clause)
    mutated = task.ground_truth.with_clauses(clauses)
    return dataclasses.replace(task, encode=lambda: mutated)


def test_dropping_the_final_at_least_one_clause_adds_a_model(task):
    finals = tuple(range(21, 26))
    broken = _dropped(task, finals)
    extra = _models(broken.ground_truth, 25) - _models(task.ground_truth, 25)
    # Without it, a ballot with no majority may leave every final label false.
    assert extra and all(not task.oracle(row) and sum(row[20:]) == 0 for row in extra)
    assert len(extra) == sum(_majority(b) == "no_majority" for b in itertools.product(SENTIMENTS, repeat=5))
    with pytest.raises(EquivalenceError, match="oracle says False, ground truth says True"):
        prove_equivalence(broken)


def test_dropping_a_cardinality_clause_changes_the_models(task):
    # The last clause belongs to "not final_unknown -> at most 2 unknown votes" (guarded by final_unknown).
    clause = task.ground_truth.clauses[-1]
    assert task.index_of("final_unknown") in clause
    assert _models(_dropped(task, clause).ground_truth, 25) != _models(task.ground_truth, 25)


@pytest.mark.slow
def test_exhaustive_proof(task):
    report = prove_equivalence(task)
    assert report.method == "exhaustive"
    assert report.model_count == 1024
    assert report.assignments_checked == 2**25
