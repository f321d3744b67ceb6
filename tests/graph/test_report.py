"""`report`: the paper's tables from results rows (values checked by hand), the downstream table,
Markdown/LaTeX/CSV files, PNG plots, --compare-published, run directories, the CLI."""

import csv
import io
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.report import ReportError, build_report
from autonesy.graph.results import ROW_FIELDS
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.tools.llm_spec import LLMSpec

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
    assert set(tables) == {
        "by_setting",
        "syntax_errors_by_setting",
        "by_llm",
        "per_task",
        "rejections_by_kind",
        "cost_by_llm",
        "marginals",
        "downstream",
    }
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
    by_llm_cell = {(r["llm"], r["format"], r["detail"], r["prompt"]): r for r in tables["by_setting"].data}
    assert by_llm_cell[(QWEN, "cpmpy", "not-detailed", "zs")]["f1_mean"] == 0.25  # two LLMs: two cells
    assert by_llm_cell[(GPT, "cpmpy", "not-detailed", "zs")]["f1_mean"] == 1.0
    pooled = build_report([results_dir], tmp_path / "p", plots=False, pool=["llm"])
    by_setting = next(t for t in pooled.tables if t.name == "by_setting")
    assert "pooled on request over llm: " + ", ".join(sorted([GPT, QWEN])) + "." in by_setting.notes
    cell = {(r["format"], r["detail"], r["prompt"]): r for r in by_setting.data}
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
    by_setting = (out / "by_setting.md").read_text()
    assert "| llm | format | detailed · zs | not-detailed · zs | all |" in by_setting
    # GPT's nat attempts (an error, a pending one) were planned but count in no mean: each cell says n of planned
    gpt_all = (
        "| gpt-oss-120b (openai:gpt-oss-120b) | all | 0.500 ± 0.500 (2/3) | 0.900 ± 0.100 (2/3) | 0.700 ± 0.412 (4/6) |"
    )
    assert gpt_all in by_setting
    assert "| gpt-oss-120b (openai:gpt-oss-120b) | nat | — (0/1) | — (0/1) | — (0/2) |" in by_setting
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


def _results(tmp_path, rows, name="sweep"):
    out = tmp_path / name
    out.mkdir()
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def _tables(report):
    return {t.name: t for t in report.tables}


def test_two_policies_are_two_cells_unless_pooled_on_request(tmp_path):
    # The same grid point under two policies (zs and oracle-feedback, both with the zs prompt): F1 1.0 and 0.0.
    zs = row(QWEN, "nat", "detailed", 1.0)
    oracle = {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "o", "policy": "oracle-feedback"}
    report = build_report([_results(tmp_path, [zs, oracle])], tmp_path / "r", plots=False)
    tables = _tables(report)
    cells = {(r["policy"], r["format"], r["detail"], r["prompt"]): r["f1_mean"] for r in tables["by_setting"].data}
    assert cells[("zs", "nat", "detailed", "zs")] == 1.0 and cells[("oracle-feedback", "nat", "detailed", "zs")] == 0.0
    header = (tmp_path / "r" / "by_llm.csv").read_text().splitlines()[0].split(",")
    assert "policy" in header and "policy" in tables["by_llm"].header
    assert {r["policy"]: r["attempts"] for r in tables["by_llm"].data} == {"zs": 1, "oracle-feedback": 1}
    pooled = _tables(build_report([tmp_path / "sweep"], tmp_path / "p", plots=False, pool=["policy"]))
    [all_cell] = [r for r in pooled["by_setting"].data if r["format"] == "nat" and r["detail"] == "detailed"]
    assert all_cell["f1_mean"] == 0.5 and "policy" not in all_cell
    assert "pooled on request over policy: oracle-feedback, zs." in pooled["by_llm"].notes
    with pytest.raises(ReportError, match="cannot pool over colour"):
        build_report([tmp_path / "sweep"], tmp_path / "q", plots=False, pool=["colour"])
    shown = runner.invoke(app, ["report", str(tmp_path / "sweep"), "--out", str(tmp_path / "c"), "--no-plots"])
    assert shown.exit_code == 0 and "| LLM | policy | n of planned |" in shown.output
    pooled_cli = ["report", str(tmp_path / "sweep"), "--pool", "policy", "--out", str(tmp_path / "d"), "--no-plots"]
    shown = runner.invoke(app, pooled_cli)
    assert shown.exit_code == 0 and "_pooled on request over policy: oracle-feedback, zs._" in shown.output
    refused = runner.invoke(app, ["report", str(tmp_path / "sweep"), "--pool", "colour", "--no-plots"])
    assert refused.exit_code == 1 and len(refused.output.splitlines()) == 1 and "cannot pool" in refused.output


