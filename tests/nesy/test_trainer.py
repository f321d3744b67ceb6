"""Trainer, downstream metrics and train_and_evaluate on small synthetic data (exactly-one features)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from nesy_reference import noisy_onehot_data

from autonesy.nesy.backbones import MLP, SmallCNN, make_backbone
from autonesy.nesy.constraint import constraint_for
from autonesy.nesy.evaluate import parse_methods, results_table, train_and_evaluate
from autonesy.nesy.metrics import downstream_metrics, summarize
from autonesy.nesy.spl import SPL
from autonesy.nesy.trainer import Arrays, TrainConfig, predict, train
from autonesy.tasks.registry import get_task
from autonesy.tools.cnf import CNF

FAST = TrainConfig(epochs=4, batch_size=64, patience=2)


def exactly_one(n: int) -> CNF:
    clauses = [tuple(range(1, n + 1))] + [(-i, -j) for i in range(1, n + 1) for j in range(i + 1, n + 1)]
    return CNF(n, tuple(clauses), n)


def test_backbones_per_modality():
    assert isinstance(make_backbone((16,), 5), MLP)
    cnn = make_backbone((3, 32, 32), 24)
    assert isinstance(cnn, SmallCNN)
    assert cnn(torch.zeros(2, 3, 32, 32)).shape == (2, 24)
    assert make_backbone((1, 8, 16), 39)(torch.zeros(2, 1, 8, 16)).shape == (2, 39)
    assert make_backbone((8, 16), 13)(torch.zeros(2, 8, 16)).shape == (2, 13)
    a, b = make_backbone((16,), 5, seed=3), make_backbone((16,), 5, seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def test_metrics_by_hand():
    truth = constraint_for(exactly_one(3))
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]])
    p = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0], [0, 1, 0]])
    m = downstream_metrics(y, p, truth, truth)
    assert m["precision"] == pytest.approx(2 / 4) and m["recall"] == pytest.approx(2 / 4)
    assert m["f1"] == pytest.approx(0.5) and m["accuracy"] == pytest.approx(0.25)
    assert m["consistency"] == pytest.approx(0.5) and m["formula_consistency"] == pytest.approx(0.5)
    assert m["bit_accuracy"] == pytest.approx(8 / 12)
    empty = downstream_metrics(np.zeros((2, 3)), np.zeros((2, 3)), truth)
    assert empty["precision"] == 1.0 and empty["recall"] == 1.0 and empty["consistency"] == 0.0
    s = summarize([{"f1": 0.5, "seed": 0}, {"f1": 0.7, "seed": 1}])
    assert s["f1"]["mean"] == pytest.approx(0.6) and s["f1"]["std"] == pytest.approx(np.std([0.5, 0.7], ddof=1))


def test_spl_predictions_satisfy_its_formula_and_training_is_deterministic():
    data = Arrays(*noisy_onehot_data(5, noise=2.0))
    spl = SPL(constraint_for(exactly_one(5)))
    first = train(spl, data, seed=1, config=FAST, progress=False)
    pred = predict(first.model, spl, data.x_test)
    assert spl.constraint.evaluate(pred).all()
    assert first.best_val_score > 0.5
    second = train(spl, data, seed=1, config=FAST, progress=False)
    assert np.array_equal(pred, predict(second.model, spl, data.x_test))
    assert [h["train_loss"] for h in first.history] == [h["train_loss"] for h in second.history]


def test_train_and_evaluate_end_to_end():
    task = get_task("fashion")  # exactly one of 10 classes
    assert task.num_vars == 10
    data = noisy_onehot_data(10, sizes=(300, 100, 200), noise=1.0, seed=4)
    strict = task.ground_truth.with_clauses(task.ground_truth.clauses + ((-10,),))  # drops class 10
    result = train_and_evaluate(task, strict, data, seeds=2, config=FAST, progress=False)
    json.dumps(result)  # serialisable
    assert result["formula"]["relation"] == "strict"
    assert result["formula"]["mc_ratio"] == pytest.approx(0.9)
    assert set(result["results"]) == {"spl", "sl"}
    for target in ("formula", "ground_truth"):
        spl = result["results"]["spl"][target]
        assert len(spl["per_seed"]) == 2
        assert spl["summary"]["formula_consistency"]["values"] == [1.0, 1.0]
        assert spl["summary"]["consistency"]["mean"] == 1.0  # strict ⊆ truth, and truth itself
    strict_rows = result["results"]["spl"]["formula"]["per_seed"]
    assert all(r["train_labels_violating"] > 0 for r in strict_rows)
    assert (
        result["results"]["spl"]["formula"]["summary"]["recall"]["mean"]
        < result["results"]["spl"]["ground_truth"]["summary"]["recall"]["mean"]
    )
    assert len(result["baseline"]["per_seed"]) == 2
    table = results_table(result)
    assert table[0][:2] == ["predictor", "trained on"] and len(table) == 1 + 1 + 4
    again = train_and_evaluate(
        task, strict, data, seeds=[1], methods="spl", config=FAST, progress=False, baseline=False
    )
    assert again["results"]["spl"]["formula"]["per_seed"][0]["f1"] == strict_rows[1]["f1"]


def test_equal_unsatisfiable_and_missing_formulas():
    task = get_task("fashion")
    data = noisy_onehot_data(10, sizes=(120, 60, 60), seed=2)
    cfg = TrainConfig(epochs=1, batch_size=64)
    same = train_and_evaluate(
        task, task.ground_truth, data, seeds=1, methods="spl", config=cfg, progress=False, baseline=False
    )
    assert same["results"]["spl"]["formula"]["reused_from"] == "ground_truth"
    unsat = CNF(10, ((1,), (-1,)), 10)
    out = train_and_evaluate(task, unsat, data, seeds=1, methods=["sl"], config=cfg, progress=False, baseline=False)
    assert "unsatisfiable" in out["results"]["sl"]["formula"]["skipped"]
    assert any("unsatisfiable" in note for note in out["notes"])
    assert "ground_truth" in out["results"]["sl"]
    none = train_and_evaluate(task, None, data, seeds=1, methods="none", config=cfg, progress=False)
    assert none["formula"] is None and none["results"] == {} and none["baseline"]["per_seed"]


def test_parse_methods():
    assert parse_methods("spl,sl") == ("spl", "sl")
    assert parse_methods("none") == () and parse_methods("") == ()
    assert parse_methods(["SL", "spl", "sl"]) == ("sl", "spl")
    with pytest.raises(ValueError, match="unknown"):
        parse_methods("spl,foo")


def test_progress_bars_stay_out_of_logs(capsys):
    task = get_task("fashion")
    data = noisy_onehot_data(10, sizes=(60, 30, 30), seed=1)
    train_and_evaluate(task, None, data, seeds=1, methods="spl", config=TrainConfig(epochs=1), progress=True)
    written = capsys.readouterr().err  # captured: not a terminal, as in a log file or CI
    assert "\r" not in written and "\x1b" not in written
