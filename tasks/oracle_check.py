"""Testing an accepted formula against what a task knows without an expert formula.

Two sources of truth: the annotated training labels (each must satisfy the formula) and the task's
oracle. Against the oracle the formula is probed in both directions:
- valid assignments the formula rejects (too strict): the labels, the oracle's valid set when the
  task can enumerate it (a sample), and one-bit changes of those that the oracle accepts;
- assignments the formula accepts but the oracle rejects (too permissive): models of the formula
  found by a SAT solver with random decision phases, and one-bit changes of valid assignments.
Every check is a SAT call with the assignment as assumptions, so auxiliaries never get in the way.
The result lists concrete counterexamples, written so an LLM can act on them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from pysat.solvers import Solver

from autonesy.tasks.task import Task
from autonesy.tools.cnf import CNF


@dataclass(frozen=True)
class Counterexample:
    """An assignment on which the formula and the oracle disagree, and where it came from (a label or a probe)."""

    true_variables: tuple[str, ...]
    formula_says: bool
    oracle_says: bool
    source: str  # label | oracle-valid | neighbour | formula-model

    def describe(self) -> str:
        """The counterexample in words for the semantic-repair prompt."""
        holds = ", ".join(self.true_variables) if self.true_variables else "none"
        verdict = "accepts" if self.formula_says else "rejects"
        truth = "valid" if self.oracle_says else "invalid"
        return f"- true: {holds}; all others false. Your formula {verdict} it, but it is {truth}."


@dataclass
class OracleTestResult:
    """The oracle test's verdict and counts, with counterexamples for the semantic-repair feedback."""

    passed: bool
    labels_checked: int = 0
    labels_rejected: int = 0
    probes_checked: int = 0
    too_strict: int = 0
    too_permissive: int = 0
    counterexamples: list[Counterexample] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON data (for the graph state and metrics.json)."""
        return asdict(self)

    def feedback(self) -> str:
        """The counterexamples as text for a semantic-repair prompt."""
        return "\n".join(example.describe() for example in self.counterexamples)


class _Membership:
    """Is a task-variable assignment a projected model of the CNF? One SAT call per question."""

    def __init__(self, cnf: CNF) -> None:
        self.n = cnf.num_task_vars
        self.solver = Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses])
        for var in cnf.task_vars:  # make every task variable known to the solver
            self.solver.add_clause([var, -var])

    def __call__(self, row: Sequence[int]) -> bool:
        return bool(self.solver.solve(assumptions=[i if v else -i for i, v in zip(range(1, self.n + 1), row)]))

    def random_models(self, count: int, rng: random.Random) -> list[tuple[int, ...]]:
        """Diverse models: each solve assumes a random polarity for a random few task variables."""
        models = []
        for _ in range(count):
            for size in (max(1, self.n // 4), 1, 0):
                chosen = rng.sample(range(1, self.n + 1), size)
                if self.solver.solve(assumptions=[v if rng.random() < 0.5 else -v for v in chosen]):
                    model = self.solver.get_model()
                    models.append(tuple(1 if model[i] > 0 else 0 for i in range(self.n)))
                    break
            else:
                break  # unsatisfiable formula: no models at all
        return models

    def close(self) -> None:
        self.solver.delete()


def oracle_test(
    cnf: CNF,
    task: Task,
    labels: np.ndarray | None = None,
    *,
    samples: int = 200,
    seed: int = 0,
    max_counterexamples: int = 5,
) -> OracleTestResult:
    """Probe ``cnf`` with the training ``labels`` (rows over the task variables) and the oracle."""
    if cnf.num_task_vars != task.num_vars:
        raise ValueError(f"formula has {cnf.num_task_vars} task variables, task {task.name!r} has {task.num_vars}")
    rng = random.Random(seed)
    member = _Membership(cnf)
    result = OracleTestResult(passed=True)

    def record(row, formula_says: bool, oracle_says: bool, source: str) -> None:
        result.passed = False
        if len(result.counterexamples) < max_counterexamples:
            names = tuple(name for name, value in zip(task.names, row) if value)
            result.counterexamples.append(Counterexample(names, formula_says, oracle_says, source))

    try:
        label_rows = [tuple(int(v) for v in row) for row in (labels if labels is not None else [])]
        for row in label_rows:
            result.labels_checked += 1
            if not member(row):
                result.labels_rejected += 1
                record(row, False, True, "label")
        if task.has_oracle:
            probes = _probes(task, member, label_rows, samples, rng)
            verdicts = task.oracle_rows(np.array([row for row, _ in probes], dtype=bool).reshape(-1, task.num_vars))
            for (row, source), oracle_says in zip(probes, verdicts):
                formula_says = member(row)
                result.probes_checked += 1
                if formula_says != bool(oracle_says):
                    result.too_strict += int(bool(oracle_says))
                    result.too_permissive += int(formula_says)
                    record(row, formula_says, bool(oracle_says), source)
    finally:
        member.close()
    return result


def _probes(task: Task, member: _Membership, label_rows, samples: int, rng: random.Random):
    """Distinct assignments to ask the oracle about, each with where it came from."""
    seen: dict[tuple[int, ...], str] = {}
    valid: list[tuple[int, ...]] = []
    rows = task.enumerate_valid() if task.enumerate_valid is not None else ()
    if isinstance(rows, np.ndarray):  # a materialised valid set: sample its row indices
        valid = [tuple(int(v) for v in rows[i]) for i in sorted(rng.sample(range(len(rows)), min(samples, len(rows))))]
    else:  # reservoir sample: the valid set may be large
        for index, row in enumerate(rows):
            if len(valid) < samples:
                valid.append(tuple(int(v) for v in row))
            elif (slot := rng.randrange(index + 1)) < samples:
                valid[slot] = tuple(int(v) for v in row)
    for row in valid:
        seen.setdefault(row, "oracle-valid")
    for row in member.random_models(samples, rng):
        seen.setdefault(row, "formula-model")
    anchors = valid + rng.sample(label_rows, min(samples, len(label_rows)))
    for row in anchors[:samples]:
        flip = rng.randrange(task.num_vars)
        neighbour = row[:flip] + (1 - row[flip],) + row[flip + 1 :]
        seen.setdefault(neighbour, "neighbour")
    return list(seen.items())
