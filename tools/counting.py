"""Model counting projected onto the task variables, under a time limit, recording how each number was obtained.

Methods: ``enumeration`` (SAT with blocking clauses; exact and fastest for small model sets),
``ganak`` (exact projected counter), ``sdd`` (compile with PySDD, exact), ``approxmc`` (ApproxMC,
(ε, δ)-approximate, projected). ``auto`` is a portfolio: enumeration alone for a few hundred models
on the CNF as given (most ground truths have a few: they end here, their models kept for the
metrics; one whose first model already shows more than that stops at once); then CaDiCaL's
projection-preserving preprocessing (:mod:`autonesy.tools.preprocess`: units, equivalent literals,
eliminated auxiliaries) and, when its plan is cheap, variable elimination over truth tables
(:mod:`autonesy.tools.variable_elimination`, in this process: its cost is known before it starts;
kand-logic's 368,712 models in about 3 ms). A count within the enumeration cap is enumerated on, for
its models. A formula too wide for tables goes to bounded resolution
(:mod:`autonesy.tools.elimination`) and then, at once, enumeration continuing in a thread (up to a
model cap: a 10-queens ground truth of 40,064 variables has 724 models), Ganak (on the preprocessed CNF
and on the CNF as encoded: a totalizer's exactly-30 of 60 takes Ganak 19 s as encoded, over 60 s
preprocessed) and the SDD routes
(unminimised, then minimised), for a CNF with auxiliaries the frontier dynamic programme
(:mod:`autonesy.tools.frontier_count`: a sequential counter's exactly-100 of 200), the one-hot dynamic
programme (:mod:`autonesy.tools.onehot_count`: a 6 × 6 Sudoku; with auxiliaries when its blocks are proved
at-most-ones), and
counting by orbits of the formula's own symmetries (:mod:`autonesy.tools.orbit_count`: combinatorial
designs, such as the social golfers' 26,127,360 schedules, one orbit), for layers of reachability a count
of connected selections of edges (:mod:`autonesy.tools.connectivity_count`: simple paths on a grid, forked
before preprocessing), and for a CNF with declared literal
counts lifted counting over classes of interchangeable blocks (:mod:`autonesy.tools.lifted_count`: a
crew roster's 2.07e20 schedules), each in a forked child. The first exact answer wins and the others
are stopped, so each formula costs what its cheapest route costs, on the cores there are. A racer that
finds its structure early says so (a byte on its pipe) and runs alone for a while, the others stopped
(SIGSTOP, then SIGCONT). ApproxMC
runs only when no exact route answered within four fifths of the limit.

Every count has a time limit. Enumeration runs in this process and is stopped through the SAT
solver's interrupt; variable elimination runs only on a plan whose size was checked against its
budget first; the native counters (Ganak, PySDD, ApproxMC) offer no limit of their own, so they run in
a forked child that is killed when the limit passes. A count that runs out of time raises
:class:`CountTimedOut`, which says which methods were tried and for how long.

The limits of the race and of the children are kept on the thread's quiet clock
(:mod:`autonesy.tools.quiet_clock`), which watches the count's children and helper thread and slows
down while they get less CPU than they ask for: a limit buys the same work on a loaded machine (other
programs, or other threads' counts), so whether a count finishes does not depend on what else runs
(within a factor of four on the wall clock). A child's own budgets (the SDD routes' shares) are its CPU time;
the steps in this process (the first enumeration, preprocessing, the check of candidate models) stay
on the wall clock.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pyapproxmc
import pyganak
from pysat.solvers import Solver

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import (
    CompilationBudgetExceeded,
    budgets_on_thread_cpu_time,
    compile_by_elimination,
    compile_to_sdd,
    compile_unminimised,
)
from autonesy.tools.connectivity_count import count_by_connectivity
from autonesy.tools.elimination import eliminate_auxiliaries
from autonesy.tools.enumeration import (
    CountTimedOut,
    Enumeration,
    EnumerationCapReached,
    Model,
    enumerate_models,
    extensible_models,
)
from autonesy.tools.frontier_count import count_by_frontier
from autonesy.tools.lifted_count import count_by_lifting
from autonesy.tools.literal_count import COMMENT as LITERAL_COUNT
from autonesy.tools.onehot_count import count_one_hot, one_hot_groups
from autonesy.tools.options import COUNT_METHODS
from autonesy.tools.orbit_count import count_by_orbits
from autonesy.tools.preprocess import simplify_projected
from autonesy.tools.process_lifetime import die_with_parent
from autonesy.tools.quiet_clock import available_cores
from autonesy.tools.quiet_clock import current as quiet_clock
from autonesy.tools.structure_recovery import count_by_recovery
from autonesy.tools.variable_elimination import (
    SECONDS_PER_ENTRY,
    EliminationTooCostly,
    count_by_elimination,
    plan_elimination,
)

__all__ = [
    "COUNT_METHODS",
    "ApproxMCSettings",
    "CountTimedOut",
    "CounterFailed",
    "EnumerationCapReached",
    "ModelCount",
    "count_from_candidates",
    "count_models",
    "enumerate_models",
]

# Bump when a route gets stronger: a remembered timeout (count store) or a cached unscorable verdict of
# another version no longer holds; an exact count is a fact about the formula and stays.
# 2: count_from_candidates' proof of completeness raced with CP-SAT.
# 3: limits on the quiet clock (a loaded machine no longer shortens them); OR-Tools lists projected solutions
# by blocking when its enumeration repeats them.
# 4: counting by orbits of the formula's symmetries (:mod:`autonesy.tools.orbit_count`) joins the race.
# 5: counting by orbits merges equal task variables and reads declared literal counts
# (:mod:`autonesy.tools.literal_count`) as symmetric constraints.
# 6: counting by orbits reads guarded literal counts and, when every symmetry fixes the task variables,
# keeps one extension per orbit of the auxiliaries (lex-leader over them) for the enumeration.
# 7: lifted counting over interchangeable blocks (:mod:`autonesy.tools.lifted_count`) joins the race when
# the formula declares literal counts.
# 8: structure recovery (:mod:`autonesy.tools.structure_recovery`) races from the start on a CNF with auxiliaries.
# 9: one-hot and frontier budgets from the memory available; one-hot on proved auxiliary blocks; priority to a
# racer that found its structure.
# 10: structure recovery on CNFs of up to AUTO_RECOVERY_MAX_CLAUSES clauses, with priority once every block
# is recovered; tables over counts of literal groups (:mod:`autonesy.tools.count_functions`); PB BDDs and
# adders recovered (cyclic definitions as fixpoints, auxiliaries forced by their own clauses).
# 11: the one-hot route counts interchangeable values through their first uses (a Latin square's first row fixed);
# a racer given priority leaves the spare cores to Ganak and the SDD routes.
# 12: structure recovery reads adder networks as weighted sums (:mod:`autonesy.tools.adder_network`).
# 13: layered reachability counted as connectivity (:mod:`autonesy.tools.connectivity_count`), forked before
# preprocessing.
ROUTES_VERSION = 13
DEFAULT_ENUMERATION_CAP = 2_000
DEFAULT_TIME_LIMIT_S = 60.0
AUTO_ENUMERATION_MAX_S = 0.1  # the first enumeration, alone, gets at most this long
AUTO_ENUMERATION_SHARE = 0.05  # and at most this share of the limit,
AUTO_FIRST_MODELS = 300  # and stops past this many models (a few ms): larger counts go on to the tables
AUTO_RACE_ENUMERATION_CAP = 100_000  # racing the counters, enumeration gives up past this many models
AUTO_HEAD_START_S = 0.05  # the SDD routes race alone for this much of their CPU time (road-r's SDD: 18 ms),
AUTO_HEAD_START_MAX_S = 0.5  # or this long on the clock, whichever comes first
AUTO_ELIMINATION_MAX_S = 1.0  # resolution gets at most this long, and at most a tenth of the limit
AUTO_QUICK_SDD_MAX_S = 0.5  # the unminimised SDD gets at most this long, and at most a fifth of its time
AUTO_TABLES_MAX_S = 0.02  # variable elimination runs when its plan predicts at most this long ...
AUTO_TABLES_SHARE = 0.1  # ... and at most this share of the time left
AUTO_TABLES_MAX_VARS = 300  # its greedy plan costs O(variables²): larger formulas go to the race
AUTO_LARGE_CLAUSES = 50_000  # above this: no first enumeration, preprocessing in a killable child
AUTO_RECOVERY_MAX_CLAUSES = 500_000  # structure recovery's own bound (exactly-100 of 200 overlapped: 82,891)
AUTO_PREPROCESS_SHARE = 0.3  # of the limit, for a large CNF's preprocessing
AUTO_APPROXMC_SHARE = 0.2  # of the limit, kept for ApproxMC when no exact route answered
AUTO_PRIORITY_SHARE = 0.5  # of the race's time left, for a racer that found its structure (see _give_priority)
STRUCTURE_FOUND = b"!"  # a racer's first byte on its pipe when it found its structure (a pickle starts with 0x80)

_CLOCK_POLL_S = 1.0  # a wait for the children reads the quiet clock at least this often


@dataclass(frozen=True)
class ModelCount:
    """A model count with the method that made it, whether it is exact, and how long it took."""

    value: int
    method: str
    exact: bool
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)
    models: tuple[Model, ...] | None = field(default=None, repr=False, compare=False)
    """The projected models themselves when the count enumerated them (reused by the metrics)."""

    def to_dict(self) -> dict[str, Any]:
        """The count as JSON data (enumerated models left out)."""
        data = asdict(self)
        del data["models"]
        return data


@dataclass(frozen=True)
class ApproxMCSettings:
    """ApproxMC's tolerance, confidence and seed (recorded with an approximate count)."""

    epsilon: float = 0.8
    delta: float = 0.2
    seed: int = 1


