"""`--policy expert` is the pipeline's self-test: F1 = 1 and relation `equal` on every task."""

import pytest

from autonesy.graph.run import RunConfig, run_attempt
from autonesy.tasks.registry import TASK_NAMES


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_expert_policy_scores_equal_on_every_task(tmp_path, task_name):
    summary = run_attempt(RunConfig(task=task_name, format="dimacs", policy="expert"), tmp_path)
    assert summary.status == "accepted" and summary.llm_calls == 0
    assert summary.metrics.relation == "equal" and summary.metrics.f1 == 1.0
    assert summary.oracle_test.passed and summary.compiled.ok


@pytest.mark.parametrize("fmt", ["nat", "pysat", "cpmpy", "sympy"])
def test_expert_policy_in_every_format(tmp_path, fmt):
    summary = run_attempt(RunConfig(task="kand-logic-2", format=fmt, policy="expert"), tmp_path)
    assert summary.metrics.relation == "equal" and summary.repair_rounds == 0
