"""Semantic loss (SL) on KLay: independent outputs, loss = task loss + λ · (−log WMC(K, p_θ(·|x))).

The network predicts each variable independently, p_θ(y_i = 1|x) = σ(l_i). The task loss is the
binary cross-entropy summed over the N outputs (= −log Π_i p_θ(y_i|x), the same numerator SPL
maximises), averaged over the batch; the semantic loss is −log WMC(K, p_θ), the log-probability
that an independent sample from p_θ satisfies K, computed on the KLay circuit of the formula's SDD
with ``compile=False`` and **probabilities** as inputs: KLay reads log σ(l_i) for y_i and
log σ(−l_i) for ¬y_i (both given explicitly; KLay circuits are not smooth, so weights must sum to
one per variable). λ = 1 by default. The circuit runs as one fused autograd function over KLay's
layers (:mod:`autonesy.nesy.klay_ext`: the same values, 30–50 % less time per step).

Prediction is the per-output argmax (l_i > 0); it carries no guarantee of satisfying K.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autonesy.nesy.constraint import Constraint
from autonesy.nesy.klay_ext import FusedLogWMC


def task_loss(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy summed over the outputs, averaged over the batch."""
    return F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype), reduction="none").sum(-1).mean()


class Unconstrained:
    """The bare backbone: independent outputs, task loss only, per-output argmax."""

    name = "none"

    def loss(self, logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Binary cross-entropy on the labels only: the baseline without the constraint."""
        return task_loss(logits, y)

    @torch.no_grad()
    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """Each variable thresholded on its own."""
        return (logits > 0).long()


class SemanticLoss(Unconstrained):
    """Semantic loss (Xu et al. 2018) over the formula's circuit, evaluated with KLay, added to the task loss."""

    name = "sl"

    def __init__(self, constraint: Constraint, weight: float = 1.0):
        constraint.require_satisfiable()
        self.constraint = constraint
        self.num_vars = constraint.num_vars
        self.weight = float(weight)
        self.module = constraint.klay_module("log")
        self.fused = FusedLogWMC(self.module)

    def log_wmc(self, logits: torch.Tensor) -> torch.Tensor:
        """log WMC(K, σ(l)) = log P_{y ~ p_θ}(y ⊨ K), (B,)."""
        if logits.ndim != 2 or logits.shape[1] != self.num_vars:
            raise ValueError(f"expected logits of shape (B, {self.num_vars}), got {tuple(logits.shape)}")
        return self.fused(logits)

    def semantic_loss(self, logits: torch.Tensor) -> torch.Tensor:
        """Minus the log-probability that a sample from the predicted marginals satisfies the formula, averaged over
        the batch."""
        return -self.log_wmc(logits).mean()

    def loss(self, logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Task loss plus the weighted semantic loss."""
        return task_loss(logits, y) + self.weight * self.semantic_loss(logits)
