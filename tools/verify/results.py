"""One constraint's result in a verification, as a typed record: made by the verifier node that
obtained it, read by the explanation, the summary (``summary.json``'s ``results``) and the VifBench rows.

How the value was obtained decides what evidence comes with it (``method`` tells the records apart):
generated code (its program, the spans it named, the reflections and failures before it ran), a user
checker (its name and arguments), or the judge (its reasoning; ``judge_fallback`` when a logic
constraint's checker kept failing, with those failures and the last program). The JSON of each record
is the dict the verifier wrote before these records existed: same keys, same order.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import MISSING, BaseModel, ConfigDict, Field, TypeAdapter


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


ConstraintResult = Annotated[CheckerResult | UserCheckerResult | JudgeResult, Field(discriminator="method")]
RESULTS = TypeAdapter(dict[str, ConstraintResult])  # per constraint id, as the verifier's state holds them


def constraint_results(data: Any) -> dict[str, CheckerResult | UserCheckerResult | JudgeResult]:
    """The per-constraint results from their JSON data (or records)."""
    return RESULTS.validate_python(data or {})


__all__ = [
    "RESULTS",
    "CheckerFailure",
    "CheckerResult",
    "ConstraintResult",
    "JudgeResult",
    "UserCheckerResult",
    "constraint_results",
]
