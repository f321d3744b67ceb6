"""The layers of docs/architecture.md, read from the imports: who may import whom, and no cycles."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from import_graph import ImportGraph, cycles, layer_violations, reachable, read_import_graph

ROOT = Path(__file__).resolve().parents[1]

# layer -> the layers it may import (docs/architecture.md §1): the five folders, then the Python API
# (api/, the top-level package ``autonesy``), then the command line (graph/cli), a thin layer over the API
ALLOWED = {
    "tools": set(),
    "tasks": {"tools"},
    "nesy": {"tools"},
    "agents": {"tools", "tasks"},
    "graph": {"tools", "tasks", "nesy", "agents"},
    "api": {"tools", "tasks", "nesy", "agents", "graph"},
    "cli": {"tools", "tasks", "nesy", "agents", "graph", "api"},
}

# Inside graph/: what reads results (report, viewer, the read model, the trace reader) never reaches
# what runs attempts — not even through another module, late imports counted.
READ_SIDE = (
    "autonesy.graph.report",
    "autonesy.graph.report_rows",
    "autonesy.graph.results",
    "autonesy.graph.trace",
    "autonesy.graph.view",
)
WRITE_SIDE = (
    "autonesy.agents",
    "autonesy.nesy",
    "autonesy.graph.sweep",
    "autonesy.graph.run",
    "autonesy.graph.attempt",
    "autonesy.graph.tracer",
    "autonesy.graph.checkpoint_store",
    "autonesy.graph.verify",
)
HEAVY = ("langgraph", "langchain", "langchain_core", "langchain_openai", "torch", "ray")

# library -> the only modules (a name stands for itself and the modules below it) that may import it
THIRD_PARTY = {
    "langgraph": ("autonesy.graph.attempt", "autonesy.graph.verify.graph", "autonesy.graph.checkpoint_store"),
    "langchain": ("autonesy.agents.llm",),
    "langchain_openai": ("autonesy.agents.llm",),
    # the chat-model interface: the backends, and the scripted models that stand in for the verifier's LLM
    "langchain_core": ("autonesy.agents.llm",),
    # training, reading rsbench's .pt files, and the API's NeSy layers (torch.nn.Module subclasses)
    "torch": ("autonesy.nesy", "autonesy.tasks.data.rsbench", "autonesy._nesy"),
    "ray": ("autonesy.graph.sweep.executors",),
    "inspect_ai": ("autonesy.graph.inspect_task",),  # the optional [inspect] extra: the Inspect task package
}


def _within(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(name + ".") for name in names)


def read_side_violations(graph: ImportGraph) -> list[str]:
    """``reader -> module`` for every write-side module or heavy library a read-side module reaches."""
    edges = graph.edges()
    bad = []
    for module in sorted(m for m in graph.modules if _within(m, READ_SIDE)):
        reached = reachable(edges, module)
        bad += [f"{module} -> {m}" for m in sorted(reached) if _within(m, WRITE_SIDE)]
        libraries = set().union(*(graph.third_party.get(m, set()) for m in reached | {module}))
        bad += [f"{module} -> {lib}" for lib in sorted(libraries & set(HEAVY))]
    return bad


def third_party_violations(graph: ImportGraph) -> list[str]:
    """``module -> library`` for every import of a ruled library outside the modules allowed to use it."""
    return [
        f"{module} -> {lib}"
        for module, libraries in sorted(graph.third_party.items())
        for lib in sorted(libraries)
        if lib in THIRD_PARTY and not _within(module, THIRD_PARTY[lib])
    ]


def test_layers_hold():
    graph = read_import_graph(ROOT)
    assert layer_violations(graph, ALLOWED) == []


def test_the_read_side_never_reaches_the_write_side():
    assert read_side_violations(read_import_graph(ROOT)) == []


def test_langgraph_langchain_torch_and_ray_stay_where_they_are_needed():
    assert third_party_violations(read_import_graph(ROOT)) == []


def test_reading_results_loads_no_graph_runtime_llm_client_or_torch():
    """The import as it really runs (the AST graph above can miss a dynamic import)."""
    code = (
        "import sys, autonesy.graph.report, autonesy.graph.view.pages\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} | {m for m in sys.modules if 'agents' in m})))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ.copy()
    ).stdout.split()
    assert "autonesy" in found  # the import happened
    assert not set(found) & set(HEAVY), sorted(set(found) & set(HEAVY))
    assert not [m for m in found if m.startswith("autonesy.agents")]


def test_no_import_cycles_late_imports_included():
    graph = read_import_graph(ROOT)
    assert cycles(graph.edges(include_typing=False)) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for package in ("agents", "graph", "tools", "nesy", "tasks", "api"):
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


def test_the_api_is_the_top_package_and_only_the_command_line_imports_it(tmp_path):
    root = _tree(
        tmp_path,
        {
            "api/__init__.py": '_EXPORTS: dict[str, str] = {"score": "autonesy._score"}\n',
            "api/_score.py": "def score():\n    from autonesy.tools.metrics import f\n",
            "tools/metrics.py": "def f():\n    from autonesy import score\n",  # below the API: refused
            "graph/run.py": "from autonesy._score import score\n",  # graph is below the API too
            "graph/cli/score.py": "def command():\n    from autonesy import score\n",  # the CLI may
        },
    )
    graph = read_import_graph(root)
    assert graph.runtime["autonesy"] == {"autonesy._score"}  # the lazy export is an import
    assert layer_violations(graph, ALLOWED) == [
        "autonesy.graph.run -> autonesy._score",
        "autonesy.tools.metrics -> autonesy",
    ]
    assert cycles(graph.edges(include_typing=False)) == [["autonesy", "autonesy._score", "autonesy.tools.metrics"]]


def test_checker_sees_a_reader_reaching_the_write_side_late_and_a_stray_library(tmp_path):
    root = _tree(
        tmp_path,
        {
            "graph/report.py": "from autonesy.graph import results\n",
            "graph/results.py": "def f():\n    from autonesy.graph.helper import g\n",
            "graph/helper.py": "from autonesy.agents.llm.chat import c\n",
            "agents/llm/chat.py": "import langchain_core.messages\nimport torch\n",
            "graph/view/pages.py": "from autonesy.graph import results\n",
            "graph/attempt.py": "from langgraph.graph import StateGraph\n",
        },
    )
    graph = read_import_graph(root)
    reached = ["autonesy.agents.llm.chat", "langchain_core", "torch"]
    assert read_side_violations(graph) == [
        *(f"autonesy.graph.report -> {m}" for m in reached),
        *(f"autonesy.graph.results -> {m}" for m in reached),
        *(f"autonesy.graph.view.pages -> {m}" for m in reached),
    ]
    assert third_party_violations(graph) == ["autonesy.agents.llm.chat -> torch"]
