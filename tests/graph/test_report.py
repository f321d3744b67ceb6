"""`report`: the paper's tables from results rows (values checked by hand), the downstream table,
Markdown/LaTeX/CSV files, PNG plots, --compare-published, run directories, the CLI."""

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.report import ReportError, build_report
from autonesy.graph.results import ROW_FIELDS
from autonesy.graph.run import RunConfig, run_attempt

QWEN, GPT = "http://h:8000/v1@qwen3-8b", "openai:gpt-oss-120b"
runner = CliRunner()


def row(llm, fmt, detail, f1, *, status="accepted", relation="equal", rounds=0, empty=False, prompt="zs"):
    data = dict.fromkeys(ROW_FIELDS)
    rejected = status == "rejected"
    data.update(
        attempt_id=f"{llm}-{fmt}-{detail}-{prompt}",
        task="fashion",
        task_spec="fashion",
        benchmark="catalogue",
        num_vars=10,
        llm=llm,
        model=llm.rsplit("@", 1)[-1].split(":")[-1],
        format=fmt,
        prompt=prompt,
        detail=detail,
        policy=prompt,
        repeat=0,
        max_repairs=5,
        status=status,
        syntax_error=rejected and not empty,
        failure=("empty_answer" if empty else "syntax") if rejected else None,
        reason="the model gave no answer: empty"
        if empty
        else ("syntax error after 5 repair rounds: syntax" if rejected else ""),
        repair_rounds=rounds,
        semantic_rounds=0,
        autofixes=[],
        n_autofixes=0,
        llm_calls=1 + rounds,
        prompt_tokens=100,
        completion_tokens=50,
        llm_seconds=1.0,
        wall_seconds=2.0,
        f1=f1,
        relation=None if rejected else relation,
        run_dir="attempts/x",
    )
    return data


ROWS = [
    row(QWEN, "dimacs", "detailed", 1.0),
    row(QWEN, "dimacs", "not-detailed", 0.0, status="rejected", rounds=5),
    row(QWEN, "cpmpy", "detailed", 0.5, relation="strict", rounds=2),
    row(QWEN, "cpmpy", "not-detailed", 0.25, relation="incomparable"),
    row(GPT, "dimacs", "detailed", 1.0),
    row(GPT, "dimacs", "not-detailed", 0.8, relation="permissive"),
    row(GPT, "cpmpy", "detailed", 0.0, status="rejected", empty=True),
    row(GPT, "cpmpy", "not-detailed", 1.0),
    {**row(GPT, "nat", "detailed", None, status="error"), "f1": None},
    {**row(GPT, "nat", "not-detailed", None, status="pending"), "f1": None},
]
DOWNSTREAM = [
    {
        "task": "fashion",
        "method": "spl",
        "formula": "expert",
        "seed": 0,
        "f1": 0.9,
        "accuracy": 0.9,
        "consistency": 1.0,
    },
    {
        "task": "fashion",
        "method": "spl",
        "formula": "expert",
        "seed": 1,
        "f1": 0.8,
        "accuracy": 0.8,
        "consistency": 1.0,
    },
    {"task": "sushi", "method": "spl", "formula": "expert", "seed": 0, "f1": 0.7, "accuracy": 0.6, "consistency": 1.0},
    {
        "task": "fashion",
        "llm": QWEN,
        "method": "spl",
        "formula": "generated",
        "relation": "equal",
        "seed": 0,
        "f1": 0.85,
        "accuracy": 0.85,
        "consistency": 1.0,
    },
    {
        "task": "fashion",
        "llm": QWEN,
        "method": "spl",
        "formula": "generated",
        "relation": "equal",
        "seed": 1,
        "f1": 0.85,
        "accuracy": 0.85,
        "consistency": 1.0,
    },
    {
        "task": "sushi",
        "llm": QWEN,
        "method": "spl",
        "formula": "generated",
        "relation": "strict",
        "seed": 0,
        "f1": 0.5,
        "accuracy": 0.4,
        "consistency": 1.0,
    },
    {
        "task": "fashion",
        "method": "sl",
        "formula": "expert",
        "seed": 0,
        "f1": 0.75,
        "accuracy": 0.7,
        "consistency": 0.9,
    },
]


