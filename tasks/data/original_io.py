"""What every original-format loader shares: finding the folder, reading arrays, checking label rows
against the ground truth, and assembling the splits into a :class:`~.dataset.Dataset`.

Kept apart from :mod:`.loaders` (the per-source readers and the dispatcher) so that :mod:`.rsbench`
can use it without importing the dispatcher that imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from autonesy.tasks.data.dataset import Dataset, Split
from autonesy.tasks.data.sampling import check_labels, ground_truth_sdd
from autonesy.tasks.data.store import DataError
from autonesy.tasks.task import Task

SPLITS = ("train", "val", "test")
INVALID_POLICIES = ("raise", "drop")


class OriginalDataError(DataError):
    """A directory that does not hold the expected original layout; the message names the file and why."""


# ------------------------------------------------------------------------------------ shared helpers


def expect_task(task: Task, names: Sequence[str], loader: str) -> None:
    """A loader reads one source's layout: handing it another task is a programming error."""
    if task.name not in names:
        raise ValueError(f"{loader} reads {', '.join(names)}, not {task.name!r}")


def find_root(directory: str | Path, required: Sequence[str], subdirs: Sequence[str], layout: str) -> Path:
    """The first of ``directory`` and ``directory/<subdir>`` holding every ``required`` file.

    Otherwise raises one line naming the first missing file of the most complete candidate.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise OriginalDataError(f"{directory}: not a directory (expected {layout})")
    for candidate in [directory, *(directory / sub for sub in subdirs)]:
        if all((candidate / name).exists() for name in required):
            return candidate
    best = max(
        [directory, *(directory / sub for sub in subdirs if (directory / sub).is_dir())],
        key=lambda c: sum((c / name).exists() for name in required),
    )
    missing = next(name for name in required if not (best / name).exists())
    raise OriginalDataError(f"{best}: missing file {missing} (expected {layout})")


def load_npy(path: Path, what: str) -> np.ndarray:
    """Read a .npy of an original dataset without pickles; a missing or unreadable file is an ``OriginalDataError``
    naming it."""
    if not path.exists():
        raise OriginalDataError(f"{path.parent}: missing file {path.name} ({what})")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as error:
        raise OriginalDataError(f"{path}: not a readable .npy array ({what}): {error}") from None


def check_shape(array: np.ndarray, expected: tuple, path: Path | str, what: str) -> None:
    """``expected`` holds ints or None (any size) per axis."""
    ok = array.ndim == len(expected) and all(e is None or s == e for s, e in zip(array.shape, expected))
    if not ok:
        want = "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
        raise OriginalDataError(f"{path}: {what} has shape {array.shape}, expected {want}")


def images_to_float(images: np.ndarray, path: Path | str, channels_last: bool) -> np.ndarray:
    """uint8 (or 0-255 integer) images → float32 in [0, 1], channels first."""
    images = np.asarray(images)
    if images.dtype.kind in "ui":
        if images.size and (images.min() < 0 or images.max() > 255):
            raise OriginalDataError(f"{path}: pixel values outside 0-255")
        out = images.astype(np.float32) / 255.0
    elif images.dtype.kind == "f":
        out = images.astype(np.float32)
        if out.size and out.max() > 1.0:
            out = out / 255.0
    else:
        raise OriginalDataError(f"{path}: images of dtype {images.dtype}, expected integers 0-255")
    if channels_last:
        out = np.moveaxis(out, -1, 1)
    return np.ascontiguousarray(out)


class LabelRows:
    """Builds (B, N) uint8 label rows by variable name."""

    def __init__(self, task: Task, batch: int) -> None:
        self.task = task
        self.y = np.zeros((batch, task.num_vars), dtype=np.uint8)
        self._column = {name: i for i, name in enumerate(task.names)}

    def column(self, name: str) -> int:
        """The column of a task variable in the label rows."""
        return self._column[name]

    def set(self, rows: np.ndarray | slice, name: str, values: np.ndarray | int = 1) -> None:
        """Set a variable's value in some rows (by name, so loaders never hard-code column numbers)."""
        self.y[rows, self._column[name]] = values


