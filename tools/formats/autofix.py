"""Fixes that need no reasoning, each reported by a stable name so traces can count them.

``autofix(source, fmt)`` returns the fixed text and the names of the fixes applied, in the order
applied; text that needs none comes back unchanged with no names. The fixes:

All formats
    ``stray_fence_removed``: lines holding only a markdown fence (```` ``` ````, ```` ```python ````,
    ``~~~``) are removed.

DIMACS
    ``dimacs_names_replaced``: task variable names written instead of indices (``-a b 0``) become
    their indices (the task's order, first = 1); only when every non-integer token of the clause
    lines is a (possibly negated) task variable name.
    ``dimacs_comment_converted``: a line starting with ``#`` or ``//`` becomes a ``c`` comment line.
    ``dimacs_missing_terminator``: when the last clause is not terminated by 0 and no line holds more
    than one clause (no 0 inside a line), each clause line that does not end with 0 gets one; when
    lines do hold several clauses, only the last line gets its 0. Also applied when the header's
    clause count equals the number of clause lines but not the number of 0s (one clause per line,
    some 0s forgotten mid-formula).
    ``dimacs_header_added``: no ``p cnf`` line → one is inserted before the first clause.
    ``dimacs_header_recounted``: the header's clause count differs from the clauses written, or its
    variable count is below the highest variable used → the counts are corrected.
    ``dimacs_header_replaced``: a malformed header line (``p cnf 3``, ``p dnf 3 2``) is rewritten.
    ``dimacs_header_moved``: a header after the first clause is moved before it.
    ``dimacs_duplicate_header_removed``: several headers → one.
    Header and terminator fixes are skipped while a clause line holds a token that is not an integer
    (the parser's syntax error is then the thing to repair).

Python formats (``pysat``, ``cpmpy``, ``sympy``)
    ``python_import_added:<module>``: a well-known name used but never bound (``cp.`` without
    ``import cpmpy as cp``; ``CardEnc``/``EncType`` from ``pysat.card``; ``IDPool``/``CNF`` from
    ``pysat.formula``; ``And``, ``Or``, ``Not``, ``Implies``, ``Equivalent``, ``Xor``, ``symbols``
    from ``sympy``; ``combinations``/``product``/``permutations`` from ``itertools``…) gets its
    import added at the top (after any ``from __future__`` import). One name per module line.
    Never imported: names in ``bound`` (the task variables) and the names the format's front-end
    pre-binds in the sandbox (its ``RESERVED_NAMES``: e.g. PySAT's ``CardEnc``, which there is a
    wrapper drawing auxiliaries from ``vpool`` — importing the plain class over it would let
    auxiliaries collide with task variables).

    ``python2_print_converted``: a Python 2 print statement (``print x``, ``print "…" % v``)
    becomes a call.

PySAT
    ``pysat_clause_terminator_removed``: a DIMACS-style 0 ending a clause list (``[a, -b, 0]``) is
    removed.

NAT has only the fence fix (its aliases already accept the usual symbol spellings).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable, Sequence

from autonesy.tools.formats.base import FRONT_ENDS
from autonesy.tools.formats.dimacs import is_comment, is_header, parse_header
from autonesy.tools.formats.extract import strip_fence_lines
from autonesy.tools.pyast import parse_python

FIX_STRAY_FENCE = "stray_fence_removed"
FIX_DIMACS_COMMENT = "dimacs_comment_converted"
FIX_DIMACS_TERMINATOR = "dimacs_missing_terminator"
FIX_DIMACS_HEADER_ADDED = "dimacs_header_added"
FIX_DIMACS_HEADER_RECOUNTED = "dimacs_header_recounted"
FIX_DIMACS_HEADER_REPLACED = "dimacs_header_replaced"
FIX_DIMACS_HEADER_MOVED = "dimacs_header_moved"
FIX_DIMACS_DUPLICATE_HEADER = "dimacs_duplicate_header_removed"
FIX_IMPORT_PREFIX = "python_import_added:"
FIX_DIMACS_NAMES = "dimacs_names_replaced"
FIX_PYTHON2_PRINT = "python2_print_converted"
FIX_PYSAT_TERMINATOR = "pysat_clause_terminator_removed"

_INTEGER = re.compile(r"^[+-]?\d+$")

_ITERTOOLS = {
    name: ("itertools", f"from itertools import {name}")
    for name in ("combinations", "product", "permutations", "combinations_with_replacement", "chain")
}
_COMMON = {"itertools": ("itertools", "import itertools"), "math": ("math", "import math"), **_ITERTOOLS}

# name used → (module reported in the fix name, import line)
KNOWN_IMPORTS: dict[str, dict[str, tuple[str, str]]] = {
    "pysat": {
        **_COMMON,
        "CardEnc": ("pysat.card", "from pysat.card import CardEnc"),
        "EncType": ("pysat.card", "from pysat.card import EncType"),
        "IDPool": ("pysat.formula", "from pysat.formula import IDPool"),
        "CNF": ("pysat.formula", "from pysat.formula import CNF"),
        "CNFPlus": ("pysat.formula", "from pysat.formula import CNFPlus"),
        "PBEnc": ("pysat.pb", "from pysat.pb import PBEnc"),
        "pysat": ("pysat", "import pysat"),
    },
    "cpmpy": {
        **_COMMON,
        "cp": ("cpmpy", "import cpmpy as cp"),
        "cpmpy": ("cpmpy", "import cpmpy"),
        "boolvar": ("cpmpy", "from cpmpy import boolvar"),
        "Model": ("cpmpy", "from cpmpy import Model"),
        "AllDifferent": ("cpmpy", "from cpmpy import AllDifferent"),
        "AllEqual": ("cpmpy", "from cpmpy import AllEqual"),
        "Xor": ("cpmpy", "from cpmpy import Xor"),
        "np": ("numpy", "import numpy as np"),
    },
    "sympy": {
        **_COMMON,
        "sp": ("sympy", "import sympy as sp"),
        "sympy": ("sympy", "import sympy"),
        **{
            name: ("sympy", f"from sympy import {name}")
            for name in (
                "And",
                "Or",
                "Not",
                "Implies",
                "Equivalent",
                "Xor",
                "ITE",
                "symbols",
                "Symbol",
                "true",
                "false",
            )
        },
    },
}


def autofix(source: str, fmt: str, *, bound: Iterable[str] = ()) -> tuple[str, list[str]]:
    """The fixed text and the names of the fixes applied (empty when nothing needed fixing)."""
    fixes: list[str] = []
    text, fenced = strip_fence_lines(source)
    if fenced:
        fixes.append(FIX_STRAY_FENCE)
    else:
        text = source
    if fmt == "dimacs":
        text = _fix_dimacs(_fix_dimacs_names(text, list(bound), fixes), fixes)
    elif fmt in KNOWN_IMPORTS:
        text = _fix_python2_print(text, fixes)
        if fmt == "pysat":
            text = _fix_pysat_terminators(text, fixes)
        text = _fix_imports(text, fmt, set(bound), fixes)
    elif fmt != "nat":
        raise ValueError(f"unknown format {fmt!r}")
    return text, fixes


# --------------------------------------------------------------------------- DIMACS


def _fix_dimacs(text: str, fixes: list[str]) -> str:
    trailing_newline = text.endswith("\n")
    lines = text.split("\n")
    if trailing_newline:
        lines.pop()

    converted = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("#", "//")):
            lines[i] = "c " + stripped.lstrip("#/").strip()
            converted = True
    if converted:
        fixes.append(FIX_DIMACS_COMMENT)

    # Classify the lines up to a '%' trailer.
    end = next((i for i, line in enumerate(lines) if line.strip() == "%"), len(lines))
    clause_rows: list[int] = []
    header_rows: list[int] = []
    for i, line in enumerate(lines[:end]):
        stripped = line.strip()
        if not stripped or is_comment(stripped):
            continue
        if is_header(stripped):
            header_rows.append(i)
            continue
        if not all(_INTEGER.match(token) for token in stripped.split()):
            return _join(lines, trailing_newline)  # a syntax error no autofix can repair
        clause_rows.append(i)

    tokens = {i: [int(t) for t in lines[i].split()] for i in clause_rows}
    declared = parse_header(lines[header_rows[0]].strip()) if header_rows else None

    # Missing terminators.
    internal_zero = any(0 in row[:-1] for row in tokens.values())
    missing = [i for i in clause_rows if tokens[i][-1] != 0]
    strict_count = sum(row.count(0) for row in tokens.values())
    per_line = False
    if missing and not internal_zero:
        last_open = bool(clause_rows) and tokens[clause_rows[-1]][-1] != 0
        header_says_lines = declared is not None and declared[1] == len(clause_rows) != strict_count
        per_line = last_open or header_says_lines
    if per_line:
        for i in missing:
            lines[i] = lines[i].rstrip() + " 0"
            tokens[i].append(0)
        fixes.append(FIX_DIMACS_TERMINATOR)
    elif clause_rows and tokens[clause_rows[-1]][-1] != 0:
        last = clause_rows[-1]
        lines[last] = lines[last].rstrip() + " 0"
        tokens[last].append(0)
        fixes.append(FIX_DIMACS_TERMINATOR)

    # Header.
    count = sum(row.count(0) for row in tokens.values())
    highest = max((abs(lit) for row in tokens.values() for lit in row), default=0)
    first_clause = clause_rows[0] if clause_rows else None
    if not header_rows:
        header = f"p cnf {highest} {count}"
        insert_at = first_clause if first_clause is not None else _after_comments(lines[:end])
        lines.insert(insert_at, header)
        fixes.append(FIX_DIMACS_HEADER_ADDED)
        return _join(lines, trailing_newline)

    variables = max(declared[0], highest) if declared else highest
    header = f"p cnf {variables} {count}"
    first_header = header_rows[0]
    header_at = first_clause if first_clause is not None and first_header > first_clause else first_header
    misplaced = header_at != first_header
    changed = False
    if len(header_rows) > 1:
        fixes.append(FIX_DIMACS_DUPLICATE_HEADER)
        changed = True
    if declared is None:
        fixes.append(FIX_DIMACS_HEADER_REPLACED)
        changed = True
    elif declared != (variables, count):
        fixes.append(FIX_DIMACS_HEADER_RECOUNTED)
        changed = True
    if misplaced:
        fixes.append(FIX_DIMACS_HEADER_MOVED)
        changed = True
    if not changed:
        return _join(lines, trailing_newline)
    for i in reversed(header_rows):
        del lines[i]
    lines.insert(header_at, header)
    return _join(lines, trailing_newline)


def _after_comments(lines: Sequence[str]) -> int:
    i = 0
    while i < len(lines) and (not lines[i].strip() or is_comment(lines[i].strip())):
        i += 1
    return i


def _join(lines: list[str], trailing_newline: bool) -> str:
    return "\n".join(lines) + ("\n" if trailing_newline else "")


def _fix_dimacs_names(text: str, names: list[str], fixes: list[str]) -> str:
    index = {name: i for i, name in enumerate(names, start=1)}
    lines = text.split("\n")
    changed = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or is_comment(stripped) or is_header(stripped) or stripped == "%":
            continue
        tokens = stripped.split()
        if all(_INTEGER.match(t) for t in tokens):
            continue
        if not all(_INTEGER.match(t) or t.lstrip("-~¬!") in index for t in tokens):
            return text  # something else than names: leave it to the parser's error
        lines[i] = " ".join(
            t if _INTEGER.match(t) else ("-" if t[0] in "-~¬!" else "") + str(index[t.lstrip("-~¬!")]) for t in tokens
        )
        changed = True
    if changed:
        fixes.append(FIX_DIMACS_NAMES)
    return "\n".join(lines)


# --------------------------------------------------------------------------- Python formats
_PRINT_STATEMENT = re.compile(r"^(\s*)print(?:[ \t]+(?![(=\s])(.*?)|[ \t]*)[ \t]*$", re.M)
_CLAUSE_ZERO = re.compile(r"(\[[^\[\]\n]*[^\s\[,][^\[\]\n]*?),\s*0\s*\]")


def _fix_python2_print(code: str, fixes: list[str]) -> str:
    fixed = _PRINT_STATEMENT.sub(lambda m: f"{m.group(1)}print({m.group(2) or ''})", code)
    if fixed != code:
        fixes.append(FIX_PYTHON2_PRINT)
    return fixed


def _fix_pysat_terminators(code: str, fixes: list[str]) -> str:
    fixed = _CLAUSE_ZERO.sub(r"\1]", code)
    if fixed != code:
        fixes.append(FIX_PYSAT_TERMINATOR)
    return fixed


class _Names(ast.NodeVisitor):
    def __init__(self) -> None:
        self.used: set[str] = set()
        self.bound: set[str] = set()
        self.star_modules: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        (self.used if isinstance(node.ctx, ast.Load) else self.bound).add(node.id)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name == "*":
                self.star_modules.add((node.module or "").split(".")[0])
            else:
                self.bound.add(alias.asname or alias.name)

    def _define(self, node) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _define

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)

    def visit_Global(self, node: ast.Global) -> None:
        self.bound.update(node.names)


def _names_in(code: str) -> tuple[set[str], set[str], set[str]]:
    """(used, bound, modules star-imported); a textual approximation when the code does not parse."""
    try:
        tree = parse_python(code)
    except (SyntaxError, ValueError):
        stripped = re.sub(r"#[^\n]*|'[^'\n]*'|\"[^\"\n]*\"", "", code)
        code_lines = re.sub(r"^\s*(?:from|import)\b[^\n]*", "", stripped, flags=re.M)
        used = set(re.findall(r"(?<![\w.])([A-Za-z_]\w*)", code_lines))
        bound: set[str] = set()
        for match in re.finditer(r"^\s*import\s+(.+)$", stripped, re.M):
            for part in match.group(1).split(","):
                words = part.split()
                if words:
                    bound.add(words[-1] if "as" in words else words[0].split(".")[0])
        star: set[str] = set()
        for match in re.finditer(r"^\s*from\s+([\w.]+)\s+import\s+\(?([^)\n]+)", stripped, re.M):
            for part in match.group(2).split(","):
                words = part.split()
                if words == ["*"]:
                    star.add(match.group(1).split(".")[0])
                elif words:
                    bound.add(words[-1])
        bound.update(re.findall(r"^\s*([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*=(?!=)", stripped, re.M))
        bound.update(re.findall(r"^\s*(?:def|class)\s+([A-Za-z_]\w*)", stripped, re.M))
        return used, bound, star
    visitor = _Names()
    visitor.visit(tree)
    return visitor.used, visitor.bound, visitor.star_modules


def prebound_names(fmt: str) -> frozenset[str]:
    """What the format's sandbox setup already defines (its front-end's ``RESERVED_NAMES``)."""
    try:
        module = importlib.import_module(FRONT_ENDS[fmt])
    except ImportError:
        return frozenset()
    return frozenset(getattr(module, "RESERVED_NAMES", ()))


def _fix_imports(code: str, fmt: str, pre_bound: set[str], fixes: list[str]) -> str:
    table = KNOWN_IMPORTS[fmt]
    pre_bound = pre_bound | prebound_names(fmt)
    used, bound, star = _names_in(code)
    missing = [name for name in table if name in used and name not in bound and name not in pre_bound]
    missing = [name for name in missing if table[name][0].split(".")[0] not in star]
    if "EncType" in missing and "PBEnc" in used and "CardEnc" not in used:
        table = {**table, "EncType": ("pysat.pb", "from pysat.pb import EncType")}
    if not missing:
        return code
    by_module: dict[str, list[str]] = {}
    plain: list[str] = []
    for name in missing:
        module, line = table[name]
        if line.startswith("from "):
            source_module = line.split()[1]
            by_module.setdefault(source_module, []).append(name)
        else:
            plain.append(line)
        fix = FIX_IMPORT_PREFIX + module
        if fix not in fixes:
            fixes.append(fix)
    new_lines = plain + [f"from {module} import {', '.join(names)}" for module, names in by_module.items()]
    lines = code.split("\n")
    insert_at = 0
    for i, line in enumerate(lines):
        if re.match(r"^\s*from\s+__future__\s+import\b", line):
            insert_at = i + 1
    lines[insert_at:insert_at] = new_lines
    return "\n".join(lines)
