"""The catalogue as published (docs/tasks.md) and the exact proof that every ground truth equals its oracle."""

import pytest

from autonesy.tasks.equivalence import prove_equivalence
from autonesy.tasks.registry import TASK_NAMES, UnknownTaskError, all_tasks, get_task

# name → (variables, published clauses), transcribed from docs/tasks.md (auto-nesy-bench).
PUBLISHED = {
    "chx": (9, 27),
    "fashion": (10, 46),
    "bdd-oia-2": (11, 17),
    "cle4evr": (12, 28),
    "cifar10": (15, 157),
    "mn-add-bin": (13, 512),
    "mn-mul-bin": (15, 712),
    "sushi": (16, 56),
    "kand-logic-2": (24, 1328),
    "warcraft": (24, 289),
    "bdd-oia": (25, 31),
    "cebab": (25, 1070),
    "kand-logic": (36, 129648),
    "mn-add": (39, 364),
    "road-r": (41, 243),
    "sudoku": (64, 400),
    "cifar100": (100, 4951),
    "mn-mul": (102, 3514),
}


def test_catalogue_has_the_18_published_tasks():
    assert set(TASK_NAMES) == set(PUBLISHED) and len(TASK_NAMES) == 18
    counts = [n for n, _ in PUBLISHED.values()]
    assert (min(counts), max(counts), round(sum(counts) / len(counts))) == (9, 102, 32)


@pytest.mark.parametrize("name", TASK_NAMES)
def test_task_matches_published_facts(name):
    task = get_task(name)
    variables, clauses = PUBLISHED[name]
    assert task.num_vars == variables
    assert task.metadata.published_clauses == clauses
    truth = task.ground_truth
    assert truth.num_task_vars == variables and truth.num_vars >= variables
    meta = task.metadata
    assert meta.source_dataset and meta.citation and meta.licence and meta.design_notes


@pytest.mark.parametrize("name", TASK_NAMES)
def test_descriptions_follow_the_benchmark_style(name):
    task = get_task(name)
    detailed, plain = task.descriptions.detailed, task.descriptions.not_detailed
    assert len(detailed) > len(plain) > 20
    assert "-" in detailed  # rules decomposed as a list
    assert "not be encoded" in detailed.lower()  # background facts named
    for text in (detailed, plain):
        assert "{" not in text and "}" not in text  # no unformatted template leftovers


@pytest.mark.parametrize("name", TASK_NAMES)
def test_ground_truth_is_equivalent_to_the_oracle(name):
    task = get_task(name)
    report = prove_equivalence(task)
    assert report.method == task.metadata.equivalence_method
    if task.num_vars <= 20:
        assert report.method == "exhaustive" and report.assignments_checked == 2**task.num_vars
    assert 0 < report.model_count < 2**task.num_vars  # a real, satisfiable constraint


def test_unknown_task_lists_known_names():
    with pytest.raises(UnknownTaskError, match="known tasks: chx, fashion"):
        get_task("mnist-sum")


def test_variable_names_are_unique_identifiers_across_the_catalogue():
    for task in all_tasks():
        assert all(name.isidentifier() for name in task.names), task.name
