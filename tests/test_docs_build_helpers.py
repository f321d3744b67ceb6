"""The docs build's package layout (mkdocs_hooks.py): the API reference finds every module where Python
imports it from, though the folders are named otherwise (setuptools package-dir)."""

from __future__ import annotations

import sys
from pathlib import Path

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
