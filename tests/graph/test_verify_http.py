"""`verify` through the real langchain-openai client over HTTP to a loopback OpenAI-compatible server."""

import json

from loopback_llm import LoopbackLLM, Reply
from scripted_llm import INSTRUCTION, NO_LANTERN, SAT, ScriptedRoles
from typer.testing import CliRunner

from autonesy.graph.cli import app

SECRET = "sk-live-VERIFY-SECRET-123456789"
runner = CliRunner()


def test_verify_over_http_sat_unsat_and_no_key_anywhere(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    (tmp_path / "instruction.txt").write_text(INSTRUCTION)
    roles = ScriptedRoles()
    with LoopbackLLM(
        lambda body: Reply(content=roles(body["messages"]), prompt_tokens=100, completion_tokens=20)
    ) as server:
        for name, output, code in (("sat", SAT, 0), ("unsat", NO_LANTERN, 1)):
            (tmp_path / f"{name}.txt").write_text(output)
            result = runner.invoke(
                app,
                [
                    "verify",
                    "--instruction",
                    str(tmp_path / "instruction.txt"),
                    "--output",
                    str(tmp_path / f"{name}.txt"),
                    "--llm",
                    server.spec(),
                    "--out",
                    str(tmp_path / name),
                    "--json",
                ],
            )
            assert result.exit_code == code, result.output
            summary = json.loads(result.output)
            assert summary["verdict"] == name and summary["llm_calls"] == 3
            assert summary["prompt_tokens"] == 300 and summary["completion_tokens"] == 60
        assert server.count == 6
        sent = [r["json"]["messages"] for r in server.requests]
        assert all(m[0]["role"] == "system" for m in sent)
        # the response reaches the server only inside judge prompts, verbatim
        for messages in sent:
            if NO_LANTERN in messages[-1]["content"]:
                assert messages[0]["content"].startswith("You are a careful judge")
        assert {r["json"]["model"] for r in server.requests} == {"test-model"}
    unsat = json.loads((tmp_path / "unsat" / "summary.json").read_text())
    assert unsat["decision"]["violated"] == [{"id": "C1", "value": False}]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    shown = runner.invoke(app, ["trace", str(tmp_path / "unsat")])
    assert shown.exit_code == 0 and "unsat" in shown.output and "LLM calls: 3" in shown.output


def test_an_endpoint_failure_is_exit_2(tmp_path):
    (tmp_path / "instruction.txt").write_text(INSTRUCTION)
    (tmp_path / "output.txt").write_text(SAT)
    with LoopbackLLM([Reply(status=400, error="bad model")]) as server:
        result = runner.invoke(
            app,
            [
                "verify",
                "--instruction",
                str(tmp_path / "instruction.txt"),
                "--output",
                str(tmp_path / "output.txt"),
                "--llm",
                server.spec(),
                "--out",
                str(tmp_path / "r"),
                "--json",
            ],
        )
    assert result.exit_code == 2, result.output
    summary = json.loads(result.output)
    assert summary["status"] == "error" and "LLM error (bad_request)" in summary["reason"]
