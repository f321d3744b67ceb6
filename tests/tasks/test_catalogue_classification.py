"""The cifar10 (classes determined by five attributes) and cifar100 (one-hot) tasks."""

from __future__ import annotations

import dataclasses
import re

import pytest
from bruteforce import sat_accepts as _accepts
from bruteforce import sat_models as _models

from autonesy.tasks.catalogue.classification import cifar10, cifar100
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tasks.registry import get_task

CIFAR10 = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
ATTRIBUTES = ["is_animal", "flies", "on_water", "has_hooves", "does_work"]
# Written out by hand (independently of the module's table): the attributes each class has.
PROFILES = {
    "airplane": {"flies"},
    "automobile": set(),
    "bird": {"is_animal", "flies"},
    "cat": {"is_animal"},
    "deer": {"is_animal", "has_hooves"},
    "dog": {"is_animal", "does_work"},
    "frog": {"is_animal", "on_water"},
    "horse": {"is_animal", "has_hooves", "does_work"},
    "ship": {"on_water"},
    "truck": {"does_work"},
}


def _cifar10_row(classes, attributes):
    return [int(c in classes) for c in CIFAR10] + [int(a in attributes) for a in ATTRIBUTES]


def _dropped(task, index):
    clauses = task.ground_truth.clauses
    mutated = task.ground_truth.with_clauses(clauses[:index] + clauses[index + 1 :])
    return dataclasses.replace(task, encode=lambda: mutated)


@pytest.fixture(scope="module")
def task10():
    return cifar10()


@pytest.fixture(scope="module")
def task100():
    return cifar100()


# --- cifar10 ---


def test_cifar10_variables_and_metadata(task10):
    assert task10.names == CIFAR10 + ATTRIBUTES
    assert task10.num_vars == 15
    assert get_task("cifar10").names == task10.names
    meta = task10.metadata
    assert meta.published_clauses == 157
    assert meta.equivalence_method == "exhaustive"
    assert meta.data_provenance == "synthetic-features"
    assert meta.redistributable is False
    assert "7" in meta.design_notes and "15" in meta.design_notes  # the published mismatch is documented


def test_cifar10_hand_profiles_are_distinct():
    assert len({frozenset(p) for p in PROFILES.values()}) == 10


def test_cifar10_models_are_exactly_the_ten_profiles(task10):
    expected = {tuple(_cifar10_row({c}, PROFILES[c])) for c in CIFAR10}
    assert _models(task10.ground_truth, 15) == expected
    assert {tuple(r) for r in task10.enumerate_valid()} == expected


def test_cifar10_detailed_description_lists_every_profile(task10):
    text = task10.descriptions.detailed
    for c in CIFAR10:
        assert re.search(rf"^  - {c}: ", text, flags=re.M), c
    assert "must NOT be encoded" in text


def test_cifar10_proof(task10):
    report = prove_equivalence(task10)
    assert report.method == "exhaustive"
    assert report.model_count == 10
    assert report.assignments_checked == 2**15


@pytest.mark.parametrize(
    "classes, attributes, valid",
    [
        ({"horse"}, {"is_animal", "has_hooves", "does_work"}, True),
        ({"automobile"}, set(), True),
        ({"truck"}, {"does_work"}, True),
        ({"frog"}, {"is_animal", "on_water"}, True),
        ({"horse"}, {"is_animal", "has_hooves"}, False),  # that is the deer's profile
        ({"deer"}, {"is_animal", "has_hooves", "does_work"}, False),
        ({"bird"}, {"is_animal", "flies", "on_water"}, False),  # no class has this profile
        ({"cat", "dog"}, {"is_animal"}, False),  # two classes
        (set(), {"is_animal"}, False),  # the cat's profile but no class
        (set(), {"is_animal", "flies", "on_water"}, False),
        ({"airplane"}, {"flies", "does_work"}, False),
        ({"ship"}, {"on_water", "does_work"}, False),
    ],
)
def test_cifar10_hand_written_assignments(task10, classes, attributes, valid):
    row = _cifar10_row(classes, attributes)
    assert task10.oracle(row) is valid
    assert _accepts(task10.ground_truth, row) is valid


def test_cifar10_which_single_clauses_are_essential(task10):
    """Drop each clause in turn; which drops break the proof follows from the hand-written profiles."""
    names = task10.names
    clauses = task10.ground_truth.clauses
    profiles = {frozenset(p) for p in PROFILES.values()}
    for i, clause in enumerate(clauses):
        try:
            prove_equivalence(_dropped(task10, i))
            breaks = False
        except EquivalenceError:
            breaks = True
        if clause == tuple(range(1, 11)):
            expected = True  # nothing else forces a class when the attributes match no profile
        elif len(clause) == 2 and all(lit < 0 and abs(lit) <= 10 for lit in clause):
            expected = False  # pairwise at-most-one: two classes would need two profiles at once
        elif len(clause) == 6:
            expected = False  # profile -> class: some class must hold, and only this one has the profile
        else:
            # class -> one attribute literal: harmless to drop exactly when flipping that attribute turns
            # the class's profile into another class's profile (that class is then forced too).
            cls, attr = names[-clause[0] - 1], names[abs(clause[1]) - 1]
            assert cls in PROFILES and attr in ATTRIBUTES
            expected = (PROFILES[cls] ^ {attr}) not in profiles
        assert breaks is expected, [names[abs(lit) - 1] for lit in clause]


# --- cifar100 ---


def test_cifar100_variables(task100):
    names = task100.names
    assert len(names) == 100 == len(set(names))
    assert names[0] == "apple" and names[-1] == "worm"
    assert names[names.index("aquarium_fish") + 1] == "baby"
    for name in ("lawn_mower", "maple_tree", "pickup_truck", "sweet_pepper", "willow_tree", "oak_tree"):
        assert name in names
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", name) for name in names)
    assert names == sorted(names)  # CIFAR-100's fine labels are in alphabetical order
    assert get_task("cifar100").names == names


def test_cifar100_metadata_and_size(task100):
    assert task100.metadata.published_clauses == 4951
    assert len(task100.ground_truth.clauses) == 4951
    assert task100.ground_truth.num_aux_vars == 0
    assert task100.metadata.equivalence_method == "construction"
    assert task100.metadata.redistributable is False


def test_cifar100_proof_by_construction(task100):
    report = prove_equivalence(task100)
    assert report.method == "construction"
    assert report.model_count == 100


def test_cifar100_models_by_sat_enumeration(task100):
    models = _models(task100.ground_truth, 100)
    assert len(models) == 100
    assert all(sum(row) == 1 for row in models)


def test_cifar100_hand_written_assignments(task100):
    one = [0] * 100
    one[task100.index_of("whale") - 1] = 1
    two = list(one)
    two[task100.index_of("shark") - 1] = 1
    for row, valid in ((one, True), (two, False), ([0] * 100, False), ([1] * 100, False)):
        assert task100.oracle(row) is valid
        assert _accepts(task100.ground_truth, row) is valid


def test_cifar100_dropping_a_pairwise_clause_breaks_the_proof(task100):
    index = task100.ground_truth.clauses.index((-task100.index_of("leopard"), -task100.index_of("tiger")))
    with pytest.raises(EquivalenceError, match="101 models"):
        prove_equivalence(_dropped(task100, index))
