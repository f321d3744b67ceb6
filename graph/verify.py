"""Instruction-following verification as one LangGraph state machine (Nsvif design, DESIGN §11).

    nsvif / nsvif-neu:   formulate ─▶ (contradictory: stop) ─▶ plan ─┬─ user checker ─▶ user_check ──────────────┐ (fails: code or judge)
                            ▲ (parse error,  ├─ logic ─▶ write_checker ─▶ run_checker ─┤ fails: reflect ≤ 3, then judge
                            └─ ≤ 2 repairs)  └─ semantic ─▶ judge ────────────────────┤
                                                                   next_constraint ◀──┘ ─▶ (plan | solve)
    judge:               judge_all
    follow (budget > 0): (formulate ─▶) generate ─▶ (one of the above) ─▶ unsat and budget left ─▶ generate (with
                                                                      the explanation, or the verdict only)

An instruction whose formula no response can satisfy (``C2 ∧ ¬C2``) ends with status ``contradictory``
and the conflicting requirements, right after the formulation — ``follow`` writes nothing.

``nsvif-neu`` keeps the formulation and Z3 but sends every constraint to the judge (no planning, no
code); ``judge`` is the two-shot LLM-as-judge baseline. In the feedback loop the formulation, the plans
and the checker programs are kept from one output to the next (they do not depend on the output);
checkers are run again, and reflected on again if a new output breaks them.

Nodes only call agents (``autonesy.agents.verify``) and tools (sandbox, user checkers, Z3); the state
is plain JSON data. Every node visit, LLM call, checker run, reflection round (``repair_round`` events,
so ``autonesy-agent trace`` shows them), per-constraint result and the verdict go to the trace.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.checking import NO_CODE, CheckingAgent, Plan, default_question
from autonesy.agents.verify.explanation import explain, explain_contradiction
from autonesy.agents.verify.formulation import FormulationAgent, formulation_from_state
from autonesy.agents.verify.judge import JudgeAgent
from autonesy.agents.verify.writer import WriterAgent
from autonesy.graph.trace import Tracer, change_summary, traced_node
from autonesy.tools.checker_run import CHECKER_LIMITS, run_checker_code, run_user_function
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.user_checkers import UserChecker
from autonesy.tools.verify_solver import contradiction, decide

VERIFIERS = ("nsvif", "nsvif-neu", "judge")
FEEDBACK_MODES = ("explanation", "boolean")
_TRACE_LOCK = threading.Lock()  # verifications of an evaluation may run in threads and share one trace


class VerifyState(TypedDict, total=False):
    instruction: str
    output: str  # the response being verified (never changed by a node other than generate)
    status: str  # running | sat | unsat | unknown | error
    reason: str
    constraints: list[dict[str, str]]  # [{"id", "summary"}]
    formula: str
    formulation_round: int
    formulation_answer: str
    formulation_error: str | None
    cursor: int  # index of the constraint being checked
    plans: dict[str, dict[str, Any]]
    codes: dict[str, str]  # the latest checker program per constraint
    reflection_round: int  # reflections spent on the current constraint
    failure: dict[str, Any] | None  # the current constraint's last checker failure
    failures: list[dict[str, Any]]
    writer_error: str | None
    checker_llm_error: str | None
    results: dict[str, dict[str, Any]]
    decision: dict[str, Any] | None
    explanation: str
    feedback: str  # the compact explanation the writer gets
    follow_round: int
    history: list[dict[str, Any]]
    llm_calls: int
    cached_calls: int
    prompt_tokens: int
    completion_tokens: int
    llm_seconds: float
    checker_runs: int
    checker_seconds: float


@dataclass
class VerifyAgents:
    formulation: FormulationAgent
    checking: CheckingAgent
    judge: JudgeAgent
    writer: WriterAgent | None = None


@dataclass
class VerifyRuntime:
    """What the nodes need besides the state (not serialised)."""

    agents: VerifyAgents
    tracer: Tracer
    verifier: str = "nsvif"
    max_reflections: int = 3
    max_formulation_repairs: int = 2
    checker_limits: SandboxLimits = CHECKER_LIMITS
    user_checkers: dict[str, UserChecker] = field(default_factory=dict)
    budget: int = 0  # generations in the feedback loop; 0 = verify the given output only
    feedback: str = "explanation"
    tag: dict[str, Any] = field(default_factory=dict)  # added to every trace event (e.g. the item id)

    def event(self, name: str, **fields: Any) -> None:
        with _TRACE_LOCK:
            self.tracer.event(name, **self.tag, **fields)

    def turn(self, turn: AgentTurn, **fields: Any) -> None:
        with _TRACE_LOCK:
            self.tracer.agent_turn(turn, **self.tag, **fields)


def initial_state(instruction: str, output: str | None = None) -> VerifyState:
    return {"instruction": instruction, "output": output or "", "status": "running", "reason": "",
            "formulation_round": 0, "cursor": 0, "plans": {}, "codes": {}, "reflection_round": 0, "failure": None,
            "failures": [], "results": {}, "decision": None, "follow_round": 0, "history": [], "llm_calls": 0,
            "cached_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "llm_seconds": 0.0, "checker_runs": 0,
            "checker_seconds": 0.0}


def _usage(state: VerifyState, turns: list[AgentTurn]) -> dict[str, Any]:
    update = {k: state.get(k, 0) for k in ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "llm_seconds")}
    for turn in turns:
        response = turn.response
        if response is None:
            continue
        if response.cached:
            update["cached_calls"] += 1
            continue
        update["llm_calls"] += 1
        update["prompt_tokens"] += response.prompt_tokens or 0
        update["completion_tokens"] += response.completion_tokens or 0
        update["llm_seconds"] += response.latency_s or 0.0
    return update


def build_verify_graph(rt: VerifyRuntime, checkpointer=None):
    agents = rt.agents

    def traced(name: str, node):
        return traced_node(rt.event, name, node)

    def current(state: VerifyState) -> tuple[str, str]:
        item = state["constraints"][state["cursor"]]
        return item["id"], item["summary"]

    def record(state: VerifyState, cid: str, summary: str, **result: Any) -> dict[str, Any]:
        plan = state.get("plans", {}).get(cid, {})
        entry = {"id": cid, "summary": summary, "kind": plan.get("type"), **result}
        rt.event("constraint_result", constraint=cid, kind=entry["kind"], method=entry.get("method"),
                 value=entry.get("value"))
        return {"results": {**state.get("results", {}), cid: entry}}

    # -- the feedback loop's writer ---------------------------------------------------------------------
    def generate(state: VerifyState) -> dict[str, Any]:
        round_number = state.get("follow_round", 0) + 1
        writer = agents.writer
        if round_number == 1:
            turn, text = writer.write(state["instruction"], salt="1")
        else:
            feedback = state.get("feedback", "") if rt.feedback == "explanation" else None
            turn, text = writer.rewrite(state["instruction"], state.get("output", ""), feedback, salt=str(round_number))
        rt.turn(turn, follow_round=round_number)
        update: dict[str, Any] = {**_usage(state, [turn]), "follow_round": round_number}
        if text is None:
            why = f"LLM error ({turn.error.kind}): {turn.error}" if turn.error else "the writer gave an empty response"
            return {**update, "status": "error", "reason": f"no response to verify in round {round_number}: {why}"}
        rt.event("generated", follow_round=round_number, chars=len(text))
        return {**update, "output": text, "status": "running", "cursor": 0, "results": {}, "decision": None,
                "reflection_round": 0, "failure": None, "failures": []}

    # -- the LLM-as-judge baseline ------------------------------------------------------------------------
    def judge_all(state: VerifyState) -> dict[str, Any]:
        turns, judgement = agents.judge.holistic(state["instruction"], state["output"], salt=str(state.get("follow_round", 0)))
        for turn in turns:
            rt.turn(turn)
        verdict = {True: "sat", False: "unsat", None: "unknown"}[judgement.value]
        explanation = f"Verdict: {verdict} — judged by the LLM on the whole instruction: {judgement.reasoning}"
        rt.event("verdict", verdict=verdict, violated=[], falsified_parts=[])
        return {**_usage(state, turns), "status": verdict, "decision": {"verdict": verdict, "reasoning": judgement.reasoning},
                "explanation": explanation, "feedback": explanation,
                "history": state.get("history", []) + [{"round": state.get("follow_round", 0), "verdict": verdict,
                                                        "output": state["output"]}]}

    # -- formulation ---------------------------------------------------------------------------------------
    def formulate(state: VerifyState) -> dict[str, Any]:
        round_number = state.get("formulation_round", 0)
        previous = state.get("formulation_answer") if state.get("formulation_error") else None
        turn, formulation, problem = agents.formulation.formulate(
            state["instruction"], previous=previous, error=state.get("formulation_error"), round_number=round_number)
        rt.turn(turn, formulation_round=round_number)
        update = _usage(state, [turn])
        if formulation is not None:
            if round_number:
                rt.event("repair_round", round=round_number, error_kind="formulation",
                         error=state.get("formulation_error", ""), verdict="fixed", note="", changed="")
            rt.event("formulation", constraints=[list(c) for c in formulation.constraints],
                     formula=formulation.composition.text())
            update.update(formulation.to_state(), formulation_error=None, cursor=0)
            conflict = contradiction(formulation.composition)
            if conflict:  # no response can follow it: say so before checking or writing anything
                explanation = explain_contradiction(conflict, update["constraints"])
                rt.event("verdict", verdict="contradictory", conflict=list(conflict))
                update.update(status="contradictory", reason=explanation.splitlines()[0], explanation=explanation,
                              feedback=explanation, decision={"verdict": "contradictory", "conflict": list(conflict)})
            return update
        rt.event("syntax_error", round=round_number, kind="formulation", message=problem)
        if turn.error is not None:
            return {**update, "status": "error", "reason": f"formulation failed: {problem}"}
        if round_number:
            rt.event("repair_round", round=round_number, error_kind="formulation",
                     error=state.get("formulation_error", ""), verdict="unclear", note=problem, changed="")
        update.update(formulation_round=round_number + 1, formulation_answer=turn.text, formulation_error=problem)
        if round_number + 1 > rt.max_formulation_repairs:
            update.update(status="error", reason=f"no usable formulation after {round_number + 1} answers: {problem}")
        return update

    # -- per constraint ------------------------------------------------------------------------------------
    def plan(state: VerifyState) -> dict[str, Any]:
        cid, summary = current(state)
        reset = {"reflection_round": 0, "failure": None, "failures": [], "checker_llm_error": None}
        if cid in state.get("plans", {}):
            return reset  # planned for an earlier output of the feedback loop
        if rt.verifier == "nsvif-neu":
            chosen = Plan("semantic", summary, question=default_question(summary), note="nsvif-neu: every constraint is judged")
            turns: list[AgentTurn] = []
        else:
            turn, chosen = agents.checking.plan(state["instruction"], cid, summary)
            rt.turn(turn, constraint=cid)
            turns = [turn]
            if chosen.checker and chosen.checker not in rt.user_checkers:
                chosen.checker = None
        rt.event("plan", constraint=cid, kind=chosen.kind, checker=chosen.checker, note=chosen.note)
        return {**_usage(state, turns), **reset, "plans": {**state.get("plans", {}), cid: chosen.to_dict()}}

    def user_check(state: VerifyState) -> dict[str, Any]:
        cid, summary = current(state)
        chosen = state["plans"][cid]
        checker = rt.user_checkers[chosen["checker"]]
        run = run_user_function(checker.fn, state["output"], chosen.get("arguments"))
        rt.event("checker_run", constraint=cid, method="user_checker", checker=checker.name, **run.to_dict())
        if run.ok:
            return record(state, cid, summary, method="user_checker", value=run.value, checker=checker.name,
                          arguments=chosen.get("arguments") or {})
        failure = {"error_kind": run.error_kind, "message": f"user checker {checker.name}: {run.message}"}
        return {"failures": state.get("failures", []) + [failure]}

    def write_checker(state: VerifyState) -> dict[str, Any]:
        cid, summary = current(state)
        chosen = Plan.from_dict(state["plans"][cid])
        failure = state.get("failure")
        old = state.get("codes", {}).get(cid)
        if failure is None:
            turn, code = agents.checking.write(state["instruction"], cid, summary, chosen)
            round_number = state.get("reflection_round", 0)
        else:
            round_number = state.get("reflection_round", 0) + 1
            shown = f"[{failure['error_kind']}] {failure['message']}"
            turn, code = agents.checking.reflect(state["instruction"], cid, summary, chosen, old or "(no program)", shown,
                                                 round_number)
        rt.turn(turn, constraint=cid, reflection_round=round_number)
        update: dict[str, Any] = {**_usage(state, [turn]), "reflection_round": round_number}
        if failure is not None:
            rt.event("repair_round", round=round_number, error_kind=failure["error_kind"],
                     error=f"{cid}: {failure['message']}", verdict="llm_error" if turn.error else "reflected", note="",
                     changed=change_summary(old or "", code or "") if code else "", constraint=cid)
        if turn.error is not None:
            return {**update, "checker_llm_error": f"LLM error ({turn.error.kind}): {turn.error}"}
        if code is None:
            no_code = {"error_kind": "no_code", "message": NO_CODE}
            return {**update, "failure": no_code, "failures": state.get("failures", []) + [no_code]}
        return {**update, "codes": {**state.get("codes", {}), cid: code}, "failure": None}

    def run_checker(state: VerifyState) -> dict[str, Any]:
        cid, summary = current(state)
        code = state["codes"][cid]
        run = run_checker_code(code, state["output"], limits=rt.checker_limits)
        rt.event("checker_run", constraint=cid, method="checker", round=state.get("reflection_round", 0), **run.to_dict())
        update: dict[str, Any] = {"checker_runs": state.get("checker_runs", 0) + 1,
                                  "checker_seconds": state.get("checker_seconds", 0.0) + run.seconds}
        if run.ok:
            return {**update, **record(state, cid, summary, method="checker", value=run.value, code=code, spans=list(run.spans),
                                       reflections=state.get("reflection_round", 0),
                                       failures=state.get("failures", []))}
        failure = {"error_kind": run.error_kind, "message": run.message, "line": run.line}
        return {**update, "failure": failure, "failures": state.get("failures", []) + [failure]}

    def judge(state: VerifyState) -> dict[str, Any]:
        cid, summary = current(state)
        chosen = state["plans"][cid]
        question = chosen.get("question") or default_question(summary)
        turns, judgement = agents.judge.judge(state["instruction"], cid, summary, question, state["output"],
                                              salt=str(state.get("follow_round", 0)))
        for turn in turns:
            rt.turn(turn, constraint=cid)
        fallback = chosen.get("type") == "logic" or bool(state.get("failures"))
        extra: dict[str, Any] = {"failures": state.get("failures", [])}
        if fallback and state.get("codes", {}).get(cid):
            extra["code"] = state["codes"][cid]
        if state.get("checker_llm_error"):
            extra["note"] = state["checker_llm_error"]
        return {**_usage(state, turns), **record(state, cid, summary, method="judge_fallback" if fallback else "judge",
                                                 value=judgement.value, reasoning=judgement.reasoning,
                                                 question=question, **extra)}

    def next_constraint(state: VerifyState) -> dict[str, Any]:
        return {"cursor": state.get("cursor", 0) + 1, "reflection_round": 0, "failure": None, "failures": []}

    def solve(state: VerifyState) -> dict[str, Any]:
        formulation = formulation_from_state(state["constraints"], state["formula"])
        results = state.get("results", {})
        values = {cid: results.get(cid, {}).get("value") for cid in formulation.ids}
        decision = decide(formulation.composition, values).to_dict()
        explanation = explain(decision, state["constraints"], results)
        brief = explain(decision, state["constraints"], results, with_code=False)
        rt.event("verdict", verdict=decision["verdict"], violated=decision["violated"], core=decision["core"],
                 falsified_parts=decision["falsified_parts"], to_fix=decision["to_fix"])
        return {"status": decision["verdict"], "decision": decision, "explanation": explanation, "feedback": brief,
                "reason": explanation.splitlines()[0],
                "history": state.get("history", []) + [{"round": state.get("follow_round", 0),
                                                        "verdict": decision["verdict"], "output": state["output"]}]}

    # -- routing ---------------------------------------------------------------------------------------------
    def start_route(state: VerifyState) -> str:
        if rt.verifier == "judge":
            return "generate" if rt.budget > 0 else "judge_all"
        return "formulate"  # the feedback loop too: a contradictory instruction stops it before any writing

    def after_generate(state: VerifyState) -> str:
        if state.get("status") == "error":
            return END
        if rt.verifier == "judge":
            return "judge_all"
        return "plan" if state.get("constraints") else "formulate"

    def after_formulate(state: VerifyState) -> str:
        if state.get("status") in ("error", "contradictory"):
            return END
        if state.get("formulation_error") is not None or not state.get("constraints"):
            return "formulate"
        return "generate" if rt.budget > 0 and not state.get("follow_round") else "plan"

    def after_plan(state: VerifyState) -> str:
        cid, _ = current(state)
        chosen = state["plans"][cid]
        if chosen.get("checker"):
            return "user_check"
        if chosen.get("type") == "logic":
            return "run_checker" if cid in state.get("codes", {}) else "write_checker"
        return "judge"

    def after_user_check(state: VerifyState) -> str:
        cid, _ = current(state)
        if cid in state.get("results", {}):
            return "next_constraint"
        if state["plans"][cid].get("type") == "logic":
            return "run_checker" if cid in state.get("codes", {}) else "write_checker"
        return "judge"

    def after_write(state: VerifyState) -> str:
        if state.get("checker_llm_error"):
            return "judge"
        if state.get("failure") is not None:  # no program in the answer
            return "write_checker" if state.get("reflection_round", 0) < rt.max_reflections else "judge"
        return "run_checker"

    def after_run(state: VerifyState) -> str:
        cid, _ = current(state)
        if cid in state.get("results", {}) and state.get("failure") is None:
            return "next_constraint"
        return "write_checker" if state.get("reflection_round", 0) < rt.max_reflections else "judge"

    def after_next(state: VerifyState) -> str:
        return "plan" if state.get("cursor", 0) < len(state.get("constraints", [])) else "solve"

    def after_verdict(state: VerifyState) -> str:
        if rt.budget > 0 and state.get("status") in ("unsat", "unknown") and state.get("follow_round", 0) < rt.budget:
            return "generate"
        return END

    graph = StateGraph(VerifyState)
    nodes = [("generate", generate), ("judge_all", judge_all), ("formulate", formulate), ("plan", plan),
             ("user_check", user_check), ("write_checker", write_checker), ("run_checker", run_checker),
             ("judge", judge), ("next_constraint", next_constraint), ("solve", solve)]
    for name, node in nodes:
        graph.add_node(name, traced(name, node))
    graph.add_conditional_edges(START, start_route, ["generate", "judge_all", "formulate"])
    graph.add_conditional_edges("generate", after_generate, ["judge_all", "plan", "formulate", END])
    graph.add_conditional_edges("judge_all", after_verdict, ["generate", END])
    graph.add_conditional_edges("formulate", after_formulate, ["plan", "formulate", "generate", END])
    graph.add_conditional_edges("plan", after_plan, ["user_check", "write_checker", "run_checker", "judge"])
    graph.add_conditional_edges("user_check", after_user_check, ["next_constraint", "write_checker", "run_checker", "judge"])
    graph.add_conditional_edges("write_checker", after_write, ["run_checker", "write_checker", "judge"])
    graph.add_conditional_edges("run_checker", after_run, ["next_constraint", "write_checker", "judge"])
    graph.add_edge("judge", "next_constraint")
    graph.add_conditional_edges("next_constraint", after_next, ["plan", "solve"])
    graph.add_conditional_edges("solve", after_verdict, ["generate", END])
    return graph.compile(checkpointer=checkpointer)


RECURSION_LIMIT = 100_000  # LangGraph's bound on node visits; loops stop on the state's counters, not on this


__all__ = ["FEEDBACK_MODES", "VERIFIERS", "VerifyAgents", "VerifyRuntime", "VerifyState", "build_verify_graph",
           "RECURSION_LIMIT", "initial_state"]
