"""Sweeps: grid expansion, the expert ceiling, a scripted LLM with known mistakes (tables checked by
hand), kill-and-resume with counted LLM calls, the process and Ray executors, the CLI."""

import json
import os
import subprocess
import sys
import threading
from fractions import Fraction
from pathlib import Path

import pytest
from loopback_llm import LoopbackLLM
from scripted_llm import MISTAKE_TASKS, ScriptedChatModel, mistakes_answer
from typer.testing import CliRunner

from autonesy.agents.llm import LangChainChatBackend, ResponseCache
from autonesy.graph.cli import app
from autonesy.graph.report import build_report
from autonesy.graph.results import JOB_FILE, ROW_FIELDS, TIMING_FIELDS, read_results
from autonesy.graph.run import RunConfig
from autonesy.graph.sweep.executors import ray_available
from autonesy.graph.sweep.grid import SweepError, SweepSpec, attempt_id, expand
from autonesy.graph.sweep.run import run_sweep
from autonesy.tasks.registry import TASK_NAMES

SPEC = "http://scripted.test/v1@mistakes"
GRID = SweepSpec(tasks=MISTAKE_TASKS, formats=("dimacs", "nat"), llms=(SPEC,))
runner = CliRunner()


def scripted_backend(out: Path, latency_s: float = 0.0) -> LangChainChatBackend:
    model = ScriptedChatModel(answer=mistakes_answer, latency_s=latency_s)
    return LangChainChatBackend(
        model, "http://scripted.test/v1", "mistakes", retries=1, cache=ResponseCache(Path(out) / "llm_cache.sqlite")
    )


def comparable(rows):
    """Rows without what depends on timing: seconds, and which counting route answered first (the
    counts themselves are exact and must agree)."""
    return [{k: v for k, v in row.items() if k not in TIMING_FIELDS and k != "count_method"} for row in rows]


# ------------------------------------------------------------------------------------ the grid
def test_grid_expansion_and_stable_attempt_ids():
    jobs = expand(GRID)
    assert len(jobs) == 2 * 2 * 2 * 2 and len({j["attempt_id"] for j in jobs}) == 16
    assert [j["attempt_id"] for j in expand(GRID)] == [j["attempt_id"] for j in jobs]
    config = RunConfig.from_dict(jobs[0]["config"])
    assert attempt_id(config, 0) == jobs[0]["attempt_id"]
    assert attempt_id(RunConfig.from_dict({**jobs[0]["config"], "llm_timeout_s": 9.0}), 0) == jobs[0]["attempt_id"]
    assert attempt_id(RunConfig.from_dict({**jobs[0]["config"], "max_repairs": 2}), 0) != jobs[0]["attempt_id"]
    assert attempt_id(config, 1) != jobs[0]["attempt_id"]
    expert = expand(SweepSpec(tasks=("all",), policy="expert", llms=("ignored@x",)))
    assert len(expert) == 18 * 5 * 2 * 2 and {j["llm"] for j in expert} == {"expert"}
    assert [j["config"]["task"] for j in expert[::20]] == list(TASK_NAMES)
    assert (
        len(expand(SweepSpec(tasks=("fashion",), llms=("http://a/v1@x", "http://b/v1@y"), repeats=3, formats=("nat",))))
        == 2 * 4 * 3
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        (SweepSpec(formats=("latex",)), "unknown format"),
        (SweepSpec(tasks=("nope",)), "unknown task"),
        (SweepSpec(prompts=("zs", "zs-cot"), policy="zs"), "fixes the prompt style"),
        (SweepSpec(details=("medium",)), "unknown detail level"),
        (SweepSpec(tasks=("missing.toml",)), "no such task file"),
        (SweepSpec(llms=("a@x",)), "unknown LLM spec 'a@x'"),
        (SweepSpec(llms=("openai:",)), "needs a model name"),
    ],
)
def test_bad_grids_are_refused_with_one_line(spec, message):
    with pytest.raises(SweepError, match=message):
        expand(spec)


# --------------------------------------------------------------------------------- expert ceiling
def expert_sweep(tmp_path, tasks, **options):
    result = run_sweep(SweepSpec(tasks=tasks, policy="expert"), tmp_path / "sweep", progress=False, **options)
    report = build_report([tmp_path / "sweep"], tmp_path / "report", plots=False)
    return result, report


