"""Semantic Probabilistic Layer (SPL) on cirkit: p(y|x;K) = q(y|x) · c_K(y) / Z_x.

q(y|x) = Π_i q(y_i|x) is fully factorised, q(y_i = 1|x) = σ(l_i) with l = backbone(x). The
constraint c_K is the cirkit circuit of the formula's SDD (:mod:`autonesy.nesy.constraint`), frozen.

**Batching.** cirkit's conditional (per-example parameter) circuits are not in 0.3.1, and its
``multiply(C, Q)`` route needs a per-example loop (1,350–2,250× KLay's time), or ``vmap`` (17–36×),
and fails outright on larger SDDs ("only compatible circuits can be multiplied"). Instead the
constraint circuit is evaluated on **soft evidence**: its leaves are parameter-free layers that
read the logits (:mod:`autonesy.nesy.cirkit_ext`), so one batched forward pass over (B, N) logits
gives log Z_x = log Σ_{y⊨K} q(y|x) for every example, exactly, and autograd differentiates it.

    log p(y|x;K) = Σ_i log σ(±l_i) − log Z_x   if y ⊨ K,   −∞ otherwise.

y ⊨ K is decided by the same circuit on indicator evidence (logits ±∞). The computation uses the
unclamped log semiring (cirkit's ``lse-sum`` clamps at −708 and then gives wrong log Z for confident
logits); tested exact with logits of ±250 (log Z ≈ −750) in float32 and float64.

**Training** maximises the likelihood: loss = mean over the batch of −log p(y|x;K). A training label
that violates K (possible when K is stricter than the truth) has likelihood 0; such rows are left
out of the mean (the trainer reports how many there were) — there is nothing finite to maximise.

**Prediction** is the MAP state argmax_y q(y|x) c_K(y) (:class:`~autonesy.nesy.mpe.MaxProductDecoder`,
on the KLay circuit of the same SDD), so every prediction satisfies K.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from autonesy.nesy.constraint import Constraint
from autonesy.nesy.mpe import MaxProductDecoder


def log_q(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """log Π_i q(y_i|x) for labels y (B, N) in {0, 1}: (B,)."""
    return F.logsigmoid(torch.where(y.bool(), logits, -logits)).sum(-1)


class SPL:
    """Semantic probabilistic layer: a probabilistic circuit over the formula's SDD, so every prediction satisfies it."""

    name = "spl"

    def __init__(self, constraint: Constraint):
        constraint.require_satisfiable()
        self.constraint = constraint
        self.num_vars = constraint.num_vars
        self._circuits: dict[torch.dtype, torch.nn.Module] = {}
        base = constraint.cirkit_circuit()
        self._circuits[_float_dtype(base)] = base
        self.decoder = MaxProductDecoder(constraint)

    def _circuit(self, dtype: torch.dtype) -> torch.nn.Module:
        if dtype not in self._circuits:
            self._circuits[dtype] = copy.deepcopy(next(iter(self._circuits.values()))).to(dtype)
        return self._circuits[dtype]

    def _check(self, logits: torch.Tensor) -> None:
        if logits.ndim != 2 or logits.shape[1] != self.num_vars:
            raise ValueError(f"expected logits of shape (B, {self.num_vars}), got {tuple(logits.shape)}")

    def log_partition(self, logits: torch.Tensor) -> torch.Tensor:
        """log Z_x = log Σ_{y ⊨ K} q(y|x), (B,)."""
        self._check(logits)
        if not logits.is_floating_point():
            logits = logits.to(torch.get_default_dtype())
        return self._circuit(logits.dtype)(logits).reshape(-1)

    @torch.no_grad()
    def log_constraint(self, y: torch.Tensor) -> torch.Tensor:
        """log c_K(y): 0 where y ⊨ K, −∞ elsewhere (the circuit on indicator evidence), (B,)."""
        self._check(y)
        dtype = torch.get_default_dtype()
        evidence = torch.where(y.bool(), torch.inf, -torch.inf).to(dtype)
        value = self._circuit(dtype)(evidence).reshape(-1)
        return torch.where(value > -0.5, torch.zeros_like(value), torch.full_like(value, -torch.inf))

    def satisfies(self, y: torch.Tensor) -> torch.Tensor:
        """Whether label rows satisfy the formula (their constraint log-probability is 0)."""
        return self.log_constraint(y) == 0

    def log_likelihood(self, logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """log p(y|x;K), (B,); ``valid`` (whether y ⊨ K) is computed when not given."""
        if valid is None:
            valid = self.satisfies(y)
        lp = log_q(logits, y) - self.log_partition(logits)
        return torch.where(valid, lp, torch.full_like(lp, -torch.inf))

    def loss(self, logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Mean negative log-likelihood over the rows whose label satisfies K."""
        if valid is None:
            valid = self.satisfies(y)
        if bool(valid.all()):
            return (self.log_partition(logits) - log_q(logits, y)).mean()
        if not bool(valid.any()):
            return logits.sum() * 0.0
        kept = logits[valid]
        return (self.log_partition(kept) - log_q(kept, y[valid])).mean()

    @torch.no_grad()
    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """MAP assignments (B, N) int64, each a model of K."""
        return self.decoder(logits)


def _float_dtype(module: torch.nn.Module) -> torch.dtype:
    for tensor in list(module.parameters()) + list(module.buffers()):
        if tensor.is_floating_point():
            return tensor.dtype
    return torch.get_default_dtype()
