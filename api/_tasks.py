"""Tasks and their annotated data, by name or path: what a notebook starts from."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autonesy.tasks.data.dataset import Dataset
    from autonesy.tasks.task import Task


def load_task(name_or_path: str | os.PathLike[str]) -> Task:
    """A task, with its variables, descriptions and ground truth.

    Args:
        name_or_path: a catalogue name (``fashion``), a plugin's task (``mypkg/name``), a task file
            (``*.toml``), or one record of a benchmark copy (``satbench:PATH#KEY``, ``dcpbench:PATH#ID``).

    Raises:
        AutonesyError: an unknown name (the message lists the known ones) or an unusable task file.

    Examples:
        >>> import autonesy
        >>> task = autonesy.load_task("fashion")
        >>> task.num_vars, task.names[:2]
        (10, ['tshirt_top', 'trouser'])
        >>> autonesy.load_task("no-such-task")
        Traceback (most recent call last):
        ...
        autonesy.tasks.registry.UnknownTaskError: unknown task 'no-such-task'; known tasks: chx, ...
    """
    from autonesy.tasks.registry import load_task as load

    return load(os.fspath(name_or_path))


def task_of(task: Task | str | os.PathLike[str]) -> Task:
    """``task`` itself when it is already loaded, else ``load_task`` of it."""
    from autonesy.tasks.task import Task

    return task if isinstance(task, Task) else load_task(task)


def load_data(task: Task | str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """A catalogue task's annotated train/val/test splits, built on first use, then read from the cache.

    Args:
        task: a loaded task, or its name.
        data_dir: where the splits are kept (default ``$AUTONESY_DATA_DIR``, else the user cache).

    Returns:
        The splits ``.train``, ``.val``, ``.test``, each with ``x`` (float32, (B, D) features or
        (B, C, H, W) images) and ``y`` (uint8 (B, N), the task's variables in DIMACS order).

    Examples:
        >>> import autonesy
        >>> data = autonesy.load_data("fashion")
        >>> data.train.x.shape, data.train.y.shape  # 32 features, the 10 classes one-hot
        ((3000, 32), (3000, 10))
        >>> bool((data.train.y.sum(axis=1) == 1).all())  # every label satisfies the ground truth
        True
    """
    from autonesy.tasks.data.dataset import load_dataset

    return load_dataset(task_of(task), None if data_dir is None else os.fspath(data_dir))
