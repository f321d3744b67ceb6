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
DSPy's GEPA optimised (``autonesy.agents.verify.gepa``); ``conv-cot`` a panel of three personas
(literalist, pragmatist, skeptic) speaking in turn, by majority.

The formulation and the checkers depend on the instruction only: they are kept from one response to
the next (the feedback loop's state; across the responses of an evaluation, ``VerifierMemory``, keyed
by the instruction and by the instruction and its formula), so another response to the same
instruction costs at most the one judge request.

An instruction whose formula no response can satisfy (``C2 ∧ ¬C2``) ends with status ``contradictory``
and the conflicting requirements, right after the formulation — ``follow`` writes nothing.

Nodes only call agents (``autonesy.agents.verify``) and tools (sandbox, user checkers, Z3); the state
is plain JSON data. Every node visit, LLM call, checker run, reflection round (``repair_round`` events,
so ``autonesy-agent trace`` shows them), per-constraint result and the verdict go to the trace.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.checking import NO_CODE, CheckingAgent, Draft
from autonesy.agents.verify.explanation import explain, explain_contradiction
from autonesy.agents.verify.formulation import FormulationAgent, formulation_from_state
from autonesy.agents.verify.judge import JudgeAgent
from autonesy.agents.verify.writer import WriterAgent
from autonesy.graph.trace import Tracer, change_summary, traced_node
from autonesy.tools.checker_run import CHECKER_LIMITS, run_checker_code, run_user_function
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.user_checkers import UserChecker
from autonesy.tools.verify_solver import contradiction, decide

VERIFIERS = ("nsvif", "nsvif-neu", "judge", "gepa-cot", "conv-cot")
WHOLE_INSTRUCTION_JUDGES = ("judge", "gepa-cot", "conv-cot")  # the baselines: no formulation, no code
FEEDBACK_MODES = ("explanation", "boolean")
_TRACE_LOCK = threading.Lock()  # verifications of an evaluation may run in threads and share one trace


class VerifyState(TypedDict, total=False):
    """The verify graph's state: plain JSON, so it is checkpointed and resumed as data."""

    instruction: str
    output: str  # the response being verified (never changed by a node other than generate)
    status: str  # running | sat | unsat | unknown | contradictory | error
    reason: str
    constraints: list[dict[str, str]]  # [{"id", "summary", "kind"}]
    formula: str
    formulation_round: int
    formulation_answer: str
    formulation_error: str | None
    drafts: dict[str, dict[str, Any]]  # per logic constraint: what the checking agent wrote (Draft)
    codes: dict[str, str]  # the latest checker program per constraint
    tested: list[str]  # constraints whose program passed its self-test
    logic: list[str]  # the constraints checked by code for this response, in order
    cursor: int  # index into ``logic``
    reflection_round: int  # reflections spent on the current constraint
    failure: dict[str, Any] | None  # the current constraint's last checker failure
    failures: dict[str, list[dict[str, Any]]]  # per constraint, for this response
    queue: list[str]  # the constraints the judge decides for this response
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
    """The agents a verification uses, one per role."""

    formulation: FormulationAgent
    checking: CheckingAgent
    judge: JudgeAgent
    writer: WriterAgent | None = None


