"""Exact proof that a task's ground-truth CNF and its oracle define the same set of assignments.

- ``exhaustive`` (N ≤ 26): every one of the 2^N assignments, in chunks, through the oracle and
  through the ground truth's SDD (auxiliaries quantified); the two truth tables must be identical.
- ``construction``: the task enumerates its valid set by construction. Every enumerated assignment
  must be distinct, accepted by the oracle and a model of the ground truth, and the ground truth's
  exact projected model count must equal the size of that set — so no other model exists. The
  oracle is also checked on every assignment one bit away from a valid one (it must accept exactly
  those that are themselves valid), which catches oracles that accept too much near the valid set.
- ``clausal``: the oracle evaluates a published rule list given as an auxiliary-free CNF. The ground
  truth must entail every rule (a SAT call each) and both must have the same exact projected count.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from pysat.solvers import Solver

from autonesy.tasks.task import Task, TaskError
from autonesy.tools.compile import compile_to_sdd

EXHAUSTIVE_MAX_VARS = 26
_CHUNK_BITS = 20


class EquivalenceError(AssertionError):
    """Ground truth and oracle disagree; the message holds a counterexample."""


@dataclass(frozen=True)
class EquivalenceReport:
    """The outcome of proving a ground truth equal to its oracle: method, model count and time."""

    task: str
    method: str
    model_count: int
    assignments_checked: int
    seconds: float


def all_assignments(num_vars: int) -> np.ndarray:
    """The whole truth table over ``num_vars`` variables; variable 1 is the most significant bit."""
    codes = np.arange(1 << num_vars, dtype=np.int64)
    shifts = np.arange(num_vars - 1, -1, -1, dtype=np.int64)
    return ((codes[:, None] >> shifts) & 1).astype(bool)


def _truth_table_chunks(num_vars: int):
    """The truth table in chunks of 2^20 rows: a fixed table of the low bits under constant high bits."""
    low_bits = min(num_vars, _CHUNK_BITS)
    low = all_assignments(low_bits)
    high_bits = num_vars - low_bits
    for high in range(1 << high_bits):
        rows = np.empty((len(low), num_vars), dtype=bool)
        rows[:, :high_bits] = [(high >> shift) & 1 for shift in range(high_bits - 1, -1, -1)]
        rows[:, high_bits:] = low
        yield rows


def _describe(task: Task, row: np.ndarray) -> str:
    true_names = [name for name, value in zip(task.names, row) if value]
    return "{" + ", ".join(true_names) + "} true, all others false"


def prove_equivalence(task: Task, method: str | None = None) -> EquivalenceReport:
    """Prove the task's ground-truth CNF and its oracle accept the same assignments (exhaustively, by construction, or
    clause by clause) or raise ``EquivalenceError`` with a witness."""
    method = method or task.metadata.equivalence_method
    if not (task.has_oracle and task.has_ground_truth):
        raise TaskError(f"task {task.name!r}: proving equivalence needs both a ground truth and an oracle")
    start = time.perf_counter()
    if method == "exhaustive":
        count, checked = _exhaustive(task)
    elif method == "construction":
        count, checked = _by_construction(task)
    elif method == "clausal":
        count, checked = _clausal(task)
    else:
        raise TaskError(f"task {task.name!r}: no equivalence method {method!r}")
    return EquivalenceReport(task.name, method, count, checked, time.perf_counter() - start)


def _exhaustive(task: Task) -> tuple[int, int]:
    n = task.num_vars
    if n > EXHAUSTIVE_MAX_VARS:
        raise TaskError(f"task {task.name!r}: {n} variables is too many for an exhaustive proof")
    sdd = compile_to_sdd(task.ground_truth)
    count = 0
    for rows in _truth_table_chunks(n):
        by_oracle = task.oracle_rows(rows)
        by_cnf = sdd.evaluate(rows)
        wrong = np.flatnonzero(by_oracle != by_cnf)
        if wrong.size:
            row = rows[wrong[0]]
            raise EquivalenceError(
                f"task {task.name!r}: oracle says {bool(by_oracle[wrong[0]])}, ground truth says "
                f"{bool(by_cnf[wrong[0]])} for {_describe(task, row)}"
            )
        count += int(by_cnf.sum())
    if count != sdd.model_count():
        raise EquivalenceError(f"task {task.name!r}: truth table has {count} models, SDD count {sdd.model_count()}")
    return count, 1 << n


def _by_construction(task: Task) -> tuple[int, int]:
    if task.enumerate_valid is None:
        raise TaskError(f"task {task.name!r}: proof by construction needs enumerate_valid")
    valid = np.asarray([list(row) for row in task.enumerate_valid()], dtype=bool).reshape(-1, task.num_vars)
    keys = _row_keys(valid)
    duplicates = len(keys) - len(np.unique(keys))
    if duplicates:
        raise EquivalenceError(f"task {task.name!r}: enumerate_valid yields {duplicates} duplicates")
    rejected = np.flatnonzero(~task.oracle_rows(valid))
    if rejected.size:
        raise EquivalenceError(f"task {task.name!r}: oracle rejects constructed {_describe(task, valid[rejected[0]])}")
    checked_neighbours = _check_neighbours(task, valid)
    sdd = compile_to_sdd(task.ground_truth)
    missing = np.flatnonzero(~sdd.evaluate(valid))
    if missing.size:
        raise EquivalenceError(f"task {task.name!r}: ground truth rejects valid {_describe(task, valid[missing[0]])}")
    count = sdd.model_count()
    if count != len(valid):
        raise EquivalenceError(
            f"task {task.name!r}: ground truth has {count} models but {len(valid)} assignments are valid"
        )
    return count, len(valid) + checked_neighbours


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """One hashable, sortable key per 0/1 row (its bits packed into bytes)."""
    packed = np.packbits(rows, axis=1)
    return np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()


def _check_neighbours(task: Task, valid: np.ndarray, chunk_rows: int = 1 << 14) -> int:
    """The oracle must accept exactly the valid rows among all rows one bit away from a valid row."""
    n = task.num_vars
    valid_keys = np.sort(_row_keys(valid))
    flips = np.eye(n, dtype=bool)
    checked = 0
    for begin in range(0, len(valid), chunk_rows):
        block = valid[begin : begin + chunk_rows]
        neighbours = (block[:, None, :] ^ flips[None, :, :]).reshape(-1, n)
        keys = _row_keys(neighbours)
        position = np.searchsorted(valid_keys, keys).clip(max=len(valid_keys) - 1)
        expected = valid_keys[position] == keys
        said = task.oracle_rows(neighbours)
        wrong = np.flatnonzero(said != expected)
        if wrong.size:
            row = neighbours[wrong[0]]
            raise EquivalenceError(
                f"task {task.name!r}: oracle says {bool(said[wrong[0]])} for {_describe(task, row)}, one bit "
                f"from a valid assignment, but the constructed valid set {'contains' if expected[wrong[0]] else 'does not contain'} it"
            )
        checked += len(neighbours)
    return checked


def _clausal(task: Task) -> tuple[int, int]:
    if task.rule_list is None:
        raise TaskError(f"task {task.name!r}: the clausal proof needs the task's rule_list")
    rules = task.rule_list()
    if rules.num_aux_vars or rules.num_task_vars != task.num_vars:
        raise TaskError(f"task {task.name!r}: the rule list must be a CNF over exactly the task variables")
    truth = task.ground_truth
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in truth.clauses]) as solver:
        for clause in rules.clauses:
            if solver.solve(assumptions=[-lit for lit in clause]):
                model = np.array([solver.get_model()[i] > 0 for i in range(task.num_vars)])
                raise EquivalenceError(
                    f"task {task.name!r}: ground truth allows {_describe(task, model)}, violating rule {clause}"
                )
    truth_count = compile_to_sdd(truth).model_count()
    rules_count = compile_to_sdd(rules).model_count()
    if truth_count != rules_count:
        raise EquivalenceError(f"task {task.name!r}: ground truth has {truth_count} models, the rules {rules_count}")
    return truth_count, len(rules.clauses)
