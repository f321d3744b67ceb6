"""Formulas written as answer text in each output format: the inverse of the front-ends.

- :func:`render_cnf` writes a :class:`CNF` (task variables 1..N, auxiliaries above) in any format;
  NAT and SymPy have no auxiliary variables, so there the CNF must have none.
- :func:`render_expression` writes an expression tree (:mod:`.expr`) over the task variables: NAT,
  SymPy and CPMpy structurally (one top-level conjunct per constraint, long ones broken over
  indented lines), DIMACS and PySAT through its Tseitin CNF.

The text is the content of the ``<cnf>`` block, in the convention the front-end's ``CONVENTION``
states, so that ``convert`` on it gives back a formula with the same models on the task variables.
Task variables appear by name wherever the format allows (all but DIMACS, which gets one comment
line per variable). Per format:

- ``dimacs``: ``c var <i> <name>`` comments, the header ``p cnf V C``, one clause per line.
- ``nat``: one constraint per line; a clause is written ``a OR b``, ``NOT (a AND b)`` or
  ``a AND b IMPLIES c OR d`` (each one clause to the front-end's Tseitin step, so no auxiliaries);
  sub-formulas other than literals are parenthesised.
- ``pysat``: ``clauses = [[a, -b], …]`` over the pre-bound task variable names; auxiliaries are
  drawn from ``vpool`` in order (``aux = [vpool.id() for _ in range(K)]``, so ``aux[i]`` is N+1+i).
- ``cpmpy``: auxiliaries ``aux = cp.boolvar(shape=K, name="aux")``; ``constraints = [...]`` with a
  clause as ``cp.any([a, ~b])`` (a unit clause as its literal); expressions with ``cp.all``,
  ``cp.any``, ``cp.Xor``, ``.implies`` and ``==``.
- ``sympy``: ``constraints = [...]``; a clause as ``a | ~b``, ``~(a & b)`` or
  ``Implies(a & b, c | d)``; expressions with ``And``, ``Or``, ``Not``, ``Xor``, ``Implies``,
  ``Equivalent``.

A CNF holding an empty clause (which no format writes) gets the unit clauses ``x`` and ``NOT x`` on
the first task variable instead, and a CNF without clauses is ``TRUE`` in NAT (an empty block is no
formula). An expression that simplifies to false is ``FALSE`` in NAT, ``false`` in SymPy, and
``x AND NOT x`` elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from autonesy.tools.cnf import CNF
from autonesy.tools.formats.expr import Const, Expr, Op, Var
from autonesy.tools.formats.tseitin import tseitin
from autonesy.tools.options import FORMATS

WIDTH = 100  # lines longer than this are broken (NAT, SymPy, CPMpy expressions)
INDENT = "    "

__all__ = ["render_cnf", "render_expression", "simplify", "WIDTH"]


# --------------------------------------------------------------------------------------------------
# CNF
# --------------------------------------------------------------------------------------------------


def render_cnf(cnf: CNF, names: Sequence[str], fmt: str) -> str:
    """``cnf`` as the text of a ``<cnf>`` block in ``fmt``.

    ``ValueError`` for an unknown format, names that do not match the CNF's task variables, or a
    CNF with auxiliary variables in ``nat``/``sympy`` (write an auxiliary-free expression with
    :func:`render_expression` instead).
    """
    names = _check_names(names, cnf.num_task_vars)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    clauses = _without_empty_clause(cnf.clauses)
    if fmt in ("nat", "sympy"):
        used = max((abs(lit) for clause in cnf.clauses for lit in clause), default=0)
        if used > cnf.num_task_vars:
            raise ValueError(
                f"the CNF uses auxiliary variables (up to {used}, above the {cnf.num_task_vars} task variables); "
                f"{fmt} has none: write an auxiliary-free formula with render_expression"
            )
    if fmt == "dimacs":
        return _dimacs(cnf, names, clauses)
    if fmt == "nat":
        return _nat_cnf(names, clauses)
    if fmt == "sympy":
        return _sympy_cnf(names, clauses)
    if fmt == "pysat":
        return _pysat_cnf(cnf, names, clauses)
    return _cpmpy_cnf(cnf, names, clauses)


def _check_names(names: Sequence[str], n: int) -> list[str]:
    names = list(names)
    if len(names) != n:
        raise ValueError(f"{len(names)} names for {n} task variables")
    if not names:
        raise ValueError("no task variables")
    return names


def _without_empty_clause(clauses: Iterable[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The clauses, with an empty clause (no format writes one) replaced by ``1`` and ``-1``."""
    clauses = list(clauses)
    if any(not clause for clause in clauses):
        return [(1,), (-1,)]
    return clauses


