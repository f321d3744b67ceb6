"""Sweeps against a real loopback endpoint: an outage is not the model's failure (exit 3, nothing
scored, retried by the same command once the endpoint is up); --limit, --dry-run, the resume line and
the response cache shared across sweeps."""

from __future__ import annotations

import json

from loopback_llm import LoopbackLLM, Reply, unused_loopback_port
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.results import read_results
from autonesy.graph.sweep.grid import SweepSpec, expand

ONE_HOT = "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n" + "".join(
    f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11)
)
GOOD = f"<cnf>\n{ONE_HOT}</cnf>"
runner = CliRunner()


def sweep_args(llm: str, out, *more: str) -> list[str]:
    """fashion · dimacs · both prompts · both details: 4 attempts."""
    return ["sweep", "--llm", llm, "--tasks", "fashion", "--formats", "dimacs", "--out", str(out), *more]


def test_a_sweep_against_a_down_endpoint_exits_3_scores_nothing_and_the_same_command_retries(tmp_path):
    port = unused_loopback_port()
    args = sweep_args(f"http://127.0.0.1:{port}/v1@m", tmp_path / "s", "--llm-timeout", "2")
    down = runner.invoke(app, [*args, "--json"])
    assert down.exit_code == 3, down.output
    data = json.loads(down.stdout)
    assert data["counts"] == {"infra_failed": 4}
    assert "4 attempts ended infra_failed" in down.stderr and "running the same command again" in down.stderr
    rows = read_results(tmp_path / "s")
    assert [r["failure"] for r in rows] == ["connection"] * 4
    assert all(r["f1"] is None and r["relation"] is None and not r["syntax_error"] for r in rows)
    with LoopbackLLM(GOOD, port=port) as server:
        up = runner.invoke(app, [*args, "--json"])
        assert server.count == 4  # each retried attempt sent its call: no failure was replayed
    assert up.exit_code == 0, up.output
    again = json.loads(up.stdout)
    assert again["counts"] == {"accepted": 4} and again["ran"] == 4
    assert again["resume"] == {"done": 0, "infra_failed": 4, "error": 0, "unfinished": 0, "new": 0}
    assert [(r["status"], r["f1"], r["failure"]) for r in read_results(tmp_path / "s")] == [("accepted", 1.0, None)] * 4


def test_a_503_inside_a_sweep_is_retried_and_the_attempt_scored(tmp_path):
    with LoopbackLLM([Reply(status=503, error="busy"), GOOD]) as server:
        result = runner.invoke(app, [*sweep_args(server.spec(), tmp_path / "s", "--concurrency", "1"), "--json"])
        assert server.count == 5  # 4 answers and the one 503 retried
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"] == {"accepted": 4}


def test_the_resume_line_says_what_was_reused_and_the_cache_serves_another_sweep(tmp_path):
    with LoopbackLLM(GOOD) as server:
        first = runner.invoke(app, sweep_args(server.spec(), tmp_path / "a", "--quiet"))
        assert first.exit_code == 0 and server.count == 4
        again = runner.invoke(app, sweep_args(server.spec(), tmp_path / "a"))
        assert "resume: 4 done (reused), 0 infra_failed retried, 0 errors retried" in again.output
        assert server.count == 4
        other = runner.invoke(app, [*sweep_args(server.spec(), tmp_path / "b"), "--json"])
        assert server.count == 4  # a new --out: every answer from the shared response cache
        rows = read_results(tmp_path / "b")
        assert [r["cached_calls"] for r in rows] == [1] * 4 and [r["llm_calls"] for r in rows] == [0] * 4
        assert json.loads(other.stdout)["counts"] == {"accepted": 4}
        fresh = runner.invoke(app, sweep_args(server.spec(), tmp_path / "c", "--no-cache", "--quiet"))
        assert fresh.exit_code == 0 and server.count == 8  # --no-cache: every request sent


def test_limit_draws_the_same_sample_every_time_and_a_larger_one_keeps_it():
    grid = SweepSpec(tasks=("fashion", "sushi"), llms=("http://h:1/v1@m",))  # 2 × 5 × 2 × 2 = 40 attempts
    everything = [job["attempt_id"] for job in expand(grid)]
    five = [job["attempt_id"] for job in expand(SweepSpec(**{**grid.__dict__, "limit": 5}))]
    assert len(everything) == 40 and len(five) == 5 and len(set(five)) == 5
    assert five == [job["attempt_id"] for job in expand(SweepSpec(**{**grid.__dict__, "limit": 5}))]
    assert five == [i for i in everything if i in five]  # in grid order
    twenty = [job["attempt_id"] for job in expand(SweepSpec(**{**grid.__dict__, "limit": 20}))]
    assert set(five) < set(twenty)
    other = [job["attempt_id"] for job in expand(SweepSpec(**{**grid.__dict__, "limit": 5, "sample_seed": 1}))]
    assert other != five
    assert len(expand(SweepSpec(**{**grid.__dict__, "limit": 100}))) == 40


def test_dry_run_counts_attempts_calls_and_tokens_and_writes_nothing(tmp_path):
    out = tmp_path / "never"
    spec = "http://127.0.0.1:9/v1@m"  # never called
    result = runner.invoke(app, [*sweep_args(spec, out, "--max-tokens", "300", "--dry-run"), "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    # 4 attempts × (1 formalization + 5 repair rounds); each call up to 300 completion tokens
    assert plan["attempts"] == 4 and plan["to_run"] == 4 and plan["llm_calls_max"] == 4 * 6
    assert plan["completion_tokens_max"] == 4 * 6 * 300 and plan["prompt_tokens"] > 4 * 6 * 50
    assert plan["resume"]["new"] == 4 and not out.exists()
    oracle = runner.invoke(
        app, [*sweep_args(spec, out, "--policy", "oracle-feedback", "--max-repairs", "2", "--dry-run"), "--json"]
    )
    # oracle-feedback adds 2 semantic rounds: 1 + 2 + 2 calls per attempt
    assert json.loads(oracle.stdout)["llm_calls_max"] == 4 * 5 and not out.exists()
    text = runner.invoke(app, sweep_args(spec, out, "--limit", "3", "--dry-run"))
    assert "3 attempts in the grid; 3 to run" in text.stdout and "nothing was run or written" in text.stdout
