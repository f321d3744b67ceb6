"""The typed summary record along run → sweep row → report: the same JSON on disk as before, a
tolerant typed read of whatever a run directory holds, and one error line for a file that is not a
summary at all."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from pathlib import Path
from typing import Any, ClassVar, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.graph.report import ReportError, load_results
from autonesy.graph.results import attempt_row, finished
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.summary import (
    SUMMARY_SCHEMA_VERSION,
    Compilation,
    FailureKind,
    FormulaScore,
    OracleVerdict,
    Outcome,
    RunSummary,
    SummaryError,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELDS = list(RunSummary.model_fields)
WRITTEN_BEFORE = FIELDS[: FIELDS.index("schema_version")]  # the keys of summary.json before schema_version
FIXTURES = sorted((Path(__file__).parent / "summaries").glob("*.json"))  # written by the dataclass record


# The reader the models replaced (graph/summary.py before pydantic), kept as the oracle of the
# differential test: what it made of any JSON object, the models must make too.
def _fits(value: Any, hint: Any) -> tuple[bool, Any]:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(hint):
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
    if hint is float:
        ok = isinstance(value, float) or type(value) is int
        return ok, float(value) if ok else None
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            return False, None
        checked = [_fits(v, item) for v in value]
        return all(ok for ok, _ in checked), [v for _, v in checked]
    if origin is dict:
        return isinstance(value, dict) and all(isinstance(k, str) for k in value), value
    if isinstance(hint, type) and issubclass(hint, _OldRecord):
        return isinstance(value, dict), hint.from_dict(value) if isinstance(value, dict) else None
    raise TypeError(f"no JSON reading for {hint!r}")


class _OldRecord:
    OMIT_NONE: ClassVar[bool] = False

    @classmethod
    def from_dict(cls, data):
        hints = typing.get_type_hints(cls)
        values = {}
        for spec in dataclasses.fields(cls):
            if spec.name in data:
                fits, typed = _fits(data[spec.name], hints[spec.name])
                if fits:
                    values[spec.name] = typed
        return cls(**values)

    def to_dict(self):
        out = {}
        for spec in dataclasses.fields(self):
            value = getattr(self, spec.name)
            if value is None and self.OMIT_NONE:
                continue
            out[spec.name] = value.to_dict() if isinstance(value, _OldRecord) else value
        return out


@dataclasses.dataclass(frozen=True)
class _OldVerdict(_OldRecord):
    passed: bool | None = None
    labels_checked: int | None = None
    labels_rejected: int | None = None
    probes_checked: int | None = None
    too_strict: int | None = None
    too_permissive: int | None = None


@dataclasses.dataclass(frozen=True)
class _OldCompilation(_OldRecord):
    OMIT_NONE: ClassVar[bool] = True
    ok: bool | None = None
    note: str | None = None
    sdd: str | None = None
    vtree: str | None = None
    size: int | None = None
    model_count: str | None = None
    seconds: float | None = None


@dataclasses.dataclass(frozen=True)
class _OldScore(_OldRecord):
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


@dataclasses.dataclass(frozen=True)
class _OldSummary(_OldRecord):
    run_dir: str = ""
    task: str = ""
    format: str = ""
    prompt: str = ""
    detail: str = ""
    policy: str = ""
    llm: str | None = None
    decoding: str = "free"
    status: Outcome = Outcome.UNFINISHED
    failure: FailureKind | None = None
    accepted: bool = False
    reason: str = ""
    repair_rounds: int = 0
    semantic_rounds: int = 0
    autofixes: list[str] = dataclasses.field(default_factory=list)
    oracle_test: _OldVerdict | None = None
    compiled: _OldCompilation | None = None
    metrics: _OldScore | None = None
    training: dict[str, Any] | None = None
    llm_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_seconds: float = 0.0


def _well_typed(record: type[_OldRecord]) -> st.SearchStrategy[dict]:
    """Objects whose fields have their declared type, some of them wrong, and unknown keys."""
    hints = typing.get_type_hints(record)
    right = {
        bool: st.booleans(),
        int: st.integers(),
        float: st.floats(allow_nan=False) | st.integers(),
        str: st.text(max_size=8),
        type(None): st.none(),
        Outcome: st.sampled_from(list(Outcome)).map(str),
        FailureKind: st.sampled_from(list(FailureKind)).map(str),
        _OldVerdict: st.deferred(lambda: _well_typed(_OldVerdict)),
        _OldCompilation: st.deferred(lambda: _well_typed(_OldCompilation)),
        _OldScore: st.deferred(lambda: _well_typed(_OldScore)),
    }

    def value(hint):
        if typing.get_origin(hint) in (Union, types.UnionType):
            return st.one_of([value(option) for option in typing.get_args(hint)])
        if typing.get_origin(hint) is list:
            return st.lists(st.text(max_size=4) | JSON, max_size=3)
        if typing.get_origin(hint) is dict:
            return st.dictionaries(st.text(max_size=4), JSON, max_size=3)
        return right[hint]

    fields = {name: value(hint) | JSON for name, hint in hints.items() if name != "OMIT_NONE"}
    return st.fixed_dictionaries({}, optional={**fields, "extra": JSON})


# fields a summary has gained since the pydantic models replaced the dataclass reader (read back at their
# defaults from summaries written before)
ADDED_AFTER_THE_MODELS = ("score_seal", "cached_prompt_tokens", "cached_completion_tokens", "cached_llm_seconds")


@settings(max_examples=300, deadline=None)
@given(
    data=_well_typed(_OldSummary) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), JSON, max_size=12)
)
def test_any_json_object_reads_as_the_dataclass_reader_read_it(data):
    """Differential: the pydantic models against the reader they replaced, on objects whose fields
    are mostly well typed (nested records included) and on arbitrary JSON."""
    new = RunSummary.model_validate(data).model_dump()
    assert new.pop("schema_version") == SUMMARY_SCHEMA_VERSION
    for name in ADDED_AFTER_THE_MODELS:  # absent from the old reader: read from data or at their default
        assert new.pop(name) == RunSummary.model_validate({name: data.get(name)}).model_dump()[name]
    old = _OldSummary.from_dict(data).to_dict()
    assert new == old
    assert json.dumps(new, indent=2) == json.dumps(old, indent=2)  # the same bytes on disk


@pytest.mark.parametrize(
    "old, new", [(_OldVerdict, OracleVerdict), (_OldCompilation, Compilation), (_OldScore, FormulaScore)]
)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_each_nested_record_reads_as_the_dataclass_reader_read_it(old, new, data):
    value = data.draw(_well_typed(old))
    assert new.model_validate(value).model_dump() == old.from_dict(value).to_dict()


def _has_type(value, hint) -> bool:
    """An independent reading of the declared type (not the module's own)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_has_type(value, option) for option in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is typing.Any:
        return True
    if hint is float:
        return type(value) is float
    if typing.get_origin(hint) is list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if typing.get_origin(hint) is dict:
        return isinstance(value, dict)
    if typing.get_origin(hint) is typing.Literal:
        return any(type(value) is type(option) and value == option for option in typing.get_args(hint))
    return type(value) is hint


@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), JSON, max_size=12))
def test_any_json_object_reads_as_a_typed_record(data):
    summary = RunSummary.model_validate(data)
    for name, field in RunSummary.model_fields.items():
        value = getattr(summary, name)
        if isinstance(value, (OracleVerdict, Compilation, FormulaScore)):
            nested = type(value).model_fields
            assert all(_has_type(getattr(value, f), nested[f].annotation) for f in nested)
        else:
            assert _has_type(value, field.annotation), (name, value)
        if (
            name in data
            and name not in ("oracle_test", "compiled", "metrics")
            and _has_type(data[name], field.annotation)
        ):
            assert value == data[name]  # a well-typed value is kept as it is
    json.dumps(summary.model_dump())  # and it writes back as JSON


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_a_summary_written_before_the_models_reads_back_to_the_same_bytes(path, tmp_path):
    text = path.read_text()
    summary = RunSummary.model_validate(json.loads(text))
    assert summary.status == json.loads(text)["status"] and summary.run_dir.startswith("runs/")
    written = summary.model_dump()
    assert all(written.pop(name) == RunSummary.model_fields[name].default for name in ADDED_AFTER_THE_MODELS)
    assert list(written) == [*json.loads(text), "schema_version"] and written.pop("schema_version") == 1
    assert json.dumps(written, indent=2) == text  # the keys, their order and every value as they were
    (tmp_path / "summary.json").write_text(json.dumps(summary.model_dump(), indent=2))
    assert RunSummary.read(tmp_path) == summary


