"""Real handwritten digits for mn-add, mn-add-bin, mn-mul, mn-mul-bin and sudoku.

Source: the 1,797 handwritten digits bundled with scikit-learn (``sklearn.datasets.load_digits``;
UCI Optical Recognition of Handwritten Digits, 8 × 8 images, grey levels 0–16). No download.

Image pools. Before any example is made, the 1,797 images are split per digit class into disjoint
train / val / test pools (60 % / 15 % / 25 % of each class, shuffled by the "digit-pools" stream of
the seed). A split draws its images only from its own pool, so no test image is ever seen in
training; pairs and grids are new combinations, images are reused within a split.

Arithmetic tasks. Each example draws the two digits a, b uniformly from 0–9 (every digit pair is
a model, so this is uniform over the ground truth's models), then one image of a and one of b from
the split's pool. x is the two images side by side, shape (B, 1, 8, 16): columns 0–7 show the first
digit, 8–15 the second. y sets first_digit / second_digit and the sum or product in the task's own
encoding (one-hot, or binary least significant bit first), found through the variable names.
Extras: ``digits`` (B, 2), the digit values, and ``image_ids`` (B, 2), indices into load_digits.

Sudoku. Each example draws one of the 288 completed 4 × 4 grids uniformly (the task's
``enumerate_valid``), and for each cell an image of its digit (1–4) from the pool, written slightly
off-centre: shifted by −1, 0 or +1 pixel vertically and horizontally at random (filled with
background), as digits written into a printed grid are. Without the shifts sklearn's 8 × 8 digits
1–4 are so easy that a plain CNN reads whole grids almost perfectly and almost never violates the
rules. x is a mosaic of shape (B, 1, 32, 32): the cell in row r, column c (0-based) occupies rows
8r…8r+7 and columns 8c…8c+7. y is the cell one-hots. Extras: ``grid`` (B, 4, 4) digits,
``image_ids`` (B, 16) row-major, ``shifts`` (B, 16, 2) the (down, right) shift of each cell.

Stored x is uint8 with the original grey levels 0–16; :mod:`dataset` scales it to [0, 1] float32.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from autonesy.tasks.data.context import SPLITS, GenerationContext
from autonesy.tasks.task import Task, TaskError

VERSION = "digits-2"
POOL_FRACTIONS = {"train": 0.60, "val": 0.15, "test": 0.25}
X_SCALE = 1.0 / 16.0


@lru_cache(maxsize=1)
def load_digit_images() -> tuple[np.ndarray, np.ndarray]:
    """(images (1797, 8, 8) uint8 0-16, labels (1797,) int64) from scikit-learn's bundled copy."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    images = np.asarray(bunch.images).astype(np.uint8)
    labels = np.asarray(bunch.target).astype(np.int64)
    return images, labels


def digit_pools(rng: np.random.Generator) -> dict[str, dict[int, np.ndarray]]:
    """Disjoint per-split pools: split → digit → sorted image indices."""
    _, labels = load_digit_images()
    pools: dict[str, dict[int, np.ndarray]] = {split: {} for split in SPLITS}
    for digit in range(10):
        members = rng.permutation(np.flatnonzero(labels == digit))
        n_train = int(round(POOL_FRACTIONS["train"] * len(members)))
        n_val = int(round(POOL_FRACTIONS["val"] * len(members)))
        parts = np.split(members, [n_train, n_train + n_val])
        for split, part in zip(SPLITS, parts):
            pools[split][digit] = np.sort(part)
    return pools


