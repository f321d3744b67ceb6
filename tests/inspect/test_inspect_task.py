"""The Inspect task package (graph/inspect_task.py) run for real through Inspect's own ``eval()`` and
``inspect eval`` command: its F1 equals ``autonesy-agent score`` on the same answer.

The task is fashion (ten class variables, exactly one true: 10 models of 2^10). Expected scores are
reasoned from that: the ground truth itself scores 1; "at most one" alone admits the 10 models and
the empty assignment (11 models: TP 10, FP 1, FN 0), so precision 10/11, recall 1, F1 20/21."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai._util.error import PrerequisiteError  # noqa: E402
from inspect_ai.log import EvalSample, list_eval_logs, read_eval_log  # noqa: E402
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from autonesy.agents.prompts import formalizer_prompt  # noqa: E402
from autonesy.graph.cli import app  # noqa: E402
from autonesy.graph.inspect_task import settings  # noqa: E402
from autonesy.tasks.registry import TASK_NAMES, load_task  # noqa: E402
from autonesy.tools.options import FORMATS  # noqa: E402

NAMES = ["tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
AT_MOST_ONE = "\n".join(f"NOT ({a} AND {b})" for i, a in enumerate(NAMES) for b in NAMES[i + 1 :])
CORRECT = f"<cnf>\n{' OR '.join(NAMES)}\n{AT_MOST_ONE}\n</cnf>"
PERMISSIVE = f"<cnf>\n{AT_MOST_ONE}\n</cnf>"
DOUBLE_AND = "<cnf>\ntshirt_top AND AND trouser\n</cnf>"  # no autofix repairs it
UNCLOSED = "<cnf>\n(tshirt_top OR trouser\n</cnf>"


def _output(text: str) -> ModelOutput:
    output = ModelOutput.from_content("mockllm/model", text)
    output.usage = ModelUsage(
        input_tokens=100, output_tokens=10, total_tokens=110
    )  # mockllm's own count needs a download
    return output


def _mock_model():
    """Answers by the prompt it is sent: each setting's formalizer prompt gets its answer; the repair
    agent, shown one of the two syntax errors, answers [[OK]] to the first and fixes the second."""
    task = load_task("fashion")
    first = {
        formalizer_prompt(task, "nat", "zs", "detailed").user: CORRECT,
        formalizer_prompt(task, "nat", "zs", "not-detailed").user: PERMISSIVE,
        formalizer_prompt(task, "nat", "zs-cot", "detailed").user: DOUBLE_AND,
        formalizer_prompt(task, "nat", "zs-cot", "not-detailed").user: UNCLOSED,
    }

    def answer(messages: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
        question = messages[-1].text
        if question in first:
            return _output(first[question])
        if "tshirt_top AND AND trouser" in question:
            return _output("[[OK]]")
        if "(tshirt_top OR trouser" in question:
            return _output(f"[[FIXED]]\n{CORRECT}")
        raise AssertionError(f"unexpected prompt: {question[:200]}")

    return get_model("mockllm/model", custom_outputs=answer)


def _scored(sample: EvalSample) -> tuple[Any, dict[str, Any]]:
    """The model-count score's value and metadata of a sample."""
    assert sample.scores is not None
    score = sample.scores["model_count"]
    return score.value, score.metadata or {}


def _cli_score(tmp_path: Path, answer: str):
    path = tmp_path / "answer.txt"
    path.write_text(answer)
    return CliRunner().invoke(app, ["score", str(path), "--task", "fashion", "--format", "nat", "--json"])