def check_f1_one_everywhere(result, report, n):
    assert len(result.rows) == n and result.counts == {"accepted": n}
    assert all(row["f1"] == 1.0 and row["relation"] == "equal" for row in result.rows)
    for table in report.tables:
        for record in table.data:
            if "f1_mean" in record:
                assert record["f1_mean"] == 1.0 and record["f1_std"] == 0.0, (table.name, record)


def test_expert_sweep_scores_f1_one_on_a_representative_grid(tmp_path):
    # Every format × prompt × detail on one task; the whole 360-attempt grid is the slow test below.
    result, report = expert_sweep(tmp_path, ("fashion",), concurrency=2)
    check_f1_one_everywhere(result, report, 5 * 2 * 2)
    assert {row["format"] for row in result.rows} == {"dimacs", "nat", "pysat", "cpmpy", "sympy"}
    assert all(row["llm_calls"] == 0 and row["model"] == "expert" for row in result.rows)


@pytest.mark.slow
def test_expert_sweep_over_the_full_grid_scores_f1_one_everywhere(tmp_path):
    result, report = expert_sweep(tmp_path, ("all",), executor="process", concurrency=2)
    check_f1_one_everywhere(result, report, 18 * 5 * 2 * 2)


# ------------------------------------------------------------------------- scripted LLM, by hand
A = Fraction(20, 1033)  # fashion, "at least one class": P = 10/1023, R = 1
B = Fraction(6, 35)  # sushi, rows only: P = 24/256, R = 1
EXPECTED_F1 = {  # (task, format, prompt, detail) → F1, from the script in scripted_llm.py
    **{("fashion", "dimacs", p, d): 1 for p in ("zs", "zs-cot") for d in ("detailed", "not-detailed")},
    **{("fashion", "nat", "zs", d): A for d in ("detailed", "not-detailed")},
    **{("fashion", "nat", "zs-cot", d): 1 for d in ("detailed", "not-detailed")},
    **{("sushi", "dimacs", p, "detailed"): 1 for p in ("zs", "zs-cot")},
    **{("sushi", "dimacs", p, "not-detailed"): 0 for p in ("zs", "zs-cot")},
    **{("sushi", "nat", p, "detailed"): 1 for p in ("zs", "zs-cot")},
    **{("sushi", "nat", p, "not-detailed"): B for p in ("zs", "zs-cot")},
}
EXPECTED_CALLS = 16 + 4  # one formalizer call per attempt, one repair call per sushi·dimacs attempt


