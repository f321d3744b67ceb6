"""The 18 auto-nesy-bench tasks by name, in the published order, built on first use."""

from __future__ import annotations

import importlib
from functools import cache

from autonesy.tasks.task import Task, TaskError

# name → (catalogue module, builder function); the order is docs/tasks.md's (by variable count).
CATALOGUE: dict[str, tuple[str, str]] = {
    "chx": ("medical", "chx"),
    "fashion": ("classification", "fashion"),
    "bdd-oia-2": ("driving", "bdd_oia_2"),
    "cle4evr": ("visual", "cle4evr"),
    "cifar10": ("classification", "cifar10"),
    "mn-add-bin": ("digits", "mn_add_bin"),
    "mn-mul-bin": ("digits", "mn_mul_bin"),
    "sushi": ("ranking", "sushi"),
    "kand-logic-2": ("visual", "kand_logic_2"),
    "warcraft": ("warcraft", "warcraft"),
    "bdd-oia": ("driving", "bdd_oia"),
    "cebab": ("sentiment", "cebab"),
    "kand-logic": ("visual", "kand_logic"),
    "mn-add": ("digits", "mn_add"),
    "road-r": ("driving", "road_r"),
    "sudoku": ("sudoku", "sudoku"),
    "cifar100": ("classification", "cifar100"),
    "mn-mul": ("digits", "mn_mul"),
}

TASK_NAMES: tuple[str, ...] = tuple(CATALOGUE)


class UnknownTaskError(TaskError):
    """A task name the catalogue does not know; the message lists the known ones."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown task {name!r}; known tasks: {', '.join(TASK_NAMES)}")
        self.name = name


@cache
def get_task(name: str) -> Task:
    """A catalogue task by name, its module imported only now (building a task costs its encoding)."""
    if name not in CATALOGUE:
        raise UnknownTaskError(name)
    module_name, builder = CATALOGUE[name]
    module = importlib.import_module(f"autonesy.tasks.catalogue.{module_name}")
    task = getattr(module, builder)()
    if task.name != name:
        raise TaskError(f"catalogue entry {name!r} built a task named {task.name!r}")
    return task


def all_tasks() -> list[Task]:
    """Every catalogue task, in catalogue order."""
    return [get_task(name) for name in TASK_NAMES]


def load_task(spec: str) -> Task:
    """A catalogue name, the path of a user task file (``*.toml``), or one record of an external
    benchmark copy: ``satbench:PATH#KEY`` / ``dcpbench:PATH#ID`` (see tasks/adapters)."""
    if spec.startswith(("satbench:", "dcpbench:")):
        from autonesy.tasks.adapters import load

        return load(spec)
    if spec.endswith(".toml"):
        from autonesy.tasks.taskfile import load_task_file

        return load_task_file(spec)
    return get_task(spec)
