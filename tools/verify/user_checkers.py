"""User checker functions: found in the modules a user names, offered to the checking agent.

A user checker is a function ``fn(response: str, **params) -> bool`` marked with
``@autonesy.tools.verify.checkers.checker(description=..., params={...})`` (unmarked public functions named
``check_*`` with a docstring are accepted too; their first docstring line is the description).
Name them with ``--checkers SPEC`` (repeatable) where SPEC is

- ``path/to/my_checkers.py``      a Python file;
- ``my_package.my_checkers``      an importable module;
- ``my_package.my_checkers:fn``   one function of a module (file paths work too: ``file.py:fn``);

and installed packages can declare them under the entry-point group ``autonesy.verify_checkers``
(each entry point names a module or a function), loaded with ``entry_points=True``.

The checking agent sees each checker's name, parameters and description in its planning prompt and
names one when it checks the constraint exactly; the checker is then called with the arguments the
agent chose (:func:`autonesy.tools.verify.checker_run.run_user_function`). User checkers are the user's own
code: they run in-process, like any plugin.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from autonesy.tools.errors import AutonesyError
from autonesy.tools.verify.checkers import CHECKER_ATTRIBUTE, CheckerInfo

ENTRY_POINT_GROUP = "autonesy.verify_checkers"


class UserCheckerError(AutonesyError, ValueError):
    """A --checkers spec that names nothing usable (one line)."""


@dataclass(frozen=True)
class UserChecker:
    """A user's checker function with its description and where it was loaded from."""

    info: CheckerInfo
    fn: Callable[..., Any]
    origin: str  # the spec it came from

    @property
    def name(self) -> str:
        """The checker's name as prompts and results use it."""
        return self.info.name

    def to_dict(self) -> dict[str, Any]:
        """The checker as recorded in config.json (name, description, kind, parameters, origin)."""
        return {
            "name": self.info.name,
            "description": self.info.description,
            "kind": self.info.kind,
            "params": dict(self.info.params),
            "origin": self.origin,
        }


def _explicit_info(fn: Callable[..., Any], source: str) -> CheckerInfo:
    """The description of a function named as a checker: one line when its signature cannot be read."""
    info = _info_of(fn, explicit=True)
    if info is None:
        raise UserCheckerError(f"{source}: the checker's signature cannot be read (give it one: fn(response, ...))")
    return info


def _info_of(fn: Callable[..., Any], *, explicit: bool) -> CheckerInfo | None:
    info = getattr(fn, CHECKER_ATTRIBUTE, None)
    if isinstance(info, CheckerInfo):
        return info
    doc = inspect.getdoc(fn) or ""
    if not (explicit or (getattr(fn, "__name__", "").startswith("check_") and doc)):
        return None
    try:
        parameters = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    params = {p.name: "" for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    name = fn.__name__[len("check_") :] if fn.__name__.startswith("check_") else fn.__name__
    return CheckerInfo(name, (doc.splitlines() or [f"the checker {fn.__name__}"])[0], "logic", params)


def _import_file(path: Path) -> ModuleType:
    name = f"autonesy_user_checkers_{abs(hash(str(path.resolve())))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserCheckerError(f"cannot load the checker file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise UserCheckerError(f"the checker file {path} failed to import: {type(error).__name__}: {error}") from None
    return module


def _import(target: str) -> ModuleType:
    path = Path(target).expanduser()
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise UserCheckerError(f"the checker file {path} does not exist")
        return _import_file(path)
    try:
        return importlib.import_module(target)
    except ImportError as error:
        raise UserCheckerError(f"cannot import the checker module {target!r}: {error}") from None
    except Exception as error:
        raise UserCheckerError(
            f"the checker module {target!r} failed to import: {type(error).__name__}: {error}"
        ) from None


def _from_module(module: ModuleType, origin: str) -> list[UserChecker]:
    found = []
    for attribute in sorted(vars(module)):
        if attribute.startswith("_"):
            continue
        value = getattr(module, attribute)
        if inspect.isfunction(value):
            info = _info_of(value, explicit=False)
            if info is not None:
                found.append(UserChecker(info, value, origin))
    return found


def load_spec(spec: str) -> list[UserChecker]:
    """The checkers a ``--checkers`` spec names (a file, a module, or ``module:function``); problems are
    ``UserCheckerError`` lines."""
    spec = spec.strip()
    if not spec:
        raise UserCheckerError("an empty --checkers spec")
    target, _, attribute = spec.rpartition(":") if ":" in spec and not Path(spec).is_file() else (spec, "", "")
    if not target:
        target, attribute = spec, ""
    module = _import(target)
    if attribute:
        fn = getattr(module, attribute, None)
        if not callable(fn):
            raise UserCheckerError(f"{target} has no function {attribute!r}")
        return [UserChecker(_explicit_info(fn, spec), fn, spec)]
    found = _from_module(module, spec)
    if not found:
        raise UserCheckerError(
            f"{spec} holds no checker functions (mark them with @checker(description=...), "
            "or name them check_* and give them a docstring)"
        )
    return found


def _from_entry_points() -> list[UserChecker]:
    found = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            value = entry.load()
        except Exception as error:  # noqa: BLE001 - a broken plugin must not stop verification
            raise UserCheckerError(
                f"the checker entry point {entry.name} failed to load: {type(error).__name__}: {error}"
            ) from None
        if isinstance(value, ModuleType):
            found.extend(_from_module(value, f"entry point {entry.name}"))
        elif callable(value):
            found.append(
                UserChecker(_explicit_info(value, f"entry point {entry.name}"), value, f"entry point {entry.name}")
            )
    return found


def load_user_checkers(specs: Iterable[str] = (), *, entry_points: bool = False) -> list[UserChecker]:
    """The checkers of every spec (and of the installed entry points), one per name (first wins)."""
    found: list[UserChecker] = []
    for spec in specs:
        found.extend(load_spec(spec))
    if entry_points:
        found.extend(_from_entry_points())
    unique: dict[str, UserChecker] = {}
    for item in found:
        unique.setdefault(item.name, item)
    return list(unique.values())


__all__ = ["ENTRY_POINT_GROUP", "UserChecker", "UserCheckerError", "load_spec", "load_user_checkers"]
