"""Brute-force references for the nesy differential tests (enumerate all 2^N assignments)."""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F
from bruteforce import projected_models


def all_assignments(n: int) -> torch.Tensor:
    return torch.tensor(list(itertools.product((0, 1), repeat=n)), dtype=torch.long)


def valid_mask(cnf, Y: torch.Tensor) -> torch.Tensor:
    models = projected_models(cnf)
    return torch.tensor([tuple(int(v) for v in row) in models for row in Y.tolist()], dtype=torch.bool)


def log_q_all(logits: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """(B, N) logits, (M, N) assignments → (B, M) log q(y|x), float64."""
    l = logits.double()
    return (F.logsigmoid(l)[:, None, :] * Y[None] + F.logsigmoid(-l)[:, None, :] * (1 - Y[None])).sum(-1)


def brute_log_z(logits: torch.Tensor, Y: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    lq = log_q_all(logits, Y)
    return torch.logsumexp(lq.masked_fill(~valid[None], -torch.inf), dim=1)


def brute_map(logits: torch.Tensor, Y: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    lq = log_q_all(logits, Y).masked_fill(~valid[None], -torch.inf)
    return Y[lq.argmax(1)]


def noisy_onehot_data(n_classes: int, sizes=(400, 150, 300), noise: float = 1.2, seed: int = 0, dim: int = 16):
    """Features = a fixed random projection of the one-hot label plus Gaussian noise (exactly-one task)."""
    rng = np.random.default_rng(seed)
    proj = rng.normal(size=(n_classes, dim)).astype(np.float32)
    out = []
    for size in sizes:
        cls = rng.integers(n_classes, size=size)
        y = np.eye(n_classes, dtype=np.uint8)[cls]
        x = (y.astype(np.float32) @ proj + noise * rng.normal(size=(size, dim))).astype(np.float32)
        out += [x, y]
    return tuple(out)
