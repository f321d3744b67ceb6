"""DCP-Bench-Open (Michailidis, Tsouros, Guns, 2026) problems as tasks.

Layout read (the repository's ``dataset/`` folder): one folder per problem,

    dataset/<name>/<name>.cpmpy.py   metadata comments (# Category:, # Source:), the problem description
                                     as the first docstring (ending with a "Print … (var)" sentence that
                                     names the decision variables), a default instance between
                                     ``# Data`` and ``# End of data``, then the ground-truth CPMpy model,
                                     ``model.solve()`` and a JSON print of the solution
    dataset/<name>/<name>.json       the instances (a list of objects; the first is the default one).
                                     An object with a ``description`` field instead overrides the docstring.

PATH may be the repository, its ``dataset/`` folder, one problem folder, or the released
``dcp-bench-open.jsonl`` (records with ``id``, ``description``, ``example_instance``, ``model``,
``decision_variables``). Kept: satisfaction problems whose model runs, whose decision variables are
found, and whose Boolean encoding has at most ``MAX_TASK_VARS`` variables (no integer decision
variable with more than ``MAX_DOMAIN`` values). The cap is the prompt's size (each task variable is
listed with its meaning), not counting or compiling: those are time-bounded at scoring. Optimisation problems
(``minimize``/``maximize``) are left out, not relaxed to their constraints: their descriptions ask
for an optimum, which a formula over the constraints alone would not state. Every problem left out
is listed with its reason (:func:`left_out`; sweeps write the list into ``sweep.json``).

How a problem becomes a task: its CPMpy script runs **in the sandbox** (tools/sandbox.py); its first
``model.solve()`` records the model and returns, so a script that names its decision variables after
solving still works (a second solve, or any error after the first, ends the script). The decision
variables named in the description become Boolean task variables, keeping their names — a Boolean
decision variable ``b[i]`` (also a negated one, ``~a``, or a Boolean expression) becomes ``b_i``; a
0/1 integer becomes one Boolean (true for 1); an integer one ``x[i]`` (a variable or an integer
expression such as ``2*y``) with bounds lb..ub becomes one variable per value, ``x_i_eq_v``
("x[i] = v"; negative values as ``m3``). Each variable's meaning carries its role as the
description's closing "Print …" paragraph words it, and that paragraph (where DCP-Bench-Open says
what values and indices mean, e.g. "where Debra = 0, Janet = 1") stays in the description.
The ground truth is CPMpy's CNF of the model's constraints over the task variables: a decision integer
is one-hot (direct) encoded before the model is, so its value literals *are* the task variables
``x_i_eq_v`` and all-different, table and small linear constraints come out as clauses over them
(no channelling, few helper variables: the projected count stays cheap); a decision integer the
encoder gave another encoding, or an integer expression, is linked by ``x_i_eq_v ⇔ (x[i] = v)``
(a conjunction of its encoding's literals). When an encoding exhausts memory or CPU time (pindakaas's
totalizers grow with the range of a weighted sum) or its ground truth is not counted, the next of
:data:`ENCODINGS` is tried: every integer of the model one-hot, each constraint flattened into small
tables (a clause per combination of values) over auxiliary one-hot integers and Booleans, each defined
equal to one subexpression — an element with a variable index, a modulo, a partial sum — so that it
adds no model; then CPMpy's own choice of integer encodings; then binary adders for the linear
constraints. Every other variable
(the model's own encodings, helper variables) is auxiliary. So the formula admits exactly the one-hot
images of the model's solutions, and a formalization must also say that each integer takes exactly
one value (the detailed description states it; the not-detailed one leaves it implicit).

Each kept problem's ground truth is counted exactly (``auto``) when it is converted, within
:data:`TRUTH_COUNT_LIMIT_S` per encoding, then, when no encoding's was, once more within
:data:`TRUTH_LAST_TRY_S`; one still not counted is ``unscorable``, with the reason (:func:`unscorable`;
sweeps list them and write them into ``sweep.json``): an answer then gets a metric only when it is
proved equivalent. Conversions and these verdicts are cached on disk together
(``$AUTONESY_CACHE_DIR/dcpbench``, else the user cache directory), keyed by a hash of the problem's
script (and the conversion's version and limits), so a sweep converts and counts each problem once;
:func:`keys` reports each uncached conversion on stderr as it finishes. Every outcome is cached,
the limits' failures too (a wall-clock timeout included), so the loaded set does not change from
one load to the next with the machine's load; the limits are generous (CPU time, not wall time,
bounds a conversion) so that what they cut is what blows up, not what a busy machine slows down.
:func:`solutions` lists the original model's solutions with OR-Tools' CP-SAT, projected on the
decision variables: their number checks a ground truth's model count in the tests, and a ground truth
``auto`` cannot count within the limit is counted from them, each checked against the CNF and their
completeness proved by CaDiCaL or CP-SAT, whichever answers first (:func:`autonesy.tools.counting.count_from_candidates`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from autonesy.tasks.adapters.base import AdapterError
from autonesy.tasks.task import RESERVED_NAMES, Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.cache_entries import read_entry, write_entry
from autonesy.tools.config import cache_dir
from autonesy.tools.formats.cpmpy_program import MAX_COUNT_AUXILIARIES
from autonesy.tools.literal_count import MAX_STATES
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.terminal_text import terminal_line

MAX_TASK_VARS = 2000  # Boolean task variables (prompts list each one; counting and compiling are time-bounded)
MAX_DOMAIN = 400  # values of one integer decision variable (one Boolean each)
# The conversion's encodings, tried in turn while one exhausts memory or CPU time or leaves the ground
# truth uncounted: (which integers are one-hot: "decision", "all" or None, pindakaas's encoder for linear
# constraints or None for its defaults). Decision integers one-hot first: their value literals are the
# task variables themselves, so the ground truth needs no channelling and all-different, table and
# small linear constraints are stated over the task variables. Then every integer one-hot, each
# constraint flattened into small tables over auxiliary one-hot integers (an element with a variable
# index, a modulo, a sum of many terms: bales of hay's CNF shrinks from 238,657 variables to 3,410 and
# its 120 solutions count in seconds). CPMpy's own choice next (order/binary encodings for inequalities
# and wide domains), binary adders last (pindakaas's totalizers grow with the range of a weighted sum:
# SEND+MORE=MONEY needs gigabytes).
ENCODINGS = (("decision", None), ("counts", None), ("all", None), (None, None), (None, "ADDER"))
# Under one-hot, a constraint over at most MAX_TUPLES combinations of its (one-hot) variables' values
# becomes one clause per forbidden combination when there are at most MAX_FORBIDDEN of them, else one
# helper per allowed combination when those are few (all-different: pairwise, each pair so).
MAX_TUPLES, MAX_FORBIDDEN = 100_000, 20_000
# With every integer one-hot, a constraint over more combinations than this is flattened first (its table
# only if that fails): a 4x4 magic square's row sums as partial sums make a CNF of 2,296 variables whose
# 7,040 listed solutions CaDiCaL certifies in 32 s; as one helper per allowed row, 27,616 and 396 s.
TABLE_UP_TO = 4096
# With "counts", a sum of at most this many Boolean terms (all weights of one size) that no table takes is
# declared as a literal count (tools/literal_count.py): counting by orbits sees it as one symmetric
# constraint (BIBD's scalar products; diamond-free's edge total modulo 12).
MAX_COUNTED = 2_000
PAIRWISE_UP_TO = 24  # a one-hot integer with at most this many values: its exactly-one as pairwise clauses
CONVERSION_VERSION = 12
CONVERSION_ENTRY = "dcp-conversion"  # the kind of its cache entries (tools/cache_entries.py)
# CPU time is the bound; the wall limit only stops a stuck program (a loaded machine stretches it).
# The DIMACS text of a large model exceeds the default 16 MiB result (reindex bounds the clauses).
CONVERSION_LIMITS = SandboxLimits(cpu_seconds=120.0, wall_seconds=900.0, result_bytes=96 << 20)
TRUTH_COUNT_LIMIT_S = 60.0  # each encoding's ground truth is counted within this first
# Once per problem, when no encoding's ground truth was counted within TRUTH_COUNT_LIMIT_S: the kept
# encoding's, within this, by the one route that can still answer (certifying OR-Tools' list when it
# is complete, else ``auto``). Measured: the 3-AP-free 9-subsets of 40 bowls (7,555,794) take Ganak
# 47 s alone, over 60 s in auto's race; Steiner triples' 151,200 listed solutions take CaDiCaL 149 s
# to certify on a quiet machine (over 300 s at load 5).
TRUTH_LAST_TRY_S = 300.0
CITATION = (
    "K. Michailidis, D. Tsouros, T. Guns. DCP-Bench-Open: Evaluating LLMs for Constraint Modelling of "
    "Discrete Combinatorial Problems (arXiv:2506.06052)"
)
_DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.DOTALL)
_DATA = re.compile(r"#\s*Data\b(.*?)#\s*End of data", re.DOTALL | re.IGNORECASE)
_OPTIMISATION = re.compile(r"\b(minimize|maximize|minimise|maximise)\s*[(=]")


@dataclass(frozen=True)
class Problem:
    """One DCP-Bench-Open problem: its description and its runnable CPMpy script."""

    id: str
    description: str  # the docstring (or the JSON's description)
    source: str  # the full runnable script: data + model (+ solve, which the sandbox stops at)
    data: str  # the default instance as Python assignments
    decision_variables: tuple[str, ...]
    metadata: tuple[str, ...]
    origin: str  # file the problem came from


def decision_variables(description: str) -> tuple[str, ...]:
    """Names in parentheses after the description's last 'Print' (as DCP-Bench-Open's own tools read them)."""
    where = description.rfind("Print")
    if where < 0:
        return ()
    names: list[str] = []
    for group in re.findall(r"\(([^()]*)\)", description[where:]):
        for item in group.split(","):
            item = item.strip()
            if item.isidentifier() and item not in names:
                names.append(item)
    return tuple(names)


def split_print_request(description: str) -> tuple[str, str]:
    """(the problem statement, its closing 'Print …' paragraph). The paragraph names the decision
    variables and is where DCP-Bench-Open says what their values and indices mean."""
    where = description.rfind("Print")
    if where < 0:
        return description.strip(), ""
    start = description.rfind("\n\n", 0, where)
    head = description[:start] if start >= 0 else description[:where]
    if not head.strip():
        return description.strip(), ""
    return head.strip(), description[start if start >= 0 else where :].strip()


def roles(request: str) -> dict[str, str]:
    """Each decision variable's role as the 'Print …' paragraph words it: the phrase before the
    parentheses that list it ("Print the values of each food (eggs, mold)" → eggs: "the values of each food")."""
    found: dict[str, str] = {}
    text = " ".join(request.split())
    for match in re.finditer(r"([^()]*)\(([^()]*)\)", text):
        phrase = re.split(r"[.;:]", match.group(1))[-1]
        phrase = re.sub(r"^\s*(?:,|and\b|or\b|Print\b)\s*", "", phrase.strip()).strip(" ,")
        phrase = re.sub(r"^(?:and|or)\s+", "", phrase)
        words = phrase.split()
        phrase = " ".join(words[-10:])
        for item in match.group(2).split(","):
            item = item.strip()
            if item.isidentifier() and item not in found and phrase:
                found[item] = phrase
    return found


def _from_script(folder: Path) -> Problem:
    script = folder / f"{folder.name}.cpmpy.py"
    text = script.read_text(encoding="utf-8", errors="replace")
    match = _DOCSTRING.search(text)
    if match is None:
        raise AdapterError(f"{script}: no problem description (docstring)")
    description = textwrap.dedent(match.group(1) if match.group(1) is not None else match.group(2)).strip()
    metadata = tuple(line.strip() for line in text[: match.start()].splitlines() if line.strip().startswith("#"))
    instances = folder / f"{folder.name}.json"
    if instances.is_file():
        try:
            data = json.loads(instances.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise AdapterError(f"{instances}: not JSON ({error.msg})") from None
        except RecursionError:
            raise AdapterError(f"{instances}: not JSON (arrays or objects nested too deep)") from None
        if isinstance(data, dict) and isinstance(data.get("description"), str):
            description = data["description"].strip()
    data_match = _DATA.search(text)
    return Problem(
        folder.name,
        description,
        text,
        data_match.group(1).strip() if data_match else "",
        decision_variables(description),
        metadata,
        str(script),
    )


def _from_jsonl(path: Path) -> list[Problem]:
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise AdapterError(f"{path}:{number}: not JSON ({error.msg})") from None
        except RecursionError:
            raise AdapterError(f"{path}:{number}: not JSON (arrays or objects nested too deep)") from None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("id"), str)
            or not isinstance(record.get("model"), str)
        ):
            raise AdapterError(f"{path}:{number}: expected a DCP-Bench-Open record with 'id' and 'model'")
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", record["id"]):  # it becomes a task name, hence file names
            raise AdapterError(f"{path}:{number}: the id {record['id'][:40]!r} is not letters, digits, '_' or '-'")
        description = str(record.get("description", "")).strip()
        data = str(record.get("example_instance") or "").strip()
        names = record.get("decision_variables")
        names = (
            tuple(n for n in names if isinstance(n, str))
            if isinstance(names, list)
            else decision_variables(description)
        )
        problems.append(
            Problem(
                record["id"],
                description,
                f"{data}\n{record['model']}",
                data,
                names,
                tuple(map(str, record.get("metadata") or ())),
                f"{path}:{number}",
            )
        )
    return problems


def problems(path: Path) -> dict[str, Problem]:
    """The problems of a DCP-Bench-Open copy by id; a missing or unreadable copy is an ``AdapterError``."""
    path = Path(path)
    if not path.exists():
        raise AdapterError(f"dcpbench: {path} does not exist")
    if path.is_file():
        if path.suffix != ".jsonl":
            raise AdapterError(f"dcpbench: {path} is neither a problem folder nor a .jsonl release file")
        return {p.id: p for p in _from_jsonl(path)}
    if (path / "dataset").is_dir():
        path = path / "dataset"
    if (path / f"{path.name}.cpmpy.py").is_file():
        folders = [path]
    else:
        folders = sorted(d for d in path.iterdir() if d.is_dir() and (d / f"{d.name}.cpmpy.py").is_file())
    if not folders:
        raise AdapterError(f"dcpbench: no problem folders (<name>/<name>.cpmpy.py) under {path}")
    return {folder.name: _from_script(folder) for folder in folders}


def static_reason(problem: Problem) -> str | None:
    """Why a problem is left out before running anything (None: a candidate)."""
    docstring = _DOCSTRING.search(problem.source)
    model = problem.source[docstring.end() :] if docstring else problem.source
    if _OPTIMISATION.search(model):
        return "optimisation problem"
    if not problem.description:
        return "no description"
    if not problem.decision_variables:
        return "no decision variables named in the description"
    return None


# ---------------------------------------------------------------------------------- sandbox
SETUP = """
import cpmpy as cp
import cpmpy.solvers

