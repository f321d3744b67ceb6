"""Synthetic concept-level features for the tasks whose original inputs we cannot ship or render.

Tasks: fashion, cifar10, cifar100, bdd-oia, bdd-oia-2, road-r, cebab, chx, sushi. These stand in for
the output of a perception backbone: a feature vector per input, from which a predictor must read
the task's variables.

Generative model, per task (parameters in :data:`SPECS`):

1. Labels. y ⊨ K is drawn with the exact SDD sampler (:mod:`sampling`) under per-variable prior
   probabilities (default 0.5, i.e. uniform over the models; the driving tasks use sparser, more
   plausible priors for concepts such as obstacles or actions). Every label is a model of K.
2. Observed variables. Features show only the *observed* variables — those a backbone perceives
   (the classes; the driving concepts; the findings of an X-ray; the workers' votes). The rest
   (cifar10's attributes, the actions, the severity code, the final vote) are functions of the
   observed ones that a predictor has to work out.
3. Embedding. Each observed variable j has a direction e_j ∈ R^D (Gaussian, rescaled to a norm
   drawn from [0.6, 1.4]: some concepts are easier to see than others), fixed per task and seed
   (stream "features"). The clean feature vector is E·(2·y_obs − 1).
4. Ambiguity. With probability ``mix_prob`` an input is a blend: x = E·(λ·z + (1 − λ)·z') with
   z' the observed part of a second label y' drawn from the same prior, λ uniform in
   [``mix_low``, ``mix_high``] (> 0.5: y stays the majority reading and remains the label). A
   predictor with independent outputs reads each blended variable separately and so often mixes
   parts of y and y' into an assignment that satisfies neither: the violations that SPL and SL
   are meant to remove. Extras: ``mix_weight`` (B,), λ for blends and 1 for clean inputs.
5. Noise. Isotropic Gaussian noise of s.d. ``noise`` is added to every feature.

x is float32 of shape (B, D). Calibration: ``noise`` and ``mix_prob`` were tuned with
``benchmarks/data_build.py`` so that an unconstrained MLP with independent sigmoid outputs violates
the ground truth on a visible share of test inputs (roughly 5-40 %) while still learning the task
(measured at seed 0: chx 11 %, fashion 12 %, bdd-oia-2 7 %, cifar10 12 %, sushi 10 %, bdd-oia 27 %,
cebab 32 %, road-r 22 %, cifar100 20 %).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from autonesy.tasks.data.context import SPLITS, GenerationContext
from autonesy.tasks.data.sampling import sample_valid
from autonesy.tasks.task import Task

VERSION = "features-1"


@dataclass(frozen=True)
class FeatureSpec:
    """How a feature task's synthetic inputs are drawn: dimension, noise and how often classes mix."""

    dim: int
    noise: float
    mix_prob: float
    mix_low: float = 0.55
    mix_high: float = 0.8
    observed: tuple[str, ...] | None = None  # None: every variable is observed
    priors: dict[str, float] = field(default_factory=dict)


def _bdd_priors(with_turns: bool) -> dict[str, float]:
    priors = {
        "green_light": 0.4,
        "follow": 0.4,
        "red_light": 0.3,
        "stop_sign": 0.15,
        "car": 0.35,
        "person": 0.2,
        "rider": 0.1,
        "other_obstacle": 0.15,
    }
    if with_turns:
        for side in ("left", "right"):
            priors.update(
                {
                    f"{side}_lane": 0.4,
                    f"{side}_green_light": 0.2,
                    f"{side}_follow": 0.2,
                    f"no_{side}_lane": 0.25,
                    f"{side}_obstacle": 0.2,
                    f"{side}_solid_line": 0.25,
                }
            )
    return priors


_BDD2_CONCEPTS = (
    "green_light",
    "follow",
    "clear",
    "red_light",
    "stop_sign",
    "car",
    "person",
    "rider",
    "other_obstacle",
)
_BDD_SIDE = tuple(
    f"{pre}{side}{post}"
    for side in ("left", "right")
    for pre, post in (
        ("", "_lane"),
        ("", "_green_light"),
        ("", "_follow"),
        ("no_", "_lane"),
        ("", "_obstacle"),
        ("", "_solid_line"),
    )
)


def _road_r_priors() -> dict[str, float]:
    from autonesy.tasks.catalogue import road_r_requirements as data
    from autonesy.tasks.catalogue.driving import ROAD_R_VARIABLES

    priors = {ROAD_R_VARIABLES[label][0]: 0.12 for label in data.ACTION_LABELS}
    priors.update({ROAD_R_VARIABLES[label][0]: 0.15 for label in data.LOCATION_LABELS})
    return priors


SPECS: dict[str, FeatureSpec] = {
    "chx": FeatureSpec(
        dim=16, noise=0.30, mix_prob=0.35, observed=("cardiomegaly", "effusion", "consolidation", "pneumothorax")
    ),
    "fashion": FeatureSpec(dim=32, noise=0.45, mix_prob=0.50),
    "bdd-oia-2": FeatureSpec(dim=32, noise=0.40, mix_prob=0.60, observed=_BDD2_CONCEPTS, priors=_bdd_priors(False)),
    "cifar10": FeatureSpec(
        dim=32,
        noise=0.40,
        mix_prob=0.50,
        observed=("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"),
    ),
    "sushi": FeatureSpec(dim=32, noise=0.30, mix_prob=0.35),
    "bdd-oia": FeatureSpec(
        dim=48, noise=0.30, mix_prob=0.35, observed=_BDD2_CONCEPTS + _BDD_SIDE, priors=_bdd_priors(True)
    ),
    "cebab": FeatureSpec(
        dim=64,
        noise=0.30,
        mix_prob=0.35,
        observed=tuple(f"worker{w}_{s}" for w in range(1, 6) for s in ("positive", "negative", "neutral", "unknown")),
    ),
    "road-r": FeatureSpec(dim=64, noise=0.30, mix_prob=0.35, priors=_road_r_priors()),
    "cifar100": FeatureSpec(dim=128, noise=0.10, mix_prob=0.15),
}


def embedding(task: Task, spec: FeatureSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(observed column indices, E of shape (D, observed)) for the task."""
    observed = spec.observed or tuple(task.names)
    columns = np.array([task.index_of(name) - 1 for name in observed])
    E = rng.standard_normal((spec.dim, len(columns)))
    E /= np.linalg.norm(E, axis=0, keepdims=True)
    E *= rng.uniform(0.6, 1.4, size=len(columns))
    return columns, E


def make_features(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Synthetic feature vectors standing in for a backbone's output: labels sampled from the ground truth, observed variables embedded with noise."""
    task = ctx.task
    spec = SPECS[task.name]
    columns, E = embedding(task, spec, ctx.rng("features"))
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        y = sample_valid(task, n, rng, spec.priors)
        partner = sample_valid(task, n, rng, spec.priors)
        z = 2.0 * y[:, columns] - 1.0
        z_other = 2.0 * partner[:, columns] - 1.0
        blend = rng.random(n) < spec.mix_prob
        lam = np.where(blend, rng.uniform(spec.mix_low, spec.mix_high, size=n), 1.0)
        mixed = lam[:, None] * z + (1.0 - lam[:, None]) * z_other
        x = mixed @ E.T + spec.noise * rng.standard_normal((n, spec.dim))
        out[split] = {"x": x.astype(np.float32), "y": y, "mix_weight": lam.astype(np.float32)}
        ctx.advance(n)
    return out


def describe_features(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """An example's caption: the variables true in it."""
    return ", ".join(task.names[j] for j in np.flatnonzero(y)) or "(none)"
