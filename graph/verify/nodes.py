"""The verifier graph's nodes: module-level functions of the state and the run's :class:`VerifyRuntime`
(LangGraph hands it to them as the runtime context), each testable alone. They only call agents
(:mod:`autonesy.agents.verify`) and tools (sandbox, user checkers, Z3); every LLM call, checker run,
reflection round and per-constraint result goes to the trace."""

from __future__ import annotations

from typing import Any

from autonesy.agents.verify.checking import NO_CODE, Draft
from autonesy.agents.verify.explanation import explain, explain_contradiction
from autonesy.agents.verify.formulation import formulation_from_state
from autonesy.graph.trace import change_summary
from autonesy.graph.verify.state import VerifyRuntime, VerifyState, usage
from autonesy.tools.verify.checker_run import run_checker_code, run_user_function
from autonesy.tools.verify.results import (
    CheckerFailure,
    CheckerResult,
    ConstraintResult,
    Contradiction,
    JudgeDecision,
    JudgeResult,
    UserCheckerResult,
)
from autonesy.tools.verify.solver import contradiction, decide


def summary_of(state: VerifyState, cid: str) -> str:
    return next(c["summary"] for c in state.constraints if c["id"] == cid)


def kind_of(state: VerifyState, cid: str) -> str:
    return next(c.get("kind", "semantic") for c in state.constraints if c["id"] == cid)


def record(state: VerifyState, rt: VerifyRuntime, result: ConstraintResult) -> dict[str, Any]:
    """The state's results with ``result`` added, traced."""
    return {"results": with_result(state.results, rt, result)}


def with_result(
    results: dict[str, ConstraintResult], rt: VerifyRuntime, result: ConstraintResult
) -> dict[str, ConstraintResult]:
    rt.event("constraint_result", constraint=result.id, kind=result.kind, method=result.method, value=result.value)
    return {**results, result.id: result}


def about(state: VerifyState, cid: str) -> dict[str, str]:
    """The fields every result of ``cid`` starts with: its id, summary and kind."""
    return {"id": cid, "summary": summary_of(state, cid), "kind": kind_of(state, cid)}


def add_failure(state: VerifyState, cid: str, failure: CheckerFailure) -> dict[str, Any]:
    return {"failure": failure, "failures": {**state.failures, cid: [*state.failures.get(cid, []), failure]}}