_SOLVED = []  # the constraints of the first model solved (a snapshot: scripts may add more after it)


class _StopAtSolve(BaseException):
    \"\"\"Raised by a second solve call, or by any solver object: the model of the first call is the one.\"\"\"


def _stop(*args, **kwargs):
    raise _StopAtSolve()


def _first_solve(self, *args, **kwargs):
    \"\"\"Record the model instead of solving it and let the script go on (it may name its decision
    variables after solving); a second solve (a loop over solutions) stops the script.\"\"\"
    if _SOLVED:
        raise _StopAtSolve()
    _SOLVED.append(self)
    return True


_ORIGINAL_SOLVE = {cp.Model: (cp.Model.solve, cp.Model.solveAll)}  # for solution_count's check
cp.Model.solve = _first_solve
cp.Model.solveAll = _stop
cp.SolverLookup.get = staticmethod(_stop)
for _name in dir(cpmpy.solvers):
    _cls = getattr(cpmpy.solvers, _name)
    if isinstance(_cls, type) and hasattr(_cls, "solve"):
        _ORIGINAL_SOLVE[_cls] = (_cls.solve, getattr(_cls, "solveAll", None))
        _cls.solve = _stop
        if hasattr(_cls, "solveAll"):
            _cls.solveAll = _stop
"""

# The script runs to its end; after the first solve a failure (values are None) just ends it.
WRAPPER = """try:
{body}
    pass
except _StopAtSolve:
    pass
except Exception:
    if not _SOLVED:
        raise
"""

# The model of the first solve call, else the script's one cp.Model (a part of both programs below).
FIND_MODEL = """    solved = ns.get("_SOLVED") or []
    model = solved[0] if solved else ns.get("model")
    if not isinstance(model, cp.Model):
        found = [v for v in ns.values() if isinstance(v, cp.Model)]
        if len(found) != 1:
            raise ProgramError("missing_definition", "the script defines no single cp.Model")
        model = found[0]
