"""SPL on cirkit vs brute-force enumeration: log Z_x, log p(y|x), gradients, MAP, confident logits."""

from __future__ import annotations

import functools

import pytest
import torch
from bruteforce import cnfs, sat_models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nesy_reference import all_assignments, brute_log_z, brute_map, log_q_all, valid_mask

from autonesy.nesy.constraint import constraint_for
from autonesy.nesy.spl import SPL
from autonesy.tools.cnf import CNF

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
formulas = cnfs(max_task_vars=8, max_aux=3, max_clauses=10, min_task_vars=1)


def satisfiable_case(cnf):
    Y = all_assignments(cnf.num_task_vars)
    valid = valid_mask(cnf, Y)
    return Y, valid, bool(valid.any())


@SETTINGS
@given(formulas, st.integers(0, 2**31 - 1), st.sampled_from([torch.float64, torch.float32]))
def test_log_partition_and_likelihood_match_brute_force(cnf, seed, dtype):
    Y, valid, sat = satisfiable_case(cnf)
    if not sat:
        return
    spl = SPL(constraint_for(cnf))
    n = cnf.num_task_vars
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(6, n, generator=g) * 4).to(dtype)
    tol = 1e-10 if dtype == torch.float64 else 1e-5
    ref_z = brute_log_z(logits, Y, valid)
    assert (spl.log_partition(logits).double() - ref_z).abs().max() <= tol
    # log p(y|x) of every assignment, for each example: valid → exact value, invalid → −∞
    assert spl.satisfies(Y).tolist() == valid.tolist()
    for b in range(len(logits)):
        lp = spl.log_likelihood(logits[b].expand(len(Y), n), Y).double()
        ref = log_q_all(logits[b : b + 1], Y)[0] - ref_z[b]
        assert torch.isneginf(lp[~valid]).all()
        assert (lp[valid] - ref[valid]).abs().max() <= tol
        assert abs(torch.logsumexp(lp, 0).item()) <= 10 * tol  # a distribution over the models of K


@SETTINGS
@given(formulas, st.integers(0, 2**31 - 1))
def test_gradients_match_brute_force(cnf, seed):
    Y, valid, sat = satisfiable_case(cnf)
    if not sat:
        return
    spl = SPL(constraint_for(cnf))
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(5, cnf.num_task_vars, generator=g, dtype=torch.float64) * 3
    labels = Y[valid][torch.randint(int(valid.sum()), (5,), generator=g)]
    ours = base.clone().requires_grad_()
    spl.loss(ours, labels).backward()
    ref = base.clone().requires_grad_()
    (brute_log_z(ref, Y, valid) - log_q_all(ref, labels).diagonal()).mean().backward()
    assert torch.allclose(ours.grad, ref.grad, atol=1e-10)


@SETTINGS
@given(formulas, st.integers(0, 2**31 - 1), st.sampled_from([1.0, 5.0, 300.0]))
def test_map_equals_brute_force_argmax(cnf, seed, scale):
    Y, valid, sat = satisfiable_case(cnf)
    if not sat:
        return
    spl = SPL(constraint_for(cnf))
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(16, cnf.num_task_vars, generator=g, dtype=torch.float64) * scale
    pred = spl.predict(logits)
    assert torch.equal(pred, brute_map(logits, Y, valid))
    assert spl.satisfies(pred).all()
    _, log_max = spl.decoder.decode(logits)
    ref = log_q_all(logits, Y).masked_fill(~valid[None], -torch.inf).max(1).values
    assert torch.allclose(log_max, ref, atol=1e-8)


def exactly_one(n: int) -> CNF:
    clauses = [tuple(range(1, n + 1))] + [(-i, -j) for i in range(1, n + 1) for j in range(i + 1, n + 1)]
    return CNF(n, tuple(clauses), n)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_confident_logits_are_not_clamped(dtype):
    """cirkit's lse-sum clamps at −708: all logits 250 on exactly-one would give log p ≈ −42."""
    cnf = exactly_one(4)
    spl = SPL(constraint_for(cnf))
    Y = all_assignments(4)
    valid = valid_mask(cnf, Y)
    for logits in (
        torch.full((1, 4), 250.0),
        torch.full((1, 4), -250.0),
        torch.tensor([[250.0, -250.0, 250.0, -250.0]]),
    ):
        logits = logits.to(dtype)
        ref = brute_log_z(logits, Y, valid)
        got = spl.log_partition(logits).double()
        assert torch.allclose(got, ref, rtol=1e-6, atol=1e-5), (got, ref)
        lp = spl.log_likelihood(logits.expand(len(Y), 4), Y).double()
        ref_lp = log_q_all(logits, Y)[0] - ref
        assert torch.allclose(lp[valid], ref_lp[valid], atol=1e-3 if dtype == torch.float32 else 1e-9)
        assert spl.satisfies(spl.predict(logits)).all()
    # the label y = 1000 under all-250 logits is one of four equally likely models
    lp = spl.log_likelihood(torch.full((1, 4), 250.0, dtype=dtype), torch.tensor([[1, 0, 0, 0]]))
    assert abs(lp.item() + torch.log(torch.tensor(4.0)).item()) < 1e-4


