"""The whole graph through the real langchain-openai client over HTTP to a loopback server."""

import json

import pytest
from loopback_llm import LoopbackLLM, Reply, unused_loopback_port
from typer.testing import CliRunner

from autonesy.graph.cli import app

SECRET = "sk-live-TOPSECRET-9f8e7d6c5b4a"
ONE_HOT = "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n" + "".join(
    f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11)
)
runner = CliRunner()


def run_cli(*args, code=0):
    result = runner.invoke(app, ["run", *args, "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def test_run_over_http_with_a_repair_round_and_no_key_anywhere(tmp_path):
    answers = ["Let me think.\n<cnf>\np cnf 10 1\n1 2 zebra 0\n</cnf>", f"[[FIXED]]\n<cnf>\n{ONE_HOT}</cnf>"]
    with LoopbackLLM(answers) as server:
        summary = run_cli(
            "--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "r")
        )
        assert server.count == 2
        sent = server.requests[0]["json"]["messages"]
        assert sent[0]["role"] == "system" and "fashion" not in sent[0]["content"].lower()
        assert "tshirt_top" in sent[1]["content"]
    assert summary["accepted"] and summary["metrics"]["f1"] == 1.0 and summary["repair_rounds"] == 1
    assert summary["prompt_tokens"] > 0 and summary["llm_calls"] == 2
    for path in (tmp_path / "r").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_rerun_with_the_same_out_makes_no_new_calls(tmp_path):
    with LoopbackLLM([f"<cnf>\n{ONE_HOT}</cnf>"]) as server:
        first = run_cli("--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "r"))
        second = run_cli(
            "--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "r")
        )
        assert server.count == 1
    assert first["accepted"] and second["accepted"]


@pytest.mark.parametrize(
    "reply, status, failure, kind, code",
    [
        (Reply(status=500, error="boom"), "infra_failed", "server_error", "http_error", 3),
        (Reply(status=429, error="slow down"), "infra_failed", "rate_limit", "http_error", 3),
        (Reply(status=401, error="bad key"), "infra_failed", "auth", "auth", 3),
        (Reply(delay_s=3), "infra_failed", "deadline", "deadline", 3),
        (Reply(content=""), "rejected", "empty_answer", "empty", 0),
        (Reply(content="", finish_reason="length"), "rejected", "token_budget", "empty", 0),  # all spent thinking
    ],
)
def test_endpoint_failures_are_outages_and_an_empty_answer_the_model_s(tmp_path, reply, status, failure, kind, code):
    with LoopbackLLM([reply]) as server:
        summary = run_cli(
            "--task", "sushi", "--format", "nat", "--llm", server.spec(), "--out", str(tmp_path / "r"),
            "--llm-timeout", "1", code=code,
        )  # fmt: skip
    assert summary["status"] == status and summary["failure"] == failure and not summary["accepted"]
    assert summary["metrics"] is None and summary["oracle_test"] is None and summary["compiled"] is None
    trace = (tmp_path / "r" / "trace.jsonl").read_text()
    assert f'"kind": "{kind}"' in trace


def test_refused_endpoint_exits_3_and_says_how_to_retry(tmp_path):
    spec = f"http://127.0.0.1:{unused_loopback_port()}/v1@m"
    result = runner.invoke(app, ["run", "--task", "sushi", "--format", "nat", "--llm", spec, "--out", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "outcome: infra_failed (connection), not scored" in result.stdout
    assert "1 attempt ended infra_failed" in result.stderr and f"--out {tmp_path}" in result.stderr


def test_an_outage_is_retried_by_the_same_command_once_the_endpoint_is_up(tmp_path):
    port = unused_loopback_port()
    args = ["--task", "fashion", "--format", "dimacs", "--llm", f"http://127.0.0.1:{port}/v1@m"]
    args += ["--out", str(tmp_path / "r")]
    down = run_cli(*args, code=3)
    assert down["status"] == "infra_failed" and down["failure"] == "connection" and down["metrics"] is None
    assert not (tmp_path / "r" / "formula.cnf").exists()
    with LoopbackLLM([f"<cnf>\n{ONE_HOT}</cnf>"], port=port) as server:
        up = run_cli(*args)
        assert server.count == 1  # the failed call was not replayed from a checkpoint or the cache: it was sent
    assert up["status"] == "accepted" and up["failure"] is None and up["metrics"]["f1"] == 1.0


def test_a_503_then_an_answer_is_one_call_retried(tmp_path):
    with LoopbackLLM([Reply(status=503, error="busy"), f"<cnf>\n{ONE_HOT}</cnf>"]) as server:
        summary = run_cli("--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path))
        assert server.count == 2
    assert summary["status"] == "accepted" and summary["llm_calls"] == 1 and summary["metrics"]["f1"] == 1.0


def test_accepted_is_printed_with_its_relation_f1_and_oracle_test(tmp_path):
    at_least_one = "<cnf>\np cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0\n</cnf>"
    with LoopbackLLM([at_least_one]) as server:
        result = runner.invoke(
            app, ["run", "--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path)]
        )
    assert result.exit_code == 0, result.output
    # 1023 models against the ground truth's 10: precision 10/1023, recall 1
    f1 = 2 * (10 / 1023) / (10 / 1023 + 1)
    assert (
        "outcome: accepted (the formula parsed and passed the syntax checks; oracle test failed; "
        f"relation permissive, F1 {f1:.4f})"
    ) in " ".join(result.stdout.split())  # the console wraps long lines


def test_trace_command_shows_the_repair_loop(tmp_path):
    answers = ["<cnf>\np cnf 10 1\n1 2 zebra 0\n</cnf>", "[[OK]]"]
    with LoopbackLLM(answers) as server:
        run_cli("--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "r"))
    shown = runner.invoke(app, ["trace", str(tmp_path)])
    assert shown.exit_code == 0
    assert "round 1 [syntax]:" in shown.output and "→ answered ok; next check: rejected (ok_on_error)" in " ".join(
        shown.output.split()
    )
    data = json.loads(runner.invoke(app, ["trace", str(tmp_path / "r"), "--json"]).output)
    assert data["taxonomy"] == [
        {"format": "dimacs", "model": data["attempts"][0]["model"], "error_kind": "syntax", "count": 1}
    ]


def test_bad_options_are_one_line_errors(tmp_path):
    for args, needle in [
        (["--task", "sushi", "--format", "prolog"], "unknown format"),
        (["--task", "sushi", "--policy", "magic"], "unknown policy"),
        (["--task", "nope"], "unknown task"),
        (["--task", "sushi", "--llm", "ftp://x"], "accepted forms"),
    ]:
        result = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "x")])
        assert result.exit_code == 1 and needle in result.output and "Traceback" not in result.output, args


def test_replay_of_a_recorded_trace_reproduces_the_run(tmp_path):
    answers = ["<cnf>\np cnf 10 1\n1 2 zebra 0\n</cnf>", f"[[FIXED]]\n<cnf>\n{ONE_HOT}</cnf>"]
    with LoopbackLLM(answers) as server:
        recorded = run_cli(
            "--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "a")
        )
    replayed = run_cli(
        "--task",
        "fashion",
        "--format",
        "dimacs",
        "--llm",
        f"replay:{tmp_path / 'a' / 'trace.jsonl'}",
        "--out",
        str(tmp_path / "b"),
    )
    assert (tmp_path / "a" / "formula.cnf").read_text() == (tmp_path / "b" / "formula.cnf").read_text()
    assert replayed["metrics"] == recorded["metrics"] and replayed["repair_rounds"] == recorded["repair_rounds"] == 1


def test_two_answers_in_a_row_cut_by_the_token_budget_end_the_attempt_with_advice(tmp_path):
    cut = [
        # each stops inside a literal: nothing an autofix can close
        Reply("<think>The clauses.</think>\n<cnf>\np cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n-1 -", finish_reason="length"),
        Reply("[[FIXED]]\n<cnf>\np cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n-1 -2 0\n-1 -", finish_reason="length"),
        f"[[FIXED]]\n<cnf>\n{ONE_HOT}</cnf>",  # never asked for: a third answer would be cut as well
    ]
    with LoopbackLLM(cut) as server:
        summary = run_cli(
            "--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path),
            "--max-tokens", "300",
        )  # fmt: skip
        assert server.count == 2 and server.requests[0]["json"]["max_tokens"] == 300
    assert summary["status"] == "rejected" and summary["failure"] == "token_budget"
    assert summary["repair_rounds"] == 1 and "raise --max-tokens" in summary["reason"]
    assert "(300 tokens)" in summary["reason"]


@pytest.mark.parametrize("fmt", ["dimacs", "nat"])
def test_an_answer_the_token_budget_stopped_is_not_scored_even_when_what_was_kept_parses(tmp_path, fmt):
    """Stopped after a whole line: what was kept parses (autofix closes the block), but it is not the
    formula the model meant. It goes back to the model as a token-budget error; the full answer is scored."""
    first_line = {"dimacs": "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n-1 -2 0\n", "nat": "tshirt_top | trouser\n"}[fmt]
    whole = {"dimacs": ONE_HOT, "nat": None}[fmt]
    tag = {"dimacs": "cnf", "nat": "nat"}[fmt]
    answers = [Reply(f"<{tag}>\n{first_line}", finish_reason="length")]
    if whole:
        answers.append(f"[[FIXED]]\n<cnf>\n{whole}</cnf>")
    else:
        answers.append(Reply(f"[[FIXED]]\n<nat>\n{first_line}", finish_reason="length"))
    with LoopbackLLM(answers) as server:
        summary = run_cli("--task", "fashion", "--format", fmt, "--llm", server.spec(), "--out", str(tmp_path))
        assert server.count == 2
    trace = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    errors = [e for e in trace if e.get("event") == "syntax_error"]
    assert errors and errors[0]["kind"] == "token_budget" and "stopped at the token budget" in errors[0]["message"]
    if whole:
        assert summary["accepted"] and summary["metrics"]["f1"] == 1.0 and summary["repair_rounds"] == 1
    else:  # cut twice in a row: rejected as token_budget, nothing scored
        assert summary["status"] == "rejected" and summary["failure"] == "token_budget"
        assert summary["metrics"] is None
