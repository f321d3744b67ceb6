"""Backbones per input modality: a small CNN for images, an MLP for feature vectors.

Every formula of a task (the candidate, the ground truth, no formula at all) gets the same backbone
architecture and, for a given seed, the same initial weights: :func:`make_backbone` seeds its own
generator, so what differs between runs is the objective only. Both output N logits, one per task
variable (q(y_i = 1|x) = σ(logit_i)). Sizes are chosen for CPU training of a few thousand examples.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


class MLP(nn.Module):
    """(B, D) features → (B, N) logits: two hidden ReLU layers."""

    def __init__(self, in_features: int, num_outputs: int, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_outputs),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from flattened features."""
        return self.net(x.flatten(1))


class SmallCNN(nn.Module):
    """(B, C, H, W) images → (B, N) logits: two 3×3 conv blocks (16, 32 channels, 2×2 max-pool each),
    then a hidden layer over the flattened feature map, which keeps the spatial layout that grid
    outputs (Warcraft edges, Sudoku cells, digits side by side) depend on."""

    def __init__(
        self, in_shape: Sequence[int], num_outputs: int, channels: Sequence[int] = (16, 32), hidden: int = 128
    ):
        super().__init__()
        c, h, w = in_shape
        layers: list[nn.Module] = []
        for out_channels in channels:
            layers += [nn.Conv2d(c, out_channels, 3, padding=1), nn.ReLU()]
            if h >= 4 and w >= 4:
                layers.append(nn.MaxPool2d(2))
                h, w = h // 2, w // 2
            c = out_channels
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, hidden), nn.ReLU(), nn.Linear(hidden, num_outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits from an image batch."""
        return self.head(self.features(x))


class AddChannel(nn.Module):
    """(B, H, W) → (B, 1, H, W) for single-channel images given without a channel axis."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Add the channel axis a single-channel image batch lacks."""
        return x.unsqueeze(1)


def modality_of(x_shape: Sequence[int]) -> str:
    """'image' for per-example shapes (C, H, W) or (H, W), 'features' for (D,)."""
    if len(x_shape) == 1:
        return "features"
    if len(x_shape) in (2, 3):
        return "image"
    raise ValueError(f"cannot pick a backbone for inputs of per-example shape {tuple(x_shape)}")


def make_backbone(x_shape: Sequence[int], num_outputs: int, seed: int = 0) -> nn.Module:
    """The backbone for per-example input shape ``x_shape``, initialised from ``seed`` alone."""
    x_shape = tuple(int(s) for s in x_shape)
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        if modality_of(x_shape) == "features":
            return MLP(x_shape[0], num_outputs)
        if len(x_shape) == 2:
            return nn.Sequential(AddChannel(), SmallCNN((1, *x_shape), num_outputs))
        return SmallCNN(x_shape, num_outputs)
    finally:
        torch.random.set_rng_state(state)