def test_loss_leaves_out_labels_outside_the_formula():
    cnf = exactly_one(3)
    spl = SPL(constraint_for(cnf))
    logits = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]])
    loss = spl.loss(logits, y)
    keep = torch.tensor([0, 2])
    ref = -spl.log_likelihood(logits[keep], y[keep]).mean()
    assert torch.allclose(loss, ref)
    assert torch.isfinite(loss)
    none = spl.loss(logits, torch.tensor([[1, 1, 1]] * 4))
    assert none.item() == 0.0
    none.backward()  # still differentiable (zero gradient)


def test_map_ties_are_broken_into_a_model():
    """Equal logits make every model of exactly-one a MAP state: the decoder must still return a model."""
    spl = SPL(constraint_for(exactly_one(5)))
    pred = spl.predict(torch.zeros(3, 5))
    assert (pred.sum(1) == 1).all()
    assert torch.equal(pred, spl.predict(torch.zeros(3, 5)))  # deterministic


def test_cardinality_encodings_with_auxiliaries():
    """Fixed formulas with many auxiliaries (PySAT sequential counter / totalizer) on N = 8."""
    from pysat.card import CardEnc, EncType

    from autonesy.tools.cnf import from_pysat

    n = 8
    cases = [
        from_pysat(CardEnc.equals(lits=list(range(1, n + 1)), bound=3, top_id=n, encoding=EncType.seqcounter), n),
        from_pysat(CardEnc.atmost(lits=list(range(1, n + 1)), bound=2, top_id=n, encoding=EncType.totalizer), n),
    ]
    for cnf in cases:
        assert cnf.num_aux_vars > 0
        Y = all_assignments(n)
        models = sat_models(cnf, n)  # too many auxiliaries to enumerate: SAT enumeration instead
        valid = torch.tensor([tuple(row) in models for row in Y.tolist()])
        assert int(valid.sum()) == (56 if cnf is cases[0] else 37)
        spl = SPL(constraint_for(cnf))
        logits = torch.randn(32, n, dtype=torch.float64) * 3
        assert torch.allclose(spl.log_partition(logits), brute_log_z(logits, Y, valid), atol=1e-10)
        assert torch.equal(spl.predict(logits), brute_map(logits, Y, valid))
        assert spl.satisfies(Y).tolist() == valid.tolist()


@functools.cache
def _cirkit_einsum_pipeline():
    """The unclamped semiring as it was: cirkit's own log-sum-exp einsum (max not detached, safelog)."""
    from cirkit.backend.torch.semiring import LSESumSemiring, SemiringImpl, SumProductSemiring
    from cirkit.backend.torch.utils import safelog
    from cirkit.pipeline import PipelineContext

    from autonesy.nesy.cirkit_ext import LSESumNoClampSemiring, compile_logit_literal

    class CirkitEinsum(LSESumNoClampSemiring):
        apply_reduce = classmethod(LSESumSemiring.apply_reduce.__func__)

    name = "lse-sum-noclamp-cirkit-einsum"
    SemiringImpl.register(name)(CirkitEinsum)
    CirkitEinsum.register_map_from(LSESumSemiring)(lambda x: x)
    CirkitEinsum.register_map_from(SumProductSemiring)(safelog)
    ctx = PipelineContext(backend="torch", semiring=name, fold=True, optimize=False)
    ctx.add_layer_compilation_rule(compile_logit_literal)
    return ctx


@SETTINGS
@given(formulas, st.integers(0, 2**31 - 1))
def test_detached_max_einsum_equals_cirkits_value_and_gradient(cnf, seed):
    Y, valid, sat = satisfiable_case(cnf)
    if not sat:
        return
    constraint = constraint_for(cnf)
    ours = constraint.cirkit_circuit().double()
    theirs = _cirkit_einsum_pipeline().compile(constraint.cirkit_symbolic()).double()
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(7, cnf.num_task_vars, generator=g, dtype=torch.float64) * 5
    values, grads = [], []
    for circuit in (ours, theirs):
        logits = base.clone().requires_grad_()
        log_z = circuit(logits).reshape(-1)
        log_z.sum().backward()
        values.append(log_z.detach())
        grads.append(logits.grad)
    assert torch.equal(values[0], values[1]) or (values[0] - values[1]).abs().max() <= 1e-13
    assert (grads[0] - grads[1]).abs().max() <= 1e-12
    assert (values[0] - brute_log_z(base, Y, valid)).abs().max() <= 1e-10
