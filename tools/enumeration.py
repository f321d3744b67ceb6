"""The projected models of a CNF by SAT enumeration, and checks of given assignments against a CNF.

Both are SAT calls on Glucose, which (unlike CaDiCaL) can be interrupted, so each has a time limit.
Small model sets are what the counter, the formula metrics and the compiler share: the last few
enumerations are remembered per CNF, so an answer's models are enumerated once per attempt. An
enumeration with a cap gives up at its first model when that model alone shows the cap will be
passed: the task variables it can drop, every clause still satisfied, are free, 2^k models at once
(road-r: 11 free in its first model, over a cap of 2,000 in 0.3 ms instead of 0.05 s of enumerating).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from pysat.solvers import Solver

from autonesy.tools.cnf import CNF

Model = tuple[int, ...]
RECENT_ENUMERATIONS = 8
FREE_CHECK_MAX_LITERALS = 20_000  # the first model's free variables are looked for up to this CNF size


class EnumerationCapReached(RuntimeError):
    """More models than the enumeration cap: the caller counts another way. ``at_least`` is how many
    models are known to exist (those found, or 2^k for a model with k free variables)."""

    def __init__(self, message: str, at_least: int):
        self.at_least = at_least
        super().__init__(message)


class CountTimedOut(TimeoutError):
    """A count ran out of its time limit; ``method`` is the route (``auto`` when all of them did)."""

    def __init__(self, method: str, time_limit_s: float, tried: tuple[str, ...] = ()):
        self.method, self.time_limit_s, self.tried = method, time_limit_s, tried
        detail = f" (tried: {'; '.join(tried)})" if tried else ""
        super().__init__(f"{method} count timed out after {time_limit_s:g} s{detail}")


class _InterruptibleSolver:
    """Glucose over ``cnf`` with every task variable declared, interrupted once ``time_limit_s`` passes
    (or when :meth:`interrupt` is called from another thread)."""

    def __init__(self, cnf: CNF, time_limit_s: float | None, what: str):
        self.solver = Solver(name="glucose4", bootstrap_with=[list(c) for c in cnf.clauses])
        for var in cnf.task_vars:  # a tautology declares the variable, so models and assumptions cover it
            self.solver.add_clause([var, -var])
        self.time_limit_s, self.what = time_limit_s, what
        self.deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
        self.timer = threading.Timer(time_limit_s, self.solver.interrupt) if time_limit_s is not None else None
        self.stopped = threading.Event()

    def __enter__(self) -> _InterruptibleSolver:
        if self.timer is not None:
            self.timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.solver.delete()

    def interrupt(self) -> None:
        """Stop the current and every later solve (they raise :class:`CountTimedOut`)."""
        self.stopped.set()
        self.solver.interrupt()

    def solve(self, assumptions: Sequence[int] = ()) -> bool:
        # The deadline is checked here too: an interrupt that lands between two calls is not kept by Glucose.
        if self.stopped.is_set() or (self.deadline is not None and time.monotonic() > self.deadline):
            raise CountTimedOut(self.what, self.time_limit_s or 0.0)
        satisfiable = self.solver.solve_limited(assumptions=assumptions, expect_interrupt=True)
        if satisfiable is None or self.stopped.is_set():
            raise CountTimedOut(self.what, self.time_limit_s or 0.0)
        return satisfiable


class Enumeration:
    """A projected enumeration that keeps what it found: it can be continued with a larger cap or on an
    equivalent (preprocessed) CNF, and stopped from another thread (:meth:`stop`)."""

    def __init__(self) -> None:
        self.models: list[Model] = []
        self._running: _InterruptibleSolver | None = None
        self._stopped = threading.Event()

    def run(self, cnf: CNF, cap: int | None, time_limit_s: float | None) -> list[Model]:
        """All projected models of ``cnf`` (the ones found before are blocked, not searched again).

        ``cnf`` must have the projected models of every CNF this enumeration ran on before. Raises
        :class:`EnumerationCapReached` past ``cap`` models, :class:`CountTimedOut` when the time
        passes or :meth:`stop` is called; the models found so far stay in ``models``.
        """
        n = cnf.num_task_vars
        with _InterruptibleSolver(cnf, time_limit_s, "enumeration") as sat:
            self._running = sat
            if self._stopped.is_set():
                sat.interrupt()
            for values in self.models:
                sat.solver.add_clause([-i if v else i for i, v in zip(range(1, n + 1), values)])
            check_free = cap is not None and sum(map(len, cnf.clauses)) <= FREE_CHECK_MAX_LITERALS
            try:
                while sat.solve():
                    model = sat.solver.get_model()
                    if check_free and cap is not None:
                        check_free = False
                        free = free_task_vars(cnf, model)
                        if 1 << free > cap:
                            raise EnumerationCapReached(
                                f"more than {cap} models (one model has {free} free variables)", 1 << free
                            )
                    values = tuple(1 if model[i - 1] > 0 else 0 for i in range(1, n + 1))
                    self.models.append(values)
                    if cap is not None and len(self.models) > cap:
                        raise EnumerationCapReached(f"more than {cap} models", len(self.models))
                    sat.solver.add_clause([-i if v else i for i, v in zip(range(1, n + 1), values)])
            finally:
                self._running = None
        return list(self.models)

    def stop(self) -> None:
        """Interrupt the running (and any later) :meth:`run`."""
        self._stopped.set()
        running = self._running
        if running is not None:
            running.interrupt()


def free_task_vars(cnf: CNF, model: Sequence[int]) -> int:
    """How many task variables of ``model`` (a full assignment, literals) can be dropped together with every
    clause still satisfied by what is left: ``cnf`` has at least 2 to that power projected models.

    Greedy: each variable in turn is dropped when every clause it satisfies has another true literal left.
    """
    true = set(model)
    clauses = [set(clause) for clause in cnf.clauses]  # a repeated literal satisfies a clause once
    satisfied = [sum(1 for lit in clause if lit in true) for clause in clauses]
    occurrences: dict[int, list[int]] = {}
    for index, clause in enumerate(clauses):
        for lit in clause:
            if lit in true:
                occurrences.setdefault(lit, []).append(index)
    free = 0
    for var in cnf.task_vars:
        where = occurrences.get(var if var in true else -var, ())
        if all(satisfied[index] >= 2 for index in where):
            for index in where:
                satisfied[index] -= 1
            free += 1
    return free


_recent: OrderedDict[tuple[CNF, int | None], list[Model] | None] = OrderedDict()  # None: over the cap
_recent_lock = threading.Lock()


def enumerate_models(cnf: CNF, cap: int | None = None, time_limit_s: float | None = None) -> list[Model]:
    """All assignments of the task variables that extend to a model, as 0/1 tuples (unordered).

    Raises :class:`EnumerationCapReached` when there are more than ``cap``, and
    :class:`CountTimedOut` when ``time_limit_s`` passes first.
    """
    key = (cnf, cap)
    with _recent_lock:
        if key in _recent:
            _recent.move_to_end(key)
            models = _recent[key]
            if models is None:
                raise EnumerationCapReached(f"more than {cap} models", (cap or 0) + 1)
            return list(models)
    try:
        found = Enumeration().run(cnf, cap, time_limit_s)
    except EnumerationCapReached:
        _remember(key, None)
        raise
    _remember(key, found)
    return list(found)


def _remember(key: tuple[CNF, int | None], models: list[Model] | None) -> None:
    with _recent_lock:
        _recent[key] = models
        while len(_recent) > RECENT_ENUMERATIONS:
            _recent.popitem(last=False)


def extensible_models(models: Iterable[Model], cnf: CNF, time_limit_s: float | None = None) -> list[Model]:
    """The task-variable assignments in ``models`` that extend to a model of ``cnf`` (SAT under assumptions)."""
    with _InterruptibleSolver(cnf, time_limit_s, "model-check") as sat:
        return [model for model in models if sat.solve([i if v else -i for i, v in enumerate(model, start=1)])]


def count_extensible(models: Iterable[Model], cnf: CNF, time_limit_s: float | None = None) -> int:
    """How many task-variable assignments in ``models`` extend to a model of ``cnf``."""
    return len(extensible_models(models, cnf, time_limit_s))
