"""The NeSy layers of ``import autonesy`` against brute force: semantic loss is −log of the probability
mass of the formula's models, SPL's likelihood is a model's mass over all models' mass and its
prediction the heaviest model; both are torch modules a plain training loop can use."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
import torch
from bruteforce import cnfs, projected_models
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import autonesy
from autonesy.tools.cnf import CNF, to_dimacs


def mass(logits: list[float], y: tuple[int, ...]) -> float:
    """Π_i σ(±l_i): the probability of assignment y under independent outputs."""
    return math.prod(1 / (1 + math.exp(-l if v else l)) for l, v in zip(logits, y))


logit_rows = st.lists(st.floats(-4, 4), min_size=8, max_size=8)
SETTINGS = settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cnf=cnfs(max_task_vars=4, max_aux=2, max_clauses=5), rows=st.lists(logit_rows, min_size=1, max_size=3))
def test_semantic_loss_is_minus_log_the_mass_of_the_models(cnf, rows):
    models = projected_models(cnf)
    assume(models)  # an unsatisfiable formula has no loss: refused (tested below)
    rows = [row[: cnf.num_task_vars] for row in rows]
    layer = autonesy.SemanticLoss(cnf, reduction="none")
    got = layer(torch.tensor(rows, dtype=torch.float64))
    expected = [-math.log(sum(mass(row, y) for y in models)) for row in rows]
    assert got.tolist() == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert float(autonesy.SemanticLoss(cnf)(torch.tensor(rows, dtype=torch.float64))) == pytest.approx(
        sum(expected) / len(expected), rel=1e-9, abs=1e-9
    )


@SETTINGS
@given(cnf=cnfs(max_task_vars=4, max_aux=2, max_clauses=5), row=logit_rows, pick=st.integers(0, 15))
def test_spl_likelihood_and_prediction_are_the_models_masses(cnf, row, pick):
    models = projected_models(cnf)
    assume(models)
    n = cnf.num_task_vars
    row = row[:n]
    layer = autonesy.SPL(cnf, reduction="none")
    logits = torch.tensor([row], dtype=torch.float64)
    total = sum(mass(row, y) for y in models)
    y = list(itertools.product((0, 1), repeat=n))[pick % 2**n]
    nll = float(layer(logits, torch.tensor([y])))
    if y in models:
        assert nll == pytest.approx(-math.log(mass(row, y) / total), rel=1e-9, abs=1e-9)
    else:
        assert nll == math.inf  # a label outside the formula has no likelihood
    best = max(mass(row, m) for m in models)
    predicted = tuple(layer.predict(logits)[0].tolist())
    assert predicted in models and mass(row, predicted) == pytest.approx(best, rel=1e-9)


def test_spl_reductions_leave_out_the_labels_the_formula_forbids():
    exactly_one = "p cnf 2 2\n1 2 0\n-1 -2 0\n"
    logits = torch.zeros(3, 2)
    y = torch.tensor([[1, 0], [1, 1], [0, 1]])  # the middle row violates the formula
    half = math.log(2)  # two models of equal mass: each has likelihood 1/2
    assert float(autonesy.SPL(exactly_one)(logits, y)) == pytest.approx(half)
    assert float(autonesy.SPL(exactly_one, reduction="sum")(logits, y)) == pytest.approx(2 * half)
    with pytest.raises(ValueError, match="unknown reduction 'max'"):
        autonesy.SPL(exactly_one, reduction="max")


def test_a_plain_training_loop_moves_predictions_into_the_formula():
    """Semantic loss alone, on random features: at the start about a quarter of the rows of four
    independent coin-flip outputs have exactly one true (4/16); minimising the loss puts nearly all there."""
    torch.manual_seed(0)
    exactly_one = CNF(4, ((1, 2, 3, 4), *((-a, -b) for a, b in itertools.combinations(range(1, 5), 2))), 4)
    sl = autonesy.SemanticLoss(exactly_one)
    assert isinstance(sl, torch.nn.Module) and list(sl.parameters()) == []
    net = torch.nn.Linear(6, 4)
    x = torch.randn(256, 6)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    first = sl(net(x)).item()
    for _ in range(150):
        loss = sl(net(x))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert sl(net(x)).item() < first / 10
    one_true = ((net(x) > 0).sum(dim=1) == 1).float().mean()
    assert one_true > 0.9


def test_every_way_to_name_a_formula_builds_the_same_layer(tmp_path):
    task = autonesy.load_task("chx")
    run = autonesy.formalize("chx", policy="expert", format="dimacs", out=tmp_path / "run", data=False)
    answer = (Path(run.run_dir) / "formula.txt").read_text()
    score = autonesy.score(answer, task=task, format="dimacs")
    compiled = autonesy.compile(answer, task=task, format="dimacs")
    (tmp_path / "truth.cnf").write_text(to_dimacs(task.ground_truth))
    sources = [task.ground_truth, to_dimacs(task.ground_truth), tmp_path / "truth.cnf", score, compiled, run]
    logits = torch.randn(5, task.num_vars, dtype=torch.float64)
    values = [autonesy.SemanticLoss(source, reduction="none")(logits) for source in sources]
    for value in values[1:]:
        assert torch.allclose(value, values[0])
    truth_models = projected_models(task.ground_truth)
    expected = [-math.log(sum(mass(row, y) for y in truth_models)) for row in logits.tolist()]
    assert values[0].tolist() == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (42, "cannot build a layer from a int"),
        ("x1 OR x2", "not a DIMACS formula"),
        (Path("/nonexistent/formula.cnf"), "cannot read the formula"),
        ("p cnf 1 2\n1 0\n-1 0\n", "unsatisfiable"),
    ],
)
def test_what_is_not_a_usable_formula_is_one_line(source, message):
    with pytest.raises(autonesy.AutonesyError, match=message) as error:
        autonesy.SemanticLoss(source)
    assert "\n" not in str(error.value)


def test_a_run_that_accepted_nothing_has_no_layer():
    rejected = autonesy.RunSummary(run_dir="runs/x", status="rejected", accepted=False)
    with pytest.raises(autonesy.LayerFormulaError, match="accepted no formula"):
        autonesy.SPL(rejected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_logits_on_a_gpu_train_through_the_cpu_circuit():
    sl = autonesy.SemanticLoss("p cnf 2 1\n1 2 0\n")
    net = torch.nn.Linear(3, 2).cuda()
    loss = sl(net(torch.randn(4, 3, device="cuda")))
    loss.backward()
    assert loss.device.type == "cuda" and net.weight.grad is not None and torch.isfinite(net.weight.grad).all()
    spl = autonesy.SPL("p cnf 2 1\n1 2 0\n")
    assert spl.predict(net(torch.randn(4, 3, device="cuda"))).device.type == "cuda"