def mean_std(values):
    values = [Fraction(v) for v in values]
    mean = sum(values) / len(values)
    return float(mean), float(sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5


@pytest.fixture(scope="module")
def scripted_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("scripted") / "sweep"
    backend = scripted_backend(out)
    result = run_sweep(GRID, out, backends={SPEC: backend}, concurrency=3, progress=False)
    return out, result, backend


def test_scripted_rows_match_the_script(scripted_sweep):
    out, result, backend = scripted_sweep
    assert backend.calls == EXPECTED_CALLS
    rows = read_results(out)
    assert comparable(rows) == comparable(result.rows) and len(rows) == 16
    assert list(rows[0]) == list(ROW_FIELDS)
    for row in rows:
        key = (row["task"], row["format"], row["prompt"], row["detail"])
        assert row["f1"] == pytest.approx(float(EXPECTED_F1[key]), abs=1e-12), key
        sushi_dimacs = key[:2] == ("sushi", "dimacs")
        assert row["repair_rounds"] == (1 if sushi_dimacs else 0)
        assert row["llm_calls"] == (2 if sushi_dimacs else 1) and row["prompt_tokens"] > 0
        rejected = sushi_dimacs and row["detail"] == "not-detailed"
        assert row["status"] == ("rejected" if rejected else "accepted")
        assert row["syntax_error"] is rejected and row["failure"] == ("ok_on_error" if rejected else None)
        assert row["relation"] == (None if rejected else "equal" if EXPECTED_F1[key] == 1 else "permissive")
        assert row["model"] == "mistakes" and row["llm"] == SPEC and row["run_dir"].startswith("attempts/")
    # CSV has the same rows in the same order.
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert len(csv_lines) == 17 and csv_lines[0].split(",") == list(ROW_FIELDS)
    assert [line.split(",")[0] for line in csv_lines[1:]] == [row["attempt_id"] for row in rows]


def test_scripted_tables_have_the_hand_computed_values(scripted_sweep, tmp_path):
    out, _, _ = scripted_sweep
    report = build_report([out], tmp_path / "report", plots=False)
    tables = {table.name: table for table in report.tables}
    for record in tables["by_setting"].data:
        keys = [
            k
            for k in EXPECTED_F1
            if (record["format"] in ("all", k[1]))
            and (record["detail"] in ("all", k[3]))
            and (record["prompt"] in ("all", k[2]))
        ]
        mean, std = mean_std(EXPECTED_F1[k] for k in keys)
        assert record["f1_mean"] == pytest.approx(mean, abs=1e-12) and record["f1_std"] == pytest.approx(
            std, abs=1e-12
        ), record
        rejected = sum(1 for k in keys if k[:2] == ("sushi", "dimacs") and k[3] == "not-detailed")
        assert record["syntax_error_rate"] == pytest.approx(rejected / len(keys)) and record["n"] == len(keys)
    # The (dimacs, not-detailed, zs) cell by hand: fashion 1, sushi 0 → 0.5 ± 0.5.
    cell = next(
        r
        for r in tables["by_setting"].data
        if (r["format"], r["detail"], r["prompt"]) == ("dimacs", "not-detailed", "zs")
    )
    assert (cell["f1_mean"], cell["f1_std"], cell["syntax_error_rate"]) == (0.5, 0.5, 0.5)
    [llm] = tables["by_llm"].data
    assert llm["attempts"] == 16
    assert llm["f1_mean"] == pytest.approx(float((4 + (2 + 2 * A) + (2 + 0) + (2 + 2 * B)) / 16), abs=1e-12)
    assert llm["syntax_error_rate"] == 2 / 16 and llm["empty_answer_rate"] == 0
    assert (llm["share_equal"], llm["share_permissive"], llm["share_rejected"]) == (10 / 16, 4 / 16, 2 / 16)
    assert llm["repair_rounds_mean"] == 4 / 16
    marginals = {(r["slice"], r["value"]): r for r in tables["marginals"].data}
    # format nat over detailed descriptions: fashion zs A, fashion zs-cot 1, sushi 1, 1
    assert marginals[("format", "nat")]["f1_mean"] == pytest.approx(float((A + 3) / 4), abs=1e-12)
    not_detailed = [v for k, v in EXPECTED_F1.items() if k[3] == "not-detailed"]
    assert marginals[("detail", "not-detailed")]["f1_mean"] == pytest.approx(
        float(sum(map(Fraction, not_detailed)) / 8), abs=1e-12
    )
    assert (
        "| dimacs | 1.000 ± 0.000 | 1.000 ± 0.000 | 0.500 ± 0.500 | 0.500 ± 0.500 | 0.750 ± 0.433 |"
        in tables["by_setting"].markdown()
    )


# ------------------------------------------------------------------------------- kill and resume
class Killed(BaseException):
    """Stands for the process dying (not an Exception: nothing in the pipeline catches it)."""


class DyingBackend(LangChainChatBackend):
    """Dies on its (limit+1)-th call, and on every call after that (the whole process is gone)."""

    def __init__(self, *args, limit, **kwargs):
        super().__init__(*args, **kwargs)
        self.limit, self.started, self.lock, self.dead = limit, 0, threading.Lock(), False

    def complete(self, messages, **params):
        with self.lock:
            if self.dead or self.started >= self.limit:
                self.dead = True
                raise Killed()
            self.started += 1
        return super().complete(messages, **params)


def test_killed_sweep_resumes_with_no_duplicate_no_missing_row_and_no_repeated_call(tmp_path, scripted_sweep):
    out = tmp_path / "sweep"
    dying = DyingBackend(
        ScriptedChatModel(answer=mistakes_answer),
        "http://scripted.test/v1",
        "mistakes",
        retries=1,
        cache=ResponseCache(out / "llm_cache.sqlite"),
        limit=9,
    )
    with pytest.raises(Killed):
        run_sweep(GRID, out, backends={SPEC: dying}, concurrency=3, progress=False)
    first = dying.calls
    assert first == 9
    partial = read_results(out)  # written on the way out: every attempt listed once, some unfinished
    assert len(partial) == 16 and len({r["attempt_id"] for r in partial}) == 16
    assert 0 < sum(r["status"] in ("accepted", "rejected") for r in partial) < 16
    second = scripted_backend(out)
    run_sweep(GRID, out, backends={SPEC: second}, concurrency=3, progress=False)
    assert first + second.calls == EXPECTED_CALLS  # nothing asked twice, nothing missing
    rows = read_results(out)
    assert len(rows) == 16 and len({r["attempt_id"] for r in rows}) == 16
    assert all(r["status"] in ("accepted", "rejected") for r in rows)
    # The same table as the uninterrupted sweep, call counts included (they live in the checkpoints).
    assert comparable(rows) == comparable(scripted_sweep[1].rows)
    assert sum(r["llm_calls"] for r in rows) == EXPECTED_CALLS
    third = scripted_backend(out)
    again = run_sweep(GRID, out, backends={SPEC: third}, progress=False)
    assert third.calls == 0 and again.progress.done == 0 and again.progress.skipped == 16


def test_a_resumed_sweep_loads_only_the_tasks_it_still_runs(tmp_path, monkeypatch):
    """A DCP-Bench-Open ground truth takes seconds to build (83 of them: 3 minutes), so a finished
    attempt's task is not loaded again; a removed attempt's is (rows never load one: issue 27)."""
    from autonesy.graph.sweep import run

    spec = SweepSpec(
        tasks=("fashion", "chx"), formats=("dimacs",), prompts=("zs",), details=("detailed",), policy="expert"
    )
    first = run_sweep(spec, tmp_path / "sweep", progress=False)
    loaded = []
    real = run.load_task
    monkeypatch.setattr(run, "load_task", lambda name: loaded.append(name) or real(name))
    again = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert loaded == [] and again.progress.done == 0 and comparable(again.rows) == comparable(first.rows)
    chx = next(r for r in first.rows if r["task"] == "chx")
    for leftover in (tmp_path / "sweep" / chx["run_dir"]).iterdir():
        if leftover.name != JOB_FILE:
            leftover.unlink()
    rerun = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert loaded == ["chx"] and rerun.progress.done == 1 and comparable(rerun.rows) == comparable(first.rows)


# -------------------------------------------------------------------------------------- executors
def test_process_executor_runs_attempts_in_worker_processes(tmp_path):
    spec = SweepSpec(
        tasks=("fashion",), formats=("dimacs", "nat"), prompts=("zs",), details=("detailed",), policy="expert"
    )
    local = run_sweep(spec, tmp_path / "local", progress=False)
    pooled = run_sweep(spec, tmp_path / "pooled", executor="process", workers=1, progress=False)
    assert comparable(pooled.rows) == comparable(local.rows) and pooled.counts == {"accepted": 2}


@pytest.fixture
def loopback_mistakes():
    def handler(request):
        return mistakes_answer(request["messages"][-1]["content"])

    with LoopbackLLM([handler], model="mistakes") as server:
        yield server


@pytest.mark.skipif(
    not ray_available(), reason="Ray is not installed (optional extra: pip install 'autonesy-agent[ray]')"
)
def test_ray_executor_gives_the_same_results_table_as_the_local_one(tmp_path, loopback_mistakes):
    import ray

    spec = SweepSpec(
        tasks=MISTAKE_TASKS, formats=("dimacs", "nat"), prompts=("zs",), llms=(loopback_mistakes.spec(),), cache=False
    )  # no response cache: each sweep asks the endpoint itself
    local = run_sweep(spec, tmp_path / "local", concurrency=2, progress=False)
    local_calls = loopback_mistakes.count
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)  # never a cluster found running
    try:
        remote = run_sweep(spec, tmp_path / "ray", executor="ray", concurrency=2, progress=False)
        assert loopback_mistakes.count == 2 * local_calls  # every call made once per sweep
        again = run_sweep(spec, tmp_path / "ray", executor="ray", progress=False)  # resume: nothing to do
    finally:
        ray.shutdown()
    assert loopback_mistakes.count == 2 * local_calls and again.progress.done == 0
    assert len(local.rows) == 8 and comparable(remote.rows) == comparable(local.rows)
    assert comparable(read_results(tmp_path / "ray")) == comparable(read_results(tmp_path / "local"))


