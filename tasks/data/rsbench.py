"""Loaders for rsbench's data formats (Bortolotti et al. 2024, github.com/unitn-sml/rsbench-code).

rsbench ships two kinds of files: those its evaluation code (``rsseval``) reads, and those its
generator (``rssgen``) writes. Both are read here; the layouts:

- **MNIST addition** (rsseval): one torch-saved file ``2mnist_10digits.pt`` holding
  ``{"train"|"val"|"test": {"images": (N, 28, 56) ints, "labels": (N, 3) [digit, digit, sum]}}``.
  Loaded with ``torch.load(weights_only=True)`` and only NumPy arrays allow-listed.
- **MNIST addition / MNIST math** (rssgen): folders ``train/``, ``val/``, ``test/`` of ``<i>.png``
  (the digits side by side, 28 × 28 each) and ``<i>.joblib`` = ``{"label": …, "meta": {"concepts":
  [digit, digit]}}``. Only two-digit samples map to our tasks. For either, x is (B, 1, 28, 56) and
  the result (sum or product) is computed from the digit concepts; extras: ``digits`` (B, 2).
- **Kandinsky** (rsseval's ``kandinsky-3k-original``): ``<split>/images/<00000>.png`` and
  ``<split>/meta/<00000>.joblib`` = ``{"y": label, "fig0": {"c": concepts, "y": …}, "fig1": …}``
  where ``c[0]`` holds the shape and ``c[1]`` the colour of each object of that figure (shapes
  0–2 = square, circle, triangle; colours 0–2 = red, yellow, blue: rsbench's concept labels).
- **Kandinsky** (rssgen): ``<split>/<i>.png`` + ``<i>.joblib`` = ``{"label": bool, "meta":
  {"concepts": [[shape, colour, shape, colour, …] per figure]}}`` with shapes 4/5/6 = square /
  circle / triangle and colours 1/2/3 = red / yellow / blue.
- **BDD-OIA** (rsseval's ``bdd2048``): ``<split>/inputs/<id>.pt`` (a 2048-dimensional image
  embedding), ``<split>/labels/<id>.pt`` (actions: forward, stop, left, right, and a fifth we
  ignore) and ``<split>/concepts/<id>.pt`` (21 concepts in rsbench's index order, mapped to ours
  by name: rsbench puts no_left_lane/left_obstacle/left_solid_line at 9-11 and
  left_lane/left_green_light/left_follow at 18-20). The ``<split>_BDD_OIA.pkl`` index is not
  needed (samples are paired by file name).

Kandinsky figures are drawn side by side in one image; our tasks use two figures, so x keeps the
left two of the ``n`` equally wide figures. The number of objects per figure must be the task's
(3 for ``kand-logic``, 2 for ``kand-logic-2``: rssgen's ``n_shapes``), since an image showing an
object the labels leave out would not match them. rsbench's Kandinsky sets mix positive and
negative examples of its label, which is our constraint; negatives are not annotated data for our
tasks, so the Kandinsky loader drops rows violating the constraint by default (and counts them).

``.joblib`` and the BDD-OIA ``.pt`` files are read with joblib / ``torch.load``: joblib files are
pickles, so only load rsbench data you trust.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autonesy.tasks.data.dataset import Dataset
from autonesy.tasks.data.original_io import (
    SPLITS,
    LabelRows,
    OriginalDataError,
    Raw,
    assemble,
    expect_task,
    images_to_float,
    iter_sorted_numeric,
)
from autonesy.tasks.task import Task

DIGIT_TASKS = ("mn-add", "mn-add-bin", "mn-mul", "mn-mul-bin")
KANDINSKY_TASKS = {"kand-logic": 3, "kand-logic-2": 2}  # task → objects per figure
BDD_TASKS = ("bdd-oia", "bdd-oia-2")
MNIST_PT = "2mnist_10digits.pt"
MNIST_LAYOUT = f"rsbench MNIST data: rsseval's {MNIST_PT} or rssgen's train/val/test folders of <i>.png + <i>.joblib"
KANDINSKY_LAYOUT = (
    "rsbench Kandinsky data: <split>/images/*.png + <split>/meta/*.joblib (kandinsky-3k-original) or "
    "rssgen's <split>/<i>.png + <i>.joblib, for train, val and test"
)
KANDINSKY_SUBDIRS = ("kandinsky-3k-original", "kandinsky")
BDD_LAYOUT = "rsbench BDD-OIA data (bdd2048): <split>/inputs, <split>/labels and <split>/concepts of <id>.pt files"

# rsbench's BDD-OIA concept index (CONCEPTS_ORDER in rsseval) for each of our concept names.
RSBENCH_BOIA_CONCEPTS = {
    "green_light": 0,
    "follow": 1,
    "clear": 2,
    "red_light": 3,
    "stop_sign": 4,
    "car": 5,
    "person": 6,
    "rider": 7,
    "other_obstacle": 8,
    "no_left_lane": 9,
    "left_obstacle": 10,
    "left_solid_line": 11,
    "right_lane": 12,
    "right_green_light": 13,
    "right_follow": 14,
    "no_right_lane": 15,
    "right_obstacle": 16,
    "right_solid_line": 17,
    "left_lane": 18,
    "left_green_light": 19,
    "left_follow": 20,
}
RSBENCH_BOIA_ACTIONS = {"move_forward": 0, "stop": 1, "turn_left": 2, "turn_right": 3}
RSSGEN_SHAPES = {4: 0, 5: 1, 6: 2}  # square, circle, triangle
RSSGEN_COLOURS = {1: 0, 2: 1, 3: 2}  # red, yellow, blue


# ------------------------------------------------------------------------------------------ helpers


def _joblib(path: Path):
    import joblib

    try:
        return joblib.load(path)
    except Exception as error:  # joblib raises many kinds of errors for a bad file
        raise OriginalDataError(f"{path}: not a readable joblib file: {type(error).__name__}: {error}") from None


def _png(path: Path, mode: str) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    if not path.exists():
        raise OriginalDataError(f"{path.parent}: missing file {path.name} (the image for {path.stem}.joblib)")
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert(mode), dtype=np.uint8)
    except (UnidentifiedImageError, OSError) as error:
        raise OriginalDataError(f"{path}: not a readable image: {error}") from None


def _stack(images: list[np.ndarray], where: Path) -> np.ndarray:
    shapes = {im.shape for im in images}
    if len(shapes) > 1:
        raise OriginalDataError(f"{where}: images of different sizes {sorted(shapes)[:3]}")
    return np.stack(images)


def _split_dir(root: Path, split: str, layout: str) -> Path:
    path = root / split
    if not path.is_dir():
        raise OriginalDataError(f"{root}: missing folder {split}/ (expected {layout})")
    return path


def _torch_load(path: Path, what: str):
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        raise OriginalDataError(
            f"{path}: not a readable torch file ({what}): {type(error).__name__}: {str(error).splitlines()[0]}"
        ) from None


def _numpy_safe_globals() -> list:
    try:
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # pragma: no cover - NumPy 1.x
        from numpy.core.multiarray import _reconstruct  # type: ignore[no-redef]
    dtypes = [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]
    return [np.ndarray, np.dtype, _reconstruct, (_reconstruct, "numpy.core.multiarray._reconstruct"), *dtypes]


def _as_array(value, path: Path, what: str) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        return np.asarray(value)
    except Exception:
        raise OriginalDataError(f"{path}: {what} is not an array") from None


def _as_bits(values: np.ndarray, path: Path, what: str) -> np.ndarray:
    values = np.asarray(values)
    if values.dtype.kind == "b":
        return values.astype(np.uint8)
    if not np.isin(values, (0, 1)).all():
        raise OriginalDataError(f"{path}: {what} must be 0/1, found {sorted(set(np.unique(values).tolist()))[:5]}")
    return values.astype(np.uint8)


# -------------------------------------------------------------------------------------------- MNIST


def digits_to_labels(task: Task, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Digit pairs → label rows of a digit task (result computed from the digits)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    add = task.name.startswith("mn-add")
    result = first + second if add else first * second
    word = "sum" if add else "product"
    rows = LabelRows(task, len(first))
    if task.name.endswith("-bin"):
        for prefix, values in (("first_digit", first), ("second_digit", second), (word, result)):
            k = 0
            while f"{prefix}_bit{k}" in task.names:
                rows.set(slice(None), f"{prefix}_bit{k}", (values >> k) & 1)
                k += 1
    else:
        index = np.arange(len(first))
        for prefix, values in (("first_digit", first), ("second_digit", second), (word, result)):
            columns = np.array([rows.column(f"{prefix}_{v}") for v in range(int(values.max(initial=0)) + 1)])
            rows.y[index, columns[values]] = 1
    return rows.y


def _check_digits(digits: np.ndarray, where: Path | str) -> None:
    if digits.size and (digits.min() < 0 or digits.max() > 9):
        raise OriginalDataError(f"{where}: digit concepts outside 0-9")


def _mnist_pt(path: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    import torch

    with torch.serialization.safe_globals(_numpy_safe_globals()):
        data = _torch_load(path, "rsbench MNIST addition")
    out = {}
    for split in SPLITS:
        if not isinstance(data, dict) or split not in data:
            raise OriginalDataError(f"{path}: no {split!r} entry (expected a dict of train/val/test)")
        record = data[split]
        if not isinstance(record, dict) or "images" not in record or "labels" not in record:
            raise OriginalDataError(f"{path}: {split} lacks 'images' or 'labels'")
        images = _as_array(record["images"], path, f"{split} images")
        labels = _as_array(record["labels"], path, f"{split} labels").astype(np.int64)
        if images.ndim != 3 or labels.shape != (len(images), 3):
            raise OriginalDataError(
                f"{path}: {split} images {images.shape} and labels {labels.shape}, expected (N, 28, 56) and (N, 3)"
            )
        _check_digits(labels[:, :2], path)
        if not (labels[:, 2] == labels[:, 0] + labels[:, 1]).all():
            raise OriginalDataError(f"{path}: {split} label column 3 is not the sum of the two digits")
        out[split] = (images_to_float(images[:, None], path, channels_last=False), labels[:, :2])
    return out


def _mnist_rssgen(root: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for split in SPLITS:
        folder = _split_dir(root, split, MNIST_LAYOUT)
        metas = iter_sorted_numeric(folder.glob("*.joblib"))
        if not metas:
            raise OriginalDataError(f"{folder}: no .joblib files (expected {MNIST_LAYOUT})")
        images, digits = [], []
        for meta_path in metas:
            meta = _joblib(meta_path)
            try:
                concepts = np.asarray(meta["meta"]["concepts"], dtype=np.int64).reshape(-1)
            except (KeyError, TypeError, ValueError):
                raise OriginalDataError(f"{meta_path}: no meta['concepts'] digit list") from None
            if concepts.size != 2:
                raise OriginalDataError(
                    f"{meta_path}: {concepts.size} digits; only two-digit samples map to the mn-* tasks"
                )
            digits.append(concepts)
            images.append(_png(meta_path.with_suffix(".png"), "L"))
        digits_array = np.stack(digits)
        _check_digits(digits_array, folder)
        out[split] = (images_to_float(_stack(images, folder)[:, None], folder, channels_last=False), digits_array)
    return out


def load_rsbench_mnist(task: Task, directory: str | Path, *, invalid: str = "raise") -> Dataset:
    """rsbench MNIST pairs → one of the digit tasks (mn-add, mn-add-bin, mn-mul, mn-mul-bin)."""
    expect_task(task, DIGIT_TASKS, "load_rsbench_mnist")
    directory = Path(directory)
    candidates = (
        [directory] if directory.suffix == ".pt" else [directory / MNIST_PT, directory / "2mnist_10digits" / MNIST_PT]
    )
    pt = next((p for p in candidates if p.is_file()), None)
    if pt is not None:
        raw, source, root = _mnist_pt(pt), f"rsbench MNIST addition {pt}", pt.parent
    elif (directory / "train").is_dir():
        raw, source, root = _mnist_rssgen(directory), f"rsbench (rssgen) MNIST in {directory}", directory
    elif not directory.exists():
        raise OriginalDataError(f"{directory}: no such file or directory (expected {MNIST_LAYOUT})")
    else:
        raise OriginalDataError(f"{directory}: missing file {MNIST_PT} or folder train/ (expected {MNIST_LAYOUT})")
    labelled = {
        split: (x, digits_to_labels(task, d[:, 0], d[:, 1]), {"digits": d.astype(np.uint8)})
        for split, (x, d) in raw.items()
    }
    return assemble(
        task,
        source,
        root,
        labelled,
        invalid=invalid,
        modality="image",
        notes="x: the two digits side by side (B, 1, H, W) in [0, 1]; y: digits and their result from the digit concepts.",
    )


# ---------------------------------------------------------------------------------------- Kandinsky


def kandinsky_to_labels(task: Task, shapes: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """(B, 2, P) shape and colour indices (0-2) of two figures' objects → label rows."""
    from autonesy.tasks.catalogue.visual import KANDINSKY_COLOURS, KANDINSKY_SHAPES

    rows = LabelRows(task, len(shapes))
    index = np.arange(len(shapes))
    for image in range(2):
        for prim in range(shapes.shape[2]):
            stem = f"img{image + 1}_obj{prim + 1}"
            shape_cols = np.array([rows.column(f"{stem}_{s}") for s in KANDINSKY_SHAPES])
            colour_cols = np.array([rows.column(f"{stem}_{c}") for c in KANDINSKY_COLOURS])
            rows.y[index, shape_cols[shapes[:, image, prim]]] = 1
            rows.y[index, colour_cols[colours[:, image, prim]]] = 1
    return rows.y


