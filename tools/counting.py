"""Model counting projected onto the task variables, under a time limit, recording how each number was obtained.

Methods: ``enumeration`` (SAT with blocking clauses; exact and fastest for small model sets),
``ganak`` (exact projected counter), ``sdd`` (compile with PySDD, exact), ``approxmc`` (ApproxMC,
(ε, δ)-approximate, projected). ``auto`` goes by measured cost on the task catalogue
(benchmarks/formula_metrics.py): enumeration up to a small cap and a short time share; then the
auxiliaries are eliminated by resolution where that stays small (:mod:`autonesy.tools.elimination`,
exact: the projection is unchanged), and the result goes to SDDs compiled without vtree
minimisation under a small size and time budget (:func:`~autonesy.tools.compile.compile_unminimised`;
road-r: 0.06 s, where Ganak needs 2 s), then to
Ganak, then to a minimised SDD, and to ApproxMC only when every exact route failed or ran out of time.

Every count has a time limit. Enumeration runs in this process and is stopped through the SAT
solver's interrupt; the native counters (Ganak, PySDD, ApproxMC) offer no limit of their own, so they
run in a forked child that is killed when the limit passes. A count that runs out of time raises
:class:`CountTimedOut`, which says which methods were tried and for how long.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import pyapproxmc
import pyganak

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import CompilationBudgetExceeded, compile_to_sdd, compile_unminimised
from autonesy.tools.elimination import eliminate_auxiliaries
from autonesy.tools.enumeration import CountTimedOut, EnumerationCapReached, Model, enumerate_models
from autonesy.tools.options import COUNT_METHODS

__all__ = [
    "COUNT_METHODS",
    "ApproxMCSettings",
    "CountTimedOut",
    "CounterFailed",
    "EnumerationCapReached",
    "ModelCount",
    "count_models",
    "enumerate_models",
]

DEFAULT_ENUMERATION_CAP = 2_000
DEFAULT_TIME_LIMIT_S = 60.0
AUTO_ENUMERATION_MAX_S = 1.0  # enumeration gets at most this long, and at most a fifth of the limit
AUTO_ELIMINATION_MAX_S = 1.0  # resolution gets at most this long, and at most a tenth of what is left
AUTO_QUICK_SDD_MAX_S = 0.5  # the unminimised SDD gets at most this long, and at most a fifth of what is left
AUTO_GANAK_SHARE = 0.6  # of what is left after that; the minimised SDD then gets most of the rest


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


def _run_killable(method: str, work: Callable[..., Any], args: tuple, time_limit_s: float) -> Any:
    """``work(*args)`` in a forked child, killed once ``time_limit_s`` has passed.

    The child only runs native counting code on data it already holds, writes one pickled result
    to a pipe and leaves with ``os._exit``; its standard output goes to /dev/null (the counters
    print progress lines from C++).
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            try:
                payload = pickle.dumps(("ok", work(*args)))
            except BaseException as error:  # noqa: BLE001 - everything goes back to the parent as text
                payload = pickle.dumps(("error", (type(error).__name__, str(error))))
            view = memoryview(payload)
            while view:
                view = view[os.write(write_end, view) :]
        finally:
            os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + time_limit_s
    chunks: list[bytes] = []
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([read_end], [], [], remaining)[0]:
                os.kill(pid, signal.SIGKILL)
                raise CountTimedOut(method, time_limit_s)
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    if not chunks:
        raise CounterFailed(f"{method} counter died without an answer")
    status, value = pickle.loads(b"".join(chunks))
    if status != "ok":
        kind, message = value
        if kind == CompilationBudgetExceeded.__name__:
            raise CompilationBudgetExceeded(message)
        raise CounterFailed(f"{method} counter failed: {kind}: {message}")
    return value


def _sdd_count(cnf: CNF, time_limit_s: float, size_limit: int) -> tuple[int, dict[str, Any]]:
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


def _count_quick_sdd(cnf: CNF, time_limit_s: float) -> ModelCount:
    """SDDs without vtree minimisation, within ten nodes per literal: cheap when one fits at all."""
    start = time.perf_counter()
    value, params = _run_killable("sdd", _quick_sdd_count, (cnf, time_limit_s), time_limit_s)
    return ModelCount(value, "sdd", True, time.perf_counter() - start, params)


def _ganak_count(cnf: CNF) -> int:
    counter = pyganak.Counter(seed=0)
    counter.add_clauses([list(c) for c in cnf.clauses])
    # Declaring the sampling set extends the variable universe, so unmentioned task variables count as free.
    counter.set_sampling_set(list(cnf.task_vars))
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


def _count_auto(cnf: CNF, time_limit_s: float, cap: int, approxmc: ApproxMCSettings) -> ModelCount:
    start = time.perf_counter()
    deadline = start + time_limit_s
    tried: list[str] = []
    reduced: dict[str, CNF] = {}

    def left() -> float:
        return deadline - time.perf_counter()

    def eliminated() -> CNF:
        """The CNF with the auxiliaries that resolution removes cheaply gone (computed once)."""
        if "cnf" not in reduced:
            reduced["cnf"] = eliminate_auxiliaries(cnf, min(AUTO_ELIMINATION_MAX_S, 0.1 * left()))
        return reduced["cnf"]

    routes: list[tuple[str, Callable[[], ModelCount]]] = [
        ("enumeration", lambda: count_by_enumeration(cnf, cap, min(AUTO_ENUMERATION_MAX_S, 0.2 * left()))),
        ("sdd", lambda: _count_quick_sdd(eliminated(), min(AUTO_QUICK_SDD_MAX_S, 0.2 * left()))),
        ("ganak", lambda: count_by_ganak(eliminated(), AUTO_GANAK_SHARE * left())),
        ("sdd", lambda: count_by_sdd(eliminated(), 0.75 * left())),
        ("approxmc", lambda: count_by_approxmc(eliminated(), approxmc, left())),
    ]
    for name, route in routes:
        if left() <= 0:
            break
        try:
            result = route()
        except EnumerationCapReached:
            tried.append(f"enumeration (over {cap} models)")
        except (CountTimedOut, CompilationBudgetExceeded, CounterFailed) as error:
            tried.append(f"{name} ({error})")
        else:
            if not tried:
                return result
            params = dict(result.params, fallbacks=tried)
            if "cnf" in reduced:
                params["auxiliaries_left"] = f"{reduced['cnf'].num_aux_vars} of {cnf.num_aux_vars}"
            return ModelCount(
                result.value, result.method, result.exact, time.perf_counter() - start, params, result.models
            )
    raise CountTimedOut("auto", time_limit_s, tuple(tried))