@pytest.fixture
def results_dir(tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (out / "attempts" / "x").mkdir(parents=True)
    (out / "attempts" / "x" / "downstream.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DOWNSTREAM))
    return out


def test_tables_hold_the_hand_computed_values(results_dir, tmp_path):
    report = build_report([results_dir], tmp_path / "r", compare_published=True, plots=False)
    assert report.counted == 8 and report.left_out == {"error": 1, "pending": 1}
    tables = {t.name: t for t in report.tables}
    assert set(tables) == {"by_setting", "syntax_errors_by_setting", "by_llm", "marginals", "downstream"}
    by_llm = {r["llm"]: r for r in tables["by_llm"].data}
    qwen, gpt = by_llm[QWEN], by_llm[GPT]
    assert qwen["llm"] == QWEN and gpt["llm"] == GPT
    # qwen: F1 1, 0, 0.5, 0.25 → mean 0.4375, population std sqrt(0.546875 / 4)
    assert qwen["f1_mean"] == 0.4375 and qwen["f1_std"] == pytest.approx((0.546875 / 4) ** 0.5)
    assert qwen["syntax_error_rate"] == 0.25 and qwen["empty_answer_rate"] == 0
    assert [qwen[f"share_{r}"] for r in ("equal", "permissive", "strict", "incomparable", "rejected")] == [
        0.25,
        0,
        0.25,
        0.25,
        0.25,
    ]
    assert qwen["repair_rounds_mean"] == 7 / 4 and qwen["tokens_mean"] == 150
    assert qwen["published_model"] == "qwen3-8b" and qwen["published_f1"] == 0.372
    assert gpt["f1_mean"] == pytest.approx(0.7) and gpt["syntax_error_rate"] == 0 and gpt["empty_answer_rate"] == 0.25
    assert (gpt["published_f1"], gpt["published_syntax_error_rate"]) == (0.786, 0.078)
    cell = {(r["format"], r["detail"], r["prompt"]): r for r in tables["by_setting"].data}
    assert cell[("cpmpy", "not-detailed", "zs")]["f1_mean"] == pytest.approx(0.625)
    assert cell[("cpmpy", "not-detailed", "zs")]["f1_std"] == pytest.approx(0.375)
    assert cell[("dimacs", "not-detailed", "zs")]["syntax_error_rate"] == 0.5
    assert cell[("all", "all", "all")]["f1_mean"] == pytest.approx((1 + 0 + 0.5 + 0.25 + 1 + 0.8 + 0 + 1) / 8)
    marginals = {(r["slice"], r["value"]): r for r in tables["marginals"].data}
    assert (
        marginals[("format", "dimacs")]["f1_mean"] == 1.0 and marginals[("format", "dimacs")]["published_f1"] == 0.364
    )
    assert marginals[("format", "cpmpy")]["f1_mean"] == 0.25 and marginals[("format", "cpmpy")]["attempts"] == 2
    assert marginals[("detail", "not-detailed")]["f1_mean"] == pytest.approx((0 + 0.25 + 0.8 + 1) / 4)
    assert (
        marginals[("prompt", "zs")]["f1_mean"] == pytest.approx(0.625)
        and marginals[("prompt", "zs")]["published_f1"] == 0.437
    )
    down = {(r["method"], r["formula"], r["relation"]): r for r in tables["downstream"].data}
    assert down[("spl", "expert", "—")]["f1_mean"] == pytest.approx(0.8) and down[("spl", "expert", "—")]["n"] == 3
    assert down[("spl", "generated", "all")]["delta_f1"] == pytest.approx(((0.85 - 0.85) + (0.5 - 0.7)) / 2)
    assert down[("spl", "generated", "strict")]["delta_f1"] == pytest.approx(-0.2)
    assert down[("spl", "generated", "equal")]["delta_f1"] == pytest.approx(0.0)
    assert down[("sl", "expert", "—")]["consistency_mean"] == 0.9


def test_files_in_three_formats_and_png_plots(results_dir, tmp_path):
    out = tmp_path / "r"
    report = build_report([results_dir], out)
    for name in ("by_setting", "syntax_errors_by_setting", "by_llm", "marginals", "downstream"):
        for suffix in ("md", "tex", "csv"):
            assert (out / f"{name}.{suffix}").stat().st_size > 0, (name, suffix)
    assert "| dimacs | 1.000 ± 0.000 | 0.400 ± 0.400 | 0.700 ± 0.412 |" in (out / "by_setting.md").read_text()
    latex = (out / "by_llm.tex").read_text()
    assert "\\begin{tabular}" in latex and "$\\pm$" in latex and "\\%" in latex
    records = list(csv.DictReader(io.StringIO((out / "by_llm.csv").read_text())))
    assert {r["llm"] for r in records} == {QWEN, GPT} and float(records[0]["f1_mean"]) in (0.4375, 0.7)
    names = sorted(p.name for p in report.plots)
    assert names == ["f1_by_format_model.png", "relations.png", "repair_rounds.png", "syntax_error_rate.png"]
    for path in report.plots:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_report_reads_plain_run_directories(tmp_path):
    run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), tmp_path / "runs" / "a")
    report = build_report([tmp_path / "runs"], tmp_path / "r", plots=False)
    [llm] = next(t for t in report.tables if t.name == "by_llm").data
    assert llm["attempts"] == 1 and llm["f1_mean"] == 1.0 and llm["llm"] == "expert"


