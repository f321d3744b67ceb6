"""Annotated train / val / test data of a task: built on first use, cached, loaded as arrays.

    from autonesy.tasks.data.dataset import load_dataset
    data = load_dataset(get_task("mn-add"))    # builds into the data directory the first time
    data.train.x, data.train.y                 # float32 (B, C, H, W) or (B, D); uint8 (B, N)

``y`` holds the task's N variables in DIMACS order (column j is variable j + 1) and every row
satisfies the task's ground truth: the generators check each split against the compiled ground
truth and the independent oracle before anything is written (:func:`sampling.check_labels`), and
fail loudly otherwise. Images are (B, C, H, W) with values in [0, 1].

Determinism: the data depend only on (task, seed, sizes, generator version); the same inputs give
byte-identical files (see :mod:`store` for the file format and :mod:`context` for the random
streams). Cache layout and atomicity: :mod:`store`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.tasks.data.context import SPLITS, GenerationContext
from autonesy.tasks.data.generators import DataGenerator, generator_for
from autonesy.tasks.data.sampling import check_labels
from autonesy.tasks.data.store import DataError, entry_dir, publish_entry, read_splits, resolve_data_dir, verify_entry
from autonesy.tasks.task import Task

FORMAT = 1
Sizes = Mapping[str, int] | Sequence[int] | None


@dataclass(frozen=True)
class Split:
    """One split's inputs and labels (and per-example extras such as the digits behind a sum)."""

    name: str
    x: np.ndarray  # float32, (B, C, H, W) for images, (B, D) for features
    y: np.ndarray  # uint8 (B, N), the task variables in DIMACS order
    extras: dict[str, np.ndarray] = field(default_factory=dict)  # generator-specific per-example data

    def __len__(self) -> int:
        return len(self.y)


@dataclass(frozen=True)
class Dataset:
    """A task's train/val/test splits with their provenance, as read from the cache."""

    task: str
    seed: int
    sizes: dict[str, int]
    provenance: str
    modality: str
    directory: Path
    manifest: dict[str, Any]
    splits: dict[str, Split]
    built: bool = False  # whether this call generated the data (False: read from the cache)

    @property
    def train(self) -> Split:
        """The training split (its labels feed the oracle test)."""
        return self.splits["train"]

    @property
    def val(self) -> Split:
        """The validation split (model selection while training)."""
        return self.splits["val"]

    @property
    def test(self) -> Split:
        """The test split (the downstream metrics)."""
        return self.splits["test"]


@dataclass(frozen=True)
class BuildReport:
    """What ``build_dataset`` did: where the entry is, its manifest, whether it was built now and how long it took."""

    task: str
    directory: Path
    manifest: dict[str, Any]
    built: bool  # False: an intact cache entry was already there
    seconds: float


def resolve_sizes(task: Task, sizes: Sizes = None) -> dict[str, int]:
    """Split sizes as {train, val, test}: the generator's defaults, or a mapping / 3-sequence."""
    return _split_sizes(task.name, generator_for(task.name).default_sizes, sizes)


def _split_sizes(task_name: str, default: Mapping[str, int], sizes: Sizes) -> dict[str, int]:
    if sizes is None:
        return dict(default)
    if isinstance(sizes, Mapping):
        unknown = set(sizes) - set(SPLITS)
        if unknown:
            raise DataError(
                f"{task_name}: unknown split(s) {', '.join(sorted(unknown))}; splits are {', '.join(SPLITS)}"
            )
        result = {**default, **{k: sizes[k] for k in sizes}}
    else:
        values = list(sizes)
        if len(values) != 3:
            raise DataError(f"{task_name}: give three split sizes (train, val, test), got {len(values)}")
        result = dict(zip(SPLITS, values))
    for split, value in result.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise DataError(f"{task_name}: the {split} size must be a positive integer, got {value!r}")
    return {split: int(result[split]) for split in SPLITS}


