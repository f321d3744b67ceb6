"""A run directory: where a run's identity, checkpoints and outputs live, for every pipeline.

An attempt (``graph/run.py``) and a verification (``graph/verify/run.py``) keep their runs the same
way, through this module: ``config.json`` names the run (the same ``--out`` given to a different
run is refused with one line), ``checkpoints.sqlite`` holds LangGraph's checkpoints (opened, as
data only, by ``graph/checkpoint_store.py``) so running again resumes, and every output file is
written atomically, so a kill leaves the old file or the new one, never half of one.

A run directory may come from someone else (a colleague's results, a downloaded sweep): nothing in
it is trusted. Every file in it is read and written through ``tools/safe_files.py`` (no link
followed, regular files only, reads capped, writes through a fresh temporary file and a rename); a
symbolic link inside it is refused before anything runs, and a crafted ``config.json`` or
``checkpoints.sqlite`` is one error line, never a traceback.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from autonesy.tools import safe_files
from autonesy.tools.errors import AutonesyError

CONFIG_FILE = "config.json"
CHECKPOINTS_FILE = "checkpoints.sqlite"
SUMMARY_FILE = "summary.json"
TRAINING_DIR = "training"  # each NeSy training run's state per epoch and its result (resumable)
LINK_REFUSED = "{} is a symbolic link; a run directory holds plain files only (nothing was run; choose a fresh --out)"
JSON_LIMIT = 64 * 2**20  # bytes of one JSON file in a run directory (a summary is kilobytes)
FRESH_OUT = "choose a fresh --out"

VERSIONED_PACKAGES = (
    "autonesy-agent",
    "langgraph",
    "langchain-openai",
    "langchain-core",
    "python-sat",
    "pysdd",
    "pyapproxmc",
    "pyganak",
    "cpmpy",
    "sympy",
    "z3-solver",
    "torch",
    "libcirkit",
    "klaycircuits",
)


def package_versions() -> dict[str, str]:
    """The versions a result depends on, recorded in ``config.json`` so a run can be reproduced."""
    return dict(_package_versions())


@lru_cache(maxsize=1)
def _package_versions() -> tuple[tuple[str, str], ...]:  # reading 14 METADATA files costs ~30 ms: once per process
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return tuple(versions.items())


def first_link(run_dir: Path) -> str | None:
    """A symbolic link inside the run directory, if any. A directory to resume may come from someone
    else, and a link in it (``answer.txt`` → ``~/.bashrc``, the answer replayed from its own cache)
    would make the run write outside it."""
    for parent, dirs, files in os.walk(run_dir):  # links are listed, never followed
        for name in (*dirs, *files):
            if os.path.islink(os.path.join(parent, name)):
                return os.path.join(parent, name)
    return None


def write_json(path: Path, data: Any, *, root: str | Path | None = None, **options: Any) -> None:
    """``data`` as indented JSON, written atomically below ``root`` (default: the file's folder; ``options`` go to
    ``json.dumps``): readers (a resumed sweep, the viewer) see the old file or the new one, never half of one."""
    safe_files.write_text(path, json.dumps(data, indent=2, **options), root=root)


def read_json(path: Path, *, root: str | Path | None = None, limit: int = JSON_LIMIT) -> Any:
    """The JSON value in ``path`` (below ``root``, no link followed), or None when it is missing, refused or not JSON
    (callers check its shape)."""
    try:
        return json.loads(safe_files.read_text(path, root=root, limit=limit))
    except (OSError, ValueError, RecursionError):
        return None


def _shown(value: Any) -> str:
    """A value from an untrusted config, as a short single line."""
    return json.dumps(value, default=str)[:80]


@dataclass(frozen=True)
class RunDir:
    """One run directory. ``error`` is the pipeline's own error type (``RunError``, ``VerifyError``),
    so a caller catches the problems of its runs by one name."""

    path: Path
    error: type[AutonesyError] = AutonesyError

    @classmethod
    def open(cls, path: Path, error: type[AutonesyError] = AutonesyError) -> RunDir:
        """Create (or reopen) the directory (``safe_files.output_dir``), refusing one that holds a symbolic link."""
        path = safe_files.output_dir(path)
        if (link := first_link(path)) is not None:
            raise error(LINK_REFUSED.format(link))
        return cls(path, error)

    def claim(self, record: Mapping[str, Any], keys: Sequence[str], defaults: Mapping[str, Any] | None = None) -> None:
        """Write ``config.json`` for a new run, or check that the run already here is this one.

        ``keys`` are the run's identity: a resume must agree on each (``defaults`` fills a key that
        older run directories did not record). The first write adds the package versions and the
        start time."""
        path = self.path / CONFIG_FILE
        if not safe_files.is_file(path, root=self.path):
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            write_json(path, {**record, "versions": package_versions(), "started": stamp}, root=self.path, default=str)
            return
        previous = read_json(path, root=self.path)
        if not isinstance(previous, dict):
            raise self.error(f"{path} is not a run configuration; choose another --out")
        fill = defaults or {}
        differing = [k for k in keys if not _same_json(previous.get(k, fill.get(k)), record.get(k))]
        if differing:
            shown = ", ".join(f"{k}={_shown(previous.get(k))}" for k in differing)
            raise self.error(f"{self.path} holds a different run ({shown}); choose another --out")

    def write_text(self, name: str, text: str) -> None:
        """An output file (``name`` relative to the run directory, parents created), atomically, no link followed."""
        safe_files.write_text(self.path / name, text, root=self.path)

    def write_json(self, name: str, data: Any, **options: Any) -> None:
        """An output JSON file, atomically."""
        self.write_text(name, json.dumps(data, indent=2, **options))


def run_or_resume(
    graph: Any,
    settings: Mapping[str, Any],
    initial: Mapping[str, Any],
    *,
    on_resume: Callable[[list[str]], None] = lambda next_nodes: None,
    **invoke: Any,
) -> dict[str, Any]:
    """Run a checkpointed graph to its end: from ``initial`` when its thread is new, from the last
    checkpoint when it was interrupted (``on_resume`` hears which nodes come next), not at all when it
    had finished (its final state is returned)."""
    snapshot = graph.get_state(settings)
    if snapshot.values:
        _check_checkpointed(graph, snapshot.values)
    if snapshot.values and not snapshot.next:
        return dict(snapshot.values)
    if snapshot.next:
        on_resume(list(snapshot.next))
        return graph.invoke(None, settings, **invoke)
    return graph.invoke(dict(initial), settings, **invoke)


class CheckpointUnreadable(AutonesyError):
    """A checkpoint whose state is not one this version's graph can hold (crafted, damaged, or another version's)."""


def _check_checkpointed(graph: Any, values: Mapping[str, Any]) -> None:
    """Validate a checkpointed state against the graph's state model before anything runs from it: a state
    that does not fit is one line naming the file, not a validation report from inside a node."""
    schema = getattr(getattr(graph, "builder", None), "state_schema", None)
    if not isinstance(schema, type) or not issubclass(schema, BaseModel):
        return
    model: type[BaseModel] = schema
    try:
        model.model_validate(dict(values))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "state"
        raise CheckpointUnreadable(
            f"{CHECKPOINTS_FILE} holds a state this version cannot resume ({error.error_count()} invalid "
            f"fields; {where}: {first['msg']}); {FRESH_OUT}"
        ) from None


__all__ = [
    "CHECKPOINTS_FILE",
    "CheckpointUnreadable",
    "CONFIG_FILE",
    "LINK_REFUSED",
    "SUMMARY_FILE",
    "RunDir",
    "first_link",
    "package_versions",
    "read_json",
    "run_or_resume",
    "write_json",
]


def _same_json(recorded: Any, value: Any) -> bool:
    """Whether ``value`` is recorded as ``recorded`` (as JSON, the way it was written: 0 is not false, 1 not 1.0)."""
    return json.dumps(recorded, sort_keys=True, default=str) == json.dumps(value, sort_keys=True, default=str)