def _plural(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _free_name(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base_``, ``base__``, … — the first not among ``taken``."""
    taken = set(taken)
    name = base
    while name in taken:
        name += "_"
    return name


def _dimacs(cnf: CNF, names: list[str], clauses: list[tuple[int, ...]]) -> str:
    n = cnf.num_task_vars
    lines = [f"c var {i} {name}" for i, name in enumerate(names, start=1)]
    if cnf.num_vars > n:
        lines.append(
            f"c variable {n + 1} is auxiliary"
            if cnf.num_vars == n + 1
            else f"c variables {n + 1}..{cnf.num_vars} are auxiliary"
        )
    lines.append(f"p cnf {cnf.num_vars} {len(clauses)}")
    lines += [" ".join(map(str, clause)) + " 0" for clause in clauses]
    return "\n".join(lines) + "\n"


def _clause_shape(clause: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """(variables negated in the clause, variables positive), each in clause order."""
    return [-lit for lit in clause if lit < 0], [lit for lit in clause if lit > 0]


def _nat_cnf(names: list[str], clauses: list[tuple[int, ...]]) -> str:
    def name(v: int) -> str:
        return names[v - 1]

    lines = []
    for clause in clauses:
        negative, positive = _clause_shape(clause)
        if not negative:
            lines.append(" OR ".join(map(name, positive)))
        elif not positive:
            lines.append(
                f"NOT {name(negative[0])}" if len(negative) == 1 else "NOT (" + " AND ".join(map(name, negative)) + ")"
            )
        else:
            lines.append(" AND ".join(map(name, negative)) + " IMPLIES " + " OR ".join(map(name, positive)))
    return "\n".join(lines or ["TRUE"]) + "\n"  # no clauses: an empty block would be no formula at all


def _sympy_cnf(names: list[str], clauses: list[tuple[int, ...]]) -> str:
    def name(v: int) -> str:
        return names[v - 1]

    items = []
    for clause in clauses:
        negative, positive = _clause_shape(clause)
        if not negative:
            items.append(" | ".join(map(name, positive)))
        elif not positive:
            items.append(
                f"~{name(negative[0])}" if len(negative) == 1 else "~(" + " & ".join(map(name, negative)) + ")"
            )
        else:
            items.append(f"Implies({' & '.join(map(name, negative))}, {' | '.join(map(name, positive))})")
    return _python_list("constraints", items)


def _python_list(variable: str, items: list[str], head: Sequence[str] = ()) -> str:
    lines = list(head) + [f"{variable} = ["]
    for item in items:
        lines.append(INDENT + item + ",")  # continuation lines of an item carry their own indentation
    lines.append("]")
    return "\n".join(lines) + "\n"


def _pysat_cnf(cnf: CNF, names: list[str], clauses: list[tuple[int, ...]]) -> str:
    from autonesy.tools.formats.pysat_program import RESERVED_NAMES

    n = cnf.num_task_vars
    aux = _free_name("aux", [*names, *RESERVED_NAMES])
    head = []
    if cnf.num_vars > n:
        k = cnf.num_vars - n
        loop = f"range({k})" if "range" not in names else f"itertools.repeat(None, {k})"
        head = [
            f"# {_plural(k, 'auxiliary variable')}, drawn from vpool: {aux}[i] is variable {n + 1} + i",
            f"{aux} = [vpool.id() for _ in {loop}]",
        ]

    def literal(lit: int) -> str:
        v = abs(lit)
        text = names[v - 1] if v <= n else f"{aux}[{v - n - 1}]"
        return text if lit > 0 else "-" + text

    items = ["[" + ", ".join(map(literal, clause)) + "]" for clause in clauses]
    return _python_list("clauses", items, head)


def _cpmpy_cnf(cnf: CNF, names: list[str], clauses: list[tuple[int, ...]]) -> str:
    from autonesy.tools.formats.cpmpy_program import RESERVED_NAMES

    n = cnf.num_task_vars
    aux = _free_name("aux", [*names, *RESERVED_NAMES])
    head = []
    if cnf.num_vars > n:
        k = cnf.num_vars - n
        shape = k if k > 1 else "(1,)"  # shape=1 would give a single variable, not an array
        head = [f"# {_plural(k, 'auxiliary variable')}", f'{aux} = cp.boolvar(shape={shape}, name="{aux}")']

    def literal(lit: int) -> str:
        v = abs(lit)
        text = names[v - 1] if v <= n else f"{aux}[{v - n - 1}]"
        return text if lit > 0 else "~" + text

    items = [
        literal(clause[0]) if len(clause) == 1 else "cp.any([" + ", ".join(map(literal, clause)) + "])"
        for clause in clauses
    ]
    return _python_list("constraints", items, head)


# --------------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------------


def render_expression(expr: Expr | Sequence[Expr], names: Sequence[str], fmt: str) -> str:
    """An expression (or a list of them, all of which must hold) as the text of a ``<cnf>`` block.

    The expression is simplified first (constants folded, double negations and one-operand
    connectives removed, n-ary equivalences written as pairwise ones); each top-level conjunct
    becomes one constraint. DIMACS and PySAT get the Tseitin CNF of the expression.
    """
    exprs = [expr] if isinstance(expr, (Var, Const, Op)) else list(expr)
    names = list(names)
    if not names:
        raise ValueError("no task variables")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    n = len(names)
    whole = simplify(exprs[0] if len(exprs) == 1 else Op("and", tuple(exprs)) if exprs else Const(True), n)
    falsum = Op("and", (Var(1), Op("not", (Var(1),))))  # for formats without a constant
    roots: list[Expr]
    if isinstance(whole, Const):
        roots = [] if whole.value else [falsum]
    else:
        roots = _conjuncts(whole)
    if fmt in ("dimacs", "pysat"):
        return render_cnf(tseitin(roots, n), names, fmt)
    printer = _PRINTERS[fmt](names)
    if fmt == "nat":
        if isinstance(whole, Const):
            return ("TRUE" if whole.value else "FALSE") + "\n"
        return "".join(printer.pretty(root, 0) + "\n" for root in roots)
    if fmt == "sympy" and whole == Const(False):
        roots = [whole]
    return _python_list("constraints", [printer.pretty(root, 1) for root in roots])


def _conjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, Op) and expr.op == "and":
        return [c for arg in expr.args for c in _conjuncts(arg)]
    return [expr]


def simplify(expr: Expr, num_task_vars: int, memo: dict[int, tuple[Expr, Expr]] | None = None) -> Expr:
    """An equivalent expression without constants (unless it is one), double negations, one-operand
    connectives or equivalences of more than two operands; nested ``and``/``or`` are flattened.
    ``ValueError`` for a variable outside 1..``num_task_vars``."""
    memo = {} if memo is None else memo
    hit = memo.get(id(expr))
    if hit is not None and hit[0] is expr:  # keyed by id for shared sub-trees; the entry keeps expr alive,
        return hit[1]  # so a temporary's id is never reused for another expression while memo lives
    result = _simplify(expr, num_task_vars, memo)
    memo[id(expr)] = (expr, result)
    return result


def _not(e: Expr) -> Expr:
    if isinstance(e, Const):
        return Const(not e.value)
    if isinstance(e, Op) and e.op == "not":
        return e.args[0]
    return Op("not", (e,))


def _simplify(expr: Expr, n: int, memo: dict[int, tuple[Expr, Expr]]) -> Expr:
    if isinstance(expr, Var):
        if not 1 <= expr.index <= n:
            raise ValueError(f"variable index {expr.index} outside 1..{n}")
        return expr
    if isinstance(expr, Const):
        return expr
    if not isinstance(expr, Op):
        raise TypeError(f"not an expression: {expr!r}")
    args = [simplify(arg, n, memo) for arg in expr.args]
    op = expr.op
    if op == "not":
        return _not(args[0])
    if op in ("and", "or"):
        unit, zero = (True, False) if op == "and" else (False, True)
        flat: list[Expr] = []
        for arg in args:
            parts = arg.args if isinstance(arg, Op) and arg.op == op else (arg,)
            for part in parts:
                if isinstance(part, Const):
                    if part.value == zero:
                        return Const(zero)
                    continue
                flat.append(part)
        if not flat:
            return Const(unit)
        return flat[0] if len(flat) == 1 else Op(op, tuple(flat))
    if op == "xor":
        parity = False
        rest = []
        for arg in args:
            if isinstance(arg, Const):
                parity ^= arg.value
            else:
                rest.append(arg)
        if not rest:
            return Const(parity)
        core = rest[0] if len(rest) == 1 else Op("xor", tuple(rest))
        return _not(core) if parity else core
    if op == "implies":
        a, b = args
        if isinstance(a, Const):
            return b if a.value else Const(True)
        if isinstance(b, Const):
            return Const(True) if b.value else _not(a)
        return Op("implies", (a, b))
    # iff: all operands equal
    if len(args) == 1:
        return Const(True)
    if len(args) > 2:
        return simplify(Op("and", tuple(Op("iff", (args[0], other)) for other in args[1:])), n, memo)
    a, b = args
    if isinstance(a, Const):
        a, b = b, a
    if isinstance(b, Const):
        return a if b.value else _not(a)
    return Op("iff", (a, b))


class _Printer:
    """Inline and line-broken text of a simplified expression (no constants inside)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)

    def name(self, e: Var) -> str:
        return self.names[e.index - 1]

    def inline(self, e: Expr) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def pretty(self, e: Expr, level: int) -> str:
        """``e`` on one line if it fits in WIDTH at indentation ``level``, else broken over lines whose
        continuation lines are indented for ``level``."""
        text = self.inline(e)
        if len(INDENT) * level + len(text) <= WIDTH or not isinstance(e, Op):
            return text
        return self.broken(e, level)

    def broken(self, e: Op, level: int) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


def _is_literal(e: Expr) -> bool:
    return isinstance(e, (Var, Const)) or (isinstance(e, Op) and e.op == "not" and isinstance(e.args[0], Var))


class _NatPrinter(_Printer):
    KEYWORDS = {"and": "AND", "or": "OR", "xor": "XOR", "implies": "IMPLIES", "iff": "IFF"}

    def inline(self, e: Expr) -> str:
        if isinstance(e, Var):
            return self.name(e)
        if isinstance(e, Const):
            return "TRUE" if e.value else "FALSE"
        if e.op == "not":
            return "NOT " + self.operand(e.args[0])
        return f" {self.KEYWORDS[e.op]} ".join(self.operand(arg) for arg in e.args)

    def operand(self, e: Expr) -> str:
        return self.inline(e) if _is_literal(e) else f"({self.inline(e)})"

    def broken(self, e: Op, level: int) -> str:
        pad = INDENT * level
        if e.op == "not":
            return f"NOT (\n{pad}{INDENT}{self.pretty(e.args[0], level + 1)}\n{pad})"
        parts = []
        for arg in e.args:
            if _is_literal(arg):
                parts.append(self.inline(arg))
                continue
            inner = self.pretty(arg, level + 1)
            if "\n" in inner:  # a parenthesis spanning lines: NAT ignores line breaks inside it
                parts.append(f"(\n{pad}{INDENT}{inner}\n{pad})")
            else:
                parts.append(f"({inner})")
        # Each line but the last ends with the operator, so the constraint continues on the next.
        return f" {self.KEYWORDS[e.op]}\n{pad}".join(parts)


class _SympyPrinter(_Printer):
    FUNCTIONS = {"and": "And", "or": "Or", "xor": "Xor", "implies": "Implies", "iff": "Equivalent", "not": "Not"}

    def inline(self, e: Expr) -> str:
        if isinstance(e, Var):
            return self.name(e)
        if isinstance(e, Const):
            return "true" if e.value else "false"
        if e.op == "not" and isinstance(e.args[0], Var):
            return "~" + self.name(e.args[0])
        return f"{self.FUNCTIONS[e.op]}(" + ", ".join(self.inline(arg) for arg in e.args) + ")"

    def broken(self, e: Op, level: int) -> str:
        pad = INDENT * level
        inner = "".join(f"{pad}{INDENT}{self.pretty(arg, level + 1)},\n" for arg in e.args)
        return f"{self.FUNCTIONS[e.op]}(\n{inner}{pad})"


class _CpmpyPrinter(_Printer):
    LISTS = {"and": "cp.all", "or": "cp.any", "xor": "cp.Xor"}

    def inline(self, e: Expr) -> str:
        if isinstance(e, Var):
            return self.name(e)
        if isinstance(e, Const):
            return "True" if e.value else "False"
        if e.op == "not":
            return "~" + self.operand(e.args[0])
        if e.op in self.LISTS:
            return f"{self.LISTS[e.op]}([" + ", ".join(self.inline(arg) for arg in e.args) + "])"
        left, right = (self.operand(arg) for arg in e.args)
        return f"{left}.implies({self.inline(e.args[1])})" if e.op == "implies" else f"{left} == {right}"

    def operand(self, e: Expr) -> str:
        """``e`` where a method call or comparison applies to it: bare if a name or call, else in parentheses."""
        if isinstance(e, Var) or (isinstance(e, Op) and e.op in self.LISTS):
            return self.inline(e)
        return f"({self.inline(e)})"

    def broken(self, e: Op, level: int) -> str:
        pad = INDENT * level
        if e.op in self.LISTS:
            inner = "".join(f"{pad}{INDENT}{self.pretty(arg, level + 1)},\n" for arg in e.args)
            return f"{self.LISTS[e.op]}([\n{inner}{pad}])"
        if e.op == "not":
            return f"~(\n{pad}{INDENT}{self.pretty(e.args[0], level + 1)}\n{pad})"
        left, right = (f"(\n{pad}{INDENT}{self.pretty(arg, level + 1)}\n{pad})" for arg in e.args)
        return f"{left}.implies{right}" if e.op == "implies" else f"{left} == {right}"


_PRINTERS: dict[str, Callable[[Sequence[str]], _Printer]] = {
    "nat": _NatPrinter,
    "sympy": _SympyPrinter,
    "cpmpy": _CpmpyPrinter,
}
