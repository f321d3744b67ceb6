"""The chx task: a chest X-ray's severity code is fixed by how many of four findings it shows."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from bruteforce import sat_accepts as _accepts
from bruteforce import sat_models as _models

from autonesy.tasks.catalogue.medical import chx
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tasks.registry import get_task

FINDINGS = ["cardiomegaly", "effusion", "consolidation", "pneumothorax"]
CODES = ["code_healthy", "code_green", "code_yellow", "code_orange", "code_red"]


def _row(true_names):
    names = FINDINGS + CODES
    unknown = set(true_names) - set(names)
    assert not unknown, unknown
    return [int(name in true_names) for name in names]


@pytest.fixture(scope="module")
def task():
    return chx()


def test_variables_and_metadata(task):
    assert task.names == FINDINGS + CODES
    assert task.num_vars == 9
    assert get_task("chx").names == task.names
    assert task.metadata.published_clauses == 27
    assert task.metadata.equivalence_method == "exhaustive"
    assert task.metadata.data_provenance == "synthetic-features"
    assert task.metadata.redistributable
    assert "NIH" in task.metadata.licence and "attribution" in task.metadata.licence


def test_descriptions_name_every_code_and_what_not_to_encode(task):
    for code in ("healthy", "green", "yellow", "orange", "red"):
        assert code in task.descriptions.detailed
        assert code in task.descriptions.not_detailed
    assert "must NOT be encoded" in task.descriptions.detailed


def test_ground_truth_matches_published_size(task):
    cnf = task.ground_truth
    assert len(cnf.clauses) == 27
    assert cnf.num_aux_vars == 0


def test_models_are_the_16_finding_patterns(task):
    # Built here from the rule: every subset of findings, with the code indexed by its size.
    expected = set()
    for pattern in itertools.product((0, 1), repeat=4):
        expected.add(pattern + tuple(int(k == sum(pattern)) for k in range(5)))
    assert len(expected) == 2**4
    assert _models(task.ground_truth, 9) == expected
    assert {tuple(r) for r in task.enumerate_valid()} == expected


def test_proof_is_exhaustive_with_16_models(task):
    report = prove_equivalence(task)
    assert report.method == "exhaustive"
    assert report.model_count == 16
    assert report.assignments_checked == 2**9


@pytest.mark.parametrize(
    "true_names, valid",
    [
        (["code_healthy"], True),
        (["cardiomegaly", "effusion", "code_yellow"], True),
        (["pneumothorax", "code_green"], True),
        (FINDINGS + ["code_red"], True),
        (["effusion", "consolidation", "pneumothorax", "code_orange"], True),
        (["pneumothorax", "code_healthy"], False),  # one finding is not healthy
        (["pneumothorax", "code_red"], False),  # severity of a single finding does not matter
        (FINDINGS + ["code_red", "code_orange"], False),  # two codes at once
        (["cardiomegaly", "effusion"], False),  # no code
        ([], False),
        (["cardiomegaly", "consolidation", "code_orange"], False),  # two findings, off by one
    ],
)
def test_hand_written_assignments(task, true_names, valid):
    row = _row(true_names)
    assert task.oracle(row) is valid
    assert _accepts(task.ground_truth, row) is valid


def test_dropping_any_clause_but_the_redundant_one_breaks_the_proof(task):
    clauses = task.ground_truth.clauses
    codes = tuple(range(5, 10))
    survivors = []
    for i in range(len(clauses)):
        mutated = task.ground_truth.with_clauses(clauses[:i] + clauses[i + 1 :])
        broken = dataclasses.replace(task, encode=lambda m=mutated: m)
        try:
            prove_equivalence(broken)
        except EquivalenceError:
            continue
        survivors.append(clauses[i])
    # Only "some code holds" is implied by the others: every finding pattern already forces a code.
    assert survivors == [codes]
