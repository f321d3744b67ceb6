"""The typed summary record along run → sweep row → report: the same JSON on disk as before, a
tolerant typed read of whatever a run directory holds, and one error line for a file that is not a
summary at all."""

from __future__ import annotations

import dataclasses
import json
import types
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.graph.report import ReportError, load_results
from autonesy.graph.results import attempt_row, finished
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.summary import Compilation, FormulaScore, OracleVerdict, RunSummary, SummaryError

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
FIELDS = [f.name for f in dataclasses.fields(RunSummary)]


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
    return type(value) is hint


@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=6), JSON, max_size=12))
def test_any_json_object_reads_as_a_typed_record(data):
    summary = RunSummary.from_dict(data)
    hints = typing.get_type_hints(RunSummary)
    for name in FIELDS:
        value = getattr(summary, name)
        if isinstance(value, (OracleVerdict, Compilation, FormulaScore)):
            nested = typing.get_type_hints(type(value))
            assert all(_has_type(getattr(value, f.name), nested[f.name]) for f in dataclasses.fields(value))
        else:
            assert _has_type(value, hints[name]), (name, value)
        if name in data and name not in ("oracle_test", "compiled", "metrics") and _has_type(data[name], hints[name]):
            assert value == data[name]  # a well-typed value is kept as it is
    json.dumps(summary.to_dict())  # and it writes back as JSON


def _run(tmp_path, **options):
    return run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert", **options), tmp_path)


def test_the_summary_on_disk_reads_back_to_the_same_json(tmp_path):
    summary = _run(tmp_path / "run")
    text = (tmp_path / "run" / "summary.json").read_text()
    on_disk = json.loads(text)
    assert list(on_disk) == FIELDS  # the keys (and their order) of the summary written before this record
    again = RunSummary.read(tmp_path / "run")
    assert again == summary and json.dumps(again.to_dict(), indent=2) == text
    assert summary["status"] == summary.status == "accepted"  # the JSON view and the record agree
    assert summary.metrics.f1 == 1.0 and summary.compiled.ok and summary.oracle_test.passed


def test_the_printed_summary_shows_a_tiny_f1_and_the_circuit_s_model_count(tmp_path, capsys):
    """A permissive formula's F1 is small, not zero: it must not print as 0.0000; a circuit of size
    0 is a constant, and its model count says which."""
    from autonesy.graph.cli.run import print_summary

    summary = _run(tmp_path / "run").to_dict()
    count = int(summary["compiled"]["model_count"])
    summary["metrics"] = {**summary["metrics"], "f1": 2.1934e-05, "precision": 1.0967e-05}
    print_summary(summary)
    out = capsys.readouterr().out
    assert "F1 2.19e-05 (precision 1.10e-05, recall 1.0000)" in out
    assert f"SDD size {summary['compiled']['size']}, {count:,} models over the task variables" in out


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
    rows, _ = load_results([tmp_path / "runs"])  # the damaged run is left out; the good one is read
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
