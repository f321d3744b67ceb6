"""A node that returns a misspelt state key fails instead of being silently dropped (LangGraph drops
keys its state does not declare, whatever the pydantic model says): both graphs' states forbid
unknown keys, and graph/tracer.py:traced_node, which every node of both graphs goes through, refuses
an update that names one."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import autonesy.graph.attempt as attempt
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.attempt import AttemptRuntime, AttemptState
from autonesy.graph.tracer import Tracer, UnknownStateKey, traced_node
from autonesy.graph.verify.state import VerifyState
from autonesy.tasks.registry import get_task


@pytest.mark.parametrize("state", [AttemptState, VerifyState])
def test_the_states_refuse_a_key_they_do_not_declare(state):
    with pytest.raises(ValidationError, match="statuss"):
        state.model_validate({"statuss": "running"})


def test_an_update_with_a_misspelt_key_is_refused_with_the_node_and_key_named():
    node = traced_node(lambda *a, **k: None, "evaluate", lambda state: {"status": "accepted", "metrcs": None})
    with pytest.raises(UnknownStateKey, match="node 'evaluate' returned metrcs, not in AttemptState"):
        node(AttemptState())


@pytest.fixture
def misspelling_evaluate(monkeypatch):
    """The attempt graph compiled with an evaluate node that misspells ``metrics``."""

    def evaluate(state, rt):
        return {"status": "accepted", "metrcs": None}

    monkeypatch.setitem(attempt.NODES, "evaluate", evaluate)
    attempt._compiled_graph.cache_clear()
    yield
    attempt._compiled_graph.cache_clear()


def test_the_attempt_graph_fails_on_a_node_that_misspells_a_key(tmp_path, misspelling_evaluate):
    spec = AttemptSpec(get_task("fashion"), "dimacs", "detailed", "zs")
    runtime = AttemptRuntime(spec, make_policy("expert", None), Tracer(tmp_path), tmp_path)
    with pytest.raises(UnknownStateKey, match="metrcs"):  # ignored, the attempt would end accepted with no score
        attempt.build_attempt_graph().invoke({"status": "running"}, context=runtime)