def test_there_are_summaries_written_before_the_models():
    assert {p.stem for p in FIXTURES} == {"accepted-expert", "rejected-syntax", "infra-failed"}


def test_the_schema_version_is_read_and_defaults_to_one():
    assert RunSummary.model_validate({}).schema_version == 1
    assert RunSummary.model_validate({"schema_version": 7}).schema_version == 1  # read back as this version writes it
    assert RunSummary.model_validate({"schema_version": "2"}).schema_version == 1  # not an int: the default


def _run(tmp_path, **options):
    return run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert", **options), tmp_path)


def test_the_summary_on_disk_reads_back_to_the_same_json(tmp_path):
    summary = _run(tmp_path / "run")
    text = (tmp_path / "run" / "summary.json").read_text()
    on_disk = json.loads(text)
    assert list(on_disk) == [*WRITTEN_BEFORE, "schema_version"]  # the keys (and order) written before, then the version
    again = RunSummary.read(tmp_path / "run")
    assert again == summary and json.dumps(again.model_dump(), indent=2) == text
    assert on_disk["status"] == summary.status == "accepted" and on_disk["schema_version"] == SUMMARY_SCHEMA_VERSION
    assert summary.metrics.f1 == 1.0 and summary.compiled.ok and summary.oracle_test.passed