"""

COLLECT = """
def collect(ns, submitted):
    import copy
    import numpy as np
    import cpmpy as cp
    from cpmpy.expressions.core import Expression, Operator, BoolVal, Comparison
    from cpmpy.expressions.variables import _BoolVarImpl, NegBoolView
    from cpmpy.expressions.utils import flatlist, get_bounds, is_num
    from cpmpy.transformations.to_cnf import to_cnf
    from cpmpy.transformations.cse import CSEMap
    from cpmpy.transformations.get_variables import get_variables

    DECISION = {decision!r}
    RESERVED = set({reserved!r})
    MAX, MAX_DOMAIN = {max_vars}, {max_domain}
    LINEAR_ENCODER = {linear_encoder!r}
    ONE_HOT = {one_hot!r}
    MAX_TUPLES, MAX_FORBIDDEN, PAIRWISE_UP_TO, TABLE_UP_TO = {max_tuples}, {max_forbidden}, {pairwise_up_to}, {table_up_to}
    MAX_COUNTED, MAX_COUNT_STATES, MAX_COUNT_AUXILIARIES = {max_counted}, {max_count_states}, {max_count_auxiliaries}
    COUNTED_STATES = [0]  # the declared counts' states so far
    from cpmpy.expressions.variables import _IntVarImpl
    from cpmpy.transformations.int2bool import IntVarEncDirect
    if LINEAR_ENCODER:  # pindakaas's encoder for every linear constraint that takes it (else its default)
        import pindakaas as pdk

        chosen, default_add = getattr(pdk.Encoder, LINEAR_ENCODER), pdk.CNF.add_encoding

        def add_encoding(self, constraint, encoder=None, conditions=None, **options):
            if encoder is None:
                try:
                    return default_add(self, constraint, chosen, conditions, **options)
                except pdk.InvalidEncoder:
                    pass
            return default_add(self, constraint, encoder, conditions, **options)

        pdk.CNF.add_encoding = add_encoding
{find_model}    if getattr(model, "objective_", None) is not None:
        raise ProgramError("type", "an optimisation problem (the model has an objective)")
    constraints = flatlist(model.constraints)
    names, meanings, booleans, channels = [], [], [], []

    def base_name(name, index):
        base = name + "".join("_" + str(i) for i in index)
        if not base[0].isalpha() or base in RESERVED or base.upper() in ("AND", "OR", "NOT", "IMPLIES", "IFF", "XOR", "TRUE", "FALSE"):
            base = "v_" + base
        return base

    def written(name, index):
        return name + "".join("[" + str(i) + "]" for i in index)

    entries = []  # (name, meaning, decision item, value or None for a Boolean)

    def add(name, meaning, item, value=None):
        names.append(name); meanings.append(meaning); entries.append((item, value))

    def size(item, shown):
        if isinstance(item, (bool, np.bool_)) or (isinstance(item, Expression) and item.is_bool()):
            return 1
        if isinstance(item, Expression) or is_num(item):
            lb, ub = (int(item), int(item)) if is_num(item) else map(int, get_bounds(item))
            if ub - lb + 1 > MAX_DOMAIN:
                raise ProgramError("too_large", shown + " has a domain of " + str(ub - lb + 1) + " values, more than " + str(MAX_DOMAIN))
            return 1 if (lb, ub) == (0, 1) else ub - lb + 1
        return 0

    for name in DECISION:
        if name not in ns:
            raise ProgramError("missing_definition", "decision variable " + name + " is not defined by the script")
    total = sum(size(item, name) for name in DECISION for item in np.asarray(ns[name], dtype=object).flat)
    if total > MAX:
        raise ProgramError("too_large", str(total) + " Boolean task variables, more than " + str(MAX))
    for name in DECISION:
        values = np.asarray(ns[name], dtype=object)
        for index in np.ndindex(values.shape):
            item = values[index]
            shown = written(name, index)
            if isinstance(item, (bool, np.bool_)) or (isinstance(item, Expression) and item.is_bool()):
                add(base_name(name, index), shown + " is true", item if isinstance(item, Expression) else BoolVal(bool(item)))
            elif isinstance(item, Expression) or is_num(item):
                lb, ub = (int(item), int(item)) if is_num(item) else map(int, get_bounds(item))
                if (lb, ub) == (0, 1):  # a 0/1 integer is one Boolean
                    add(base_name(name, index), shown + " = 1 (false: " + shown + " = 0)", item, 1)
                    continue
                for value in range(lb, ub + 1):
                    written_value = str(value) if value >= 0 else "m" + str(-value)
                    add(base_name(name, index) + "_eq_" + written_value, shown + " = " + str(value), item, value)
            elif item is not None:
                raise ProgramError("type", shown + " is not a CPMpy variable or expression (" + type(item).__name__ + ")")
    if not names:
        raise ProgramError("missing_definition", "the decision variables hold no CPMpy variables")
    if len(set(names)) != len(names):
        raise ProgramError("type", "two decision variables map to the same Boolean name")
    # Two steps over one shared integer encoding: the model first, then the task variables' links
    # (encoding them together makes the encoder hold both at once, and runs out of memory on some).
    csemap, ivarmap, domains = CSEMap(), dict(), []

    def direct(item):  # a decision integer one-hot encoded (its value literals become task variables)
        if item.name not in ivarmap:
            ivarmap[item.name] = encoding = IntVarEncDirect(item, csemap=csemap)
            values = list(encoding.vars())
            if len(values) > PAIRWISE_UP_TO:  # the encoder's exactly-one (with helper variables)
                domains.extend(encoding.encode_domain_constraint())
                return
            # exactly one value, pairwise: no helper variable for a counter to project away
            domains.append(Operator("or", values) if len(values) > 1 else values[0])
            domains.extend(Operator("or", [~a, ~b]) for i, a in enumerate(values) for b in values[i + 1 :])

    def evaluate(e, grid):  # the expression's values on a grid of its variables' values (0/1 for truth)
        if isinstance(e, (bool, np.bool_)) or is_num(e):
            return int(e)
        if isinstance(e, BoolVal):
            return int(e.value())
        if isinstance(e, NegBoolView):
            return 1 - grid[id(e._bv)]
        if isinstance(e, (_IntVarImpl, _BoolVarImpl)):
            return grid[id(e)]
        name = getattr(e, "name", None)
        if name == "wsum":
            return sum(w * evaluate(x, grid) for w, x in zip(*e.args))
        if name in ("table", "negative_table"):
            columns = [evaluate(x, grid) for x in e.args[0]]
            found = 0
            for row in e.args[1]:
                found = np.maximum(found, np.prod(np.broadcast_arrays(*[c == int(r) for c, r in zip(columns, row)]), axis=0))
            return found if name == "table" else 1 - found
        if name == "alldifferent":
            columns = [evaluate(x, grid) for x in e.args]
            return np.prod(np.broadcast_arrays(1, *[a != b for i, a in enumerate(columns) for b in columns[i + 1 :]]), axis=0)
        args = [evaluate(a, grid) for a in e.args]
        if isinstance(e, Comparison):
            return {{"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
                     ">=": np.greater_equal}}[name](*args).astype(np.int64)
        if type(e) is Operator and name in ("sum", "and", "or", "->", "not", "sub", "-"):
            if name == "sum":
                return sum(args)
            if name == "and":
                return np.prod(np.broadcast_arrays(*args), axis=0)
            if name == "or":
                return np.max(np.broadcast_arrays(*args), axis=0)
            if name == "->":
                return np.maximum(1 - args[0], args[1])
            if name == "not":
                return 1 - args[0]
            return args[0] - args[1] if name == "sub" else -args[0]
        if name == "abs":
            return np.abs(args[0])
        if name == "mul":
            return args[0] * args[1]
        if name in ("min", "max"):
            return (np.minimum if name == "min" else np.maximum).reduce(np.broadcast_arrays(*args))
        if name in ("div", "mod"):  # CPMpy's: the quotient rounds towards zero; nowhere defined by zero
            x, y = np.broadcast_arrays(*args)
            if np.any(y == 0):
                raise ValueError("a divisor can be zero")
            quotient = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))
            return quotient if name == "div" else x - y * quotient
        if name == "pow" and np.all(np.asarray(args[1]) >= 0):
            return np.power(*args)
        raise NotImplementedError(name)

    def encoded(v):  # a Boolean's or a one-hot integer's values and the literal false at each; None: neither
        if type(v) is _BoolVarImpl:
            return [0, 1], [v, ~v]
        if type(v) is _IntVarImpl and isinstance(ivarmap.get(v.name), IntVarEncDirect):
            values = list(range(v.lb, v.ub + 1))
            return values, [~ivarmap[v.name].eq(d) for d in values]
        return None

    def tabulated(e, most=MAX_TUPLES):  # e's value at each combination of its variables' values, with the literals false at
        # each of their values; None: a variable neither Boolean nor one-hot, too many combinations, or an
        # operation not evaluated here
        scope, values, literals = get_variables(e), [], []
        for v in scope:
            found = encoded(v)
            if found is None:
                return None
            values.append(found[0]); literals.append(found[1])
        if not scope or int(np.prod([len(d) for d in values], dtype=float)) > most:
            return None
        axes = np.meshgrid(*[np.array(d, dtype=np.int64) for d in values], indexing="ij", sparse=True)
        try:
            grid = np.broadcast_to(evaluate(e, {{id(v): a for v, a in zip(scope, axes)}}), [len(d) for d in values])
        except (NotImplementedError, TypeError, ValueError, AttributeError, IndexError):
            return None
        return literals, grid

    def forbidden_tuples(constraint, most=MAX_TUPLES):  # a small-scope constraint over one-hot integers (and
        # Booleans) as one clause per forbidden tuple: no helper variables; None: not such a constraint
        found = tabulated(constraint, most) if isinstance(constraint, Expression) else None
        if found is None:
            return None
        literals, holds = found
        forbidden, allowed = np.argwhere(holds == 0), np.argwhere(holds != 0)
        if len(allowed) == 0:
            return [BoolVal(False)]
        if len(forbidden) > MAX_FORBIDDEN and len(allowed) * (len(literals) + 1) <= MAX_FORBIDDEN:
            # too many forbidden combinations but few allowed ones: one helper per allowed combination, true
            # exactly when the variables take it (it implies each value; one of them holds): no new models
            helpers = [cp.boolvar() for _ in range(len(allowed))]
            return [Operator("or", helpers)] + [
                Operator("or", [~h, ~literals[i][k]]) for h, row in zip(helpers, allowed.tolist()) for i, k in enumerate(row)
            ]
        if len(forbidden) > MAX_FORBIDDEN:
            return None
        return [Operator("or", [literals[i][k] for i, k in enumerate(row)]) if len(row) > 1 else literals[0][row[0]]
                for row in forbidden.tolist()]

    def permutation(args):  # all-different one-hot integers with as many values as integers: each value
        # is taken (implied, so the models stay the same; a SAT solver no longer has to find the pigeonhole)
        if not all(type(x) is _IntVarImpl and isinstance(ivarmap.get(x.name), IntVarEncDirect) for x in args):
            return []
        values = sorted(set(d for x in args for d in range(x.lb, x.ub + 1)))
        if len(values) != len(args):
            return []
        return [Operator("or", [ivarmap[x.name].eq(v) for x in args if x.lb <= v <= x.ub]) for v in values]

    class Unflattened(Exception):
        pass

    def rolled_back(build):  # build(constraint), with the auxiliaries it made forgotten when it raises
        # Unflattened (or recurses too deep, a nested expression left to the encoder): None, nothing kept
        def attempt(constraint):
            mark, known = len(domains), set(ivarmap)
            pending.clear()
            try:
                return build(constraint)
            except (Unflattened, RecursionError):
                del domains[mark:]
                for key in set(ivarmap) - known:
                    del ivarmap[key]
                return None
            finally:
                pending.clear()

        return attempt

    counts = []  # (literals, allowed values, modulus or None): literal counts the host encodes

    @rolled_back
    def declared_count(constraint):  # a count of Boolean terms (weights of one size) compared with a constant, or its
        # residue modulo a constant: declared for the host's counter (tools/literal_count.py), which counting
        # by orbits reads as one symmetric constraint; a term that is not a literal gets a Boolean defined
        # equal to it. None (nothing kept): not such a constraint
        if not isinstance(constraint, Comparison) or constraint.name not in ("==", "!=", "<", "<=", ">", ">="):
            raise Unflattened()
        left, right, op = constraint.args[0], constraint.args[1], constraint.name
        if (is_num(left) or counted_integer(left) is not None) and not (is_num(right) or counted_integer(right) is not None):
            left, right, op = right, left, {{"<": ">", "<=": ">=", ">": "<", ">=": "<="}}.get(op, op)
        integer = counted_integer(right)  # compared with a one-hot integer: one guard per value
        if not is_num(right) and integer is None:
            raise Unflattened()
        modulus = None
        if getattr(left, "name", None) == "mod" and is_num(left.args[1]) and int(left.args[1]) > 1:
            modulus, left = int(left.args[1]), left.args[0]
        if getattr(left, "name", None) not in ("sum", "wsum"):
            raise Unflattened()
        weighted, expanding = [], [(1, left)]
        while expanding:  # nested sums (a difference of sums is a weighted sum of them) expanded
            w, e = expanding.pop()
            if getattr(e, "name", None) == "sum":
                expanding += [(w, a) for a in e.args]
            elif getattr(e, "name", None) == "wsum":
                expanding += [(w * int(v), a) for v, a in zip(*e.args)]
            else:
                weighted.append((w, e))
        scale = max((abs(w) for w, term in weighted if not is_num(term)), default=0)
        if any(abs(w) not in (0, scale) for w, term in weighted if not is_num(term)):
            raise Unflattened()  # weights that differ: pindakaas's encoders, not a count of literals
        literals, offset = [], 0  # the sum is scale * (true literals) + offset
        for w, term in reversed(weighted):
            if is_num(term):
                offset += w * int(term)
                continue
            if isinstance(term, Expression) and not term.is_bool():
                if tuple(map(int, get_bounds(term))) != (0, 1):
                    raise Unflattened()
                term = term == 1
            if not isinstance(term, (_BoolVarImpl, NegBoolView)):
                term = defined(term)
            if isinstance(term, BoolVal) or w == 0:
                offset += w * int(isinstance(term, BoolVal) and term.value())
                continue
            if modulus is not None and w < 0:
                raise Unflattened()
            literals.append(term if w > 0 else ~term)  # w x = |w| (1 - x) + w when w < 0
            offset += min(w, 0)
        if len(literals) > MAX_COUNTED or len(literals) < 2 or (modulus is not None and offset < 0):
            raise Unflattened()  # (a negative sum's modulo rounds towards zero in CPMpy: left to the encoder)
        states = modulus or len(literals) + 1  # at most; within what the host encodes (reindex's limits)
        if states > MAX_COUNT_STATES or COUNTED_STATES[0] + len(literals) * states > MAX_COUNT_AUXILIARIES:
            raise Unflattened()
        COUNTED_STATES[0] += len(literals) * states
        compare = {{"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
                    ">=": np.greater_equal}}[op]

        def allowed_against(value):
            if modulus is not None:  # CPMpy's modulo of a non-negative sum: the residue
                return [r for r in range(modulus) if compare((scale * r + offset) % modulus, value)]
            return [t for t in range(len(literals) + 1) if compare(scale * t + offset, value)]

        if integer is None:
            counts.append((literals, allowed_against(int(right)), modulus, []))
            return list(pending)
        guards = [(ivarmap[integer.name].eq(d), allowed_against(d)) for d in range(integer.lb, integer.ub + 1)]
        allowed = sorted(set(a for _, values in guards for a in values))  # the integer takes one of its values
        counts.append((literals, allowed, modulus, guards))
        return list(pending)

    def counted_integer(e):  # e when an integer one-hot encoded here (a sum compared with it is a guarded count)
        if type(e) is _IntVarImpl and isinstance(ivarmap.get(e.name), IntVarEncDirect):
            return e
        return None

    def compared_with_sum(constraint):  # the integer a sum of terms is compared with, else None
        if not isinstance(constraint, Comparison) or constraint.name not in ("==", "!=", "<", "<=", ">", ">="):
            return None
        for e, other in (constraint.args, constraint.args[::-1]):
            if type(e) is _IntVarImpl and e.ub - e.lb < MAX_DOMAIN and getattr(other, "name", None) in ("sum", "wsum", "mod"):
                return e
        return None

    pending = []  # the clauses of the auxiliary variables that one constraint's flattening introduced

    def defined(e):  # a Boolean or one-hot integer equal to e, a function of few one-hot integers and Booleans
        # (its domain: the values e takes), or a constant: one clause per combination of the arguments' values,
        # implying e's value there, so its value follows from theirs and the models stay the same
        found = tabulated(e)
        if found is None:
            raise Unflattened()
        literals, grid = found
        low, high = int(grid.min()), int(grid.max())
        if low == high:
            return BoolVal(bool(low)) if e.is_bool() else low
        if e.is_bool():
            aux = cp.boolvar()
            true_at = {{0: ~aux, 1: aux}}
        else:
            if high - low + 1 > MAX_DOMAIN:
                raise Unflattened()
            aux = cp.intvar(low, high)
            direct(aux)
            true_at = {{d: ivarmap[aux.name].eq(d) for d in range(low, high + 1)}}
        for combination in np.ndindex(grid.shape):
            pending.append(Operator("or", [literals[i][k] for i, k in enumerate(combination)] + [true_at[int(grid[combination])]]))
        return aux

    def named(e):  # e when a variable or a constant, else an auxiliary variable defined equal to it
        if is_num(e) or isinstance(e, (bool, np.bool_, BoolVal, NegBoolView, _BoolVarImpl, _IntVarImpl)):
            return e
        if not isinstance(e, Expression):
            raise Unflattened()
        kind = e.name
        if kind == "element":  # one implication per index value: (index = k) -> (aux = array[k])
            array, index = e.args
            index = named(index)
            low, high = (int(index), int(index)) if is_num(index) else map(int, get_bounds(index))
            if low < 0 or high >= len(array):  # CPMpy's relational semantics for an index out of range: not here
                raise Unflattened()
            items = [named(array[k]) for k in range(low, high + 1)]
            if low == high:
                return items[0]
            bounds = [(int(x), int(x)) if is_num(x) else tuple(map(int, get_bounds(x))) for x in items]
            low_value, high_value = min(b[0] for b in bounds), max(b[1] for b in bounds)
            if high_value - low_value + 1 > MAX_DOMAIN:
                raise Unflattened()
            aux = cp.intvar(low_value, high_value)
            direct(aux)
            for k, x in enumerate(items, start=low):
                found = forbidden_tuples(Operator("->", [index == k, aux == x]))
                if found is None:
                    raise Unflattened()
                pending.extend(found)
            return aux
        if kind == "wsum":  # pairwise, left to right: each partial sum an auxiliary integer
            weights, terms = e.args
            terms = [named(x) for x in terms]
            total = defined(Operator("wsum", [list(weights[:2]), terms[:2]])) if len(terms) > 1 else None
            if total is None:
                return defined(Operator("wsum", [list(weights), terms]))
            for w, x in zip(weights[2:], terms[2:]):
                total = defined(Operator("wsum", [[1, w], [total, x]]))
            return total
        if any(isinstance(a, (list, tuple, np.ndarray)) for a in e.args):
            raise Unflattened()
        args = [named(a) for a in e.args]
        if kind in ("sum", "and", "or", "min", "max") and len(args) > 2:
            total = args[0]
            for x in args[1:]:
                part = copy.copy(e)
                part.update_args([total, x])
                total = named(part)
            return total
        rebuilt = copy.copy(e)
        rebuilt.update_args(args)
        return defined(rebuilt)

    @rolled_back
    def flattened(constraint):  # a constraint over one-hot integers and Booleans whatever its scope, through
        # auxiliary one-hot variables each defined by a small table; None (nothing kept): not such a constraint
        kind = getattr(constraint, "name", None)
        if kind == "and":
            parts = [flattened(c) for c in constraint.args]
            if any(p is None for p in parts):
                raise Unflattened()
            return [c for p in parts for c in p]
        if kind == "alldifferent":
            args = [named(a) for a in constraint.args]
            pairs = [forbidden_tuples(a != b) for i, a in enumerate(args) for b in args[i + 1 :]]
            if any(p is None for p in pairs):
                raise Unflattened()
            return pending + [c for p in pairs for c in p] + permutation(args)
        if kind == "or":
            disjuncts = [named(a) for a in constraint.args]
            if any(isinstance(a, BoolVal) and a.value() for a in disjuncts):
                return list(pending)
            disjuncts = [a for a in disjuncts if not isinstance(a, BoolVal)]
            return pending + [Operator("or", disjuncts) if disjuncts else BoolVal(False)]
        rebuilt = copy.copy(constraint)
        rebuilt.update_args([named(a) for a in constraint.args])
        found = forbidden_tuples(rebuilt)
        if found is None:
            raise Unflattened()
        return pending + found

    integers = [item for item, value in entries if value is not None and type(item) is _IntVarImpl]
    tables = []
    if ONE_HOT:  # before the model's own encoding, which then uses it
        for item in integers:
            direct(item)
        if ONE_HOT == "all":  # every integer of small domain, and constraints flattened onto them
            for item in get_variables(constraints):
                if type(item) is _IntVarImpl and item.ub - item.lb < MAX_DOMAIN:
                    direct(item)
        if ONE_HOT == "counts":  # an integer a sum is compared with: one-hot, its values the count's guards
            for constraint in constraints:
                item = compared_with_sum(constraint)
                if item is not None:
                    direct(item)
        kept = []
        for constraint in constraints:
            if getattr(constraint, "name", None) == "alldifferent":  # pairwise, if each pair is small
                pairs = [forbidden_tuples(a != b) for i, a in enumerate(constraint.args) for b in constraint.args[i + 1 :]]
                found = None if any(p is None for p in pairs) else [c for p in pairs for c in p]
                tables += permutation(constraint.args)
            elif ONE_HOT == "all":  # a small table, else flattened, else a large table
                found = forbidden_tuples(constraint, min(TABLE_UP_TO, MAX_TUPLES))
                found = flattened(constraint) if found is None else found
                found = forbidden_tuples(constraint) if found is None else found
            else:
                found = forbidden_tuples(constraint)
                found = declared_count(constraint) if found is None and ONE_HOT == "counts" else found
            if found is None:
                kept.append(constraint)
            else:
                tables += found
        constraints = kept
    clauses = to_cnf(domains + constraints, csemap=csemap, ivarmap=ivarmap) + tables
    domains.clear()
    for item in integers:  # an integer no constraint mentions has no encoding yet
        direct(item)
    used = set()
    for item, value in entries:
        if value is None:  # a Boolean: the variable itself where it is one
            if type(item) is _BoolVarImpl and id(item) not in used:
                used.add(id(item)); booleans.append(item)
                continue
            b = cp.boolvar(); booleans.append(b); channels.append(b == item)
        elif type(item) is not _IntVarImpl:  # an integer expression: linked through the encoder
            b = cp.boolvar(); booleans.append(b); channels.append(b == (item == value))
        else:  # x = v is a conjunction of the integer's encoding literals (one for one-hot)
            found = ivarmap[item.name].eq(value)
            found = [found] if isinstance(found, Expression) else list(found)
            conjunction = [l for l in found if not (isinstance(l, BoolVal) and l.value())]
            if len(conjunction) == 1 and type(conjunction[0]) is _BoolVarImpl and id(conjunction[0]) not in used:
                used.add(id(conjunction[0])); booleans.append(conjunction[0])
                continue
            b = cp.boolvar(); booleans.append(b)
            if any(isinstance(l, BoolVal) for l in conjunction):
                clauses.append(~b)
                continue
            clauses += [Operator("or", [~b, l]) for l in conjunction]
            clauses.append(Operator("or", [b] + [~l for l in conjunction]))
    if domains or channels:
        clauses += to_cnf(domains + channels, csemap=csemap, ivarmap=ivarmap)
    variables = get_variables(clauses)
    ids = {{id(v): i for i, v in enumerate(variables, start=1)}}
    counted = [x._bv if isinstance(x, NegBoolView) else x for literals, _, _, guards in counts
               for x in literals + [g for g, _ in guards]]
    for b in booleans + counted:
        if id(b) not in ids:
            variables.append(b)
            ids[id(b)] = len(variables)

    def literal(x):
        if isinstance(x, NegBoolView):
            return -ids[id(x._bv)]
        if isinstance(x, _BoolVarImpl):
            return ids[id(x)]
        raise ProgramError("runtime", "unexpected literal in the CNF: " + str(x)[:60])

    lines = []
    for clause in clauses:
        if isinstance(clause, (bool, np.bool_, BoolVal)):
            if not bool(clause if not isinstance(clause, BoolVal) else clause.value()):
                lines.append("0")
            continue
        if isinstance(clause, Operator) and clause.name == "or":
            lines.append(" ".join(str(literal(x)) for x in clause.args) + " 0")
        else:
            lines.append(str(literal(clause)) + " 0")
    dimacs = "\\n".join(["p cnf " + str(len(variables)) + " " + str(len(lines))] + lines) + "\\n"
    return {{"dimacs": dimacs, "task_ids": {{n: [ids[id(b)]] for n, b in zip(names, booleans)}}, "names": names,
            "meanings": meanings, "counts": [{{"literals": [literal(x) for x in literals], "allowed": allowed,
            "modulus": modulus, "guards": [[literal(g), values] for g, values in guards]}}
            for literals, allowed, modulus, guards in counts]}}
