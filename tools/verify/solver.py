"""The composition of an instruction's constraints, as data, decided with Z3 (docs/architecture.md §11).

**The composition language.** The formulation agent answers with a Boolean formula over one
identifier per constraint (``C1``, ``C2``, …). It is parsed here, never run:

- the default notation is the NAT notation of the formalization pipeline (the same lark grammar,
  :func:`autonesy.tools.formats.nat.parse_expressions`): one requirement per line, lines joined by
  AND; ``NOT AND XOR OR IMPLIES IFF`` in any case or as ``¬ ∧ ⊕ ∨ ⇒ ⇔`` (also ``~ & ^ | -> <->``);
  precedence NOT > AND > XOR > OR > IMPLIES > IFF; IMPLIES groups to the right;
  e.g. ``C1 AND (C2 OR NOT C3) IMPLIES C4``;
- SMT-LIB is accepted too, as data: an allow-list read here (not by Z3's SMT-LIB front end, which
  would follow ``(include "FILE")``): ``(declare-const Ci Bool)`` / ``(declare-fun Ci () Bool)`` for
  the constraint identifiers, ``(assert TERM)`` with ``true false not and or => = xor distinct ite``
  over them, and ``(check-sat)``. Every other command, symbol, string, numeral or annotation is
  refused with a clear error; size and nesting are bounded.

**Deciding.** :func:`decide` puts the per-constraint results (``True``, ``False``, or ``None`` when a
constraint could not be checked) into Z3 as assumptions next to the formula: unsat with the
assumptions → ``unsat``; the negated formula unsat with them → ``sat``; otherwise ``unknown``.

**Explaining.** For an ``unsat`` verdict the explanation has
- ``core``: a minimal set of constraint results that already forces the formula false (Z3's unsat
  core over the assumptions, then shrunk by deletion — no result in it can be dropped);
- ``violated``: the constraints blamed by the formula's structure: a requirement that does not hold,
  or (under NOT) a constraint that holds but must not; an implication blames its consequent and
  names its antecedent as a ``condition``; a disjunction blames all its alternatives; when the
  structure blames only constraints that could not be checked, the core's results are blamed;
- ``falsified_parts``: the top-level requirements (conjuncts) that are false, as text;
- ``to_fix``: a cheapest set of constraints whose truth must change for the formula to hold
  (Z3 ``Optimize``, one weighted soft constraint per result; changing a violated constraint is
  cheaper than changing a condition) — what the feedback loop asks for.
- ``core_unique``: whether that core is the only minimal reason (when three requirements fail
  independently, each is a minimal reason on its own and no single one is "the" reason);
- ``alternatives``: false XOR / IFF requirements whose constraints are each enough to change.
For ``sat`` the ``core`` is a minimal set of results that makes the formula true whatever the others.

:func:`contradiction` finds the requirements of a formula that no response can meet (before any
response is checked).
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.expr import Const, Expr, Op, Var, conj
from autonesy.tools.formats.nat import parse_expressions
from autonesy.tools.verify.results import Alternative, Assignment, Correction, SolverDecision

ID_RE = re.compile(r"^C[1-9][0-9]*$")
VERDICTS = ("sat", "unsat", "unknown")
_PRECEDENCE = {"iff": 1, "implies": 2, "or": 3, "xor": 4, "and": 5, "not": 6}
_KEYWORD = {"iff": "IFF", "implies": "IMPLIES", "or": "OR", "xor": "XOR", "and": "AND"}


_Z3_LOCK = threading.RLock()


def _serialised(function):
    """Z3's default context is shared and not thread-safe (concurrent use fails with 'unreachable'):
    every entry point that touches Z3 holds one process-wide lock."""

    @functools.wraps(function)
    def locked(*args, **kwargs):
        with _Z3_LOCK:
            return function(*args, **kwargs)

    return locked


class CompositionError(ValueError):
    """The formula cannot be read; the message is written for the LLM that wrote it."""


@dataclass(frozen=True)
class Composition:
    """The formula: its source text, the constraint ids (``Var(i)`` is ``ids[i-1]``) and its
    top-level requirements (the conjuncts; their conjunction is the formula)."""

    source: str
    ids: tuple[str, ...]
    parts: tuple[Expr, ...]

    @property
    def expr(self) -> Expr:
        """The whole composition as one expression (the conjunction of its parts)."""
        return conj(*self.parts)

    def render(self, expr: Expr | None = None) -> str:
        """An expression (the whole composition by default) as text over the constraint ids."""
        return render(self.expr if expr is None else expr, self.ids)

    def text(self) -> str:
        """The formula in the NAT notation, one requirement per line."""
        return "\n".join(render(part, self.ids) for part in self.parts)

    def used(self) -> set[str]:
        """The constraint ids the composition mentions."""
        return {self.ids[i - 1] for i in _vars(self.expr)}


def _vars(expr: Expr) -> set[int]:
    if isinstance(expr, Var):
        return {expr.index}
    if isinstance(expr, Op):
        return set().union(*(_vars(arg) for arg in expr.args))
    return set()


def _top_conjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, Op) and expr.op == "and":
        return [part for arg in expr.args for part in _top_conjuncts(arg)]
    return [expr]


def check_ids(ids: Sequence[str]) -> tuple[str, ...]:
    """Validate constraint ids (``C1``, ``C2``, …) before they name solver variables."""
    ids = tuple(ids)
    for name in ids:
        if not ID_RE.match(name):
            raise CompositionError(f"constraint identifiers are C1, C2, …; {name!r} is not one")
    if len(set(ids)) != len(ids):
        raise CompositionError("the constraint identifiers are not unique")
    return ids


def parse_composition(source: str, ids: Sequence[str]) -> Composition:
    """Read a formula (NAT notation or SMT-LIB) over the constraint identifiers ``ids``."""
    ids = check_ids(ids)
    text = (source or "").strip()
    if not text:
        raise CompositionError("the formula is empty; write it over " + ", ".join(ids))
    if len(text) > SMTLIB_MAX_CHARS:
        raise CompositionError(f"the formula is longer than {SMTLIB_MAX_CHARS:,} characters")
    if text.startswith("("):
        if re.search(r"\(\s*(assert|declare-|define-|include|eval|echo|exit|reset)", text):
            expr = _parse_smtlib(text, ids)
            return Composition(text, ids, _bounded(_top_conjuncts(expr)))
    try:
        exprs = parse_expressions(text, list(ids))
    except FormatError as error:
        message = str(error).replace("The task's variable names are", "The constraint identifiers are")
        raise CompositionError(f"the formula does not parse: {message}") from None
    if not exprs:
        raise CompositionError("the formula is empty; write it over " + ", ".join(ids))
    parts = [part for expr in exprs for part in _top_conjuncts(expr)]
    return Composition(text, ids, _bounded(parts))


def _bounded(parts: list[Expr]) -> tuple[Expr, ...]:
    """The parts, unless one nests deeper than the recursive readers (render, z3, blame) can go:
    chains such as ``C1 IFF C1 IFF …`` or ``(=> C1 C1 …)`` nest one level per operand."""
    for part in parts:
        stack = [(part, 1)]
        while stack:
            expr, depth = stack.pop()
            if depth > SMTLIB_MAX_DEPTH:
                raise CompositionError(
                    f"the formula is nested more than {SMTLIB_MAX_DEPTH} levels deep (a long "
                    "IFF/IMPLIES chain nests one level per operand); write it as several requirements"
                )
            if isinstance(expr, Op):
                stack.extend((arg, depth + 1) for arg in expr.args)
    return tuple(parts)


SMTLIB_MAX_CHARS = 200_000
SMTLIB_MAX_DEPTH = 200
_SMT_TOKEN = re.compile(r"\s+|;[^\n]*|\(|\)|\"(?:[^\"]|\"\")*\"?|\|[^|]*\|?|[^\s();\"|]+")
_SMT_OPS = {
    "not": (1, 1),
    "and": (1, None),
    "or": (1, None),
    "=>": (2, None),
    "=": (2, None),
    "xor": (2, None),
    "distinct": (2, 2),
    "ite": (3, 3),
}


def _smt_sexprs(text: str) -> list:
    """Top-level S-expressions (nested lists of atoms); strings and quoted symbols are refused."""
    if len(text) > SMTLIB_MAX_CHARS:
        raise CompositionError(f"the SMT-LIB formula is longer than {SMTLIB_MAX_CHARS:,} characters")
    stack: list[list] = [[]]
    for match in _SMT_TOKEN.finditer(text):
        token = match.group()
        if token[0].isspace() or token[0] == ";":
            continue
        if token == "(":
            if len(stack) > SMTLIB_MAX_DEPTH:
                raise CompositionError(f"the SMT-LIB formula is nested more than {SMTLIB_MAX_DEPTH} levels deep")
            stack.append([])
        elif token == ")":
            if len(stack) == 1:
                raise CompositionError("the SMT-LIB formula does not parse: a ')' closes nothing")
            done = stack.pop()
            stack[-1].append(done)
        elif token[0] in '"|':
            raise CompositionError(f"the SMT-LIB formula may not hold strings or quoted symbols ({token[:30]} …)")
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise CompositionError("the SMT-LIB formula does not parse: a '(' is never closed")
    return stack[0]


def _parse_smtlib(text: str, ids: tuple[str, ...]) -> Expr:
    index = {name: i for i, name in enumerate(ids, start=1)}
    assertions = []
    for command in _smt_sexprs(text):
        head = command[0] if isinstance(command, list) and command and isinstance(command[0], str) else None
        if head == "assert" and len(command) == 2:
            assertions.append(_smt_term(command[1], index, ids))
        elif head == "check-sat" and len(command) == 1:
            continue
        elif (head == "declare-const" and command[2:] == ["Bool"]) or (
            head == "declare-fun" and command[2:] == [[], "Bool"]
        ):
            if len(command) < 2 or command[1] not in ids:
                raise CompositionError(
                    f"the SMT-LIB formula declares {str(command[1])[:30]!r}; only {', '.join(ids)} may be used"
                )
        else:
            shown = " ".join(
                str(part) if isinstance(part, str) else "(…)"
                for part in (command if isinstance(command, list) else [command])
            )
            raise CompositionError(
                f"the SMT-LIB formula may only hold (assert …) commands, Bool declarations of "
                f"{', '.join(ids)} and (check-sat), not ({shown[:60]})"
            )
    if not assertions:
        raise CompositionError("the SMT-LIB formula has no (assert …) command")
    return conj(*assertions)


def _smt_term(term: Any, index: Mapping[str, int], ids: Sequence[str], depth: int = 0) -> Expr:
    if isinstance(term, str):
        if term in index:
            return Var(index[term])
        if term in ("true", "false"):
            return Const(term == "true")
        if term[0].isdigit() or term[0] in "#-":
            raise CompositionError(f"the SMT-LIB formula uses a non-Boolean term: {term[:30]}")
        raise CompositionError(
            f"the SMT-LIB formula does not parse: unknown symbol {term[:30]!r}; the constraint "
            f"identifiers are {', '.join(ids)}"
        )
    if not term or not isinstance(term[0], str):
        raise CompositionError("the SMT-LIB formula does not parse: an empty or headless term")
    op, args = term[0], [_smt_term(arg, index, ids, depth + 1) for arg in term[1:]]
    if op not in _SMT_OPS:
        raise CompositionError(f"the SMT-LIB formula uses {op[:30]!r}; use and, or, not, =>, =, xor only")
    low, high = _SMT_OPS[op]
    if len(args) < low or (high is not None and len(args) > high):
        raise CompositionError(f"the SMT-LIB formula does not parse: ({op} …) with {len(args)} arguments")
    if op in ("and", "or"):
        return args[0] if len(args) == 1 else Op(op, tuple(args))
    if op == "not":
        return Op("not", (args[0],))
    if op == "=>":  # right-associative
        result = args[-1]
        for arg in reversed(args[:-1]):
            result = Op("implies", (arg, result))
        return result
    if op == "=":  # chainable
        pairs = [Op("iff", (a, b)) for a, b in zip(args, args[1:])]
        return pairs[0] if len(pairs) == 1 else Op("and", tuple(pairs))
    if op in ("xor", "distinct"):
        return Op("xor", tuple(args))
    c, a, b = args
    return Op("and", (Op("implies", (c, a)), Op("implies", (Op("not", (c,)), b))))


def render(expr: Expr, ids: Sequence[str], parent: int = 0) -> str:
    """The expression in the NAT notation, with parentheses only where precedence needs them."""
    if isinstance(expr, Var):
        return ids[expr.index - 1]
    if isinstance(expr, Const):
        return "TRUE" if expr.value else "FALSE"
    level = _PRECEDENCE[expr.op]
    if expr.op == "not":
        text = "NOT " + render(expr.args[0], ids, level)
    elif expr.op == "implies":  # right-associative: a left operand of the same level needs parentheses
        text = f"{render(expr.args[0], ids, level + 1)} IMPLIES {render(expr.args[1], ids, level)}"
    else:
        text = f" {_KEYWORD[expr.op]} ".join(
            render(arg, ids, level + (1 if expr.op == "iff" else 0)) for arg in expr.args
        )
        if expr.op == "iff" and len(expr.args) > 2:
            text = " AND ".join(f"({render(expr.args[0], ids)} IFF {render(arg, ids)})" for arg in expr.args[1:])
            level = _PRECEDENCE["and"]
    return f"({text})" if level < parent else text


def to_z3(expr: Expr, ids: Sequence[str]) -> Any:
    """An expression as a Z3 formula over one Boolean per constraint id."""
    if isinstance(expr, Var):
        return z3.Bool(ids[expr.index - 1])
    if isinstance(expr, Const):
        return z3.BoolVal(expr.value)
    args = [to_z3(arg, ids) for arg in expr.args]
    if expr.op == "not":
        return z3.Not(args[0])
    if expr.op == "and":
        return z3.And(*args)
    if expr.op == "or":
        return z3.Or(*args)
    if expr.op == "implies":
        return z3.Implies(args[0], args[1])
    if expr.op == "iff":
        return z3.And(*(args[0] == arg for arg in args[1:]))
    result = args[0]
    for arg in args[1:]:
        result = z3.Xor(result, arg)
    return result


def evaluate3(expr: Expr, values: Mapping[int, bool | None]) -> bool | None:
    """Kleene three-valued evaluation (``None`` = unknown)."""
    if isinstance(expr, Var):
        return values.get(expr.index)
    if isinstance(expr, Const):
        return expr.value
    vals = [evaluate3(arg, values) for arg in expr.args]
    if expr.op == "not":
        return None if vals[0] is None else not vals[0]
    if expr.op == "and":
        return False if False in vals else (None if None in vals else True)
    if expr.op == "or":
        return True if True in vals else (None if None in vals else False)
    if expr.op == "implies":
        a, b = vals
        if a is False or b is True:
            return True
        return None if a is None or b is None else False
    if None in vals:
        return None
    if expr.op == "iff":
        return all(v == vals[0] for v in vals)
    return sum(1 for v in vals if v) % 2 == 1


@_serialised
def decide(composition: Composition, values: Mapping[str, bool | None]) -> SolverDecision:
    """The verdict of the formula under the per-constraint results, with its explanation."""
    import time

    start = time.perf_counter()
    ids = composition.ids
    unknown_ids = [name for name in values if name not in ids]
    if unknown_ids:
        raise ValueError(f"results for constraints the formula does not know: {', '.join(unknown_ids)}")
    known = {name: bool(values[name]) for name in ids if values.get(name) is not None}
    undetermined = tuple(name for name in ids if values.get(name) is None)
    formula = to_z3(composition.expr, ids)
    literal = {name: (z3.Bool(name) if value else z3.Not(z3.Bool(name))) for name, value in known.items()}

    def unsat_with(extra: Any, names: Sequence[str]) -> bool:
        solver = z3.Solver()
        solver.add(extra)
        return solver.check(*[literal[n] for n in names]) == z3.unsat

    def minimal_core(extra: Any) -> tuple[str, ...]:
        solver = z3.Solver()
        solver.add(extra)
        trackers = {name: z3.Bool(f"__assume_{name}") for name in known}
        for name, tracker in trackers.items():
            solver.add(z3.Implies(tracker, literal[name]))
        solver.check(*trackers.values())
        by_tracker = {str(t): n for n, t in trackers.items()}
        core = [by_tracker[str(t)] for t in solver.unsat_core()]
        for name in sorted(core, key=lambda n: (known[n] is False, ids.index(n))):  # drop satisfied results first
            rest = [n for n in core if n != name]
            if unsat_with(extra, rest):
                core = rest
        return tuple(sorted(core, key=ids.index))

    def unique(extra: Any, core: tuple[str, ...]) -> bool:
        """No minimal reason avoids any member of ``core``: without it, the other results do not force it."""
        return all(not unsat_with(extra, [n for n in known if n != name]) for name in core)

    values_out = {name: values.get(name) for name in ids}
    index_values = {i: values_out[name] for i, name in enumerate(ids, start=1)}
    alternatives: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    if unsat_with(formula, list(known)):
        verdict = "unsat"
        core = minimal_core(formula)
        core_unique = unique(formula, core)
        completion = _completion(composition.expr, index_values, ids)
        violated, conditions = _blame(composition.expr, completion, ids)
        violated = tuple(item for item in violated if item[0] not in undetermined)
        conditions = tuple(item for item in conditions if item[0] not in undetermined)
        if not violated:  # the structure blames only unchecked constraints: the checked ones that force it do
            violated = tuple((name, known[name]) for name in core)
            conditions = tuple(item for item in conditions if item[0] not in core)
        falsified = tuple(
            composition.render(part) for part in composition.parts if evaluate3(part, completion) is False
        )
        to_fix = _correction(formula, known, ids, {name for name, _ in violated})
        alternatives = tuple(
            (composition.render(part), *found)
            for part in composition.parts
            if evaluate3(part, completion) is False
            for found in [_alternative(part, ids, undetermined)]
            if found
        )
    elif unsat_with(z3.Not(formula), list(known)):
        verdict = "sat"
        core = minimal_core(z3.Not(formula))
        core_unique = unique(z3.Not(formula), core)
        violated, conditions, falsified, to_fix = (), (), (), ()
    else:
        verdict = "unknown"
        core, violated, conditions, falsified, to_fix, core_unique = (), (), (), (), (), False
    return SolverDecision(
        verdict=verdict,
        values=values_out,
        core=list(core),
        violated=[Assignment(id=i, value=v) for i, v in violated],
        conditions=[Assignment(id=i, value=v) for i, v in conditions],
        falsified_parts=list(falsified),
        to_fix=[Correction(id=i, should_be=v) for i, v in to_fix],
        undetermined=list(undetermined),
        formula=composition.text(),
        seconds=round(time.perf_counter() - start, 6),
        core_unique=core_unique,
        alternatives=[Alternative(requirement=text, op=op, ids=list(names)) for text, op, names in alternatives],
    )


def _alternative(part: Expr, ids: Sequence[str], undetermined: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """(xor | iff, its constraints) for a false XOR / IFF requirement over plain constraints (NOT IFF
    reads as XOR, NOT XOR as IFF): changing any one of them makes it true, so none of them alone is
    "the" violation."""
    negated = isinstance(part, Op) and part.op == "not"
    inner = part.args[0] if isinstance(part, Op) and negated else part
    if not (isinstance(inner, Op) and inner.op in ("xor", "iff")):
        return None
    variables = [a for a in inner.args if isinstance(a, Var)]
    if len(variables) < len(inner.args):
        return None
    names = tuple(ids[a.index - 1] for a in variables)
    if any(name in undetermined for name in names) or len(set(names)) < len(names):
        return None  # a constraint named twice (C1 XOR C1 XOR C2): flipping it changes nothing
    if inner.op == "iff" and len(names) > 2:
        return None  # all equal: only the odd ones out need to change, not any one of them
    op = inner.op if not negated else {"xor": "iff", "iff": "xor"}[inner.op]
    return op, names


@_serialised
def contradiction(composition: Composition) -> tuple[str, ...]:
    """The requirements of a formula no response can meet — a minimal set of them that already
    conflicts, as text — or () when some response can meet them all."""
    solver = z3.Solver()
    trackers = []
    for number, part in enumerate(composition.parts):
        tracker = z3.Bool(f"__requirement_{number}")
        solver.add(z3.Implies(tracker, to_z3(part, composition.ids)))
        trackers.append(tracker)
    if solver.check(*trackers) != z3.unsat:
        return ()
    core = [int(str(t).rsplit("_", 1)[1]) for t in solver.unsat_core()]
    for number in list(core):
        rest = [n for n in core if n != number]
        if solver.check(*[trackers[n] for n in rest]) == z3.unsat:
            core = rest
    return tuple(composition.render(composition.parts[n]) for n in sorted(core))


def _completion(
    expr: Expr, values: Mapping[int, bool | None], ids: Sequence[str], limit: int = 12
) -> dict[int, bool | None]:
    """The results with the undetermined ones filled in (every filling falsifies an unsat formula): the
    filling whose blame falls least on undetermined constraints, so the explanation names checked ones."""
    missing = [i for i, v in values.items() if v is None]
    if not missing or len(missing) > limit:
        return dict(values)
    best, best_key = dict(values), None
    names = {ids[i - 1] for i in missing}
    for filling in itertools.product((True, False), repeat=len(missing)):
        candidate = {**values, **dict(zip(missing, filling))}
        blamed, _ = _blame(expr, candidate, ids)
        key = (sum(name in names for name, _ in blamed), -len(blamed))
        if best_key is None or key < best_key:
            best, best_key = candidate, key
    return best


def _correction(
    formula: Any, known: Mapping[str, bool], ids: Sequence[str], blamed: set[str]
) -> tuple[tuple[str, bool], ...]:
    """A cheapest set of changes that makes the formula true; changing a blamed (violated) constraint
    costs 1, changing any other 3 — so the fix prefers satisfying a violated requirement over
    escaping it by breaking its condition (the feedback loop asks for exactly these changes)."""
    optimizer = z3.Optimize()
    optimizer.add(formula)
    for name, value in known.items():
        optimizer.add_soft(z3.Bool(name) if value else z3.Not(z3.Bool(name)), 1 if name in blamed else 3)
    if optimizer.check() != z3.sat:
        return ()
    model = optimizer.model()
    changes = []
    for name in ids:
        if name in known:
            new = z3.is_true(model.eval(z3.Bool(name), model_completion=True))
            if new != known[name]:
                changes.append((name, new))
    return tuple(changes)


def _blame(expr: Expr, values: Mapping[int, bool | None], ids: Sequence[str]):
    """(violated, conditions) of a false formula, from its structure (see the module docstring)."""
    blame = _Blame(values, ids)
    if evaluate3(expr, values) is False:
        blame.falsified(expr)
    order = {name: k for k, name in enumerate(ids)}
    violated, conditions = blame.violated, blame.conditions
    blamed = tuple(sorted(violated.items(), key=lambda item: order[item[0]]))
    because = tuple(
        sorted(((n, v) for n, v in conditions.items() if n not in violated), key=lambda item: order[item[0]])
    )
    return blamed, because


class _Blame:
    """What :func:`_blame` gathers walking a false formula under ``values``: the constraints to blame
    (``violated``, with the value each should have had) and the ``conditions`` that made them count."""

    def __init__(self, values: Mapping[int, bool | None], ids: Sequence[str]) -> None:
        self.values, self.ids = values, ids
        self.violated: dict[str, bool] = {}
        self.conditions: dict[str, bool] = {}

    def _blame_all(self, items: list[tuple[str, bool]]) -> None:
        for name, value in items:
            self.violated.setdefault(name, value)

    def falsified(self, e: Expr) -> None:
        """``e`` is false: blame what makes it false."""
        if isinstance(e, Var):
            self.violated.setdefault(self.ids[e.index - 1], False)
        elif isinstance(e, Op):
            vals = [evaluate3(a, self.values) for a in e.args]
            if e.op == "not":
                self._blame_all(self.support(e.args[0]))
            elif e.op in ("and", "or"):
                for arg, val in zip(e.args, vals):
                    if val is False:
                        self.falsified(arg)
            elif e.op == "implies":
                self.conditions.update(self.support(e.args[0]))
                self.falsified(e.args[1])
            else:
                self._falsified_sides(e.args, vals, true_side_blamed=e.op != "iff")

    def _falsified_sides(self, args: Sequence[Expr], vals: list[bool | None], true_side_blamed: bool) -> None:
        """A false ``iff`` (the true side is the condition, the false side is blamed) or ``xor`` (an even
        number hold: every operand is to blame)."""
        for arg, val in zip(args, vals):
            if val is True and true_side_blamed:
                self._blame_all(self.support(arg))
            elif val is True:
                self.conditions.update(self.support(arg))
            elif val is False:
                self.falsified(arg)

    def _known(self, e: Expr) -> list[tuple[str, bool]]:
        return [(self.ids[i - 1], v) for i in sorted(_vars(e)) if (v := self.values.get(i)) is not None]

    def support(self, e: Expr) -> list[tuple[str, bool]]:
        """``e`` is true: what makes it true."""
        if isinstance(e, Var):
            return [(self.ids[e.index - 1], True)]
        if isinstance(e, Const):
            return []
        vals = [evaluate3(a, self.values) for a in e.args]
        if e.op == "not":
            return self.refutation(e.args[0])
        if e.op == "and":
            return [item for arg in e.args for item in self.support(arg)]
        if e.op == "or":
            first = next((arg for arg, val in zip(e.args, vals) if val is True), None)
            return self.support(first) if first is not None else []
        if e.op == "implies":
            return self.refutation(e.args[0]) if vals[0] is False else self.support(e.args[1])
        return self._known(e)

    def refutation(self, e: Expr) -> list[tuple[str, bool]]:
        """``e`` is false: what makes it false (as conditions)."""
        if isinstance(e, Var):
            return [(self.ids[e.index - 1], False)]
        if isinstance(e, Const):
            return []
        vals = [evaluate3(a, self.values) for a in e.args]
        if e.op == "not":
            return self.support(e.args[0])
        if e.op == "or":
            return [item for arg in e.args for item in self.refutation(arg)]
        if e.op == "and":
            first = next((arg for arg, val in zip(e.args, vals) if val is False), None)
            return self.refutation(first) if first is not None else []
        if e.op == "implies":
            return self.support(e.args[0]) + self.refutation(e.args[1])
        return self._known(e)


__all__ = [
    "Composition",
    "CompositionError",
    "VERDICTS",
    "contradiction",
    "decide",
    "evaluate3",
    "parse_composition",
    "render",
    "to_z3",
]
