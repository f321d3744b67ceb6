"""`vifbench eval` against a real OpenAI-compatible server on 127.0.0.1: the paper's tables, the cost counted from
the server's own usage, and no label read before scoring.

The server's answers come from a naive handler that reads only the prompts: every line of an instruction is a
constraint (semantic when it names a topic or a tone), the formula their conjunction, keyword lines get a
string-inclusion checker and other logic lines a non-empty-text checker, and every judge says satisfied. It is
plumbing, not a model: what it proves is how the command counts, lays out and resumes, not how good a verifier is.
"""

import csv
import json
import re

import pytest
from loopback_llm import LoopbackLLM, Reply
from typer.testing import CliRunner

from autonesy.agents.verify import role_of
from autonesy.agents.verify.prompts import SATISFIED
from autonesy.graph.cli import app

runner = CliRunner()
VERIFIERS = ("nsvif", "nsvif-neu", "judge")
GROUPS = ("2", "3", "4", "5")  # two pairs each: the first eight of VifBench's groups 2-5
SEMANTIC = re.compile(r"\b(topic|tone)\b")


def _fenced(code: str, accept: str, reject: str) -> str:
    return f"```python\n{code}```\nexamples: {json.dumps({'accept': [accept], 'reject': [reject]})}"


def _checker(summary: str) -> str:
    """A plausible checker for one constraint, from its wording only."""
    found = re.match(r"(Include|Exclude) these keywords.*: (.+)$", summary)
    if found:
        keywords = [k.strip() for k in found.group(2).split(",") if k.strip()]
        wanted = "all" if found.group(1) == "Include" else "not any"
        code = (
            f"KEYWORDS = {keywords!r}\n\n\ndef check(response):\n"
            f"    return {wanted}(k.lower() in response.lower() for k in KEYWORDS)\n"
        )
        present, absent = " ".join(keywords), "nothing of the kind"
        return _fenced(code, *((present, absent) if wanted == "all" else (absent, present)))
    return _fenced("def check(response):\n    return len(response.split()) > 0\n", "Some words.", "")


def naive(messages: list[dict[str, str]]) -> str:
    """Answers any verifier role from the prompt text alone (no labels, no reference checkers)."""
    role, user = role_of(messages), messages[-1]["content"]
    if role == "formulation":
        instruction = user.rsplit("<instruction>\n", 1)[1].split("\n</instruction>", 1)[0]
        lines = [line.strip() for line in instruction.splitlines() if line.strip()]
        kinds = ["semantic" if SEMANTIC.search(line) else "logic" for line in lines]
        listed = "\n".join(f"C{i} [{kind}]: {line}" for i, (kind, line) in enumerate(zip(kinds, lines), start=1))
        formula = "\n".join(f"C{i}" for i in range(1, len(lines) + 1))
        return f"<constraints>\n{listed}\n</constraints>\n<formula>\n{formula}\n</formula>"
    if role == "checker":
        block = user.split("## Constraints\n", 1)[1].split("\n\n", 1)[0]
        found = re.findall(r"^(C[0-9]+): (.*)$", block, re.MULTILINE)
        return "\n".join(f"### {cid}\n{_checker(summary)}" for cid, summary in found)
    if role == "judge":
        block = user.split("## Constraints\n", 1)[1].split("\n\n", 1)[0]
        return "\n".join(f"{cid}: it reads as asked. {SATISFIED}" for cid in re.findall(r"^(C[0-9]+): ", block, re.M))
    return f"Every requirement looks met. {SATISFIED}"  # the whole-instruction judges


def served(body: dict) -> Reply:
    """The answer with the server's own token counts: words of the prompt and of the answer."""
    text = naive(body["messages"])
    prompt = sum(len(m["content"].split()) for m in body["messages"])
    return Reply(content=text, prompt_tokens=prompt, completion_tokens=len(text.split()))


