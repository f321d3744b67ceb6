"""A training run killed part-way continues from its last saved epoch and ends exactly as one that
was never stopped; finished runs are read back; foreign or damaged state is ignored, never trusted."""

from __future__ import annotations

import os

import pytest
import torch
from nesy_reference import noisy_onehot_data

from autonesy.nesy.checkpoint import TrainingStore
from autonesy.nesy.constraint import constraint_for
from autonesy.nesy.evaluate import train_and_evaluate
from autonesy.nesy.spl import SPL
from autonesy.nesy.trainer import Arrays, TrainConfig, train
from autonesy.tasks.registry import get_task
from autonesy.tools.cnf import CNF

CONFIG = TrainConfig(epochs=6, batch_size=32, patience=100)


def exactly_one(n: int) -> CNF:
    clauses = [tuple(range(1, n + 1))] + [(-i, -j) for i in range(1, n + 1) for j in range(i + 1, n + 1)]
    return CNF(n, tuple(clauses), n)


class Killed(Exception):
    pass


class KilledAfter:
    """SPL whose loss raises on its ``limit``-th call: a kill in the middle of an epoch."""

    def __init__(self, method, limit: int) -> None:
        self.method, self.limit, self.calls = method, limit, 0
        self.name = method.name

    def loss(self, logits, y, valid=None):
        self.calls += 1
        if self.calls == self.limit:
            raise Killed
        return self.method.loss(logits, y, valid)

    def predict(self, logits):
        return self.method.predict(logits)

    def __getattr__(self, name):
        return getattr(self.method, name)


@pytest.fixture(scope="module")
def data():
    return Arrays(*noisy_onehot_data(4, noise=2.0))


def weights(model):
    return [p.detach().clone() for p in model.parameters()]


def test_a_killed_run_resumes_at_its_last_epoch_and_ends_as_an_unstopped_one(data, tmp_path):
    spl = SPL(constraint_for(exactly_one(4)))
    steps = -(-len(data.y_train) // CONFIG.batch_size)
    whole = train(spl, data, seed=3, config=CONFIG, progress=False)

    store = TrainingStore(tmp_path / "training")
    with pytest.raises(Killed):  # killed in the middle of epoch 4: epochs 1-3 are saved
        train(KilledAfter(spl, 3 * steps + 2), data, seed=3, config=CONFIG, progress=False, store=store, key="spl")
    saved = torch.load(tmp_path / "training" / "spl.pt", weights_only=True)
    assert saved["epoch"] == 3 and len(saved["history"]) == 3

    counted = KilledAfter(spl, -1)  # never raises; counts the loss calls of the resumed run
    resumed = train(counted, data, seed=3, config=CONFIG, progress=False, store=store, key="spl")
    assert counted.calls == 3 * steps  # epochs 4, 5 and 6 only
    assert resumed.history == whole.history and resumed.epochs_run == whole.epochs_run == 6
    assert resumed.best_epoch == whole.best_epoch
    assert all(torch.equal(a, b) for a, b in zip(weights(resumed.model), weights(whole.model)))


def test_state_saved_for_another_run_or_damaged_is_ignored(data, tmp_path):
    spl = SPL(constraint_for(exactly_one(4)))
    store = TrainingStore(tmp_path)
    with pytest.raises(Killed):
        train(KilledAfter(spl, 5), data, seed=0, config=CONFIG, progress=False, store=store, key="k")
    counted = KilledAfter(spl, -1)
    other_seed = train(counted, data, seed=1, config=CONFIG, progress=False, store=store, key="k")
    steps = -(-len(data.y_train) // CONFIG.batch_size)
    assert counted.calls == CONFIG.epochs * steps and other_seed.epochs_run == 6  # seed 1 started afresh

    (tmp_path / "k.pt").write_bytes(os.urandom(300))
    counted = KilledAfter(spl, -1)
    train(counted, data, seed=1, config=CONFIG, progress=False, store=store, key="k")
    assert counted.calls == CONFIG.epochs * steps


def test_a_state_file_that_is_a_link_is_not_read(data, tmp_path):
    spl = SPL(constraint_for(exactly_one(4)))
    elsewhere = TrainingStore(tmp_path / "elsewhere")
    with pytest.raises(Killed):
        train(KilledAfter(spl, 5), data, seed=0, config=CONFIG, progress=False, store=elsewhere, key="k")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "k.pt").symlink_to(tmp_path / "elsewhere" / "k.pt")
    assert TrainingStore(tmp_path / "run").load_row("k", "x") is None
    steps = -(-len(data.y_train) // CONFIG.batch_size)
    counted = KilledAfter(spl, -1)
    train(counted, data, seed=0, config=CONFIG, progress=False, store=TrainingStore(tmp_path / "run"), key="k")
    assert counted.calls == CONFIG.epochs * steps  # the linked state was not used


def test_train_and_evaluate_reads_finished_runs_back(tmp_path, monkeypatch):
    task = get_task("fashion")  # exactly one of 10 classes
    data = noisy_onehot_data(10, sizes=(120, 60, 60), seed=2)
    formula = CNF(10, (tuple(range(1, 11)),), 10)  # at least one: permissive
    config = TrainConfig(epochs=2, batch_size=64)
    first = train_and_evaluate(task, formula, data, seeds=1, config=config, progress=False, resume_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    runs = ["none-backbone-seed0"] + [f"{m}-{t}-seed0" for m in ("spl", "sl") for t in ("ground_truth", "formula")]
    assert files == sorted(f"{run}.json" for run in runs)  # finished: rows kept, epoch states dropped

    import autonesy.nesy.evaluate as evaluate

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(evaluate, "train", no_training)
    again = train_and_evaluate(task, formula, data, seeds=1, config=config, progress=False, resume_dir=tmp_path)
    assert again["results"] == first["results"] and again["baseline"] == first["baseline"]
    other = CNF(10, ((1, 2),), 10)  # another formula: its runs are not the recorded ones
    with pytest.raises(AssertionError, match="trained again"):
        train_and_evaluate(task, other, data, seeds=1, config=config, progress=False, resume_dir=tmp_path)
