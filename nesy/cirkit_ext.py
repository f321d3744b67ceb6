"""Two small extensions of cirkit 0.3.1 that SPL needs: soft-evidence literal leaves and an unclamped log semiring.

**Soft-evidence leaves.** cirkit's input layers hold their own parameters; an SPL needs leaves whose
values change with every example (the backbone's output). :class:`LogitLiteral` is an input layer
whose *input* is the logit ``l_i`` of q(y_i = 1 | x): the leaf of literal ``y_i`` outputs
``log σ(l_i)``, the leaf of ``¬y_i`` outputs ``log σ(−l_i)``. Evaluating the constraint circuit on a
batch of logits (B, N) therefore gives, in one batched forward pass,

    log Z_x = log Σ_{y ⊨ K} Π_i q(y_i | x)            (one value per example)

and evaluating it on infinite logits (+∞ where y_i = 1, −∞ where y_i = 0) turns every leaf into an
indicator (log σ(+∞) = 0, log σ(−∞) = −∞), so the same circuit gives log c_K(y) ∈ {0, −∞}.
The layer has no parameters: the circuit stays frozen whatever the optimiser does.

**Unclamped semiring.** cirkit's ``lse-sum`` semiring clamps every product and sum at
``LOG_CLAMP_MIN ≈ −708.4`` (log of the smallest normal float64). With confident wrong logits a
sub-circuit's value goes below that and log Z_x is silently wrong (PROBES.md: all logits 250 on
exactly-one give −42.3 instead of −1.386). :data:`NOCLAMP` registers ``lse-sum-noclamp``, identical
to ``lse-sum`` without the clamps. Its sum layers use a lighter log-sum-exp einsum than cirkit's: the
shift by the maximum is detached (log Σ exp(x − m) + m is the same for every m, so the shift's
gradient is zero and back-propagating through ``amax`` only costs time) and the result is not
clamped (``log`` instead of ``safelog``): an exactly-zero linear sum cannot happen on finite logits
with unit weights, since the largest term contributes exp(0) · 1, and on indicator evidence it is
the −∞ the satisfiability test wants. Exact: Δ log Z = 0 and the same gradients as cirkit's einsum
(tests/nesy/test_spl.py), at 10–40 % less forward + backward time (benchmarks/nesy_step.py).

The compilation rule is dispatched on the function's type annotations, so this module must not use
``from __future__ import annotations``.
"""

import functools
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from cirkit.backend.torch.compiler import TorchCompiler
from cirkit.backend.torch.layers.input import TorchInputFunctionLayer
from cirkit.backend.torch.semiring import LSESumSemiring, SemiringImpl, SumProductSemiring
from cirkit.backend.torch.utils import safelog
from cirkit.pipeline import PipelineContext
from cirkit.symbolic.layers import InputLayer
from cirkit.utils.scope import Scope

NOCLAMP = "lse-sum-noclamp"


class LogitLiteral(InputLayer):
    """Symbolic leaf for literal y_i (``negated=False``) or ¬y_i, fed with the logit of q(y_i = 1 | x)."""

    def __init__(self, scope: Scope, num_output_units: int = 1, *, negated: bool = False):
        if len(scope) != 1:
            raise ValueError(f"a literal leaf has exactly one variable, got scope {scope}")
        super().__init__(scope, num_output_units)
        self.negated = negated

    @property
    def config(self) -> Mapping[str, Any]:
        """The layer's settings, as cirkit serialises layers."""
        return {"scope": self.scope, "num_output_units": self.num_output_units, "negated": self.negated}