class CounterFailed(RuntimeError):
    """A native counter crashed or raised; the message carries its error."""


def count_by_enumeration(
    cnf: CNF, cap: int | None = DEFAULT_ENUMERATION_CAP, time_limit_s: float | None = DEFAULT_TIME_LIMIT_S
) -> ModelCount:
    """Count by enumerating models with a SAT solver (exact; refused above the cap), keeping the models for overlaps."""
    start = time.perf_counter()
    models = enumerate_models(cnf, cap, time_limit_s)
    return ModelCount(len(models), "enumeration", True, time.perf_counter() - start, {"cap": cap}, tuple(models))


class _Child:
    """``work(*args)`` running in a forked child, its one pickled result read back through a pipe.

    The child only runs native counting code on data it already holds, writes one pickled result
    to the pipe and leaves with ``os._exit``; its standard output goes to /dev/null (the counters
    print progress lines from C++). The parent polls :meth:`ready` and reads :meth:`result`, or
    :meth:`kill` s it.
    """

    def __init__(
        self, method: str, work: Callable[..., Any], args: tuple, label: str | None = None, announces: bool = False
    ):
        self.method = method
        self.label = label or method  # which racer, in what was tried (two may share a method)
        read_end, write_end = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # child
            try:
                die_with_parent(parent)  # a killed `score` leaves no racer behind
                os.close(read_end)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                announced: list[int] = []

                def announce() -> None:  # ``STRUCTURE_FOUND`` first on the pipe, once
                    if not announced:
                        announced.append(os.write(write_end, STRUCTURE_FOUND))

                try:
                    payload = pickle.dumps(("ok", work(*args, on_structure=announce) if announces else work(*args)))
                except BaseException as error:  # noqa: BLE001 - everything goes back to the parent as text
                    payload = pickle.dumps(("error", (type(error).__name__, str(error))))
                view = memoryview(payload)
                while view:
                    view = view[os.write(write_end, view) :]
            finally:
                os._exit(0)
        os.close(write_end)
        self.pid, self.fd, self.started = pid, read_end, time.monotonic()
        self.clock = quiet_clock()  # the child asks for CPU on its parent thread's clock
        self.clock.watch(child=pid)
        self.chunks: list[bytes] = []
        self.done = False
        self.found_structure = False  # it said so (``STRUCTURE_FOUND``): the race may give it the CPU, once
        self.prioritised = False
        self.paused = False

    def ready(self) -> bool:
        """Read what is there without blocking; True once the child has closed its end (answered or died)."""
        while not self.done and select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.done = True
                os.close(self.fd)
                os.waitpid(self.pid, 0)
                self.clock.forget(child=self.pid)
            else:
                if not self.chunks and not self.found_structure and chunk.startswith(STRUCTURE_FOUND):
                    self.found_structure, chunk = True, chunk[1:]
                if chunk:
                    self.chunks.append(chunk)
        return self.done

    def pause(self, paused: bool) -> None:
        """Stop (SIGSTOP) or resume (SIGCONT) the running child; a stopped child is still killed by SIGKILL and
        by its parent's death (PR_SET_PDEATHSIG)."""
        if not self.done and self.paused != paused:
            os.kill(self.pid, signal.SIGSTOP if paused else signal.SIGCONT)
            self.paused = paused

    def result(self) -> Any:
        """The child's value; its error re-raised (:class:`CompilationBudgetExceeded`, else :class:`CounterFailed`)."""
        if not self.chunks:
            raise CounterFailed(f"{self.method} counter died without an answer")
        status, value = pickle.loads(b"".join(self.chunks))
        if status != "ok":
            kind, message = value
            if kind == CompilationBudgetExceeded.__name__:
                raise CompilationBudgetExceeded(message)
            raise CounterFailed(f"{self.method} counter failed: {kind}: {message}")
        return value

    def cpu_s(self) -> float:
        """CPU seconds the child has used so far (from /proc); its seconds on the clock where that cannot be read."""
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()  # from field 3 (state) on: utime and stime are 14, 15
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return time.monotonic() - self.started

    def kill(self) -> None:
        """Stop the child (if still running) and release its pipe."""
        if not self.done:
            os.kill(self.pid, signal.SIGKILL)
            os.close(self.fd)
            os.waitpid(self.pid, 0)
            self.clock.forget(child=self.pid)
            self.done = True


