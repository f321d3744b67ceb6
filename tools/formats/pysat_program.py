"""PySAT format: a Python program that builds the clauses with PySAT, run only in the sandbox.

The convention (what the program sees and what it must define) is :data:`CONVENTION`, written so
the prompts can show it as is; :data:`SKELETON` is a minimal program in that convention.
Variables 1..N are the task variables in the task's order; every variable above N is auxiliary.

One deliberate difference from plain PySAT: in the sandbox, ``CardEnc``/``PBEnc`` calls that pass
neither ``top_id`` nor ``vpool`` take their auxiliaries from the shared ``vpool`` (plain PySAT would
number them from max(lits) + 1, silently colliding with task variables above max(lits)).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autonesy.tools.cnf import CNF, MAX_AUX_VARS
from autonesy.tools.formats._program import check_names, limits_from, run_format_program
from autonesy.tools.formats._program import warm_up as _warm_up
from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.dimacs import compact_auxiliaries
from autonesy.tools.sandbox import SandboxLimits

FORMAT = "pysat"

CONVENTION = """\
Write a Python program that builds the formula with PySAT (python-sat). It runs in a sandbox, where
these names are already defined, so no import is needed (importing them again is harmless; do not
redefine or renumber them):
- every task variable, as a Python int equal to its DIMACS index (the first variable is 1);
  its negation is the negative int (-a);
- N: the number of task variables; VARS: a dict from variable name to index;
- vpool = IDPool(start_from=N + 1): take every auxiliary variable from it (vpool.id() gives a
  fresh one), so auxiliaries never collide with task variables;
- CNF, IDPool, CardEnc, PBEnc and EncType from PySAT (CardEnc and PBEnc draw their auxiliary
  variables from vpool unless you pass top_id= or vpool= yourself, also when imported again);
  itertools and math. EncType.native gives no clauses: use another encoding.
Define `formula` (a PySAT CNF) or `clauses` (a list of clauses, each a list of non-zero ints); if
both are defined, `formula` is used. Clauses are lists such as [a, -b]; never end them with 0.
The program must not read or write files, use the network, start processes or call sys.exit;
printing is allowed but ignored."""

SKELETON = """\
formula = CNF()
formula.extend(CardEnc.equals(lits=[a, b, c], bound=1, vpool=vpool).clauses)  # exactly one of a, b, c
formula.append([-a, d])  # a implies d
"""

RESERVED_NAMES = frozenset(
    {
        "N",
        "VARS",
        "vpool",
        "CNF",
        "CNFPlus",
        "WCNF",
        "IDPool",
        "CardEnc",
        "PBEnc",
        "EncType",
        "PBEncType",
        "itertools",
        "math",
        "formula",
        "clauses",
        "submit",
    }
)

PRELOAD = ("pysat.formula", "pysat.card", "pysat.pb", "inspect")

SETUP = '''
import itertools, math
import inspect as _inspect
from pysat.formula import CNF, CNFPlus, WCNF, IDPool
from pysat.card import CardEnc as _PySATCardEnc, EncType
from pysat.pb import PBEnc as _PySATPBEnc, EncType as PBEncType

N = len(__task_names__)
VARS = {_name: _index for _index, _name in enumerate(__task_names__, start=1)}
globals().update(VARS)
vpool = IDPool(start_from=N + 1)


class _SharedPool:
    """PySAT's encoder class, whose methods default to the shared `vpool` for auxiliaries."""

    def __init__(self, cls):
        self._cls = cls

    def __getattr__(self, attr):
        method = getattr(self._cls, attr)
        if attr.startswith("_") or not callable(method):
            return method
        try:
            signature = _inspect.signature(method)
        except (TypeError, ValueError):
            return method
        if "vpool" not in signature.parameters:
            return method

        def call(*args, **kwargs):
            try:
                given = signature.bind_partial(*args, **kwargs).arguments
            except TypeError:
                return method(*args, **kwargs)
            if given.get("top_id") is None and given.get("vpool") is None:
                kwargs["vpool"] = globals()["vpool"]
            return method(*args, **kwargs)

        call.__doc__ = method.__doc__
        return call

    def __repr__(self):
        return repr(self._cls)


