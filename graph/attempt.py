"""The formalization attempt as a LangGraph state machine (docs/architecture.md §2).

    formalize ─▶ check_syntax ─┬─ ok (autofix included) ─▶ oracle_test ─┬─▶ compile ─▶ evaluate ─▶ (train)
                               │                                        └─ fails, rounds left ─▶ semantic_repair ─▶ check_syntax
                               │                                              (the same formula again: ─▶ compile)
                               └─ error ─▶ repair ─▶ check_syntax   (or rejected: [[OK]], an empty or repeated
                                                                     answer, two token-budget cuts in a row, rounds used)

Nodes are module-level functions of the state and the run's :class:`AttemptRuntime`, which LangGraph
hands them as its runtime context (``context_schema``), so the graph is compiled once per process
and each node can be called alone. Nodes only call agents (policies) and tools; the state is an
:class:`AttemptState` whose results are the records the summary and ``metrics.json`` are made of
(``graph/summary.py``): LangGraph validates the state into it before each node, and the checkpointer
stores the records as their JSON data (``graph/checkpoint_store.py``). Each answer is converted once per round
(autofix included); the accepted DIMACS is parsed once per process. Loops stop on counters kept
in the state, never on the recursion limit.

An LLM call that failed for the endpoint's reasons (refused, DNS, auth, 5xx/429 past the retries, the
deadline) or ours (a request refused as malformed) raises :class:`EndpointFailure` out of its node:
LangGraph then keeps the checkpoint from before that node, so running the attempt again retries the
call instead of reading back a failure (the runner records ``infra_failed`` or ``error`` meanwhile).
An empty answer is the model's: the attempt is rejected (``empty_answer``). The repair loops never
send a prompt twice: an answer that repeats one already rejected ends the attempt
(``repeated_answer``), and a semantic round that gives back a formula already tested ends the rounds.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from autonesy.agents.llm import LLMError
from autonesy.agents.policies import AgentTurn, AttemptSpec, Policy, ToolUse
from autonesy.graph.rundir import TRAINING_DIR
from autonesy.graph.summary import (
    Compilation,
    FailureKind,
    FormulaMetrics,
    FormulaResult,
    OracleCounterexample,
    OracleTest,
    Outcome,
    Training,
    UnscoredFormula,
    json_safe,
)
from autonesy.graph.trace import change_summary
from autonesy.graph.tracer import Tracer, traced_node
from autonesy.tasks.oracle_check import OracleTestResult, oracle_test
from autonesy.tools.big_integers import decimal_text, parse_decimal
from autonesy.tools.cnf import CNF, parse_dimacs, to_dimacs
from autonesy.tools.compile import CompilationBudgetExceeded, compile_formula
from autonesy.tools.config import COMPILE_TIME_LIMIT_S
from autonesy.tools.counting import CountTimedOut, ModelCount
from autonesy.tools.errors import AutonesyError
from autonesy.tools.formats import FormatError, convert
from autonesy.tools.formats.extract import extract
from autonesy.tools.metrics import FormulaScore, score_formula
from autonesy.tools.quiet_clock import available_cores


class CheckError(BaseModel):
    """What the latest syntax check said of the answer (``lint``: it parses, with warnings for the repair agent)."""

    kind: str
    message: str


class TokenCut(BaseModel):
    """The token budget stopped the latest answer unfinished (nothing was left to close it under a grammar)."""

    completion_tokens: int | None = None


class AttemptState(BaseModel):
    """The attempt graph's state; the results are the records the run's outputs are made of."""

    model_config = ConfigDict(extra="forbid")  # and graph/tracer.py:traced_node refuses an update with an unknown key

    answer: str = ""  # the latest raw answer of an agent
    source: str = ""  # the formula text extracted from it
    error: CheckError | None = None
    dimacs: str | None = None  # the accepted formula as DIMACS
    autofixes: list[str] = Field(default_factory=list)
    repair_round: int = 0
    cut_chars: int = 0  # characters the LLM layer cut from the latest answer (it was too long to keep whole)
    token_cut: TokenCut | None = None
    lint_reviewed: bool = False  # the repair agent has seen the lint warnings (they are shown once)
    semantic_round: int = 0
    semantic_stalled: bool = False  # a semantic round gave back a formula already tested: the rounds end
    rejected_answers: list[str] = Field(default_factory=list)  # answer_key of each answer the checker rejected
    tested_formulas: list[str] = Field(default_factory=list)  # answer_key of each formula that failed the oracle test
    token_budget_streak: int = 0  # answers in a row stopped by the token budget before their formula was complete
    status: Outcome | Literal["running"] = "running"
    failure: FailureKind | None = None  # why it was not accepted
    reason: str = ""
    oracle_test: OracleTest | None = None
    compiled: Compilation | None = None
    metrics: FormulaResult | None = None
    downstream: Training | None = None  # SPL/SL trained on the formula and on the ground truth
    llm_calls: int = 0
    cached_calls: int = 0  # answers the response cache gave (not sent, not counted in llm_calls or tokens)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    cached_prompt_tokens: int = 0  # what the cached answers cost when they were made (the study's "would cost")
    cached_completion_tokens: int = 0
    cached_llm_seconds: float = 0.0


@dataclass
class AttemptRuntime:
    """What the nodes need besides the state (not serialised)."""

    spec: AttemptSpec
    policy: Policy
    tracer: Tracer
    run_dir: Path
    labels: np.ndarray | None = None
    compile_time_limit_s: float = COMPILE_TIME_LIMIT_S
    training: TrainingRequest | None = None


@dataclass
class TrainingRequest:
    """Train NeSy predictors on the accepted formula (and on the ground truth, for reference)."""

    methods: tuple[str, ...]
    data: Any  # train/val/test splits (autonesy.tasks.data.Dataset or arrays)
    seeds: int = 5
    epochs: int | None = None
    progress: bool = True
    threads: int | None = 1  # torch threads while training: small models run fastest on one


def _step(state: AttemptState, rt: AttemptRuntime, turn: AgentTurn, **fields: Any) -> dict[str, Any]:
    """Trace every LLM call and tool use the policy made in this step (``turn``, its answer, included),
    and the state's usage counters with all of its calls added (a cached answer counts as cached)."""
    calls = rt.policy.take_calls()
    if not any(call is turn for call in calls):
        calls.append(turn)  # an answer made without asking (the expert's)
    usage = {key: getattr(state, key) for key in _USAGE_KEYS}
    for call in calls:
        if isinstance(call, ToolUse):
            rt.tracer.tool_use(call, **fields)
            continue
        rt.tracer.agent_turn(call, **fields)
        response = call.response
        if response is None:
            continue
        if response.cached:  # not spent now: what it cost when it was made is kept apart
            usage["cached_calls"] += 1
            usage["cached_prompt_tokens"] += response.prompt_tokens or 0
            usage["cached_completion_tokens"] += response.completion_tokens or 0
            usage["cached_llm_seconds"] += response.latency_s or 0.0
            continue
        usage["llm_calls"] += 1
        usage["prompt_tokens"] += response.prompt_tokens or 0
        usage["completion_tokens"] += response.completion_tokens or 0
        usage["llm_seconds"] += response.latency_s or 0.0
    return {key: value for key, value in usage.items() if value != getattr(state, key)}