def _wait_any(children: list[_Child], deadline: float, poll_s: float = 0.05) -> _Child | None:
    """The first child to finish before ``deadline`` (on the thread's quiet clock), else None."""
    while True:
        for child in children:
            if child.ready():
                return child
        remaining = deadline - quiet_clock().now()
        if remaining <= 0:
            return None
        select.select([c.fd for c in children if not c.done], [], [], min(poll_s, remaining, _CLOCK_POLL_S))


def _run_killable(method: str, work: Callable[..., Any], args: tuple, time_limit_s: float) -> Any:
    """``work(*args)`` in a forked child, killed once ``time_limit_s`` has passed (:class:`CountTimedOut`)."""
    child = _Child(method, work, args)
    try:
        if _wait_any([child], quiet_clock().now() + time_limit_s, poll_s=time_limit_s) is None:
            raise CountTimedOut(method, time_limit_s)
    finally:
        child.kill()
    return child.result()


def _sdd_count(cnf: CNF, time_limit_s: float, size_limit: int) -> tuple[int, dict[str, Any]]:
    budgets_on_thread_cpu_time()  # in a child
    sdd = compile_to_sdd(cnf, time_limit_s=time_limit_s, size_limit=size_limit)
    return sdd.model_count(), {"vtree": sdd.vtree_type, "sdd_size": sdd.size, "minimized": True}


def count_by_sdd(cnf: CNF, time_limit_s: float = DEFAULT_TIME_LIMIT_S, size_limit: int = 5_000_000) -> ModelCount:
    """Exact count through an SDD; raises :class:`CompilationBudgetExceeded` on a size overflow."""
    start = time.perf_counter()
    value, params = _run_killable("sdd", _sdd_count, (cnf, time_limit_s, size_limit), time_limit_s)
    return ModelCount(value, "sdd", True, time.perf_counter() - start, params)


def _quick_sdd_count(cnf: CNF, time_limit_s: float) -> tuple[int, dict[str, Any]]:
    sdd = compile_unminimised(cnf, time_limit_s)
    return sdd.model_count(), {"vtree": sdd.vtree_type, "sdd_size": sdd.size, "minimized": False}


def _ganak_count(cnf: CNF) -> int:
    counter = pyganak.Counter(seed=0)
    counter.add_clauses([list(c) for c in cnf.clauses])
    # Declaring the sampling set extends the variable universe, so unmentioned task variables count as free.
    counter.set_sampling_set(list(cnf.task_vars))
    sys.set_int_max_str_digits(0)  # in a forked child only: Ganak makes its count from decimal text, of any length
    return int(counter.count())


