"""Tiny files in the original datasets' layouts, written by the tests (never downloaded).

Each writer reproduces the layout a real distribution has (file names, array shapes, dtypes,
pickle / joblib / torch containers), with a handful of rows whose labels the tests know exactly.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

SPLITS = ("train", "val", "test")

# ----------------------------------------------------------------------------------------- Warcraft

# (0,0)→(0,1)→(1,1)→(1,2)→(2,2)→(3,2)→(3,3)
STAIR_PATH = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 1, 1]], dtype=np.uint8)
STAIR_EDGES = (
    "edge_r0c0_r0c1",
    "edge_r0c1_r1c1",
    "edge_r1c1_r1c2",
    "edge_r1c2_r2c2",
    "edge_r2c2_r3c2",
    "edge_r3c2_r3c3",
)
# along the top row, then down the right column
RIM_PATH = np.array([[1, 1, 1, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]], dtype=np.uint8)
RIM_EDGES = ("edge_r0c0_r0c1", "edge_r0c1_r0c2", "edge_r0c2_r0c3", "edge_r0c3_r1c3", "edge_r1c3_r2c3", "edge_r2c3_r3c3")
# the main diagonal: an 8-neighbour path with no 4-neighbour edge at all
DIAGONAL_PATH = np.eye(4, dtype=np.uint8)


def write_warcraft(
    directory: Path, paths: dict[str, np.ndarray] | None = None, k: int = 4, weights: bool = True
) -> Path:
    """``directory/<split>_{maps,vertex_weights,shortest_paths}.npy`` for a k × k grid (8 px per cell)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    if paths is None:
        paths = {"train": np.stack([STAIR_PATH, RIM_PATH]), "val": RIM_PATH[None], "test": STAIR_PATH[None]}
    for split in SPLITS:
        p = paths[split] if k == 4 else np.zeros((1, k, k), dtype=np.uint8)
        np.save(directory / f"{split}_maps.npy", rng.integers(0, 256, size=(len(p), 8 * k, 8 * k, 3), dtype=np.uint8))
        np.save(directory / f"{split}_shortest_paths.npy", p.astype(np.float32))
        if weights:
            np.save(
                directory / f"{split}_vertex_weights.npy", rng.uniform(0.8, 9.2, size=(len(p), k, k)).astype(np.float32)
            )
    return directory


# -------------------------------------------------------------------------------------------- CIFAR

CIFAR10_NAMES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def _pickle(path: Path, obj) -> None:
    path.write_bytes(pickle.dumps(obj, protocol=2))


def cifar_images(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 3072), dtype=np.uint8)


def write_cifar10(
    root: Path, train_labels: list[list[int]] | None = None, test_labels: list[int] | None = None
) -> Path:
    """``root/cifar-10-batches-py/``: data_batch_1..5, test_batch, batches.meta (bytes keys, as in the original)."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    train_labels = train_labels or [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    test_labels = test_labels or [7, 0, 9]
    for i, labels in enumerate(train_labels, start=1):
        _pickle(
            folder / f"data_batch_{i}",
            {
                b"batch_label": f"training batch {i} of 5".encode(),
                b"labels": list(labels),
                b"data": cifar_images(len(labels), i),
                b"filenames": [f"img_{i}_{j}.png".encode() for j in range(len(labels))],
            },
        )
    _pickle(
        folder / "test_batch",
        {
            b"batch_label": b"testing batch 1 of 1",
            b"labels": list(test_labels),
            b"data": cifar_images(len(test_labels), 99),
        },
    )
    _pickle(
        folder / "batches.meta",
        {b"label_names": [n.encode() for n in CIFAR10_NAMES], b"num_cases_per_batch": 10000, b"num_vis": 3072},
    )
    return folder


def write_cifar100(root: Path, fine_names: list[str], train_labels: list[int], test_labels: list[int]) -> Path:
    """``root/cifar-100-python/``: train, test, meta."""
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True, exist_ok=True)
    for name, labels, seed in (("train", train_labels, 1), ("test", test_labels, 2)):
        _pickle(
            folder / name,
            {
                b"batch_label": name.encode(),
                b"fine_labels": list(labels),
                b"coarse_labels": [0] * len(labels),
                b"data": cifar_images(len(labels), seed),
            },
        )
    _pickle(
        folder / "meta", {b"fine_label_names": [n.encode() for n in fine_names], b"coarse_label_names": [b"x"] * 20}
    )
    return folder


# -------------------------------------------------------------------------------------------- SUSHI

# set A IDs: 0 ebi, 1 anago, 2 maguro (tuna), 3 ika, 4 uni (sea urchin), 5 ikura (salmon roe),
# 6 tamago, 7 toro (fatty tuna), 8 tekka_maki, 9 kappa_maki
SUSHI_ORDERS = [
    [7, 2, 5, 4, 0, 1, 3, 6, 8, 9],  # fatty tuna, tuna, salmon roe, sea urchin
    [0, 4, 1, 3, 5, 6, 2, 8, 9, 7],  # sea urchin, salmon roe, tuna, fatty tuna
    [9, 8, 5, 7, 6, 2, 3, 4, 1, 0],  # salmon roe, fatty tuna, tuna, sea urchin
]


def write_sushi(root: Path, orders: list[list[int]] | None = None, users: int | None = None) -> Path:
    """``root/sushi3-2016/``: sushi3a.5000.10.order (header + '0 10 items…') and sushi3.udata."""
    folder = root / "sushi3-2016"
    folder.mkdir(parents=True, exist_ok=True)
    orders = SUSHI_ORDERS * 4 if orders is None else orders
    lines = ["10 1"] + ["0 10 " + " ".join(map(str, order)) for order in orders]
    (folder / "sushi3a.5000.10.order").write_text("\n".join(lines) + "\n")
    n_users = len(orders) if users is None else users
    rows = [
        f"{u}\t{u % 2}\t{u % 6}\t{300 + u}\t{u % 48}\t{u % 12}\t{u % 2}\t{(u + 1) % 48}\t{(u + 1) % 12}\t{(u + 1) % 2}\t1"
        for u in range(n_users)
    ]
    (folder / "sushi3.udata").write_text("\n".join(rows) + "\n")
    return folder


# ------------------------------------------------------------------------------------------ rsbench


def write_mnist_pt(path: Path, digits: dict[str, list[tuple[int, int]]], bad_sum: bool = False) -> Path:
    """rsseval's 2mnist_10digits.pt: a torch-saved dict of NumPy arrays."""
    import torch

    data = {}
    for split, pairs in digits.items():
        labels = np.array([[a, b, a + b + (1 if bad_sum else 0)] for a, b in pairs], dtype=np.int32)
        images = np.random.default_rng(len(pairs)).integers(0, 256, size=(len(pairs), 28, 56)).astype(np.int32)
        data[split] = {"images": images, "labels": labels}
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(data, path)
    return path


