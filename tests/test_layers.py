"""The layers of docs/architecture.md, read from the imports: who may import whom, and no cycles."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from import_graph import cycles, layer_violations, read_import_graph

ROOT = Path(__file__).resolve().parents[1]

# package -> the packages it may import (docs/architecture.md §1)
ALLOWED = {
    "tools": set(),
    "tasks": {"tools"},
    "nesy": {"tools"},
    "agents": {"tools", "tasks"},
    "graph": {"tools", "tasks", "nesy", "agents"},
}

# Modules kept at an old import path after a move; each only re-exports its new home.
COMPATIBILITY_SHIMS = {
    "autonesy.tools.oracle_test": "autonesy.tasks.oracle_test",
    "autonesy.tools.formats.reference": "autonesy.tasks.reference",
    "autonesy.graph.verify": "autonesy.graph.verify.graph",
    "autonesy.graph.vifbench": "autonesy.graph.verify.vifbench",
    "autonesy.graph.verify_run": "autonesy.graph.verify.run",
    "autonesy.tools.checkers": "autonesy.tools.verify.checkers",
    "autonesy.tools.checker_run": "autonesy.tools.verify.checker_run",
    "autonesy.tools.user_checkers": "autonesy.tools.verify.user_checkers",
    "autonesy.tools.ifeval_checkers": "autonesy.tools.verify.ifeval_checkers",
    "autonesy.tools.verify_metrics": "autonesy.tools.verify.metrics",
    "autonesy.tools.verify_solver": "autonesy.tools.verify.solver",
}


def test_layers_hold():
    graph = read_import_graph(ROOT)
    assert layer_violations(graph, ALLOWED, exempt=set(COMPATIBILITY_SHIMS)) == []


def test_no_import_cycles_late_imports_included():
    graph = read_import_graph(ROOT)
    assert cycles(graph.edges(include_typing=False)) == []


def test_shims_only_re_export_their_new_home():
    graph = read_import_graph(ROOT)
    for shim, home in COMPATIBILITY_SHIMS.items():
        tree = ast.parse(graph.modules[shim].read_text(encoding="utf-8"))
        body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        imports = [n for n in body if isinstance(n, ast.ImportFrom)]
        others = [n for n in body if not isinstance(n, ast.ImportFrom)]
        assert [n.module for n in imports] == [home], shim
        assert all(isinstance(n, ast.Assign) and n.targets[0].id == "__all__" for n in others), shim


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for package in ("agents", "graph", "tools", "nesy", "tasks"):
        (tmp_path / package).mkdir(exist_ok=True)
    return tmp_path


def test_checker_sees_a_late_layer_break_and_a_late_cycle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "tools/a.py": "def f():\n    from autonesy.tasks.b import g\n",
            "tasks/b.py": "from autonesy.tools import a\n",
            "tasks/c.py": "from . import d\n",
            "tasks/d.py": "def h():\n    from autonesy.tasks.c import x\n",
            "tasks/e.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from autonesy.tasks.f import T\n",
            "tasks/f.py": "from autonesy.tasks import e\n",
        },
    )
    graph = read_import_graph(root)
    assert layer_violations(graph, ALLOWED) == ["autonesy.tools.a -> autonesy.tasks.b"]
    found = cycles(graph.edges(include_typing=False))
    assert sorted(map(tuple, found)) == [
        ("autonesy.tasks.b", "autonesy.tools.a"),
        ("autonesy.tasks.c", "autonesy.tasks.d"),
    ]  # e <-> f is typing-only: not a cycle at run time