# ------------------------------------------------------------------------------------------- CLI
def test_sweep_cli_runs_resumes_and_reports_errors_in_one_line(tmp_path):
    out = tmp_path / "s"
    args = [
        "sweep",
        "--policy",
        "expert",
        "--tasks",
        "fashion",
        "--formats",
        "dimacs,nat",
        "--prompts",
        "zs",
        "--details",
        "detailed",
        "--out",
        str(out),
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["attempts"] == 2 and data["counts"] == {"accepted": 2} and data["ran"] == 2
    again = json.loads(runner.invoke(app, args).output)
    assert again["ran"] == 0 and again["skipped"] == 2
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    grids = json.loads((out / "sweep.json").read_text())["grids"]
    assert len(grids) == 1 and grids[0]["attempts"] == 2
    bad = runner.invoke(app, ["sweep", "--formats", "latex", "--out", str(tmp_path / "b")])
    assert bad.exit_code == 1 and bad.output.strip().startswith("error: unknown format 'latex'")
    assert len(bad.output.strip().splitlines()) == 1


def test_an_attempt_past_its_time_limit_is_a_timeout_and_is_not_rerun_under_the_same_limit(tmp_path):
    spec = SweepSpec(
        tasks=("fashion",),
        formats=("dimacs",),
        prompts=("zs",),
        details=("detailed",),
        policy="expert",
        attempt_time_limit_s=0.2,
    )  # less than a child process needs to start
    first = run_sweep(spec, tmp_path / "sweep", progress=False)
    [row] = first.rows
    assert row["status"] == "timeout" and "0.2 s" in row["reason"] and first.progress.done == 1
    again = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert again.progress.skipped == 1 and again.progress.done == 0
    from dataclasses import replace

    longer = run_sweep(replace(spec, attempt_time_limit_s=300.0), tmp_path / "sweep", progress=False)
    [row] = longer.rows
    assert longer.progress.done == 1 and row["status"] == "accepted" and row["f1"] == 1.0


def test_a_worker_process_closes_the_backends_it_built_when_it_ends(tmp_path):
    """Pool and Ray workers build their own backends (worker_backend); they are closed at the process's exit."""
    code = f"""
from pathlib import Path
from autonesy.graph.sweep import worker

class Backend:
    def close(self):
        Path({str(tmp_path / "closed")!r}).write_text("closed")

worker.backend_from_spec = lambda *args, **options: Backend()
assert worker.worker_backend("http://h/v1@m", 1.0, None) is worker.worker_backend("http://h/v1@m", 1.0, None)
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=os.environ.copy())
    assert (tmp_path / "closed").read_text() == "closed"


def test_the_process_executor_says_when_it_runs_fewer_workers_than_asked(tmp_path, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    args = ["sweep", "--policy", "expert", "--tasks", "fashion", "--formats", "dimacs", "--prompts", "zs"]
    args += ["--details", "detailed", "--executor", "process", "--concurrency", "3", "--out", str(tmp_path / "s")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps long lines
    assert "runs 1 worker processes (one per CPU core), not 3; --workers N sets the number" in said
    quiet = runner.invoke(app, args[:-1] + [str(tmp_path / "w"), "--workers", "2"])
    assert quiet.exit_code == 0 and "worker processes" not in quiet.output


def test_a_resumed_sweeps_progress_line_says_what_was_done_before():
    import io

    from rich.console import Console

    from autonesy.graph.sweep.executors import Progress, progress_display

    out = io.StringIO()
    state = Progress(total=4, skipped=3)
    with progress_display(state, True, Console(file=out, width=200)) as show:
        show({}, {"status": "accepted"})
    text = out.getvalue()
    assert "sweep · 3 done before · accepted 1 · rejected 0" in text and "4/4" in text
