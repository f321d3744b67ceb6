"""The outcome of one verification as a typed record: what a verification's ``summary.json`` holds
and ``verify``/``follow --json`` print.

The JSON is the one written before this record existed (same keys, same order); the five ``follow``
fields are left out of a plain verification, as they were. Its JSON Schema is in ``docs/schemas/``
(``graph/schemas.py``).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from autonesy.tools.verify.results import ConstraintResult, Decision

VERDICTS = ("sat", "unsat", "unknown")
SUMMARY_SCHEMA_VERSION: Final = 1


def _follow_only() -> Any:
    """A field of the feedback loop (``follow``), left out of a plain verification's JSON."""
    return Field(None, exclude_if=lambda value: value is None)


class VerificationSummary(BaseModel):
    """One verification (or feedback loop): verdict, per-constraint results and evidence, usage."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_dir: str | None
    verifier: str
    llms: dict[str, str]  # role → the backend's label (never a key)
    verdict: Literal["sat", "unsat", "unknown"] | None  # None when the verification did not finish
    status: str  # a verdict, or contradictory | error | unfinished
    reason: str = ""
    formula: str | None = None
    constraints: list[dict[str, Any]] = Field(default_factory=list)  # each with its kind, method and value
    decision: Decision | None = None  # the solver's, a whole-instruction judge's, or the contradiction found
    explanation: str = ""
    results: dict[str, ConstraintResult] = Field(default_factory=dict)  # per constraint: its value and evidence
    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_without_usage: int = 0  # answered calls whose server reported no token counts
    cached_tokens: int = 0  # tokens of the cached answers, as reported when first answered
    failed_requests: int = 0  # requests that got no answer
    llm_seconds: float = 0.0
    checker_runs: int = 0
    checker_seconds: float = 0.0
    wall_seconds: float = 0.0
    rounds: int | None = _follow_only()
    budget: int | None = _follow_only()
    feedback: str | None = _follow_only()
    history: list[dict[str, Any]] | None = _follow_only()  # each round's verdict
    output: str | None = _follow_only()  # the last response written
    schema_version: Literal[1] = SUMMARY_SCHEMA_VERSION  # any other value read back is this version's record


__all__ = ["SUMMARY_SCHEMA_VERSION", "VERDICTS", "VerificationSummary"]