class TorchLogitLiteral(TorchInputFunctionLayer):
    """Torch leaf: (F, B, 1) logits → (F, B, K) log σ(±logit), mapped into the circuit's semiring."""

    def __init__(self, scope_idx: torch.Tensor, num_output_units: int, *, negated: bool = False, semiring=None):
        super().__init__(scope_idx, num_output_units, semiring=semiring)
        self.negated = negated

    @property
    def config(self) -> Mapping[str, Any]:
        """The layer's settings, as cirkit serialises layers."""
        return {"num_output_units": self.num_output_units, "negated": self.negated}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of the literal from logits (log-sigmoid, negated for a negative literal), computed stably."""
        if not x.is_floating_point():
            x = x.to(torch.get_default_dtype())
        out = F.logsigmoid(-x if self.negated else x).expand(-1, -1, self.num_output_units)
        return self.semiring.map_from(out, LSESumSemiring)


def compile_logit_literal(compiler: TorchCompiler, sl: LogitLiteral) -> TorchLogitLiteral:
    """cirkit's compiler rule for ``LogitLiteral``: the Torch layer on the same scope."""
    return TorchLogitLiteral(
        torch.tensor(tuple(sl.scope)), sl.num_output_units, negated=sl.negated, semiring=compiler.semiring
    )


class LSESumNoClampSemiring(LSESumSemiring):
    """``lse-sum`` without the clamp at −708.4 on sums and products."""

    @classmethod
    def sum(cls, x: torch.Tensor, dim: int, *, keepdim: bool = False) -> torch.Tensor:
        """Sum in log space (log-sum-exp) over a dimension."""
        return x.logsumexp(dim=dim, keepdim=keepdim)

    @classmethod
    def add(cls, *xs: torch.Tensor) -> torch.Tensor:
        """Add in log space (log-add-exp)."""
        return functools.reduce(torch.logaddexp, xs)

    @classmethod
    def prod(cls, x: torch.Tensor, dim: int, *, keepdim: bool = False) -> torch.Tensor:
        """Product in log space (a sum) over a dimension."""
        return x.sum(dim=dim, keepdim=keepdim)

    @classmethod
    def mul(cls, *xs: torch.Tensor) -> torch.Tensor:
        """Multiply in log space (add)."""
        return functools.reduce(torch.add, xs)

    @classmethod
    def apply_reduce(cls, func, *xs: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        """log func(exp x...) with a detached shift by the maximum and no clamp (module docstring)."""
        with torch.no_grad():  # finite even for an all −∞ input, so that x − m is −∞ and not NaN
            shifts = [torch.amax(x, dim=dim, keepdim=True).clamp_min(torch.finfo(x.dtype).min) for x in xs]
        linear = func(*[torch.exp(x - m) for x, m in zip(xs, shifts)])
        shift = functools.reduce(torch.add, shifts)
        return torch.log(linear) + (shift if keepdim else shift.squeeze(dim))


@functools.cache
def register_noclamp_semiring() -> str:
    """Register ``lse-sum-noclamp`` and its morphisms with the other semirings (idempotent)."""
    SemiringImpl.register(NOCLAMP)(LSESumNoClampSemiring)
    LSESumNoClampSemiring.register_map_from(LSESumSemiring)(lambda x: x)
    LSESumNoClampSemiring.register_map_from(SumProductSemiring)(safelog)
    LSESumSemiring.register_map_from(LSESumNoClampSemiring)(lambda x: x)
    SumProductSemiring.register_map_from(LSESumNoClampSemiring)(torch.exp)
    return NOCLAMP


def pipeline(*, clamp: bool = False, fold: bool = True, optimize: bool = False) -> PipelineContext:
    """A compilation context knowing :class:`LogitLiteral`; unclamped log semiring unless ``clamp``.

    ``fold=True`` stacks same-depth layers into one tensor operation (4–8× faster at run time);
    ``optimize=False`` was as fast or faster on SDD circuits (PROBES.md).
    """
    semiring = "lse-sum" if clamp else register_noclamp_semiring()
    ctx = PipelineContext(backend="torch", semiring=semiring, fold=fold, optimize=optimize)
    ctx.add_layer_compilation_rule(compile_logit_literal)
    return ctx
