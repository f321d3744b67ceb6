"""The verifier graph's data: its state (typed records), the runtime its nodes get as LangGraph's runtime
context (agents, tracer, limits, the memory shared by the verifications of an evaluation), and the
state a verification starts from."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.checking import CheckingAgent
from autonesy.agents.verify.formulation import FormulationAgent
from autonesy.agents.verify.judge import JudgeAgent
from autonesy.agents.verify.writer import WriterAgent
from autonesy.graph.tracer import Tracer
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.verify.checker_run import CHECKER_LIMITS
from autonesy.tools.verify.metrics import USAGE_KEYS
from autonesy.tools.verify.results import CheckerFailure, ConstraintResult, Decision
from autonesy.tools.verify.user_checkers import UserChecker

WHOLE_INSTRUCTION_JUDGES = ("judge", "gepa-cot", "conv-cot")  # the baselines: no formulation, no code
_TRACE_LOCK = threading.Lock()  # verifications of an evaluation may run in threads and share one trace


class VerifyState(BaseModel):
    """The verifier graph's state; each constraint's result and the decision are the records the summary is made of.
    A checkpoint holds their JSON data (``checkpoint_store.plain_data``), validated back before the next node."""

    model_config = ConfigDict(extra="forbid")  # and graph/tracer.py:traced_node refuses an update with an unknown key

    instruction: str = ""
    output: str = ""  # the response being verified (never changed by a node other than generate)
    status: str = "running"  # running | sat | unsat | unknown | contradictory | error
    reason: str = ""
    constraints: list[dict[str, str]] = Field(default_factory=list)  # [{"id", "summary", "kind"}]
    formula: str | None = None  # None until the formulation is read (and for the whole-instruction judges)
    formulation_round: int = 0
    formulation_answer: str = ""
    formulation_error: str | None = None
    drafts: dict[str, dict[str, Any]] = Field(default_factory=dict)  # per logic constraint: the checking agent's Draft
    codes: dict[str, str] = Field(default_factory=dict)  # the latest checker program per constraint
    tested: list[str] = Field(default_factory=list)  # constraints whose program passed its self-test
    logic: list[str] = Field(default_factory=list)  # the constraints checked by code for this response, in order
    cursor: int = 0  # index into ``logic``
    reflection_round: int = 0  # reflections spent on the current constraint
    failure: CheckerFailure | None = None  # the current constraint's last checker failure
    failures: dict[str, list[CheckerFailure]] = Field(default_factory=dict)  # per constraint, for this response
    queue: list[str] = Field(default_factory=list)  # the constraints the judge decides for this response
    checker_llm_error: str | None = None
    results: dict[str, ConstraintResult] = Field(default_factory=dict)
    decision: Decision | None = None
    explanation: str = ""
    feedback: str = ""  # the compact explanation the writer gets
    follow_round: int = 0
    history: list[dict[str, Any]] = Field(default_factory=list)  # per round: its number, verdict and response
    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_without_usage: int = 0  # answered calls whose server reported no token counts (their tokens count 0)
    cached_tokens: int = 0  # prompt + completion tokens of the cached answers, as reported when first answered
    failed_requests: int = 0  # requests that got no answer: retried ones, and those of calls that failed
    llm_seconds: float = 0.0
    checker_runs: int = 0
    checker_seconds: float = 0.0


@dataclass
class VerifyAgents:
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
        with self._lock:
            return self._formulations.get(self._key(instruction))

    def remember_formulation(self, instruction: str, found: dict[str, Any]) -> None:
        with self._lock:
            self._formulations.setdefault(self._key(instruction), found)

    def checkers(self, instruction: str, formula: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._checkers.get(self._key(instruction, formula), {}))

    def remember_checkers(self, instruction: str, formula: str, found: dict[str, Any]) -> None:
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
        with _TRACE_LOCK:
            self.tracer.event(name, **self.tag, **fields)

    def turn(self, turn: AgentTurn, **fields: Any) -> None:
        with _TRACE_LOCK:
            self.tracer.agent_turn(turn, **self.tag, **fields)


def initial_state(instruction: str, output: str | None = None) -> VerifyState:
    return VerifyState(instruction=instruction, output=output or "")


def usage(state: VerifyState, turns: list[AgentTurn]) -> dict[str, Any]:
    """The usage counters after ``turns``: calls sent and answered, tokens as the server reported them
    (``usage``), calls whose server reported none; a cached answer counts as a cached call, with the
    tokens it cost when it was first answered (what the call would cost sent again); requests that got no
    answer (a retried attempt, every attempt of a call that failed) count as failed requests."""
    update: dict[str, Any] = {k: getattr(state, k) for k in USAGE_KEYS}
    for turn in turns:
        response = turn.response
        if response is None:
            update["failed_requests"] += (turn.error.attempts or 0) if turn.error is not None else 0
            continue
        if response.cached:
            update["cached_calls"] += 1
            update["cached_tokens"] += (response.prompt_tokens or 0) + (response.completion_tokens or 0)
            continue
        update["llm_calls"] += 1
        update["failed_requests"] += max(0, response.attempts - 1)
        update["prompt_tokens"] += response.prompt_tokens or 0
        update["completion_tokens"] += response.completion_tokens or 0
        update["calls_without_usage"] += response.prompt_tokens is None or response.completion_tokens is None
        update["llm_seconds"] += response.latency_s or 0.0
    return update


__all__ = [
    "WHOLE_INSTRUCTION_JUDGES",
    "VerifierMemory",
    "VerifyAgents",
    "VerifyRuntime",
    "VerifyState",
    "initial_state",
    "usage",
]
