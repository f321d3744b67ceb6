"""The layers of docs/architecture.md, read from the imports: who may import whom, and no cycles."""

from __future__ import annotations

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


def test_layers_hold():
    graph = read_import_graph(ROOT)
    assert layer_violations(graph, ALLOWED) == []


def test_no_import_cycles_late_imports_included():
    graph = read_import_graph(ROOT)
    assert cycles(graph.edges(include_typing=False)) == []


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
