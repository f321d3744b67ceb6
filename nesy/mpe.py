"""Exact MAP (most probable explanation) over a formula: argmax_y q(y|x) · c_K(y), batched.

cirkit 0.3.1 has no max semiring and no MAP query (its conditional-circuit API is an unmerged pull
request), so MAP runs on the KLay circuit of the same SDD, in the **max-sum semiring in log space**
with an explicit top-down traceback:

1. Literal weights are shifted per variable so that the better of the two literals weighs log 1:
   w(y_i) = min(l_i, 0), w(¬y_i) = min(−l_i, 0) (= log σ(±l_i) − max(log σ(l_i), log σ(−l_i))).
   The shift is the same for every assignment, so the argmax is unchanged; and it makes a variable
   that a branch of the (non-smooth) circuit does not mention contribute its best value, 0, exactly
   what smoothing would give in max-sum. Without it a branch that skips variables would be scored
   too high.
2. Bottom-up over KLay's layers (index tensors ``ix_in`` / ``offsets``): products are segment sums,
   disjunctions segment maxima, and each disjunction records which child attains its maximum (the
   first one on ties, so the result is deterministic).
3. Top-down from the root: a disjunction activates its recorded child, a product all its children.
   Active positive / negative literal leaves fix y_i = 1 / 0; a variable left untouched lies outside
   the chosen sub-circuit and takes its own best value (l_i > 0).

The traced sub-circuit is one model of the SDD (one child per disjunction, decomposable products),
so every prediction satisfies the formula. All arithmetic is in float64 log space: no underflow
however confident the logits (the gradient-of-MPE trick in real space, PROBES.md, underflows once
the best assignment costs more than e^-708 and needs care with ties). Compared with brute force in
``tests/nesy/test_spl.py``.
"""

from __future__ import annotations

import torch

from autonesy.nesy.constraint import Constraint


class MaxProductDecoder:
    """MAP assignments of a satisfiable formula for a batch of logits (B, N) → (B, N) int64."""

    def __init__(self, constraint: Constraint):
        constraint.require_satisfiable()
        self.num_vars = constraint.num_vars
        module = constraint.klay_module("log")
        from klay.torch.layers import LogSumLayer, SumLayer

        self.layers: list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor]] = []
        for layer in module.layers:
            if isinstance(layer, LogSumLayer):
                kind = "or"
            elif isinstance(layer, SumLayer):  # a product in the log semiring
                kind = "and"
            else:  # pragma: no cover - KLay's log semiring only has these two
                raise TypeError(f"unexpected KLay layer {type(layer).__name__}")
            self.layers.append((kind, layer.ix_in.clone(), layer.offsets.clone(), layer.ix_out.clone()))

    @torch.no_grad()
    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        return self.decode(logits)[0]

    @torch.no_grad()
    def decode(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(MAP assignments (B, N) int64, log max_y q(y|x) c_K(y) (B,) float64)."""
        l = logits.detach().to(torch.float64)
        if l.ndim != 2 or l.shape[1] != self.num_vars:
            raise ValueError(f"expected logits of shape (B, {self.num_vars}), got {tuple(l.shape)}")
        batch = l.shape[0]
        zero = torch.zeros(batch, dtype=l.dtype)
        pos, neg = l.clamp(max=0.0), (-l).clamp(max=0.0)
        x = torch.cat(
            [
                torch.full((1, batch), -torch.inf, dtype=l.dtype),
                zero[None],
                torch.stack([pos.T, neg.T], 1).reshape(-1, batch),
            ]
        )  # (2 + 2N, B): ⊥, ⊤, then y_1, ¬y_1, y_2, ¬y_2, ...
        sizes: list[int] = []
        choices: list[torch.Tensor | None] = []  # per layer: the chosen input edge of each or-node
        for kind, ix_in, offsets, ix_out in self.layers:
            sizes.append(x.shape[0])
            edges = x[ix_in]  # (E, B)
            if kind == "and":
                x = torch.segment_reduce(edges, "sum", offsets=offsets, axis=0, unsafe=True)
                choices.append(None)
            else:
                best = torch.segment_reduce(edges, "max", offsets=offsets, axis=0, unsafe=True)
                edge_ids = torch.arange(len(ix_in)).unsqueeze(1).expand_as(edges)
                candidates = torch.where(edges >= best[ix_out], edge_ids, len(ix_in))
                chosen = torch.full_like(best, len(ix_in), dtype=torch.long).scatter_reduce_(
                    0, ix_out.unsqueeze(1).expand_as(edges), candidates, "amin", include_self=True
                )
                choices.append(chosen)
                x = best
        log_max = x[0] + torch.nn.functional.logsigmoid(l.abs()).sum(-1)

        active = torch.ones(x.shape[0], batch, dtype=torch.bool)
        columns = torch.arange(batch).unsqueeze(0)
        for (kind, ix_in, _offsets, ix_out), size, chosen in zip(
            reversed(self.layers), reversed(sizes), reversed(choices)
        ):
            below = torch.zeros(size, batch, dtype=torch.bool)
            if kind == "and":
                hits = torch.zeros(size, batch, dtype=torch.int32)
                hits.index_add_(0, ix_in, active[ix_out].to(torch.int32))
                below = hits > 0
            else:
                child = ix_in[chosen.clamp(max=len(ix_in) - 1)]  # (n_out, B)
                rows, cols = child[active], columns.expand_as(child)[active]
                below[rows, cols] = True
            active = below
        pos_on, neg_on = active[2::2].T, active[3::2].T  # (B, N)
        if bool((pos_on & neg_on).any()):  # pragma: no cover - impossible on a decomposable circuit
            raise RuntimeError("MAP traceback selected both literals of a variable")
        y = torch.where(pos_on, 1, torch.where(neg_on, 0, (l > 0).long()))
        return y.long(), log_max
