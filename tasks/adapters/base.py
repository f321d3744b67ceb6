"""What the benchmark adapters share: their error type (kept apart so the adapters need not import
the package that dispatches to them)."""

from __future__ import annotations

from autonesy.tasks.task import TaskError


class AdapterError(TaskError):
    """A benchmark copy (or one of its records) that cannot be turned into a task."""
