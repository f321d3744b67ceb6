"""``parse_python`` serialises AST construction (CPython gh-106905): a long threaded stress, the
same stress with library parses (``ast.literal_eval``, as ``numpy.load`` does) beside ours, and a
reading of the package that finds no other ``ast.parse``."""

from __future__ import annotations

import ast
import gc
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from autonesy.tools.pyast import THREAD_SAFE_AST, parse_python

UNLOCKED_PARSE = getattr(ast.parse, "__wrapped__", ast.parse)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "graph", "tools", "tasks", "nesy")
# a deep expression and many comprehensions: thousands of AST nodes per parse
SOURCE = (
    "x = "
    + "(" * 100
    + "1"
    + ")" * 100
    + "\n"
    + "\n".join(f"y{i} = [a + b * c for a in range({i}) if a or not b]" for i in range(50))
)
LITERAL = "(" + ", ".join(f"{{'k{i}': [{i}, ({i}, 'x'), None, True]}}" for i in range(120)) + ")"


def literal(_: str) -> object:
    """A library's parse (``numpy.load`` reads a ``.npy`` header so): it goes through ``ast.parse``."""
    value = ast.literal_eval(LITERAL)
    assert isinstance(value, tuple) and len(value) == 120
    return ast.Module(body=[ast.Pass()] * 51, type_ignores=[])


class _Cycle:
    """Cyclic garbage whose finaliser runs Python code: a collection that starts inside an AST
    conversion runs it there, and the thread switch it allows is what breaks an unlocked parse."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(50))


def stress(parse: Callable[[str], object], threads: int = 8, rounds: int = 200, other=None) -> list[str]:
    """Run ``parse`` from ``threads`` threads (every other one runs ``other`` instead, if given)
    while garbage is collected often; the SystemErrors seen (each thread stops at its first)."""
    errors: list[str] = []
    stop = threading.Event()

    def work(parse: Callable[[str], object]) -> None:
        for _ in range(rounds):
            if stop.is_set():
                return
            for _ in range(20):
                _Cycle()
            try:
                tree = parse(SOURCE)
            except SystemError as error:
                errors.append(str(error))
                stop.set()
                return
            assert isinstance(tree, ast.Module) and len(tree.body) == 51

    old = gc.get_threshold()
    gc.set_threshold(50, 5, 5)
    try:
        pool = [threading.Thread(target=work, args=(other if other and i % 2 else parse,)) for i in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
    finally:
        gc.set_threshold(*old)
    return errors


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="gh-106905 is fixed in CPython 3.12")
def test_the_stress_breaks_an_unlocked_parse():
    """The stress is real: without the lock, Python 3.11 fails (every local run of 8 threads × 60
    rounds did; 200 rounds stop at the first failure)."""
    errors = stress(UNLOCKED_PARSE)
    assert errors and "recursion depth mismatch" in errors[0]


def test_the_locked_parse_survives_the_stress():
    assert stress(parse_python, rounds=60) == []  # 60 rounds: enough for every unlocked local run to fail


def test_library_parses_beside_ours_survive_the_stress():
    """Half the threads parse through ``ast.literal_eval`` (a library's path, not ours): on 3.11 it
    now takes our lock too. This mix broke a sweep attempt in CI (``numpy.load`` in one thread)."""
    assert stress(parse_python, rounds=60, other=literal) == []


@pytest.mark.skipif(THREAD_SAFE_AST, reason="gh-106905 is fixed in CPython 3.12: ast.parse is left alone")
def test_importing_the_tools_serialises_ast_parse_for_everyone():
    code = (
        "import ast, inspect; unlocked = ast.parse; import autonesy.tools; "
        "assert ast.parse is not unlocked and ast.parse.__wrapped__ is unlocked; "
        "assert ast.dump(ast.parse('x', '<f>', 'eval')) == ast.dump(unlocked('x', '<f>', 'eval')); "
        "import importlib, autonesy.tools.pyast as p; importlib.reload(p); "
        "assert p._UNLOCKED_PARSE is unlocked; "  # a re-import does not wrap the wrapper
        "print(inspect.signature(len), ast.literal_eval('[1, (2, 3)]'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(obj,", "/)", "[1,", "(2,", "3)]"]


def test_parse_python_is_ast_parse():
    assert ast.dump(parse_python("a and not b", mode="eval")) == ast.dump(ast.parse("a and not b", mode="eval"))
    with pytest.raises(SyntaxError):
        parse_python("a and (")


def test_no_other_ast_construction_in_the_package():
    """Every AST our code builds goes through ``parse_python``: no ``ast.parse`` and no
    ``PyCF_ONLY_AST`` compile anywhere else in the package."""
    pattern = re.compile(r"\bast\.parse\(|PyCF_ONLY_AST|\bfrom ast import\b[^\n]*\bparse\b")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != ROOT / "tools" / "pyast.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
    assert "ast.parse(" in (ROOT / "tools" / "pyast.py").read_text(encoding="utf-8")  # the reader is not blind