def _crop_two_figures(image: np.ndarray, figures: int, path: Path) -> np.ndarray:
    width = image.shape[1]
    if figures < 2:
        raise OriginalDataError(f"{path}: {figures} figure(s); the Kandinsky tasks compare two")
    if width % figures:
        raise OriginalDataError(f"{path}: width {width} does not split into {figures} equal figures")
    return image[:, : 2 * (width // figures)]


def _kandinsky_sample_3k(meta, meta_path: Path, objects: int) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    if not isinstance(meta, dict) or "fig0" not in meta:
        raise OriginalDataError(f"{meta_path}: no 'fig0' entry (expected kandinsky-3k meta: y, fig0, fig1, …)")
    figures = sum(1 for k in meta if isinstance(k, str) and k.startswith("fig"))
    shapes, colours = [], []
    for i in range(figures):
        try:
            c = np.asarray(meta[f"fig{i}"]["c"], dtype=np.int64)
        except (KeyError, TypeError, ValueError):
            raise OriginalDataError(f"{meta_path}: fig{i} has no concept array 'c'") from None
        if c.ndim != 2 or c.shape[0] < 2:
            raise OriginalDataError(
                f"{meta_path}: fig{i}['c'] has shape {c.shape}, expected rows of shapes and colours"
            )
        shapes.append(c[0])
        colours.append(c[1])
    return _objects(shapes, colours, meta_path, objects), figures


def _kandinsky_sample_rssgen(meta, meta_path: Path, objects: int) -> tuple[tuple[np.ndarray, np.ndarray], int]:
    try:
        figures = [list(f) for f in meta["meta"]["concepts"]]
    except (KeyError, TypeError):
        raise OriginalDataError(f"{meta_path}: no meta['concepts'] list of figures") from None
    shapes, colours = [], []
    for fig in figures:
        values = [int(v) for v in fig]
        if len(values) % 2:
            raise OriginalDataError(f"{meta_path}: a figure's concepts must alternate shape and colour codes")
        try:
            shapes.append(np.array([RSSGEN_SHAPES[v] for v in values[0::2]]))
            colours.append(np.array([RSSGEN_COLOURS[v] for v in values[1::2]]))
        except KeyError as error:
            raise OriginalDataError(
                f"{meta_path}: unknown shape/colour code {error.args[0]} (shapes 4-6, colours 1-3)"
            ) from None
    return _objects(shapes, colours, meta_path, objects), len(figures)


def _objects(shapes, colours, meta_path: Path, objects: int) -> tuple[np.ndarray, np.ndarray]:
    if len(shapes) < 2:
        raise OriginalDataError(f"{meta_path}: {len(shapes)} figure(s); the Kandinsky tasks compare two")
    for s, c in zip(shapes[:2], colours[:2]):
        if len(s) != objects or len(c) != objects:
            raise OriginalDataError(
                f"{meta_path}: figures with {len(s)} objects; this task needs exactly {objects} per figure"
            )
        if s.min() < 0 or s.max() > 2 or c.min() < 0 or c.max() > 2:
            raise OriginalDataError(f"{meta_path}: shape/colour indices outside 0-2")
    return np.stack(shapes[:2]), np.stack(colours[:2])


def load_rsbench_kandinsky(task: Task, directory: str | Path, *, invalid: str = "drop") -> Dataset:
    """rsbench Kandinsky figures → kand-logic (3 objects per figure) or kand-logic-2 (2 objects)."""
    expect_task(task, tuple(KANDINSKY_TASKS), "load_rsbench_kandinsky")
    objects = KANDINSKY_TASKS[task.name]
    root = Path(directory)
    for sub in KANDINSKY_SUBDIRS:  # a data directory holding rsbench's folder
        if not (root / "train").is_dir() and (root / sub / "train").is_dir():
            root = root / sub
    if not root.is_dir():
        raise OriginalDataError(f"{root}: not a directory (expected {KANDINSKY_LAYOUT})")
    three_k = (root / "train" / "meta").is_dir()
    raw: dict[str, Raw] = {}
    for split in SPLITS:
        folder = _split_dir(root, split, KANDINSKY_LAYOUT)
        meta_folder = folder / "meta" if three_k else folder
        image_folder = folder / "images" if three_k else folder
        metas = iter_sorted_numeric(meta_folder.glob("*.joblib"))
        if not metas:
            raise OriginalDataError(f"{meta_folder}: no .joblib files (expected {KANDINSKY_LAYOUT})")
        images, all_shapes, all_colours = [], [], []
        for meta_path in metas:
            meta = _joblib(meta_path)
            read = _kandinsky_sample_3k if three_k else _kandinsky_sample_rssgen
            (shapes, colours), figures = read(meta, meta_path, objects)
            image_path = image_folder / f"{meta_path.stem}.png"
            images.append(_crop_two_figures(_png(image_path, "RGB"), figures, image_path))
            all_shapes.append(shapes)
            all_colours.append(colours)
        x = images_to_float(_stack(images, image_folder), image_folder, channels_last=True)
        raw[split] = (x, kandinsky_to_labels(task, np.stack(all_shapes), np.stack(all_colours)), {})
    return assemble(
        task,
        f"rsbench Kandinsky ({'kandinsky-3k' if three_k else 'rssgen'}) in {root}",
        root,
        raw,
        invalid=invalid,
        modality="image",
        hint="rsbench mixes positive and negative examples of its label",
        notes="x: the left two figures (B, 3, H, 2W/n) in [0, 1]; y: their objects' shapes and colours.",
    )


# ------------------------------------------------------------------------------------------ BDD-OIA


def load_rsbench_bdd_oia(task: Task, directory: str | Path, *, invalid: str = "raise") -> Dataset:
    """rsbench BDD-OIA embeddings, concepts and actions → bdd-oia (21 + 4) or bdd-oia-2 (9 + 2)."""
    expect_task(task, BDD_TASKS, "load_rsbench_bdd_oia")
    root = Path(directory)
    if not (root / "train").is_dir() and (root / "bdd2048" / "train").is_dir():
        root = root / "bdd2048"
    if not root.is_dir():
        raise OriginalDataError(f"{root}: not a directory (expected {BDD_LAYOUT})")
    raw: dict[str, Raw] = {}
    for split in SPLITS:
        folder = _split_dir(root, split, BDD_LAYOUT)
        for sub in ("inputs", "labels", "concepts"):
            if not (folder / sub).is_dir():
                raise OriginalDataError(f"{folder}: missing folder {sub}/ (expected {BDD_LAYOUT})")
        inputs = sorted((folder / "inputs").glob("*.pt"))
        if not inputs:
            raise OriginalDataError(f"{folder / 'inputs'}: no .pt files (expected {BDD_LAYOUT})")
        xs, concepts, actions = [], [], []
        for path in inputs:
            label_path, concept_path = folder / "labels" / path.name, folder / "concepts" / path.name
            for needed in (label_path, concept_path):
                if not needed.exists():
                    raise OriginalDataError(
                        f"{needed.parent}: missing file {needed.name} (paired with inputs/{path.name})"
                    )
            x = _as_array(_torch_load(path, "an image embedding"), path, "the embedding").reshape(-1)
            c = _as_array(_torch_load(concept_path, "concepts"), concept_path, "the concepts").reshape(-1)
            a = _as_array(_torch_load(label_path, "actions"), label_path, "the actions").reshape(-1)
            if c.size != len(RSBENCH_BOIA_CONCEPTS):
                raise OriginalDataError(f"{concept_path}: {c.size} concepts, expected {len(RSBENCH_BOIA_CONCEPTS)}")
            if a.size < len(RSBENCH_BOIA_ACTIONS):
                raise OriginalDataError(f"{label_path}: {a.size} action labels, expected at least 4")
            xs.append(x.astype(np.float32))
            concepts.append(_as_bits(c, concept_path, "concepts"))
            actions.append(_as_bits(a[:4], label_path, "action labels"))
        if len({v.shape for v in xs}) > 1:
            raise OriginalDataError(f"{folder / 'inputs'}: embeddings of different sizes")
        concept_array, action_array = np.stack(concepts), np.stack(actions)
        rows = LabelRows(task, len(xs))
        for name in task.names:
            if name in RSBENCH_BOIA_ACTIONS:
                rows.set(slice(None), name, action_array[:, RSBENCH_BOIA_ACTIONS[name]])
            else:
                rows.set(slice(None), name, concept_array[:, RSBENCH_BOIA_CONCEPTS[name]])
        raw[split] = (np.stack(xs), rows.y, {})
    return assemble(
        task,
        f"rsbench BDD-OIA in {root}",
        root,
        raw,
        invalid=invalid,
        modality="features",
        hint="BDD-OIA's human annotations do not always follow the driving rules",
        notes="x: rsbench's 2048-dimensional image embeddings; y: concepts and actions by name.",
    )
