"""KLay's log-semiring circuit, from logits to log WMC, as one autograd function with an analytic backward.

KLay's torch module runs each layer as a handful of tensor operations — a product layer is a gather
and a segment sum, a log-sum layer a gather, a detached segment max, a shift, ``nan_to_num``,
``exp``, a segment sum, ``log`` and an add — and autograd records and replays every one of them.
On the feature tasks' small circuits that fixed cost per operation is the semantic loss's cost
(benchmarks/nesy_step.py: a 70-node circuit took as long as the whole MLP step). :class:`FusedLogWMC`
runs the same layers with KLay's own index tensors (``ix_in``, ``offsets``, ``ix_out``) inside one
:class:`torch.autograd.Function` and writes the backward pass out:

- product layer (log semiring: y = Σ_{e ∈ seg} x[ix_in[e]]): ∂L/∂x[ix_in[e]] += ∂L/∂y[seg(e)];
- log-sum layer (y = log Σ_{e ∈ seg} exp(x[ix_in[e]])): ∂L/∂x[ix_in[e]] += ∂L/∂y[seg(e)] · exp(x[ix_in[e]] − y[seg(e)]),

with the softmax weights kept from the forward pass. Gathers are ``index_select`` and segment
reductions ``index_add_`` / ``scatter_reduce_`` on KLay's per-edge segment ids: on CPU at these
sizes they cost 3–8 µs where advanced indexing and ``segment_reduce`` (KLay's) cost 15–30 µs. The values are KLay's (the shift by the segment maximum is the same; an
all −∞ segment gives −∞ and zero gradient), and the tests check values and gradients against
KLay's module and brute force. The inputs are KLay's rows (⊥, ⊤, then log σ(l_i), log σ(−l_i)
per variable), built from the logits inside the function, so the log-sigmoids' backward is
written out too: ∂ log σ(l)/∂l = σ(−l), ∂ log σ(−l)/∂l = −σ(l).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from klay.torch.layers import LogSumLayer, SumLayer


def _segment_sum(values: torch.Tensor, ix_out: torch.Tensor, rows: int) -> torch.Tensor:
    return torch.zeros((rows, values.shape[1]), dtype=values.dtype).index_add_(0, ix_out, values)


class _LogWMC(torch.autograd.Function):
    """Logits → log WMC through every layer, keeping what the analytic backward needs (module docstring)."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, layers: tuple, in_rows: tuple) -> torch.Tensor:
        batch, n = logits.shape
        x = torch.empty((2 + 2 * n, batch), dtype=logits.dtype)  # KLay's input rows: ⊥, ⊤, y_1, ¬y_1, y_2, ...
        x[0], x[1] = float("-inf"), 0.0
        x[2::2] = F.logsigmoid(logits).T
        x[3::2] = F.logsigmoid(-logits).T
        floor = torch.finfo(logits.dtype).min  # an all-(−∞) segment keeps a finite shift: its terms are exp(−∞) = 0
        kept = []
        for is_log_sum, ix_in, out_rows, ix_out in layers:
            gathered = x.index_select(0, ix_in)
            if is_log_sum:
                peak = torch.full((out_rows, batch), floor, dtype=x.dtype)
                peak.scatter_reduce_(0, ix_out.unsqueeze(1).expand_as(gathered), gathered, "amax")
                shifted = gathered.sub_(peak.index_select(0, ix_out)).exp_()
                total = _segment_sum(shifted, ix_out, out_rows)
                kept.append(shifted.div_(total.clamp_min(1.0).index_select(0, ix_out)))  # total ≥ 1 unless all −∞
                x = total.log_().add_(peak)
            else:
                kept.append(None)
                x = _segment_sum(gathered, ix_out, out_rows)
        ctx.layers, ctx.kept, ctx.in_rows = layers, kept, in_rows
        ctx.save_for_backward(logits)
        return x[0]

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        grad = grad.unsqueeze(0)
        for (is_log_sum, ix_in, _out_rows, ix_out), weights, rows in zip(
            reversed(ctx.layers), reversed(ctx.kept), reversed(ctx.in_rows), strict=True
        ):
            edge_grad = grad.index_select(0, ix_out)
            if is_log_sum:
                edge_grad.mul_(weights)
            grad = torch.zeros((rows, grad.shape[1]), dtype=grad.dtype).index_add_(0, ix_in, edge_grad)
        (logits,) = ctx.saved_tensors
        if grad.shape[0] < 2 + 2 * logits.shape[1]:  # the circuit reads fewer rows than there are inputs
            grad = torch.cat([grad, grad.new_zeros((2 + 2 * logits.shape[1] - grad.shape[0], grad.shape[1]))])
        # d log σ(l) / dl = σ(−l), d log σ(−l) / dl = −σ(l)
        positive = torch.sigmoid(logits)
        grad_logits = grad[2::2].T * (1 - positive) - grad[3::2].T * positive
        return grad_logits, None, None


class FusedLogWMC(torch.nn.Module):
    """log WMC(K, σ(l)) from logits on KLay's log-semiring module of K, one fused forward and backward."""

    def __init__(self, module: torch.nn.Module):
        super().__init__()
        layers, rows = [], []
        for layer in module.layers:
            if not isinstance(layer, (LogSumLayer, SumLayer)):
                raise TypeError(f"not a KLay log-semiring layer: {type(layer).__name__}")
            layers.append((isinstance(layer, LogSumLayer), layer.ix_in, layer.out_shape[0], layer.ix_out))
            rows.append(layer.in_shape[0])
        self.layers, self.in_rows = tuple(layers), tuple(rows)

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        """(B, N) logits of q(y_i = 1) → (B,) log WMC, the value of KLay's module on log σ(±l)."""
        return _LogWMC.apply(logits, self.layers, self.in_rows)
