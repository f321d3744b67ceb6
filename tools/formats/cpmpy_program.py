"""CPMpy format: a Python program stating the constraints with CPMpy, run only in the sandbox.

The convention (what the program sees and what it must define) is :data:`CONVENTION`, written so
the prompts can show it as is; :data:`SKELETON` is a minimal program in that convention.

Conversion: inside the sandbox, CPMpy's own CNF transformation (``to_cnf``, which needs
``pindakaas``) turns the constraints into clauses; the sandbox returns them as DIMACS text with
``c <id> <name>`` annotations plus the ids of the task variables. DIMACS ids follow CPMpy's order
of first appearance, so the caller re-indexes: task variables become 1..N in the task's order,
every other variable (CPMpy's auxiliaries, the encodings of integer variables, helper variables the
program created) an auxiliary above N. Variables are matched to task variables by name, so a
program that re-declares ``a = cp.boolvar(name="a")`` still means the task variable ``a``. A task
variable the constraints never mention stays a free task variable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autonesy.tools.cnf import CNF, DimacsError, parse_dimacs
from autonesy.tools.formats._program import check_names, limits_from, run_format_program
from autonesy.tools.formats._program import warm_up as _warm_up
from autonesy.tools.formats.base import FormatError
from autonesy.tools.literal_count import LiteralCount, with_literal_counts
from autonesy.tools.sandbox import SandboxLimits

FORMAT = "cpmpy"

CONVENTION = """\
Write a Python program that states the constraints with CPMpy. It runs in a sandbox, where these
names are already defined (do not import, create or rename them):
- cp: the cpmpy module (import cpmpy as cp);
- every task variable, as a CPMpy Boolean variable named like the task variable
  (a = cp.boolvar(name="a")); VARS: a dict from variable name to that variable;
- itertools and math.
Define `constraints` (a list of CPMpy Boolean expressions, or a single one) or `model`
(a cp.Model). Use CPMpy's operators: & (and), | (or), ~ (not), a.implies(b), a == b, a != b
(xor), cp.sum([...]) == k for counting, cp.any / cp.all; never Python's and/or/not.
Other variables you create are auxiliary (existentially quantified).
The program must not solve the model, read or write files, use the network, start processes or call
sys.exit; printing is allowed but ignored."""

SKELETON = """\
constraints = [
    cp.sum([a, b, c]) == 1,  # exactly one of a, b, c
    a.implies(d),            # a implies d
]
"""

RESERVED_NAMES = frozenset({"cp", "VARS", "itertools", "math", "constraints", "model", "submit"})

# CPMpy's integer encoding for the program's own integer variables. Its default ("auto") picks the
# direct encoding for equalities, whose linear constraints pindakaas turns into hundreds of thousands
# of clauses (a distance-label path answer: 564k clauses, 10 s; binary: 15k, 1 s); any exact
# encoding gives the same projection on the task variables.
INTEGER_ENCODING = "binary"
# OR-Tools is one of CPMpy's optional solvers; nothing here solves (the CNF comes from CPMpy's own
# transformation and pindakaas), and importing it (with pandas) is three quarters of CPMpy's import
# time: 0.58 s of CPU per program, 0.15 s without. A program that imports it gets an ImportError.
PRELOAD = (
    "!ortools",
    "cpmpy",
    "numpy",
    "cpmpy.transformations.to_cnf",
    "cpmpy.transformations.get_variables",
    "pindakaas",
)

SETUP = """
import itertools, math
import cpmpy as cp

