"""The docs' examples run as written: every fenced ``python`` block in docs/*.md and README.md is executed
in a fresh interpreter, in an empty folder, offline, unless its first line is ``# not run: <reason>``.
The README's commands are the ones CI runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```$", flags=re.S | re.M)
NOT_RUN = re.compile(r"# not run: \S")
BLOCK_TIMEOUT_S = 300


def blocks_in(text: str) -> list[tuple[int, str]]:
    """(line of the opening fence, code) for every python block of a Markdown text."""
    return [(text.count("\n", 0, match.start()) + 1, match.group(1)) for match in FENCE.finditer(text)]


def python_blocks() -> list[tuple[str, str]]:
    """(``page:line``, code) for every python block of the pages."""
    return [
        (f"{page.relative_to(ROOT)}:{line}", code)
        for page in PAGES
        for line, code in blocks_in(page.read_text(encoding="utf-8"))
    ]


BLOCKS = python_blocks()
RUNNABLE = [(where, code) for where, code in BLOCKS if not code.startswith("# not run:")]


def test_blocks_not_run_say_why():
    for where, code in BLOCKS:
        if code.startswith("# not run"):
            assert NOT_RUN.match(code), f"{where}: write '# not run: <reason>'"


@pytest.mark.parametrize(("where", "code"), RUNNABLE, ids=[where for where, _ in RUNNABLE])
def test_python_block_runs(where, code, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTONESY_", "OPENAI_"))}
    env |= {
        "AUTONESY_CACHE_DIR": str(tmp_path / "cache"),
        "AUTONESY_DATA_DIR": str(tmp_path / "data"),
        "HF_HUB_OFFLINE": "1",
        "NO_PROXY": "*",
    }
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    assert done.returncode == 0, f"{where} raised:\n{done.stderr[-3000:]}"


def test_the_fence_reader_finds_python_blocks_and_their_lines():
    page = (
        "# Title\n\n```python\nprint(1)\n```\n\n```bash\nls\n```\n\n```python\n# not run: needs an endpoint\nx\n```\n"
    )
    assert blocks_in(page) == [(3, "print(1)\n"), (11, "# not run: needs an endpoint\nx\n")]


def ci_install_and_test_line() -> str:
    (line,) = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("python3 -m venv")]
    return line


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_documented_test_command_is_what_ci_runs(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"bash .ci/system-packages && {ci_install_and_test_line()}\n" in text


def test_the_readme_stays_a_front_page():
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= 200, f"README.md has {lines} lines: move the detail into a docs page"
