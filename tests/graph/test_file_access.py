"""graph/ reads and writes files only through ``tools/safe_files.py``: read from the code (AST).

Run, sweep, verification and report directories may come from elsewhere; a raw ``open`` or
``write_text`` follows a planted link (``report/by_llm.md`` → ``~/.ssh/authorized_keys``) or waits on
a FIFO. Every call that opens, writes, creates or removes a file by path is refused here, except on
the receivers that are the safe wrappers themselves and the few entries of ``ALLOWED``.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# method names that touch a file by path (pathlib, matplotlib, plotly, pandas)
METHODS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "mkdir",
    "touch",
    "unlink",
    "rmdir",
    "rename",
    "symlink_to",
    "hardlink_to",
    "savefig",
    "write_html",
    "write_image",
    "to_csv",
    "to_json",
}
# functions that touch a file by path
FUNCTIONS = {
    "open",
    "io.open",
    "os.open",
    "os.mkdir",
    "os.makedirs",
    "os.replace",
    "os.rename",
    "os.remove",
    "os.unlink",
    "os.symlink",
    "os.mkfifo",
    "json.dump",
    "sqlite3.connect",
    "tempfile.NamedTemporaryFile",
    "tempfile.mkstemp",
    "tempfile.mkdtemp",
}
FUNCTION_MODULES = {"shutil"}  # every shutil function copies, moves or removes by path
# receivers whose methods of those names are the safe wrappers (RunDir, Roots) or not about files
SAFE_RECEIVERS = {"safe_files", "rundir", "roots", "self.roots", "RunDir", "webbrowser", "self"}

# (file, call): why this one needs no safe_files
ALLOWED = {
    ("graph/checkpoint_store.py", "sqlite3.connect"): "SQLite opens by name: safe_files.check_sqlite runs just before",
    ("graph/cli/verify.py", "path.read_text"): "the instruction/output file the user names (a pipe allowed)",
}


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _memory_buffers(tree: ast.AST) -> set[str]:
    """Names bound to an in-memory buffer (``x = io.BytesIO()``): a plot drawn into one touches no file."""
    return {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and _dotted(node.value.func) in ("io.BytesIO", "io.StringIO")
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def raw_file_calls(source: str) -> list[tuple[int, str]]:
    """(line, call) of every call in ``source`` that opens, writes, creates or removes a file by path."""
    found = []
    tree = ast.parse(source)
    buffers = _memory_buffers(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in buffers:
            continue
        name = _dotted(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
            receiver = _dotted(node.func.value)
            if receiver in SAFE_RECEIVERS or (name in FUNCTIONS and name != "open"):
                pass
            else:
                found.append((node.lineno, name or f"<expression>.{node.func.attr}"))
                continue
        if name is not None and (name in FUNCTIONS or name.split(".")[0] in FUNCTION_MODULES):
            found.append((node.lineno, name))
    return found


def test_graph_touches_files_only_through_safe_files():
    offending = []
    used = set()
    for path in sorted((ROOT / "graph").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, call in raw_file_calls(path.read_text(encoding="utf-8")):
            if (rel, call) in ALLOWED:
                used.add((rel, call))
            else:
                offending.append(f"{rel}:{line}: {call}")
    assert offending == [], "use autonesy.tools.safe_files:\n" + "\n".join(offending)
    assert used == set(ALLOWED), f"allowed but no longer there: {set(ALLOWED) - used}"


def test_the_reader_finds_each_kind_of_raw_call():
    source = textwrap.dedent(
        """
        import json, os, shutil, sqlite3
        open(p)
        path.open("a")
        (out / "x").write_text("t")
        out.mkdir(parents=True)
        figure.savefig(out / "f.png")
        image = io.BytesIO()
        figure.savefig(image, format="png")
        json.dump(data, handle)
        os.replace(a, b)
        shutil.copyfile(a, b)
        sqlite3.connect(p)
        safe_files.write_text(p, "t")
        rundir.write_text("a.txt", "t")
        self.write_text("a.txt", "t")
        json.dumps(data)
        text.replace("a", "b")
        webbrowser.open(url)
        """
    )
    assert [call for _, call in raw_file_calls(source)] == [
        "open",
        "path.open",
        "<expression>.write_text",
        "out.mkdir",
        "figure.savefig",
        "json.dump",
        "os.replace",
        "shutil.copyfile",
        "sqlite3.connect",
    ]
