"""Training loop shared by the unconstrained backbone, SPL and SL: plain arrays in, a trained model out.

- **Determinism.** Given a seed, the backbone's initial weights (:func:`make_backbone`) and the
  order of the mini-batches (a NumPy generator) are fixed, and nothing else is random, so two runs
  with the same seed, data and thread count give the same model and metrics.
- **Early stopping** on the validation split: after every epoch the method's own predictions on
  the validation inputs are scored by ``½ (exact-match accuracy + micro-F1)``; training stops after
  ``patience`` epochs without improvement and the best epoch's weights are restored.
- **CPU-friendly defaults**: Adam (lr 1e-3), batch 128, at most 30 epochs, patience 5, an optional
  wall-clock cap per run, and an optional intra-op thread count (``threads``). On a busy machine,
  torch's default thread pool can make these small models 10–40× slower than one thread (measured
  while other processes held the cores); ``threads=1`` is the safe choice there.
- **Progress** bars (tqdm, to stderr) per run, with loss and validation score.
- **Resumable**: given a :class:`~autonesy.nesy.checkpoint.TrainingStore` and a key, the state after
  every epoch (weights, optimiser, best weights, history, both random generators) is saved, and a run
  started again with the same key and fingerprint continues from it with the same result as one that
  was never stopped.
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import numpy as np
import torch

from autonesy.nesy.backbones import make_backbone
from autonesy.nesy.checkpoint import TrainingStore, fingerprint


class Method(Protocol):
    """What the trainer needs of a NeSy method: a loss over the backbone's logits and a prediction rule."""

    name: str

    def loss(self, logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor: ...

    def predict(self, logits: torch.Tensor) -> torch.Tensor: ...


@dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters, recorded with every result so a run can be repeated."""

    epochs: int = 30
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.0
    patience: int = 5
    min_delta: float = 1e-4
    eval_batch_size: int = 1024
    max_seconds_per_run: float | None = None
    threads: int | None = None  # torch intra-op threads during the run (None: leave torch's setting)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON data."""
        return asdict(self)


@dataclass(frozen=True)
class Arrays:
    """The six arrays a run needs: x float32 (B, ...) and y 0/1 (B, N) per split."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    def __post_init__(self) -> None:
        for split in ("train", "val", "test"):
            x, y = getattr(self, f"x_{split}"), getattr(self, f"y_{split}")
            if len(x) != len(y):
                raise ValueError(f"{split}: {len(x)} inputs but {len(y)} labels")
            if len(y) == 0:
                raise ValueError(f"{split}: no examples")
            if np.asarray(y).ndim != 2:
                raise ValueError(f"{split}: labels must be (B, N), got shape {np.asarray(y).shape}")
        n = {np.asarray(getattr(self, f"y_{s}")).shape[1] for s in ("train", "val", "test")}
        if len(n) != 1:
            raise ValueError(f"the splits disagree on the number of outputs: {sorted(n)}")

    @property
    def num_outputs(self) -> int:
        """The number of label columns (task variables)."""
        return int(np.asarray(self.y_train).shape[1])

    @property
    def x_shape(self) -> tuple[int, ...]:
        """The shape of one input, which picks the backbone."""
        return tuple(np.asarray(self.x_train).shape[1:])

    @classmethod
    def from_any(cls, data: Any) -> Arrays:
        """From an :class:`Arrays`, a dataset with ``.train/.val/.test`` splits holding ``.x``/``.y``
        (``autonesy.tasks.data``), a mapping of the six names, or a 6-sequence in this order."""
        if isinstance(data, Arrays):
            return data
        if all(hasattr(data, s) for s in ("train", "val", "test")):
            return cls(data.train.x, data.train.y, data.val.x, data.val.y, data.test.x, data.test.y)
        names = ("x_train", "y_train", "x_val", "y_val", "x_test", "y_test")
        if isinstance(data, dict):
            return cls(**{k: data[k] for k in names})
        values = list(data)
        if len(values) != 6:
            raise ValueError("give the data as (x_train, y_train, x_val, y_val, x_test, y_test)")
        return cls(*values)


@dataclass
class TrainResult:
    """A trained model with its method, seed, best epoch and the metrics recorded while training."""

    model: torch.nn.Module
    method: Method
    seed: int
    best_epoch: int
    epochs_run: int
    best_val_score: float
    seconds: float
    train_labels_violating: int  # training labels outside the formula (left out of SPL's likelihood)
    history: list[dict[str, float]] = field(default_factory=list)
    stopped: str = ""

    def summary(self) -> dict[str, Any]:
        """The result as JSON data (without the model)."""
        return {
            "seed": self.seed,
            "best_epoch": self.best_epoch,
            "epochs_run": self.epochs_run,
            "best_val_score": self.best_val_score,
            "train_seconds": self.seconds,
            "train_labels_violating": self.train_labels_violating,
            "stopped": self.stopped,
        }


def _tensor_x(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))


def _tensor_y(y: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(y, dtype=np.uint8))


@torch.no_grad()
def predict(model: torch.nn.Module, method: Method, x: np.ndarray | torch.Tensor, batch_size: int = 1024) -> np.ndarray:
    """The method's predictions (B, N) uint8 for inputs x, in batches, in eval mode."""
    model.eval()
    xt = x if isinstance(x, torch.Tensor) else _tensor_x(x)
    out = [method.predict(model(xt[i : i + batch_size])).to(torch.uint8) for i in range(0, len(xt), batch_size)]
    return torch.cat(out).numpy()


def validation_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """½ (exact-match accuracy + micro-F1): the early-stopping criterion."""
    t, p = np.asarray(y_true).astype(bool), np.asarray(y_pred).astype(bool)
    tp, fp, fn = int((t & p).sum()), int((~t & p).sum()), int((t & ~p).sum())
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0
    return 0.5 * (float((t == p).all(axis=1).mean()) + f1)


def label_validity(method: Method, y: torch.Tensor, batch_size: int = 4096) -> torch.Tensor | None:
    """Whether each label satisfies the method's formula (SPL only; None for the others)."""
    satisfies = getattr(method, "satisfies", None)
    if satisfies is None:
        return None
    return torch.cat([satisfies(y[i : i + batch_size]) for i in range(0, len(y), batch_size)])


def train(
    method: Method,
    data: Arrays,
    *,
    seed: int = 0,
    config: TrainConfig = TrainConfig(),
    progress: bool = True,
    desc: str = "",
    store: TrainingStore | None = None,
    key: str = "",
    identity: str = "",
) -> TrainResult:
    """Train a fresh backbone (seeded) with ``method``'s loss; early stopping on the validation split.

    With ``store``, the state after each epoch is saved under ``key`` and a saved state for the same
    run (``identity``: what the caller trains on, e.g. the constraint; the seed, configuration and data
    are added here) is continued instead of starting afresh."""
    if config.threads is not None:
        before = torch.get_num_threads()
        torch.set_num_threads(int(config.threads))
        try:
            return train(
                method,
                data,
                seed=seed,
                config=replace(config, threads=None),
                progress=progress,
                desc=desc,
                store=store,
                key=key,
                identity=identity,
            )
        finally:
            torch.set_num_threads(before)
    start = time.perf_counter()
    model = make_backbone(data.x_shape, data.num_outputs, seed=seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    x_train, y_train = _tensor_x(data.x_train), _tensor_y(data.y_train)
    x_val = _tensor_x(data.x_val)
    valid = label_validity(method, y_train)
    violating = 0 if valid is None else int((~valid).sum())
    rng = np.random.default_rng(seed)
    n = len(y_train)
    steps = math.ceil(n / config.batch_size)

    best_score, best_epoch, best_state = -math.inf, 0, copy.deepcopy(model.state_dict())
    history: list[dict[str, float]] = []
    stale, stopped = 0, "max epochs"
    epoch, elapsed = 0, 0.0
    run_print = ""
    if store is not None:
        run_print = fingerprint(identity, method.name, seed, config.to_dict(), data.x_train, data.y_train, data.y_val)
        saved = store.load_state(key, run_print)
        try:
            if saved is not None:
                model.load_state_dict(saved["model"])
                optimiser.load_state_dict(saved["optimiser"])
                best_state, best_score = saved["best_state"], float(saved["best_score"])
                best_epoch, stale, epoch = int(saved["best_epoch"]), int(saved["stale"]), int(saved["epoch"])
                history, elapsed = [dict(h) for h in saved["history"]], float(saved["seconds"])
                rng.bit_generator.state = json.loads(saved["numpy_rng"])
                torch.set_rng_state(saved["torch_rng"])
        except Exception:  # a state of the right fingerprint but the wrong shape: start afresh
            store.discard(key)
            return train(
                method,
                data,
                seed=seed,
                config=config,
                progress=progress,
                desc=desc,
                store=store,
                key=key,
                identity=identity,
            )
    start -= elapsed  # the time cap and the reported seconds include the epochs before a restart
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=config.epochs,
            initial=epoch,
            desc=desc or method.name,
            unit="ep",
            leave=False,
            file=sys.stderr,
            disable=None,
        )
    first = epoch + 1
    if stale >= config.patience:  # restarted after the epoch that stopped it
        first, stopped = config.epochs + 1, f"early stop (no improvement for {config.patience} epochs)"
    try:
        for epoch in range(first, config.epochs + 1):
            model.train()
            order = torch.from_numpy(rng.permutation(n))
            total = 0.0
            for step in range(steps):
                idx = order[step * config.batch_size : (step + 1) * config.batch_size]
                logits = model(x_train[idx])
                loss = method.loss(logits, y_train[idx], None if valid is None else valid[idx])
                optimiser.zero_grad(set_to_none=True)
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * len(idx)
            score = validation_score(data.y_val, predict(model, method, x_val, config.eval_batch_size))
            history.append({"epoch": epoch, "train_loss": total / n, "val_score": score})
            if score > best_score + config.min_delta:
                best_score, best_epoch, stale = score, epoch, 0
                best_state = copy.deepcopy(model.state_dict())
            else:
                stale += 1
            if store is not None:
                store.save_state(
                    key,
                    {
                        "fingerprint": run_print,
                        "epoch": epoch,
                        "model": model.state_dict(),
                        "optimiser": optimiser.state_dict(),
                        "best_state": best_state,
                        "best_score": best_score,
                        "best_epoch": best_epoch,
                        "stale": stale,
                        "history": history,
                        "seconds": time.perf_counter() - start,
                        "numpy_rng": json.dumps(rng.bit_generator.state),
                        "torch_rng": torch.get_rng_state(),
                    },
                )
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{total / n:.3f}", val=f"{score:.3f}", best=best_epoch)
            if stale >= config.patience:
                stopped = f"early stop (no improvement for {config.patience} epochs)"
                break
            if config.max_seconds_per_run is not None and time.perf_counter() - start > config.max_seconds_per_run:
                stopped = f"time cap ({config.max_seconds_per_run:g} s)"
                break
    finally:
        if bar is not None:
            bar.close()
    model.load_state_dict(best_state)
    model.eval()
    return TrainResult(
        model=model,
        method=method,
        seed=seed,
        best_epoch=best_epoch,
        epochs_run=epoch,
        best_val_score=best_score,
        seconds=time.perf_counter() - start,
        train_labels_violating=violating,
        history=history,
        stopped=stopped,
    )
