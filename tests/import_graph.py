"""The project's import graph read from the source (``ast``), late imports inside functions included.

Used by ``test_layers.py`` to keep the layers of docs/architecture.md: which top-level package may
import which, and no import cycles between modules. ``if TYPE_CHECKING:`` imports count for layers
(knowing a type is knowing the package) but not for cycles (they never run). The folder ``api/`` is
the top-level package ``autonesy`` itself (``api/_score.py`` is ``autonesy._score``); the modules its
``_EXPORTS`` table names are imported on first use, and count as its imports.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("agents", "graph", "tools", "nesy", "tasks", "api")
TOP = "api"  # the folder installed as the top-level package ``autonesy`` (pyproject's package-dir)
CLI = ("autonesy.graph.cli", "autonesy.graph.__main__")  # the command line: a layer of its own, over the API


@dataclass
class ImportGraph:
    modules: dict[str, Path] = field(default_factory=dict)
    runtime: dict[str, set[str]] = field(default_factory=dict)  # module -> modules it imports when run
    typing_only: dict[str, set[str]] = field(default_factory=dict)
    third_party: dict[str, set[str]] = field(default_factory=dict)  # module -> top-level names of other packages

    def edges(self, include_typing: bool = True) -> dict[str, set[str]]:
        out = {m: set(ts) for m, ts in self.runtime.items()}
        if include_typing:
            for m, ts in self.typing_only.items():
                out.setdefault(m, set()).update(ts)
        return out


def module_name(root: Path, path: Path, prefix: str = "autonesy") -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[0] == TOP:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([prefix, *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, module: str, is_package: bool, known: set[str]):
    """Yield (target module, typing_only) for every import of a known module in ``tree``."""
    typing_nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for inner in node.body:
                typing_nodes.update(id(n) for n in ast.walk(inner))
    own = module.split(".")
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = own[: len(own) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from pkg import sub` imports the submodule when there is one, else pkg itself
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                targets.append(sub if sub in known else source)
        for target in targets:
            while target and target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != module:
                yield target, id(node) in typing_nodes


def _third_party(tree: ast.Module, prefix: str = "autonesy") -> set[str]:
    """Top-level names of the absolute imports of anything but our own package (stdlib included), late ones too."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    names.discard(prefix)
    return names


def _lazy_exports(tree: ast.Module) -> set[str]:
    """The module names of a ``_EXPORTS = {name: module}`` table (imported on first use by ``__getattr__``)."""
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and isinstance(value, ast.Dict):
            return {v.value for v in value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return set()


def read_import_graph(root: Path, packages: tuple[str, ...] = PACKAGES) -> ImportGraph:
    graph = ImportGraph()
    for package in packages:
        if not (root / package).is_dir():
            continue
        for path in sorted((root / package).rglob("*.py")):
            graph.modules[module_name(root, path)] = path
    known = set(graph.modules)
    for module, path in graph.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph.runtime[module] = set()
        graph.typing_only[module] = set()
        graph.third_party[module] = _third_party(tree)
        for target, typing_only in _imports(tree, module, path.name == "__init__.py", known):
            (graph.typing_only if typing_only else graph.runtime)[module].add(target)
        graph.runtime[module] |= _lazy_exports(tree) & known
    return graph


def layer_of(module: str) -> str:
    """The layer a module belongs to: its folder, except the top-level package (``api``) and the command line (``cli``)."""
    if any(module == name or module.startswith(name + ".") for name in CLI):
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else TOP


def layer_violations(graph: ImportGraph, allowed: dict[str, set[str]]) -> list[str]:
    """``module -> target`` for every import that crosses layers in a direction ``allowed`` forbids."""
    bad = []
    for module, targets in sorted(graph.edges().items()):
        for target in sorted(targets):
            src, dst = layer_of(module), layer_of(target)
            if src != dst and dst not in allowed[src]:
                bad.append(f"{module} -> {target}")
    return bad


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others (``start`` excluded unless in a cycle)."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(edges.get(module, ()))
    return seen


def layer_edge_counts(graph: ImportGraph) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for module, targets in graph.edges().items():
        for target in targets:
            key = (layer_of(module), layer_of(target))
            if key[0] != key[1]:
                counts[key] = counts.get(key, 0) + 1
    return counts


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found
