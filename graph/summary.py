"""The outcome of one attempt as a typed record: what ``summary.json`` holds, ``run --json`` prints,
a sweep's results row is built from and a report reads back.

One record along the whole path (run → sweep row → report) means a field is named, typed and
defaulted in one place instead of being re-read with ``.get()`` at each step. The records are
pydantic models, so the same declaration gives the typed read, the JSON written and the JSON Schema
in ``docs/schemas/`` (``graph/schemas.py``). A summary read from disk is untrusted (run directories
travel): ``RunSummary.model_validate`` keeps each field that has its declared type (strictly: no
``"3"`` read as 3; an int is a float, as in JSON) and puts the field's default in place of any other
value, and a file that is not a JSON object at all is a :class:`SummaryError` (one line), never a
traceback.

The JSON on disk is the one written before these models existed (same keys, same order), plus
``schema_version`` last; a file without it is version 1, so older run directories read back unchanged.

An attempt's ``status`` is an :class:`Outcome` and ``failure`` a :class:`FailureKind` saying why it
was not accepted. ``accepted`` and ``rejected`` are the model's outcomes only; ``infra_failed`` is an
infrastructure failure that outlived its retries (refused connection, DNS, HTTP 401/403, 5xx or 429
to the end, the call's deadline): it is never scored nor counted in any model rate, and running the
same command again retries it. A summary written before ``failure`` existed reads with
``failure: None``, and one rejected because its LLM call failed (its reason starts "LLM error")
reads as it was written: ``rejected``, since which of its failures were outages is not recorded.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator
from pydantic_core import PydanticUseDefault

from autonesy.graph.rundir import SUMMARY_FILE, read_json
from autonesy.tools import safe_files
from autonesy.tools.big_integers import decimal_text
from autonesy.tools.errors import AutonesyError

SUMMARY_SCHEMA_VERSION: Final = 1  # the summary.json written before schema_version existed is version 1 too


class SummaryError(AutonesyError, ValueError):
    """A ``summary.json`` that is not a run's summary (damaged, or written by another program)."""