class VerifierMemory:
    """What does not depend on the response, kept across the verifications of one process: the
    formulation per instruction, the checkers per instruction and formula (only programs that passed
    their self-test)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._formulations: dict[str, dict[str, Any]] = {}
        self._checkers: dict[str, dict[str, Any]] = {}

    @staticmethod
    def _key(*parts: str) -> str:
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def formulation(self, instruction: str) -> dict[str, Any] | None:
        """The formulation already found for this instruction, if any."""
        with self._lock:
            return self._formulations.get(self._key(instruction))

    def remember_formulation(self, instruction: str, found: dict[str, Any]) -> None:
        """Keep the first formulation of an instruction, so its other responses reuse it."""
        with self._lock:
            self._formulations.setdefault(self._key(instruction), found)

    def checkers(self, instruction: str, formula: str) -> dict[str, Any]:
        """The checkers already written for this instruction and formula."""
        with self._lock:
            return dict(self._checkers.get(self._key(instruction, formula), {}))

    def remember_checkers(self, instruction: str, formula: str, found: dict[str, Any]) -> None:
        """Keep checkers for reuse on other responses to the same instruction."""
        with self._lock:
            self._checkers.setdefault(self._key(instruction, formula), {}).update(found)


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
    memory: VerifierMemory | None = None  # shared by the verifications of an evaluation
    judge_guidance: str | None = None  # gepa-cot: the optimised guidance of the CoT judge (None: the default)

    def event(self, name: str, **fields: Any) -> None:
        """Trace an event, tagged (e.g. with the record id in an evaluation); one writer at a time."""
        with _TRACE_LOCK:
            self.tracer.event(name, **self.tag, **fields)

    def turn(self, turn: AgentTurn, **fields: Any) -> None:
        """Trace an LLM turn, tagged; one writer at a time."""
        with _TRACE_LOCK:
            self.tracer.agent_turn(turn, **self.tag, **fields)


def initial_state(instruction: str, output: str | None = None) -> VerifyState:
    """The state a verification starts from (``follow`` starts without a response)."""
    return {
        "instruction": instruction,
        "output": output or "",
        "status": "running",
        "reason": "",
        "formulation_round": 0,
        "cursor": 0,
        "drafts": {},
        "codes": {},
        "tested": [],
        "logic": [],
        "queue": [],
        "reflection_round": 0,
        "failure": None,
        "failures": {},
        "results": {},
        "decision": None,
        "follow_round": 0,
        "history": [],
        "llm_calls": 0,
        "cached_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "llm_seconds": 0.0,
        "checker_runs": 0,
        "checker_seconds": 0.0,
    }


def _usage(state: VerifyState, turns: list[AgentTurn]) -> dict[str, Any]:
    update = {
        k: state.get(k, 0) for k in ("llm_calls", "cached_calls", "prompt_tokens", "completion_tokens", "llm_seconds")
    }
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
    """The verification state machine: formulate, write and self-test checkers, check, judge, decide, explain (and for
    ``follow`` write and revise)."""
    agents = rt.agents

    def traced(name: str, node):
        return traced_node(rt.event, name, node)

    def summary_of(state: VerifyState, cid: str) -> str:
        return next(c["summary"] for c in state["constraints"] if c["id"] == cid)

    def kind_of(state: VerifyState, cid: str) -> str:
        return next(c.get("kind", "semantic") for c in state["constraints"] if c["id"] == cid)

    def record(state: VerifyState, cid: str, **result: Any) -> dict[str, Any]:
        entry = {"id": cid, "summary": summary_of(state, cid), "kind": kind_of(state, cid), **result}
        rt.event(
            "constraint_result",
            constraint=cid,
            kind=entry["kind"],
            method=entry.get("method"),
            value=entry.get("value"),
        )
        return {"results": {**state.get("results", {}), cid: entry}}

    def add_failure(state: VerifyState, cid: str, failure: dict[str, Any]) -> dict[str, Any]:
        failures = dict(state.get("failures") or {})
        failures[cid] = list(failures.get(cid, [])) + [failure]
        return {"failure": failure, "failures": failures}

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
        return {**update, "output": text, "status": "running", "results": {}, "decision": None}

    # -- the LLM-as-judge baseline ------------------------------------------------------------------------
    def judge_all(state: VerifyState) -> dict[str, Any]:
        salt = str(state.get("follow_round", 0))
        if rt.verifier == "gepa-cot":
            turns, judgement = agents.judge.cot(
                state["instruction"], state["output"], *([rt.judge_guidance] if rt.judge_guidance else []), salt=salt
            )
        elif rt.verifier == "conv-cot":
            turns, judgement = agents.judge.panel(state["instruction"], state["output"], salt=salt)
        else:
            turns, judgement = agents.judge.holistic(state["instruction"], state["output"], salt=salt)
        for turn in turns:
            rt.turn(turn)
        verdict = {True: "sat", False: "unsat", None: "unknown"}[judgement.value]
        explanation = f"Verdict: {verdict} — judged by the LLM on the whole instruction: {judgement.reasoning}"
        rt.event("verdict", verdict=verdict, violated=[], falsified_parts=[])
        return {
            **_usage(state, turns),
            "status": verdict,
            "decision": {"verdict": verdict, "reasoning": judgement.reasoning},
            "explanation": explanation,
            "feedback": explanation,
            "history": state.get("history", [])
            + [{"round": state.get("follow_round", 0), "verdict": verdict, "output": state["output"]}],
        }

    # -- formulation ---------------------------------------------------------------------------------------
    def contradicted(update: dict[str, Any]) -> dict[str, Any]:
        conflict = contradiction(formulation_from_state(update["constraints"], update["formula"]).composition)
        if not conflict:
            return update
        explanation = explain_contradiction(conflict, update["constraints"])  # no response can follow it
        rt.event("verdict", verdict="contradictory", conflict=list(conflict))
        return {
            **update,
            "status": "contradictory",
            "reason": explanation.splitlines()[0],
            "explanation": explanation,
            "feedback": explanation,
            "decision": {"verdict": "contradictory", "conflict": list(conflict)},
        }

    def formulate(state: VerifyState) -> dict[str, Any]:
        known = rt.memory.formulation(state["instruction"]) if rt.memory else None
        if known is not None:
            rt.event(
                "formulation",
                constraints=[[c["id"], c["summary"]] for c in known["constraints"]],
                formula=known["formula"],
                reused=True,
            )
            return contradicted({**known, "formulation_error": None})
        round_number = state.get("formulation_round", 0)
        previous = state.get("formulation_answer") if state.get("formulation_error") else None
        turn, formulation, problem = agents.formulation.formulate(
            state["instruction"], previous=previous, error=state.get("formulation_error"), round_number=round_number
        )
        rt.turn(turn, formulation_round=round_number)
        update = _usage(state, [turn])
        if formulation is not None:
            if round_number:
                rt.event(
                    "repair_round",
                    round=round_number,
                    error_kind="formulation",
                    error=state.get("formulation_error", ""),
                    verdict="fixed",
                    note="",
                    changed="",
                )
            rt.event(
                "formulation",
                constraints=[list(c) for c in formulation.constraints],
                formula=formulation.composition.text(),
                kinds=list(formulation.kinds),
                note=formulation.note,
            )
            found = formulation.to_state()
            if rt.memory:
                rt.memory.remember_formulation(state["instruction"], found)
            return contradicted({**update, **found, "formulation_error": None})
        rt.event("syntax_error", round=round_number, kind="formulation", message=problem)
        if turn.error is not None:
            return {**update, "status": "error", "reason": f"formulation failed: {problem}"}
        if round_number:
            rt.event(
                "repair_round",
                round=round_number,
                error_kind="formulation",
                error=state.get("formulation_error", ""),
                verdict="unclear",
                note=problem,
                changed="",
            )
        update.update(formulation_round=round_number + 1, formulation_answer=turn.text, formulation_error=problem)
        if round_number + 1 > rt.max_formulation_repairs:
            update.update(status="error", reason=f"no usable formulation after {round_number + 1} answers: {problem}")
        return update

    # -- per response: who checks what -----------------------------------------------------------------------
    def prepare(state: VerifyState) -> dict[str, Any]:
        ids = [c["id"] for c in state["constraints"]]
        logic = (
            [] if rt.verifier == "nsvif-neu" else [c["id"] for c in state["constraints"] if c.get("kind") == "logic"]
        )
        update: dict[str, Any] = {
            "logic": logic,
            "queue": [cid for cid in ids if cid not in logic],
            "cursor": 0,
            "results": {},
            "failures": {},
            "failure": None,
            "reflection_round": 0,
            "checker_llm_error": None,
        }
        if rt.memory and logic and not state.get("drafts"):
            known = rt.memory.checkers(state["instruction"], state["formula"])
            if known:
                update.update(drafts=known["drafts"], codes=known["codes"], tested=known["tested"])
                rt.event("checkers", constraints=sorted(known["drafts"]), reused=True)
        return update

    def write_checkers(state: VerifyState) -> dict[str, Any]:
        missing = [(cid, summary_of(state, cid)) for cid in state["logic"] if cid not in state.get("drafts", {})]
        turn, drafts = agents.checking.write(state["instruction"], missing)
        rt.turn(turn, constraints=[cid for cid, _ in missing])
        update: dict[str, Any] = _usage(state, [turn])
        if turn.error is not None:
            drafts = {cid: Draft(note=f"LLM error ({turn.error.kind}): {turn.error}") for cid, _ in missing}
            update["checker_llm_error"] = f"LLM error ({turn.error.kind}): {turn.error}"
        for _cid, draft in drafts.items():
            if draft.checker and draft.checker not in rt.user_checkers:
                draft.checker = None
        rt.event(
            "checkers",
            constraints=[cid for cid, _ in missing],
            user_checkers={cid: d.checker for cid, d in drafts.items() if d.checker},
            notes={cid: d.note for cid, d in drafts.items() if d.note},
        )
        codes = {cid: d.code for cid, d in drafts.items() if d.code}
        return {
            **update,
            "drafts": {**state.get("drafts", {}), **{cid: d.to_dict() for cid, d in drafts.items()}},
            "codes": {**state.get("codes", {}), **codes},
        }

    # -- per logic constraint -------------------------------------------------------------------------------
    def run(state: VerifyState, code: str, text: str, counters: dict[str, Any], **where: Any):
        result = run_checker_code(code, text, limits=rt.checker_limits)
        counters["checker_runs"] = counters.get("checker_runs", state.get("checker_runs", 0)) + 1
        counters["checker_seconds"] = (
            counters.get("checker_seconds", state.get("checker_seconds", 0.0)) + result.seconds
        )
        rt.event("checker_run", method="checker", round=state.get("reflection_round", 0), **where, **result.to_dict())
        return result

    def self_test(state: VerifyState, cid: str, code: str, draft: Draft, counters: dict[str, Any]) -> dict | None:
        """The program's first failure on its own examples (it must accept ``accept``, reject ``reject``)."""
        for wanted, examples in ((True, draft.accept), (False, draft.reject)):
            for example in examples:
                result = run(state, code, example, counters, constraint=cid, self_test=True)
                if not result.ok:
                    return {
                        "error_kind": result.error_kind,
                        "message": f"on your example {example!r}: {result.message}",
                        "line": result.line,
                    }
                if result.value is not wanted:
                    return {
                        "error_kind": "self_test",
                        "message": (
                            f"it returned {result.value} on your example {example!r}, which it must "
                            f"{'accept' if wanted else 'reject'}; fix the program (or, if the example is wrong, make sure "
                            "the program follows the constraint)"
                        ),
                    }
        return None

    def check(state: VerifyState) -> dict[str, Any]:
        cid = state["logic"][state["cursor"]]
        draft = Draft.from_dict(state.get("drafts", {}).get(cid, {}))
        counters: dict[str, Any] = {}
        if draft.checker:
            checker = rt.user_checkers[draft.checker]
            result = run_user_function(checker.fn, state["output"], draft.arguments)
            rt.event("checker_run", constraint=cid, method="user_checker", checker=checker.name, **result.to_dict())
            if result.ok:
                return record(
                    state,
                    cid,
                    method="user_checker",
                    value=result.value,
                    checker=checker.name,
                    arguments=draft.arguments,
                )
            failure = {"error_kind": result.error_kind, "message": f"user checker {checker.name}: {result.message}"}
            return {**add_failure(state, cid, failure), "queue": state["queue"] + [cid]}  # the judge decides
        code = state.get("codes", {}).get(cid)
        if code is None:
            failure = {"error_kind": "no_code", "message": draft.note or NO_CODE}
            return {**add_failure(state, cid, failure), **give_up(state, cid)}
        tested = list(state.get("tested") or [])
        if cid not in tested:
            failure = self_test(state, cid, code, draft, counters)
            if failure is not None:
                return {**counters, **add_failure(state, cid, failure), **give_up(state, cid)}
            tested.append(cid)
        result = run(state, code, state["output"], counters, constraint=cid)
        if result.ok:
            return {
                **counters,
                "tested": tested,
                **record(
                    state,
                    cid,
                    method="checker",
                    value=result.value,
                    code=code,
                    spans=list(result.spans),
                    reflections=state.get("reflection_round", 0),
                    failures=(state.get("failures") or {}).get(cid, []),
                    self_tested=bool(draft.accept or draft.reject),
                ),
            }
        failure = {"error_kind": result.error_kind, "message": result.message, "line": result.line}
        return {**counters, "tested": tested, **add_failure(state, cid, failure), **give_up(state, cid)}

    def give_up(state: VerifyState, cid: str) -> dict[str, Any]:
        """After the last reflection (or an LLM error), the judge decides the constraint."""
        if state.get("checker_llm_error") or state.get("reflection_round", 0) >= rt.max_reflections:
            return {"queue": state["queue"] + [cid]}
        return {}

    def reflect(state: VerifyState) -> dict[str, Any]:
        cid = state["logic"][state["cursor"]]
        failure = state["failure"]
        old = state.get("codes", {}).get(cid)
        round_number = state.get("reflection_round", 0) + 1
        shown = f"[{failure['error_kind']}] {failure['message']}"
        turn, code = agents.checking.reflect(
            state["instruction"], cid, summary_of(state, cid), old or "(no program)", shown, round_number
        )
        rt.turn(turn, constraint=cid, reflection_round=round_number)
        rt.event(
            "repair_round",
            round=round_number,
            error_kind=failure["error_kind"],
            error=f"{cid}: {failure['message']}",
            verdict="llm_error" if turn.error else "reflected",
            note="",
            changed=change_summary(old or "", code or "") if code else "",
            constraint=cid,
        )
        update: dict[str, Any] = {
            **_usage(state, [turn]),
            "reflection_round": round_number,
            "failure": None,
            "tested": [c for c in state.get("tested", []) if c != cid],
        }
        if turn.error is not None:
            return {**update, "checker_llm_error": f"LLM error ({turn.error.kind}): {turn.error}"}
        codes = dict(state.get("codes", {}))
        if code is None:
            codes.pop(cid, None)
        else:
            codes[cid] = code
        return {**update, "codes": codes}

    def next_constraint(state: VerifyState) -> dict[str, Any]:
        return {"cursor": state.get("cursor", 0) + 1, "reflection_round": 0, "failure": None, "checker_llm_error": None}

    # -- the judge ---------------------------------------------------------------------------------------------
    def judge(state: VerifyState) -> dict[str, Any]:
        queue = state["queue"]
        turns, verdicts = agents.judge.judge(
            state["instruction"],
            [(cid, summary_of(state, cid)) for cid in queue],
            state["output"],
            salt=str(state.get("follow_round", 0)),
        )
        for turn in turns:
            rt.turn(turn, constraints=queue)
        results = dict(state.get("results", {}))
        for cid in queue:
            failures = (state.get("failures") or {}).get(cid, [])
            fallback = cid in state.get("logic", [])
            extra: dict[str, Any] = {"failures": failures}
            if fallback and state.get("codes", {}).get(cid):
                extra["code"] = state["codes"][cid]
            results.update(
                record(
                    {**state, "results": results},
                    cid,
                    method="judge_fallback" if fallback else "judge",
                    value=verdicts[cid].value,
                    reasoning=verdicts[cid].reasoning,
                    **extra,
                )["results"]
            )
        return {**_usage(state, turns), "results": results}

    def solve(state: VerifyState) -> dict[str, Any]:
        formulation = formulation_from_state(state["constraints"], state["formula"])
        results = state.get("results", {})
        values = {cid: results.get(cid, {}).get("value") for cid in formulation.ids}
        decision = decide(formulation.composition, values).to_dict()
        explanation = explain(decision, state["constraints"], results)
        brief = explain(decision, state["constraints"], results, with_code=False)
        rt.event(
            "verdict",
            verdict=decision["verdict"],
            violated=decision["violated"],
            core=decision["core"],
            falsified_parts=decision["falsified_parts"],
            to_fix=decision["to_fix"],
        )
        if rt.memory:
            trusted = [cid for cid in state.get("tested", []) if results.get(cid, {}).get("method") == "checker"]
            users = [cid for cid, r in results.items() if r.get("method") == "user_checker"]
            if trusted or users:
                rt.memory.remember_checkers(
                    state["instruction"],
                    state["formula"],
                    {
                        "drafts": {cid: state["drafts"][cid] for cid in trusted + users},
                        "codes": {cid: state["codes"][cid] for cid in trusted},
                        "tested": trusted,
                    },
                )
        return {
            "status": decision["verdict"],
            "decision": decision,
            "explanation": explanation,
            "feedback": brief,
            "reason": explanation.splitlines()[0],
            "history": state.get("history", [])
            + [{"round": state.get("follow_round", 0), "verdict": decision["verdict"], "output": state["output"]}],
        }

    # -- routing ---------------------------------------------------------------------------------------------
    def start_route(state: VerifyState) -> str:
        if rt.verifier in WHOLE_INSTRUCTION_JUDGES:
            return "generate" if rt.budget > 0 else "judge_all"
        return "formulate"  # the feedback loop too: a contradictory instruction stops it before any writing

    def after_generate(state: VerifyState) -> str:
        if state.get("status") == "error":
            return END
        return "judge_all" if rt.verifier in WHOLE_INSTRUCTION_JUDGES else "prepare"

    def after_formulate(state: VerifyState) -> str:
        if state.get("status") in ("error", "contradictory"):
            return END
        if state.get("formulation_error") is not None or not state.get("constraints"):
            return "formulate"
        return "generate" if rt.budget > 0 and not state.get("follow_round") else "prepare"

    def after_prepare(state: VerifyState) -> str:
        if any(cid not in state.get("drafts", {}) for cid in state["logic"]):
            return "write_checkers"
        return "check" if state["logic"] else after_checks(state)

    def after_checks(state: VerifyState) -> str:
        return "judge" if state.get("queue") else "solve"

    def after_check(state: VerifyState) -> str:
        cid = state["logic"][state["cursor"]]
        if cid in state.get("results", {}) or cid in state.get("queue", []):
            return "next_constraint"
        return "reflect"

    def after_next(state: VerifyState) -> str:
        return "check" if state["cursor"] < len(state["logic"]) else after_checks(state)

    def after_verdict(state: VerifyState) -> str:
        if rt.budget > 0 and state.get("status") in ("unsat", "unknown") and state.get("follow_round", 0) < rt.budget:
            return "generate"
        return END

    graph = StateGraph(VerifyState)
    nodes = [
        ("generate", generate),
        ("judge_all", judge_all),
        ("formulate", formulate),
        ("prepare", prepare),
        ("write_checkers", write_checkers),
        ("check", check),
        ("reflect", reflect),
        ("next_constraint", next_constraint),
        ("judge", judge),
        ("solve", solve),
    ]
    for name, node in nodes:
        graph.add_node(name, traced(name, node))
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
    return graph.compile(checkpointer=checkpointer)


RECURSION_LIMIT = 100_000  # LangGraph's bound on node visits; loops stop on the state's counters, not on this


__all__ = [
    "FEEDBACK_MODES",
    "RECURSION_LIMIT",
    "VERIFIERS",
    "WHOLE_INSTRUCTION_JUDGES",
    "VerifierMemory",
    "VerifyAgents",
    "VerifyRuntime",
    "VerifyState",
    "build_verify_graph",
    "initial_state",
]
