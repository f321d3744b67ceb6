"""SymPy format: a Python program defining a Boolean expression with SymPy, run only in the sandbox.

The convention (what the program sees and what it must define) is :data:`CONVENTION`, written so
the prompts can show it as is; :data:`SKELETON` is a minimal program in that convention.

Conversion: inside the sandbox the expression is serialised to JSON as a table of nodes (symbol
names, constants, connectives; shared sub-expressions once); the caller rebuilds
:mod:`autonesy.tools.formats.expr` trees from it and Tseitin-encodes them (SymPy's ``to_cnf`` is
exponential on XOR-like formulas). Nothing the program produced is sympified or evaluated here.
Symbols are matched to task variables by name; any other symbol is an ``unknown_variable`` error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autonesy.tools.cnf import CNF
from autonesy.tools.formats._program import check_names, limits_from, names_preview, run_format_program
from autonesy.tools.formats._program import warm_up as _warm_up
from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.expr import Const, Expr, Op, Var
from autonesy.tools.formats.tseitin import tseitin
from autonesy.tools.sandbox import SandboxLimits

FORMAT = "sympy"

CONVENTION = """\
Write a Python program that defines the constraint as a SymPy Boolean expression. It runs in a
sandbox, where these names are already defined (do not import, create or rename them):
- sp: the sympy module (import sympy as sp);
- every task variable, as a SymPy symbol of the same name (a = sp.Symbol("a"));
  VARS: a dict from variable name to symbol;
- And, Or, Not, Implies, Equivalent, Xor, ITE, true and false from sympy; itertools and math.
Define `formula` (one Boolean expression) or `constraints` (a list of Boolean expressions, all of
which must hold). Build expressions with those functions or with & (and), | (or), ~ (not),
>> (implies), ^ (xor); never Python's and/or/not, and no symbols other than the task variables.
The program must not read or write files, use the network, start processes or call sys.exit;
printing is allowed but ignored."""

SKELETON = """\
formula = And(
    Or(a, b, c), Not(a & b), Not(a & c), Not(b & c),  # exactly one of a, b, c
    Implies(a, d),                                     # a implies d
)
"""

RESERVED_NAMES = frozenset(
    {
        "sp",
        "VARS",
        "And",
        "Or",
        "Not",
        "Implies",
        "Equivalent",
        "Xor",
        "ITE",
        "true",
        "false",
        "itertools",
        "math",
        "formula",
        "constraints",
        "submit",
    }
)

PRELOAD = ("sympy", "sympy.logic.boolalg")

SETUP = """
import itertools, math
import sympy as sp
from sympy import And, Or, Not, Implies, Equivalent, Xor, ITE, true, false

VARS = {_name: sp.Symbol(_name) for _name in __task_names__}
globals().update(VARS)
del __task_names__
"""

COLLECT = """
def collect(ns, submitted):
    from sympy import Symbol
    from sympy.core.basic import Basic
    from sympy.logic import boolalg as B

    MAX_NODES = {max_nodes}
    if "formula" in ns:
        roots, where = [ns["formula"]], "`formula`"
    elif "constraints" in ns or submitted is not NOTHING:
        obj, where = (ns["constraints"], "`constraints`") if "constraints" in ns else (submitted, "the submitted value")
        if isinstance(obj, (list, tuple)):
            roots, todo = [], list(reversed(obj))
            while todo:  # nested lists are flattened
                item = todo.pop()
                if isinstance(item, (list, tuple)):
                    todo.extend(reversed(item))
                else:
                    roots.append(item)
        elif isinstance(obj, (Basic, bool)):
            roots = [obj]
        else:
            raise ProgramError("type", f"{{where}} is a {{type(obj).__name__}}; expected a list of SymPy Boolean "
                               "expressions")
    else:
        raise ProgramError("missing_definition", "the program must define `formula` (a SymPy Boolean expression) "
                           "or `constraints` (a list of them)")
    OPS = [(B.And, "and"), (B.Or, "or"), (B.Not, "not"), (B.Implies, "implies"), (B.Equivalent, "iff"),
           (B.Xor, "xor"), (B.ITE, "ite"), (B.Nand, "nand"), (B.Nor, "nor"), (B.Xnor, "xnor"),
           (B.Exclusive, "exclusive")]

    def classify(e):
        if isinstance(e, bool):
            return ["const", e]
        if isinstance(e, B.BooleanTrue):
            return ["const", True]
        if isinstance(e, B.BooleanFalse):
            return ["const", False]
        if isinstance(e, Symbol):
            return ["var", e.name]
        for cls, op in OPS:
            if isinstance(e, cls):
                return op
        shown = str(e)[:80]
        if isinstance(e, Basic):
            raise ProgramError("type", f"{{shown}} (a SymPy {{type(e).__name__}}) is not a Boolean connective over "
                               "the task symbols; use And, Or, Not, Implies, Equivalent, Xor, ITE")
        raise ProgramError("type", f"{{shown}} (a {{type(e).__name__}}) in {{where}} is not a SymPy Boolean expression")

    nodes, memo, out_roots = [], {{}}, []

    def key(e):
        return ("py", e) if isinstance(e, bool) else ("sym", e)

    for root in roots:
        stack = [(root, False)]
        while stack:
            e, expanded = stack.pop()
            kind = classify(e)
            k = key(e)
            if k in memo:
                continue
            if isinstance(kind, list):
                memo[k] = len(nodes)
                nodes.append(kind)
            elif not expanded:
                stack.append((e, True))
                stack.extend((a, False) for a in reversed(e.args))
            else:
                memo[k] = len(nodes)
                nodes.append([kind, [memo[key(a)] for a in e.args]])
            if len(nodes) > MAX_NODES:
                raise ProgramError("too_large", f"the formula has more than {{MAX_NODES}} distinct sub-expressions")
        out_roots.append(memo[key(root)])
    return {{"nodes": nodes, "roots": out_roots}}
