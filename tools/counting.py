"""Model counting projected onto the task variables, recording how each number was obtained.

Methods: ``enumeration`` (SAT with blocking clauses; exact and fastest for small model sets),
``sdd`` (compile with PySDD, exact), ``ganak`` (exact projected counter), ``approxmc`` (ApproxMC,
(ε, δ)-approximate, projected). ``auto`` enumerates up to a cap, then compiles the SDD under a
budget, then asks Ganak, and falls back to ApproxMC only when all exact routes fail.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import pyapproxmc
import pyganak
from pysat.solvers import Solver

from autonesy.tools.cnf import CNF
from autonesy.tools.compile import CompilationBudgetExceeded, compile_to_sdd

COUNT_METHODS = ("auto", "enumeration", "sdd", "ganak", "approxmc")
DEFAULT_ENUMERATION_CAP = 2_000


@dataclass(frozen=True)
class ModelCount:
    value: int
    method: str
    exact: bool
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ApproxMCSettings:
    epsilon: float = 0.8
    delta: float = 0.2
    seed: int = 1


class EnumerationCapReached(RuntimeError):
    pass


def enumerate_models(cnf: CNF, cap: int | None = None) -> list[tuple[int, ...]]:
    """All assignments of the task variables that extend to a model, as 0/1 tuples (unordered).

    Raises :class:`EnumerationCapReached` when there are more than ``cap``.
    """
    n = cnf.num_task_vars
    models: list[tuple[int, ...]] = []
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        # CaDiCaL needs every task variable mentioned to report it: a tautology per variable does that.
        for var in cnf.task_vars:
            solver.add_clause([var, -var])
        while solver.solve():
            model = solver.get_model()
            values = tuple(1 if model[i - 1] > 0 else 0 for i in range(1, n + 1))
            models.append(values)
            if cap is not None and len(models) > cap:
                raise EnumerationCapReached(f"more than {cap} models")
            solver.add_clause([-(i) if v else i for i, v in zip(range(1, n + 1), values)])
    return models


def count_by_enumeration(cnf: CNF, cap: int | None = DEFAULT_ENUMERATION_CAP) -> ModelCount:
    start = time.perf_counter()
    models = enumerate_models(cnf, cap)
    return ModelCount(len(models), "enumeration", True, time.perf_counter() - start, {"cap": cap})


def count_by_sdd(cnf: CNF, time_limit_s: float = 60.0, size_limit: int = 5_000_000) -> ModelCount:
    start = time.perf_counter()
    sdd = compile_to_sdd(cnf, time_limit_s=time_limit_s, size_limit=size_limit)
    value = sdd.model_count()
    params = {"vtree": sdd.vtree_type, "sdd_size": sdd.size}
    return ModelCount(value, "sdd", True, time.perf_counter() - start, params)


_STDOUT_LOCK = threading.Lock()  # fd 1 is process-wide: two threads swapping it must not interleave


@contextlib.contextmanager
def _native_stdout_silenced():
    with _STDOUT_LOCK:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            with open(os.devnull, "wb") as devnull:
                os.dup2(devnull.fileno(), 1)
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def count_by_ganak(cnf: CNF) -> ModelCount:
    start = time.perf_counter()
    if any(len(c) == 0 for c in cnf.clauses):
        return ModelCount(0, "ganak", True, time.perf_counter() - start)
    counter = pyganak.Counter(seed=0)
    counter.add_clauses([list(c) for c in cnf.clauses])
    counter.set_sampling_set(list(cnf.task_vars))
    # Declaring the sampling set extends the variable universe, so unmentioned task variables count as free.
    with _native_stdout_silenced():  # Ganak prints progress lines from C++
        value = counter.count()
    return ModelCount(int(value), "ganak", True, time.perf_counter() - start)


def count_by_approxmc(cnf: CNF, settings: ApproxMCSettings = ApproxMCSettings()) -> ModelCount:
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
    counter = pyapproxmc.Counter(epsilon=settings.epsilon, delta=settings.delta, seed=settings.seed)
    counter.add_clauses([list(c) for c in cnf.clauses])
    counter.add_clauses([[v, cnf.num_vars + v] for v in cnf.task_vars])
    cells, hashes = counter.count(list(cnf.task_vars))
    return ModelCount(cells * 2**hashes, "approxmc", False, time.perf_counter() - start, params)


def count_models(
    cnf: CNF,
    method: str = "auto",
    *,
    enumeration_cap: int = DEFAULT_ENUMERATION_CAP,
    sdd_time_limit_s: float = 10.0,
    approxmc: ApproxMCSettings = ApproxMCSettings(),
) -> ModelCount:
    """Count models of ``cnf`` projected on its task variables with the chosen method."""
    if method not in COUNT_METHODS:
        raise ValueError(f"unknown count method {method!r}; choose one of {', '.join(COUNT_METHODS)}")
    if method == "enumeration":
        return count_by_enumeration(cnf, cap=None)
    if method == "sdd":
        return count_by_sdd(cnf, sdd_time_limit_s)
    if method == "ganak":
        return count_by_ganak(cnf)
    if method == "approxmc":
        return count_by_approxmc(cnf, approxmc)
    start = time.perf_counter()
    tried: list[str] = []
    try:
        result = count_by_enumeration(cnf, enumeration_cap)
    except EnumerationCapReached:
        tried.append(f"enumeration (over {enumeration_cap} models)")
    else:
        return result
    try:
        result = count_by_sdd(cnf, sdd_time_limit_s)
    except CompilationBudgetExceeded as error:
        tried.append(f"sdd ({error})")
    else:
        return _note_fallbacks(result, tried, start)
    try:
        result = count_by_ganak(cnf)
    except Exception as error:  # Ganak is a native solver; any failure sends us to ApproxMC
        tried.append(f"ganak ({error})")
    else:
        return _note_fallbacks(result, tried, start)
    return _note_fallbacks(count_by_approxmc(cnf, approxmc), tried, start)


def _note_fallbacks(result: ModelCount, tried: list[str], start: float) -> ModelCount:
    params = dict(result.params, fallbacks=tried) if tried else result.params
    return ModelCount(result.value, result.method, result.exact, time.perf_counter() - start, params)