# -- the feedback loop's writer ---------------------------------------------------------------------
def generate(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    round_number = state.follow_round + 1
    writer = rt.agents.writer
    if writer is None:  # the runtime of a verification without a feedback loop has no writer
        return {"status": "error", "reason": "no writer: this verification has no feedback loop"}
    if round_number == 1:
        turn, text = writer.write(state.instruction, salt="1")
    else:
        feedback = state.feedback if rt.feedback == "explanation" else None
        turn, text = writer.rewrite(state.instruction, state.output, feedback, salt=str(round_number))
    rt.turn(turn, follow_round=round_number)
    update: dict[str, Any] = {**usage(state, [turn]), "follow_round": round_number}
    if text is None:
        why = f"LLM error ({turn.error.kind}): {turn.error}" if turn.error else "the writer gave an empty response"
        return {**update, "status": "error", "reason": f"no response to verify in round {round_number}: {why}"}
    rt.event("generated", follow_round=round_number, chars=len(text))
    return {**update, "output": text, "status": "running", "results": {}, "decision": None}


# -- the LLM-as-judge baseline ------------------------------------------------------------------------
def judge_all(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    salt = str(state.follow_round)
    if rt.verifier == "gepa-cot":
        turns, judgement = rt.agents.judge.cot(
            state.instruction, state.output, *([rt.judge_guidance] if rt.judge_guidance else []), salt=salt
        )
    elif rt.verifier == "conv-cot":
        turns, judgement = rt.agents.judge.panel(state.instruction, state.output, salt=salt)
    else:
        turns, judgement = rt.agents.judge.holistic(state.instruction, state.output, salt=salt)
    for turn in turns:
        rt.turn(turn)
    verdict = {True: "sat", False: "unsat", None: "unknown"}[judgement.value]
    explanation = f"Verdict: {verdict} — judged by the LLM on the whole instruction: {judgement.reasoning}"
    rt.event("verdict", verdict=verdict, violated=[], falsified_parts=[])
    return {
        **usage(state, turns),
        "status": verdict,
        "decision": JudgeDecision(verdict=verdict, reasoning=judgement.reasoning),
        "explanation": explanation,
        "feedback": explanation,
        "history": state.history + [{"round": state.follow_round, "verdict": verdict, "output": state.output}],
    }


# -- formulation ---------------------------------------------------------------------------------------
def contradicted(update: dict[str, Any], rt: VerifyRuntime) -> dict[str, Any]:
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
        "decision": Contradiction(conflict=list(conflict)),
    }


def formulate(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    known = rt.memory.formulation(state.instruction) if rt.memory else None
    if known is not None:
        rt.event(
            "formulation",
            constraints=[[c["id"], c["summary"]] for c in known["constraints"]],
            formula=known["formula"],
            reused=True,
        )
        return contradicted({**known, "formulation_error": None}, rt)
    round_number = state.formulation_round
    previous = state.formulation_answer if state.formulation_error else None
    turn, formulation, problem = rt.agents.formulation.formulate(
        state.instruction, previous=previous, error=state.formulation_error, round_number=round_number
    )
    rt.turn(turn, formulation_round=round_number)
    update = usage(state, [turn])
    if formulation is not None:
        if round_number:
            rt.event(
                "repair_round",
                round=round_number,
                error_kind="formulation",
                error=state.formulation_error,
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
            rt.memory.remember_formulation(state.instruction, found)
        return contradicted({**update, **found, "formulation_error": None}, rt)
    rt.event("syntax_error", round=round_number, kind="formulation", message=problem)
    if turn.error is not None:
        return {**update, "status": "error", "reason": f"formulation failed: {problem}"}
    if round_number:
        rt.event(
            "repair_round",
            round=round_number,
            error_kind="formulation",
            error=state.formulation_error,
            verdict="unclear",
            note=problem,
            changed="",
        )
    update.update(formulation_round=round_number + 1, formulation_answer=turn.text, formulation_error=problem)
    if round_number + 1 > rt.max_formulation_repairs:
        update.update(status="error", reason=f"no usable formulation after {round_number + 1} answers: {problem}")
    return update


# -- per response: who checks what -----------------------------------------------------------------------
def prepare(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    ids = [c["id"] for c in state.constraints]
    logic = [] if rt.verifier == "nsvif-neu" else [c["id"] for c in state.constraints if c.get("kind") == "logic"]
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
    if rt.memory and logic and not state.drafts:
        known = rt.memory.checkers(state.instruction, state.formula or "")
        if known:
            update.update(drafts=known["drafts"], codes=known["codes"], tested=known["tested"])
            rt.event("checkers", constraints=sorted(known["drafts"]), reused=True)
    return update


def write_checkers(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    missing = [(cid, summary_of(state, cid)) for cid in state.logic if cid not in state.drafts]
    turn, drafts = rt.agents.checking.write(missing)
    rt.turn(turn, constraints=[cid for cid, _ in missing])
    update: dict[str, Any] = usage(state, [turn])
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
        "drafts": {**state.drafts, **{cid: d.to_dict() for cid, d in drafts.items()}},
        "codes": {**state.codes, **codes},
    }


# -- per logic constraint -------------------------------------------------------------------------------
def run_checker(state: VerifyState, rt: VerifyRuntime, code: str, text: str, counters: dict[str, Any], **where: Any):
    result = run_checker_code(code, text, limits=rt.checker_limits)
    counters["checker_runs"] = counters.get("checker_runs", state.checker_runs) + 1
    counters["checker_seconds"] = counters.get("checker_seconds", state.checker_seconds) + result.seconds
    rt.event("checker_run", method="checker", round=state.reflection_round, **where, **result.to_dict())
    return result


def self_test(
    state: VerifyState, rt: VerifyRuntime, cid: str, code: str, draft: Draft, counters: dict[str, Any]
) -> CheckerFailure | None:
    """The program's first failure on its own examples (it must accept ``accept``, reject ``reject``)."""
    for wanted, examples in ((True, draft.accept), (False, draft.reject)):
        for example in examples:
            result = run_checker(state, rt, code, example, counters, constraint=cid, self_test=True)
            if not result.ok:
                return CheckerFailure(
                    error_kind=result.error_kind,
                    message=f"on your example {example!r}: {result.message}",
                    line=result.line,
                )
            if result.value is not wanted:
                return CheckerFailure(
                    error_kind="self_test",
                    message=(
                        f"it returned {result.value} on your example {example!r}, which it must "
                        f"{'accept' if wanted else 'reject'}; fix the program (or, if the example is wrong, make sure "
                        "the program follows the constraint)"
                    ),
                )
    return None


def check(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    cid = state.logic[state.cursor]
    draft = Draft.from_dict(state.drafts.get(cid, {}))
    counters: dict[str, Any] = {}
    if draft.checker:
        checker = rt.user_checkers[draft.checker]
        result = run_user_function(checker.fn, state.output, draft.arguments)
        rt.event("checker_run", constraint=cid, method="user_checker", checker=checker.name, **result.to_dict())
        if result.ok:
            found = UserCheckerResult(
                **about(state, cid), value=result.value, checker=checker.name, arguments=draft.arguments
            )
            return record(state, rt, found)
        failure = CheckerFailure(error_kind=result.error_kind, message=f"user checker {checker.name}: {result.message}")
        return {**add_failure(state, cid, failure), "queue": state.queue + [cid]}  # the judge decides
    code = state.codes.get(cid)
    if code is None:
        failure = CheckerFailure(error_kind="no_code", message=draft.note or NO_CODE)
        return {**add_failure(state, cid, failure), **give_up(state, rt, cid)}
    tested = list(state.tested)
    if cid not in tested:
        tested_failure = self_test(state, rt, cid, code, draft, counters)
        if tested_failure is not None:
            return {**counters, **add_failure(state, cid, tested_failure), **give_up(state, rt, cid)}
        tested.append(cid)
    result = run_checker(state, rt, code, state.output, counters, constraint=cid)
    if result.ok:
        return {
            **counters,
            "tested": tested,
            **record(
                state,
                rt,
                CheckerResult(
                    **about(state, cid),
                    value=result.value,
                    code=code,
                    spans=list(result.spans),
                    reflections=state.reflection_round,
                    failures=state.failures.get(cid, []),
                    self_tested=bool(draft.accept or draft.reject),
                ),
            ),
        }
    failure = CheckerFailure(error_kind=result.error_kind, message=result.message, line=result.line)
    return {**counters, "tested": tested, **add_failure(state, cid, failure), **give_up(state, rt, cid)}


def give_up(state: VerifyState, rt: VerifyRuntime, cid: str) -> dict[str, Any]:
    """After the last reflection (or an LLM error), the judge decides the constraint."""
    if state.checker_llm_error or state.reflection_round >= rt.max_reflections:
        return {"queue": state.queue + [cid]}
    return {}


def reflect(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    cid = state.logic[state.cursor]
    failure = state.failure or CheckerFailure(error_kind="unknown", message="the checker failed")
    old = state.codes.get(cid)
    round_number = state.reflection_round + 1
    shown = f"[{failure.error_kind}] {failure.message}"
    turn, code = rt.agents.checking.reflect(
        state.instruction, cid, summary_of(state, cid), old or "(no program)", shown, round_number
    )
    rt.turn(turn, constraint=cid, reflection_round=round_number)
    rt.event(
        "repair_round",
        round=round_number,
        error_kind=failure.error_kind,
        error=f"{cid}: {failure.message}",
        verdict="llm_error" if turn.error else "reflected",
        note="",
        changed=change_summary(old or "", code or "") if code else "",
        constraint=cid,
    )
    update: dict[str, Any] = {
        **usage(state, [turn]),
        "reflection_round": round_number,
        "failure": None,
        "tested": [c for c in state.tested if c != cid],
    }
    if turn.error is not None:
        return {**update, "checker_llm_error": f"LLM error ({turn.error.kind}): {turn.error}"}
    codes = dict(state.codes)
    if code is None:
        codes.pop(cid, None)
    else:
        codes[cid] = code
    return {**update, "codes": codes}


def next_constraint(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    return {"cursor": state.cursor + 1, "reflection_round": 0, "failure": None, "checker_llm_error": None}


# -- the judge ---------------------------------------------------------------------------------------------
def judge(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    queue = state.queue
    counted = any(kind_of(state, cid) == "logic" for cid in queue)  # counts follow the instruction's conventions
    turns, verdicts = rt.agents.judge.judge(
        state.instruction if counted else None,
        [(cid, summary_of(state, cid)) for cid in queue],
        state.output,
        salt=str(state.follow_round),
    )
    for turn in turns:
        rt.turn(turn, constraints=queue)
    results = state.results
    for cid in queue:
        fallback = cid in state.logic
        judged = JudgeResult(
            **about(state, cid),
            method="judge_fallback" if fallback else "judge",
            value=verdicts[cid].value,
            reasoning=verdicts[cid].reasoning,
            failures=state.failures.get(cid, []),
            code=(state.codes.get(cid) or None) if fallback else None,
        )
        results = with_result(results, rt, judged)
    return {**usage(state, turns), "results": results}


def solve(state: VerifyState, rt: VerifyRuntime) -> dict[str, Any]:
    formulation = formulation_from_state(state.constraints, state.formula or "")
    results = state.results
    values = {cid: results[cid].value if cid in results else None for cid in formulation.ids}
    decision = decide(formulation.composition, values)
    explanation = explain(decision, state.constraints, results)
    brief = explain(decision, state.constraints, results, with_code=False)
    shown = decision.model_dump(include={"verdict", "violated", "core", "falsified_parts", "to_fix"})
    rt.event("verdict", **{k: shown[k] for k in ("verdict", "violated", "core", "falsified_parts", "to_fix")})
    if rt.memory:
        trusted = [cid for cid in state.tested if cid in results and results[cid].method == "checker"]
        users = [cid for cid, r in results.items() if r.method == "user_checker"]
        if trusted or users:
            rt.memory.remember_checkers(
                state.instruction,
                state.formula or "",
                {
                    "drafts": {cid: state.drafts[cid] for cid in trusted + users},
                    "codes": {cid: state.codes[cid] for cid in trusted},
                    "tested": trusted,
                },
            )
    return {
        "status": decision.verdict,
        "decision": decision,
        "explanation": explanation,
        "feedback": brief,
        "reason": explanation.splitlines()[0],
        "history": state.history + [{"round": state.follow_round, "verdict": decision.verdict, "output": state.output}],
    }


NODES = {
    "generate": generate,
    "judge_all": judge_all,
    "formulate": formulate,
    "prepare": prepare,
    "write_checkers": write_checkers,
    "check": check,
    "reflect": reflect,
    "next_constraint": next_constraint,
    "judge": judge,
    "solve": solve,
}

__all__ = ["NODES", *NODES]