VARS = {_name: cp.boolvar(name=_name) for _name in __task_names__}
globals().update(VARS)
del __task_names__
"""

COLLECT = """
def collect(ns, submitted):
    import numpy as np
    import cpmpy as cp
    from cpmpy.expressions.core import Expression, Operator, BoolVal
    from cpmpy.expressions.variables import _BoolVarImpl, NegBoolView
    from cpmpy.expressions.utils import flatlist
    from cpmpy.transformations.to_cnf import to_cnf
    from cpmpy.transformations.get_variables import get_variables

    TASK = set({names!r})
    if "model" in ns:
        obj, where = ns["model"], "`model`"
        if not isinstance(obj, cp.Model):
            raise ProgramError("type", f"`model` is a {{type(obj).__name__}}, not a cp.Model; define "
                               "`model = cp.Model(...)` or a list `constraints`")
        items = flatlist(obj.constraints)
    elif "constraints" in ns or submitted is not NOTHING:
        obj, where = (ns["constraints"], "`constraints`") if "constraints" in ns else (submitted, "the submitted value")
        if isinstance(obj, cp.Model):
            items = flatlist(obj.constraints)
        elif isinstance(obj, (list, tuple, np.ndarray)):
            items = flatlist(obj)
        else:
            items = [obj]
    else:
        raise ProgramError("missing_definition", "the program must define `constraints` (a list of CPMpy Boolean "
                           "expressions) or `model` (a cp.Model)")
    for number, item in enumerate(items, start=1):
        if isinstance(item, (bool, np.bool_)):
            continue
        if not isinstance(item, Expression):
            raise ProgramError("type", f"item #{{number}} of {{where}} is {{item!r:.60}} (a {{type(item).__name__}}), "
                               "not a CPMpy Boolean expression")
        if not item.is_bool():
            raise ProgramError("type", f"item #{{number}} of {{where}}, {{str(item)[:80]}}, is a number, not a "
                               "Boolean constraint (did you mean `... == k` or `... >= k`?)")
    items = [bool(item) if isinstance(item, np.bool_) else item for item in items]
    user_vars = get_variables(items)
    clauses = to_cnf(items, encoding={encoding!r})
    variables = get_variables(clauses)
    ids = {{id(v): i for i, v in enumerate(variables, start=1)}}

    def literal(x):
        if isinstance(x, NegBoolView):
            return -ids[id(x._bv)]
        if isinstance(x, _BoolVarImpl):
            return ids[id(x)]
        raise ProgramError("runtime", f"CPMpy's CNF transformation produced an unexpected literal {{x!r:.60}}")

    lines = []
    for clause in clauses:
        if isinstance(clause, (bool, np.bool_, BoolVal)):
            if not bool(clause if not isinstance(clause, BoolVal) else clause.value()):
                lines.append("0")  # the empty clause: the constraints are contradictory
            continue
        if isinstance(clause, Operator) and clause.name == "or":
            lines.append(" ".join(str(literal(x)) for x in clause.args) + " 0")
        else:
            lines.append(f"{{literal(clause)}} 0")
    task_ids = {{}}
    for v in user_vars:
        if isinstance(v, _BoolVarImpl) and v.name in TASK and id(v) in ids:
            task_ids.setdefault(v.name, []).append(ids[id(v)])
    header = [f"c {{i}} {{v.name}}" for i, v in enumerate(variables, start=1)]
    helpers = sorted({{v.name for v in user_vars if v.name not in TASK}})
    dimacs = "\\n".join(header + [f"p cnf {{len(variables)}} {{len(lines)}}"] + lines) + "\\n"
    return {{"dimacs": dimacs, "task_ids": task_ids, "helpers": helpers}}
"""


def warm_up() -> None:
    """Start this format's sandbox ahead of need, so the first check skips the import time."""
    _warm_up(PRELOAD)


def parse(
    source: str,
    names: Sequence[str],
    *,
    limits: SandboxLimits | None = None,
    **limit_overrides: Any,
) -> CNF:
    """Run a CPMpy program in the sandbox; its CNF (CPMpy's to_cnf) over task vars 1..N, aux > N.

    Raises :class:`FormatError` for faults of the program and ``SandboxUnavailable`` (from
    ``_program``) when the sandbox itself cannot run; ``ValueError`` for unusable task names.
    """
    names = check_names(names, RESERVED_NAMES, FORMAT)
    data = run_format_program(
        source,
        names,
        setup=SETUP,
        collect=COLLECT.format(names=list(names), encoding=INTEGER_ENCODING),
        preload=PRELOAD,
        inputs={"__task_names__": names},
        limits=limits_from(limits, limit_overrides),
    )
    return reindex(data, names)


