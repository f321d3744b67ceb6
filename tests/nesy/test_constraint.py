"""Formula → circuits: trivial SDDs, variables absent from the SDD, validity on the circuit vs the SDD."""

from __future__ import annotations

import pytest
import torch
from bruteforce import projected_models
from nesy_reference import all_assignments, brute_log_z, brute_map, valid_mask

from autonesy.nesy.constraint import UnsatisfiableConstraint, constraint_for
from autonesy.nesy.sl import SemanticLoss
from autonesy.nesy.spl import SPL
from autonesy.tools.cnf import CNF

TRIVIAL = {
    "top (no clauses)": CNF(3, (), 3),
    "top (tautology)": CNF(3, ((1, -1),), 3),
    "single literal": CNF(3, ((2,),), 3),
    "single negative literal": CNF(3, ((-3,),), 3),
    "literal via aux": CNF(2, ((1, 3), (-3,)), 3),
    "var 3 absent": CNF(3, ((1, 2),), 3),
    "one variable": CNF(1, ((1,),), 1),
    "one variable top": CNF(1, (), 1),
    "last var only": CNF(4, ((-4,), (4, -1)), 4),
}


@pytest.mark.parametrize("name", list(TRIVIAL))
def test_trivial_and_partial_formulas(name):
    cnf = TRIVIAL[name]
    n = cnf.num_task_vars
    c = constraint_for(cnf)
    Y = all_assignments(n)
    valid = valid_mask(cnf, Y)
    spl = SPL(c)
    assert spl.satisfies(Y).tolist() == valid.tolist()
    assert c.evaluate(Y.numpy()).tolist() == valid.tolist()
    torch.manual_seed(0)
    logits = torch.randn(5, n, dtype=torch.float64) * 3
    assert torch.allclose(spl.log_partition(logits), brute_log_z(logits, Y, valid), atol=1e-10)
    sl = SemanticLoss(c)
    assert torch.allclose(sl.log_wmc(logits), brute_log_z(logits, Y, valid), atol=1e-10)
    assert torch.equal(spl.predict(logits), brute_map(logits, Y, valid))


def test_unsatisfiable_formula_is_refused():
    c = constraint_for(CNF(2, ((1,), (-1,)), 2))
    assert c.is_false and c.model_count == 0
    with pytest.raises(UnsatisfiableConstraint, match="unsatisfiable"):
        SPL(c)
    with pytest.raises(UnsatisfiableConstraint):
        SemanticLoss(c)
    assert not c.evaluate(all_assignments(2).numpy()).any()


def test_constraint_is_cached_per_formula_and_circuits_built_once():
    cnf = CNF(3, ((1, 2, 3), (-1, -2)), 3)
    a, b = constraint_for(cnf), constraint_for(CNF(3, ((1, 2, 3), (-1, -2)), 3))
    assert a is b
    assert a.cirkit_circuit() is b.cirkit_circuit()
    assert a.klay_module("log") is a.klay_module("log")


def test_circuit_leaves_and_weights_are_frozen():
    c = constraint_for(CNF(4, ((1, 2, 3, 4), (-1, -2), (-3, -4)), 4))
    circuit = c.cirkit_circuit()
    assert all(not p.requires_grad for p in circuit.parameters())
    logits = torch.randn(8, 4, requires_grad=True)
    SPL(c).log_partition(logits).sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert all(p.grad is None for p in circuit.parameters())


@pytest.mark.parametrize("many_models", [False, True])
def test_circuit_sdd_is_chosen_among_vtrees_and_the_comparison_is_kept(monkeypatch, many_models):
    import autonesy.nesy.constraint as constraint_module

    if many_models:  # force the clause route
        monkeypatch.setattr(constraint_module, "MODELS_CAP", 2)
    cnf = CNF(8, tuple((i, i + 1) for i in range(1, 8)) + ((-1, -8),), 8)
    sdd, choice = constraint_module.compile_for_circuits(cnf)
    expected = {"balanced", "right"} | (
        {"balanced-elimination-order", "vertical", "minimised"} if many_models else set()
    )
    assert set(choice["candidates"]) == expected
    costs = {k: v["cost"] for k, v in choice["candidates"].items() if "cost" in v}
    assert choice["chosen"] == min(costs, key=costs.get)
    assert sdd.model_count() == len(projected_models(cnf))


def test_an_overflowing_candidate_is_reported(monkeypatch):
    import autonesy.nesy.constraint as constraint_module

    monkeypatch.setattr(constraint_module, "MODELS_CAP", 2)
    monkeypatch.setattr(constraint_module, "NODES_PER_LITERAL", 0)
    sdd, choice = constraint_module.compile_for_circuits(CNF(6, ((1, 2, 3), (-4, 5), (6, -1)), 6))
    assert choice["chosen"] == "minimised"
    unminimised = ("balanced", "balanced-elimination-order", "right", "vertical")
    assert all("overflow" in choice["candidates"][v] for v in unminimised)
