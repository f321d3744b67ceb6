"""The verifier's command line: exit codes, one-line errors, JSON shapes, files, the oracle self-test."""

import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("vifbench")
    result = invoke("vifbench", "generate", "--out", out, "--count", 2, "--seed", 5, "--json")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "vifbench.jsonl").read_text().splitlines()]
    return out, json.loads(result.output), records


def test_generate_writes_balanced_labelled_pairs(data, tmp_path):
    out, summary, records = data
    assert summary["pairs"] == 2 and summary["sources"] == {"offline-writer": 2}
    assert summary["distribution"]["all"]["sat"] == summary["distribution"]["all"]["unsat"] == 1
    assert json.loads((out / "stats.json").read_text())["distribution"] == summary["distribution"]
    for rec in records:
        assert {"id", "instruction", "output", "verdict", "labels", "constraints", "formula", "group"} <= set(rec)
    again = invoke("vifbench", "generate", "--out", tmp_path / "again", "--count", 2, "--seed", 5)
    assert again.exit_code == 0 and "labelled pairs" in again.output and "(paper 391/429)" in again.output
    assert (tmp_path / "again" / "vifbench.jsonl").read_text() == (out / "vifbench.jsonl").read_text()


def test_eval_with_the_oracle_reproduces_the_labels(data, tmp_path):
    out, _, _ = data
    result = invoke(
        "vifbench",
        "eval",
        "--data",
        out,
        "--verifier",
        "nsvif",
        "--verifier",
        "judge",
        "--llm",
        f"oracle:{out / 'vifbench.jsonl'}",
        "--out",
        tmp_path / "eval",
        "--json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert set(report["verifiers"]) == {"nsvif", "judge"}
    for scores in report["verifiers"].values():
        assert scores["overall"]["f1"] == 1.0 and scores["overall"]["pass_at_1"] == 1.0
    text = (tmp_path / "eval" / "report.md").read_text()
    assert "nsvif: canned answers from scripted@vifbench-oracle" in text
    cost = (tmp_path / "eval" / "table-cost.csv").read_text().splitlines()
    assert [line.split(",")[:2] for line in cost[1:]] == [["nsvif", "canned"], ["judge", "canned"]]
    shown = invoke("trace", tmp_path / "eval")
    assert shown.exit_code == 0 and "vifbench-eval" in shown.output and "F1 100.0" in shown.output


def test_verify_exit_codes_follow_the_verdict(data, tmp_path):
    out, _, records = data
    for rec in records:
        (tmp_path / "instruction.txt").write_text(rec["instruction"])
        (tmp_path / "output.txt").write_text(rec["output"])
        result = invoke(
            "verify",
            "--instruction",
            tmp_path / "instruction.txt",
            "--output",
            tmp_path / "output.txt",
            "--llm",
            f"oracle:{out / 'vifbench.jsonl'}",
            "--out",
            tmp_path / rec["id"],
            "--json",
        )
        assert result.exit_code == {"sat": 0, "unsat": 1}[rec["verdict"]], result.output
        summary = json.loads(result.output)
        assert summary["verdict"] == rec["verdict"]
        assert {c["id"]: c["value"] for c in summary["constraints"]} == rec["labels"]
    text = invoke(
        "verify",
        "--instruction",
        tmp_path / "instruction.txt",
        "--output",
        tmp_path / "output.txt",
        "--llm",
        f"oracle:{out / 'vifbench.jsonl'}",
        "--out",
        tmp_path / "plain",
    )
    assert text.output.startswith(f"{records[-1]['verdict']} · nsvif · scripted@vifbench-oracle")
    assert "Verdict: unsat" in text.output and "files:" in text.output


def test_follow_with_the_oracle_writer(data, tmp_path):
    out, _, records = data
    (tmp_path / "instruction.txt").write_text(records[0]["instruction"])
    result = invoke(
        "follow",
        "--instruction",
        tmp_path / "instruction.txt",
        "--llm",
        f"oracle:{out / 'vifbench.jsonl'}",
        "--out",
        tmp_path / "f",
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["rounds"] == 1 and summary["output"] == records[0]["output"].strip() and summary["budget"] == 5


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--instruction", "missing.txt", "--output", "missing.txt"], "does not exist"),
        (["--verifier", "magic"], "unknown verifier"),
        (["--checkers", "no_such_module_xyz"], "cannot import"),
        (["--llm", "ftp://x"], "accepted forms"),
    ],
)
def test_verify_errors_are_one_line_and_exit_2(tmp_path, args, needle):
    (tmp_path / "i.txt").write_text("Write something.")
    base = ["--instruction", tmp_path / "i.txt", "--output", tmp_path / "i.txt", "--out", tmp_path / "r"]
    result = invoke("verify", *(args + base if args[0] != "--instruction" else args + ["--out", tmp_path / "r"]))
    assert result.exit_code == 2, result.output
    assert needle in result.output and "Traceback" not in result.output


def test_vifbench_errors_exit_1(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    bad = tmp_path / "bad.jsonl"
    result = invoke("vifbench", "eval", "--data", bad, "--llm", f"oracle:{bad}", "--out", tmp_path / "e")
    assert result.exit_code == 1 and "a pair needs id, instruction, output, verdict" in result.output
    # the product has no label-reading model: 'oracle' names no LLM, and no help offers one
    result = invoke("vifbench", "eval", "--data", bad, "--llm", "oracle", "--out", tmp_path / "e")
    assert result.exit_code == 1 and "unknown LLM spec 'oracle'" in result.output
    for command in (("verify",), ("follow",), ("vifbench", "eval"), ("vifbench", "generate")):
        assert "oracle" not in invoke(*command, "--help").output
    result = invoke("vifbench", "eval", "--data", tmp_path / "bad.jsonl", "--verifier", "x", "--out", tmp_path / "e")
    assert result.exit_code == 1 and "unknown verifier 'x'" in result.output


def test_generate_with_an_llm_writer_labels_its_outputs(data, tmp_path):
    out, _, records = data
    result = invoke(
        "vifbench",
        "generate",
        "--out",
        tmp_path / "llm",
        "--count",
        2,
        "--seed",
        5,
        "--llm",
        f"oracle:{out / 'vifbench.jsonl'}",
        "--json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["llm"] == "scripted@vifbench-oracle" and sum(summary["sources"].values()) == 2
    audit = json.loads((tmp_path / "llm" / "stats.json").read_text())["semantic_audit"]  # one output of group 2
    assert audit["sampled_outputs"] == 1 and audit["judged"] == audit["agree"] == 1 and not audit["disagreements"]
    written = [json.loads(line) for line in (tmp_path / "llm" / "vifbench.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in written] == [r["verdict"] for r in records]
    assert [r["labels"] for r in written] == [r["labels"] for r in records]
    for new, old in zip(written, records):
        # each written for what the offline generator's writer was given: the instruction in a sat round, the
        # mutated one (a logic constraint omitted) in an unsat round
        assert new["writer_instruction"] == old["writer_instruction"] and new["source"] == "llm", new["id"]
        assert (new["writer_instruction"] == new["instruction"]) == (new["round"] == "sat")


def test_vifbench_import_ifeval(tmp_path):
    result = invoke("vifbench", "import", "ifeval", "--out", tmp_path / "ifeval")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["pairs"] == 541
    bad = invoke("vifbench", "import", "ifeval", "--out", tmp_path / "x", "--source", tmp_path / "missing.jsonl")
    assert bad.exit_code == 1 and "cannot read the IFEval data" in bad.output and "Traceback" not in bad.output
