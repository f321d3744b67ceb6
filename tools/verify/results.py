"""A verification's results as typed records: each constraint's result and the decision, made by the
verifier node that obtained them, read by the explanation, the summary (``summary.json``'s ``results``
and ``decision``) and the VifBench rows.

How the value was obtained decides what evidence comes with it (``method`` tells the records apart):
generated code (its program, the spans it named, the reflections and failures before it ran), a user
checker (its name and arguments), or the judge (its reasoning; ``judge_fallback`` when a logic
constraint's checker kept failing, with those failures and the last program). The decision is the
solver's (:func:`solver.decide`), a whole-instruction judge's, or the contradiction that stopped the
verification. The JSON of each record is the dict the verifier wrote before these records existed:
same keys, same order.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import MISSING, BaseModel, ConfigDict, Field


class CheckerFailure(BaseModel):
    """Why a checker gave no value: its error kind, the message the checking agent is shown, the line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    error_kind: str | None  # a sandbox error kind, no_code, self_test, ...
    message: str
    line: int | None | MISSING = MISSING  # the program's line (None: it has none); not written when not given


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    summary: str
    kind: str  # logic | semantic: how the formulation tagged the constraint


class CheckerResult(_Result):
    """Decided by the generated program: its value, the program, the spans it named."""

    method: Literal["checker"] = "checker"
    value: bool | None
    code: str
    spans: list[str] = Field(default_factory=list)
    reflections: int = 0
    failures: list[CheckerFailure] = Field(default_factory=list)
    self_tested: bool = False


class UserCheckerResult(_Result):
    """Decided by a user checker (``--checkers``) called with the arguments the checking agent chose."""

    method: Literal["user_checker"] = "user_checker"
    value: bool | None
    checker: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class JudgeResult(_Result):
    """Decided by the LLM judge; ``judge_fallback`` for a logic constraint whose checker kept failing."""

    method: Literal["judge", "judge_fallback"]
    value: bool | None
    reasoning: str = ""
    failures: list[CheckerFailure] = Field(default_factory=list)
    code: str | None = Field(None, exclude_if=lambda code: code is None)  # the fallback's last program


class Assignment(BaseModel):
    """A constraint and its value (``violated``: False = does not hold, True = holds but must not)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    value: bool


class Correction(BaseModel):
    """A constraint and the value it should take: one step of a smallest correction."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    should_be: bool


class Alternative(BaseModel):
    """A false XOR / IFF requirement: changing any one of its constraints is enough."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    requirement: str
    op: Literal["xor", "iff"]
    ids: list[str]


class SolverDecision(BaseModel):
    """The solver's verdict with the constraint values it used and a minimal core of results that force it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["sat", "unsat", "unknown"]
    values: dict[str, bool | None]
    core: list[str] = Field(default_factory=list)  # a minimal set of results forcing the verdict
    violated: list[Assignment] = Field(default_factory=list)
    conditions: list[Assignment] = Field(default_factory=list)  # results that made the violated ones required
    falsified_parts: list[str] = Field(default_factory=list)  # the top-level requirements that are false, as text
    to_fix: list[Correction] = Field(default_factory=list)  # a smallest correction
    undetermined: list[str] = Field(default_factory=list)  # constraints with no result
    formula: str = ""
    seconds: float = 0.0
    core_unique: bool = False  # the core is the only minimal reason (every minimal reason contains all of it)
    alternatives: list[Alternative] = Field(default_factory=list)


class JudgeDecision(BaseModel):
    """A whole-instruction judge's verdict (the baselines: no formulation, no code)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["sat", "unsat", "unknown"]
    reasoning: str


class Contradiction(BaseModel):
    """An instruction no response can follow: the requirements that cannot hold together."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["contradictory"] = "contradictory"
    conflict: list[str]


Decision = SolverDecision | JudgeDecision | Contradiction  # what a verification decided, by who decided it


ConstraintResult = Annotated[CheckerResult | UserCheckerResult | JudgeResult, Field(discriminator="method")]


__all__ = [
    "Alternative",
    "Assignment",
    "CheckerFailure",
    "CheckerResult",
    "ConstraintResult",
    "Contradiction",
    "Correction",
    "Decision",
    "JudgeDecision",
    "JudgeResult",
    "SolverDecision",
    "UserCheckerResult",
]
