"""Agent policies: how an attempt asks for a formula, repairs it, and reacts to oracle feedback.

A policy is one registered class; the graph only calls ``formalize``, ``repair`` and
``semantic_repair`` and reads ``max_repairs``, ``autofix`` and ``semantic_rounds``.

- ``zs`` / ``zs-cot``: the benchmark's zero-shot and zero-shot chain-of-thought prompts;
- ``oracle-feedback``: as the chosen prompt style, plus semantic repair rounds fed with the oracle
  test's counterexamples (an extension beyond the paper; off in benchmark sweeps);
- ``expert``: no LLM; answers with the task's reference formalization (the pipeline's self-test
  and the ceiling of every table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from autonesy.agents.llm import ChatBackend, LLMError, LLMResponse
from autonesy.agents.prompts import PROMPT_STYLES, Prompt, formalizer_prompt, repair_prompt, semantic_repair_prompt
from autonesy.agents.repair import RepairVerdict, parse_repair_answer
from autonesy.tasks.task import Task

DEFAULT_MAX_REPAIRS = 5


@dataclass(frozen=True)
class AttemptSpec:
    """What one formalization attempt is about (everything here is plain data)."""

    task: Task
    format: str
    detail: str
    prompt: str = "zs-cot"


@dataclass
class AgentTurn:
    """One agent step: the messages sent, the answer (or the LLM error), for the trace."""

    role: str  # formalizer | repair | semantic_repair
    messages: list[dict[str, str]]
    text: str = ""
    response: LLMResponse | None = None
    error: LLMError | None = None
    verdict: RepairVerdict | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "messages": self.messages,
            "text": self.text,
            "response": self.response.to_dict() if self.response else None,
            "error": self.error.to_dict() if self.error else None,
            "verdict": None if self.verdict is None else self.verdict.__dict__,
        }


@dataclass
class Policy:
    name: ClassVar[str] = ""
    uses_llm: ClassVar[bool] = True
    backend: ChatBackend | None = None
    max_repairs: int = DEFAULT_MAX_REPAIRS
    autofix: bool = True
    semantic_rounds: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    def style(self, spec: AttemptSpec) -> str:
        return spec.prompt

    def _ask(self, role: str, prompt: Prompt, round_number: int = 0) -> AgentTurn:
        turn = AgentTurn(role, prompt.messages())
        if self.backend is None:
            turn.error = LLMError("config", f"policy {self.name!r} needs an LLM backend")
            return turn
        try:
            turn.response = self.backend.complete(turn.messages, cache_salt=f"{role}:{round_number}", **self.params)
            turn.text = turn.response.text
        except LLMError as error:
            turn.error = error
        return turn

    def formalize(self, spec: AttemptSpec) -> AgentTurn:
        return self._ask("formalizer", formalizer_prompt(spec.task, spec.format, self.style(spec), spec.detail))

    def repair(self, spec: AttemptSpec, source: str, error: str, round_number: int = 1) -> AgentTurn:
        turn = self._ask("repair", repair_prompt(spec.task, spec.format, spec.detail, source, error), round_number)
        if turn.error is None:
            turn.verdict = parse_repair_answer(turn.text)
        return turn

    def semantic_repair(self, spec: AttemptSpec, source: str, counterexamples: str, round_number: int = 1) -> AgentTurn:
        prompt = semantic_repair_prompt(spec.task, spec.format, spec.detail, source, counterexamples)
        return self._ask("semantic_repair", prompt, round_number)


@dataclass
class ZeroShot(Policy):
    name: ClassVar[str] = "zs"

    def style(self, spec: AttemptSpec) -> str:
        return "zs"


@dataclass
class ZeroShotCoT(Policy):
    name: ClassVar[str] = "zs-cot"

    def style(self, spec: AttemptSpec) -> str:
        return "zs-cot"


@dataclass
class OracleFeedback(Policy):
    name: ClassVar[str] = "oracle-feedback"
    semantic_rounds: int = 2


@dataclass
class Expert(Policy):
    name: ClassVar[str] = "expert"
    uses_llm: ClassVar[bool] = False

    def formalize(self, spec: AttemptSpec) -> AgentTurn:
        from autonesy.tasks.reference import reference_formalization

        prompt = formalizer_prompt(spec.task, spec.format, self.style(spec), spec.detail)
        return AgentTurn("formalizer", prompt.messages(), text=reference_formalization(spec.task, spec.format))

    def repair(self, spec: AttemptSpec, source: str, error: str, round_number: int = 1) -> AgentTurn:
        return AgentTurn("repair", [], text="[[OK]]", verdict=RepairVerdict("ok", ""))


POLICIES: dict[str, type[Policy]] = {cls.name: cls for cls in (ZeroShot, ZeroShotCoT, OracleFeedback, Expert)}


def make_policy(name: str, backend: ChatBackend | None, **options: Any) -> Policy:
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose one of {', '.join(POLICIES)}")
    return POLICIES[name](backend=backend, **options)


def check_prompt_style(style: str) -> str:
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    return style