def _draw_images(digits: np.ndarray, pool: dict[int, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """An image index from ``pool`` for every digit in ``digits`` (any shape), uniformly."""
    flat = digits.ravel()
    ids = np.empty(flat.shape, dtype=np.int64)
    for digit in np.unique(flat):
        where = np.flatnonzero(flat == digit)
        members = pool[int(digit)]
        ids[where] = members[rng.integers(0, len(members), size=len(where))]
    return ids.reshape(digits.shape)


# ----------------------------------------------------------------------------- arithmetic labels


def arithmetic_labels(task: Task, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Label rows for digit pairs (a, b) in the task's variable layout (via the variable names)."""
    names = task.names
    result_word = "sum" if "add" in task.name else "product"
    result = a + b if result_word == "sum" else a * b
    y = np.zeros((len(a), task.num_vars), dtype=np.uint8)
    rows = np.arange(len(a))
    if "first_digit_0" in names:  # one-hot layout
        first = np.array([task.index_of(f"first_digit_{d}") - 1 for d in range(10)])
        second = np.array([task.index_of(f"second_digit_{d}") - 1 for d in range(10)])
        results = {int(v): task.index_of(f"{result_word}_{v}") - 1 for v in np.unique(result)}
        y[rows, first[a]] = 1
        y[rows, second[b]] = 1
        y[rows, np.array([results[int(v)] for v in result])] = 1
        return y
    for prefix, values in (("first_digit", a), ("second_digit", b), (result_word, result)):
        k = 0
        while f"{prefix}_bit{k}" in names:
            y[:, task.index_of(f"{prefix}_bit{k}") - 1] = (values >> k) & 1
            k += 1
    return y


def make_arithmetic(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Pairs of handwritten digits side by side, labelled with the digits and their sum or product in the task's encoding."""
    images, _ = load_digit_images()
    pools = digit_pools(ctx.rng("digit-pools"))
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        digits = rng.integers(0, 10, size=(n, 2))
        ids = _draw_images(digits, pools[split], rng)
        x = np.concatenate([images[ids[:, 0]], images[ids[:, 1]]], axis=2)[:, None]  # (n, 1, 8, 16)
        y = arithmetic_labels(ctx.task, digits[:, 0], digits[:, 1])
        out[split] = {"x": x, "y": y, "digits": digits.astype(np.uint8), "image_ids": ids.astype(np.int32)}
        ctx.advance(n)
    return out


def describe_arithmetic(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """An example's caption: the equation its images show."""
    a, b = (int(v) for v in extras["digits"][index])
    op = "+" if "add" in task.name else "x"
    return f"{a} {op} {b} = {a + b if op == '+' else a * b}"


# ----------------------------------------------------------------------------------------- sudoku


def sudoku_grids(task: Task) -> tuple[np.ndarray, np.ndarray]:
    """(label rows (288, 64) uint8, digit grids (288, 4, 4)) of every completed 4 × 4 Sudoku."""
    if task.enumerate_valid is None:
        raise TaskError(f"task {task.name!r} cannot enumerate its grids")
    rows = np.array(list(task.enumerate_valid()), dtype=np.uint8)
    grids = np.zeros((len(rows), 4, 4), dtype=np.uint8)
    for r in range(4):
        for c in range(4):
            for d in range(1, 5):
                grids[:, r, c] += d * rows[:, task.index_of(f"r{r + 1}c{c + 1}_is_{d}") - 1]
    return rows, grids


def make_sudoku(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Completed 4 × 4 Sudoku grids as mosaics of handwritten digits (each cell shifted a pixel at random), labelled cell by cell."""
    images, _ = load_digit_images()
    pools = digit_pools(ctx.rng("digit-pools"))
    rows, grids = sudoku_grids(ctx.task)
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        which = rng.integers(0, len(rows), size=n)
        grid = grids[which]  # (n, 4, 4)
        ids = _draw_images(grid.reshape(n, 16), pools[split], rng)  # (n, 16) row-major
        shifts = rng.integers(-1, 2, size=(n, 16, 2))
        cells = shift_images(images[ids].reshape(n * 16, 8, 8), shifts.reshape(n * 16, 2)).reshape(n, 4, 4, 8, 8)
        x = cells.transpose(0, 1, 3, 2, 4).reshape(n, 1, 32, 32)
        out[split] = {
            "x": x,
            "y": rows[which],
            "grid": grid,
            "image_ids": ids.astype(np.int32),
            "shifts": shifts.astype(np.int8),
        }
        ctx.advance(n)
    return out


def shift_images(images: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Translate each (8, 8) image by (dy, dx) pixels, filling with background (0)."""
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    rows = 1 - shifts[:, 0:1] + np.arange(8)  # (k, 8): source rows in the padded image
    cols = 1 - shifts[:, 1:2] + np.arange(8)
    return padded[np.arange(len(images))[:, None, None], rows[:, :, None], cols[:, None, :]]


def describe_sudoku(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """An example's caption: the grid's digits row by row."""
    grid = extras["grid"][index]
    return "\n".join("".join(str(int(d)) for d in row) for row in grid)
