"""Loaders for the original datasets, read from a directory the user provides (``--data-dir``).

Each loader reads one source's own file layout, maps its annotations onto the task's variables in
DIMACS order, and checks every label row against the task's ground truth (compiled to an SDD).
Rows that violate it make the loader raise (``invalid="raise"``, one line naming how many rows of
which split) or are dropped and counted (``invalid="drop"``); the kept rows then pass
:func:`sampling.check_labels` (SDD and the independent oracle) like generated data. The result is a
:class:`dataset.Dataset` (provenance "real", ``manifest["format"] == "original"``, ``manifest``
naming the source, the folder read and the rows dropped per split) whose splits hold float32 x
(images in [0, 1], channels first (B, C, H, W); features (B, D)), uint8 y (B, N) and per-source
extras. Nothing is cached: the originals already sit in the user's folder.

    from autonesy.tasks.data.loaders import load_original
    data = load_original(get_task("warcraft"), "~/data")   # or the dataset's own folder
    data.train.x, data.train.y

The directory may be the dataset's own folder or a data directory holding it under its usual name
(``warcraft_shortest_path_oneskin/4x4``, ``cifar-10-batches-py``, ``cifar-100-python``,
``sushi3-2016``, ``2mnist_10digits``, ``kandinsky-3k-original``, ``bdd2048``), e.g. the data
directory of generated data, which keeps its own files under ``generated/``. On the command line:
``autonesy-agent data load TASK --data-dir DIR [--drop-invalid]``; ``autonesy-agent data fetch``
downloads CIFAR-10/100 and SUSHI3 (:mod:`.fetch`).

Sources and layouts (what the original distributions hold):

- **Warcraft shortest path** (Vlastelica Pogančić et al. 2020; ``warcraft_maps.tar.gz`` unpacks to
  ``warcraft_shortest_path_oneskin/<k>x<k>/``): per split ``train``/``val``/``test`` the files
  ``<split>_maps.npy`` (N, 8k, 8k, 3) uint8 terrain images, ``<split>_vertex_weights.npy`` (N, k, k)
  cell costs and ``<split>_shortest_paths.npy`` (N, k, k) 0/1 matrices marking the cells on the
  cheapest top-left → bottom-right path. Our task is the 4 × 4 grid: a ``4x4`` directory in that
  layout is needed (the published archive holds 12x12 to 30x30; cropping is not supported, since a
  crop of a path is not a corner-to-corner path). Edges: an edge variable is true when both cells
  it joins are marked (the 4-neighbour edges induced by the path cells). For a cheapest path on
  positive costs these are exactly its consecutive steps. The original solver moves through 8
  neighbours, so paths with diagonal steps induce disconnected edges and fail the ground-truth check.
  x: the maps (B, 3, 8k, 8k); extras: ``costs`` (the vertex weights, when the file is there).
- **CIFAR-10 / CIFAR-100** (python pickles, ``cifar-10-batches-py/`` and ``cifar-100-python/``):
  ``data_batch_1..5`` + ``test_batch`` (CIFAR-10) or ``train`` + ``test`` (CIFAR-100), each a dict
  with ``b'data'`` (n, 3072) uint8 (1024 red, 1024 green, 1024 blue values, rows of 32 pixels) and
  ``b'labels'`` / ``b'fine_labels'``; ``batches.meta`` / ``meta`` name the classes. Validation =
  the last ``val_fraction`` of the training rows (no shuffling). The pickles are read with an
  unpickler that only admits NumPy arrays, so a tampered file cannot run code. x: (B, 3, 32, 32);
  extras: ``labels`` (the class index).
- **SUSHI3** (``sushi3-2016/``): ``sushi3a.5000.10.order`` (a header line, then per respondent
  ``0 10 i1 … i10``: item set A's IDs 0–9 from most to least preferred) and ``sushi3.udata`` (per
  respondent, tab-separated: ID, gender, age group, answering time, prefecture / region / east-west
  until age 15, the same three now, and whether the prefecture changed). x = the 10 user attributes
  (raw codes as float32); y = the ranking of our four items (tuna = maguro 2, fatty tuna = toro 7,
  salmon roe = ikura 5, sea urchin = uni 4) by their relative order in the full ranking: the first
  of the four in the respondent's order gets rank 1, and so on. Splits: users in file order, the
  first ``1 - 2·holdout`` train, then ``holdout`` val and ``holdout`` test. extras: ``orders``
  (B, 10), the full set-A ranking.
- **rsbench** formats (MNIST addition / MNIST math, Kandinsky, BDD-OIA): see :mod:`.rsbench`.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from autonesy.tasks.data import rsbench
from autonesy.tasks.data.dataset import Dataset
from autonesy.tasks.data.original_io import (
    SPLITS,
    LabelRows,
    OriginalDataError,
    assemble,
    check_shape,
    expect_task,
    find_root,
    holdout_splits,
    images_to_float,
    load_npy,
)
from autonesy.tasks.task import Task

WARCRAFT_LAYOUT = (
    "the Warcraft shortest-path layout: <split>_maps.npy, <split>_shortest_paths.npy and optionally "
    "<split>_vertex_weights.npy for train, val and test, in a 4x4 directory"
)
_WARCRAFT_SUBDIRS = ("4x4", "warcraft_shortest_path_oneskin/4x4")


def path_matrix_to_edges(paths: np.ndarray) -> np.ndarray:
    """(B, 4, 4) 0/1 path-cell matrices → (B, 24) uint8 edge variables of the ``warcraft`` task.

    Edge (a, b) is chosen when both cells a and b are on the path, i.e. the 4-neighbour edges the
    path cells induce. Edge order is the task's: 12 horizontal edges row by row, then 12 vertical.
    """
    from autonesy.tasks.catalogue.warcraft import EDGES, SIZE

    paths = np.asarray(paths)
    if paths.ndim != 3 or paths.shape[1:] != (SIZE, SIZE):
        raise OriginalDataError(f"path matrices have shape {paths.shape}, expected (B, {SIZE}, {SIZE})")
    cells = paths != 0
    columns = [cells[:, a[0], a[1]] & cells[:, b[0], b[1]] for a, b in EDGES]
    return np.stack(columns, axis=1).astype(np.uint8)


def _warcraft_root(directory: Path) -> Path:
    required = [f"{s}_{kind}.npy" for s in SPLITS for kind in ("maps", "shortest_paths")]
    try:
        return find_root(directory, required, _WARCRAFT_SUBDIRS, WARCRAFT_LAYOUT)
    except OriginalDataError:
        other = sorted(
            p.name
            for base in (directory, directory / "warcraft_shortest_path_oneskin")
            if base.is_dir()
            for p in base.iterdir()
            if p.is_dir() and p.name != "4x4" and p.name.count("x") == 1 and p.name.replace("x", "").isdigit()
        )
        if other:
            raise OriginalDataError(
                f"{directory}: only {', '.join(other)} grids found; the warcraft task is a 4x4 grid and cropping "
                "larger maps is not supported (a cropped path no longer joins the corners)"
            ) from None
        raise


def load_warcraft(task: Task, directory: str | Path, *, invalid: str = "raise") -> Dataset:
    """Warcraft shortest-path ``.npy`` files (4 × 4 grid) → the ``warcraft`` task's 24 edge variables."""
    expect_task(task, ("warcraft",), "load_warcraft")
    root = _warcraft_root(Path(directory))
    raw = {}
    for split in SPLITS:
        maps_path, paths_path = root / f"{split}_maps.npy", root / f"{split}_shortest_paths.npy"
        maps = load_npy(maps_path, "terrain images")
        paths = load_npy(paths_path, "shortest-path cell matrices")
        if paths.ndim == 3 and paths.shape[1] == paths.shape[2] and paths.shape[1] != 4:
            k = paths.shape[1]
            raise OriginalDataError(
                f"{paths_path}: a {k}x{k} grid; the warcraft task is a 4x4 grid and cropping is not supported"
            )
        check_shape(paths, (None, 4, 4), paths_path, "the shortest-path matrix array")
        check_shape(maps, (len(paths), None, None, 3), maps_path, "the map image array")
        if not np.isin(paths, (0, 1)).all():
            raise OriginalDataError(f"{paths_path}: path matrices must hold only 0 and 1")
        extras = {}
        weights_path = root / f"{split}_vertex_weights.npy"
        if weights_path.exists():
            weights = load_npy(weights_path, "cell costs")
            check_shape(weights, (len(paths), 4, 4), weights_path, "the vertex-weight array")
            extras["costs"] = weights.astype(np.float32)
        raw[split] = (images_to_float(maps, maps_path, channels_last=True), path_matrix_to_edges(paths), extras)
    return assemble(
        task,
        f"Warcraft shortest path (4x4) in {root}",
        root,
        raw,
        invalid=invalid,
        modality="image",
        hint="a path with diagonal steps, as the original 8-neighbour solver makes, has no 4-neighbour edge form",
        notes="x: terrain images (B, 3, H, W) in [0, 1]; y: the 4-neighbour edges induced by the path cells.",
    )