def _eval(data, out, server: LoopbackLLM, verifiers: tuple[str, ...]):
    result = runner.invoke(
        app,
        ["vifbench", "eval", "--data", str(data), "--verifier", ",".join(verifiers)]
        + ["--llm", server.spec(), "--out", str(out), "--json"],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _log(server: LoopbackLLM) -> list[dict]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


def _csv(path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("vifbench")
    made = runner.invoke(app, ["vifbench", "generate", "--out", str(root / "all"), "--count", "18", "--json"])
    assert made.exit_code == 0, made.output
    records = [json.loads(line) for line in (root / "all" / "vifbench.jsonl").read_text().splitlines()]
    records = [r for r in records if r["group"] in GROUPS]
    assert [r["group"] for r in records] == [g for g in GROUPS for _ in range(2)]
    (root / "vifbench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    flipped = [
        {
            **r,
            "verdict": "unsat" if r["verdict"] == "sat" else "sat",
            "labels": {cid: not value for cid, value in r["labels"].items()},
        }
        for r in records
    ]
    (root / "flipped.jsonl").write_text("".join(json.dumps(r) + "\n" for r in flipped))
    return root, records


def test_eval_tables_count_what_the_server_counted_and_never_read_the_labels(data, tmp_path):
    root, records = data
    logs = {}
    with LoopbackLLM(served) as server:
        # one verifier at a time into the same directory: each run resumes the rows already there, so each
        # verifier's requests are the ones the server logged during its own run
        for upto in range(1, len(VERIFIERS) + 1):
            # the judge's first request fails once (HTTP 503) and is retried: one failed request
            server.reset([Reply(status=503, error="busy"), served] if VERIFIERS[upto - 1] == "judge" else served)
            report = _eval(root / "vifbench.jsonl", tmp_path / "eval", server, VERIFIERS[:upto])
            logs[VERIFIERS[upto - 1]] = _log(server)
        assert {role_of(r["json"]["messages"]) for r in logs["judge"]} == {"holistic_judge"}  # nothing else re-ran
        server.reset(served)
        flipped = _eval(root / "flipped.jsonl", tmp_path / "flipped", server, VERIFIERS)
        flipped_log = _log(server)
        server.reset(served)
        _eval(root / "vifbench.jsonl", tmp_path / "alone", server, ("nsvif-neu",))  # no earlier verifier's cache
        alone_log = _log(server)

    out = tmp_path / "eval"
    # cost: calls and tokens equal the server's own log, per verifier; all answers came from a server
    cost = {row["verifier"]: row for row in _csv(out / "table-cost.csv")}
    assert list(cost) == list(VERIFIERS)
    for verifier, log in logs.items():
        answered = [r for r in log if "usage" in r]
        assert answered, verifier
        row = cost[verifier]
        assert int(row["LLM calls"]) == len(answered), verifier
        assert int(row["failed requests"]) == len(log) - len(answered) == (verifier == "judge"), verifier
        assert int(row["prompt tokens"]) == sum(r["usage"]["prompt_tokens"] for r in answered), verifier
        assert int(row["completion tokens"]) == sum(r["usage"]["completion_tokens"] for r in answered), verifier
        assert row["answers"] == "model" and row["calls without usage"] == "0"
    # nsvif-neu's formulations were cached from nsvif's in the shared run; alone, it sends them: the cost of a
    # verifier alone is its calls + cached calls and tokens + cached tokens
    alone = _csv(tmp_path / "alone" / "table-cost.csv")[0]
    assert int(alone["LLM calls"]) == len(alone_log) and alone["cached calls"] == "0"
    tokens = sum(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"] for r in alone_log)
    assert int(alone["prompt tokens"]) + int(alone["completion tokens"]) == tokens
    shared = cost["nsvif-neu"]
    assert int(shared["cached calls"]) > 0
    assert int(shared["LLM calls"]) + int(shared["cached calls"]) == len(alone_log)
    shared_tokens = sum(int(shared[k]) for k in ("prompt tokens", "completion tokens", "cached tokens"))
    assert shared_tokens == tokens
    # the layout: one row per verifier, one column group (seven columns) per complexity group present
    groups = _csv(out / "table-groups.csv")
    assert [row["verifier"] for row in groups] == list(VERIFIERS)
    assert list(groups[0])[1:] == [
        f"{g} constraints {name}" for g in GROUPS for name in ("F1 %", "P %", "R %", "pass@1 %", "FP #", "FN #", "n")
    ]
    assert all(row[f"{g} constraints n"] == "2" for row in groups for g in GROUPS)
    judge = next(row for row in groups if row["verifier"] == "judge")  # always sat: accuracy = the sat share
    for g in GROUPS:
        in_group = [r for r in records if r["group"] == g]
        sat_share = 100 * sum(r["verdict"] == "sat" for r in in_group) / len(in_group)
        assert float(judge[f"{g} constraints pass@1 %"]) == round(sat_share, 2)
    text = (out / "report.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| verifier | 2 constraints"))
    assert header == "| verifier | " + " | ".join(f"{g} constraints" for g in GROUPS) + " |"
    assert "canned" not in text
    overall = {row["verifier"]: row for row in _csv(out / "table-verifiers.csv")}
    assert list(overall) == list(VERIFIERS)
    # the whole-instruction judge always says sat: recall 100, FP = the unsat pairs, FN 0 (read off the data)
    unsat = sum(r["verdict"] == "unsat" for r in records)
    assert overall["judge"]["FP #"] == str(unsat) and overall["judge"]["FN #"] == "0"
    assert float(overall["judge"]["recall %"]) == 100.0

    # labels flipped: the same requests reach the server and the same verdicts come out; only the scores move
    def sent(log):
        return sorted(json.dumps(r["json"]["messages"], sort_keys=True) for r in log if "usage" in r)

    assert sent(flipped_log) == sent([r for log in logs.values() for r in log])
    for verifier in VERIFIERS:
        mine = {r["id"]: r["predicted"] for r in map(json.loads, (out / f"results-{verifier}.jsonl").open())}
        theirs = {
            r["id"]: r["predicted"]
            for r in map(json.loads, (tmp_path / "flipped" / f"results-{verifier}.jsonl").open())
        }
        assert mine == theirs, verifier
        a, b = report["verifiers"][verifier]["overall"], flipped["verifiers"][verifier]["overall"]
        assert (b["tp"], b["fp"], b["fn"], b["tn"]) == (a["fp"], a["tp"], a["tn"], a["fn"]), verifier
