"""docs/plugins.md shows the example package's files exactly: a block whose first line names a file
under examples/plugin/ holds that file's text, so the page a plugin author copies is the code that
runs in the tests (its python blocks also run, as every docs block does: tests/test_docs_examples.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOWN = re.compile(r"^```(?:python|toml)\n# (examples/plugin/\S+)\n(.*?)^```$", flags=re.S | re.M)


def test_the_page_shows_every_file_of_the_example_package_as_it_is():
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    shown = {path: text for path, text in SHOWN.findall(page)}
    package = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "examples" / "plugin").rglob("*")
        if path.suffix in (".py", ".toml") and path.name not in ("__init__.py", "shifts.toml")
    }
    assert set(shown) == package
    for path, text in shown.items():
        assert text == (ROOT / path).read_text(encoding="utf-8"), path