def test_a_policy_that_follows_the_prompt_is_no_extra_column(tmp_path):
    # ROWS: policy == prompt in every row, so policy distinguishes nothing the prompt does not.
    rows = [row(QWEN, "nat", "detailed", 1.0), row(QWEN, "nat", "detailed", 0.5, prompt="zs-cot")]
    assert [r["policy"] for r in rows] == ["zs", "zs-cot"]
    tables = _tables(build_report([_results(tmp_path, rows)], tmp_path / "r", plots=False))
    assert tables["by_llm"].header[:4] == ["LLM", "n of planned", "infra failures", "tasks"]
    assert tables["by_setting"].header == ["format", "detailed · zs", "detailed · zs-cot", "all"]


def test_bootstrap_interval_is_seeded_and_a_constant_column_is_a_point():
    from autonesy.graph.report import bootstrap_ci

    assert bootstrap_ci([0.7, 0.7, 0.7]) == (0.7, 0.7)
    assert bootstrap_ci([0.25]) == (0.25, 0.25)
    low, high = bootstrap_ci([0.0, 1.0] * 10)
    assert (low, high) == bootstrap_ci([0.0, 1.0] * 10)  # the fixed seed: the same report twice
    # mean 0.5, standard error sqrt(0.25 / 20) ≈ 0.112: a 95 % interval about ±0.22, inside [0, 1]
    assert 0.25 < low < 0.35 and 0.65 < high < 0.75
    assert all(math.isnan(v) for v in bootstrap_ci([]))


def test_costs_are_tokens_times_prices_from_the_llm_config(tmp_path):
    config = tmp_path / "server.toml"
    config.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        "prompt_price_per_mtok = 0.5\ncompletion_price_per_mtok = 2.0\n"
    )
    from autonesy.agents.llm.spec import backend_from_spec

    assert backend_from_spec(str(config)) is not None  # the price keys are known keys of an [llm] table
    priced = [{**row(str(config), "nat", d, 1.0), "attempt_id": d} for d in ("detailed", "not-detailed")]
    free = row(QWEN, "nat", "detailed", 1.0)
    report = build_report([_results(tmp_path, [*priced, free])], tmp_path / "r", plots=False)
    costs = {r["llm"]: r for r in _tables(report)["cost_by_llm"].data}
    # two attempts × (100 prompt, 50 completion) tokens: 200 × 0.5 / 1e6 + 100 × 2.0 / 1e6
    assert costs[str(config)]["prompt_tokens"] == 200 and costs[str(config)]["completion_tokens"] == 100
    assert costs[str(config)]["cost"] == pytest.approx(200 * 0.5 / 1e6 + 100 * 2.0 / 1e6)
    assert costs[str(config)]["would_cost_per_attempt"] == pytest.approx((200 * 0.5 + 100 * 2.0) / 1e6 / 2)
    assert costs[QWEN]["cost"] is None and costs[QWEN]["prompt_tokens"] == 100