"""


SOLUTIONS = """
def collect(ns, submitted):
    import time
    import numpy as np
    import cpmpy as cp
    from cpmpy.expressions.core import Expression
    from cpmpy.expressions.utils import get_bounds, is_num
    from cpmpy.solvers.ortools import CPM_ortools
    from cpmpy.solvers.solver_interface import ExitStatus
    from cpmpy.transformations.get_variables import get_variables

{find_model}    layout = []  # each decision item with the values its task variables stand for, in COLLECT's order
    for name in {decision!r}:
        for item in np.asarray(ns[name], dtype=object).flat:
            if isinstance(item, (bool, np.bool_)) or (isinstance(item, Expression) and item.is_bool()):
                layout.append((item, None))
            elif isinstance(item, Expression) or is_num(item):
                lb, ub = (int(item), int(item)) if is_num(item) else map(int, get_bounds(item))
                layout.append((item, None if (lb, ub) == (0, 1) else range(lb, ub + 1)))
    items = [item for item, _ in layout if isinstance(item, Expression)]
    CPM_ortools.solve, CPM_ortools.solveAll = ns["_ORIGINAL_SOLVE"][CPM_ortools]  # the script has ended
    solver = CPM_ortools(model)
    free = get_variables(items)  # decision variables no constraint mentions still count
    solver.solver_vars(free)
    solver.user_vars.update(free)
    seen = {{}}

    def record():  # one solution as the integer whose bit i is task variable i + 1
        bits, position = 0, 0
        for item, values in layout:
            value = int(item.value()) if isinstance(item, Expression) else int(item)
            if values is None:
                bits |= (value & 1) << position
                position += 1
            else:
                if value in values:
                    bits |= 1 << (position + value - values.start)
                position += len(values)
        seen[bits] = None

    def blocked(bits):  # the constraint that excludes one projected solution
        differ, position = [], 0
        for item, values in layout:
            if values is None:
                if isinstance(item, Expression):
                    differ.append(item != ((bits >> position) & 1))
                position += 1
            else:
                if isinstance(item, Expression):
                    chosen = [v for i, v in enumerate(values) if (bits >> (position + i)) & 1]
                    differ.append(item != chosen[0] if chosen else cp.BoolVal(True))
                position += len(values)
        return cp.any(differ)

    raw_limit = {limit} * 8  # CP-SAT lists every variable's values: projected duplicates are dropped here
    solver.solveAll(display=record, time_limit={seconds}, solution_limit=raw_limit)
    complete = solver.status().exitstatus == ExitStatus.OPTIMAL and len(seen) <= {limit}
    if not complete and len(seen) <= min({blocking_up_to}, {limit}):
        # The enumeration kept finding the same few projected solutions (other variables differing):
        # the rest are found one solve at a time, each found one excluded.
        for bits in seen:
            solver += blocked(bits)
        end = time.monotonic() + {blocking_seconds}
        while len(seen) <= min({blocking_up_to}, {limit}) and time.monotonic() < end:
            left = end - time.monotonic()
            if not solver.solve(time_limit=left, num_workers=1, enumerate_all_solutions=False):
                complete = solver.status().exitstatus == ExitStatus.UNSATISFIABLE
                break
            before = len(seen)
            record()
            if len(seen) == before:
                break  # a solution the blocking should have excluded: not to be trusted
            solver += blocked(list(seen)[-1])
    solutions = [format(bits, "x") for bits in list(seen)[: {limit}]]
    return {{"solutions": solutions, "complete": complete}}
