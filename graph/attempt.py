"""The formalization attempt as a LangGraph state machine (DESIGN §2).

    formalize ─▶ check_syntax ─┬─ ok ─────────────────────────▶ oracle_test ─┬─▶ compile ─▶ evaluate ─▶ (train)
                               └─ error ─▶ autofix ─┬─ ok ──────▲            └─ fails, rounds left ─▶ semantic_repair ─▶ check_syntax
                                                    └─ error ─▶ repair ─▶ check_syntax   (or rejected: [[OK]], LLM error, rounds used)

Nodes only call agents (policies) and tools; the state is plain JSON data (checkpointed by
LangGraph's SQLite saver). Loops stop on counters kept in the state, never on the recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from langgraph.graph import END, START, StateGraph

from autonesy.agents.policies import AgentTurn, AttemptSpec, Policy
from autonesy.graph.trace import Tracer, change_summary, traced_node
from autonesy.tools.cnf import parse_dimacs, to_dimacs
from autonesy.tools.compile import CompilationBudgetExceeded, compile_to_sdd
from autonesy.tools.formats import convert
from autonesy.tools.metrics import score_formula
from autonesy.tools.oracle_test import oracle_test


class AttemptState(TypedDict, total=False):
    answer: str  # the latest raw answer of an agent
    source: str  # the formula text extracted from it
    error: dict[str, Any] | None  # {"kind", "message"} of the latest syntax check
    dimacs: str | None  # the accepted formula as DIMACS
    autofixes: list[str]
    repair_round: int
    semantic_round: int
    status: str  # running | accepted | rejected
    reason: str
    oracle_test: dict[str, Any] | None
    compiled: dict[str, Any] | None
    metrics: dict[str, Any] | None
    downstream: dict[str, Any] | None  # SPL/SL trained on the formula and on the ground truth
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_seconds: float
    lint_reviewed: bool  # the repair agent has seen the lint warnings (they are shown once)


@dataclass
class AttemptRuntime:
    """What the nodes need besides the state (not serialised)."""

    spec: AttemptSpec
    policy: Policy
    tracer: Tracer
    run_dir: Path
    labels: np.ndarray | None = None
    compile_time_limit_s: float = 60.0
    training: "TrainingRequest | None" = None


@dataclass
class TrainingRequest:
    """Train NeSy predictors on the accepted formula (and on the ground truth, for reference)."""

    methods: tuple[str, ...]
    data: Any  # train/val/test splits (autonesy.tasks.data.Dataset or arrays)
    seeds: int = 5
    epochs: int | None = None
    progress: bool = True
    threads: int | None = 1  # torch threads while training: small models run fastest on one


def json_safe(value: Any) -> Any:
    """Counts can exceed 64 bits (2^100 models); checkpoints and JSON readers want them as text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) >= 2**53:
        return str(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def _usage(state: AttemptState, turn: AgentTurn) -> dict[str, Any]:
    response = turn.response
    if response is None or response.cached:
        return {}
    return {
        "llm_calls": state.get("llm_calls", 0) + 1,
        "prompt_tokens": state.get("prompt_tokens", 0) + (response.prompt_tokens or 0),
        "completion_tokens": state.get("completion_tokens", 0) + (response.completion_tokens or 0),
        "llm_seconds": state.get("llm_seconds", 0.0) + (response.latency_s or 0.0),
    }


def _llm_failure(turn: AgentTurn) -> dict[str, Any]:
    error = turn.error
    return {"status": "rejected", "reason": f"LLM error ({error.kind}): {error}"}


def _lint_message(warnings) -> str:
    return ("The formula parses, but these checks suggest it does not say what you meant:\n"
            + "\n".join(f"- {w}" for w in warnings)
            + "\nIf the formula is nevertheless right, answer [[OK]]; otherwise fix it.")


def build_attempt_graph(rt: AttemptRuntime, checkpointer=None):
    spec, task, policy, tracer = rt.spec, rt.spec.task, rt.policy, rt.tracer

    def traced(name: str, node):
        return traced_node(tracer.event, name, node)

    # The answer-size limit guards against LLM output; the expert reference is exempt (a large
    # DCP-Bench-Open ground truth written out as DIMACS exceeds it).
    size: dict[str, Any] = {} if policy.uses_llm else {"max_chars": 1 << 62}

    def formalize(state: AttemptState) -> dict[str, Any]:
        turn = policy.formalize(spec)
        tracer.agent_turn(turn)
        if turn.error:
            return {**_usage(state, turn), **_llm_failure(turn)}
        return {**_usage(state, turn), "answer": turn.text, "status": "running"}

    def check_syntax(state: AttemptState) -> dict[str, Any]:
        conversion = convert(state["answer"], spec.format, task.names, autofix=False, **size)
        if conversion.ok:
            update = {"source": conversion.source, "error": None, "dimacs": to_dimacs(conversion.cnf, task.names),
                      "autofixes": state.get("autofixes", []) + list(conversion.autofixes)}
            if conversion.warnings:
                tracer.event("lint", round=state.get("repair_round", 0), warnings=list(conversion.warnings))
                if not state.get("lint_reviewed"):  # shown to the repair agent once; it may answer [[OK]]
                    update["error"] = {"kind": "lint", "message": _lint_message(conversion.warnings)}
            return update
        error = {"kind": conversion.error.kind, "message": str(conversion.error)}
        tracer.event("syntax_error", round=state.get("repair_round", 0), **error)
        return {"source": conversion.source, "error": error, "dimacs": None}

    def autofix(state: AttemptState) -> dict[str, Any]:
        if not policy.autofix:
            return {}
        conversion = convert(state["answer"], spec.format, task.names, autofix=True, **size)
        if not conversion.ok or not conversion.autofixes:
            return {}
        tracer.event("autofix", fixes=list(conversion.autofixes))
        return {"source": conversion.source, "error": None, "dimacs": to_dimacs(conversion.cnf, task.names),
                "autofixes": state.get("autofixes", []) + list(conversion.autofixes)}

    def repair(state: AttemptState) -> dict[str, Any]:
        round_number = state.get("repair_round", 0) + 1
        turn = policy.repair(spec, state.get("source", ""), state["error"]["message"], round_number)
        tracer.agent_turn(turn, round=round_number)
        update: dict[str, Any] = {**_usage(state, turn), "repair_round": round_number}
        if turn.error:
            verdict, changed = "llm_error", ""
            update.update(_llm_failure(turn))
        else:
            verdict = turn.verdict.verdict
            if state["error"]["kind"] == "lint":
                update["lint_reviewed"] = True
            if verdict == "ok" and state["error"]["kind"] == "lint":
                changed = ""  # the warnings were reviewed: the formula goes on as it is
            elif verdict == "ok":
                error = state["error"]
                update.update(status="rejected", reason=f"the repair agent answered [[OK]] on a formula the checker rejected "
                              f"({error['kind']}: {error['message'].splitlines()[0][:160]})")
                changed = ""
            elif verdict == "fixed":
                new = convert(turn.verdict.answer, spec.format, task.names, autofix=False, **size).source
                changed = change_summary(state.get("source", ""), new)
                update["answer"] = turn.verdict.answer
            else:
                changed = ""
        tracer.event("repair_round", round=round_number, error_kind=state["error"]["kind"],
                     error=state["error"]["message"], verdict=verdict,
                     note=turn.verdict.note if turn.verdict else "", changed=changed)
        return update

    def reject_syntax(state: AttemptState) -> dict[str, Any]:
        return {"status": "rejected",
                "reason": f"syntax error after {state.get('repair_round', 0)} repair rounds: {state['error']['kind']}"}

    def run_oracle_test(state: AttemptState) -> dict[str, Any]:
        cnf = parse_dimacs(state["dimacs"])
        result = oracle_test(cnf, task, rt.labels)
        return {"oracle_test": {**result.to_dict(), "feedback": result.feedback()}}

    def semantic_repair(state: AttemptState) -> dict[str, Any]:
        round_number = state.get("semantic_round", 0) + 1
        turn = policy.semantic_repair(spec, state.get("source", ""), state["oracle_test"]["feedback"], round_number)
        tracer.agent_turn(turn, semantic_round=round_number)
        update: dict[str, Any] = {**_usage(state, turn), "semantic_round": round_number}
        if turn.error:
            return {**update, **_llm_failure(turn)}
        tracer.event("semantic_round", round=round_number,
                     counterexamples=len(state["oracle_test"]["counterexamples"]))
        return {**update, "answer": turn.text}

    def compile_node(state: AttemptState) -> dict[str, Any]:
        cnf = parse_dimacs(state["dimacs"])
        try:
            sdd = compile_to_sdd(cnf, time_limit_s=rt.compile_time_limit_s)
        except CompilationBudgetExceeded as error:
            return {"compiled": {"ok": False, "note": str(error)}}
        sdd_path, vtree_path = sdd.save(rt.run_dir, "formula")
        return {"compiled": {"ok": True, "sdd": sdd_path.name, "vtree": vtree_path.name, "size": sdd.size,
                             "model_count": str(sdd.model_count()), "seconds": sdd.seconds}}

    def evaluate(state: AttemptState) -> dict[str, Any]:
        if not task.has_ground_truth:
            return {"status": "accepted", "metrics": None}
        score = score_formula(parse_dimacs(state["dimacs"]), task.ground_truth)
        return {"status": "accepted", "metrics": json_safe(score.to_dict())}

    def train(state: AttemptState) -> dict[str, Any]:
        from autonesy.nesy.evaluate import train_and_evaluate
        from autonesy.nesy.trainer import TrainConfig

        request = rt.training
        result = train_and_evaluate(task, parse_dimacs(state["dimacs"]), request.data, methods=request.methods,
                                    seeds=request.seeds, epochs=request.epochs, progress=request.progress,
                                    config=TrainConfig(threads=request.threads), formula_score=state.get("metrics"))
        return {"downstream": json_safe(result)}

    def after_evaluate(state: AttemptState) -> str:
        return "train" if rt.training is not None and task.has_ground_truth else END

    def after_formalize(state: AttemptState) -> str:
        return END if state.get("status") == "rejected" else "check_syntax"

    def after_check(state: AttemptState) -> str:
        if state.get("dimacs") and (state.get("error") or {}).get("kind") == "lint":
            return "repair" if state.get("repair_round", 0) < policy.max_repairs else "oracle_test"
        return "oracle_test" if state.get("dimacs") else "autofix"

    def after_autofix(state: AttemptState) -> str:
        if state.get("dimacs"):
            return "oracle_test"
        if state.get("repair_round", 0) < policy.max_repairs:
            return "repair"
        return "reject_syntax"

    def after_repair(state: AttemptState) -> str:
        return END if state.get("status") == "rejected" else "check_syntax"

    def after_oracle(state: AttemptState) -> str:
        result = state.get("oracle_test") or {}
        if not result.get("passed", True) and state.get("semantic_round", 0) < policy.semantic_rounds:
            return "semantic_repair"
        return "compile"

    graph = StateGraph(AttemptState)
    for name, node in [("formalize", formalize), ("check_syntax", check_syntax), ("autofix", autofix),
                       ("repair", repair), ("reject_syntax", reject_syntax), ("oracle_test", run_oracle_test),
                       ("semantic_repair", semantic_repair), ("compile", compile_node), ("evaluate", evaluate),
                       ("train", train)]:
        graph.add_node(name, traced(name, node))
    graph.add_edge(START, "formalize")
    graph.add_conditional_edges("formalize", after_formalize, ["check_syntax", END])
    graph.add_conditional_edges("check_syntax", after_check, ["oracle_test", "autofix", "repair"])
    graph.add_conditional_edges("autofix", after_autofix, ["oracle_test", "repair", "reject_syntax"])
    graph.add_conditional_edges("repair", after_repair, ["check_syntax", END])
    graph.add_edge("reject_syntax", END)
    graph.add_conditional_edges("oracle_test", after_oracle, ["semantic_repair", "compile"])
    graph.add_conditional_edges("semantic_repair", after_repair, ["check_syntax", END])
    graph.add_edge("compile", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate, ["train", END])
    graph.add_edge("train", END)
    return graph.compile(checkpointer=checkpointer)