def _png(path: Path, array: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(array).save(path)


def write_rssgen_mnist(root: Path, digits: dict[str, list]) -> Path:
    """rssgen's MNIST output: <split>/<i>.png (RGBA, as plt.imsave writes) + <i>.joblib."""
    import joblib

    for split, samples in digits.items():
        folder = root / split
        folder.mkdir(parents=True, exist_ok=True)
        for i, concepts in enumerate(samples):
            image = np.zeros((28, 56, 4), dtype=np.uint8)
            image[..., 3] = 255
            image[:, :28, :3] = 10 * i
            _png(folder / f"{i}.png", image)
            joblib.dump(
                {"label": int(np.sum(concepts)), "meta": {"concepts": [np.int64(c) for c in concepts]}},
                folder / f"{i}.joblib",
            )
    return root


def write_kandinsky_3k(
    root: Path, samples: dict[str, list[list[tuple[list[int], list[int]]]]], height: int = 8
) -> Path:
    """kandinsky-3k-original: <split>/images/<00000>.png (figures side by side) + <split>/meta/<00000>.joblib.

    A sample is a list of figures, each (shapes per object, colours per object).
    """
    import joblib

    for split, rows in samples.items():
        (root / split / "images").mkdir(parents=True, exist_ok=True)
        (root / split / "meta").mkdir(parents=True, exist_ok=True)
        for i, figures in enumerate(rows):
            image = np.zeros((height, height * len(figures), 3), dtype=np.uint8)
            for f in range(len(figures)):
                image[:, f * height : (f + 1) * height] = 40 * (f + 1)
            _png(root / split / "images" / f"{i:05d}.png", image)
            meta = {"y": 1}
            for f, (shapes, colours) in enumerate(figures):
                meta[f"fig{f}"] = {"c": np.array([shapes, colours]), "y": np.array([0, 0])}
            joblib.dump(meta, root / split / "meta" / f"{i:05d}.joblib")
    return root


def write_kandinsky_rssgen(root: Path, samples: dict[str, list[list[list[int]]]], height: int = 6) -> Path:
    """rssgen's Kandinsky output: <split>/<i>.png (RGBA) + <i>.joblib with meta['concepts'] per figure."""
    import joblib

    for split, rows in samples.items():
        folder = root / split
        folder.mkdir(parents=True, exist_ok=True)
        for i, figures in enumerate(rows):
            image = np.full((height, height * len(figures), 4), 255, dtype=np.uint8)
            image[:, :height, 0] = 7
            _png(folder / f"{i}.png", image)
            joblib.dump({"label": True, "meta": {"concepts": figures}}, folder / f"{i}.joblib")
    return root


# rsbench's BDD-OIA concept index per name (rsseval CONCEPTS_ORDER)
BOIA_INDEX = {
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


def write_bdd2048(root: Path, samples: dict[str, list[tuple[set[str], list[int]]]], dim: int = 8) -> Path:
    """bdd2048: <split>/{inputs,labels,concepts}/<id>.pt torch tensors (batch axis of 1, as saved)."""
    import torch

    for split, rows in samples.items():
        for sub in ("inputs", "labels", "concepts"):
            (root / split / sub).mkdir(parents=True, exist_ok=True)
        for i, (concepts, actions) in enumerate(rows):
            name = f"frame{i:03d}.pt"
            c = torch.zeros(1, 21)
            for concept in concepts:
                c[0, BOIA_INDEX[concept]] = 1
            torch.save(torch.full((1, dim), float(i)), root / split / "inputs" / name)
            torch.save(torch.tensor([actions + [0]], dtype=torch.float32), root / split / "labels" / name)
            torch.save(c, root / split / "concepts" / name)
    return root