"""
SOLUTIONS_LIMIT = 200_000  # OR-Tools lists at most this many projected solutions of a model (Steiner
# triples of 7 points: 151,200, listed in 48 s)
SOLUTIONS_LISTING_S = 120.0  # within this many seconds (the sandbox's CPU limit is 210 s)
# An enumeration that ran out of time having found at most this many projected solutions (it enumerates
# the other variables too: a handshaking puzzle's one answer, with every handshake matrix behind it) goes
# on by blocking: one solve per projected solution, within this many more seconds.
SOLUTIONS_BLOCKING_UP_TO = 1_000
SOLUTIONS_BLOCKING_S = 60.0
# A listing is certified when its solutions times the task variables stay below this (each bit is a
# Python integer in a tuple, then a literal in each prover): Steiner triples, 151,200 × 49 = 7.4 million.
CERTIFY_MAX_BITS = 50_000_000
SOLUTIONS_LIMITS = SandboxLimits(cpu_seconds=210.0, wall_seconds=400.0, result_bytes=96 << 20)


def solutions(problem: Problem, limit: int = SOLUTIONS_LIMIT, seconds: float | None = None) -> dict[str, Any]:
    """The original model's solutions, projected on its decision variables, listed by OR-Tools'
    CP-SAT within ``seconds`` (default :data:`SOLUTIONS_LISTING_S`), each as the integer whose bit i is task variable i + 1 of the
    conversion: {"solutions", "complete"} or {"error"}. Runs in the sandbox. Their number is the
    check of a ground truth's model count in the tests; the solutions themselves seed the count of
    a ground truth ``auto`` cannot count (:func:`autonesy.tools.counting.count_from_candidates`
    certifies them against the CNF)."""
    from autonesy.tools.sandbox import run_program

    result = run_program(
        WRAPPER.format(body=textwrap.indent(problem.source, "    ")),
        setup=SETUP,
        collect=SOLUTIONS.format(
            find_model=FIND_MODEL,
            decision=list(problem.decision_variables),
            limit=int(limit),
            seconds=float(seconds or SOLUTIONS_LISTING_S),
            blocking_up_to=SOLUTIONS_BLOCKING_UP_TO,
            blocking_seconds=SOLUTIONS_BLOCKING_S,
        ),
        preload=("cpmpy", "numpy", "ortools"),
        limits=SOLUTIONS_LIMITS,
    )
    if not result.ok:
        message = (result.message or "").splitlines()[0][:200] if result.message else ""
        return {"error": f"{result.error_kind}: {message}"}
    found = result.result
    if (
        not isinstance(found, dict)
        or not isinstance(found.get("solutions"), list)
        or len(found["solutions"]) > limit  # the program ran first, in the same process: the cap is checked here
        or not all(isinstance(h, str) and re.fullmatch(r"[0-9a-f]{1,600}", h) for h in found["solutions"])
        or not isinstance(found.get("complete"), bool)
    ):
        return {"error": f"result: the solutions are not a list of at most {limit} hexadecimal strings"}
    return {"solutions": [int(h, 16) for h in found["solutions"]], "complete": found["complete"]}


def solution_count(problem: Problem, limit: int = SOLUTIONS_LIMIT) -> dict[str, Any]:
    """OR-Tools' count of the original model's projected solutions: {"count", "complete"} or {"error"}."""
    found = solutions(problem, limit)
    return found if "error" in found else {"count": len(found["solutions"]), "complete": found["complete"]}


def _cache_dir() -> Path:
    return cache_dir("dcpbench")


def _conversion_material(problem: Problem) -> str:
    """What a cached conversion answers: the problem and every setting the conversion depends on."""
    return json.dumps(
        [
            CONVERSION_VERSION,
            MAX_TASK_VARS,
            MAX_DOMAIN,
            repr(CONVERSION_LIMITS),
            MAX_TUPLES,
            TABLE_UP_TO,
            MAX_FORBIDDEN,
            PAIRWISE_UP_TO,
            TRUTH_COUNT_LIMIT_S,
            TRUTH_LAST_TRY_S,
            problem.source,
            list(problem.decision_variables),
        ]
    )


def _failure(error_kind: str | None, message: str, limits) -> str:
    """One line saying why a conversion failed; a native library's abort on memory is named as such."""
    text = message or ""
    memory = f"{limits.memory_bytes / 2**30:g} GiB"
    if error_kind in ("runtime", "resource") and re.search(
        r"bad_alloc|out of memory|Cannot allocate|MemoryError|memory allocation", text
    ):
        return f"out of memory: converting the model needs more than the sandbox's {memory}"
    if "SIGABRT" in text:
        return f"out of memory (most likely): the CNF encoder aborted (SIGABRT) within the sandbox's {memory}"
    if "PanicException" in text:
        return "the CNF encoder (pindakaas) failed on this model: " + text.splitlines()[0][:160]
    return f"{error_kind}: {text.splitlines()[0][:200] if text else ''}"