MAX_CLAUSES = 2_000_000  # as the sandbox's bound on lists in a result (PySAT's clauses)


def reindex(data: Any, names: Sequence[str]) -> CNF:
    """Renumber the sandbox's DIMACS: task variables 1..N in task order, all others N+1.. in order."""
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("dimacs"), str)
        or not isinstance(data.get("task_ids"), dict)
    ):
        raise FormatError("type", "the CPMpy conversion did not return DIMACS text and a variable map")
    if data["dimacs"].count("\n") > MAX_CLAUSES:  # before building them: 16 MiB of "1 0" lines cost ~0.7 GiB, 45 s
        raise FormatError("too_large", f"the CPMpy model's CNF has more than {MAX_CLAUSES:,} clauses")
    try:
        raw = parse_dimacs(data["dimacs"], num_task_vars=0)
    except DimacsError as exc:
        raise FormatError("type", f"the CPMpy conversion returned malformed DIMACS: {exc}") from None
    position = {name: index for index, name in enumerate(names, start=1)}
    new_id: dict[int, int] = {}
    for name, ids in data["task_ids"].items():
        if name not in position or not isinstance(ids, list):
            raise FormatError("type", f"the CPMpy conversion mapped an unknown name {str(name)[:40]!r}")
        for old in ids:
            if (
                type(old) is not int
                or not 1 <= old <= raw.num_vars
                or new_id.get(old, position[name]) != position[name]
            ):
                raise FormatError("type", f"the CPMpy conversion returned a bad id for {name!r}")
            new_id[old] = position[name]
    n = len(names)
    top = n
    for clause in raw.clauses:  # only variables that occur: a forged header's count costs nothing
        for lit in clause:
            if abs(lit) not in new_id:
                top += 1
                new_id[abs(lit)] = top
    counts = _literal_counts(data.get("counts") or [], raw.num_vars)
    for count in counts:  # a variable only counted (in no clause) is an auxiliary too
        for lit in count.literals + tuple(g for g, _ in count.guards):
            if abs(lit) not in new_id:
                top += 1
                new_id[abs(lit)] = top

    def renamed(lit: int) -> int:
        return new_id[lit] if lit > 0 else -new_id[-lit]

    clauses = tuple(tuple(renamed(lit) for lit in clause) for clause in raw.clauses)
    helpers = data.get("helpers") or []
    comments: tuple[str, ...] = ()
    if isinstance(helpers, list) and helpers:
        shown = ", ".join(str(h)[:40] for h in helpers[:20])
        comments = (f"auxiliary variables created by the program: {shown}",)
    return with_literal_counts(CNF(n, clauses, top, comments), [count.substituted(renamed) for count in counts])


MAX_COUNT_AUXILIARIES = 2_000_000  # the counters' states, all literal counts of one conversion together


def _literal_counts(items: Any, num_vars: int) -> list[LiteralCount]:
    """The literal counts a conversion declares ({"literals", "allowed", "modulus", "guards"} each), checked."""
    if not isinstance(items, list):
        raise FormatError("type", "the CPMpy conversion returned literal counts that are not a list")
    counts, states = [], 0
    for item in items:
        try:
            literals, allowed, modulus = item["literals"], item["allowed"], item.get("modulus")
            guards = [(g, tuple(values)) for g, values in item.get("guards") or []]
            if not all(type(x) is int and 0 < abs(x) <= num_vars for x in literals + [g for g, _ in guards]):
                raise ValueError("a literal outside the CNF's variables")
            count = LiteralCount(tuple(literals), tuple(allowed), modulus, tuple(guards))
        except (TypeError, KeyError, ValueError, AttributeError) as error:
            raise FormatError("type", f"the CPMpy conversion returned a bad literal count ({error})") from None
        # a state per value and literal, and the guards' clauses too
        states += (len(count.literals) + len(count.guards)) * (count.modulus or len(count.literals) + 1)
        if states > MAX_COUNT_AUXILIARIES:
            raise FormatError("too_large", f"the literal counts need more than {MAX_COUNT_AUXILIARIES:,} states")
        counts.append(count)
    return counts
