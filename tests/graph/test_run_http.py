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


def run_cli(*args):
    result = runner.invoke(app, ["run", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


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
    "reply, kind",
    [(Reply(status=500, error="boom"), "http_error"), (Reply(content=""), "empty"), (Reply(delay_s=3), "deadline")],
)
def test_endpoint_failures_are_recorded_errors(tmp_path, reply, kind):
    with LoopbackLLM([reply]) as server:
        summary = run_cli(
            "--task",
            "sushi",
            "--format",
            "nat",
            "--llm",
            server.spec(),
            "--out",
            str(tmp_path / "r"),
            "--llm-timeout",
            "1",
        )
    assert summary["status"] == "rejected" and f"LLM error ({kind})" in summary["reason"]
    trace = (tmp_path / "r" / "trace.jsonl").read_text()
    assert f'"kind": "{kind}"' in trace


def test_refused_endpoint(tmp_path):
    spec = f"http://127.0.0.1:{unused_loopback_port()}/v1@m"
    summary = run_cli("--task", "sushi", "--format", "nat", "--llm", spec, "--out", str(tmp_path / "r"))
    assert summary["status"] == "rejected" and "LLM error (refused)" in summary["reason"]


def test_trace_command_shows_the_repair_loop(tmp_path):
    answers = ["<cnf>\np cnf 10 1\n1 2 zebra 0\n</cnf>", "[[OK]]"]
    with LoopbackLLM(answers) as server:
        run_cli("--task", "fashion", "--format", "dimacs", "--llm", server.spec(), "--out", str(tmp_path / "r"))
    shown = runner.invoke(app, ["trace", str(tmp_path)])
    assert shown.exit_code == 0
    assert "round 1: [syntax]" in shown.output and "→ ok" in shown.output and "rejected" in shown.output
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
