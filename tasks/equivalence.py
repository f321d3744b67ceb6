"""Exact proof that a task's ground-truth CNF and its oracle define the same set of assignments.

- ``exhaustive`` (N ≤ 26): every one of the 2^N assignments, in chunks, through the oracle and
  through the ground truth's SDD (auxiliaries quantified); the two truth tables must be identical.
- ``construction``: the task enumerates its valid set by construction. Every enumerated assignment
  must be distinct, accepted by the oracle and a model of the ground truth, and the ground truth's
  exact projected model count must equal the size of that set — so no other model exists.
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
    task: str
    method: str
    model_count: int
    assignments_checked: int
    seconds: float


def all_assignments(num_vars: int, start: int, stop: int) -> np.ndarray:
    """Rows start..stop-1 of the truth table; variable 1 is the most significant bit."""
    codes = np.arange(start, stop, dtype=np.int64)
    shifts = np.arange(num_vars - 1, -1, -1, dtype=np.int64)
    return ((codes[:, None] >> shifts) & 1).astype(bool)


def _describe(task: Task, row: np.ndarray) -> str:
    true_names = [name for name, value in zip(task.names, row) if value]
    return "{" + ", ".join(true_names) + "} true, all others false"


def prove_equivalence(task: Task, method: str | None = None) -> EquivalenceReport:
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
    total = 1 << n
    count = 0
    for begin in range(0, total, 1 << _CHUNK_BITS):
        rows = all_assignments(n, begin, min(total, begin + (1 << _CHUNK_BITS)))
        by_oracle = np.asarray(task.oracle_batch(rows), dtype=bool)
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
    return count, total


def _by_construction(task: Task) -> tuple[int, int]:
    if task.enumerate_valid is None:
        raise TaskError(f"task {task.name!r}: proof by construction needs enumerate_valid")
    valid = np.asarray([list(row) for row in task.enumerate_valid()], dtype=bool).reshape(-1, task.num_vars)
    distinct = np.unique(valid, axis=0)
    if len(distinct) != len(valid):
        raise EquivalenceError(f"task {task.name!r}: enumerate_valid yields {len(valid) - len(distinct)} duplicates")
    rejected = np.flatnonzero(~np.asarray(task.oracle_batch(valid), dtype=bool))
    if rejected.size:
        raise EquivalenceError(f"task {task.name!r}: oracle rejects constructed {_describe(task, valid[rejected[0]])}")
    sdd = compile_to_sdd(task.ground_truth)
    missing = np.flatnonzero(~sdd.evaluate(valid))
    if missing.size:
        raise EquivalenceError(f"task {task.name!r}: ground truth rejects valid {_describe(task, valid[missing[0]])}")
    count = sdd.model_count()
    if count != len(valid):
        raise EquivalenceError(
            f"task {task.name!r}: ground truth has {count} models but {len(valid)} assignments are valid"
        )
    return count, len(valid)


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
                raise EquivalenceError(f"task {task.name!r}: ground truth allows {_describe(task, model)}, violating rule {clause}")
    truth_count = compile_to_sdd(truth).model_count()
    rules_count = compile_to_sdd(rules).model_count()
    if truth_count != rules_count:
        raise EquivalenceError(f"task {task.name!r}: ground truth has {truth_count} models, the rules {rules_count}")
    return truth_count, len(rules.clauses)