"""


def warm_up() -> None:
    """Start this format's sandbox ahead of need, so the first check skips the import time."""
    _warm_up(PRELOAD)


def parse(
    source: str,
    names: Sequence[str],
    *,
    max_nodes: int = 500_000,
    max_depth: int = 200,
    max_tree_size: int = 2_000_000,
    limits: SandboxLimits | None = None,
    **limit_overrides: Any,
) -> CNF:
    """Run a SymPy program in the sandbox; the Tseitin CNF of its formula (task vars 1..N, aux > N).

    Raises :class:`FormatError` for faults of the program and ``SandboxUnavailable`` (from
    ``_program``) when the sandbox itself cannot run; ``ValueError`` for unusable task names.
    """
    names = check_names(names, RESERVED_NAMES, FORMAT)
    data = run_format_program(
        source,
        names,
        setup=SETUP,
        collect=COLLECT.format(max_nodes=max_nodes),
        preload=PRELOAD,
        inputs={"__task_names__": names},
        limits=limits_from(limits, limit_overrides),
    )
    exprs = build_exprs(data, names, max_nodes=max_nodes, max_depth=max_depth, max_tree_size=max_tree_size)
    return tseitin(exprs, len(names))


_ARITY = {"not": (1, 1), "implies": (2, 2), "ite": (3, 3)}
_OPS = {"and", "or", "not", "implies", "iff", "xor", "ite", "nand", "nor", "xnor", "exclusive"}


def build_exprs(
    data: Any, names: Sequence[str], *, max_nodes: int = 500_000, max_depth: int = 200, max_tree_size: int = 2_000_000
) -> list[Expr]:
    """Expression trees from the sandbox's node table (untrusted data: every field is checked)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list) or not isinstance(data.get("roots"), list):
        raise FormatError("type", "the SymPy conversion did not return a node table")
    nodes, roots = data["nodes"], data["roots"]
    if len(nodes) > max_nodes:
        raise FormatError("too_large", f"the formula has more than {max_nodes} distinct sub-expressions")
    index = {name: i for i, name in enumerate(names, start=1)}
    built: list[Expr] = []
    depth: list[int] = []
    size: list[int] = []
    unknown: list[str] = []
    for number, node in enumerate(nodes):
        if not isinstance(node, list) or len(node) != 2:
            raise FormatError("type", "malformed node in the SymPy conversion")
        tag, value = node
        if tag == "var":
            if not isinstance(value, str):
                raise FormatError("type", "malformed symbol in the SymPy conversion")
            if value not in index:
                if value not in unknown:
                    unknown.append(value)
                built.append(Const(False))  # placeholder; reported below
            else:
                built.append(Var(index[value]))
            depth.append(0)
            size.append(1)
            continue
        if tag == "const":
            if type(value) is not bool:
                raise FormatError("type", "malformed constant in the SymPy conversion")
            built.append(Const(value))
            depth.append(0)
            size.append(1)
            continue
        if (
            tag not in _OPS
            or not isinstance(value, list)
            or not value
            or not all(type(child) is int and 0 <= child < number for child in value)
        ):
            raise FormatError("type", f"malformed connective {str(tag)[:20]!r} in the SymPy conversion")
        low, high = _ARITY.get(tag, (1, None))
        if len(value) < low or (high is not None and len(value) > high):
            raise FormatError("type", f"{tag} with {len(value)} operands")
        written = 1 + sum(size[child] for child in value)
        if tag == "exclusive":  # expands to one clause per pair: count the pairs before expanding
            written = 1 + 3 * (len(value) * (len(value) - 1) // 2) + (len(value) - 1) * (written - 1)
            if written > max_tree_size:
                raise FormatError(
                    "too_large",
                    f"Exclusive of {len(value)} arguments expands to more than "
                    f"{max_tree_size} nodes (one per pair); split it or state it with fewer arguments",
                )
        args = [built[child] for child in value]
        depth.append(1 + max(depth[child] for child in value))
        size.append(min(written, max_tree_size + 1))
        if depth[-1] > max_depth:
            raise FormatError(
                "too_large",
                f"the formula is nested more than {max_depth} levels deep; "
                "combine long chains with And/Or/Xor of many arguments instead",
            )
        built.append(_connective(tag, args))
    if unknown:
        shown = ", ".join(unknown[:10]) + (", ..." if len(unknown) > 10 else "")
        raise FormatError(
            "unknown_variable",
            f"the formula uses symbols that are not task variables: {shown}. "
            f"Use only the task variables: {names_preview(list(names))}",
        )
    out = []
    total = 0
    for root in roots:
        if type(root) is not int or not 0 <= root < len(built):
            raise FormatError("type", "malformed root in the SymPy conversion")
        total += size[root]
        out.append(built[root])
    if total > max_tree_size:
        raise FormatError("too_large", f"the formula, written out, has more than {max_tree_size} nodes")
    return out


def _connective(tag: str, args: list[Expr]) -> Expr:
    if tag == "ite":
        cond, then, other = args
        return Op("and", (Op("implies", (cond, then)), Op("implies", (Op("not", (cond,)), other))))
    if tag in ("nand", "nor", "xnor"):
        return Op("not", (Op({"nand": "and", "nor": "or", "xnor": "xor"}[tag], tuple(args)),))
    if tag == "exclusive":  # at most one argument true
        pairs = [Op("not", (Op("and", (x, y)),)) for i, x in enumerate(args) for y in args[i + 1 :]]
        return Op("and", tuple(pairs)) if pairs else Const(True)
    return Op(tag, tuple(args))
