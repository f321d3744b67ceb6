"""User-defined tasks from a TOML file, loaded into the same :class:`Task` type as the catalogue.

name = "pizza"
[[variables]]
name = "thin_base"
meaning = "the pizza has a thin base"
...
[descriptions]
detailed = "..."
not_detailed = "..."
[ground_truth]            # optional: one of
dimacs = "pizza.cnf"      #   a DIMACS file below the task file's folder (aux variables > N allowed)
encoder = "pkg.mod:fn"    #   a function returning clauses (list of int lists or a PySAT CNF)
[oracle]                  # optional
function = "pkg.mod:fn"   #   fn(assignment: dict[str, bool]) -> bool
[metadata]                # optional: source_dataset, citation, licence
"""

from __future__ import annotations

import importlib
import os
import re
import stat
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.tasks.equivalence import EXHAUSTIVE_MAX_VARS
from autonesy.tasks.task import Descriptions, Task, TaskError, TaskMetadata, Variable
from autonesy.tools.cnf import CNF, MAX_AUX_VARS, DimacsError, from_pysat, parse_dimacs
from autonesy.tools.config import TRUST_TASK_CODE_ENV, trusts_task_code

TASK_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")  # as the catalogue's: no "/", ".", spaces
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_SHIPPED_EXAMPLES = (Path(__file__).parent / "examples").resolve()
MAX_TASK_FILE_BYTES = 4 << 20  # a task file is a few kilobytes of names and descriptions
MAX_DIMACS_BYTES = 256 << 20  # ~20 million clauses: far above any ground truth a solver proves equivalent


class TaskFileError(TaskError):
    """A task file that cannot be loaded; the message names the file and the field."""


