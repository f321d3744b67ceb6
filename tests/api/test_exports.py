"""``import autonesy`` is light and complete: every public name resolves lazily, ``__all__`` lists
exactly them, type checkers see the same names, and nothing heavy loads until a name needs it."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import autonesy

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "langgraph", "langchain", "langchain_core", "langchain_openai", "ray")


def loaded_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after running ``code``."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import autonesy",
        "import autonesy; autonesy.__all__; dir(autonesy)",
        "import autonesy; autonesy.load_task('fashion').num_vars",
        "import autonesy; autonesy.score",
        "import autonesy; autonesy.read_results; autonesy.RunSummary",
    ],
    ids=["import", "all-and-dir", "load-task", "score", "read-results"],
)
def test_import_autonesy_and_light_names_load_nothing_heavy(code):
    modules = loaded_after(code)
    assert "autonesy" in modules  # the probe ran
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_the_probe_sees_a_heavy_import():
    """The other side: touching a NeSy layer loads torch, and the probe notices."""
    assert "torch" in loaded_after("import autonesy; autonesy.SemanticLoss")


def test_all_lists_every_export_and_each_one_resolves():
    assert sorted(autonesy.__all__) == sorted(autonesy._EXPORTS) and len(set(autonesy.__all__)) == len(autonesy.__all__)
    for name, module in autonesy._EXPORTS.items():
        value = getattr(autonesy, name)
        assert value is getattr(importlib.import_module(module), name)
        assert value.__doc__, f"autonesy.{name} has no docstring"
    assert set(autonesy.__all__) <= set(dir(autonesy))


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'formalise'"):
        autonesy.formalise  # noqa: B018
    assert not hasattr(autonesy, "_tasks_typo")


def test_type_checkers_see_the_same_names_from_the_same_modules():
    """The ``if TYPE_CHECKING:`` imports (what mypy and the docs generator read) equal ``_EXPORTS``."""
    tree = ast.parse((ROOT / "api" / "__init__.py").read_text(encoding="utf-8"))
    block = next(
        node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )
    seen = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name  # `import X as X`: re-exported
    }
    assert seen == autonesy._EXPORTS