class Record(BaseModel):
    """A record read tolerantly from JSON: a field whose value does not have the declared type (or
    is missing) takes its default; every field is written back, in declaration order."""

    model_config = ConfigDict(strict=True, frozen=True)

    @classmethod
    def part_of(cls, record: BaseModel | None) -> Self | None:
        """This record's fields of ``record`` (the summary keeps part of what a node recorded)."""
        return None if record is None else cls.model_validate(record.model_dump())

    @field_validator("*", mode="wrap")
    @classmethod
    def _or_default(cls, value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticUseDefault() from None


class OracleVerdict(Record):
    """The oracle test of the accepted formula (``tasks/oracle_check.py``), as the summary keeps it."""

    passed: bool | None = None
    labels_checked: int | None = None
    labels_rejected: int | None = None
    probes_checked: int | None = None
    too_strict: int | None = None
    too_permissive: int | None = None


class OracleCounterexample(Record):
    """An assignment on which the formula and the oracle disagree (``tasks/oracle_check.Counterexample``)."""

    true_variables: list[str] = Field(default_factory=list)
    formula_says: bool = False
    oracle_says: bool = False
    source: str = ""  # label | oracle-valid | neighbour | formula-model


class OracleTest(OracleVerdict):
    """The whole oracle test as the attempt state and ``metrics.json`` keep it: the verdict, its
    counterexamples and the feedback the semantic-repair round is given."""

    counterexamples: list[OracleCounterexample] = Field(default_factory=list)
    feedback: str = ""


def _omitted_when_none() -> Any:
    """A field left out of the JSON while it is None (its key was absent when written)."""
    return Field(None, exclude_if=lambda value: value is None)


class Compilation(Record):
    """The accepted formula's SDD: its files, size and model count, or why it did not fit the budget."""

    ok: bool | None = _omitted_when_none()
    note: str | None = _omitted_when_none()
    sdd: str | None = _omitted_when_none()
    vtree: str | None = _omitted_when_none()
    size: int | None = _omitted_when_none()
    model_count: str | None = _omitted_when_none()  # as text: counts pass 2^53
    seconds: float | None = _omitted_when_none()


class FormulaScore(Record):
    """The accepted formula against the ground truth (``tools/metrics.py``); counts past 2^53 are text.
    A sweep's results row has one column per field (``graph/results.py``), described as here."""

    precision: float | None = Field(None, description="precision")
    recall: float | None = Field(None, description="recall")
    f1: float | None = Field(None, description="F1 vs the ground truth")
    relation: str | None = Field(None, description="equal | permissive | strict | incomparable")
    mc_ratio: float | None = Field(None, description="MC(formula) / max(MC(ground truth), 1)")
    tp: int | str | None = Field(None, description="MC(truth ∧ formula)")
    fp: int | str | None = Field(None, description="MC(¬truth ∧ formula)")
    fn: int | str | None = Field(None, description="MC(truth ∧ ¬formula)")
    tn: int | str | None = Field(None, description="MC(¬truth ∧ ¬formula)")
    count_method: str | None = Field(
        None, description="how the counts were obtained (enumeration | sdd | ganak | approxmc)"
    )
    exact: bool | None = Field(None, description="counts are exact (false only with approxmc)")


Count = int | str  # a model count; as text past 2^53 (JSON readers lose precision beyond it)


class FormulaMetrics(Record):
    """The whole score as the attempt state and ``metrics.json`` keep it (``tools/metrics.FormulaScore``
    with counts past 2^53 as text); the summary keeps its :class:`FormulaScore` part."""

    tp: Count | None = None  # None (with tn and the two counts): equivalence proved, the count unknown
    fp: Count | None = None
    fn: Count | None = None
    tn: Count | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    relation: str | None = None
    mc_ratio: float | None = None
    candidate_count: Count | None = None
    truth_count: Count | None = None
    exact: bool | None = None
    count_method: str | None = None
    counts: dict[str, dict[str, Any]] = Field(default_factory=dict)  # per count: method, seconds, ...


class UnscoredFormula(Record):
    """An accepted formula whose score is missing: a model count ran out of time."""

    count_method: Literal["timed out"] = "timed out"
    exact: bool = False
    note: str = ""


def _score_kind(value: Any) -> str:
    method = value.get("count_method") if isinstance(value, dict) else getattr(value, "count_method", None)
    return "unscored" if method == "timed out" else "scored"


# What the evaluate node records: the score, or why there is none (read back from a checkpoint by its count_method).
FormulaResult = Annotated[
    Annotated[FormulaMetrics, Tag("scored")] | Annotated[UnscoredFormula, Tag("unscored")],
    Discriminator(_score_kind),
]


class Training(Record):
    """NeSy predictors trained on the accepted formula and on the ground truth
    (``nesy/evaluate.train_and_evaluate``'s result; ``downstream.json``)."""

    task: str = ""
    num_vars: int = 0
    seeds: list[int] = Field(default_factory=list)
    methods: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    sizes: dict[str, int] = Field(default_factory=dict)
    ground_truth: dict[str, Any] = Field(default_factory=dict)  # its model count and SDD size
    formula: dict[str, Any] | None = None  # the formula's relation, scores, count and SDD size
    baseline: dict[str, Any] | None = None  # the backbone alone, per seed and summarised
    results: dict[str, Any] = Field(default_factory=dict)  # per method and target, per seed and summarised
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0


def json_safe(value: Any) -> Any:
    """Counts can exceed 64 bits (2^100 models); checkpoints and JSON readers want them as text. ``str`` refuses
    integers past 4,300 digits (a task of 60,000 variables has 2^60,000 assignments): written by ``decimal_text``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) >= 2**53:
        return decimal_text(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


class Outcome(enum.StrEnum):
    """How an attempt ended (``summary.json``'s and a results row's ``status``)."""

    ACCEPTED = "accepted"  # the formula parsed and passed the checks: not a claim that it is correct
    REJECTED = "rejected"  # the model gave no acceptable formula (see ``failure``)
    INFRA_FAILED = "infra_failed"  # the LLM endpoint failed past its retries: retried by the next run
    ERROR = "error"  # a crash of ours (or a request the endpoint refused as malformed)
    UNFINISHED = "unfinished"


class FailureKind(enum.StrEnum):
    """Why an attempt was not accepted (``failure``)."""

    # rejected: the model's doing
    SYNTAX = "syntax"  # no parseable formula within the repair budget
    TOKEN_BUDGET = "token_budget"  # the answers stopped at the token budget before the formula was complete
    EMPTY_ANSWER = "empty_answer"  # the model answered nothing (no content, no reasoning)
    REPEATED_ANSWER = "repeated_answer"  # the model repeated an answer already rejected
    OK_ON_ERROR = "ok_on_error"  # the repair agent answered [[OK]] on a formula the checker rejected
    # infra_failed: the endpoint's doing, retried by the next run of the same command
    CONNECTION = "connection"
    DNS = "dns"
    AUTH = "auth"
    SERVER_ERROR = "server_error"
    RATE_LIMIT = "rate_limit"
    DEADLINE = "deadline"
    # error: ours
    BAD_REQUEST = "bad_request"
    CONFIG = "config"
    CRASH = "crash"


MODEL_OUTCOMES = (Outcome.ACCEPTED, Outcome.REJECTED)  # the only attempts a model's rates count
SYNTAX_FAILURES = (FailureKind.SYNTAX, FailureKind.TOKEN_BUDGET, FailureKind.REPEATED_ANSWER, FailureKind.OK_ON_ERROR)


class RunSummary(Record):
    """One attempt's outcome (``summary.json``)."""

    run_dir: str = ""
    task: str = ""
    format: str = ""
    prompt: str = ""
    detail: str = ""
    policy: str = ""
    llm: str | None = None  # redacted spec; None for the expert policy
    decoding: str = "free"  # summaries written before constrained decoding existed were free
    status: Outcome = Field(default=Outcome.UNFINISHED, strict=False)  # read from its value ("accepted")
    failure: FailureKind | None = Field(default=None, strict=False)
    accepted: bool = False
    reason: str = ""
    repair_rounds: int = 0
    semantic_rounds: int = 0
    autofixes: list[str] = Field(default_factory=list)
    oracle_test: OracleVerdict | None = None
    compiled: Compilation | None = None
    metrics: FormulaScore | None = None
    score_seal: str | None = None  # this user's signature on metrics as the score of formula.cnf (graph/score_seal.py)
    training: dict[str, Any] | None = None  # nesy.evaluate's result, or {"skipped": why}
    llm_calls: int = 0
    cached_calls: int = 0  # answers the response cache gave (not in llm_calls or the token counts)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0
    # what the cached answers cost when they were made (the study's "would cost"; 0 in summaries written before)
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    cached_llm_seconds: float = 0.0
    schema_version: Literal[1] = SUMMARY_SCHEMA_VERSION  # any other value read back is this version's record

    @classmethod
    def read(cls, run_dir: Path) -> RunSummary | None:
        """The summary in ``run_dir``; None when there is none yet (the attempt has not finished)."""
        path = Path(run_dir) / SUMMARY_FILE
        if safe_files.entry_stat(path) is None:
            return None
        data = read_json(path)  # a link, a FIFO or a folder in its place is refused: not a summary
        if not isinstance(data, dict):
            raise SummaryError(f"{path} is not a run summary (damaged, or from another program)")
        return cls.model_validate(data)

    @property
    def syntax_error(self) -> bool:
        """Rejected because no parseable formula was reached (the report's syntax-error rate); a
        summary written before ``failure`` existed counts when rejected at all."""
        return self.status == Outcome.REJECTED and (self.failure is None or self.failure in SYNTAX_FAILURES)


__all__ = [
    "MODEL_OUTCOMES",
    "SUMMARY_SCHEMA_VERSION",
    "SYNTAX_FAILURES",
    "Compilation",
    "Count",
    "FailureKind",
    "FormulaMetrics",
    "FormulaResult",
    "FormulaScore",
    "OracleCounterexample",
    "OracleTest",
    "OracleVerdict",
    "Outcome",
    "Record",
    "RunSummary",
    "SummaryError",
    "Training",
    "UnscoredFormula",
    "json_safe",
]