CardEnc = _SharedPool(_PySATCardEnc)
PBEnc = _SharedPool(_PySATPBEnc)
import pysat.card as _card, pysat.pb as _pb
_card.CardEnc, _pb.PBEnc = CardEnc, PBEnc  # `from pysat.card import CardEnc` gets the same default
del __task_names__, _card, _pb
'''

COLLECT = """
def collect(ns, submitted):
    import operator
    from pysat.formula import CNF
    N, MAX_VAR, MAX_LITERALS = {n}, {max_var}, {max_literals}
    if "formula" in ns:
        obj, where = ns["formula"], "`formula`"
    elif "clauses" in ns:
        obj, where = ns["clauses"], "`clauses`"
    elif submitted is not NOTHING:
        obj, where = submitted, "the submitted value"
    else:
        raise ProgramError("missing_definition", "the program must define `formula` (a PySAT CNF) or `clauses` "
                           "(a list of clauses, each a list of non-zero ints)")
    if hasattr(obj, "soft") or type(obj).__name__.startswith("WCNF"):
        raise ProgramError("type", where + " is a weighted formula (WCNF); build a plain CNF of hard clauses")
    if getattr(obj, "atmosts", None):
        raise ProgramError("type", where + " holds native cardinality constraints (CNFPlus atmosts); encode them "
                           "into clauses with CardEnc and an encoding other than EncType.native")
    clauses = obj.clauses if isinstance(obj, CNF) else obj
    if isinstance(clauses, (str, bytes, dict, int, float)) or not hasattr(clauses, "__iter__"):
        raise ProgramError("type", f"{{where}} is a {{type(obj).__name__}}; expected a PySAT CNF or a list of "
                           "clauses, each a list of non-zero ints, e.g. [[1, -2], [3]]")
    out, total = [], 0
    for number, clause in enumerate(clauses, start=1):
        shown = repr(clause)[:80]
        if isinstance(clause, (str, bytes, dict)) or not hasattr(clause, "__iter__"):
            raise ProgramError("type", f"clause #{{number}} of {{where}} is {{shown}}, not a list of literals; "
                               "clauses must be a list of lists, e.g. [[1, -2], [3]]")
        literals = []
        for item in clause:
            if isinstance(item, bool):
                raise ProgramError("type", f"clause #{{number}} of {{where}} ({{shown}}) holds {{item!r}}; "
                                   "literals are non-zero ints (v or -v)")
            try:
                literal = operator.index(item)
            except TypeError:
                raise ProgramError("type", f"clause #{{number}} of {{where}} ({{shown}}) holds {{item!r:.40}} "
                                   f"(a {{type(item).__name__}}); literals are non-zero ints (v or -v)") from None
            if literal == 0:
                raise ProgramError("out_of_range", f"clause #{{number}} of {{where}} ({{shown}}) holds the literal 0; "
                                   "clauses are Python lists here, so do not end them with 0")
            if abs(literal) > MAX_VAR:
                raise ProgramError("out_of_range", f"clause #{{number}} of {{where}} ({{shown}}) uses variable "
                                   f"{{abs(literal)}}, above the allowed {{MAX_VAR}}")
            literals.append(int(literal))
        total += len(literals) + 1
        if total > MAX_LITERALS:
            raise ProgramError("too_large", f"{{where}} holds more than {{MAX_LITERALS}} literals")
        out.append(literals)
    return {{"clauses": out}}
"""


def warm_up() -> None:
    """Start this format's sandbox ahead of need, so the first check skips the import time."""
    _warm_up(PRELOAD)


def parse(
    source: str,
    names: Sequence[str],
    *,
    max_var: int | None = None,
    max_literals: int = 20_000_000,
    limits: SandboxLimits | None = None,
    **limit_overrides: Any,
) -> CNF:
    """Run a PySAT program in the sandbox; its clauses as a CNF over task vars 1..N, aux > N.

    ``max_var`` bounds variable indices (default N + 1,000,000); sandbox limits come from
    ``limits`` and keyword overrides such as ``wall_seconds=5``.

    Raises :class:`FormatError` for faults of the program and ``SandboxUnavailable`` (from
    ``_program``) when the sandbox itself cannot run; ``ValueError`` for unusable task names.
    """
    names = check_names(names, RESERVED_NAMES, FORMAT)
    n = len(names)
    max_var = n + MAX_AUX_VARS if max_var is None else max_var
    data = run_format_program(
        source,
        names,
        setup=SETUP,
        collect=COLLECT.format(n=n, max_var=max_var, max_literals=max_literals),
        preload=PRELOAD,
        inputs={"__task_names__": names},
        limits=limits_from(limits, limit_overrides),
    )
    clauses, top = compact_auxiliaries(n, _checked_clauses(data, max_var))
    return CNF(n, clauses, top)


def _checked_clauses(data: Any, max_var: int) -> tuple[tuple[int, ...], ...]:
    """The sandbox's answer is data from an untrusted process: check it again."""
    clauses = data.get("clauses") if isinstance(data, dict) else None
    if not isinstance(clauses, list):
        raise FormatError("type", "the program did not produce a list of clauses")
    out = []
    for clause in clauses:
        if not isinstance(clause, list) or not all(
            type(lit) is int and lit != 0 and abs(lit) <= max_var for lit in clause
        ):
            raise FormatError("type", f"malformed clause {str(clause)[:80]}")
        out.append(tuple(clause))
    return tuple(out)
