"""The documented on-disk formats: docs/schemas/ equals what the models generate, and the results rows
the row builder writes, in every state an attempt can be in, are what the row model declares."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autonesy.graph.results import ROW_FIELDS, ResultsRow, attempt_row, summary_fields
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.schemas import SCHEMAS, schema_text, write_schemas
from autonesy.graph.summary import FormulaScore, RunSummary
from autonesy.graph.verify.summary import VerificationSummary
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM the scripted backends stand for

DOCS = Path(__file__).parents[2] / "docs" / "schemas"
SUMMARIES = Path(__file__).parent / "summaries"
JOB = {
    "attempt_id": "a",
    "config": {"task": "fashion", "format": "dimacs", "prompt": "zs-cot", "detail": "detailed"}
    | {"policy": "expert", "max_repairs": 5},
    "llm": "expert",
}


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_the_checked_in_schema_is_the_one_the_models_generate(name):
    """A field added, removed or retyped without regenerating docs/schemas fails here
    (``python -m autonesy.graph.schemas docs/schemas``)."""
    assert (DOCS / name).read_text(encoding="utf-8") == schema_text(SCHEMAS[name])


def test_the_schemas_say_what_is_written(tmp_path):
    write_schemas(tmp_path)
    summary = json.loads((tmp_path / "run-summary.schema.json").read_text())
    row = json.loads((tmp_path / "results-row.schema.json").read_text())
    written = json.loads((SUMMARIES / "accepted-expert.json").read_text())
    added = {
        "score_seal",
        "cached_prompt_tokens",
        "cached_completion_tokens",
        "cached_llm_seconds",
    }  # since the fixture was written
    assert set(written) | {"schema_version"} | added == set(summary["properties"])
    assert summary["properties"]["status"] == {"$ref": "#/$defs/Outcome", "default": "unfinished"}
    assert list(row["properties"]) == list(ROW_FIELDS) and row["additionalProperties"] is False
    assert "infra_failed" in row["properties"]["status"]["anyOf"][0]["enum"]


def _states(tmp_path) -> dict[str, Path]:
    """Run directories in each state a row can be built from."""
    dirs = {name: tmp_path / name for name in ("accepted", "pending", "unfinished", "error", "timeout", "na")}
    run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), dirs["accepted"])
    for name, text in {
        "unfinished": ("trace.jsonl", "{}\n"),
        "error": ("error.json", '{"error": "boom"}'),
        "timeout": ("timeout.json", '{"limit_s": 5, "seconds": 5.1}'),
        "na": ("not_applicable.json", '{"reason": "no NAT"}'),
    }.items():
        dirs[name].mkdir()
        (dirs[name] / text[0]).write_text(text[1])
    for fixture in SUMMARIES.glob("*.json"):
        dirs[fixture.stem] = tmp_path / fixture.stem
        dirs[fixture.stem].mkdir()
        shutil.copy(fixture, dirs[fixture.stem] / "summary.json")
    dirs["damaged"] = tmp_path / "damaged"
    dirs["damaged"].mkdir()
    (dirs["damaged"] / "summary.json").write_text("[1]")
    return dirs


def test_every_row_the_builder_writes_is_a_results_row(tmp_path):
    statuses = set()
    for run_dir in _states(tmp_path).values():
        row = attempt_row(tmp_path, JOB, run_dir)
        assert list(row) == list(ROW_FIELDS)
        ResultsRow.model_validate_json(json.dumps(row))  # strict, no extra keys
        statuses.add(row["status"])
    assert statuses == {
        "accepted",
        "rejected",
        "infra_failed",
        "pending",
        "unfinished",
        "error",
        "timeout",
        "not_applicable",
    }


def test_a_row_has_one_column_per_score_field_filled_from_the_summary():
    written = json.loads((SUMMARIES / "accepted-expert.json").read_text())
    fields = summary_fields(RunSummary.model_validate(written))
    assert set(FormulaScore.model_fields) <= set(ROW_FIELDS)
    assert {name: fields[name] for name in FormulaScore.model_fields} == written["metrics"]
    assert (
        fields["sdd_size"] == written["compiled"]["size"]
        and fields["oracle_passed"] is written["oracle_test"]["passed"]
    )


@pytest.mark.parametrize("name", ["verification-unsat", "verification-follow"])
def test_a_verification_summary_written_before_the_model_reads_back_to_the_same_bytes(name):
    """Written by the dict the model replaced (a plain verification, and a feedback loop with its five
    extra fields); the model writes the same keys in the same order, then schema_version."""
    text = (SUMMARIES / "verify" / f"{name}.json").read_text()
    written = VerificationSummary.model_validate(json.loads(text)).model_dump()
    assert list(written) == [*json.loads(text), "schema_version"] and written.pop("schema_version") == 1
    assert json.dumps(written, indent=2, default=str) == text


def test_a_verification_writes_what_it_wrote_before_the_model(tmp_path):
    """The same scripted verification as the fixture's: the same summary.json but for the run
    directory and the timings, plus schema_version."""
    from scripted_llm import INSTRUCTION, NO_LANTERN, ScriptedRoles

    from autonesy.graph.verify.run import VerifyConfig, verify_output

    verify_output(
        INSTRUCTION, NO_LANTERN, VerifyConfig(llm=SCRIPTED), tmp_path / "v", backend=ScriptedRoles().backend()
    )
    on_disk = json.loads((tmp_path / "v" / "summary.json").read_text())
    before = json.loads((SUMMARIES / "verify" / "verification-unsat.json").read_text())
    assert list(on_disk) == [*before, "schema_version"] and on_disk.pop("schema_version") == 1
    varying = ("run_dir", "wall_seconds", "llm_seconds", "checker_seconds")
    del on_disk["decision"]["seconds"], before["decision"]["seconds"]  # the solver's time
    assert {k: v for k, v in on_disk.items() if k not in varying} == {
        k: v for k, v in before.items() if k not in varying
    }