def test_infrastructure_failures_are_listed_apart_and_never_scored(tmp_path):
    ok = row(QWEN, "nat", "detailed", 1.0)
    down = {
        **row(QWEN, "nat", "not-detailed", None, status="infra_failed"),
        "f1": None,
        "failure": "connection",
        "reason": "LLM error (connection): refused after 3 retries",
    }
    report = build_report([_results(tmp_path, [ok, down])], tmp_path / "r", plots=False)
    tables = _tables(report)
    assert report.counted == 1 and report.left_out == {"infra_failed": 1}
    [llm] = tables["by_llm"].data
    assert llm["attempts"] == 1 and llm["f1_mean"] == 1.0 and llm["empty_answer_rate"] == 0
    infra = tables["infra_failed"]
    assert infra.title.endswith(": 1") and infra.rows[0][infra.header.index("failure")] == "connection"
    assert "by kind: connection 1." in infra.notes
    assert "_infrastructure failures (never scored): 1_" in report.render("md")


def test_syntax_errors_before_and_after_repair_come_from_the_traces(tmp_path):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from autonesy.agents.llm import LangChainChatBackend

    one_hot = "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n" + "".join(
        f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11)
    )
    good, broken = f"<cnf>\n{one_hot}</cnf>", "<cnf>\np cnf 10 1\n1 2 banana 0\n</cnf>"
    sweep = tmp_path / "runs"
    for name, answers in (("fixed", [broken, f"[[FIXED]]\n{good}"]), ("clean", [good]), ("broken", [broken] * 3)):
        config = RunConfig(
            task="fashion", format="dimacs", llm=LLMSpec.parse("http://scripted.test/v1@fake"), max_repairs=2
        )
        model = FakeListChatModel(responses=answers)
        run_attempt(config, sweep / name, backend=LangChainChatBackend(model, "scripted", "fake", retries=1))
    report = build_report([sweep], tmp_path / "r", plots=False)
    tables = _tables(report)
    [llm] = tables["by_llm"].data
    # first answers: broken, good, broken → 2/3 before repair; after repair only "broken" is left → 1/3
    assert llm["first_answer_syntax_error_rate"] == pytest.approx(2 / 3)
    assert llm["syntax_error_rate"] == pytest.approx(1 / 3)
    [task] = tables["per_task"].data
    assert task["task"] == "fashion" and task["first_answer_syntax_error_rate_mean"] == pytest.approx(2 / 3)
    assert task["accepted_rate_mean"] == pytest.approx(2 / 3) and task["f1_mean"] == pytest.approx(2 / 3)


def test_per_task_table_keeps_tasks_and_llms_apart(tmp_path):
    rows = [
        row(QWEN, "nat", "detailed", 1.0),
        row(QWEN, "cpmpy", "detailed", 0.5),
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "s", "task": "sushi"},
        row(GPT, "nat", "detailed", 0.25),
    ]
    tables = _tables(build_report([_results(tmp_path, rows)], tmp_path / "r", plots=False))
    per_task = {(r["task"], r["llm"]): r for r in tables["per_task"].data}
    assert set(per_task) == {("fashion", QWEN), ("sushi", QWEN), ("fashion", GPT)}
    assert per_task[("fashion", QWEN)]["f1_mean"] == 0.75 and per_task[("fashion", QWEN)]["attempts"] == 2
    assert per_task[("sushi", QWEN)]["syntax_error_rate_mean"] == 1.0
    assert per_task[("fashion", GPT)]["f1_ci_low"] == per_task[("fashion", GPT)]["f1_ci_high"] == 0.25


def test_compare_published_uses_the_catalogue_tasks_and_says_how_many(tmp_path):
    rows = [
        row(QWEN, "cpmpy", "detailed", 1.0),
        {**row(QWEN, "cpmpy", "detailed", 0.0), "attempt_id": "t", "task": "mine", "benchmark": "taskfile"},
    ]
    tables = _tables(build_report([_results(tmp_path, rows)], tmp_path / "r", plots=False, compare_published=True))
    marginals = {(r["slice"], r["value"]): r for r in tables["marginals"].data}
    assert marginals[("format", "cpmpy")]["f1_mean"] == 1.0 and marginals[("format", "cpmpy")]["tasks"] == 1
    note = tables["marginals"].notes[-1]
    assert "all 18 catalogue tasks" in note and "our 1 catalogue task(s) only (fashion)" in note
    assert "1 other task(s) left out" in note
    by_benchmark = {r["benchmark"]: r for r in tables["by_llm"].data}  # the task set varies: a key column
    assert by_benchmark["catalogue"]["f1_catalogue_mean"] == 1.0 and by_benchmark["taskfile"]["f1_mean"] == 0.0


