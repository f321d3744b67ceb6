"""Instruction-following verification as one LangGraph state machine (Nsvif design, docs/architecture.md §11).

    nsvif / nsvif-neu:  formulate ─▶ (contradictory: stop) ─▶ prepare ─▶ write_checkers ─▶ check ◀─▶ reflect (≤ 3)
                          ▲ (parse error, ≤ 2 repairs)          │                            │ (self-test on the
                          └──────────                           │                            ▼  examples, then run)
                                                                └──────────────────────▶ next ─▶ judge ─▶ solve
    judge:              judge_all
    follow (budget > 0): (formulate ─▶) generate ─▶ (one of the above) ─▶ unsat and budget left ─▶ generate
                         (with the explanation, or the verdict only)

A fresh instruction costs at most three requests: the formulation (its logic / semantic tags route
the constraints), every checker in one answer, and every judged constraint — semantic ones, logic
ones whose checker kept failing, all of them for ``nsvif-neu`` — in one answer. Each program is
self-tested on the examples it came with (it must accept and reject them) before it is trusted; a
failure there or on the response is reflected on (≤ ``max_reflections``), then the judge decides.
``judge`` is the two-shot LLM-as-judge baseline; ``gepa-cot`` a chain-of-thought judge whose guidance
GEPA optimised (``autonesy.agents.verify.gepa``); ``conv-cot`` a panel of three personas
(literalist, pragmatist, skeptic) speaking in turn, by majority.

The formulation and the checkers depend on the instruction only: they are kept from one response to
the next (the feedback loop's state; across the responses of an evaluation, ``VerifierMemory``, keyed
by the instruction and by the instruction and its formula), so another response to the same
instruction costs at most the one judge request.

An instruction whose formula no response can satisfy (``C2 ∧ ¬C2``) ends with status ``contradictory``
and the conflicting requirements, right after the formulation — ``follow`` writes nothing.

Nodes only call agents (``autonesy.agents.verify``) and tools (sandbox, user checkers, Z3); the state
is a pydantic model whose results and decision are the summary's records (a checkpoint holds their
JSON data). Every node visit, LLM call, checker run, reflection round (``repair_round`` events,
so ``autonesy-agent trace`` shows them), per-constraint result and the verdict go to the trace.
"""

from __future__ import annotations

import functools
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from autonesy.graph.tracer import traced_node
from autonesy.graph.verify.nodes import NODES
from autonesy.graph.verify.state import (
    WHOLE_INSTRUCTION_JUDGES,
    VerifierMemory,
    VerifyAgents,
    VerifyRuntime,
    VerifyState,
    initial_state,
)

# -- routing ---------------------------------------------------------------------------------------------


def start_route(state: VerifyState, runtime: Runtime[VerifyRuntime]) -> str:
    rt = runtime.context
    if rt.verifier in WHOLE_INSTRUCTION_JUDGES:
        return "generate" if rt.budget > 0 else "judge_all"
    return "formulate"  # the feedback loop too: a contradictory instruction stops it before any writing


def after_generate(state: VerifyState, runtime: Runtime[VerifyRuntime]) -> str:
    rt = runtime.context
    if state.status == "error":
        return END
    return "judge_all" if rt.verifier in WHOLE_INSTRUCTION_JUDGES else "prepare"


def after_formulate(state: VerifyState, runtime: Runtime[VerifyRuntime]) -> str:
    rt = runtime.context
    if state.status in ("error", "contradictory"):
        return END
    if state.formulation_error is not None or not state.constraints:
        return "formulate"
    return "generate" if rt.budget > 0 and not state.follow_round else "prepare"


def after_prepare(state: VerifyState) -> str:
    if any(cid not in state.drafts for cid in state.logic):
        return "write_checkers"
    return "check" if state.logic else after_checks(state)


def after_checks(state: VerifyState) -> str:
    return "judge" if state.queue else "solve"


def after_check(state: VerifyState) -> str:
    cid = state.logic[state.cursor]
    if cid in state.results or cid in state.queue:
        return "next_constraint"
    return "reflect"


def after_next(state: VerifyState) -> str:
    return "check" if state.cursor < len(state.logic) else after_checks(state)


def after_verdict(state: VerifyState, runtime: Runtime[VerifyRuntime]) -> str:
    rt = runtime.context
    if rt.budget > 0 and state.status in ("unsat", "unknown") and state.follow_round < rt.budget:
        return "generate"
    return END


def _traced(name: str, node):
    """The node as LangGraph calls it: with the run's runtime context, timed into the run's trace."""

    def run(state: VerifyState, runtime: Runtime[VerifyRuntime]) -> dict[str, Any]:
        rt = runtime.context
        return traced_node(rt.event, name, lambda s: node(s, rt))(state)

    return run


@functools.cache
def _compiled_graph():
    graph = StateGraph(VerifyState, context_schema=VerifyRuntime)
    for name, node in NODES.items():
        graph.add_node(name, _traced(name, node))
    graph.add_conditional_edges(START, start_route, ["generate", "judge_all", "formulate"])
    graph.add_conditional_edges("generate", after_generate, ["judge_all", "prepare", END])
    graph.add_conditional_edges("judge_all", after_verdict, ["generate", END])
    graph.add_conditional_edges("formulate", after_formulate, ["prepare", "formulate", "generate", END])
    graph.add_conditional_edges("prepare", after_prepare, ["write_checkers", "check", "judge", "solve"])
    graph.add_conditional_edges("write_checkers", after_next, ["check", "judge", "solve"])
    graph.add_conditional_edges("check", after_check, ["next_constraint", "reflect"])
    graph.add_edge("reflect", "check")
    graph.add_conditional_edges("next_constraint", after_next, ["check", "judge", "solve"])
    graph.add_edge("judge", "solve")
    graph.add_conditional_edges("solve", after_verdict, ["generate", END])
    return graph.compile()


def verify_graph(checkpointer=None):
    """The verifier graph with ``checkpointer``; invoke it with ``context=VerifyRuntime(...)``. It is
    compiled once per process; each run only attaches its checkpointer."""
    return _compiled_graph().copy({"checkpointer": checkpointer})


RECURSION_LIMIT = 100_000  # LangGraph's bound on node visits; loops stop on the state's counters, not on this


__all__ = [
    "RECURSION_LIMIT",
    "WHOLE_INSTRUCTION_JUDGES",
    "VerifierMemory",
    "VerifyAgents",
    "VerifyRuntime",
    "VerifyState",
    "initial_state",
    "verify_graph",
]