# ------------------------------------------------------------------------------------------- CIFAR

try:  # NumPy 2 renamed numpy.core to numpy._core; pickles may name either
    from numpy._core import multiarray as _multiarray
except ImportError:  # pragma: no cover - NumPy 1.x
    from numpy.core import multiarray as _multiarray  # type: ignore[no-redef]

_NUMPY_GLOBALS = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    **{
        (module, name): getattr(_multiarray, name)
        for module in ("numpy.core.multiarray", "numpy._core.multiarray")
        for name in ("_reconstruct", "scalar")
    },
}


class _ArraysOnlyUnpickler(pickle.Unpickler):
    """Admits plain containers and NumPy arrays; any other global is refused (no code can run)."""

    def find_class(self, module: str, name: str):
        if (module, name) in _NUMPY_GLOBALS:
            return _NUMPY_GLOBALS[(module, name)]
        if module in ("numpy.dtypes",) and name.endswith("DType") and hasattr(np.dtypes, name):
            return getattr(np.dtypes, name)
        if module in ("copy_reg", "copyreg") and name == "_reconstructor":
            import copyreg

            return copyreg._reconstructor  # type: ignore[attr-defined]  # private, stable since Python 2
        if module in ("__builtin__", "builtins") and name == "object":
            return object
        if module == "_codecs" and name == "encode":  # bytes in a protocol-2 pickle written by Python 3
            import codecs

            return codecs.encode
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def load_pickle_arrays(path: Path, what: str):
    """A CIFAR-style pickle (Python 2 or 3) of dicts, lists and NumPy arrays; keys stay bytes."""
    if not path.exists():
        raise OriginalDataError(f"{path.parent}: missing file {path.name} ({what})")
    try:
        return _ArraysOnlyUnpickler(io.BytesIO(path.read_bytes()), encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError) as error:
        raise OriginalDataError(f"{path}: not a readable CIFAR python pickle ({what}): {error}") from None