def test_the_printed_summary_shows_a_tiny_f1_and_the_circuit_s_model_count(tmp_path, capsys):
    """A permissive formula's F1 is small, not zero: it must not print as 0.0000; a circuit of size
    0 is a constant, and its model count says which."""
    from autonesy.graph.cli.run import print_summary

    summary = _run(tmp_path / "run")
    count = int(summary.compiled.model_count)
    metrics = summary.metrics.model_copy(update={"f1": 2.1934e-05, "precision": 1.0967e-05})
    print_summary(summary.model_copy(update={"metrics": metrics}))
    out = capsys.readouterr().out
    assert "F1 2.19e-05 (precision 1.10e-05, recall 1.0000)" in out
    assert f"SDD size {summary.compiled.size}, {count:,} models over the task variables" in out


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**30000))
def test_a_model_count_is_written_exactly_while_python_can_and_as_a_power_of_ten_after(count):
    import sys

    from autonesy.graph.cli.common import count_text

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # the test writes every count; the code must not need to
    try:
        decimal = str(count)
        grouped = f"{count:,}"
    finally:
        sys.set_int_max_str_digits(old)
    for shown in (count_text(count), count_text(decimal)):
        if count.bit_length() <= 12000:  # exact up to 12,000 bits (3,613 digits), under the 4,300-digit limit
            assert shown == grouped
        else:
            exponent = int(shown.removeprefix("about 10^"))
            assert abs(exponent - (len(decimal) - 1)) <= 1


@pytest.mark.parametrize("recorded", ["abc", "-5", "1e9", "٣", "", None, True, 3.5, [1]])
def test_a_recorded_model_count_that_is_not_digits_is_shown_as_unknown(recorded):
    from autonesy.graph.cli.common import count_text

    assert count_text(recorded) == "unknown"


def test_an_old_summary_without_decoding_reads_as_free(tmp_path):
    _run(tmp_path / "run")
    path = tmp_path / "run" / "summary.json"
    data = json.loads(path.read_text())
    del data["decoding"]
    path.write_text(json.dumps(data))
    assert RunSummary.read(tmp_path / "run").decoding == "free"


@pytest.mark.parametrize("content", ["[1, 2]", "not json", '"text"', "null", "{" * 5000])
def test_a_summary_that_is_not_an_object_is_one_error_line_everywhere(tmp_path, content):
    run_dir = tmp_path / "runs" / "a"
    _run(run_dir)
    (run_dir / "summary.json").write_text(content)
    with pytest.raises(SummaryError) as refused:
        RunSummary.read(run_dir)
    assert "\n" not in str(refused.value)
    job = {
        "attempt_id": "a",
        "config": {"task": "fashion", "format": "dimacs", "prompt": "zs-cot", "detail": "detailed"}
        | {"policy": "expert", "max_repairs": 5},
        "llm": "expert",
    }
    row = attempt_row(tmp_path / "runs", job, run_dir)
    assert row["status"] == "error" and "not a run summary" in row["reason"]
    assert not finished(run_dir, None)  # rerun: the attempt resumes and writes its summary again
    _run(tmp_path / "runs" / "b")
    rows = load_results([tmp_path / "runs"]).rows  # the damaged run is left out; the good one is read
    assert [row["run_dir"] for row in rows] == [str(tmp_path / "runs" / "b")]


def test_hostile_field_values_become_defaults_in_the_row(tmp_path):
    run_dir = tmp_path / "run"
    _run(run_dir)
    path = run_dir / "summary.json"
    data = json.loads(path.read_text())
    data.update(autofixes="rm -rf", llm_calls="many", metrics=[1], oracle_test={"passed": "yes"}, status=7)
    path.write_text(json.dumps(data))
    job = {
        "attempt_id": "a",
        "config": {"task": "fashion", "format": "dimacs", "prompt": "zs-cot", "detail": "detailed"}
        | {"policy": "expert", "max_repairs": 5},
        "llm": "expert",
    }
    row = attempt_row(tmp_path, job, run_dir)
    assert row["autofixes"] == [] and row["llm_calls"] == 0 and row["status"] == "unfinished"
    assert row["f1"] is None and row["oracle_passed"] is None