def cached(problem: Problem) -> dict[str, Any] | None:
    """The problem's known outcome (left out before running, or converted earlier), else None."""
    reason = static_reason(problem)
    if reason:
        return {"ok": False, "reason": reason}
    # The cache directory may be written by others: an entry is believed only when this user made it for this
    # problem (tools/cache_entries.py), and only in the shape a conversion has.
    known = read_entry(_cache_dir(), CONVERSION_ENTRY, CONVERSION_VERSION, _conversion_material(problem))
    if known is None or known.get("ok") not in (True, False):
        return None
    if known["ok"] and not (
        isinstance(known.get("names"), list)
        and isinstance(known.get("meanings"), list)
        and isinstance(known.get("data"), dict)
        and (isinstance(known.get("unscorable"), str) or _is_count(known.get("truth")))
    ):
        return None
    if known["ok"] and "truth" not in known and known.get("counting") != _counting_key():
        return None  # unscorable by an older counting: a stronger one may count it (an exact count stays)
    return known


def _counting_key() -> str:
    """What an unscorable verdict depends on beyond the conversion (recorded with it): the counting
    routes' version (a cached unscorable verdict of older routes is decided again, on the cached CNF),
    OR-Tools' listing and which conversion the last try takes."""
    from autonesy.tools.counting import ROUTES_VERSION

    listing = [SOLUTIONS_LIMIT, SOLUTIONS_LISTING_S, SOLUTIONS_BLOCKING_UP_TO, SOLUTIONS_BLOCKING_S]
    return json.dumps([ROUTES_VERSION, *listing, CERTIFY_MAX_BITS, LAST_TRY_RULE])


LAST_TRY_RULE = 2  # which conversion the last try takes (_last_try): 2, the declared literal counts first


def _encoding_name(one_hot: str | None, encoder: str | None) -> str:
    integers = {
        "decision": "one-hot decision integers",
        "counts": "one-hot decision integers, sums of Booleans as literal counts",
        "all": "all integers one-hot, flattened",
    }
    return f"{integers.get(one_hot or '', 'CPMpy-chosen integers')}, {(encoder or 'default').lower()} linear encoders"


def _is_count(truth: Any) -> bool:
    return (
        isinstance(truth, dict)
        and type(truth.get("count")) is int
        and isinstance(truth.get("method"), str)
        and isinstance(truth.get("seconds"), (int, float))
    )


