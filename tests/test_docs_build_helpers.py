"""The docs build's helpers (mkdocs_hooks.py): the API reference finds every module where Python imports
it from, though the folders are named otherwise (setuptools package-dir), and shows doctest examples as code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the [docs] extra is not installed")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mkdocs_hooks  # noqa: E402


def test_the_layout_puts_each_folder_under_its_package_name(tmp_path):
    package = mkdocs_hooks.lay_out_package(tmp_path / "layout")
    assert (package / "__init__.py").resolve() == ROOT / "api" / "__init__.py"
    assert (package / "tools" / "metrics.py").resolve() == ROOT / "tools" / "metrics.py"
    assert (package / "agents" / "llm" / "__init__.py").resolve() == ROOT / "agents" / "llm" / "__init__.py"
    assert (package / "graph" / "cli").resolve() == ROOT / "graph" / "cli"


def test_laying_out_again_replaces_the_old_layout(tmp_path):
    (tmp_path / "layout" / "autonesy").mkdir(parents=True)
    (tmp_path / "layout" / "autonesy" / "stale.py").write_text("")
    package = mkdocs_hooks.lay_out_package(tmp_path / "layout")
    assert not (package / "stale.py").exists()


def test_doctest_examples_are_fenced_as_code_and_fences_are_left_alone():
    docstring = "Score it.\n\n>>> f([1])\n[('a', 1)]\n\nAfter.\n\n```python\n>>> kept\n```\n    >>> g()\n    2"
    assert mkdocs_hooks.fence_doctests(docstring) == (
        "Score it.\n\n```pycon\n>>> f([1])\n[('a', 1)]\n```\n\nAfter.\n\n```python\n>>> kept\n```\n"
        "    ```pycon\n    >>> g()\n    2\n    ```"
    )