_USAGE_KEYS = (
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "llm_seconds",
    "cached_prompt_tokens",
    "cached_completion_tokens",
    "cached_llm_seconds",
)
_T = TypeVar("_T")
TOKEN_BUDGET_STREAK = 2  # answers in a row cut by the token budget that end the attempt: a third would be cut too
_ENDPOINT_FAILURES = {
    "refused": FailureKind.CONNECTION,
    "dns": FailureKind.DNS,
    "timeout": FailureKind.DEADLINE,
    "deadline": FailureKind.DEADLINE,
    "auth": FailureKind.AUTH,
}
_OUR_FAILURES = {"bad_request": FailureKind.BAD_REQUEST, "config": FailureKind.CONFIG, "other": FailureKind.CRASH}


class EndpointFailure(AutonesyError):
    """An LLM call that failed for reasons that are not the model's: the attempt stops here and the
    next run retries the call. ``outcome`` is ``infra_failed`` or ``error``, ``failure`` the kind."""

    def __init__(self, error: LLMError, outcome: Outcome, failure: FailureKind) -> None:
        super().__init__(f"LLM call failed ({failure.value}): {error}")
        self.error = error
        self.outcome = outcome
        self.failure = failure


def failure_of(error: LLMError) -> tuple[Outcome, FailureKind]:
    """The outcome a failed LLM call gives its attempt, from the error's kind and HTTP status."""
    if error.kind == "empty":  # the model's; with finish reason length, its token budget ran out first
        return (
            Outcome.REJECTED,
            FailureKind.TOKEN_BUDGET if error.finish_reason == "length" else FailureKind.EMPTY_ANSWER,
        )
    if error.kind in _ENDPOINT_FAILURES:
        return Outcome.INFRA_FAILED, _ENDPOINT_FAILURES[error.kind]
    if error.kind == "http_error":  # 5xx, 429, another status, or a body that is not an answer
        return Outcome.INFRA_FAILED, FailureKind.RATE_LIMIT if error.status == 429 else FailureKind.SERVER_ERROR
    return Outcome.ERROR, _OUR_FAILURES.get(error.kind, FailureKind.CRASH)