def _check_seed(task_name: str, seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DataError(f"{task_name}: the seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _progress_bar(task_name: str, total: int, progress: bool | None):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=f"building {task_name}", unit="ex", leave=False, file=sys.stderr, disable=None)


def generate(
    task: Task, seed: int = 0, sizes: Sizes = None, progress: bool | None = False
) -> dict[str, dict[str, np.ndarray]]:
    """Make the three splits in memory (stored dtypes), check every label, write nothing."""
    task_name = task.name
    generator = generator_for(task_name)
    sizes = _split_sizes(task_name, generator.default_sizes, sizes)
    seed = _check_seed(task_name, seed)
    bar = _progress_bar(task_name, sum(sizes.values()), progress)
    ctx = GenerationContext(task, int(seed), sizes, advance=(bar.update if bar is not None else (lambda n: None)))
    try:
        arrays = generator.make(ctx)
    finally:
        if bar is not None:
            bar.close()
    for split in SPLITS:
        data = arrays[split]
        x, y = data["x"], data["y"]
        if len(x) != sizes[split] or len(y) != sizes[split]:
            raise DataError(
                f"{task_name}: generator made {len(x)} inputs and {len(y)} labels for {split}, expected {sizes[split]}"
            )
        expected_dtype = np.uint8 if generator.x_scale is not None else np.float32
        if x.dtype != expected_dtype or y.dtype != np.uint8:
            raise DataError(
                f"{task_name}: {split} arrays have dtypes {x.dtype}/{y.dtype}, expected {np.dtype(expected_dtype)}/uint8"
            )
        if x.dtype == np.float32 and not np.isfinite(x).all():
            raise DataError(f"{task_name}: {split} features are not all finite")
        check_labels(task, y, where=f" ({split} split)")
    return arrays


def _manifest(task: Task, seed: int, sizes: dict[str, int], generator: DataGenerator, arrays) -> dict[str, Any]:
    x = {split: arrays[split]["x"] for split in SPLITS}
    return {
        "format": FORMAT,
        "task": task.name,
        "seed": int(seed),
        "sizes": sizes,
        "provenance": generator.provenance,
        "modality": generator.modality,
        "source": generator.source,
        "generator_version": generator.version,
        "x_shape": list(x["train"].shape[1:]),
        "x_stored_dtype": str(x["train"].dtype),
        "x_scale": generator.x_scale,
        "extras": sorted(k for k in arrays["train"] if k not in ("x", "y")),
        "variables": task.names,
    }


def build_dataset(
    task: Task,
    data_dir: str | Path | None = None,
    seed: int = 0,
    sizes: Sizes = None,
    progress: bool | None = None,
    force: bool = False,
) -> BuildReport:
    """Make sure the cache entry of (task, seed, sizes) exists and is intact; build it if not."""
    task_name = task.name
    generator = generator_for(task_name)
    sizes = _split_sizes(task_name, generator.default_sizes, sizes)
    seed = _check_seed(task_name, seed)
    directory = entry_dir(resolve_data_dir(data_dir), task_name, seed, sizes)
    start = time.perf_counter()
    if not force:
        manifest = verify_entry(directory, version=generator.version)
        if manifest is not None:
            return BuildReport(task_name, directory, manifest, False, time.perf_counter() - start)
    arrays = generate(task, seed, sizes, progress)
    manifest = publish_entry(directory, arrays, _manifest(task, seed, sizes, generator, arrays))
    return BuildReport(task_name, directory, manifest, True, time.perf_counter() - start)


def _to_split(name: str, arrays: dict[str, np.ndarray], x_scale: float | None) -> Split:
    x = arrays["x"]
    x = (x.astype(np.float32) * np.float32(x_scale)) if x_scale is not None else x.astype(np.float32, copy=False)
    extras = {k: v for k, v in arrays.items() if k not in ("x", "y")}
    return Split(name, x, arrays["y"].astype(np.uint8, copy=False), extras)


def load_dataset(
    task: Task,
    data_dir: str | Path | None = None,
    seed: int = 0,
    sizes: Sizes = None,
    progress: bool | None = None,
) -> Dataset:
    """The task's splits, from the cache, built there first if missing, stale or corrupted."""
    task_name = task.name
    report = build_dataset(task, data_dir, seed, sizes, progress)
    try:
        arrays = read_splits(report.directory)
        splits = {name: _to_split(name, part, report.manifest.get("x_scale")) for name, part in arrays.items()}
    except (OSError, ValueError, KeyError) as error:  # changed on disk since it was verified
        if report.built:
            raise DataError(f"{task_name}: cannot read the data just written to {report.directory}: {error}") from None
        report = build_dataset(task, data_dir, seed, sizes, progress, force=True)
        arrays = read_splits(report.directory)
        splits = {name: _to_split(name, part, report.manifest.get("x_scale")) for name, part in arrays.items()}
    manifest = report.manifest
    return Dataset(
        task=task_name,
        seed=int(manifest["seed"]),
        sizes=dict(manifest["sizes"]),
        provenance=manifest["provenance"],
        modality=manifest["modality"],
        directory=report.directory,
        manifest=manifest,
        splits=splits,
        built=report.built,
    )


def label_statistics(task: Task, dataset: Dataset) -> dict[str, Any]:
    """Per split: size, distinct label rows, validity, and how often each variable is true."""
    stats: dict[str, Any] = {}
    for name, split in dataset.splits.items():
        y = split.y
        rates = y.mean(axis=0) if len(y) else np.zeros(task.num_vars)
        rows, counts = (
            np.unique(y, axis=0, return_counts=True) if len(y) else (np.zeros((0, task.num_vars)), np.zeros(0))
        )
        try:
            check_labels(task, y)
            valid = True
        except DataError:
            valid = False
        top = np.argsort(-counts, kind="stable")[:3]
        stats[name] = {
            "size": int(len(y)),
            "x_shape": list(split.x.shape),
            "all_valid": valid,
            "distinct_labels": int(len(rows)),
            "mean_true_per_row": float(y.sum(axis=1).mean()) if len(y) else 0.0,
            "true_rate": {task.names[j]: round(float(rates[j]), 4) for j in range(task.num_vars)},
            "most_common": [
                {"true": [task.names[j] for j in np.flatnonzero(rows[k])], "share": round(float(counts[k] / len(y)), 4)}
                for k in top
            ],
        }
    return stats
