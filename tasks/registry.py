"""The 18 auto-nesy-bench tasks by name, in the published order, built on first use."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
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


@dataclass(frozen=True)
class TaskSpec:
    """A task spec (``--task``, a sweep's task, ``config.json``'s ``task_spec``), parsed once: its
    ``kind`` — ``catalogue`` (a name), ``taskfile`` (``*.toml``), ``satbench`` / ``dcpbench`` (one
    record of an external benchmark copy, ``satbench:PATH#KEY`` / ``dcpbench:PATH#ID``)."""

    kind: str
    text: str

    @classmethod
    def parse(cls, text: str) -> TaskSpec:
        """The kind of ``text`` (any text has one; :meth:`load` says whether it names a task)."""
        for prefix in ("satbench", "dcpbench"):
            if text.startswith(f"{prefix}:"):
                return cls(prefix, text)
        return cls("taskfile" if text.endswith(".toml") else "catalogue", text)

    @property
    def has_data(self) -> bool:
        """Whether the task has annotated data (catalogue tasks do; task files and benchmark records do not)."""
        return self.kind == "catalogue" and self.text in CATALOGUE

    def load(self) -> Task:
        """The task (see tasks/adapters and tasks/taskfile for the non-catalogue kinds)."""
        if self.kind in ("satbench", "dcpbench"):
            from autonesy.tasks.adapters import load

            return load(self.text)
        if self.kind == "taskfile":
            from autonesy.tasks.taskfile import load_task_file

            return load_task_file(self.text)
        return get_task(self.text)


def load_task(spec: str) -> Task:
    """A catalogue name, the path of a user task file (``*.toml``), or one record of an external
    benchmark copy: ``satbench:PATH#KEY`` / ``dcpbench:PATH#ID`` (see tasks/adapters)."""
    return TaskSpec.parse(spec).load()