def _encode(problem: Problem, linear_encoder: str | None, one_hot: str | None = "decision") -> dict[str, Any]:
    """One conversion in the sandbox, with the integers ``one_hot`` names ("decision", "all" or None)
    one-hot, and pindakaas's default encoders or ``linear_encoder`` for the linear constraints:
    {"ok", "names", "meanings", "data"} or {"ok": False, "reason", "retry"}."""
    from autonesy.tools.sandbox import run_program

    limits = CONVERSION_LIMITS
    program = WRAPPER.format(body=textwrap.indent(problem.source, "    "))
    collect = COLLECT.format(
        decision=list(problem.decision_variables),
        reserved=sorted(RESERVED_NAMES),
        max_vars=MAX_TASK_VARS,
        max_domain=MAX_DOMAIN,
        linear_encoder=linear_encoder,
        one_hot=one_hot,
        max_tuples=MAX_TUPLES,
        table_up_to=TABLE_UP_TO,
        max_forbidden=MAX_FORBIDDEN,
        pairwise_up_to=PAIRWISE_UP_TO,
        max_counted=MAX_COUNTED,
        max_count_states=MAX_STATES,
        max_count_auxiliaries=MAX_COUNT_AUXILIARIES,
        find_model=FIND_MODEL,
    )
    result = run_program(
        program,
        setup=SETUP,
        collect=collect,
        preload=("cpmpy", "numpy", "cpmpy.transformations.to_cnf", "pindakaas"),
        limits=limits,
        prewarm=True,
    )
    if result.ok:
        return {
            "ok": True,
            "names": result.result["names"],
            "meanings": result.result["meanings"],
            "data": {k: result.result[k] for k in ("dimacs", "task_ids", "counts") if k in result.result},
            "encoder": linear_encoder or "default",
            "encoding": _encoding_name(one_hot, linear_encoder),
        }
    if result.error_kind == "internal":
        raise AdapterError(f"dcpbench {problem.id}: the sandbox failed: {result.message}")
    reason = _failure(result.error_kind, result.message, limits)
    # The encoder's blow-ups (memory, CPU time) are worth a second try with another encoder.
    return {"ok": False, "reason": reason, "retry": reason.startswith("out of memory") or "CPU" in reason}


def convert(problem: Problem) -> dict[str, Any]:
    """Run the problem's script in the sandbox: {"ok", "names", "meanings", "data", "truth" or "unscorable"}
    or {"ok": False, "reason"}.

    The encodings of :data:`ENCODINGS` in turn, until one converts and its ground truth is counted
    exactly: the next after a blow-up (memory, CPU time) or an uncounted ground truth. Uncounted
    under every encoding: one ground truth is tried once more, within :data:`TRUTH_LAST_TRY_S`
    (:func:`_last_try`); still uncounted, the converted one with the fewest variables is kept and the
    problem is unscorable with every try's reason."""
    known = cached(problem)
    if known is not None:
        return known
    reasons: list[str] = []
    kept: dict[str, Any] | None = None
    declared: dict[str, Any] | None = None  # the conversion with sums of Booleans declared as literal counts
    listed: dict[str, Any] = {}

    def listed_solutions() -> dict[str, Any]:  # once per problem, whatever the encoding
        if not listed:
            listed.update(solutions(problem))
        return listed

    for one_hot, encoder in ENCODINGS:
        outcome = _encode(problem, encoder, one_hot)
        retry = outcome.pop("retry", False) or one_hot == "counts"  # the encodings after it do not need it
        if one_hot == "counts" and outcome["ok"] and not outcome["data"].get("counts"):
            reasons.append(f"{_encoding_name(one_hot, encoder)}: no sum of Booleans to declare (the first CNF again)")
            continue
        if outcome["ok"]:
            outcome = _checked(outcome, listed_solutions)
            retry = "unscorable" in outcome
        if "truth" in outcome:
            break
        reasons.append(f"{_encoding_name(one_hot, encoder)}: {outcome.get('reason') or outcome.get('unscorable')}")
        if outcome["ok"] and one_hot == "counts":
            declared = outcome
        if outcome["ok"] and (kept is None or _variables(outcome) < _variables(kept)):
            kept = outcome
        if not retry:
            break
    if "truth" not in outcome and kept is not None:
        tried = _last_try(kept, declared)
        last = _checked({k: v for k, v in tried.items() if k != "unscorable"}, listed_solutions, last_try=True)
        if "truth" in last:
            outcome = last
        else:
            reasons.append(f"again, within {TRUTH_LAST_TRY_S:g} s: {last.get('unscorable') or last.get('reason')}")
    if "truth" not in outcome:
        outcome = kept or outcome
        if len(reasons) > 1:
            outcome["unscorable" if outcome["ok"] else "reason"] = "; ".join(reasons)
    outcome["counting"] = _counting_key()
    # cache every outcome (wall-clock timeouts too: the kept set must not change with the load)
    write_entry(_cache_dir(), CONVERSION_ENTRY, CONVERSION_VERSION, _conversion_material(problem), outcome)
    return outcome


def _last_try(fewest: dict[str, Any], declared: dict[str, Any] | None) -> dict[str, Any]:
    """The conversion whose ground truth gets the last try (the time goes where the quick tries showed it might
    pay: one problem, one CNF): the one with sums of Booleans declared as literal counts when there is one,
    since the lifted and orbit routes read those counts and apply to no other encoding (crew's 2.07e20 schedules
    by lifting, the (9, 12, 4, 3, 1) BIBD's 4.0e11 matrices by orbits: each counted on it within the first
    limit in one cold run, just out of it in the next on a loaded machine, while the smallest CNF, the plain
    one-hot encoding, gives those routes nothing to read); else the one with the fewest variables."""
    return declared if declared is not None else fewest


def _variables(outcome: dict[str, Any]) -> int:
    """The number of variables of a checked outcome's ground truth (its literal counts' states included:
    the sandbox's DIMACS header does not hold them)."""
    return int(outcome["variables"])


def _truth_verdict(truth, listed_solutions: Callable[[], dict[str, Any]], last_try: bool = False) -> dict[str, Any]:
    """The ground truth's exact model count ({"truth": {"count", "method", "seconds"}}) or why it is
    unscorable ({"unscorable": reason}): decided once, when the problem is converted, and cached with
    the conversion, so that an answer not proved equivalent is known to get no metric before it is
    scored. The count also lands in the count store, where scoring reads it.

    ``auto`` first; when it runs out of time, the original model's solutions as OR-Tools lists them
    (``listed_solutions()``), certified against the CNF (:func:`_seeded_verdict`). The
    ``last_try``, within :data:`TRUTH_LAST_TRY_S`, takes one route: the certification when the list is
    complete (a few solutions, whatever the CNF's size), else ``auto``."""
    from autonesy.tools.count_store import stored_count
    from autonesy.tools.counting import CountTimedOut, count_models

    limit = TRUTH_LAST_TRY_S if last_try else TRUTH_COUNT_LIMIT_S
    if last_try and listed_solutions().get("complete"):
        return _seeded_verdict(
            truth, listed_solutions(), f"auto count timed out after {TRUTH_COUNT_LIMIT_S:g} s", limit
        )
    try:
        result = stored_count(truth, lambda cnf: count_models(cnf, time_limit_s=limit), time_limit_s=limit)
    except CountTimedOut as error:
        if last_try:
            return {"unscorable": f"the ground truth's exact model count ran out of time: {error}"}
        return _seeded_verdict(truth, listed_solutions(), str(error), limit)
    if not result.exact:
        return {"unscorable": f"only an approximate count within {limit:g} s ({result.method}: ~{result.value})"}
    seconds = result.params.get("counted_in_s", result.seconds)
    return {"truth": {"count": result.value, "method": result.method, "seconds": seconds}}