def _llm_failure(error: LLMError, budget: int | None) -> dict[str, Any]:
    """The rejection of an empty answer (``budget``: the token budget, named when it ran out first); any other
    failed call raises :class:`EndpointFailure`."""
    outcome, failure = failure_of(error)
    if outcome != Outcome.REJECTED:
        raise EndpointFailure(error, outcome, failure)
    if failure == FailureKind.TOKEN_BUDGET:
        spent = f" ({budget} tokens)" if budget else ""
        return _rejected(failure, f"the model spent the token budget{spent} without answering: raise --max-tokens")
    return _rejected(failure, f"the model gave no answer: {error}")


def _rejected(failure: FailureKind, reason: str) -> dict[str, Any]:
    return {"status": Outcome.REJECTED, "failure": failure, "reason": reason}


def answer_key(answer: str) -> str:
    """What makes two answers the same formula: the extracted block (whitespace at line ends and
    blank lines ignored), else the whole answer; hashed."""
    try:
        text = extract(answer).source
    except FormatError:
        text = answer
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return hashlib.sha256("\n".join(lines).encode("utf-8", "replace")).hexdigest()[:32]


def _pending(value: _T | None, name: str) -> _T:
    """A result the graph routes on (``error`` into repair, ``oracle_test`` into semantic repair):
    present whenever the node that reads it runs."""
    if value is None:
        raise RuntimeError(f"attempt graph: {name} is missing where the route requires it")
    return value


def _accepted(state: AttemptState) -> CNF:
    """The accepted formula of a node the graph reaches only with one."""
    return accepted_cnf(_pending(state.dimacs, "dimacs"))


@functools.lru_cache(maxsize=8)
def accepted_cnf(dimacs: str) -> CNF:
    """The accepted formula, parsed once: several nodes read it, the state keeps it as DIMACS text."""
    return parse_dimacs(dimacs)