def test_a_token_budget_that_varies_is_a_column_and_rows_record_it(tmp_path):
    from autonesy.graph.results import attempt_row

    job = {
        "attempt_id": "a",
        "llm": QWEN,
        "config": {
            "task": "fashion",
            "format": "nat",
            "prompt": "zs",
            "detail": "detailed",
            "policy": "zs",
            "max_repairs": 5,
            "max_tokens": 300,
        },
    }
    assert attempt_row(tmp_path, job)["max_tokens"] == 300
    short = {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "s", "max_tokens": 300}
    long = {**row(QWEN, "nat", "detailed", 1.0), "attempt_id": "l", "max_tokens": 4096}
    tables = _tables(build_report([_results(tmp_path, [short, long])], tmp_path / "r", plots=False))
    assert {r["max_tokens"]: r["f1_mean"] for r in tables["by_llm"].data} == {"300": 0.0, "4096": 1.0}


def test_rejections_are_counted_by_the_kind_each_row_names(tmp_path):
    rows = [
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "a", "failure": "token_budget"},
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "b", "failure": "syntax"},
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "c", "failure": None},  # an old row
        {**row(QWEN, "nat", "detailed", 1.0), "attempt_id": "d"},
    ]
    table = _tables(build_report([_results(tmp_path, rows)], tmp_path / "r", plots=False))["rejections_by_kind"]
    assert table.header == ["LLM", "n of planned", "rejected", "syntax", "token_budget", "not recorded"]
    [record] = table.data
    assert record["rejected_rate"] == 0.75
    assert record["rejected_syntax_rate"] == record["rejected_token_budget_rate"] == 0.25
    assert record["rejected_not_recorded_rate"] == 0.25


SETTING_VALUES = {
    "llm": [QWEN, GPT],
    "format": ["nat", "cpmpy"],
    "prompt": ["zs", "zs-cot"],
    "detail": ["detailed", "not-detailed"],
    "policy": ["zs", "zs-cot", "oracle-feedback"],
    "decoding": ["free", "grammar"],
    "max_repairs": [0, 5],
    "max_tokens": [300, 4096],
    "benchmark": ["catalogue", "taskfile"],
}


@given(st.lists(st.fixed_dictionaries({k: st.sampled_from(v) for k, v in SETTING_VALUES.items()}), min_size=1))
def test_no_cell_ever_mixes_two_values_of_a_setting(settings):
    from autonesy.graph.report import SETTINGS, cells_of, frame

    rows = [{**row(QWEN, "nat", "detailed", 1.0), **s, "attempt_id": str(i)} for i, s in enumerate(settings)]
    df = frame(rows)
    cells = cells_of(df)
    groups = df.groupby(list(cells.keys)) if cells.keys else [((), df)]
    for _, cell in groups:
        assert all(cell[s].nunique() == 1 for s in SETTINGS), cell[list(SETTINGS)]


def test_empty_answers_have_their_column_and_old_rows_count_as_they_were(tmp_path):
    old = {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "o", "failure": None}
    old["llm_error"] = True  # written before failure kinds: still rejected, F1 0, of no kind
    rows = [
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected", empty=True), "attempt_id": "e"},
        old,
        {**row(QWEN, "nat", "detailed", 0.0, status="rejected"), "attempt_id": "s"},
        {**row(QWEN, "nat", "detailed", 1.0), "attempt_id": "a"},
    ]
    tables = _tables(build_report([_results(tmp_path, rows)], tmp_path / "r", plots=False))
    [llm] = tables["by_llm"].data
    assert llm["attempts"] == 4 and llm["f1_mean"] == 0.25 and llm["empty_answer_rate"] == 0.25
    [kinds] = tables["rejections_by_kind"].data
    assert kinds["rejected_not_recorded_rate"] == kinds["rejected_empty_answer_rate"] == 0.25
