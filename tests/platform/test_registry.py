"""The one registry (tools/registry.py): built-ins through the public decorators, plugin names
namespaced, one-line errors, path-safe names, and no second copy of any registered name list."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import autonesy
from autonesy.agents.policies import Policy, make_policy
from autonesy.tasks.registry import TASK_NAMES, UnknownTaskError, get_task
from autonesy.tools import registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "graph", "tasks", "tools", "nesy", "api")


@pytest.fixture
def scratch_registry(monkeypatch):
    """Registrations made by a test vanish after it (the registry is process-wide)."""
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    monkeypatch.setattr(registry, "_failures", dict(registry._failures))
    monkeypatch.setattr(registry, "_loaded", set(registry._loaded))


def from_module(module: str, value=None):
    """A function that says it was defined in ``module`` (what the registry reads to namespace it)."""

    def target():
        return value

    target.__module__ = module
    return target


def test_the_top_level_package_exports_the_decorators_of_the_one_registry():
    assert autonesy.policy is registry.policy and autonesy.task is registry.task
    assert autonesy.provider is registry.provider and autonesy.Policy is Policy


def test_built_in_policies_and_tasks_are_registered_with_short_names():
    import autonesy.agents.llm.registry as llm_registry

    llm_registry.builtin_providers()
    policies = {e.name: e for e in registry.entries("policy") if e.builtin}
    assert set(policies) == {"zs", "zs-cot", "oracle-feedback", "few-shot", "expert"}
    assert all(
        issubclass(e.target, Policy) and e.target.__module__ == "autonesy.agents.policies" for e in policies.values()
    )
    assert len(TASK_NAMES) == 18 and TASK_NAMES[:3] == ("chx", "fashion", "bdd-oia-2")  # docs/tasks.md's order
    providers = {e.name for e in registry.entries("provider") if e.builtin}
    assert {"openai", "http", "local", "replay", "config"} <= providers
    assert not any(registry.SEPARATOR in e.name for e in registry.entries() if e.builtin)


def installed(monkeypatch, namespace: str, module: str) -> None:
    """Pretend an installed plugin declares ``namespace`` for the package of ``module`` (with
    ``scratch_registry``: what loading it records vanishes after the test)."""
    plugin = registry._Plugin(namespace, module, f"{namespace}-dist", "1.0")
    monkeypatch.setattr(registry, "_plugins", lambda: {namespace: plugin})


def test_an_installed_plugins_names_take_its_namespace(scratch_registry, monkeypatch):
    installed(monkeypatch, "mypkg", "mypkg._registry")
    target = from_module("mypkg.policies")
    registry.policy("vote")(target)
    entry = registry.lookup("policy", "mypkg/vote")
    assert entry.target is target and (entry.package, entry.version) == ("mypkg-dist", "1.0") and not entry.builtin
    with pytest.raises(registry.RegistryError, match="unknown policy 'vote'"):
        registry.lookup("policy", "vote")  # short names stay the built-ins' (and your own code's)


def test_code_that_is_no_installed_plugin_keeps_its_names(scratch_registry):
    target = from_module("myown.policies")
    registry.policy("mine")(target)
    entry = registry.lookup("policy", "mine")
    assert entry.target is target and entry.package == "myown" and not entry.builtin


def test_a_name_registered_twice_is_one_error_naming_the_package(scratch_registry, monkeypatch):
    installed(monkeypatch, "mypkg", "mypkg._registry")
    registry.task("twice")(from_module("mypkg.a"))
    with pytest.raises(registry.RegistryError, match="package 'mypkg-dist' registers task 'mypkg/twice' twice"):
        registry.task("twice")(from_module("mypkg.b"))


@pytest.mark.parametrize("bad", ["", "a/b", "has space", "-dash-first", "ünï"])
def test_a_name_that_is_not_a_name_is_refused(bad):
    with pytest.raises(registry.RegistryError):
        registry.policy(bad)


def test_unknown_names_list_the_known_ones():
    with pytest.raises(registry.RegistryError, match=r"unknown policy 'nope'; known: zs, zs-cot, oracle-feedback"):
        make_policy("nope", None)
    with pytest.raises(UnknownTaskError, match="known tasks: chx, fashion"):
        get_task("nope")


def test_a_namespace_no_plugin_declares_is_one_error():
    with pytest.raises(registry.RegistryError, match="no installed plugin has the namespace 'nosuchpkg'"):
        registry.lookup("task", "nosuchpkg/x")


def test_a_plugin_task_carries_its_full_name_and_a_failing_builder_is_one_line(scratch_registry, monkeypatch):
    installed(monkeypatch, "mypkg", "mypkg._registry")
    fashion = get_task("fashion")
    registry.task("copy")(from_module("mypkg.tasks", fashion))
    assert get_task("mypkg/copy").name == "mypkg/copy" and get_task("mypkg/copy").names == fashion.names

    def broken():
        raise FileNotFoundError("tasks/missing.toml")

    broken.__module__ = "mypkg.tasks"
    registry.task("broken")(broken)
    with pytest.raises(registry.PluginError, match="task 'mypkg/broken' of plugin 'mypkg-dist': FileNotFoundError"):
        get_task("mypkg/broken")
    registry.task("not_a_task")(from_module("mypkg.tasks", 42))
    with pytest.raises(registry.PluginError, match="is a int, not a Task"):
        get_task("mypkg/not_a_task")


NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,8}", fullmatch=True)


@given(st.lists(st.one_of(NAME, st.tuples(NAME, NAME).map("/".join)), unique=True, min_size=2, max_size=6))
def test_distinct_names_are_distinct_single_path_components(names):
    components = [registry.path_component(name) for name in names]
    assert all("/" not in c and c not in ("", ".", "..") for c in components)
    assert len(set(components)) == len(names)


def test_a_run_directory_named_after_a_plugin_policy_and_task_is_one_folder_below_runs():
    from autonesy.graph.run import RunConfig, default_run_dir

    task = get_task("fashion")
    path = default_run_dir(RunConfig(task="x", format="dimacs", policy="mypkg/vote"), _renamed(task, "mypkg/shifts"))
    assert path.parts[:2] == ("runs", "mypkg+shifts") and len(path.parts) == 3
    assert path.parts[2].startswith("dimacs-mypkg+vote-detailed-")


def _renamed(task, name):
    import dataclasses

    return dataclasses.replace(task, name=name)


def _string_lists(path: Path):
    """The strings of each literal tuple, list or set in a source file (a dict keyed by task name holds
    per-task data, as tasks/data/features.py does, and is tied to the catalogue by its own test)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            yield node.lineno, {i.value for i in node.elts if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def test_no_module_keeps_a_second_copy_of_a_registered_name_list():
    """The registry is the one list: no literal in the product names most of the built-in policies,
    catalogue tasks or providers (the catalogue registers its builders, not their names); a subset
    with a meaning of its own, such as the tasks one data loader serves, is not a copy."""
    import autonesy.agents.llm.registry as llm_registry

    llm_registry.builtin_providers()
    kinds = {kind: {e.name for e in registry.entries(kind) if e.builtin} for kind in registry.KINDS}
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, strings in _string_lists(path):
                for kind, names in kinds.items():
                    if len(strings & names) > len(names) // 2:
                        found.append(f"{path.relative_to(ROOT)}:{line}: {kind} {sorted(strings & names)}")
    assert not found, found


def test_a_script_registers_short_names_that_may_not_take_a_built_in_one(scratch_registry):
    registry.policy("mine")(from_module("__main__"))
    entry = registry.lookup("policy", "mine")
    assert entry.package == "__main__" and not entry.builtin
    with pytest.raises(registry.RegistryError, match="registers policy 'zs' which 'autonesy-agent' registered first"):
        registry.policy("zs")(from_module("__main__"))


def test_a_plugin_provider_is_asked_for_as_namespace_kind_argument(scratch_registry, monkeypatch):
    from autonesy.agents.llm import ChatBackend, LLMError, backend_from_spec

    seen = []

    def echo(spec, settings, **context):
        seen.append((spec.kind, spec.path, settings["retries"]))
        return ChatBackend()

    echo.__module__ = "mypkg.llm"
    installed(monkeypatch, "mypkg", "mypkg._registry")
    registry.provider("echo")(echo)
    assert isinstance(backend_from_spec("mypkg/echo:hello world", retries=2), ChatBackend)
    assert seen == [("mypkg/echo", "hello world", 2)]
    with pytest.raises(LLMError, match="no provider of 'mypkg/nope' LLM specs"):
        backend_from_spec("mypkg/nope:x")
