"""One registry for everything a user extends: agent policies, tasks and LLM providers (docs/plugins.md).

Everything registers through the public decorators :func:`policy`, :func:`task` and :func:`provider`
(exported as ``autonesy.policy`` …), the built-ins included, which have short names (``zs``,
``fashion``). An installed package joins through an entry point in the group ``autonesy``
(``[project.entry-points.autonesy] mypkg = "mypkg._registry"``) and what its modules register is named
``mypkg/name`` everywhere. Code of your own that is no installed plugin (a script, a notebook) keeps
the names it gives, which may not take one already registered. Plugins load lazily: only the
namespace a name asks for, or all of them when everything is listed. A plugin that fails to import,
registers a name twice, or shares its namespace with another package is one line
(:class:`PluginError`) naming the package, and never breaks what does not use it. Pure: no layer
above is imported here; each layer's facade (``make_policy``, ``get_task``, ``backend_from_spec``)
imports its own built-ins and looks them up here."""

from __future__ import annotations

import importlib.metadata
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from autonesy.tools.errors import AutonesyError, one_line

KINDS = ("policy", "task", "provider")
ENTRY_POINT_GROUP = "autonesy"
BUILTIN = "autonesy"  # the top-level module whose registrations keep short names
BUILTIN_PACKAGE = "autonesy-agent"  # its distribution
SCRIPT = "__main__"  # a script's or notebook's module
SEPARATOR = "/"  # between a plugin's namespace and its names
PATH_SEPARATOR = "+"  # stands for SEPARATOR in a file name: never part of a name, so no two names share a path
_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

_T = TypeVar("_T")


class RegistryError(AutonesyError, ValueError):
    """An unknown name (the message lists the known ones) or a name registered twice."""


class PluginError(RegistryError):
    """An installed plugin that cannot be used: it failed to import, registered a name twice, or
    shares its namespace with another package. One line naming the package."""


@dataclass(frozen=True)
class Entry:
    """One registered thing: its kind, full name, the object, and where it comes from."""

    kind: str
    name: str  # "zs", "example/vote"
    target: Any = None
    package: str = BUILTIN_PACKAGE  # the distribution that registered it
    version: str = ""

    @property
    def builtin(self) -> bool:
        """Whether it ships with autonesy (a short name)."""
        return self.package == BUILTIN_PACKAGE


@dataclass(frozen=True)
class _Plugin:
    namespace: str
    module: str  # the entry point's module
    package: str  # its distribution
    version: str


_lock = threading.RLock()
_entries: dict[tuple[str, str], Entry] = {}
_loaded: set[str] = set()  # namespaces imported
_failures: dict[str, PluginError] = {}  # namespace -> why it cannot be used


def policy(name: str) -> Callable[[_T], _T]:
    """Register the decorated :class:`~autonesy.agents.policies.Policy` subclass as the policy ``name``."""
    return _register("policy", (name,))


def task(name: str) -> Callable[[_T], _T]:
    """Register the decorated function as the task ``name``: called without arguments (once, on first
    use) it returns a :class:`~autonesy.tasks.task.Task`."""
    return _register("task", (name,))


def provider(*kinds: str) -> Callable[[_T], _T]:
    """Register the decorated factory as the LLM provider of the spec kinds ``kinds`` (a plugin's
    provider is asked for as ``--llm mypkg/kind:ARGUMENT``)."""
    return _register("provider", kinds)


def _register(kind: str, names: tuple[str, ...]) -> Callable[[_T], _T]:
    for name in names:
        if not isinstance(name, str) or not _PART.fullmatch(name):
            raise RegistryError(f"{kind} name {name!r}: use letters, digits, '_', '.', '-' (no '/')")

    def register(target: _T) -> _T:
        origin = _origin(getattr(target, "__module__", "") or "")
        with _lock:
            for name in names:
                full = f"{origin.namespace}{SEPARATOR}{name}" if origin and origin.namespace else name
                known = _entries.get((kind, full))
                if known is not None and known.target is not target:
                    package = origin.package if origin else BUILTIN_PACKAGE
                    again = "twice" if known.package == package else f"which {known.package!r} registered first"
                    raise RegistryError(f"package {package!r} registers {kind} {full!r} {again}")
                _entries[(kind, full)] = Entry(
                    kind, full, target, origin.package if origin else BUILTIN_PACKAGE, origin.version if origin else ""
                )
        return target

    return register