def _seeded_verdict(truth, listed: dict[str, Any], why_not_auto: str, limit: float) -> dict[str, Any]:
    """The ground truth counted from OR-Tools' complete list of the model's solutions, each checked to
    extend to a model of the CNF and the CNF shown to have no other (CaDiCaL and CP-SAT race), else why
    it is unscorable: ``why_not_auto`` and what OR-Tools or the certification said."""
    from autonesy.tools.count_store import stored_count
    from autonesy.tools.counting import CounterFailed, CountTimedOut, count_from_candidates

    lead = f"the ground truth's exact model count ran out of time: {why_not_auto}"
    if "error" in listed:
        return {"unscorable": f"{lead}, and OR-Tools could not list the model's solutions ({listed['error']})"}
    if not listed["complete"]:
        shown = len(listed["solutions"])
        listed_some = f"OR-Tools listed {shown} solution{'' if shown == 1 else 's'}"
        if shown >= SOLUTIONS_LIMIT:
            return {"unscorable": f"{lead}, and {listed_some}, the most it may list, and had not finished"}
        return {"unscorable": f"{lead}, and {listed_some} but not all within {SOLUTIONS_LISTING_S:g} s"}
    n = truth.num_task_vars
    if len(listed["solutions"]) * n > CERTIFY_MAX_BITS:
        return {
            "unscorable": f"{lead}, and OR-Tools' {len(listed['solutions'])} solutions over {n} task variables "
            f"are more than the certification takes ({CERTIFY_MAX_BITS} bits)"
        }
    candidates = [tuple((bits >> i) & 1 for i in range(n)) for bits in listed["solutions"] if bits >> n == 0]
    try:
        result = stored_count(
            truth,
            lambda cnf: count_from_candidates(cnf, candidates, limit, "OR-Tools CP-SAT"),
            method="seeded-enumeration",
            time_limit_s=limit,
        )
    except CountTimedOut:
        return {"unscorable": f"{lead}, and certifying OR-Tools' {len(candidates)} solutions ran out of {limit:g} s"}
    except CounterFailed as error:
        return {"unscorable": f"{lead}, and certifying OR-Tools' {len(candidates)} solutions failed: {error}"}
    seconds = result.params.get("counted_in_s", result.seconds)
    return {"truth": {"count": result.value, "method": result.method, "seconds": seconds}}


def _checked(
    outcome: dict[str, Any], listed_solutions: Callable[[], dict[str, Any]], last_try: bool = False
) -> dict[str, Any]:
    """A converted outcome the task can be built from, with its ground truth's verdict, else a left-out
    one with the reason (a CNF past the clause cap fails here, once, instead of when a sweep loads the task)."""
    from autonesy.tools.formats.base import FormatError
    from autonesy.tools.formats.cpmpy_program import reindex

    try:
        truth = reindex(outcome["data"], list(outcome["names"]))
    except FormatError as error:
        return {"ok": False, "reason": f"{error.kind}: {error.message}"}
    return {**outcome, "variables": truth.num_vars, **_truth_verdict(truth, listed_solutions, last_try)}


def _stamp(path: Path) -> tuple:
    """What a cached read depends on: the files' names, sizes and modification times."""
    if path.is_file():
        files = [path]
    else:
        root = path / "dataset" if (path / "dataset").is_dir() else path
        files = (
            sorted(root.glob("*.cpmpy.py"))
            + sorted(root.glob("*.json"))
            + sorted(root.glob("*/*.cpmpy.py"))
            + sorted(root.glob("*/*.json"))
        )
    return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)


@lru_cache(maxsize=8)
def _problems(path: Path, stamp: tuple) -> dict[str, Problem]:
    return problems(path)


def _all(path: Path) -> dict[str, Problem]:
    path = Path(path)
    if not path.exists():
        raise AdapterError(f"dcpbench: {path} does not exist")
    return _problems(path, _stamp(path))


def survey(
    path: Path, progress: Callable[[int, int, str, dict[str, Any]], None] | None = None, workers: int | None = None
) -> dict[str, dict[str, Any]]:
    """Every problem's conversion outcome (runs the sandbox for uncached ones, ``workers`` at a time).

    ``progress(done, total, problem, outcome)`` is called as each uncached problem finishes."""
    found = _all(path)
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    known = {key: cached(problem) for key, problem in found.items()}
    outcomes = {key: outcome for key, outcome in known.items() if outcome is not None}
    todo = {key: problem for key, problem in found.items() if key not in outcomes}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(convert, problem): key for key, problem in todo.items()}
        for done, future in enumerate(as_completed(futures), start=1):
            key = futures[future]
            outcomes[key] = future.result()
            if progress is not None:
                progress(done, len(todo), key, outcomes[key])
    return {key: outcomes[key] for key in found}


def _report_to_stderr(done: int, total: int, key: str, outcome: dict[str, Any]) -> None:
    verdict = "ok" if outcome.get("ok") else f"left out: {outcome.get('reason')}"
    print(terminal_line(f"dcpbench: {done}/{total} {key}: {verdict}"), file=sys.stderr, flush=True)


def left_out(path: Path) -> dict[str, str]:
    """Problems not turned into tasks, with the reason (optimisation, too large, failing script…)."""
    return {key: str(outcome.get("reason")) for key, outcome in survey(path).items() if not outcome.get("ok")}


def keys(path: Path) -> list[str]:
    """Ids of the kept problems (satisfaction problems that convert within the limits); reports
    each conversion on stderr while uncached ones run."""
    return [key for key, outcome in survey(path, progress=_report_to_stderr).items() if outcome.get("ok")]


def _verdict_text(outcome: dict[str, Any]) -> str:
    if "truth" in outcome:
        truth = outcome["truth"]
        return f"ground truth: {truth['count']} models (exact, {truth['method']})"
    return f"unscorable: {outcome.get('unscorable')} (an answer gets a metric only when proved equivalent)"


def truth_count(path: Path, key: str) -> dict[str, Any]:
    """The kept problem's ground-truth verdict, decided when it was converted: {"count", "method",
    "seconds"} (exact), or {"unscorable": why}: an answer that is not proved equivalent gets no metric."""
    found = _all(path)
    if key not in found:
        raise AdapterError(f"dcpbench:{path}#{key}: no such problem")
    outcome = convert(found[key])
    if not outcome.get("ok"):
        raise AdapterError(f"dcpbench:{path}#{key}: left out ({outcome.get('reason')})")
    return dict(outcome["truth"]) if "truth" in outcome else {"unscorable": str(outcome.get("unscorable"))}


def unscorable(path: Path) -> dict[str, str]:
    """Kept problems whose ground truth could not be counted exactly (see :func:`convert`), with the reason."""
    outcomes = survey(path)
    return {key: str(o["unscorable"]) for key, o in outcomes.items() if o.get("ok") and "unscorable" in o}


@lru_cache(maxsize=256)
def _task(path: Path, key: str, stamp: tuple) -> Task:
    found = _problems(path, stamp)
    where = f"dcpbench:{path}#{key}"
    if key not in found:
        raise AdapterError(f"{where}: no such problem")
    problem = found[key]
    outcome = convert(problem)
    if not outcome.get("ok"):
        raise AdapterError(f"{where}: left out ({outcome.get('reason')})")
    from autonesy.tools.formats.base import FormatError
    from autonesy.tools.formats.cpmpy_program import reindex

    names = list(outcome["names"])
    try:
        cnf = reindex(outcome["data"], names)
    except FormatError as error:  # a cache file written by an older version, or by someone else
        raise AdapterError(f"{where}: left out ({error.kind}: {error.message})") from None
    statement, request = split_print_request(problem.description)
    role = roles(request)

    def meaning(text: str) -> str:
        name = re.match(r"[A-Za-z_]\w*", text)
        return f"{text} ({name.group()}: {role[name.group()]})" if name and name.group() in role else text

    variables = tuple(Variable(n, meaning(m)) for n, m in zip(names, outcome["meanings"]))
    if request:
        statement += (
            "\n\nDecision variables (the problem's own request for a solution; it says what their "
            f"values and indices mean):\n{request}"
        )
    data = f"\n\nInstance data:\n{problem.data}" if problem.data else ""
    integers = any("_eq_" in n for n in names)
    encoding = (
        "\n\nBoolean encoding: each integer decision variable is represented by one Boolean variable per value "
        "of its domain (the variable named x_i_eq_v is true exactly when x[i] = v); exactly one of them is "
        "true for each integer variable."
        if integers
        else ""
    )
    if any(m.split(" (")[0].endswith("= 1") and "_eq_" not in n for n, m in zip(names, outcome["meanings"])):
        encoding += (
            "\n\nA decision variable with values 0 and 1 is one Boolean variable, true exactly when its value is 1."
        )
    metadata = TaskMetadata(
        source_dataset=f"DCP-Bench-Open, problem {problem.id} ({problem.origin})",
        citation=CITATION,
        licence="as distributed with DCP-Bench-Open (see its LICENSE)",
        published_clauses=None,
        data_provenance="none",
        equivalence_method="none",
        design_notes=(
            f"decision variables {', '.join(problem.decision_variables)} one-hot encoded into {len(names)} "
            f"Boolean variables; ground truth = CPMpy's CNF of the model + channelling "
            f"({len(cnf.clauses)} clauses, {cnf.num_aux_vars} auxiliary variables); {_verdict_text(outcome)}; "
            + "; ".join(problem.metadata)
        ),
    )
    return Task(
        f"dcpbench-{problem.id}",
        variables,
        Descriptions(f"{statement}{data}{encoding}", f"{statement}{data}"),
        metadata,
        lambda: cnf,
        None,
    )


def load(path: Path, key: str) -> Task:
    """One DCP-Bench-Open problem as a task: its CPMpy model converted into the ground truth over its decision
    variables; a problem left out is an ``AdapterError`` saying why."""
    path = Path(path)
    if not path.exists():
        raise AdapterError(f"dcpbench: {path} does not exist")
    return _task(path, key, _stamp(path))