def test_report_cli(results_dir, tmp_path):
    result = runner.invoke(
        app,
        [
            "report",
            str(results_dir),
            "--format",
            "latex",
            "--compare-published",
            "--out",
            str(tmp_path / "r"),
            "--no-plots",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "\\begin{tabular}" in result.output and "0.786" in result.output
    as_csv = runner.invoke(
        app, ["report", str(results_dir), "--format", "csv", "--out", str(tmp_path / "r2"), "--no-plots"]
    )
    assert as_csv.exit_code == 0 and "f1_mean" in as_csv.output
    missing = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and missing.output.startswith("error:") and len(missing.output.splitlines()) == 1
    bad = runner.invoke(app, ["report", str(results_dir), "--format", "html"])
    assert bad.exit_code == 1 and "unknown --format" in bad.output
    with pytest.raises(ReportError):
        build_report([])


def test_downstream_table_reads_training_results_next_to_attempts(tmp_path):
    # The shape nesy.evaluate.train_and_evaluate returns, saved as <run_dir>/downstream.json.
    def seeds(*f1):
        return {"per_seed": [{"f1": v, "accuracy": v, "consistency": 1.0} for v in f1]}

    for name, relation, generated in (("a", "strict", (0.5, 0.7)), ("b", "equal", (0.9, 0.8))):
        run_dir = tmp_path / "sweep" / "attempts" / name
        run_dir.mkdir(parents=True)
        (run_dir / "summary.json").write_text(
            json.dumps({"llm": QWEN, "format": "cpmpy", "prompt": "zs", "detail": "detailed"})
        )
        result = {
            "task": "fashion",
            "seeds": [0, 1],
            "formula": {"relation": relation},
            "results": {"spl": {"formula": seeds(*generated), "ground_truth": seeds(0.9, 0.8)}},
        }
        (run_dir / "downstream.json").write_text(json.dumps(result))
    report = build_report([tmp_path / "sweep"], tmp_path / "r", plots=False)
    [table] = report.tables
    rows = {(r["formula"], r["relation"]): r for r in table.data}
    assert rows[("expert", "—")]["n"] == 2 and rows[("expert", "—")]["f1_mean"] == pytest.approx(0.85)  # counted once
    assert rows[("generated", "all")]["n"] == 4 and rows[("generated", "all")]["delta_f1"] == pytest.approx(
        (0.6 + 0.85) / 2 - 0.85
    )
    assert rows[("generated", "strict")]["delta_f1"] == pytest.approx(0.6 - 0.85)