def test_inspect_scores_equal_the_cli_score_and_the_repair_loop_runs(tmp_path):
    [log] = inspect_eval(
        "autonesy/formalize",
        task_args={"task": "fashion", "format": "nat", "prompt": "zs,zs-cot", "detail": "all"},
        model=_mock_model(),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    samples = {sample.id: sample for sample in log.samples or []}
    assert set(samples) == {
        f"fashion/nat/{prompt}/{detail}" for prompt in ("zs", "zs-cot") for detail in ("detailed", "not-detailed")
    }
    scores = {key: _scored(sample) for key, sample in samples.items()}

    correct, permissive = scores["fashion/nat/zs/detailed"], scores["fashion/nat/zs/not-detailed"]
    assert correct[0] == {"f1": 1.0, "precision": 1.0, "recall": 1.0}
    assert correct[1]["relation"] == "equal"
    value, meta = permissive
    assert value == pytest.approx({"f1": 20 / 21, "precision": 10 / 11, "recall": 1.0})
    assert [meta[key] for key in ("relation", "tp", "fp", "fn", "tn", "exact")] == ["permissive", 10, 1, 0, 1013, True]
    for answer, (value, meta) in ((CORRECT, correct), (PERMISSIVE, permissive)):
        cli = _cli_score(tmp_path, answer)
        assert cli.exit_code == 0, cli.output
        data = json.loads(cli.output)
        assert value == {"f1": data["f1"], "precision": data["precision"], "recall": data["recall"]}
        assert meta["relation"] == data["relation"]

    # a syntax error the repair agent calls [[OK]]: rejected, scored 0, the checker's error as metadata
    value, meta = scores["fashion/nat/zs-cot/detailed"]
    assert value == {"f1": 0.0, "precision": 0.0, "recall": 0.0}
    assert "unexpected 'AND'" in meta["syntax_error"]
    assert (meta["attempt"]["status"], meta["attempt"]["failure"], meta["attempt"]["repair_rounds"]) == (
        "rejected",
        "ok_on_error",
        1,
    )
    cli = _cli_score(tmp_path, DOUBLE_AND)
    assert cli.exit_code != 0
    assert meta["syntax_error"] in " ".join(cli.output.split())

    # a syntax error the repair agent fixes: the fixed formula is the answer, scored as the ground truth
    value, meta = scores["fashion/nat/zs-cot/not-detailed"]
    assert value == {"f1": 1.0, "precision": 1.0, "recall": 1.0}
    assert (meta["attempt"]["status"], meta["attempt"]["repair_rounds"]) == ("accepted", 1)
    assert [m.role for m in samples["fashion/nat/zs-cot/not-detailed"].messages] == ["system", "user", "assistant"]

    assert log.results is not None
    f1 = next(score for score in log.results.scores if score.name == "f1")
    assert f1.metrics["mean"].value == pytest.approx((1 + 20 / 21 + 0 + 1) / 4)
    # the loop in Inspect's transcript: the formalizer's call, the checker's error, the repair call, its verdict
    steps = [
        "model" if e.event == "model" else e.source
        for e in samples["fashion/nat/zs-cot/detailed"].events
        if e.event == "model" or (e.event == "info" and (e.source or "").startswith("autonesy/"))
    ]
    assert steps == ["model", "autonesy/syntax_error", "model", "autonesy/repair_round"]
    events = samples["fashion/nat/zs-cot/detailed"].events
    [verdict] = [e.data for e in events if e.event == "info" and e.source == "autonesy/repair_round"]
    assert (verdict["verdict"], verdict["error_kind"]) == ("ok", "syntax")


def test_inspect_eval_command_runs_on_an_openai_compatible_endpoint(tmp_path):
    """The command of docs/inspect.md, as a user runs it, against a real HTTP endpoint."""
    with LoopbackLLM([CORRECT]) as server:
        env = {**os.environ, "LOOPBACK_BASE_URL": server.base_url, "LOOPBACK_API_KEY": "sk-loopback"}
        command = [
            *(str(Path(sys.executable).with_name("inspect")), "eval", "autonesy/formalize"),
            *("-T", "task=fashion", "-T", "format=nat", "-T", "prompt=zs"),
            *("--model", "openai-api/loopback/test-model", "--log-dir", str(tmp_path), "--display", "plain"),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        sent = server.requests[0]["json"]["messages"]
    prompt = formalizer_prompt(load_task("fashion"), "nat", "zs", "detailed")
    assert [(m["role"], m["content"]) for m in sent] == [("system", prompt.system), ("user", prompt.user)]
    [info] = list_eval_logs(str(tmp_path))
    [sample] = read_eval_log(info).samples or []
    assert _scored(sample)[0]["f1"] == 1.0


@pytest.mark.parametrize(
    ("task_args", "message"),
    [
        ({"task": "fashion,nosuch"}, "unknown task 'nosuch'"),
        ({"task": "fashion", "format": "latex"}, "unknown format 'latex'"),
        ({"task": "fashion", "prompt": "cot"}, "unknown prompt style 'cot'"),
        ({"task": "fashion", "detail": "terse"}, "unknown detail level 'terse'"),
        ({"task": "fashion", "detail": 1}, "unknown detail level '1'"),  # -T detail=1 arrives as a number
        ({"task": "fashion", "max_repairs": "two"}, "max_repairs must be a whole number"),
        ({"task": "fashion", "policy": "vote"}, "unknown policy 'vote'"),
    ],
)
def test_an_unknown_choice_is_one_clear_error(tmp_path, task_args, message):
    with pytest.raises(PrerequisiteError, match=message):
        inspect_eval(
            "autonesy/formalize", task_args=task_args, model=_mock_model(), display="none", log_dir=str(tmp_path)
        )


def test_samples_are_tasks_times_settings():
    grid = settings("chx,fashion", "all", "zs", "not-detailed")
    assert [(s.task, s.format) for s in grid] == [(t, f) for t in ("chx", "fashion") for f in FORMATS]
    assert {(s.prompt, s.detail) for s in grid} == {("zs", "not-detailed")}
    assert settings(["fashion", "chx"], "nat", "zs", "detailed") == settings("fashion,chx", "nat", "zs", "detailed")
    everything = settings("all", "all", "all", "all")
    assert len(everything) == len(TASK_NAMES) * len(FORMATS) * 2 * 2 == 18 * 5 * 4


def test_an_endpoint_failure_is_the_samples_error_never_a_score(tmp_path):
    def refuse(messages, tools, tool_choice, config):
        raise ConnectionError("the endpoint is down")

    [log] = inspect_eval(
        "autonesy/formalize",
        task_args={"task": "fashion", "format": "nat", "prompt": "zs"},
        model=get_model("mockllm/model", custom_outputs=refuse),
        display="none",
        log_dir=str(tmp_path),
        fail_on_error=False,
        retry_on_error=0,
    )
    [sample] = log.samples or []
    assert "the endpoint is down" in str(sample.error)
    assert not sample.scores


def test_importing_autonesy_and_its_cli_loads_no_inspect():
    code = "import sys, autonesy, autonesy.graph.cli; print('inspect_ai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_task_without_ground_truth_is_unscored_not_zero(tmp_path):
    task_file = tmp_path / "either.toml"
    task_file.write_text(
        'name = "either"\n[[variables]]\nname = "a"\nmeaning = "a holds"\n[[variables]]\nname = "b"\n'
        'meaning = "b holds"\n[descriptions]\ndetailed = "At least one of a and b holds."\nnot_detailed = "a or b."\n'
    )
    model = get_model("mockllm/model", custom_outputs=lambda *_: _output("<cnf>\na OR b\n</cnf>"))
    [log] = inspect_eval(
        "autonesy/formalize",
        task_args={"task": str(task_file), "format": "nat", "prompt": "zs"},
        model=model,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    [sample] = log.samples or []
    assert sample.error is None and not sample.scores
    notes = [e.data for e in sample.events if e.event == "info"]
    assert "unscored: task 'either' has no ground truth" in notes