@pytest.mark.parametrize(
    "job",
    [
        [1],
        {"attempt_id": "a"},
        {"attempt_id": "a", "llm": "expert", "config": "x"},
        {"attempt_id": "a", "llm": "expert", "config": {"task": "fashion", "format": ["x"]}},
        {"attempt_id": "a", "llm": 3, "config": {}},
    ],
)
def test_a_crafted_job_file_is_skipped_when_rows_are_collected(tmp_path, job):
    from autonesy.graph.results import collect_rows, write_results

    (tmp_path / "attempts" / "a").mkdir(parents=True)
    (tmp_path / "attempts" / "a" / "job.json").write_text(json.dumps(job))
    assert collect_rows(tmp_path) == [] and write_results(tmp_path) == []
    with pytest.raises(ReportError, match="no results found"):  # one line from the report too
        load_results([tmp_path])


@settings(max_examples=40, deadline=None)
@given(
    clauses=st.lists(
        st.lists(st.integers(1, 4).flatmap(lambda v: st.sampled_from([v, -v])), min_size=1, max_size=3), max_size=4
    ),
    truth=st.lists(
        st.lists(st.integers(1, 4).flatmap(lambda v: st.sampled_from([v, -v])), min_size=1, max_size=3), max_size=4
    ),
)
def test_the_summary_keeps_the_score_the_tools_computed(clauses, truth):
    """The boundary between the two score types: tools/metrics computes a dataclass, the evaluate node
    records it whole (``score_record``: what metrics.json writes, every field as computed) and the
    summary keeps its part of it; every field the summary keeps is the computed one."""
    from autonesy.graph.attempt import score_record
    from autonesy.tools.cnf import CNF
    from autonesy.tools.metrics import score_formula

    computed = score_formula(CNF(4, tuple(map(tuple, clauses))), CNF(4, tuple(map(tuple, truth))))
    recorded = score_record(computed)
    assert recorded.model_dump() == computed.to_dict()  # nothing lost or defaulted (small counts: no text)
    kept = FormulaScore.part_of(recorded)
    assert kept is not None
    assert kept.model_dump() == {name: getattr(computed, name) for name in FormulaScore.model_fields}


def test_a_count_past_two_to_the_53_is_kept_exactly_as_text():
    from autonesy.graph.attempt import score_record
    from autonesy.tools.metrics import FormulaScore as ComputedScore

    huge = 2**100 + 1
    computed = ComputedScore(
        tp=huge, fp=0, fn=0, tn=huge, precision=1.0, recall=1.0, f1=1.0, relation="equal", mc_ratio=1.0,
        candidate_count=huge, truth_count=huge, exact=True, count_method="sdd",
        counts={"candidate": {"count": huge, "method": "sdd"}},
    )  # fmt: skip
    recorded = score_record(computed)
    assert recorded.candidate_count == recorded.counts["candidate"]["count"] == str(huge)
    kept = FormulaScore.part_of(recorded)
    assert kept is not None and kept.tp == kept.tn == "1267650600228229401496703205377" and kept.fp == 0


@settings(max_examples=50, deadline=None)
@given(passed=st.booleans(), counts=st.lists(st.integers(0, 10**9), min_size=5, max_size=5))
def test_the_summary_keeps_the_oracle_verdict_the_task_layer_computed(passed, counts):
    """The same boundary for the oracle test: tasks/oracle_check's result, as the attempt graph carries
    it (with its feedback text), reads back into the summary's verdict field for field."""
    from autonesy.graph.attempt import oracle_record
    from autonesy.tasks.oracle_check import Counterexample, OracleTestResult

    computed = OracleTestResult(passed, *counts, counterexamples=[Counterexample(("a", "b"), True, False, "label")])
    recorded = oracle_record(computed)
    assert recorded.model_dump() == {
        **computed.to_dict(),
        "counterexamples": [
            {"true_variables": ["a", "b"], "formula_says": True, "oracle_says": False, "source": "label"}
        ],
        "feedback": computed.feedback(),
    }
    kept = OracleVerdict.part_of(recorded)
    assert kept is not None
    assert kept.model_dump() == {name: getattr(computed, name) for name in OracleVerdict.model_fields}