def _origin(module: str) -> _Plugin | None:
    """The installed plugin a module belongs to (by its top-level package), whose namespace its names
    take; None for autonesy's own modules. Any other module (a script, a notebook, a package of your
    own that is not installed as a plugin, test helpers) registers the names it gives, unnamespaced."""
    top = module.split(".")[0] or SCRIPT
    if top == BUILTIN:
        return None
    for plugin in _plugins().values():
        if plugin.module.split(".")[0] == top:
            return plugin
    return _Plugin("", module, top, "")


@cache
def _plugins() -> dict[str, _Plugin]:
    """The installed plugins by namespace (entry points of the group ``autonesy``); a namespace two
    distributions declare is recorded as a failure of both."""
    found: dict[str, _Plugin] = {}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(point, "dist", None)
        package = dist.name if dist is not None else point.module.split(".")[0]
        plugin = _Plugin(point.name, point.module, package, dist.version if dist is not None else "")
        other = found.get(point.name)
        if not _PART.fullmatch(point.name):
            _failures[point.name] = PluginError(f"plugin {package!r}: entry point name {point.name!r} is not a name")
        elif other is not None and other.package != package:
            first, second = sorted((other.package, package))
            _failures[point.name] = PluginError(
                f"plugins {first!r} and {second!r} both declare the namespace {point.name!r}; uninstall one of them"
            )
        found.setdefault(point.name, plugin)
    return found


def load_plugin(namespace: str) -> None:
    """Import one plugin's entry point (once); :class:`PluginError` when it cannot be used. Whatever it
    registered before failing is taken back. The import runs outside the registry's lock (it takes the
    import lock, which a thread registering a built-in may hold while it waits for the registry's)."""
    with _lock:
        plugins = _plugins()
        if namespace in _failures:
            raise _failures[namespace]
        if namespace in _loaded:
            return
        plugin = plugins.get(namespace)
        if plugin is None:
            known = ", ".join(sorted(plugins)) or "none"
            raise RegistryError(f"no installed plugin has the namespace {namespace!r} (installed: {known})")
    try:
        importlib.import_module(plugin.module)
    except Exception as error:  # a plugin's own bug: one line, never a traceback
        failure = PluginError(
            f"plugin {plugin.package!r} {plugin.version} (namespace {namespace!r}) cannot be used: "
            f"{type(error).__name__}: {one_line(error)}"
        )
        with _lock:
            for key in [key for key, entry in _entries.items() if entry.package == plugin.package]:
                del _entries[key]
            _failures[namespace] = failure
        raise failure from None
    with _lock:
        _loaded.add(namespace)


def load_plugins() -> list[PluginError]:
    """Import every installed plugin; the ones that cannot be used, each as one error."""
    failures = []
    for namespace in sorted(set(_plugins()) | set(_failures)):
        try:
            load_plugin(namespace)
        except PluginError as failure:
            failures.append(failure)
    return failures


def lookup(kind: str, name: str) -> Entry:
    """The entry ``name`` of ``kind``: a namespaced name loads its plugin first. An unknown name is a
    :class:`RegistryError` listing the known ones (every installed plugin loaded to list them)."""
    entry = _entries.get((kind, name))
    if entry is None and SEPARATOR in name:
        load_plugin(name.split(SEPARATOR, 1)[0])
        entry = _entries.get((kind, name))
    if entry is not None:
        return entry
    load_plugins()
    raise RegistryError(f"unknown {kind} {name!r}; known: {', '.join(names(kind))}")


def pack(kind: str, namespace: str) -> list[str]:
    """Every name of ``kind`` the plugin ``namespace`` registers (``--tasks mypkg/*``), in its order;
    none is a :class:`RegistryError`."""
    load_plugin(namespace)
    prefix = f"{namespace}{SEPARATOR}"
    found = [name for name in names(kind) if name.startswith(prefix)]
    if not found:
        raise RegistryError(f"plugin {namespace!r} registers no {kind}")
    return found


def names(kind: str) -> list[str]:
    """The names of ``kind`` registered so far, in registration order (the built-ins first)."""
    return [entry.name for entry in entries(kind)]


def entries(kind: str | None = None) -> list[Entry]:
    """What is registered so far (of ``kind``, or all), built-ins first, each group in registration order."""
    found = [entry for entry in _entries.values() if kind is None or entry.kind == kind]
    return sorted(found, key=lambda entry: not entry.builtin)


def registered(kind: str, name: str) -> bool:
    """Whether ``name`` of ``kind`` is registered now (never loads a plugin)."""
    return (kind, name) in _entries


def path_component(name: str) -> str:
    """``name`` as one file-name component: ``example/vote`` is ``example+vote`` (``+`` is never part of a name)."""
    return name.replace(SEPARATOR, PATH_SEPARATOR)
