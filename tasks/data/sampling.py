"""Labels that satisfy a task's ground truth: exact sampling from its SDD, and the validity check.

Sampling. The data generators draw label rows y ⊨ K from the distribution

    p(y) ∝ [y ⊨ K] · Π_j p_j^{y_j} (1 − p_j)^{1 − y_j}

for per-variable prior probabilities p_j (0.5 everywhere: uniform over the models). This is exact,
by the usual two passes over the SDD of K (auxiliaries already quantified away): bottom-up weighted
model counts with normalised literal weights (w(x) = p, w(¬x) = 1 − p, so a variable an SDD node
does not mention contributes a factor of exactly 1), then top-down: at a decision node each sample
picks one (prime, sub) element with probability ∝ wmc(prime)·wmc(sub) and descends into both;
variables of the vtree context that the chosen child does not mention (vtree gaps and ⊤ nodes) are
drawn from their priors. All samples move through the SDD together (one NumPy draw per node), so a
batch costs one pass over the SDD. It serves tasks whose valid set is too large to enumerate
(bdd-oia, road-r, kand-logic) and small ones alike. The result depends on the SDD's structure
(PySDD compiles deterministically), so the same seed gives the same rows.

Validity. :func:`check_labels` evaluates every row on the compiled ground truth *and* on the task's
independent oracle and raises :class:`DataError` naming the first bad row; every generator calls it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import numpy as np

from autonesy.tasks.data.store import DataError
from autonesy.tasks.registry import get_task
from autonesy.tasks.task import Task, TaskError
from autonesy.tools.compile import CompiledSDD, compile_to_sdd, sdd_postorder


@cache
def _compiled(task_name: str) -> CompiledSDD:
    return compile_to_sdd(get_task(task_name).ground_truth)


def ground_truth_sdd(task: Task) -> CompiledSDD:
    """The compiled ground truth of a task (cached per catalogue task)."""
    try:
        if get_task(task.name) is task:
            return _compiled(task.name)
    except TaskError:  # not a catalogue task
        pass
    return compile_to_sdd(task.ground_truth)


def check_labels(task: Task, y: np.ndarray, where: str = "") -> None:
    """Raise DataError unless every row of ``y`` satisfies the ground truth (SDD) and the oracle."""
    y = np.asarray(y)
    if y.ndim != 2 or y.shape[1] != task.num_vars:
        raise DataError(f"{task.name}{where}: labels have shape {y.shape}, expected (B, {task.num_vars})")
    if not np.isin(y, (0, 1)).all():
        raise DataError(f"{task.name}{where}: labels must be 0/1")
    if len(y) == 0:
        return
    checks = [("ground truth", ground_truth_sdd(task).evaluate(y))]
    if task.oracle_batch is not None:
        checks.append(("oracle", np.asarray(task.oracle_batch(y.astype(bool)), dtype=bool)))
    for what, ok in checks:
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            true_vars = [task.names[j] for j in np.flatnonzero(y[bad])]
            raise DataError(
                f"{task.name}{where}: {int((~ok).sum())} label rows violate the {what}; first is row {bad} "
                f"(true: {', '.join(true_vars) or 'none'})"
            )


def prior_vector(task: Task, priors: Mapping[str, float] | None = None, default: float = 0.5) -> np.ndarray:
    """Per-variable prior probabilities from a {name: p} mapping (names not given get ``default``)."""
    p = np.full(task.num_vars, float(default))
    for name, value in (priors or {}).items():
        p[task.index_of(name) - 1] = float(value)
    if not ((p > 0) & (p < 1)).all():
        raise DataError(f"{task.name}: prior probabilities must lie strictly between 0 and 1")
    return p


def sample_models(sdd: CompiledSDD, n: int, rng: np.random.Generator, probs: np.ndarray | None = None) -> np.ndarray:
    """``n`` rows y ⊨ SDD drawn from the prior-weighted distribution above, as a (n, N) uint8 array."""
    num = sdd.num_task_vars
    p = np.full(num + 1, 0.5) if probs is None else np.concatenate([[0.5], np.asarray(probs, dtype=float)])
    if len(p) != num + 1:
        raise ValueError(f"expected {num} prior probabilities, got {len(p) - 1}")
    out = np.zeros((n, num), dtype=np.uint8)
    root = sdd.node
    if n == 0:
        return out
    if root.is_false():
        raise DataError("cannot sample from an unsatisfiable formula")

    vtree_vars = _VtreeVars(num)
    weight: dict[int, float] = {}
    order: list = []  # decision nodes, children before parents
    for node in sdd_postorder(root):
        if node.is_true():
            weight[node.id] = 1.0
        elif node.is_false():
            weight[node.id] = 0.0
        elif node.is_literal():
            lit = node.literal
            weight[node.id] = p[lit] if lit > 0 else 1.0 - p[-lit]
        else:
            weight[node.id] = sum(weight[a.id] * weight[b.id] for a, b in node.elements())
            order.append(node)
    if weight[root.id] <= 0:
        raise DataError("the prior gives the formula's models zero probability")

    def free(rows: np.ndarray, variables: np.ndarray) -> None:
        """Draw unconstrained variables from their priors."""
        if len(rows) and len(variables):
            out[np.ix_(rows, variables - 1)] = rng.random((len(rows), len(variables))) < p[variables]

    def arrive(node, context, rows: np.ndarray, pending: dict) -> None:
        """``rows`` reach ``node`` in vtree ``context``: fill the gap variables, queue the node."""
        if len(rows) == 0:
            return
        if node.is_true():
            free(rows, vtree_vars(context))
            return
        if node.is_false():
            raise DataError("sampler reached a false node (weights inconsistent)")
        free(rows, np.setdiff1d(vtree_vars(context), vtree_vars(node.vtree()), assume_unique=True))
        if node.is_literal():
            lit = node.literal
            out[rows, abs(lit) - 1] = 1 if lit > 0 else 0
            return
        pending.setdefault(node.id, []).append(rows)

    pending: dict[int, list[np.ndarray]] = {}
    root_context = sdd.manager.vtree()
    arrive(root, root_context, np.arange(n), pending)
    for node in reversed(order):  # parents before children
        batches = pending.pop(node.id, None)
        if not batches:
            continue
        rows = np.concatenate(batches)
        elements = node.elements()
        w = np.array([weight[a.id] * weight[b.id] for a, b in elements])
        choice = rng.choice(len(elements), size=len(rows), p=w / w.sum())
        vt = node.vtree()
        for k, (prime, sub) in enumerate(elements):
            chosen = rows[choice == k]
            if len(chosen):
                arrive(prime, vt.left(), chosen, pending)
                arrive(sub, vt.right(), chosen, pending)
    return out


class _VtreeVars:
    """Task variables (1..N) below a vtree node, memoised by the node's position."""

    def __init__(self, num_task_vars: int) -> None:
        self.num = num_task_vars
        self.memo: dict[int, np.ndarray] = {}

    def __call__(self, vtree) -> np.ndarray:
        key = vtree.position()
        if key not in self.memo:
            if vtree.is_leaf():
                v = vtree.var()
                result = np.array([v] if v <= self.num else [], dtype=np.int64)
            else:
                result = np.sort(np.concatenate([self(vtree.left()), self(vtree.right())]))
            self.memo[key] = result
        return self.memo[key]


def sample_valid(task: Task, n: int, rng: np.random.Generator, priors: Mapping[str, float] | None = None) -> np.ndarray:
    """``n`` label rows of ``task`` drawn from its models under the given per-variable priors."""
    return sample_models(ground_truth_sdd(task), n, rng, prior_vector(task, priors))
