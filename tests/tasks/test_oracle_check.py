"""The oracle test finds concrete counterexamples in both directions, and passes correct formulas."""

import numpy as np

from autonesy.tasks.oracle_check import oracle_test
from autonesy.tasks.registry import get_task
from autonesy.tools.cnf import CNF


def test_ground_truth_passes():
    task = get_task("sushi")
    labels = np.array([row for row in task.enumerate_valid()][:10])
    result = oracle_test(task.ground_truth, task, labels)
    assert result.passed and result.labels_checked == 10 and result.probes_checked > 0
    assert result.counterexamples == []


def test_too_permissive_formula_is_caught_with_a_counterexample():
    task = get_task("fashion")
    at_least_one = CNF(10, (tuple(range(1, 11)),))
    result = oracle_test(at_least_one, task)
    assert not result.passed and result.too_permissive > 0 and result.too_strict == 0
    example = result.counterexamples[0]
    assert example.formula_says and not example.oracle_says
    assert len(example.true_variables) >= 2  # e.g. two classes at once
    assert "Your formula accepts it, but it is invalid." in result.feedback()


def test_too_strict_formula_is_caught_by_labels_and_oracle():
    task = get_task("fashion")
    only_trouser = CNF(10, ((2,),) + tuple((-v,) for v in range(1, 11) if v != 2))
    labels = np.eye(10, dtype=int)[[0, 1, 2]]  # tshirt_top, trouser, pullover
    result = oracle_test(only_trouser, task, labels)
    assert result.labels_rejected == 2 and result.too_strict > 0
    sources = {example.source for example in result.counterexamples}
    assert "label" in sources and not result.passed


def test_auxiliary_variables_are_projected():
    task = get_task("fashion")
    # exactly one of 10 through an auxiliary-heavy (but correct) encoding: the ground truth conjoined
    # with a free auxiliary clause
    cnf = CNF(10, task.ground_truth.clauses + ((11, 12),), 12)
    assert oracle_test(cnf, task).passed


def test_counterexample_cap():
    task = get_task("cifar100")
    result = oracle_test(CNF(100, ()), task, max_counterexamples=3)
    assert not result.passed and len(result.counterexamples) == 3