def load_task_file(path: str | Path) -> Task:
    """A user task from a TOML file, validated field by field; any problem is a ``TaskFileError`` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise TaskFileError(f"{path}: no such task file")
    text = _read_bounded(path, MAX_TASK_FILE_BYTES, str(path))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TaskFileError(f"{path}: not valid TOML ({error})") from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise TaskFileError(f"{path}: not valid TOML (arrays or tables nested too deep)") from None
    where = str(path)
    name = _string(data, "name", where)
    if not TASK_NAME.fullmatch(name):  # it names files and directories (runs/NAME, export NAME.cnf)
        raise TaskFileError(
            f"{where}: 'name' must be an identifier (letters, digits, '_' or '-', at most 64, "
            f"starting with a letter or '_'); {name[:40]!r} is not"
        )
    variables = _variables(data.get("variables"), where)
    n = len(variables)
    descriptions = data.get("descriptions")
    if not isinstance(descriptions, dict):
        raise TaskFileError(f"{where}: missing [descriptions] table with 'detailed' and 'not_detailed'")
    detailed = _string(descriptions, "detailed", f"{where} [descriptions]")
    not_detailed = _string(descriptions, "not_detailed", f"{where} [descriptions]")
    encode = _ground_truth(data.get("ground_truth"), n, path)
    oracle = _oracle(data.get("oracle"), [v.name for v in variables], path)
    meta = data.get("metadata", {})
    if not isinstance(meta, dict):
        raise TaskFileError(f"{where}: [metadata] must be a table")
    method = "exhaustive" if encode and oracle and n <= EXHAUSTIVE_MAX_VARS else "none"
    metadata = TaskMetadata(
        source_dataset=str(meta.get("source_dataset", "user-defined")),
        citation=str(meta.get("citation", "")),
        licence=str(meta.get("licence", "")),
        published_clauses=None,
        data_provenance="user",
        equivalence_method=method,
        design_notes=f"loaded from {path.name}",
    )
    try:
        return Task(name, variables, Descriptions(detailed, not_detailed), metadata, encode, oracle)
    except TaskError as error:
        raise TaskFileError(f"{where}: {error}") from None


def _read_bounded(path: Path, limit: int, where: str) -> str:
    """A regular file's text, refused past ``limit`` bytes: a file from elsewhere may be a FIFO or a device
    (never waited on) or gigabytes (never read whole)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise TaskFileError(f"{where}: cannot be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TaskFileError(f"{where}: not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TaskFileError(f"{where}: larger than {limit >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TaskFileError(f"{where}: not UTF-8 text (byte {error.start})") from None


def _beside(path: Path, name: Any, where: str) -> Path:
    """The file a task file names, which must lie below the task file's folder: a received task file must
    not read (and ``task export`` copy) ``/etc/shadow``, ``../../.ssh/id_rsa`` or a link to them."""
    if not isinstance(name, str) or not name.strip():
        raise TaskFileError(f"{where}: the file name must be a non-empty string")
    relative = Path(name)
    base = path.parent.resolve()
    if relative.is_absolute() or ".." in relative.parts:
        raise TaskFileError(f"{where}: {name[:80]!r} must be a relative path below the task file's folder ({base})")
    target = (base / relative).resolve()
    if not target.is_relative_to(base):
        raise TaskFileError(f"{where}: {name[:80]!r} is a link that leads outside the task file's folder ({base})")
    return target


def _string(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise TaskFileError(f"{where}: '{key}' must be a non-empty string")
    return value


def _variables(entries: Any, where: str) -> tuple[Variable, ...]:
    if not isinstance(entries, list) or not entries:
        raise TaskFileError(f"{where}: needs at least one [[variables]] entry with 'name' and 'meaning'")
    variables = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise TaskFileError(f"{where}: variable #{number} must be a table with 'name' and 'meaning'")
        variables.append(
            Variable(
                _string(entry, "name", f"{where} variable #{number}"),
                _string(entry, "meaning", f"{where} variable #{number}"),
            )
        )
    return tuple(variables)


def _import(spec: str, base: Path, where: str) -> Callable:
    """``module:function`` from a module beside the task file, never one installed or already loaded:
    a received task file must not reach ``os:abort`` or ``faulthandler:_sigsegv``, and the modules beside
    it run unsandboxed, so only when the user trusts the file (or it is a shipped example)."""
    module_name, _, attribute = spec.partition(":")
    if not _MODULE.fullmatch(module_name) or not attribute.isidentifier() or attribute.startswith("_"):
        raise TaskFileError(f"{where}: {spec[:80]!r} must look like 'module:function'")
    base = base.resolve()
    top = module_name.split(".")[0]
    if not ((base / f"{top}.py").is_file() or (base / top / "__init__.py").is_file()):
        raise TaskFileError(
            f"{where}: cannot import module {module_name!r}: a task file names only modules beside "
            f"it ({base}), not installed ones"
        )
    if not (trusts_task_code() or base.is_relative_to(_SHIPPED_EXAMPLES)):
        raise TaskFileError(
            f"{where}: module {module_name!r} beside the task file would run as your own code, outside the "
            f"sandbox; if you trust this task file, rerun with --trust-task-code (or {TRUST_TASK_CODE_ENV}=1)"
        )
    sys.path.insert(0, str(base))
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        raise TaskFileError(
            f"{where}: cannot import module {module_name!r} ({type(error).__name__}: {error})"
        ) from None
    finally:
        sys.path.remove(str(base))
    origin = getattr(module, "__file__", None)
    if not origin or not Path(origin).resolve().is_relative_to(base):
        raise TaskFileError(
            f"{where}: cannot import module {module_name!r}: a module of that name is already loaded "
            "from elsewhere; rename the task's module"
        )
    function = getattr(module, attribute, None)
    if not callable(function):
        raise TaskFileError(f"{where}: module {module_name!r} has no function {attribute!r}")
    return function


def _ground_truth(table: Any, n: int, path: Path) -> Callable[[], CNF] | None:
    if table is None:
        return None
    where = f"{path} [ground_truth]"
    if not isinstance(table, dict) or len({"dimacs", "encoder"} & set(table)) != 1:
        raise TaskFileError(f"{where}: give exactly one of 'dimacs' (a file) or 'encoder' ('module:function')")
    if "dimacs" in table:
        cnf_path = _beside(path, table["dimacs"], where)
        if not cnf_path.exists():
            raise TaskFileError(f"{where}: DIMACS file {cnf_path} not found")
        text = _read_bounded(cnf_path, MAX_DIMACS_BYTES, f"{where}: {cnf_path.name}")
        try:
            cnf = parse_dimacs(text, num_task_vars=n, max_vars=n + MAX_AUX_VARS)
        except DimacsError as error:
            raise TaskFileError(f"{where}: {cnf_path.name}: {error}") from None
        return lambda: cnf
    encoder = _import(str(table["encoder"]), path.parent, where)

    def encode() -> CNF:
        cnf = from_pysat(encoder(), n)
        return cnf

    return encode


def _oracle(table: Any, names: list[str], path: Path):
    if table is None:
        return None
    where = f"{path} [oracle]"
    if not isinstance(table, dict) or "function" not in table:
        raise TaskFileError(f"{where}: needs function = 'module:function'")
    function = _import(str(table["function"]), path.parent, where)

    def oracle_batch(rows: np.ndarray) -> np.ndarray:
        return np.array([bool(function(dict(zip(names, map(bool, row))))) for row in rows], dtype=bool)

    return oracle_batch
