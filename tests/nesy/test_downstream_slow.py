"""Downstream claims on real task data (slow: builds a feature task's data and trains 15 models)."""

from __future__ import annotations

import pytest

from autonesy.nesy.evaluate import train_and_evaluate
from autonesy.nesy.trainer import TrainConfig
from autonesy.tasks.registry import get_task

pytestmark = pytest.mark.slow


def test_feature_task_constraints_help_and_strict_formula_hurts_recall(tmp_path):
    from autonesy.tasks.data.dataset import load_dataset

    task = get_task("bdd-oia-2")
    data = load_dataset(task, data_dir=tmp_path, progress=False)
    j = task.index_of("stop")
    strict = task.ground_truth.with_clauses(task.ground_truth.clauses + ((-j,),))
    result = train_and_evaluate(task, strict, data, seeds=1, config=TrainConfig(threads=1), progress=False)
    base = result["baseline"]["summary"]["consistency"]["mean"]
    spl, sl = result["results"]["spl"], result["results"]["sl"]
    assert spl["ground_truth"]["summary"]["consistency"]["mean"] == 1.0 > base
    assert sl["ground_truth"]["summary"]["consistency"]["mean"] >= base
    for target in ("ground_truth", "formula"):
        assert spl[target]["summary"]["formula_consistency"]["mean"] == 1.0
    assert spl["formula"]["summary"]["recall"]["mean"] < spl["ground_truth"]["summary"]["recall"]["mean"]


@pytest.mark.parametrize("name", __import__("autonesy.tasks.registry", fromlist=["TASK_NAMES"]).TASK_NAMES)
def test_spl_map_predictions_satisfy_the_ground_truth_of_every_task(name):
    """SPL's predictions are models of its formula on every task, checked with the task's own oracle."""
    import numpy as np
    import torch

    from autonesy.nesy.constraint import constraint_for
    from autonesy.nesy.spl import SPL

    task = get_task(name)
    spl = SPL(constraint_for(task.ground_truth))
    g = torch.Generator().manual_seed(0)
    for scale in (0.1, 3.0, 300.0):
        logits = torch.randn(128, task.num_vars, generator=g) * scale
        pred = spl.predict(logits).numpy().astype(np.uint8)
        assert task.oracle_batch(pred).all()
        assert spl.satisfies(torch.from_numpy(pred)).all()
