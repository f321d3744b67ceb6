"""Adapters that turn user-provided copies of two external benchmarks into tasks.

    satbench:PATH        SATBench records (a .jsonl/.json file or a folder of them): the satisfiable ones
    dcpbench:PATH        DCP-Bench-Open problems (the repository, its dataset/ folder, one problem
                         folder, or the released dcp-bench-open.jsonl): the discrete satisfaction ones

``expand("satbench:PATH")`` lists one spec per kept record (``satbench:PATH#KEY``);
``load("satbench:PATH#KEY")`` builds that record's :class:`Task` (``load_task`` dispatches here).
Neither dataset ships with autonesy-agent; see :mod:`.satbench` and :mod:`.dcpbench` for the
layouts read and how each task is built.
"""

from __future__ import annotations

from pathlib import Path

from autonesy.tasks.adapters.base import AdapterError
from autonesy.tasks.task import Task

PREFIXES = ("satbench", "dcpbench")


def is_adapter_spec(spec: str) -> bool:
    """Whether a task spec names an external benchmark (``satbench:…`` or ``dcpbench:…``)."""
    return isinstance(spec, str) and spec.split(":", 1)[0] in PREFIXES and ":" in spec


def parse_spec(spec: str) -> tuple[str, Path, str | None]:
    """'satbench:PATH#KEY' → ('satbench', PATH, 'KEY'); the key is None when absent."""
    if not is_adapter_spec(spec):
        raise AdapterError(f"{spec!r} is not an adapter spec ({' or '.join(p + ':PATH' for p in PREFIXES)})")
    kind, rest = spec.split(":", 1)
    path, sep, found = rest.rpartition("#")
    key: str | None = found if sep else None
    if not sep:
        path = rest
    if not path:
        raise AdapterError(f"{spec!r}: give the path of the {kind} copy, e.g. {kind}:/data/{kind}")
    return kind, Path(path).expanduser(), key or None


def _module(kind: str):
    if kind == "satbench":
        from autonesy.tasks.adapters import satbench

        return satbench
    from autonesy.tasks.adapters import dcpbench

    return dcpbench


def expand(spec: str) -> list[str]:
    """One spec per usable record/problem of the copy at PATH (or the one named by #KEY)."""
    kind, path, key = parse_spec(spec)
    if key is not None:
        load(spec)  # validates it
        return [spec]
    return [f"{kind}:{path.resolve()}#{k}" for k in _module(kind).keys(path)]


def left_out(spec: str) -> dict[str, str]:
    """The records/problems of the copy at PATH that are not tasks, each with the reason."""
    kind, path, key = parse_spec(spec)
    if key is not None:
        return {}
    return _module(kind).left_out(path.resolve())


def unscorable(spec: str) -> dict[str, str]:
    """The tasks of the copy at PATH whose ground truth has no exact model count (an answer gets a metric
    only when proved equivalent), each with the reason; decided when the copy is loaded."""
    kind, path, key = parse_spec(spec)
    if key is not None or kind != "dcpbench":
        return {}
    return _module(kind).unscorable(path.resolve())


def load(spec: str) -> Task:
    """The task an adapter spec names; a spec naming a whole benchmark copy (no ``#KEY``) is an ``AdapterError`` that
    says how to name one record."""
    kind, path, key = parse_spec(spec)
    if key is None:
        raise AdapterError(
            f"{spec!r} names a whole benchmark copy; name one record as {kind}:PATH#KEY "
            f"(a sweep's --tasks {kind}:PATH expands to all of them)"
        )
    return _module(kind).load(path.resolve(), key)