def formalize(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """First LLM turn: the policy writes a formalization; a failed call rejects the attempt."""
    turn = rt.policy.formalize(rt.spec)
    usage = _step(state, rt, turn)
    if turn.error:
        return {**usage, **_llm_failure(turn.error, rt.policy.token_budget())}
    return {**usage, **_answer(turn.text, turn), "status": "running"}


def _answer(text: str, turn: AgentTurn) -> dict[str, Any]:
    """The state of a new answer: its text and how it was cut (by the LLM layer's size limit, or by
    the token budget with nothing left to close under a grammar)."""
    response = turn.response
    if response is None:
        return {"answer": text, "cut_chars": 0, "token_cut": None}
    closed = (turn.decoding.get("cut_by_token_budget") or {}).get("closed")
    stopped = response.finish_reason == "length" and not closed
    return {
        "answer": text,
        "cut_chars": response.truncated_chars,
        "token_cut": TokenCut(completion_tokens=response.completion_tokens) if stopped else None,
    }


def _lint_message(warnings) -> str:
    return (
        "The formula parses, but these checks suggest it does not say what you meant:\n"
        + "\n".join(f"- {w}" for w in warnings)
        + "\nIf the formula is nevertheless right, answer [[OK]]; otherwise fix it."
    )


def _size_limits(rt: AttemptRuntime) -> dict[str, Any]:
    """The answer-size limit guards against LLM output; the expert reference is exempt (a large
    DCP-Bench-Open ground truth written out as DIMACS exceeds it)."""
    return {} if rt.policy.uses_llm else {"max_chars": 1 << 62}


def check_syntax(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """Convert the answer once: the autofix (when the policy allows it) is part of the same conversion.
    Lint warnings on a formula that parses go to the repair agent once (it may answer [[OK]]). An
    answer the token budget stopped is never scored, even when what was kept of it parses."""
    task = rt.spec.task
    if state.cut_chars:  # a cut answer is not the formula the LLM wrote: never score what is left of it
        kept = len(state.answer)
        error = CheckError(
            kind="too_large",
            message=f"the answer has {kept + state.cut_chars:,} characters, more than "
            f"the {kept:,} kept of an LLM answer: write the formula more compactly",
        )
        return _syntax_error(state, rt, "", error)
    conversion = convert(state.answer, rt.spec.format, task.names, autofix=rt.policy.autofix, **_size_limits(rt))
    cut = state.token_cut
    if conversion.cnf is not None and cut is None:
        fixes = conversion.autofixes[len(_extraction_notes(state.answer)) :]
        if fixes:
            rt.tracer.event("autofix", fixes=list(conversion.autofixes))
        update: dict[str, Any] = {
            "source": conversion.source,
            "error": None,
            "token_budget_streak": 0,
            "dimacs": to_dimacs(conversion.cnf, task.names),
            "autofixes": state.autofixes + list(conversion.autofixes),
        }
        if conversion.warnings:
            rt.tracer.event("lint", round=state.repair_round, warnings=list(conversion.warnings))
            if not state.lint_reviewed:
                update["error"] = CheckError(kind="lint", message=_lint_message(conversion.warnings))
        return update
    failure = conversion.error  # set when cnf is not
    error = CheckError(kind=failure.kind if failure else "unknown", message=str(failure) if failure else "")
    if cut is not None:  # the real cause; and what parses of a cut answer is not what the LLM meant
        tokens = cut.completion_tokens
        error = CheckError(
            kind="token_budget",
            message="the answer stopped at the token budget"
            + (f" ({tokens} tokens)" if tokens else "")
            + " before the formula was complete: write it shorter, as short constraints on separate lines."
            + (f"\n{error.message}" if failure else ""),
        )
    return _syntax_error(state, rt, conversion.source, error)


def _syntax_error(state: AttemptState, rt: AttemptRuntime, source: str, error: CheckError) -> dict[str, Any]:
    """A rejected answer, traced; the state keeps its key (a repeat of it ends the attempt) and the run
    of token-budget cuts it extends or ends."""
    rt.tracer.event("syntax_error", round=state.repair_round, kind=error.kind, message=error.message)
    return {
        "source": source,
        "error": error,
        "dimacs": None,
        "rejected_answers": [*state.rejected_answers, answer_key(state.answer)],
        "token_budget_streak": state.token_budget_streak + 1 if error.kind == "token_budget" else 0,
    }


def _extraction_notes(answer: str) -> tuple[str, ...]:
    try:
        return extract(answer).notes
    except FormatError:
        return ()


def _block_source(answer: str) -> str:
    """The formula text of an answer without running it (for diffs between rounds)."""
    try:
        return extract(answer).source
    except FormatError:
        return ""


def repair(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """One syntax-repair round: the repair agent sees the checker's error and answers [[OK]] or [[FIXED]] with a new
    formula; the round and what changed go to the trace."""
    round_number = state.repair_round + 1
    error = _pending(state.error, "error")
    turn = rt.policy.repair(rt.spec, state.source, error.message, round_number)
    update: dict[str, Any] = {**_step(state, rt, turn, round=round_number), "repair_round": round_number}
    changed = ""
    verdict = "llm_error"
    if turn.error:
        update.update(_llm_failure(turn.error, rt.policy.token_budget()))
    elif turn.verdict is not None:  # parsed whenever the call succeeded
        verdict = turn.verdict.verdict
        if error.kind == "lint":
            update["lint_reviewed"] = True
        if verdict == "ok" and error.kind != "lint":  # [[OK]] on lint warnings: the formula goes on as it is
            update.update(
                _rejected(
                    FailureKind.OK_ON_ERROR,
                    f"the repair agent answered [[OK]] on a formula the checker "
                    f"rejected ({error.kind}: {error.message.splitlines()[0][:160]})",
                )
            )
        elif verdict == "fixed" and answer_key(turn.verdict.answer) in state.rejected_answers:
            verdict = "repeated"  # checking it again would send the same repair prompt again
            update.update(
                _rejected(
                    FailureKind.REPEATED_ANSWER,
                    f"the repair agent repeated an answer already rejected (round {round_number}; "
                    f"{error.kind}: {error.message.splitlines()[0][:160]})",
                )
            )
        elif verdict == "fixed":
            changed = change_summary(state.source, _block_source(turn.verdict.answer))
            update.update(_answer(turn.verdict.answer, turn))
    rt.tracer.event(
        "repair_round",
        round=round_number,
        error_kind=error.kind,
        error=error.message,
        verdict=verdict,
        note=turn.verdict.note if turn.verdict else "",
        changed=changed,
    )
    return update


def reject_syntax(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """End the attempt when the repair budget is spent without a parseable formula, or when the token
    budget cut the answers twice in a row (a third would be cut too: the advice is a larger budget)."""
    kind = _pending(state.error, "error").kind
    rounds = state.repair_round
    if kind != "token_budget":
        return _rejected(FailureKind.SYNTAX, f"syntax error after {rounds} repair rounds: {kind}")
    streak = state.token_budget_streak
    budget = rt.policy.token_budget()
    if streak < TOKEN_BUDGET_STREAK:  # the repair budget ran out on a single cut answer
        return _rejected(FailureKind.TOKEN_BUDGET, f"syntax error after {rounds} repair rounds: {kind}")
    return _rejected(
        FailureKind.TOKEN_BUDGET,
        f"{streak} answers in a row stopped at the token budget"
        + (f" ({budget} tokens)" if budget else "")
        + f" before the formula was complete (after {rounds} repair rounds): raise --max-tokens",
    )


def run_oracle_test(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """Check the accepted formula against the task's oracle and training labels; the feedback drives the
    semantic-repair loop."""
    return {"oracle_test": oracle_record(oracle_test(_accepted(state), rt.spec.task, rt.labels))}


def oracle_record(result: OracleTestResult) -> OracleTest:
    """The record of the oracle test ``tasks/oracle_check.py`` ran, with the feedback a semantic round is given."""
    return OracleTest(
        passed=result.passed,
        labels_checked=result.labels_checked,
        labels_rejected=result.labels_rejected,
        probes_checked=result.probes_checked,
        too_strict=result.too_strict,
        too_permissive=result.too_permissive,
        counterexamples=[
            OracleCounterexample(
                true_variables=list(c.true_variables),
                formula_says=c.formula_says,
                oracle_says=c.oracle_says,
                source=c.source,
            )
            for c in result.counterexamples
        ],
        feedback=result.feedback(),
    )


def semantic_repair(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """One oracle-feedback round: the policy sees counterexamples of the failed oracle test and writes a new formula.

    The round goes to the trace (``semantic_round``: its counterexamples, the formula before and
    after). A formula already tested (this one or an earlier round's) ends the rounds: the formula
    goes on as it is, since asking again would send a prompt already sent."""
    round_number = state.semantic_round + 1
    verdict = _pending(state.oracle_test, "oracle_test")
    before = state.source
    turn = rt.policy.semantic_repair(rt.spec, before, verdict.feedback, round_number)
    update: dict[str, Any] = {**_step(state, rt, turn, semantic_round=round_number), "semantic_round": round_number}
    if turn.error:
        return {**update, **_llm_failure(turn.error, rt.policy.token_budget())}
    tested = [*state.tested_formulas, answer_key(state.answer)]
    repeated = answer_key(turn.text) in tested
    rt.tracer.event(
        "semantic_round",
        round=round_number,
        counterexamples=[c.model_dump() for c in verdict.counterexamples],
        too_strict=verdict.too_strict,
        too_permissive=verdict.too_permissive,
        formula_before=before,
        formula_after=_block_source(turn.text),
        changed=change_summary(before, _block_source(turn.text)),
        repeated=repeated,
    )
    if repeated:
        return {**update, "tested_formulas": tested, "semantic_stalled": True}
    return {**update, **_answer(turn.text, turn), "tested_formulas": tested}


def compile_node(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """Compile the accepted formula to an SDD within the time budget and save it; over budget is recorded, not an
    error."""
    try:
        sdd = compile_formula(_accepted(state), time_limit_s=rt.compile_time_limit_s)
    except CompilationBudgetExceeded as error:
        return {"compiled": Compilation(ok=False, note=str(error))}
    sdd_path, vtree_path = sdd.save(rt.run_dir, "formula")
    return {
        "compiled": Compilation(
            ok=True,
            sdd=sdd_path.name,
            vtree=vtree_path.name,
            size=sdd.size,
            model_count=decimal_text(sdd.model_count()),  # str() refuses a count past 4,300 digits
            seconds=sdd.seconds,
        )
    }


def evaluate(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """Score against the ground truth; the compiled circuit's exact count is the candidate's count."""
    task = rt.spec.task
    if not task.has_ground_truth:
        return {"status": Outcome.ACCEPTED, "metrics": None}
    compiled = state.compiled
    known = None
    if compiled is not None and compiled.ok and compiled.model_count is not None:
        known = ModelCount(parse_decimal(compiled.model_count), "sdd", True, compiled.seconds or 0.0)
    try:
        score = score_formula(_accepted(state), task.ground_truth, candidate_count=known)
    except CountTimedOut as error:  # the formula stands; only its score is missing
        return {"status": Outcome.ACCEPTED, "metrics": UnscoredFormula(note=str(error))}
    return {"status": Outcome.ACCEPTED, "metrics": score_record(score)}


def score_record(score: FormulaScore) -> FormulaMetrics:
    """The record of a score ``tools/metrics.py`` made (counts past 2^53 as text)."""
    return FormulaMetrics.model_validate(json_safe(score.to_dict()))


def train(state: AttemptState, rt: AttemptRuntime) -> dict[str, Any]:
    """Train the requested NeSy predictors on the accepted formula and on the ground truth, for comparison."""
    from autonesy.nesy.evaluate import train_and_evaluate
    from autonesy.nesy.trainer import TrainConfig

    request = rt.training
    if request is None:  # routed here only with a request
        return {}
    result = train_and_evaluate(
        rt.spec.task,
        _accepted(state),
        request.data,
        methods=request.methods,
        seeds=request.seeds,
        epochs=request.epochs,
        progress=request.progress,
        config=TrainConfig(threads=request.threads),
        formula_score=state.metrics.model_dump() if state.metrics is not None else None,
        resume_dir=rt.run_dir / TRAINING_DIR,
    )
    return {"downstream": Training.model_validate(json_safe(result))}  # counts past 2^53 as text


def after_formalize(state: AttemptState) -> str:
    """Route after the first answer: a failed LLM call ends the attempt."""
    return END if state.status == Outcome.REJECTED else "check_syntax"


def after_check(state: AttemptState, runtime: Runtime[AttemptRuntime]) -> str:
    """Route after the syntax check: a formula with lint warnings gets one review by the repair agent, a parsed formula
    goes to the oracle test, an error to autofix/repair until the budget is spent."""
    if state.dimacs and state.error is not None and state.error.kind == "lint":
        return "repair" if state.repair_round < runtime.context.policy.max_repairs else "oracle_test"
    if state.dimacs:
        return "oracle_test"
    if state.token_budget_streak >= TOKEN_BUDGET_STREAK:
        return "reject_syntax"
    if state.repair_round < runtime.context.policy.max_repairs:
        return "repair"
    return "reject_syntax"


def after_repair(state: AttemptState) -> str:
    """Route after a repair: [[OK]] on a real error, an empty or repeated answer ends the attempt, anything else is
    checked again."""
    return END if state.status == Outcome.REJECTED else "check_syntax"


def after_semantic(state: AttemptState) -> str:
    """Route after a semantic round: an empty answer ends the attempt, a formula already tested is compiled as it
    is, a new one is checked."""
    if state.status == Outcome.REJECTED:
        return END
    return "compile" if state.semantic_stalled else "check_syntax"


def after_oracle(state: AttemptState, runtime: Runtime[AttemptRuntime]) -> str:
    """Route after the oracle test: a failure goes back to the LLM while semantic rounds are left, otherwise the
    formula is compiled as it is; so is a formula an earlier round already tested (the repair loop can bring one
    back), whose round would send a prompt already sent."""
    result = state.oracle_test
    passed = result is None or result.passed is not False
    if passed or state.semantic_round >= runtime.context.policy.semantic_rounds:
        return "compile"
    return "compile" if answer_key(state.answer) in state.tested_formulas else "semantic_repair"


def after_evaluate(state: AttemptState, runtime: Runtime[AttemptRuntime]) -> str:
    """Train only when asked and only when a ground truth exists to train against."""
    return "train" if runtime.context.training is not None and runtime.context.spec.task.has_ground_truth else END


NODES = {
    "formalize": formalize,
    "check_syntax": check_syntax,
    "repair": repair,
    "reject_syntax": reject_syntax,
    "oracle_test": run_oracle_test,
    "semantic_repair": semantic_repair,
    "compile": compile_node,
    "evaluate": evaluate,
    "train": train,
}


# The nodes that wait on an LLM. Every other node works on this machine's cores (in this process, or in the
# sandboxes and counters it starts), and at most one attempt per core runs one at a time: a sweep's concurrency
# is for LLM calls in flight, and eight threads taking turns at the interpreter on two cores spent about a
# tenth more CPU per attempt than the same work taken in turn (benchmarks/sweep_cpu.py).
LLM_NODES = frozenset({"formalize", "repair", "semantic_repair"})
_CORES = threading.BoundedSemaphore(available_cores())


def _traced(name: str, node):
    """The node as LangGraph calls it: with the run's runtime context, timed into the run's trace (a node that
    does not wait on an LLM first waits for a core, untimed)."""

    def run(state: AttemptState, runtime: Runtime[AttemptRuntime]) -> dict[str, Any]:
        rt = runtime.context
        rt.tracer.starting(name)
        return traced_node(rt.tracer.event, name, lambda s: node(s, rt))(state)

    if name in LLM_NODES:
        return run

    def on_a_core(state: AttemptState, runtime: Runtime[AttemptRuntime]) -> dict[str, Any]:
        with _CORES:
            return run(state, runtime)

    return on_a_core


@functools.cache
def _compiled_graph():
    graph = StateGraph(AttemptState, context_schema=AttemptRuntime)
    for name, node in NODES.items():
        graph.add_node(name, _traced(name, node))
    graph.add_edge(START, "formalize")
    graph.add_conditional_edges("formalize", after_formalize, ["check_syntax", END])
    graph.add_conditional_edges("check_syntax", after_check, ["oracle_test", "repair", "reject_syntax"])
    graph.add_conditional_edges("repair", after_repair, ["check_syntax", END])
    graph.add_edge("reject_syntax", END)
    graph.add_conditional_edges("oracle_test", after_oracle, ["semantic_repair", "compile"])
    graph.add_conditional_edges("semantic_repair", after_semantic, ["check_syntax", "compile", END])
    graph.add_edge("compile", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate, ["train", END])
    graph.add_edge("train", END)
    return graph.compile()


def build_attempt_graph(checkpointer=None):
    """The attempt graph with ``checkpointer``; invoke it with ``context=AttemptRuntime(...)``.

    The graph itself is compiled once per process; each run only attaches its checkpointer.
    """
    return _compiled_graph().copy({"checkpointer": checkpointer})
