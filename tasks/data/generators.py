"""Which generator makes each task's data, with its provenance, version and default split sizes.

| tasks | generator | provenance | x (as loaded, float32) |
|---|---|---|---|
| mn-add, mn-add-bin, mn-mul, mn-mul-bin | :mod:`digits` (sklearn's real digits) | real | (B, 1, 8, 16) |
| sudoku | :mod:`digits` | real | (B, 1, 32, 32) |
| warcraft | :mod:`warcraft_maps` | procedural | (B, 3, 32, 32) |
| kand-logic-2 | :mod:`shapes` | procedural | (B, 3, 32, 64) |
| kand-logic | :mod:`shapes` | procedural | (B, 3, 32, 96) |
| cle4evr | :mod:`shapes` | procedural | (B, 3, 32, 48) |
| the other nine | :mod:`features` | synthetic-features | (B, D) |

Default sizes: 3,000 train / 500 val / 1,000 test, except warcraft with 10,000 / 1,000 / 1,000
(the split sizes of the original Warcraft shortest-path data; with 3,000 maps a plain CNN has not
yet learnt the path and violates the constraint on half the test maps). All 18 build in under a
minute on two cores; see ``benchmarks/data_build.py``. A generator's version string is stored in
each cache manifest: bump it whenever its output changes, and old caches are rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from autonesy.tasks.data import digits, features, shapes, warcraft_maps
from autonesy.tasks.data.context import GenerationContext
from autonesy.tasks.registry import TASK_NAMES, UnknownTaskError
from autonesy.tasks.task import Task

DEFAULT_SIZES = {"train": 3000, "val": 500, "test": 1000}

Describe = Callable[[Task, dict, int, np.ndarray], str]


@dataclass(frozen=True)
class DataGenerator:
    """How one task's data is made: the generator and caption functions, provenance, modality and a version that
    invalidates old cache entries."""

    provenance: str  # "real" | "procedural" | "synthetic-features" (the task metadata's vocabulary)
    modality: str  # "image" (x is (B, C, H, W)) or "features" (x is (B, D))
    version: str
    make: Callable[[GenerationContext], dict] = field(repr=False)
    describe: Describe = field(repr=False)
    source: str = ""
    x_scale: float | None = None  # stored uint8 x times this gives the float32 x; None: stored as float32
    default_sizes: dict = field(default_factory=lambda: dict(DEFAULT_SIZES))


_DIGITS_SOURCE = "scikit-learn's bundled handwritten digits (load_digits, 8x8), train/val/test image pools disjoint"

_ARITHMETIC = DataGenerator(
    "real",
    "image",
    digits.VERSION,
    digits.make_arithmetic,
    digits.describe_arithmetic,
    _DIGITS_SOURCE + "; two digits side by side",
    digits.X_SCALE,
)
_SUDOKU = DataGenerator(
    "real",
    "image",
    digits.VERSION,
    digits.make_sudoku,
    digits.describe_sudoku,
    _DIGITS_SOURCE + "; 4x4 grids of digits 1-4 forming completed Sudokus",
    digits.X_SCALE,
)
_WARCRAFT = DataGenerator(
    "procedural",
    "image",
    warcraft_maps.VERSION,
    warcraft_maps.make_warcraft,
    warcraft_maps.describe_warcraft,
    "procedural 4x4 terrain maps (6 tile types with costs), cheapest path by Dijkstra",
    warcraft_maps.X_SCALE,
    default_sizes={"train": 10000, "val": 1000, "test": 1000},
)
_KANDINSKY = DataGenerator(
    "procedural",
    "image",
    shapes.VERSION,
    shapes.make_kandinsky,
    shapes.describe_kandinsky,
    "rendered Kandinsky-style images of coloured primitives (Pillow), two images side by side",
    shapes.X_SCALE,
)
_CLEVR = DataGenerator(
    "procedural",
    "image",
    shapes.VERSION,
    shapes.make_clevr,
    shapes.describe_clevr,
    "rendered CLEVR-style scenes of two objects (Pillow)",
    shapes.X_SCALE,
)
_FEATURES = DataGenerator(
    "synthetic-features",
    "features",
    features.VERSION,
    features.make_features,
    features.describe_features,
    "synthetic concept-level features drawn from labelled models of the ground truth, with noise and blends",
)

GENERATORS: dict[str, DataGenerator] = {
    "mn-add": _ARITHMETIC,
    "mn-add-bin": _ARITHMETIC,
    "mn-mul": _ARITHMETIC,
    "mn-mul-bin": _ARITHMETIC,
    "sudoku": _SUDOKU,
    "warcraft": _WARCRAFT,
    "kand-logic": _KANDINSKY,
    "kand-logic-2": _KANDINSKY,
    "cle4evr": _CLEVR,
    **{name: _FEATURES for name in features.SPECS},
}

assert set(GENERATORS) == set(TASK_NAMES), "every catalogue task needs a data generator"


def generator_for(task_name: str) -> DataGenerator:
    """The data generator of a catalogue task; an unknown name is an ``UnknownTaskError``."""
    if task_name not in GENERATORS:
        raise UnknownTaskError(task_name)
    return GENERATORS[task_name]