def count_by_ganak(cnf: CNF, time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> ModelCount:
    """Count with Ganak (exact) within the time limit; an empty clause is zero models without calling it."""
    start = time.perf_counter()
    if any(len(c) == 0 for c in cnf.clauses):
        return ModelCount(0, "ganak", True, time.perf_counter() - start)
    value = _run_killable("ganak", _ganak_count, (cnf,), time_limit_s)
    return ModelCount(value, "ganak", True, time.perf_counter() - start)


def _approxmc_count(cnf: CNF, settings: ApproxMCSettings) -> int:
    counter = pyapproxmc.Counter(epsilon=settings.epsilon, delta=settings.delta, seed=settings.seed)
    counter.add_clauses([list(c) for c in cnf.clauses])
    counter.add_clauses([[v, cnf.num_vars + v] for v in cnf.task_vars])
    cells, hashes = counter.count(list(cnf.task_vars))
    return cells * 2**hashes


def count_by_approxmc(
    cnf: CNF, settings: ApproxMCSettings = ApproxMCSettings(), time_limit_s: float = DEFAULT_TIME_LIMIT_S
) -> ModelCount:
    """ApproxMC projected on the task variables.

    pyapproxmc 4.4 under-counts when preprocessing leaves a projection variable in no clause
    (x1 XOR x2 counts 1, an unmentioned variable is not counted at all). Each task variable v is
    therefore anchored by a clause (v ∨ a_v) with a fresh, projected-out a_v: the projected count is
    unchanged, and no task variable can drop out.
    """
    start = time.perf_counter()
    params = asdict(settings)
    if any(len(c) == 0 for c in cnf.clauses):
        return ModelCount(0, "approxmc", False, time.perf_counter() - start, params)
    value = _run_killable("approxmc", _approxmc_count, (cnf, settings), time_limit_s)
    return ModelCount(value, "approxmc", False, time.perf_counter() - start, params)


def count_models(
    cnf: CNF,
    method: str = "auto",
    *,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    enumeration_cap: int = DEFAULT_ENUMERATION_CAP,
    approxmc: ApproxMCSettings = ApproxMCSettings(),
) -> ModelCount:
    """Count models of ``cnf`` projected on its task variables with the chosen method.

    Raises :class:`CountTimedOut` when ``time_limit_s`` passes before an answer.
    """
    if method not in COUNT_METHODS:
        raise ValueError(f"unknown count method {method!r}; choose one of {', '.join(COUNT_METHODS)}")
    if method == "enumeration":
        return count_by_enumeration(cnf, cap=None, time_limit_s=time_limit_s)
    if method == "sdd":
        return count_by_sdd(cnf, time_limit_s)
    if method == "ganak":
        return count_by_ganak(cnf, time_limit_s)
    if method == "approxmc":
        return count_by_approxmc(cnf, approxmc, time_limit_s)
    return _count_auto(cnf, time_limit_s, enumeration_cap, approxmc)


def count_from_candidates(
    cnf: CNF, candidates: Iterable[Model], time_limit_s: float | None, seeded_by: str
) -> ModelCount:
    """Exact count from candidate models found by another solver (``seeded_by``: a CP solver's
    solutions, say), certified: the candidates that extend to a model of ``cnf`` are kept, and one
    proof with all of them blocked (CaDiCaL and CP-SAT race) shows there is no other (else
    enumeration finds the rest).
    Exact whatever the candidates are (wrong ones are rejected, missing ones found); worth it when a
    CP solver lists a few thousand solutions fast that no counter here gets through (the
    all-interval series of 12: 1,328 solutions, listed by OR-Tools in 5 s, proved complete in 4 s;
    ``auto`` runs out of 60 s). The two checks are independent (blocking a candidate that is not a
    model excludes nothing), so the proof of completeness races in children while this process
    checks the candidates. Raises :class:`CountTimedOut` when ``time_limit_s`` passes first."""
    start = time.perf_counter()
    distinct = list(dict.fromkeys(tuple(m) for m in candidates))
    n = cnf.num_task_vars
    if any(len(m) != n or not set(m) <= {0, 1} for m in distinct):
        raise ValueError(f"a candidate is not a 0/1 assignment of the {n} task variables")

    deadline = quiet_clock().now() + (time_limit_s if time_limit_s is not None else float("inf"))

    def left() -> float | None:
        return None if time_limit_s is None else max(0.0, deadline - quiet_clock().now())

    provers = [_Child("seeded-enumeration", prove, (cnf, distinct), label) for label, prove in _COMPLETENESS_PROVERS]
    try:
        valid = extensible_models(distinct, cnf, time_limit_s)
        complete, proved_by = _first_proof(provers, left())
        if complete:
            models = list(valid)
        else:  # the candidates miss some: enumeration finds the rest
            enumeration = Enumeration()
            enumeration.models = list(valid)
            models = enumeration.run(cnf, None, left())
    except CountTimedOut:
        raise CountTimedOut("seeded-enumeration", time_limit_s or 0.0) from None
    finally:
        for prover in provers:
            prover.kill()
    params = {"seeded_by": seeded_by, "seeds": len(valid), "rejected": len(distinct) - len(valid)}
    params |= {"found": len(models) - len(valid), "completeness_by": proved_by}
    return ModelCount(len(models), "seeded-enumeration", True, time.perf_counter() - start, params, tuple(models))


def _first_proof(provers: list[_Child], time_limit_s: float | None) -> tuple[bool, str]:
    """The first answer among ``provers`` (whether ``cnf`` has no projected model but the candidates)
    and which prover gave it; one that fails leaves it to the others. :class:`CountTimedOut` when none
    answers within ``time_limit_s``, :class:`CounterFailed` when all fail."""
    deadline = quiet_clock().now() + (time_limit_s if time_limit_s is not None else float("inf"))
    running, failures = list(provers), []
    while running:
        child = _wait_any(running, deadline, poll_s=1.0)
        if child is None:
            raise CountTimedOut("seeded-enumeration", time_limit_s or 0.0)
        running.remove(child)
        try:
            return bool(child.result()), child.label
        except CounterFailed as error:
            failures.append(f"{child.label}: {error}")
    raise CounterFailed("; ".join(failures))


def _blocked(model: Model) -> list[int]:
    return [-i if v else i for i, v in enumerate(model, start=1)]


def _none_besides_by_cadical(cnf: CNF, models: list[Model]) -> bool:
    """Whether ``cnf`` has no projected model but ``models``: one call to CaDiCaL with every one of
    them blocked (the all-interval series of 12, 1,328 solutions: 43 s, where Glucose runs out of 60 s)."""
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        for var in cnf.task_vars:
            solver.add_clause([var, -var])
        for model in models:
            solver.add_clause(_blocked(model))
        return not solver.solve()


def _none_besides_by_cp_sat(cnf: CNF, models: list[Model]) -> bool:
    """The same question put to OR-Tools' CP-SAT (one worker) as a model of Boolean clauses: its
    presolve and search prove graceful graphs' 1,440 solutions complete in 21 s (CaDiCaL: 142 s) and
    the all-interval series' 1,328 in 4 s; CaDiCaL is faster on others (a 4x4 magic square's 7,040:
    32 s against 41 s), hence the race. A CP-SAT model holds each literal as a Python object while it
    is built: past :data:`CP_SAT_MAX_LITERALS` the proof is left to CaDiCaL (a listing can hold
    hundreds of millions of literals)."""
    from ortools.sat.python import cp_model

    literals = sum(map(len, cnf.clauses)) + len(models) * cnf.num_task_vars
    if literals > CP_SAT_MAX_LITERALS:
        raise CounterFailed(f"{literals} literals, more than CP-SAT is given ({CP_SAT_MAX_LITERALS})")

    model = cp_model.CpModel()
    variables = [model.new_bool_var(f"v{i}") for i in range(1, cnf.num_vars + 1)]

    def literal(lit: int) -> Any:
        return variables[lit - 1] if lit > 0 else ~variables[-lit - 1]

    for clause in cnf.clauses:
        model.add_bool_or([literal(lit) for lit in clause])
    for blocked in map(_blocked, models):
        model.add_bool_or([literal(lit) for lit in blocked])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    status = solver.solve(model)
    if status == cp_model.INFEASIBLE:
        return True
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        return False
    raise CounterFailed(f"CP-SAT ended with {solver.status_name(status)}")


CP_SAT_MAX_LITERALS = 50_000_000  # Steiner triples (191,625 clauses, 151,200 solutions): 10.1 million
_COMPLETENESS_PROVERS = (("cadical", _none_besides_by_cadical), ("cp-sat", _none_besides_by_cp_sat))


def _sdd_routes(cnf: CNF, original: CNF, time_limit_s: float) -> tuple[int, dict[str, Any]]:
    """The SDD routes one after another (run in a child): unminimised; then bucket elimination
    (:func:`~autonesy.tools.compile.compile_by_elimination`) on the ``original`` CNF (preprocessing
    scrambles the encoders' counters: exactly-25 of 50 takes 2.2 s of CPU after it, 0.7 s before) and a
    minimised SDD, each with half of what is left: bucket elimination first when auxiliaries outnumber
    the task variables twice (a counter's registers), the minimised SDD first otherwise (road-r)."""
    budgets_on_thread_cpu_time()  # in a child: its shares, like the race's limit, buy the same work under load
    deadline = time.thread_time() + time_limit_s
    overflows = []
    try:
        return _quick_sdd_count(cnf, min(AUTO_QUICK_SDD_MAX_S, 0.2 * time_limit_s))
    except CompilationBudgetExceeded as error:
        overflows.append(f"unminimised: {error}")

    def bucketed(share: float) -> tuple[int, dict[str, Any]]:
        sdd = compile_by_elimination(original, time_limit_s=share * (deadline - time.thread_time()))
        return sdd.model_count(), {"vtree": "right", "sdd_size": sdd.size, "bucket_elimination": True}

    def minimised(share: float) -> tuple[int, dict[str, Any]]:
        return _sdd_count(cnf, share * (deadline - time.thread_time()), 5_000_000)

    routes = [("bucket elimination", bucketed), ("minimised", minimised)]
    if original.num_aux_vars <= 2 * original.num_task_vars:
        routes.reverse()
    if not original.num_aux_vars:
        routes = [("minimised", minimised)]
    for (name, route), share in zip(routes, (0.5, 1.0) if len(routes) == 2 else (1.0,)):
        try:
            return route(share)
        except CompilationBudgetExceeded as error:
            overflows.append(f"{name}: {error}")
    raise CompilationBudgetExceeded("; ".join(overflows))


def _preprocess(cnf: CNF, elimination_s: float) -> CNF:
    """CaDiCaL's projection-preserving preprocessing, then bounded resolution on what is left (small CNFs)."""
    return _eliminate(simplify_projected(cnf), elimination_s)


def _eliminate(cnf: CNF, elimination_s: float) -> CNF:
    """Bounded resolution, on CNFs small enough that its own set-up (not under its limit) is cheap."""
    if len(cnf.clauses) > AUTO_LARGE_CLAUSES:
        return cnf
    return eliminate_auxiliaries(cnf, elimination_s)


def _count_by_tables(
    cnf: CNF, enumeration: Enumeration, cap: int, deadline: float, tried: list[str]
) -> ModelCount | None:
    """Variable elimination when its plan fits its budget (None otherwise, the reason added to ``tried``).
    A count within ``cap`` is enumerated to the end (continuing ``enumeration``), for its models."""
    if cnf.num_vars > AUTO_TABLES_MAX_VARS:
        return None
    start = time.perf_counter()
    budget_s = min(AUTO_TABLES_MAX_S, AUTO_TABLES_SHARE * (deadline - quiet_clock().now()))
    try:
        plan = plan_elimination(cnf, int(budget_s / SECONDS_PER_ENTRY))
    except EliminationTooCostly as error:
        tried.append(str(error))
        return None
    value = count_by_elimination(plan)
    if value <= cap:
        try:  # it stops after `value` models
            models = enumeration.run(cnf, None, max(0.0, deadline - quiet_clock().now()))
            return ModelCount(len(models), "enumeration", True, 0.0, {"cap": cap}, tuple(models))
        except CountTimedOut:
            tried.append(f"enumeration ({len(enumeration.models)} of {value} models before the limit)")
    params = {"largest_table": plan.largest_table, "table_entries": plan.entries}
    return ModelCount(value, "variable-elimination", True, time.perf_counter() - start, params)


def _count_auto(cnf: CNF, time_limit_s: float, cap: int, approxmc: ApproxMCSettings) -> ModelCount:
    """The portfolio: a short enumeration on the CNF as given (most ground truths end here, with their
    models); projection-preserving preprocessing; variable elimination when its plan is cheap (a count
    within the cap enumerated on, for its models); else bounded resolution and enumeration (in a thread,
    continuing), Ganak and the SDD routes (each in a forked child) at once; the first exact answer wins
    and the others are stopped. ApproxMC only when none answered within ``1 - AUTO_APPROXMC_SHARE`` of
    the limit."""
    start = time.perf_counter()
    deadline = quiet_clock().now() + time_limit_s
    tried: list[str] = []
    enumeration = Enumeration()

    def finish(result: ModelCount, **extra: Any) -> ModelCount:
        params = dict(result.params, **extra)
        if tried:
            params["fallbacks"] = list(tried)
        return ModelCount(result.value, result.method, result.exact, time.perf_counter() - start, params, result.models)

    large = len(cnf.clauses) > AUTO_LARGE_CLAUSES
    quick_s = min(AUTO_ENUMERATION_MAX_S, AUTO_ENUMERATION_SHARE * time_limit_s)
    at_least = 0  # models known to exist
    if not large:  # a large CNF takes seconds just to load into a solver
        models, at_least = _first_enumeration(cnf, enumeration, min(cap, AUTO_FIRST_MODELS), quick_s, tried)
        quick_s -= time.perf_counter() - start
        if models is not None:
            return ModelCount(
                len(models), "enumeration", True, time.perf_counter() - start, {"cap": cap}, tuple(models)
            )
    early = _early_racers(cnf)  # they run while this process preprocesses
    try:
        elimination_s = min(AUTO_ELIMINATION_MAX_S, 0.1 * time_limit_s)
        race_deadline = deadline - AUTO_APPROXMC_SHARE * time_limit_s
        simplified = _simplify(cnf, large, elimination_s, AUTO_PREPROCESS_SHARE * time_limit_s, tried)
        reduced = _reduction(cnf, simplified, time.perf_counter() - start)
        if any(len(c) == 0 for c in simplified.clauses):
            return finish(ModelCount(0, "preprocessing", True, 0.0), **reduced)
        answer = _early_answer(early, tried) or _count_by_tables(simplified, enumeration, cap, race_deadline, tried)
        if answer is not None:
            return finish(answer, **reduced)
        if not large and quick_s > 0 and at_least <= cap:  # too wide for tables: enumeration alone up to the cap
            models, _ = _first_enumeration(simplified, enumeration, cap, quick_s, tried)
            if models is not None:
                return finish(ModelCount(len(models), "enumeration", True, 0.0, {"cap": cap}, tuple(models)), **reduced)
        if not large:
            simplified = _eliminate(simplified, elimination_s)
            reduced = _reduction(cnf, simplified, time.perf_counter() - start)
        answer = _race(simplified, cnf, enumeration, race_deadline, tried, early)
        if answer is not None:
            return finish(answer, **reduced)
        left = deadline - quiet_clock().now()
        if left > 0:
            try:
                return finish(count_by_approxmc(simplified, approxmc, left), **reduced)
            except (CountTimedOut, CounterFailed) as error:
                tried.append(f"approxmc ({error})")
        raise CountTimedOut("auto", time_limit_s, tuple(tried))
    finally:
        for child in early:
            child.kill()


def _early_answer(early: list[_Child], tried: list[str]) -> ModelCount | None:
    """The exact count of an early racer that has finished (the failed ones taken out, why in ``tried``)."""
    for child in [child for child in early if child.ready()]:
        early.remove(child)
        answer = _answer_of(child, set(), tried)
        if answer is not None:
            return answer
    return None


def _early_racers(cnf: CNF) -> list[_Child]:
    """Racers forked before preprocessing, which they do not need: the connectivity count when a unit clause fixes
    an auxiliary (layers of reachability start there; read at once, then a frontier over the graph: 6 × 6 grid
    paths in about 1 s of CPU, 8 × 8 in 34 s, which preprocessing 58,024 clauses left no time for)."""
    if cnf.num_aux_vars and len(cnf.clauses) <= AUTO_RECOVERY_MAX_CLAUSES and _fixes_auxiliaries(cnf):
        return [_Child("connectivity", count_by_connectivity, (cnf,), announces=True)]
    return []


def _first_enumeration(
    cnf: CNF, enumeration: Enumeration, cap: int, time_limit_s: float, tried: list[str]
) -> tuple[list[Model] | None, int]:
    """Every projected model when there are at most ``cap`` found within ``time_limit_s``, else None (and why,
    in ``tried``); and how many models are known to exist."""
    start = time.perf_counter()
    try:
        models = enumeration.run(cnf, cap, time_limit_s)
        return models, len(models)
    except EnumerationCapReached as error:
        tried.append(f"enumeration ({error}, {time.perf_counter() - start:.3f} s)")
        return None, error.at_least
    except CountTimedOut:
        tried.append(f"enumeration ({len(enumeration.models)} models in {time_limit_s:.2f} s)")
        return None, len(enumeration.models)


def _simplify(cnf: CNF, large: bool, elimination_s: float, child_s: float, tried: list[str]) -> CNF:
    """CaDiCaL's preprocessing here; for a ``large`` CNF, with bounded resolution, in a child killed after
    ``child_s`` (CaDiCaL has no time limit of its own), the CNF as given when it does not finish."""
    if not large:
        return simplify_projected(cnf)
    try:
        return _run_killable("preprocessing", _preprocess, (cnf, elimination_s), child_s)
    except (CountTimedOut, CounterFailed) as error:
        tried.append(f"preprocessing ({error})")
        return cnf


def _reduction(cnf: CNF, simplified: CNF, seconds: float) -> dict[str, Any]:
    """What preprocessing left of ``cnf``, and when it was done (seconds into the count)."""
    return {
        "preprocessed": f"{simplified.num_aux_vars} of {cnf.num_aux_vars} auxiliaries, "
        f"{len(simplified.clauses)} of {len(cnf.clauses)} clauses",
        "preprocess_s": round(seconds, 3),
    }


def _race(
    cnf: CNF, original: CNF, enumeration: Enumeration, deadline: float, tried: list[str], early: Sequence[_Child] = ()
) -> ModelCount | None:
    """The SDD routes (a child) on the preprocessed ``cnf`` (bucket elimination on the ``original``), joined
    after ``AUTO_HEAD_START_S`` of their CPU time (at most ``AUTO_HEAD_START_MAX_S`` on the clock, and at
    once when they give up) by Ganak (a child; a second one on the ``original`` when preprocessing changed a
    CNF with auxiliaries) and enumeration (continuing ``enumeration``, in a thread),
    until the first exact count or ``deadline`` (on the thread's quiet clock); failures are added to ``tried``.
    The frontier count (:mod:`autonesy.tools.frontier_count`) joins them when the CNF has auxiliaries, on
    the encoder's numbering (a sequential counter's exactly-100 of 200: about 12 s of CPU; after
    preprocessing it ran out of 60 s). The one-hot CSP count joins them too (on a CNF with auxiliaries through
    its blocks' proved at-most-ones), or starts with the SDD routes when every task variable is in an
    exactly-one group: on a 6 × 6 Sudoku it needs about 8 s of CPU and starved among four racers. It says
    when its groups cover every task variable, and then runs alone for a share of the time left
    (:func:`_give_priority`). Counting by orbits joins them on the ``original`` (its symmetries as the
    encoder wrote them); without a symmetry on the task variables it gives up in milliseconds on a small CNF.
    Lifted counting joins them when the ``original`` declares literal counts (a roster: about 6 s of CPU
    for DCP-Bench's crew, which every other route runs out of time on). Structure recovery starts with the
    SDD routes on an ``original`` with auxiliaries: each block of auxiliary clauses replaced by its proved
    projection (two encodings of exactly-k of 200 and a clause; a Sudoku whose at-most-ones are ladders).
    Racers started ``early`` (the connectivity count, while this process preprocessed) join from the start.
    Counted in CPU time, the head start holds on a loaded machine too, where the child gets a share of a core.

    The head start is what the race costs on a formula the unminimised SDD compiles at once: road-r's
    SDD takes 18 ms of CPU; its whole count took 0.105 s of CPU with Ganak and enumeration burning
    beside it from the start, 0.051 s with the head start (load 9 on 2 cores).
    """
    start = time.perf_counter()
    found: dict[str, Any] = {}
    failed: set[str] = set()

    def enumerate_on() -> None:
        try:
            found["models"] = enumeration.run(cnf, AUTO_RACE_ENUMERATION_CAP, None)
        except (EnumerationCapReached, CountTimedOut) as error:
            found["error"] = error
        finally:
            wake_write = found.get("wake")
            if wake_write is not None:
                os.write(wake_write, b"x")

    wake_read, wake_write = os.pipe()  # the thread's end wakes the parent's select at once
    found["wake"] = wake_write
    thread = threading.Thread(target=enumerate_on, daemon=True)
    children = [_Child("sdd", _sdd_routes, (cnf, original, deadline - quiet_clock().now()))]
    if original.num_aux_vars and len(original.clauses) <= AUTO_RECOVERY_MAX_CLAUSES:
        # It knows within a block or two whether the encoding's structure is there, and gives up at once
        # when not, so it starts with the SDD routes: exactly-100 of 200 overlapping another encoding needs
        # about 6 s of its CPU, which it would not get among seven racers on two cores; once every block is
        # recovered it says so, and runs alone for a share of the time left.
        children.append(_Child("recovery", count_by_recovery, (original,), announces=True))
    children.extend(early)
    joining: list[tuple[str, Callable[..., Any], tuple, str | None]] = [("ganak", _ganak_count, (cnf,), None)]
    if original.num_aux_vars and len(original.clauses) <= AUTO_LARGE_CLAUSES and original != cnf:
        # Preprocessing can cost Ganak more than it saves: a totalizer's exactly-20 of 40 takes 8 s as
        # encoded and over 40 s preprocessed (a sequential counter's and grid paths' the other way round).
        joining.append(("ganak", _ganak_count, (original,), "ganak on the CNF as encoded"))
    if original.num_aux_vars:  # on the encoder's numbering, which its order follows (preprocessing scrambles it)
        joining.append(("frontier", count_by_frontier, (original,), None))
    joining.append(("orbits", count_by_orbits, (original,), None))  # the symmetries as encoded
    if any(comment.startswith(LITERAL_COUNT) for comment in original.comments):  # blocks counted across
        joining.append(("lifted", count_by_lifting, (original,), None))
    # A CSP over one-hot groups (Sudoku): preprocessed when that left no auxiliaries, else as the encoder wrote it
    # (its auxiliary blocks proved at-most-ones or exactly-ones, or the route gives up).
    csp = cnf if original.num_aux_vars and not cnf.num_aux_vars else original
    if not csp.num_aux_vars and all(len(group) > 1 for group in one_hot_groups(csp)):  # all-different grids
        children.append(_Child("one-hot", count_one_hot, (csp,), announces=True))
    else:
        joining.append(("one-hot", count_one_hot, (csp,), None))
    head_start_end = quiet_clock().now() + AUTO_HEAD_START_MAX_S
    answer: ModelCount | None = None
    holder, priority_end = None, 0.0
    try:
        while answer is None and quiet_clock().now() < deadline:
            if joining and (
                quiet_clock().now() >= head_start_end
                or all(c.done for c in children)
                or children[0].cpu_s() >= AUTO_HEAD_START_S
            ):
                children.extend(
                    _Child(method, work, args, label, announces=method in _ANNOUNCING)
                    for method, work, args, label in joining
                )
                joining = []
                thread.start()
                quiet_clock().watch(thread=thread.native_id)
            if not thread.is_alive() and "models" in found:
                models = found["models"]
                answer = ModelCount(len(models), "enumeration", True, 0.0, {}, tuple(models))
                break
            running = [c for c in children if not c.done]
            ready = [c for c in running if c.ready()]
            for child in ready:
                answer = _answer_of(child, failed, tried)
                if answer is not None:
                    break
            if answer is None:
                holder, priority_end = _give_priority(children, holder, priority_end, deadline)
            if answer is None and not ready:
                # the thread may have ended since its models were looked for: they are read next round
                if not running and not thread.is_alive() and not joining and "models" not in found:
                    break
                wait = min(0.25, deadline - quiet_clock().now())
                if joining:
                    wait = min(wait, AUTO_HEAD_START_S / 5)  # its CPU time is looked at this often
                fds = [c.fd for c in running] + ([wake_read] if thread.is_alive() else [])
                select.select(fds, [], [], max(0.0, wait))
    finally:
        enumeration.stop()
        for child in children:
            child.kill()
        if thread.ident is not None:
            thread.join()
            quiet_clock().forget(thread=thread.native_id)
        os.close(wake_read)
        os.close(wake_write)
    if answer is None:
        if isinstance(found.get("error"), EnumerationCapReached):
            tried.append(f"enumeration (over {AUTO_RACE_ENUMERATION_CAP} models)")
        tried.extend(f"{c.label} (out of time)" for c in children if c.label not in failed)
        return None
    return ModelCount(answer.value, answer.method, True, time.perf_counter() - start, answer.params, answer.models)


def _fixes_auxiliaries(cnf: CNF) -> bool:
    """Whether a unit clause fixes an auxiliary (where layers of reachability start)."""
    return any(len(clause) == 1 and abs(clause[0]) > cnf.num_task_vars for clause in cnf.clauses)


_ANNOUNCING = ("one-hot",)  # the racers that say when they found their structure (``on_structure``)


def _give_priority(
    children: list[_Child], holder: _Child | None, until: float, deadline: float
) -> tuple[_Child | None, float]:
    """Which racer has the CPU, and until when: the first to say it found its structure gets a core of its own,
    the others paused but for one per spare core (the general routes first: ``_COMPANIONS``), for
    ``AUTO_PRIORITY_SHARE`` of the race's time left (a 20 s route did not finish in a 60 s race of seven racers on
    two cores); when it ends or that time is up they all resume, and each racer gets it once. A core left idle
    beside the holder starved the route that would answer: DCP-Bench's bowls_and_oranges needs 61 s of Ganak's
    CPU, and Ganak was paused for 225 s of a 300 s race while two announcing racers in turn failed.
    The enumeration thread is not paused (a thread of this process)."""
    now = quiet_clock().now()
    if holder is not None and (holder.done or now >= until):
        holder = None
    if holder is None:
        holder = next((c for c in children if c.found_structure and not c.prioritised and not c.done), None)
        if holder is not None:
            holder.prioritised, until = True, now + AUTO_PRIORITY_SHARE * (deadline - now)
    beside: list[_Child] = []
    if holder is not None:
        others = [c for c in children if c is not holder and not c.done]
        others.sort(key=lambda c: _COMPANIONS.index(c.method) if c.method in _COMPANIONS else len(_COMPANIONS))
        beside = others[: available_cores() - 1]
    for child in children:
        child.pause(holder is not None and child is not holder and child not in beside)
    return holder, until


_COMPANIONS = ("ganak", "sdd")  # who keeps running beside a racer given priority, while cores are spare


def _answer_of(child: _Child, failed: set[str], tried: list[str]) -> ModelCount | None:
    """A finished racer's exact count; None when it failed (its label added to ``failed``, why to ``tried``)."""
    try:
        value = child.result()
    except (CompilationBudgetExceeded, CounterFailed) as error:
        failed.add(child.label)
        tried.append(f"{child.label} ({str(error)[:200]})")
        return None
    if child.method in ("sdd", "orbits"):
        return ModelCount(value[0], child.method, True, 0.0, value[1])
    return ModelCount(value, child.method, True, 0.0, {"racer": child.label} if child.label != child.method else {})
