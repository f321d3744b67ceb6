"""Tasks by name, through the one registry (``tools/registry.py``): the 18 auto-nesy-bench tasks
(``tasks/catalogue``, registered in the published order) and the tasks of installed plugins
(``mypkg/name``), each built on first use."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cache

import autonesy.tasks.catalogue  # noqa: F401 - registers the catalogue's tasks
from autonesy.tasks.task import Task, TaskError
from autonesy.tools import registry
from autonesy.tools.errors import one_line

TASK_NAMES: tuple[str, ...] = tuple(entry.name for entry in registry.entries("task") if entry.builtin)


class UnknownTaskError(TaskError):
    """A task name no registration knows; the message lists the known ones."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown task {name!r}; known tasks: {', '.join(registry.names('task'))}")
        self.name = name


@cache
def get_task(name: str) -> Task:
    """A registered task by name (a plugin's as ``mypkg/name``), built now: building costs its encoding.
    A plugin's task carries its full name, whatever name its builder gave it; a plugin's builder that
    fails is one line naming its package."""
    try:
        entry = registry.lookup("task", name)
    except registry.PluginError:
        raise
    except registry.RegistryError:
        raise UnknownTaskError(name) from None
    if entry.builtin:
        task = entry.target()
        if task.name != name:
            raise TaskError(f"catalogue entry {name!r} built a task named {task.name!r}")
        return task
    try:
        task = entry.target()
    except Exception as error:  # a plugin's bug or its missing file: one line, never a traceback
        raise registry.PluginError(
            f"task {name!r} of plugin {entry.package!r}: {type(error).__name__}: {one_line(error)}"
        ) from None
    if not isinstance(task, Task):
        raise registry.PluginError(f"task {name!r} of plugin {entry.package!r} is a {type(task).__name__}, not a Task")
    return dataclasses.replace(task, name=name)


def all_tasks() -> list[Task]:
    """Every catalogue task, in catalogue order."""
    return [get_task(name) for name in TASK_NAMES]


@dataclass(frozen=True)
class TaskSpec:
    """A task spec (``--task``, a sweep's task, ``config.json``'s ``task_spec``), parsed once: its
    ``kind`` — ``catalogue`` (a built-in name), ``plugin`` (a plugin's ``mypkg/name``), ``taskfile``
    (``*.toml``), ``satbench`` / ``dcpbench`` (one record of an external benchmark copy,
    ``satbench:PATH#KEY`` / ``dcpbench:PATH#ID``)."""

    kind: str
    text: str

    @classmethod
    def parse(cls, text: str) -> TaskSpec:
        """The kind of ``text`` (any text has one; :meth:`load` says whether it names a task)."""
        for prefix in ("satbench", "dcpbench"):
            if text.startswith(f"{prefix}:"):
                return cls(prefix, text)
        if text.endswith(".toml"):
            return cls("taskfile", text)
        return cls("plugin" if registry.SEPARATOR in text else "catalogue", text)

    @property
    def has_data(self) -> bool:
        """Whether the task has annotated data (catalogue tasks do; task files and benchmark records do not)."""
        return self.kind == "catalogue" and self.text in TASK_NAMES

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
    """A catalogue name, a plugin's task (``mypkg/name``), the path of a user task file (``*.toml``), or
    one record of an external benchmark copy: ``satbench:PATH#KEY`` / ``dcpbench:PATH#ID`` (see tasks/adapters)."""
    return TaskSpec.parse(spec).load()