def _key(record: dict, name: str, path: Path):
    for k in (name.encode(), name):
        if isinstance(record, dict) and k in record:
            return record[k]
    raise OriginalDataError(f"{path}: no {name!r} entry (expected the CIFAR python pickle format)")


def _cifar_batch(path: Path, label_key: str, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    record = load_pickle_arrays(path, "a CIFAR batch")
    data = np.asarray(_key(record, "data", path))
    labels = np.asarray(_key(record, label_key, path))
    check_shape(data, (None, 3072), path, "b'data'")
    if data.dtype != np.uint8:
        raise OriginalDataError(f"{path}: b'data' has dtype {data.dtype}, expected uint8")
    if labels.shape != (len(data),):
        raise OriginalDataError(f"{path}: {len(labels)} labels for {len(data)} images")
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise OriginalDataError(f"{path}: labels outside 0-{num_classes - 1}")
    return data.reshape(-1, 3, 32, 32), labels.astype(np.int64)


def _check_class_names(meta_path: Path, key: str, expected: Sequence[str]) -> None:
    if not meta_path.exists():
        return
    names = [
        n.decode() if isinstance(n, bytes) else str(n)
        for n in _key(load_pickle_arrays(meta_path, "class names"), key, meta_path)
    ]
    if names != list(expected):
        raise OriginalDataError(f"{meta_path}: class names {names[:4]}… differ from the task's {list(expected)[:4]}…")


CIFAR10_LAYOUT = "the CIFAR-10 python layout: data_batch_1 … data_batch_5 and test_batch (cifar-10-batches-py)"
CIFAR100_LAYOUT = "the CIFAR-100 python layout: train and test (cifar-100-python)"


def load_cifar(task: Task, directory: str | Path, *, val_fraction: float = 0.1, invalid: str = "raise") -> Dataset:
    """CIFAR-10/100 python pickles → ``cifar10`` (class one-hot + its attribute profile) or ``cifar100``."""
    from autonesy.tasks.catalogue import classification as cls

    expect_task(task, ("cifar10", "cifar100"), "load_cifar")
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction {val_fraction} must lie strictly between 0 and 1")
    if task.name == "cifar10":
        train_files = [f"data_batch_{i}" for i in range(1, 6)]
        root = find_root(directory, train_files + ["test_batch"], ("cifar-10-batches-py",), CIFAR10_LAYOUT)
        _check_class_names(root / "batches.meta", "label_names", cls.CIFAR10_CLASSES)
        parts = [_cifar_batch(root / f, "labels", 10) for f in train_files]
        train_x = np.concatenate([p[0] for p in parts])
        train_labels = np.concatenate([p[1] for p in parts])
        test_x, test_labels = _cifar_batch(root / "test_batch", "labels", 10)
        classes: tuple[str, ...] = cls.CIFAR10_CLASSES
    else:
        root = find_root(directory, ["train", "test"], ("cifar-100-python",), CIFAR100_LAYOUT)
        _check_class_names(root / "meta", "fine_label_names", cls.CIFAR100_CLASSES)
        train_x, train_labels = _cifar_batch(root / "train", "fine_labels", 100)
        test_x, test_labels = _cifar_batch(root / "test", "fine_labels", 100)
        classes = cls.CIFAR100_CLASSES

    def labels_to_y(labels: np.ndarray) -> np.ndarray:
        rows = LabelRows(task, len(labels))
        class_columns = np.array([rows.column(c) for c in classes])
        rows.y[np.arange(len(labels)), class_columns[labels]] = 1
        if task.name == "cifar10":
            for c, name in enumerate(classes):
                for attribute in cls.CIFAR10_PROFILES[name]:
                    rows.set(labels == c, attribute)
        return rows.y

    n_val = max(1, int(round(len(train_x) * val_fraction)))
    if len(train_x) - n_val < 1:
        raise OriginalDataError(f"{root}: only {len(train_x)} training images, too few to hold out a validation split")
    cut = len(train_x) - n_val
    raw = {
        "train": (
            images_to_float(train_x[:cut], root, False),
            labels_to_y(train_labels[:cut]),
            {"labels": train_labels[:cut]},
        ),
        "val": (
            images_to_float(train_x[cut:], root, False),
            labels_to_y(train_labels[cut:]),
            {"labels": train_labels[cut:]},
        ),
        "test": (images_to_float(test_x, root, False), labels_to_y(test_labels), {"labels": test_labels}),
    }
    return assemble(
        task,
        f"{'CIFAR-10' if task.name == 'cifar10' else 'CIFAR-100'} python pickles in {root}",
        root,
        raw,
        invalid=invalid,
        modality="image",
        notes=f"x: (B, 3, 32, 32) in [0, 1]; val = the last {val_fraction:.0%} of the training images.",
    )


# -------------------------------------------------------------------------------------------- SUSHI

SUSHI_ORDER_FILE = "sushi3a.5000.10.order"
SUSHI_USER_FILE = "sushi3.udata"
SUSHI_LAYOUT = f"the SUSHI3 layout: {SUSHI_ORDER_FILE} and {SUSHI_USER_FILE} (sushi3-2016)"
# Item set A of SUSHI3 (README-en.txt): ID → Japanese name.
SUSHI3A_ITEMS = ("ebi", "anago", "maguro", "ika", "uni", "ikura", "tamago", "toro", "tekka_maki", "kappa_maki")
SUSHI_USER_COLUMNS = (
    "gender",
    "age_group",
    "answer_time",
    "prefecture_until_15",
    "region_until_15",
    "east_west_until_15",
    "prefecture_now",
    "region_now",
    "east_west_now",
    "prefecture_changed",
)


def _parse_sushi_orders(path: Path) -> np.ndarray:
    lines = path.read_text(encoding="ascii", errors="replace").splitlines()
    if not lines:
        raise OriginalDataError(f"{path}: empty file (expected a header line, then '0 10 item … item' per respondent)")
    orders = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split()
        try:
            values = [int(v) for v in fields]
        except ValueError:
            raise OriginalDataError(f"{path}:{number}: non-integer field in {line!r}") from None
        if len(values) != 12 or values[1] != 10 or sorted(values[2:]) != list(range(10)):
            raise OriginalDataError(
                f"{path}:{number}: expected '0 10' and a ranking of the ten items 0-9, got {line.strip()!r}"
            )
        orders.append(values[2:])
    if not orders:
        raise OriginalDataError(f"{path}: no rankings after the header line")
    return np.array(orders, dtype=np.int64)


def _parse_sushi_users(path: Path) -> np.ndarray:
    rows = []
    for number, line in enumerate(path.read_text(encoding="ascii", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 1 + len(SUSHI_USER_COLUMNS):
            raise OriginalDataError(
                f"{path}:{number}: {len(fields)} fields, expected {1 + len(SUSHI_USER_COLUMNS)} (ID + 10 attributes)"
            )
        try:
            rows.append([float(v) for v in fields[1:]])
        except ValueError:
            raise OriginalDataError(f"{path}:{number}: non-numeric field in {line.strip()!r}") from None
    return np.array(rows, dtype=np.float32).reshape(-1, len(SUSHI_USER_COLUMNS))


def sushi_orders_to_rankings(task: Task, orders: np.ndarray) -> np.ndarray:
    """(B, 10) SUSHI3 set-A orders (most preferred first) → (B, 16) ``sushi`` permutation matrices.

    Our four items keep their relative order: the one the respondent lists first gets rank 1.
    """
    from autonesy.tasks.catalogue.ranking import SUSHI_ITEMS

    ids = [SUSHI3A_ITEMS.index(japanese) for _, _, japanese in SUSHI_ITEMS]
    orders = np.asarray(orders)
    position = np.argsort(orders, axis=1)  # position[b, item] = place of item in b's order
    ranks = np.argsort(np.argsort(position[:, ids], axis=1), axis=1)  # 0-based rank among our four
    rows = LabelRows(task, len(orders))
    for i, (stem, _, _) in enumerate(SUSHI_ITEMS):
        for r in range(len(SUSHI_ITEMS)):
            rows.set(ranks[:, i] == r, f"{stem}_rank_{r + 1}")
    return rows.y


def load_sushi(task: Task, directory: str | Path, *, holdout: float = 0.1, invalid: str = "raise") -> Dataset:
    """SUSHI3 set-A rankings + user attributes → the ``sushi`` task's 4 × 4 permutation matrices."""
    expect_task(task, ("sushi",), "load_sushi")
    root = find_root(directory, [SUSHI_ORDER_FILE, SUSHI_USER_FILE], ("sushi3-2016",), SUSHI_LAYOUT)
    orders = _parse_sushi_orders(root / SUSHI_ORDER_FILE)
    users = _parse_sushi_users(root / SUSHI_USER_FILE)
    if len(users) != len(orders):
        raise OriginalDataError(f"{root}: {len(orders)} rankings but {len(users)} user rows in {SUSHI_USER_FILE}")
    y = sushi_orders_to_rankings(task, orders)
    raw = {split: (users[s], y[s], {"orders": orders[s]}) for split, s in holdout_splits(len(y), holdout).items()}
    return assemble(
        task,
        f"SUSHI3 set A in {root}",
        root,
        raw,
        invalid=invalid,
        modality="features",
        notes="x: the 10 sushi3.udata attributes (raw codes); y: our four items ranked by their order in set A.",
    )


# --------------------------------------------------------------------------------------- dispatcher


# task name → (loader(task, directory, **kwargs), name of the original source, fetchable name or None)
ORIGINAL_SOURCES: dict[str, tuple[Callable[..., Dataset], str, str | None]] = {
    "warcraft": (load_warcraft, "Warcraft shortest path (.npy, 4x4)", None),
    "cifar10": (load_cifar, "CIFAR-10 python pickles", "cifar10"),
    "cifar100": (load_cifar, "CIFAR-100 python pickles", "cifar100"),
    "sushi": (load_sushi, "SUSHI3 set A", "sushi"),
    "mn-add": (rsbench.load_rsbench_mnist, "rsbench MNIST addition", None),
    "mn-add-bin": (rsbench.load_rsbench_mnist, "rsbench MNIST addition", None),
    "mn-mul": (rsbench.load_rsbench_mnist, "rsbench MNIST math", None),
    "mn-mul-bin": (rsbench.load_rsbench_mnist, "rsbench MNIST math", None),
    "kand-logic": (rsbench.load_rsbench_kandinsky, "rsbench Kandinsky", None),
    "kand-logic-2": (rsbench.load_rsbench_kandinsky, "rsbench Kandinsky", None),
    "bdd-oia": (rsbench.load_rsbench_bdd_oia, "rsbench BDD-OIA (bdd2048)", None),
    "bdd-oia-2": (rsbench.load_rsbench_bdd_oia, "rsbench BDD-OIA (bdd2048)", None),
}


def load_original(task: Task, directory: str | Path, *, invalid: str | None = None, **kwargs) -> Dataset:
    """Load ``task``'s annotated data from an original dataset in ``directory``.

    ``invalid`` None keeps each loader's default ("raise", except Kandinsky: "drop").
    """
    if task.name not in ORIGINAL_SOURCES:
        raise OriginalDataError(
            f"no original-format loader for task {task.name!r}; tasks with one: {', '.join(ORIGINAL_SOURCES)}"
        )
    loader = ORIGINAL_SOURCES[task.name][0]
    if invalid is not None:
        kwargs["invalid"] = invalid
    return loader(task, Path(directory).expanduser(), **kwargs)