Raw = tuple[np.ndarray, np.ndarray, Mapping[str, np.ndarray]]  # x, y, extras of one split


def satisfies_ground_truth(task: Task, y: np.ndarray) -> np.ndarray:
    """(B,) booleans: which label rows are models of the task's ground truth (its compiled SDD)."""
    y = np.asarray(y, dtype=np.uint8)
    if len(y) == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(ground_truth_sdd(task).evaluate(y), dtype=bool)


def finish_split(task: Task, raw: Raw, *, split: str, source: str, invalid: str, hint: str = "") -> tuple[Split, int]:
    """Check y ⊨ K; raise or drop the violating rows. Returns the split and the number dropped."""
    if invalid not in INVALID_POLICIES:
        raise ValueError(f"invalid={invalid!r}; choose one of {', '.join(INVALID_POLICIES)}")
    x, y, extras = raw
    if len(x) != len(y) or any(len(v) != len(y) for v in extras.values()):
        raise OriginalDataError(f"{source}: {split} has {len(x)} inputs but {len(y)} label rows")
    ok = satisfies_ground_truth(task, y)
    bad = int((~ok).sum())
    if bad and invalid == "raise":
        raise OriginalDataError(
            f"{source}: {bad} of {len(y)} {split} label rows violate the {task.name} constraint"
            f"{' (' + hint + ')' if hint else ''}; load with invalid='drop' (--drop-invalid) to skip them"
        )
    if bad:
        x, y, extras = x[ok], y[ok], {k: v[ok] for k, v in extras.items()}
    if len(y) == 0:
        raise OriginalDataError(f"{source}: no {split} rows left that satisfy the {task.name} constraint")
    y = np.ascontiguousarray(y, dtype=np.uint8)
    check_labels(task, y, where=f" ({split} split of {source})")  # the SDD and the independent oracle
    x = np.ascontiguousarray(x, dtype=np.float32)
    return Split(split, x, y, {k: np.ascontiguousarray(v) for k, v in extras.items()}), bad


def assemble(
    task: Task,
    source: str,
    root: Path,
    raw: Mapping[str, Raw],
    *,
    invalid: str,
    modality: str,
    hint: str = "",
    notes: str = "",
) -> Dataset:
    """The checked splits as a :class:`Dataset` (provenance "real"; ``manifest`` says where from)."""
    splits, dropped = {}, {}
    for split in SPLITS:
        splits[split], dropped[split] = finish_split(
            task, raw[split], split=split, source=source, invalid=invalid, hint=hint
        )
    sizes = {split: len(splits[split]) for split in SPLITS}
    manifest = {
        "format": "original",
        "task": task.name,
        "seed": None,
        "sizes": sizes,
        "provenance": "real",
        "modality": modality,
        "source": source,
        "source_dir": str(root),
        "dropped": dropped,
        "notes": notes,
        "x_shape": list(splits["train"].x.shape[1:]),
        "extras": sorted(splits["train"].extras),
        "variables": task.names,
    }
    return Dataset(
        task=task.name,
        seed=0,
        sizes=sizes,
        provenance="real",
        modality=modality,
        directory=Path(root),
        manifest=manifest,
        splits=splits,
        built=False,
    )


def holdout_splits(n: int, holdout: float) -> dict[str, slice]:
    """Deterministic train/val/test slices in file order: val and test take ``holdout`` each."""
    if not 0.0 < holdout < 0.5:
        raise ValueError(f"holdout fraction {holdout} must lie strictly between 0 and 0.5")
    k = max(1, int(round(n * holdout)))
    if n < 3 * k or n - 2 * k < 1:
        raise OriginalDataError(f"only {n} rows: too few for train, val and test splits")
    return {"train": slice(0, n - 2 * k), "val": slice(n - 2 * k, n - k), "test": slice(n - k, n)}


def iter_sorted_numeric(paths: Iterable[Path]) -> list[Path]:
    """Files sorted by the integer in their stem (``2.png`` before ``10.png``), then by name."""

    def key(p: Path):
        digits = "".join(ch for ch in p.stem if ch.isdigit())
        return (int(digits) if digits else -1, p.name)

    return sorted(paths, key=key)
