"""The outcome of one attempt as a typed record: what ``summary.json`` holds, ``run --json`` prints,
a sweep's results row is built from and a report reads back.

One record along the whole path (run → sweep row → report) means a field is named, typed and
defaulted in one place instead of being re-read with ``.get()`` at each step. A summary read from
disk is untrusted (run directories travel): :meth:`RunSummary.from_dict` keeps each field that has
its declared type and puts the field's default in place of any other value, and a file that is not
a JSON object at all is a :class:`SummaryError` (one line), never a traceback.

The JSON on disk is the one written before this record existed (same keys, same order), so older
run directories read back unchanged.

An attempt's ``status`` is an :class:`Outcome` and ``failure`` a :class:`FailureKind` saying why it
was not accepted. ``accepted`` and ``rejected`` are the model's outcomes only; ``infra_failed`` is an
infrastructure failure that outlived its retries (refused connection, DNS, HTTP 401/403, 5xx or 429
to the end, the call's deadline): it is never scored nor counted in any model rate, and running the
same command again retries it. A summary written before ``failure`` existed reads with
``failure: None``, and one rejected because its LLM call failed (its reason starts "LLM error")
reads as it was written: ``rejected``, since which of its failures were outages is not recorded.
"""

from __future__ import annotations

import dataclasses
import enum
import types
from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

from autonesy.graph.rundir import SUMMARY_FILE, read_json
from autonesy.tools import safe_files
from autonesy.tools.errors import AutonesyError


class SummaryError(AutonesyError, ValueError):
    """A ``summary.json`` that is not a run's summary (damaged, or written by another program)."""


def _fits(value: Any, hint: Any) -> tuple[bool, Any]:
    """Whether ``value`` (from JSON) has the type ``hint``, and the value as that type."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        for option in get_args(hint):
            fits, typed = _fits(value, option)
            if fits:
                return True, typed
        return False, None
    if hint is Any:
        return True, value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return True, hint(value)
        except ValueError:
            return False, None
    if hint is type(None):
        return value is None, None
    if hint in (bool, str):
        return type(value) is hint, value
    if hint is int:
        return type(value) is int, value
    if hint is float:  # an int is a float in JSON; NumPy's floats are floats
        ok = isinstance(value, float) or type(value) is int
        return ok, float(value) if ok else None
    if origin is list:
        (item,) = get_args(hint)
        if not isinstance(value, list):
            return False, None
        checked = [_fits(v, item) for v in value]
        return all(ok for ok, _ in checked), [v for _, v in checked]
    if origin is dict:
        return isinstance(value, dict) and all(isinstance(k, str) for k in value), value
    if isinstance(hint, type) and issubclass(hint, _Record):
        return isinstance(value, dict), hint.from_dict(value) if isinstance(value, dict) else None
    raise TypeError(f"no JSON reading for {hint!r}")  # a field declared with a type this module cannot read


class _Record:
    """A frozen dataclass read tolerantly from JSON and written back as the same JSON."""

    OMIT_NONE: ClassVar[bool] = False  # leave out fields that are None (the key was absent when written)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Any:
        """The record from a JSON object: a field of the wrong type (or missing) takes its default."""
        hints = get_type_hints(cls)
        values = {}
        for spec in dataclasses.fields(cls):  # type: ignore[arg-type]
            if spec.name in data:
                fits, typed = _fits(data[spec.name], hints[spec.name])
                if fits:
                    values[spec.name] = typed
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in declaration order."""
        out: dict[str, Any] = {}
        for spec in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, spec.name)
            if value is None and self.OMIT_NONE:
                continue
            out[spec.name] = value.to_dict() if isinstance(value, _Record) else value
        return out


@dataclasses.dataclass(frozen=True)
class OracleVerdict(_Record):
    """The oracle test of the accepted formula (``tasks/oracle_test.py``), as the summary keeps it."""

    passed: bool | None = None
    labels_checked: int | None = None
    labels_rejected: int | None = None
    probes_checked: int | None = None
    too_strict: int | None = None
    too_permissive: int | None = None


@dataclasses.dataclass(frozen=True)
class Compilation(_Record):
    """The accepted formula's SDD: its files, size and model count, or why it did not fit the budget."""

    OMIT_NONE: ClassVar[bool] = True

    ok: bool | None = None
    note: str | None = None
    sdd: str | None = None
    vtree: str | None = None
    size: int | None = None
    model_count: str | None = None  # as text: counts pass 2^53
    seconds: float | None = None


@dataclasses.dataclass(frozen=True)
class FormulaScore(_Record):
    """The accepted formula against the ground truth (``tools/metrics.py``); counts past 2^53 are text."""

    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    relation: str | None = None
    mc_ratio: float | None = None
    tp: int | str | None = None
    fp: int | str | None = None
    fn: int | str | None = None
    tn: int | str | None = None
    count_method: str | None = None
    exact: bool | None = None


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


@dataclasses.dataclass(frozen=True)
class RunSummary(_Record, Mapping[str, Any]):
    """One attempt's outcome (``summary.json``). It also reads as a mapping of its JSON form, so code
    written against the JSON (``summary["status"]``) keeps working."""

    run_dir: str = ""
    task: str = ""
    format: str = ""
    prompt: str = ""
    detail: str = ""
    policy: str = ""
    llm: str | None = None  # redacted spec; None for the expert policy
    decoding: str = "free"  # summaries written before constrained decoding existed were free
    status: Outcome = Outcome.UNFINISHED
    failure: FailureKind | None = None
    accepted: bool = False
    reason: str = ""
    repair_rounds: int = 0
    semantic_rounds: int = 0
    autofixes: list[str] = dataclasses.field(default_factory=list)
    oracle_test: OracleVerdict | None = None
    compiled: Compilation | None = None
    metrics: FormulaScore | None = None
    training: dict[str, Any] | None = None  # nesy.evaluate's result, or {"skipped": why}
    llm_calls: int = 0
    cached_calls: int = 0  # answers the response cache gave (not in llm_calls or the token counts)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0

    @classmethod
    def read(cls, run_dir: Path) -> RunSummary | None:
        """The summary in ``run_dir``; None when there is none yet (the attempt has not finished)."""
        path = Path(run_dir) / SUMMARY_FILE
        if safe_files.entry_stat(path) is None:
            return None
        data = read_json(path)  # a link, a FIFO or a folder in its place is refused: not a summary
        if not isinstance(data, dict):
            raise SummaryError(f"{path} is not a run summary (damaged, or from another program)")
        return cls.from_dict(data)

    @property
    def syntax_error(self) -> bool:
        """Rejected because no parseable formula was reached (the report's syntax-error rate); a
        summary written before ``failure`` existed counts when rejected at all."""
        return self.status == Outcome.REJECTED and (self.failure is None or self.failure in SYNTAX_FAILURES)

    @cached_property
    def _json(self) -> dict[str, Any]:
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._json[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._json)

    def __len__(self) -> int:
        return len(self._json)


__all__ = [
    "MODEL_OUTCOMES",
    "SYNTAX_FAILURES",
    "Compilation",
    "FailureKind",
    "FormulaScore",
    "OracleVerdict",
    "Outcome",
    "RunSummary",
    "SummaryError",
]
