"""The docs build's two helpers for the API reference (mkdocstrings, which reads the source through griffe).

1. A MkDocs hook that lays out the ``autonesy`` package as Python sees it, so every module is found.

The source tree maps folders onto package names (setuptools ``package-dir`` in pyproject.toml:
``autonesy`` is ``api/``, ``autonesy.tools`` is ``tools/``, …); griffe looks for ``autonesy/tools``
beside ``autonesy/__init__.py`` and finds nothing. Before each build this hook writes
``build/docs-package/autonesy``: links to ``api/``'s files and to each subpackage's folder, which
mkdocs.yml names as the handler's search path.

2. A griffe extension, :class:`DoctestAsCode`: our docstrings hold doctest examples (run as tests) in
their text, which Markdown would read as prose (``[a]`` then ``[b]`` on the next line is a link); it
fences each example as ``pycon`` code.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import griffe
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent
LAYOUT = ROOT / "build" / "docs-package"


def lay_out_package(target: Path) -> Path:
    """Build ``target/autonesy`` from the package-dir mapping; returns the package's folder."""
    mapping: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-dir"]
    shutil.rmtree(target, ignore_errors=True)
    package = target / "autonesy"
    package.mkdir(parents=True)
    for source in (ROOT / mapping["autonesy"]).iterdir():
        if source.suffix == ".py":
            (package / source.name).symlink_to(source)
    for name, folder in mapping.items():
        parts = name.split(".")
        if len(parts) == 2:  # a direct subpackage: its folder holds the deeper ones
            (package / parts[1]).symlink_to(ROOT / folder, target_is_directory=True)
        elif len(parts) > 2 and not target.joinpath(*parts).resolve() == (ROOT / folder).resolve():
            raise ValueError(f"{name} is {folder}, not inside its parent package's folder")
    return package


@event_priority(100)  # before mkdocstrings' own on_config, which looks for its search paths
def on_config(config: Any) -> Any:
    """MkDocs event: lay the package out before mkdocstrings starts."""
    lay_out_package(LAYOUT)
    return config


def fence_doctests(text: str) -> str:
    """``text`` with each doctest example (``>>>`` up to a blank line) outside a fence fenced as ``pycon``."""
    out: list[str] = []
    fenced = False
    indent = None  # the open example's indentation
    for line in text.split("\n"):
        stripped = line.lstrip()
        if indent is not None and not stripped:
            out.append(indent + "```")
            indent = None
        elif indent is None and not fenced and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            out.append(indent + "```pycon")
        elif indent is None and stripped.startswith(("```", "~~~")):
            fenced = not fenced
        out.append(line)
    if indent is not None:
        out.append(indent + "```")
    return "\n".join(out)


class DoctestAsCode(griffe.Extension):
    """Fences every docstring's doctest examples before mkdocstrings renders it."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: ARG002 (griffe's event signature)
        """griffe event: each loaded object, its docstring as written."""
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
