"""Cheap checks on a formula that parsed: pitfalls that give a valid but almost surely unintended CNF.

``lint(source, fmt, cnf, num_vars)`` returns :class:`LintWarning` s (stable ``name`` for traces, and a
``message`` written for the repair agent). They never reject a formula: the pipeline shows them to
the repair agent once (it may answer [[OK]]) and records them in the trace.

- ``no_clauses``: the formula has no clause, so every assignment satisfies it (an empty constraint
  list, or constraints that all simplified away).
- ``no_task_variable``: clauses exist but none mentions a task variable (e.g. a CPMpy program that
  builds its own ``boolvar`` array, or a PySAT ``IDPool()`` numbering from 1 used for everything).
- ``cpmpy_own_boolvar``: a CPMpy program creates an array of Boolean variables (``boolvar(shape=…)``)
  and never refers to a task variable (by name or through ``VARS``): its array stands in for the
  task variables, but is auxiliary.
- ``pysat_pool_collides``: ``IDPool()`` / ``IDPool(start_from=k)`` with k ≤ N: its ids are task
  variables' indices, so "auxiliaries" silently constrain task variables.
- ``pysat_native_encoding``: ``EncType.native`` gives no clauses (it is for solvers with native
  cardinality constraints), so the cardinality constraint is dropped.
- ``sympy_python_operator``: Python's ``not`` / ``and`` / ``or`` on SymPy expressions evaluates
  truthiness and yields a constant or one operand, not a logical connective.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from autonesy.tools.cnf import CNF
from autonesy.tools.pyast import parse_python

SYMPY_CONNECTIVES = frozenset({"And", "Or", "Not", "Implies", "Equivalent", "Xor", "ITE"})

# Words each format's checks look for: a program whose text has none of them cannot trip a check, so it is
# not parsed again (most answers; parsing a 160 KB program costs more than converting it).
_TRIGGERS = {
    "cpmpy": re.compile(r"boolvar"),
    "pysat": re.compile(r"IDPool|native"),
    "sympy": re.compile(r"\b(?:not|and|or)\b"),
}


@dataclass(frozen=True)
class LintWarning:
    """A check on a parsed formula suggesting it may not say what was meant (shown to the repair agent once)."""

    name: str
    message: str

    def __str__(self) -> str:
        return f"[{self.name}] {self.message}"


def lint(source: str, fmt: str, cnf: CNF, names: Sequence[str]) -> list[LintWarning]:
    """Warnings about ``cnf`` (parsed from ``source`` in ``fmt``) over the task variables ``names``."""
    n = len(names)
    found: list[LintWarning] = []
    if not cnf.clauses:
        found.append(
            LintWarning(
                "no_clauses",
                "The formula has no clauses, so every assignment satisfies it. "
                "Check that the constraints are actually collected into the formula.",
            )
        )
    elif not any(abs(lit) <= n for clause in cnf.clauses for lit in clause):
        found.append(
            LintWarning(
                "no_task_variable",
                "No clause mentions a task variable: the formula only "
                "constrains auxiliary variables, so it does not restrict the task variables at all. "
                "Use the task variables by their names.",
            )
        )
    if fmt in _TRIGGERS and _may_trigger(source, fmt):
        try:
            tree = parse_python(source)
        except (SyntaxError, ValueError):
            return found
        found.extend(_python_checks(tree, fmt, n, set(names)))
    return found


def _may_trigger(source: str, fmt: str) -> bool:
    """Whether the program's text holds a word a check of ``fmt`` looks for. Python reads identifiers in
    NFKC form (``ｂoolvar`` is ``boolvar``), so a program that is not ASCII is searched in that form."""
    text = source if source.isascii() else unicodedata.normalize("NFKC", source)
    return _TRIGGERS[fmt].search(text) is not None


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _python_checks(tree: ast.AST, fmt: str, n: int, names: set[str]) -> list[LintWarning]:
    found: dict[str, LintWarning] = {}
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    refers_to_task = bool(used & (names | {"VARS"}))
    for node in ast.walk(tree):
        if fmt == "cpmpy" and not refers_to_task and isinstance(node, ast.Call) and _callee(node) == "boolvar":
            shaped = node.args or any(k.arg == "shape" for k in node.keywords)
            if shaped:
                found.setdefault(
                    "cpmpy_own_boolvar",
                    LintWarning(
                        "cpmpy_own_boolvar",
                        "The program creates its own array of Boolean variables with boolvar(shape=…). "
                        "Those are auxiliary variables, not the task variables: the task variables are already "
                        "defined, each under its own name (and in VARS).",
                    ),
                )
        elif fmt == "pysat" and isinstance(node, ast.Call) and _callee(node) == "IDPool":
            start = next((k.value for k in node.keywords if k.arg == "start_from"), node.args[0] if node.args else None)
            first = (
                1
                if start is None
                else (start.value if isinstance(start, ast.Constant) and isinstance(start.value, int) else None)
            )
            if first is not None and first <= n:
                found.setdefault(
                    "pysat_pool_collides",
                    LintWarning(
                        "pysat_pool_collides",
                        f"IDPool({'' if start is None else f'start_from={first}'}) hands out ids from "
                        f"{first}, but 1..{n} are the task variables: its 'auxiliary' variables are task variables. "
                        "Use the predefined vpool (it starts at N + 1) or IDPool(start_from=N + 1).",
                    ),
                )
        elif (
            fmt == "pysat"
            and isinstance(node, ast.Attribute)
            and node.attr == "native"
            and isinstance(node.value, ast.Name)
            and node.value.id in ("EncType", "PBEncType")
        ):
            found.setdefault(
                "pysat_native_encoding",
                LintWarning(
                    "pysat_native_encoding",
                    "EncType.native produces no clauses (it is meant for solvers with native "
                    "cardinality constraints), so that constraint is missing from the formula. Use another encoding, "
                    "e.g. EncType.seqcounter or EncType.totalizer.",
                ),
            )
        elif fmt == "sympy" and _python_connective_on_sympy(node, names):
            found.setdefault(
                "sympy_python_operator",
                LintWarning(
                    "sympy_python_operator",
                    "Python's not/and/or on SymPy expressions does not build a formula: `not x` "
                    "is a constant (False) and `x and y` is just one operand. Use ~x, x & y, x | y or Not/And/Or.",
                ),
            )
    return list(found.values())


def _symbolic(node: ast.AST, names: set[str]) -> bool:
    """An expression that is (almost surely) a SymPy Boolean: a task variable or a connective."""
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Call):
        return _callee(node) in SYMPY_CONNECTIVES
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _symbolic(node.operand, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor, ast.RShift)):
        return _symbolic(node.left, names) or _symbolic(node.right, names)
    return False


def _python_connective_on_sympy(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _symbolic(node.operand, names)
    if isinstance(node, ast.BoolOp):
        return any(_symbolic(value, names) for value in node.values)
    return False
