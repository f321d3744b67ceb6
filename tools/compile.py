"""CNF → SDD with PySDD, under a time and size budget, auxiliaries existentially quantified.

A formula whose projected models were enumerated (a few thousand at most) is built straight from
them (:func:`compile_from_models`): bottom-up along the vtree, each node's models grouped by their
left part, which costs a fraction of conjoining clauses and needs no auxiliaries at all.

Vtree choice for clauses: a balanced vtree over the natural variable order (task variables first, then the
auxiliaries in creation order), with PySDD's dynamic vtree minimisation switched on. Encoders
number auxiliaries next to the task variables they serve, so the natural order keeps related
variables close; minimisation repairs the rest. Clauses are conjoined one at a time, and the budget
is checked between conjoins, so an overflow is reported instead of hanging.

:func:`compile_unminimised` tries cheaper shapes first, each without minimisation under a small
size budget: the natural order, then an elimination order of the formula's interaction graph
(min-fill; kand-logic: 0.07 s against 0.66 s for the natural order, and 1.1 s minimised). Measured
per task (benchmarks/pipeline_overhead.py): the natural order wins on most (Sudoku's min-fill order
overflows), so it goes first.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import signal
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pysdd.sdd import SddManager, SddNode, Vtree

from autonesy.tools import safe_files
from autonesy.tools.cnf import CNF
from autonesy.tools.config import COMPILE_TIME_LIMIT_S
from autonesy.tools.elimination import eliminate_auxiliaries
from autonesy.tools.enumeration import CountTimedOut, EnumerationCapReached, enumerate_models
from autonesy.tools.errors import AutonesyError
from autonesy.tools.process_lifetime import die_with_parent

DEFAULT_TIME_LIMIT_S = COMPILE_TIME_LIMIT_S
_budget_clock: Callable[[], float] = time.perf_counter  # what the compilations' time budgets are measured on


def budgets_on_thread_cpu_time() -> None:
    """From now on, measure this process's compilation budgets on the calling thread's CPU time.

    For a forked child that only compiles (the counters' SDD routes): its budgets then buy the same
    work on a loaded machine, as the parent's quiet clock does (:mod:`autonesy.tools.quiet_clock`);
    the parent kills it when its own limit passes. Not for a process whose other threads compile.
    """
    global _budget_clock
    _budget_clock = time.thread_time


DEFAULT_SIZE_LIMIT = 5_000_000
MODELS_ROUTE_CAP = 2_000  # up to this many projected models, build from the models
MODELS_ROUTE_MAX_S = 1.0  # and give their enumeration at most this long (a fifth of the limit at most)
NO_MINIMIZE_NODES_PER_LITERAL = 10  # budget of the first, unminimised tries at the clauses
MIN_FILL_MAX_VARS = 200  # above this, the elimination order is min-degree (min-fill costs O(n² d²) here)
VTREE_TYPES = ("balanced", "right", "left", "vertical")
LINEAR_VTREE_MAX_VARS = 10_000  # PySDD segfaulted (stack overflow) on one of 20,200 (exactly-100 of 200); 5,100 fine


class CompilationBudgetExceeded(AutonesyError, RuntimeError):
    """The SDD outgrew its time or size budget; the message says which and how far it got."""


@dataclass
class CompiledSDD:
    """An SDD over the task variables 1..N (auxiliaries quantified away, still in the manager)."""

    manager: SddManager
    node: SddNode
    num_task_vars: int
    vtree_type: str
    seconds: float

    @property
    def size(self) -> int:
        """The SDD's size, the circuit cost reported in metrics."""
        return self.node.size()

    def model_count(self) -> int:
        """Exact count over the N task variables: quantified auxiliaries are free, so divide them out.

        Counted here with Python integers: PySDD's own counts are 64-bit and silently wrap around
        once task plus auxiliary variables reach 64.
        """
        free_aux = self.manager.var_count() - self.num_task_vars
        return global_model_count(self.node, self.manager.var_count()) >> free_aux

    def evaluate(self, assignments: np.ndarray) -> np.ndarray:
        """Whether each row of a (B, N) 0/1 array is a model; vectorised bottom-up over the SDD."""
        return evaluate_sdd(self.node, assignments, self.num_task_vars)

    def save(self, directory: str | Path, stem: str) -> tuple[Path, Path]:
        """Write the SDD and its vtree in PySDD's text formats; returns both paths. PySDD writes by name and
        would follow a link planted in a run directory: it writes into memory, and the files go into
        ``directory`` through ``safe_files``."""
        directory = safe_files.output_dir(directory)
        sdd_path, vtree_path = directory / f"{stem}.sdd", directory / f"{stem}.vtree"
        for data, path in zip(self.texts(), (sdd_path, vtree_path)):
            safe_files.write_bytes(path, data)
        return sdd_path, vtree_path

    def texts(self) -> tuple[bytes, bytes]:
        """The SDD and its vtree in PySDD's text formats."""
        with _MemoryFile() as sdd, _MemoryFile() as vtree:
            self.node.save(sdd.path)
            self.manager.vtree().save(vtree.path)
            return sdd.read(), vtree.read()

    @classmethod
    def from_texts(cls, texts: tuple[bytes, bytes], num_task_vars: int, vtree_type: str, seconds: float) -> CompiledSDD:
        """The SDD :meth:`texts` gave, in a manager of its own."""
        with _MemoryFile(texts[0]) as sdd, _MemoryFile(texts[1]) as vtree:
            return cls._from_files(sdd.path, vtree.path, num_task_vars, vtree_type, seconds)

    @classmethod
    def _from_files(cls, sdd: bytes, vtree: bytes, num_task_vars: int, vtree_type: str, seconds: float) -> CompiledSDD:
        """The SDD in PySDD's files named ``sdd`` and ``vtree``, in a manager of its own."""
        manager = SddManager.from_vtree(Vtree.from_file(vtree))
        node = manager.read_sdd_file(sdd)
        node.ref()
        return cls(manager, node, num_task_vars, vtree_type, seconds)


class _MemoryFile:
    """A file in memory (a memfd) that PySDD reads or writes by name (``/proc/self/fd/N``, which a forked child
    inherits): no file is made on a disk, where creating and deleting two per compilation cost measurable
    kernel time in a sweep."""

    def __init__(self, data: bytes = b"") -> None:
        self.fd = os.memfd_create("autonesy-sdd", os.MFD_CLOEXEC)
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        self.path = f"/proc/self/fd/{self.fd}".encode()

    def read(self) -> bytes:
        with open(self.path, "rb") as file:
            return file.read()

    def __enter__(self) -> _MemoryFile:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def compile_to_sdd(
    cnf: CNF,
    *,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    size_limit: int = DEFAULT_SIZE_LIMIT,
    vtree_type: str = "balanced",
    minimize: bool = True,
    var_order: Sequence[int] | None = None,
) -> CompiledSDD:
    """Compile ``cnf`` and quantify its auxiliaries; raise :class:`CompilationBudgetExceeded` on overflow.

    ``var_order`` (a permutation of 1..num_vars; default the natural order) is the vtree's leaf order.
    """
    if vtree_type not in VTREE_TYPES:
        raise ValueError(f"unknown vtree type {vtree_type!r}; choose one of {', '.join(VTREE_TYPES)}")
    if cnf.num_task_vars < 1:
        raise ValueError("a CNF needs at least one task variable to compile")
    if time_limit_s <= 0:  # building a large manager alone takes seconds: none left, none started
        raise CompilationBudgetExceeded("SDD compilation had no time budget left")
    start, budget_start = time.perf_counter(), _budget_clock()
    num_vars = cnf.num_vars
    order = list(var_order) if var_order is not None else list(range(1, num_vars + 1))
    if sorted(order) != list(range(1, num_vars + 1)):
        raise ValueError(f"var_order must be a permutation of 1..{num_vars}")
    vtree = Vtree(var_count=num_vars, var_order=order, vtree_type=vtree_type)
    manager = SddManager.from_vtree(vtree)
    if minimize:
        manager.auto_gc_and_minimize_on()
    else:
        manager.auto_gc_and_minimize_off()
    formula = manager.true()
    formula.ref()
    for done, clause in enumerate(cnf.clauses, start=1):
        disjunction = manager.false()
        for lit in clause:
            disjunction = disjunction | manager.literal(lit)
        conjunction = formula & disjunction
        conjunction.ref()
        formula.deref()
        formula = conjunction
        elapsed = _budget_clock() - budget_start
        if elapsed > time_limit_s or manager.live_size() > size_limit:
            what = "time" if elapsed > time_limit_s else "size"
            raise CompilationBudgetExceeded(
                f"SDD compilation exceeded its {what} budget ({time_limit_s:g} s, {size_limit} nodes) "
                f"after {done} of {len(cnf.clauses)} clauses ({elapsed:.1f} s, live size {manager.live_size()})"
            )
    if cnf.num_aux_vars:
        quantify = array("i", [0] + [0] * cnf.num_task_vars + [1] * cnf.num_aux_vars)
        projected = manager.exists_multiple(quantify, formula)
        projected.ref()
        formula.deref()
        formula = projected
    return CompiledSDD(manager, formula, cnf.num_task_vars, vtree_type, time.perf_counter() - start)


def compile_in_child(cnf: CNF, *, time_limit_s: float = DEFAULT_TIME_LIMIT_S, **options) -> CompiledSDD:
    """:func:`compile_to_sdd` in a forked child that is killed once ``time_limit_s`` has passed.

    :func:`compile_to_sdd` checks its budget between conjoins, and one conjoin can take minutes
    (kand-logic without auxiliaries, vertical vtree, unminimised: 163 s in a single step). The child
    writes the SDD and its vtree to files, which are read back here; an overflow comes back as
    :class:`CompilationBudgetExceeded` either way.
    """
    return _in_child(
        lambda: compile_to_sdd(cnf, time_limit_s=time_limit_s, **options),
        time_limit_s,
        cnf.num_task_vars,
        options.get("vtree_type", "balanced"),
    )


def _in_child(
    build: Callable[[], CompiledSDD], time_limit_s: float, num_task_vars: int, vtree_type: str
) -> CompiledSDD:
    """``build()`` in a forked child killed after ``time_limit_s``; its SDD read back from the files it wrote."""
    if time_limit_s <= 0:
        raise CompilationBudgetExceeded("SDD compilation had no time budget left")
    start = time.perf_counter()
    with _MemoryFile() as sdd, _MemoryFile() as vtree, _MemoryFile() as overflow:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # child: compile, save, leave without running the parent's cleanup
            code = 1
            try:
                die_with_parent(parent)
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                compiled = build()
                compiled.node.save(sdd.path)
                compiled.manager.vtree().save(vtree.path)
                code = 0
            except CompilationBudgetExceeded as error:
                os.write(overflow.fd, str(error).encode())
                code = 2
            finally:
                os._exit(code)
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.perf_counter() - start > time_limit_s:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise CompilationBudgetExceeded(
                    f"SDD compilation exceeded its time budget ({time_limit_s:g} s) inside one conjoin"
                )
            time.sleep(0.005)
        code = os.waitstatus_to_exitcode(status)
        if code == 2:
            raise CompilationBudgetExceeded(overflow.read().decode(errors="replace"))
        if code != 0:
            raise CompilationBudgetExceeded(f"SDD compilation died in its child process (exit status {code})")
        return CompiledSDD._from_files(sdd.path, vtree.path, num_task_vars, vtree_type, time.perf_counter() - start)


def compile_formula(
    cnf: CNF,
    *,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    size_limit: int = DEFAULT_SIZE_LIMIT,
    vtree_type: str = "balanced",
) -> CompiledSDD:
    """The cheapest exact route: from the enumerated models when there are few, else from the clauses.

    The clauses come with the auxiliaries that resolution removes cheaply gone
    (:func:`~autonesy.tools.elimination.eliminate_auxiliaries`: same projection; road-r compiles in
    0.06 s instead of 2 s), and are first conjoined without vtree minimisation under a small size
    budget (ten nodes per literal; most formulas fit, in a fraction of the time), and only then with
    minimisation.
    """
    start = time.perf_counter()
    try:
        models = enumerate_models(cnf, MODELS_ROUTE_CAP, min(MODELS_ROUTE_MAX_S, 0.2 * time_limit_s))
    except (EnumerationCapReached, CountTimedOut):
        reduced = eliminate_auxiliaries(cnf)
        deadline = start + time_limit_s
        sdd = _in_child(  # one conjoin can outlast the budget many times over: the child is killed at it
            lambda: _compile_clauses_cheapest_first(reduced, deadline, size_limit, vtree_type),
            deadline - time.perf_counter(),
            cnf.num_task_vars,
            vtree_type,
        )
        sdd.seconds = time.perf_counter() - start
        return sdd
    sdd = compile_from_models(models, cnf.num_task_vars, vtree_type)
    sdd.seconds = time.perf_counter() - start
    return sdd


def _compile_clauses_cheapest_first(cnf: CNF, deadline: float, size_limit: int, vtree_type: str) -> CompiledSDD:
    try:
        return compile_unminimised(cnf, deadline - time.perf_counter(), size_limit, vtree_type)
    except CompilationBudgetExceeded as unminimised:
        try:
            return compile_to_sdd(
                cnf, time_limit_s=deadline - time.perf_counter(), size_limit=size_limit, vtree_type=vtree_type
            )
        except CompilationBudgetExceeded as minimised:  # say what each try met
            raise CompilationBudgetExceeded(f"{unminimised}; minimised: {minimised}") from None


def compile_unminimised(
    cnf: CNF, time_limit_s: float, size_limit: int = DEFAULT_SIZE_LIMIT, vtree_type: str = "balanced"
) -> CompiledSDD:
    """Without vtree minimisation, within ten nodes per literal: the natural order, then an elimination order.

    Raises :class:`CompilationBudgetExceeded` (naming both tries) when neither fits.
    """
    deadline = _budget_clock() + time_limit_s
    small = min(size_limit, NO_MINIMIZE_NODES_PER_LITERAL * max(1, sum(len(c) for c in cnf.clauses)))
    overflows = []
    for name, order in (("natural", lambda: None), ("elimination", lambda: elimination_order(cnf, deadline))):
        try:
            return compile_to_sdd(
                cnf,
                time_limit_s=deadline - _budget_clock(),
                size_limit=small,
                vtree_type=vtree_type,
                minimize=False,
                var_order=order(),
            )
        except CompilationBudgetExceeded as error:
            overflows.append(f"{name} order: {error}")
    raise CompilationBudgetExceeded("; ".join(overflows))


def compile_by_elimination(
    cnf: CNF,
    *,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    size_limit: int = DEFAULT_SIZE_LIMIT,
    vtree_type: str = "right",
    var_order: Sequence[int] | None = None,
) -> CompiledSDD:
    """Bucket elimination: each auxiliary quantified as soon as every clause that mentions it is in.

    Compiling all clauses first and quantifying at the end (:func:`compile_to_sdd`) carries the
    auxiliaries' every combination along: a sequential counter's registers make an exactly-k of n
    exponential in k. Here the auxiliaries are eliminated in ``var_order`` (default:
    :func:`anchored_order`, each after the task variable it hangs on), the vtree is right-linear over
    the reversed order, every clause waits in the bucket of its first auxiliary in that order, and an
    auxiliary's bucket is conjoined and the auxiliary quantified before the next one: what is
    carried is only what the encoding's state (a counter's value) holds. Measured (exactly-25 of 50,
    sequential counter): 1.3 s of CPU, SDD size 1,346; the min-degree order, and left-linear,
    vertical or register-at-a-time elimination, ran out of 60 s. Raises
    :class:`CompilationBudgetExceeded` past the time or size budget.
    """
    if cnf.num_task_vars < 1:
        raise ValueError("a CNF needs at least one task variable to compile")
    if cnf.num_vars > LINEAR_VTREE_MAX_VARS:
        raise CompilationBudgetExceeded(
            f"bucket elimination: {cnf.num_vars} variables, more than a right-linear vtree of "
            f"{LINEAR_VTREE_MAX_VARS} (PySDD recurses once per level and overflows its stack)"
        )
    start, budget_start = time.perf_counter(), _budget_clock()
    n = cnf.num_task_vars
    order = list(var_order) if var_order is not None else anchored_order(cnf)
    position = {var: index for index, var in enumerate(order)}
    # The vtree runs the other way: the variables eliminated last sit near its root, so each conjunction
    # touches the top of the carried SDD, not all of it (exactly-25 of 50: 1.3 s of CPU instead of 2.9 s).
    vtree = Vtree(var_count=cnf.num_vars, var_order=order[::-1], vtree_type=vtree_type)
    manager = SddManager.from_vtree(vtree)
    manager.auto_gc_and_minimize_off()
    buckets: dict[int, list[tuple[SddNode, frozenset[int]]]] = {}
    task_part = manager.true()
    task_part.ref()

    def check(done: str) -> None:
        elapsed = _budget_clock() - budget_start
        if elapsed > time_limit_s or manager.live_size() > size_limit:
            what = "time" if elapsed > time_limit_s else "size"
            raise CompilationBudgetExceeded(
                f"SDD bucket elimination exceeded its {what} budget ({time_limit_s:g} s, {size_limit} nodes) "
                f"after {done} ({elapsed:.1f} s, live size {manager.live_size()})"
            )

    def place(node: SddNode, variables: frozenset[int]) -> None:
        nonlocal task_part
        auxiliaries = [var for var in variables if var > n]
        if auxiliaries:
            node.ref()
            buckets.setdefault(min(auxiliaries, key=position.__getitem__), []).append((node, variables))
        else:
            conjunction = task_part & node
            conjunction.ref()
            task_part.deref()
            task_part = conjunction

    for clause in cnf.clauses:
        disjunction = manager.false()
        for lit in clause:
            disjunction = disjunction | manager.literal(lit)
        place(disjunction, frozenset(abs(lit) for lit in clause))
    eliminated = 0
    for var in order:
        if var not in buckets:
            continue
        merged, variables = manager.true(), frozenset[int]()
        merged.ref()
        for node, support in buckets.pop(var):  # clauses were placed first: the carried state comes last
            conjunction = merged & node
            conjunction.ref()
            merged.deref()
            node.deref()
            merged, variables = conjunction, variables | support
        projected = manager.exists(var, merged)
        merged.deref()
        place(projected, variables - {var})
        eliminated += 1
        if eliminated % 256 == 0:
            manager.garbage_collect()
        check(f"{eliminated} of {cnf.num_aux_vars} auxiliaries")
    return CompiledSDD(manager, task_part, n, vtree_type, time.perf_counter() - start)


def anchored_order(cnf: CNF) -> list[int]:
    """Every variable in the order of the task variable it hangs on: task variable i, then the auxiliaries
    anchored at i (in creation order), then i + 1.

    An auxiliary's anchor is the smallest task variable it shares a clause with; one that shares none
    takes the smallest anchor among its neighbours (breadth-first from the anchored ones); one that
    reaches none goes last. A sequential counter's registers (both counters of an exactly-k) land right
    after the input they count, so bucket elimination touches only the top of the carried SDD.
    """
    n = cnf.num_task_vars
    neighbours: dict[int, set[int]] = {}
    for clause in cnf.clauses:
        variables = {abs(lit) for lit in clause}
        for var in variables:
            if var > n:
                neighbours.setdefault(var, set()).update(variables - {var})
    anchor = {var: var for var in range(1, n + 1)}
    frontier = []
    for var in range(n + 1, cnf.num_vars + 1):
        tasks = [other for other in neighbours.get(var, ()) if other <= n]
        if tasks:
            anchor[var] = min(tasks)
            frontier.append(var)
    while frontier:
        reached: dict[int, int] = {}
        for var in frontier:
            for other in neighbours.get(var, ()):
                if other not in anchor:
                    reached[other] = min(reached.get(other, anchor[var]), anchor[var])
        anchor.update(reached)
        frontier = list(reached)
    last = n + 1
    return sorted(range(1, cnf.num_vars + 1), key=lambda var: (anchor.get(var, last), var > n, var))


def elimination_order(cnf: CNF, deadline: float | None = None) -> list[int]:
    """A greedy elimination order of the interaction graph (variables sharing a clause are adjacent).

    Each step removes the variable whose neighbours need the fewest new edges to form a clique
    (min-fill; min-degree above ``MIN_FILL_MAX_VARS`` variables), and connects its neighbours.
    Variables eliminated together end up next to each other, which keeps the SDD's parts small.
    Past ``deadline`` (on the budgets' clock) it raises :class:`CompilationBudgetExceeded`:
    the cliques of a large formula can grow without end.
    """
    adjacent: dict[int, set[int]] = {v: set() for v in range(1, cnf.num_vars + 1)}
    for clause in cnf.clauses:
        variables = {abs(lit) for lit in clause}
        for var in variables:
            adjacent[var] |= variables - {var}
    if cnf.num_vars <= MIN_FILL_MAX_VARS:
        return _min_fill_order(adjacent)
    return _min_degree_order(adjacent, deadline)


def _eliminate(adjacent: dict[int, set[int]], var: int) -> set[int]:
    """Remove ``var`` and make its neighbours a clique; return them."""
    neighbours = adjacent.pop(var)
    for other in neighbours:
        adjacent[other] |= neighbours - {other}
        adjacent[other].discard(var)
    return neighbours


def _min_fill_order(adjacent: dict[int, set[int]]) -> list[int]:
    def cost(var: int) -> tuple[int, int, int]:
        neighbours = list(adjacent[var])
        fill = sum(1 for i, a in enumerate(neighbours) for b in neighbours[i + 1 :] if b not in adjacent[a])
        return fill, len(neighbours), var

    order = []
    while adjacent:
        var = min(adjacent, key=cost)
        _eliminate(adjacent, var)
        order.append(var)
    return order


def _min_degree_order(adjacent: dict[int, set[int]], deadline: float | None) -> list[int]:
    """Min-degree, ties to the smaller variable, with a heap of (degree, var) entries; an entry whose
    degree is no longer the variable's is stale and skipped (O(E log n) instead of a scan per step)."""
    heap = [(len(neighbours), var) for var, neighbours in adjacent.items()]
    heapq.heapify(heap)
    order = []
    while heap:
        degree, var = heapq.heappop(heap)
        if var not in adjacent or len(adjacent[var]) != degree:
            continue
        for other in _eliminate(adjacent, var):
            heapq.heappush(heap, (len(adjacent[other]), other))
        order.append(var)
        if deadline is not None and _budget_clock() > deadline:
            raise CompilationBudgetExceeded(
                f"the elimination order ran out of the time budget after {len(order)} of "
                f"{len(order) + len(adjacent)} variables"
            )
    return order


def compile_from_models(
    models: Iterable[Sequence[int]], num_task_vars: int, vtree_type: str = "balanced"
) -> CompiledSDD:
    """The SDD whose models are exactly ``models`` (0/1 rows over the task variables 1..N)."""
    if vtree_type not in VTREE_TYPES:
        raise ValueError(f"unknown vtree type {vtree_type!r}; choose one of {', '.join(VTREE_TYPES)}")
    start = time.perf_counter()
    rows = frozenset(tuple(int(v) for v in row) for row in models)
    if any(len(row) != num_task_vars for row in rows):
        raise ValueError(f"every model needs {num_task_vars} values")
    key = hashlib.sha256(f"{vtree_type} {num_task_vars}\n".encode() + b"".join(map(bytes, sorted(rows)))).digest()
    with _BUILT_LOCK:
        texts = _BUILT.get(key)
        if texts is not None:
            _BUILT.move_to_end(key)
    if texts is not None:
        return CompiledSDD.from_texts(texts, num_task_vars, vtree_type, time.perf_counter() - start)
    vtree = Vtree(var_count=num_task_vars, var_order=list(range(1, num_task_vars + 1)), vtree_type=vtree_type)
    manager = SddManager.from_vtree(vtree)
    manager.auto_gc_and_minimize_off()
    built: dict[tuple[int, int, frozenset], SddNode] = {}

    def build(node: Vtree, offset: int, part: frozenset) -> SddNode:
        """The SDD over ``node``'s variables (from column ``offset`` of a row on) true exactly on ``part``."""
        if not part:
            return manager.false()
        key = (offset, node.var_count(), part)  # a vtree node is its span of in-order columns
        if key in built:
            return built[key]
        if node.is_leaf():
            values = {row[0] for row in part}
            result = manager.true() if len(values) == 2 else manager.literal(node.var() if 1 in values else -node.var())
        else:
            split = node.left().var_count()
            by_left: dict[tuple, set] = {}
            for row in part:
                by_left.setdefault(row[:split], set()).add(row[split:])
            by_right: dict[frozenset, set] = {}
            for left_part, right_parts in by_left.items():
                by_right.setdefault(frozenset(right_parts), set()).add(left_part)
            result = manager.false()
            for right_key, left_parts in by_right.items():
                prime = build(node.left(), offset, frozenset(left_parts))
                result = result | (prime & build(node.right(), offset + split, right_key))
        built[key] = result
        return result

    root = manager.vtree()
    order = _in_order_vars(root)
    permuted = frozenset(tuple(row[v - 1] for v in order) for row in rows)
    node = build(root, 0, permuted)
    node.ref()
    compiled = CompiledSDD(manager, node, num_task_vars, vtree_type, time.perf_counter() - start)
    texts = compiled.texts()
    with _BUILT_LOCK:
        _BUILT[key] = texts
        while len(_BUILT) > BUILT_ENTRIES or sum(len(a) + len(b) for a, b in _BUILT.values()) > BUILT_BYTES:
            _BUILT.popitem(last=False)
    return compiled


# Circuits built from models, as PySDD's texts, by (vtree type, N, the models): a study compiles the same models
# again and again (every correct answer to a task, in each format), and reading a circuit back costs a fraction
# of building it (warcraft's 184 models: 0.085 s to build). Texts, not managers: each PySDD manager reserves
# about 160 MB of address space, and 64 of them kept made a later fork fail (ENOMEM).
BUILT_ENTRIES = 64
BUILT_BYTES = 32 << 20  # and their texts together (2,000 random models over 100 variables: 1.6 MB)
_BUILT: OrderedDict[bytes, tuple[bytes, bytes]] = OrderedDict()
_BUILT_LOCK = threading.Lock()


def _in_order_vars(node: Vtree) -> list[int]:
    """The variables of a vtree, left to right (the column order :func:`compile_from_models` splits on)."""
    if node.is_leaf():
        return [node.var()]
    return _in_order_vars(node.left()) + _in_order_vars(node.right())


def sdd_postorder(node: SddNode) -> list[SddNode]:
    """Every distinct node of an SDD, each after its primes and subs (the one traversal all passes use)."""
    order: list[SddNode] = []
    emitted: set[int] = set()
    stack: list[tuple[SddNode, bool]] = [(node, False)]
    while stack:
        current, children_done = stack.pop()
        if current.id in emitted:
            continue
        if children_done or not current.is_decision():
            emitted.add(current.id)
            order.append(current)
            continue
        stack.append((current, True))
        for prime, sub in current.elements():
            stack.append((prime, False))
            stack.append((sub, False))
    return order


def global_model_count(node: SddNode, num_vars: int) -> int:
    """Models of ``node`` over all ``num_vars`` manager variables, exactly (arbitrary precision)."""
    counts: dict[int, int] = {}

    def relative(child: SddNode, vtree_vars: int) -> int:
        """Models of ``child`` over the variables of a vtree node with ``vtree_vars`` variables."""
        if child.is_false():
            return 0
        if child.is_true():
            return 1 << vtree_vars
        return counts[child.id] << (vtree_vars - child.vtree().var_count())

    if node.is_false():
        return 0
    if node.is_true():
        return 1 << num_vars
    for current in sdd_postorder(node):
        if current.is_literal():
            counts[current.id] = 1
        elif current.is_decision():
            vtree = current.vtree()
            left, right = vtree.left().var_count(), vtree.right().var_count()
            counts[current.id] = sum(relative(prime, left) * relative(sub, right) for prime, sub in current.elements())
    return counts[node.id] << (num_vars - node.vtree().var_count())


def evaluate_sdd(node: SddNode, assignments: np.ndarray, num_task_vars: int) -> np.ndarray:
    """Truth value of an SDD over a batch of task-variable assignments, shape (B, N) → (B,).

    Bottom-up over the SDD's nodes on bit-packed columns (64 assignments per machine word), so
    millions of assignments cost a few word operations per node.
    """
    x = np.asarray(assignments, dtype=bool)
    if x.ndim != 2 or x.shape[1] != num_task_vars:
        raise ValueError(f"expected assignments of shape (B, {num_task_vars}), got {x.shape}")
    batch = x.shape[0]
    packed = np.packbits(x, axis=0)
    packed = np.pad(packed, ((0, (-packed.shape[0]) % 8), (0, 0)))
    columns = np.ascontiguousarray(packed.T).view(np.uint64)  # (N, words)
    words = columns.shape[1]
    values: dict[int, np.ndarray] = {}
    for current in sdd_postorder(node):
        if current.is_true():
            values[current.id] = np.full(words, np.iinfo(np.uint64).max, dtype=np.uint64)
        elif current.is_false():
            values[current.id] = np.zeros(words, dtype=np.uint64)
        elif current.is_literal():
            lit = current.literal
            if abs(lit) > num_task_vars:
                raise ValueError(f"SDD still mentions auxiliary variable {abs(lit)}; quantify it first")
            column = columns[abs(lit) - 1]
            values[current.id] = column if lit > 0 else ~column
        else:
            result = np.zeros(words, dtype=np.uint64)
            for prime, sub in current.elements():
                result |= values[prime.id] & values[sub.id]
            values[current.id] = result
    return np.unpackbits(values[node.id].view(np.uint8))[:batch].astype(bool)
