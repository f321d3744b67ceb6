"""Semantic loss on KLay vs a brute-force −log WMC with autograd."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from bruteforce import cnfs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nesy_reference import all_assignments, brute_log_z, valid_mask

from autonesy.nesy.constraint import constraint_for
from autonesy.nesy.sl import SemanticLoss, Unconstrained

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    cnfs(max_task_vars=8, max_aux=3, max_clauses=10),
    st.integers(0, 2**31 - 1),
    st.sampled_from([torch.float64, torch.float32]),
)
def test_semantic_loss_and_gradient_match_brute_force(cnf, seed, dtype):
    Y = all_assignments(cnf.num_task_vars)
    valid = valid_mask(cnf, Y)
    if not valid.any():
        return
    sl = SemanticLoss(constraint_for(cnf))
    g = torch.Generator().manual_seed(seed)
    base = (torch.randn(6, cnf.num_task_vars, generator=g, dtype=torch.float64) * 3).to(dtype)
    labels = Y[valid][torch.randint(int(valid.sum()), (6,), generator=g)]
    ours = base.clone().requires_grad_()
    loss = sl.loss(ours, labels)
    loss.backward()
    ref = base.double().clone().requires_grad_()
    # brute force: −log Σ_{y ⊨ K} Π_i p_i(y_i), p = σ(logit), plus BCE summed over the outputs
    p = torch.sigmoid(ref)
    wmc = torch.stack(
        [
            sum(torch.prod(torch.where(Y[m].bool(), p[b], 1 - p[b])) for m in range(len(Y)) if valid[m])
            for b in range(len(ref))
        ]
    )
    bce = F.binary_cross_entropy(p, labels.double(), reduction="none").sum(-1)
    ref_loss = (bce - wmc.log()).mean()
    ref_loss.backward()
    tol = 1e-9 if dtype == torch.float64 else 1e-4
    assert abs(loss.item() - ref_loss.item()) <= tol * max(1.0, abs(ref_loss.item()))
    assert torch.allclose(ours.grad.double(), ref.grad, atol=tol)
    assert torch.allclose(sl.log_wmc(base).double(), brute_log_z(base, Y, valid), atol=tol)


def test_weight_scales_the_semantic_term_and_prediction_is_per_output():
    from autonesy.tools.cnf import CNF

    sl0 = SemanticLoss(constraint_for(CNF(3, ((1, 2, 3), (-1, -2)), 3)), weight=0.0)
    sl2 = SemanticLoss(sl0.constraint, weight=2.0)
    logits = torch.randn(4, 3)
    y = torch.tensor([[1, 0, 0]] * 4)
    base = Unconstrained().loss(logits, y)
    assert torch.allclose(sl0.loss(logits, y), base)
    assert torch.allclose(sl2.loss(logits, y), base + 2 * sl2.semantic_loss(logits))
    assert torch.equal(sl2.predict(logits), (logits > 0).long())


@SETTINGS
@given(
    cnfs(max_task_vars=8, max_aux=3, max_clauses=10),
    st.integers(0, 2**31 - 1),
    st.sampled_from([1.0, 30.0]),
    st.sampled_from([torch.float64, torch.float32]),
)
def test_the_fused_circuit_equals_klays_own_module(cnf, seed, scale, dtype):
    from autonesy.nesy.klay_ext import FusedLogWMC

    if not valid_mask(cnf, all_assignments(cnf.num_task_vars)).any():
        return
    module = constraint_for(cnf).klay_module("log")
    g = torch.Generator().manual_seed(seed)
    base = (torch.randn(7, cnf.num_task_vars, generator=g, dtype=torch.float64) * scale).to(dtype)
    upstream = torch.rand(7, generator=g, dtype=torch.float64).to(dtype)
    fused_in, klay_in = base.clone().requires_grad_(), base.clone().requires_grad_()
    fused = FusedLogWMC(module)(fused_in)
    klay = module(F.logsigmoid(klay_in), F.logsigmoid(-klay_in)).reshape(-1)
    (fused * upstream).sum().backward()
    (klay * upstream).sum().backward()
    tol = 1e-10 if dtype == torch.float64 else 1e-5
    assert torch.allclose(fused, klay, rtol=tol, atol=tol)
    assert torch.allclose(fused_in.grad, klay_in.grad, rtol=tol, atol=tol)
