"""Exact SDD sampling of labels, and the validity check every generator runs."""

import numpy as np
import pytest

from autonesy.tasks.data.sampling import check_labels, prior_vector, sample_valid
from autonesy.tasks.data.store import DataError
from autonesy.tasks.registry import get_task


def _exact_distribution(task, priors):
    valid = np.array(list(task.enumerate_valid()), dtype=np.uint8)
    p = prior_vector(task, priors)
    w = np.prod(np.where(valid == 1, p, 1 - p), axis=1)
    return valid, w / w.sum()


@pytest.mark.parametrize(
    "name, priors",
    [
        ("chx", {"cardiomegaly": 0.2, "effusion": 0.7, "code_red": 0.9}),
        ("sushi", {"tuna_rank_1": 0.8, "salmon_roe_rank_4": 0.3}),
        ("cifar10", {"flies": 0.9, "cat": 0.1}),
    ],
)
def test_sampler_matches_the_exact_prior_weighted_distribution(name, priors):
    task = get_task(name)
    valid, expected = _exact_distribution(task, priors)
    n = 40_000
    y = sample_valid(task, n, np.random.default_rng(1), priors)
    check_labels(task, y)
    index = {tuple(row): k for k, row in enumerate(valid)}
    counts = np.bincount([index[tuple(row)] for row in y], minlength=len(valid))
    # every model's frequency within 5 standard errors of its probability
    se = np.sqrt(expected * (1 - expected) / n)
    assert (np.abs(counts / n - expected) <= 5 * se + 1e-4).all()


def test_uniform_sampling_reaches_every_sudoku_grid():
    task = get_task("sudoku")
    y = sample_valid(task, 5000, np.random.default_rng(0))
    assert len(np.unique(y, axis=0)) == 288


def test_sampler_is_deterministic_and_valid_on_large_tasks():
    for name in ("road-r", "bdd-oia", "kand-logic"):
        task = get_task(name)
        a = sample_valid(task, 300, np.random.default_rng(7))
        b = sample_valid(task, 300, np.random.default_rng(7))
        assert a.dtype == np.uint8 and a.shape == (300, task.num_vars)
        np.testing.assert_array_equal(a, b)
        check_labels(task, a)
        assert len(np.unique(a, axis=0)) > 250


def test_check_labels_names_the_first_bad_row():
    task = get_task("fashion")
    y = np.eye(10, dtype=np.uint8)
    check_labels(task, y)
    y[3, 5] = 1  # two classes
    with pytest.raises(DataError, match="row 3"):
        check_labels(task, y)
    with pytest.raises(DataError, match="shape"):
        check_labels(task, y[:, :9])
