"""Build every task's data at default sizes, time it, and measure how often an unconstrained baseline
violates the ground truth on the test split.

For each task: the build time of train/val/test from nothing into a fresh temporary data
directory (or --data-dir), the split sizes and provenance, then an unconstrained baseline — a small
MLP for feature vectors, a small CNN for images, independent sigmoid outputs, binary cross-entropy,
Adam, the epoch with the lowest validation loss kept — whose test predictions (thresholded at 0.5)
are checked against the task's compiled ground truth. Reported: the share of test inputs whose
prediction violates the ground truth, exact-match accuracy and mean per-variable accuracy.

    python benchmarks/data_build.py [--tasks a,b] [--epochs-mlp 40] [--epochs-cnn 15] [--no-baseline] [--json OUT]

Runs on CPU (one torch thread by default: on a shared machine more threads only wait for each other);
all 18 tasks take a few minutes, mostly training the CNNs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np
import torch
from torch import nn

from autonesy.tasks.data.dataset import build_dataset, load_dataset
from autonesy.tasks.data.sampling import ground_truth_sdd
from autonesy.tasks.registry import TASK_NAMES, get_task


def mlp(d_in: int, d_out: int) -> nn.Module:
    return nn.Sequential(nn.Linear(d_in, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, d_out))


def cnn(shape: tuple[int, int, int], d_out: int) -> nn.Module:
    """Two 3x3 conv layers (32, 64 channels), each followed by 2x2 max-pooling while the map is at
    least 16 px high (none for the 8-px digit strips), then a 256-unit hidden layer."""
    c, h, w = shape
    layers: list[nn.Module] = []
    for c_in, c_out in ((c, 32), (32, 64)):
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU()]
        if h >= 16:
            layers.append(nn.MaxPool2d(2))
            h, w = h // 2, w // 2
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(64 * h * w, 256), nn.ReLU(), nn.Linear(256, d_out))


def train_baseline(data, epochs: int, seed: int = 0, batch: int = 64, lr: float = 1e-3) -> nn.Module:
    torch.manual_seed(seed)
    x_tr, y_tr = torch.from_numpy(data.train.x), torch.from_numpy(data.train.y.astype(np.float32))
    x_va, y_va = torch.from_numpy(data.val.x), torch.from_numpy(data.val.y.astype(np.float32))
    n_out = y_tr.shape[1]
    model = mlp(x_tr.shape[1], n_out) if x_tr.ndim == 2 else cnn(tuple(x_tr.shape[1:]), n_out)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.BCEWithLogitsLoss()
    best, best_state = float("inf"), None
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(x_tr), generator=generator)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            optimiser.zero_grad()
            loss_fn(model(x_tr[idx]), y_tr[idx]).backward()
            optimiser.step()
        model.eval()
        with torch.no_grad():
            val = loss_fn(model(x_va), y_va).item()
        if val < best:
            best, best_state = val, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    return model


def evaluate(task_name: str, model: nn.Module, split) -> dict:
    with torch.no_grad():
        pred = (torch.sigmoid(model(torch.from_numpy(split.x))) > 0.5).numpy().astype(np.uint8)
    valid = ground_truth_sdd(get_task(task_name)).evaluate(pred)
    return {
        "violation_share": float(1 - valid.mean()),
        "exact_match": float((pred == split.y).all(axis=1).mean()),
        "bit_accuracy": float((pred == split.y).mean()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument("--data-dir", default=None, help="Build here (default: a fresh temporary directory).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs-mlp", type=int, default=40)
    parser.add_argument("--epochs-cnn", type=int, default=15)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1 avoids oversubscription on a shared machine)"
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tasks = [t for t in args.tasks.split(",") if t]
    rows = []
    with tempfile.TemporaryDirectory(prefix="autonesy-data-") as tmp:
        root = args.data_dir or tmp
        total_build = 0.0
        header = f"{'task':14s} {'provenance':18s} {'train/val/test':>16s} {'x shape':>14s} {'build s':>8s}"
        if not args.no_baseline:
            header += f" {'baseline':>8s} {'fit s':>6s} {'violates':>8s} {'exact':>6s} {'bit acc':>7s}"
        print(header, flush=True)
        for name in tasks:
            report = build_dataset(get_task(name), root, seed=args.seed, progress=False, force=args.data_dir is None)
            total_build += report.seconds
            data = load_dataset(get_task(name), root, seed=args.seed, progress=False)
            sizes = data.sizes
            row = {
                "task": name,
                "provenance": data.provenance,
                "sizes": sizes,
                "x_shape": list(data.train.x.shape[1:]),
                "build_seconds": round(report.seconds, 2),
            }
            line = (
                f"{name:14s} {data.provenance:18s} {sizes['train']:>6d}/{sizes['val']}/{sizes['test']:<5d} "
                f"{'x'.join(map(str, row['x_shape'])):>14s} {report.seconds:8.2f}"
            )
            if not args.no_baseline:
                kind = "mlp" if data.train.x.ndim == 2 else "cnn"
                start = time.perf_counter()
                model = train_baseline(data, args.epochs_mlp if kind == "mlp" else args.epochs_cnn, seed=args.seed)
                fit = time.perf_counter() - start
                scores = evaluate(name, model, data.test)
                row.update(baseline=kind, fit_seconds=round(fit, 1), **{k: round(v, 4) for k, v in scores.items()})
                line += (
                    f" {kind:>8s} {fit:6.1f} {100 * scores['violation_share']:7.1f}% "
                    f"{100 * scores['exact_match']:5.1f}% {100 * scores['bit_accuracy']:6.1f}%"
                )
            print(line, flush=True)
            rows.append(row)
        print(f"total build time: {total_build:.1f} s for {len(tasks)} tasks")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)


if __name__ == "__main__":
    main()
