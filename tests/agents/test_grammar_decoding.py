"""Grammar-constrained decoding through the real request path: the grammar each server dialect
receives (over HTTP, through langchain-openai), the JSON-schema fallback, the trace record, the
repair loop for what a grammar cannot rule out, and the few-shot policy."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from loopback_llm import LoopbackLLM
from typer.testing import CliRunner

from autonesy.agents.llm import LLMError, LLMResponse, backend_from_spec
from autonesy.agents.llm.chat import ChatBackend
from autonesy.agents.llm.guided import answer_text, check_decoding, guided_params
from autonesy.agents.llm.registry import DEFAULT_MAX_TOKENS
from autonesy.agents.policies import (
    GRAMMAR_CHAIN,
    GRAMMAR_DEPTH,
    TOKENS_PER_LINE,
    AttemptSpec,
    example_tasks,
    make_policy,
)
from autonesy.graph.cli import app
from autonesy.graph.run import RunConfig, RunError, run_attempt
from autonesy.graph.trace import read_trace
from autonesy.tasks.reference import reference_source
from autonesy.tasks.registry import load_task
from autonesy.tools.formats import convert
from autonesy.tools.grammar import FORMATS, answer_grammar, repair_grammar, to_gbnf
from autonesy.tools.grammar.recognize import Recognizer
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM a ready backend stands for

runner = CliRunner()
BOUNDS = dict(max_depth=GRAMMAR_DEPTH, max_chain=GRAMMAR_CHAIN, comments=False)  # what the policies decode with


class Recorded(ChatBackend):
    """A backend that answers from a script and keeps every call's parameters."""

    def __init__(self, answers, dialect="llama.cpp"):
        self.answers, self.calls = list(answers), []
        self.label, self.model, self.endpoint, self.grammar_dialect = "recorded", "fake", "recorded", dialect

    def complete(self, messages, *, cache_salt="", **params):
        self.calls.append({"messages": messages, "params": params})
        return LLMResponse(text=self.answers[len(self.calls) - 1], model="fake", endpoint="recorded")


def test_each_dialect_gets_the_same_grammar_source_in_its_own_field():
    g = answer_grammar("nat", ["a", "b"])
    gbnf = to_gbnf(g)
    assert guided_params("llama.cpp", g) == {"extra_body": {"grammar": gbnf}}
    assert guided_params("vllm", g) == {"extra_body": {"structured_outputs": {"grammar": gbnf}}}
    assert guided_params("vllm-legacy", g) == {"extra_body": {"guided_grammar": gbnf}}
    assert guided_params("sglang", g) == {"extra_body": {"ebnf": gbnf}}
    schema = guided_params("json_schema", g)["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["formula"] and schema["additionalProperties"] is False


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_rendered_grammar_is_what_vllm_and_sglang_read_as_ebnf(fmt):
    """vLLM reads ``structured_outputs.grammar`` as Lark unless a line holds ``::=``, and xgrammar
    (vLLM, SGLang ``ebnf``) starts at the rule ``root``: every rendered line is one ``name ::= …`` rule."""
    names = load_task("warcraft").names
    for grammar in (answer_grammar(fmt, names, reasoning_chars=100, **BOUNDS), repair_grammar(fmt, names, **BOUNDS)):
        lines = [line for line in to_gbnf(grammar).splitlines() if line.strip()]
        assert lines[0].startswith("root ::= ")
        assert all(re.match(r"[a-z][a-z0-9-]* ::= ", line) for line in lines), lines


def test_the_json_schema_fallback_has_the_openai_response_format_shape():
    """``response_format: {type: json_schema, json_schema: {name, schema, strict}}`` (OpenAI; vLLM;
    SGLang's ``JsonSchemaResponseFormat``)."""
    fmt = guided_params("json_schema", answer_grammar("dimacs", ["a", "b"]))["response_format"]
    assert fmt["type"] == "json_schema" and set(fmt["json_schema"]) == {"name", "strict", "schema"}
    assert fmt["json_schema"]["schema"]["type"] == "object"


def test_json_schema_pattern_agrees_with_the_grammar_on_a_reference_answer():
    task = load_task("fashion")
    g = answer_grammar("dimacs", task.names, reasoning_chars=200)
    schema = guided_params("json_schema", g)["response_format"]["json_schema"]["schema"]
    source = reference_source(task, "dimacs")
    assert re.fullmatch(schema["properties"]["formula"]["pattern"], source)
    assert not re.fullmatch(schema["properties"]["formula"]["pattern"], source.replace(" 0\n", " x 0\n", 1))
    text = answer_text("json_schema", json.dumps({"reasoning": "one class", "formula": source}))
    assert convert(text, "dimacs", task.names).ok
    assert answer_text("json_schema", json.dumps({"verdict": "OK", "formula": ""})) == "[[OK]]"
    assert answer_text("json_schema", "not json") == "not json"


def test_a_backend_without_a_dialect_says_so_in_one_line(tmp_path):
    with pytest.raises(LLMError) as info:
        check_decoding("grammar", "none", "http://127.0.0.1:9/v1@m")
    assert "\n" not in str(info.value) and "--decoding free" in str(info.value)
    check_decoding("free", "none", "x")  # free decoding needs nothing
    backend = backend_from_spec("http://127.0.0.1:9/v1@m")
    assert backend.grammar_dialect == "none"
    with pytest.raises(RunError, match="supports no grammar"):
        run_attempt(
            RunConfig(task="fashion", format="nat", llm=LLMSpec.parse("http://127.0.0.1:9/v1@m"), decoding="grammar"),
            tmp_path / "r",
            backend=backend,
        )
    assert not (tmp_path / "r" / "config.json").exists()


def test_decoding_defaults_to_grammar_for_the_embedded_model_only():
    assert RunConfig(task="fashion", llm=LLMSpec.parse("local")).resolved(has_data=True).decoding == "grammar"
    assert RunConfig(task="fashion", llm=LLMSpec.parse("http://h:1/v1@m")).resolved(has_data=True).decoding == "free"
    assert RunConfig(task="fashion", policy="expert").resolved(has_data=True).decoding == "free"
    with pytest.raises(RunError, match="unknown decoding"):
        RunConfig(task="fashion", llm=LLMSpec.parse("local"), decoding="beam").resolved(has_data=True)


@pytest.mark.parametrize(
    "dialect, field", [("llama.cpp", ("grammar",)), ("vllm", ("structured_outputs", "grammar")), ("sglang", ("ebnf",))]
)
def test_the_grammar_travels_in_the_http_body(tmp_path, dialect, field):
    task = load_task("fashion")
    answer = f"<cnf>\n{reference_source(task, 'nat')}</cnf>"
    with LoopbackLLM([answer]) as server:
        config = tmp_path / "llm.toml"
        config.write_text(f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\ngrammar = "{dialect}"\n')
        result = runner.invoke(
            app,
            [
                "run",
                "--task",
                "fashion",
                "--format",
                "nat",
                "--prompt",
                "zs",
                "--llm",
                str(config),
                "--decoding",
                "grammar",
                "--out",
                str(tmp_path / "r"),
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        body = server.requests[0]["json"]
    sent = body
    for key in field:
        sent = sent[key]
    # The TOML backend's default budget of 4096 tokens bounds the block to 4096 / 16 lines.
    assert sent == to_gbnf(answer_grammar("nat", task.names, max_lines=DEFAULT_MAX_TOKENS // TOKENS_PER_LINE, **BOUNDS))
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    summary = json.loads(result.output)
    assert summary["accepted"] and summary["decoding"] == "grammar"
    calls = [e for e in read_trace(tmp_path / "r") if e["event"] == "llm_call"]
    assert calls[0]["decoding"]["mode"] == "grammar" and calls[0]["decoding"]["dialect"] == dialect


def test_repair_loop_runs_for_what_the_grammar_cannot_rule_out(tmp_path):
    """An auxiliary index beyond the declared count is inside the grammar and raises at run time:
    the repair round (under the repair grammar) fixes it, and the trace shows both."""
    task = load_task("fashion")
    broken = '<cnf>\naux = cp.boolvar(shape=2, name="aux")\nconstraints = [\n    aux[5],\n]\n</cnf>'
    assert Recognizer(answer_grammar("cpmpy", task.names, **BOUNDS)).accepts(broken)
    fixed = f"[[FIXED]]\n<cnf>\n{reference_source(task, 'cpmpy')}</cnf>"
    backend = Recorded([broken, fixed])
    summary = run_attempt(
        RunConfig(task="fashion", format="cpmpy", prompt="zs", llm=SCRIPTED, decoding="grammar"),
        tmp_path / "r",
        backend=backend,
    )
    assert summary.accepted and summary.repair_rounds == 1 and summary.metrics.f1 == 1.0
    first, second = (call["params"]["extra_body"]["grammar"] for call in backend.calls)
    assert first == to_gbnf(answer_grammar("cpmpy", task.names, **BOUNDS))
    assert second == to_gbnf(repair_grammar("cpmpy", task.names, allow_ok=False, **BOUNDS))
    events = read_trace(tmp_path / "r")
    assert [e["error_kind"] for e in events if e["event"] == "repair_round"] == ["runtime"]
    assert [e["decoding"]["grammar"] for e in events if e["event"] == "llm_call"] == ["answer", "repair"]
    assert json.loads((tmp_path / "r" / "config.json").read_text())["decoding"] == "grammar"


def test_token_budget_bounds_lines_and_reasoning():
    task = load_task("fashion")
    backend = Recorded(["<cnf>\nTRUE\n</cnf>"])
    make_policy("zs-cot", backend, decoding="grammar", params={"max_tokens": 160}).formalize(
        AttemptSpec(task, "nat", "detailed", "zs-cot")
    )
    sent = backend.calls[0]["params"]["extra_body"]["grammar"]
    assert sent == to_gbnf(answer_grammar("nat", task.names, reasoning_chars=160, max_lines=5, **BOUNDS))


def test_zs_cot_grammar_allows_bounded_reasoning_and_zs_does_not():
    task = load_task("fashion")
    for prompt, reasoning in (("zs", False), ("zs-cot", True)):
        backend = Recorded(["<cnf>\nTRUE\n</cnf>"])
        policy = make_policy(prompt, backend, decoding="grammar")
        policy.formalize(AttemptSpec(task, "nat", "detailed", prompt))
        assert ("reasoning ::=" in backend.calls[0]["params"]["extra_body"]["grammar"]) == reasoning


def test_few_shot_examples_leave_the_task_out_and_compose_with_grammar_decoding():
    task = load_task("bdd-oia-2")  # itself among the shortest references: it must not be its own example
    backend = Recorded(["<cnf>\nTRUE\n</cnf>"])
    policy = make_policy("few-shot", backend, decoding="grammar")
    policy.formalize(AttemptSpec(task, "nat", "detailed", "zs"))
    messages = backend.calls[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    examples = example_tasks(task.name, "nat", 2)
    assert task.name not in [t.name for t in examples] and len(examples) == 2
    for other, answer in zip(examples, messages[2:5:2]):
        assert answer["content"] == f"<cnf>\n{reference_source(other, 'nat').rstrip()}\n</cnf>"
        assert convert(answer["content"], "nat", other.names).ok
    assert all(f". {name}: " in messages[-1]["content"] for name in task.names)
    assert backend.calls[0]["params"]["extra_body"]["grammar"] == to_gbnf(answer_grammar("nat", task.names, **BOUNDS))


@pytest.mark.parametrize("explicit", [True, False])
def test_a_run_recorded_under_a_grammar_replays(tmp_path, explicit):
    """The grammar is part of each call's prompt hash; the replay backend takes the recorded dialect,
    so the replayed run sends the same grammar and meets every hash (``--decoding`` defaults to the
    recorded one). Replaying it free asks other questions: a one-line error."""
    task = load_task("fashion")
    broken = '<cnf>\naux = cp.boolvar(shape=2, name="aux")\nconstraints = [\n    aux[5],\n]\n</cnf>'
    fixed = f"[[FIXED]]\n<cnf>\n{reference_source(task, 'cpmpy')}</cnf>"
    with LoopbackLLM([broken, fixed]) as server:
        config = tmp_path / "llm.toml"
        config.write_text(f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\ngrammar = "llama.cpp"\n')
        common = ["run", "--task", "fashion", "--format", "cpmpy", "--prompt", "zs", "--json"]
        recorded = runner.invoke(
            app, [*common, "--llm", str(config), "--decoding", "grammar", "--out", str(tmp_path / "r")]
        )
    assert recorded.exit_code == 0, recorded.output
    first = json.loads(recorded.output)
    assert first["accepted"] and first["repair_rounds"] == 1
    trace = tmp_path / "r" / "trace.jsonl"
    replay = [*common, "--llm", f"replay:{trace}", "--out", str(tmp_path / "replayed")]
    result = runner.invoke(app, replay + (["--decoding", "grammar"] if explicit else []))
    assert result.exit_code == 0, result.output
    again = json.loads(result.output)
    assert again["decoding"] == "grammar" and again["accepted"] and again["repair_rounds"] == 1
    assert again["metrics"]["f1"] == first["metrics"]["f1"] == 1.0
    calls = [e for e in read_trace(tmp_path / "replayed") if e["event"] == "llm_call"]
    assert [c["decoding"]["dialect"] for c in calls] == ["llama.cpp", "llama.cpp"]
    assert [c["response"]["cached"] for c in calls] == [True, True]
    originals = [e["prompt_hash"] for e in read_trace(tmp_path / "r") if e["event"] == "llm_call"]
    assert [c["prompt_hash"] for c in calls] == originals
    free = runner.invoke(app, [*common, "--llm", f"replay:{trace}", "--decoding", "free", "--out", str(tmp_path / "f")])
    summary = json.loads(free.stdout)  # not the model's outcome: an error of the replay (exit 1)
    assert free.exit_code == 1 and summary["status"] == "error" and summary["failure"] == "config"
    assert "no recorded answer for this prompt" in summary["reason"]


def test_a_sweep_attempt_decodes_under_the_same_bounded_grammar_as_a_run():
    """A sweep wraps its backend per attempt (salted cache keys); the token budget, which bounds the
    grammar's lines so that a block closes within it, must come through the wrapper."""
    from autonesy.graph.sweep.worker import SaltedBackend

    inner = Recorded([])
    inner.default_params = {"max_tokens": 128}
    spec = AttemptSpec(load_task("chx"), "nat", "detailed", "zs")
    grammars = [
        make_policy("zs", backend, decoding="grammar").grammar_for(spec, "formalizer")
        for backend in (inner, SaltedBackend(inner, "attempt:x"))
    ]
    assert to_gbnf(grammars[0]) == to_gbnf(grammars[1])
    assert Recognizer(grammars[1]).accepts("<cnf>\n" + "code_red\n" * 4 + "</cnf>")
    assert not Recognizer(grammars[1]).accepts("<cnf>\n" + "code_red\n" * 5 + "</cnf>")


def test_an_answer_cut_by_the_token_budget_keeps_its_finished_lines_and_the_trace_says_so(tmp_path):
    """The server stops at max_tokens wherever it is; under a grammar what came is a prefix of an
    answer, so its unfinished last line is dropped and the block closed instead of a syntax error."""

    class Cut(Recorded):
        def complete(self, messages, *, cache_salt="", **params):
            return dataclasses.replace(
                super().complete(messages, cache_salt=cache_salt, **params), finish_reason="length"
            )

    task = load_task("fashion")
    full = reference_source(task, "nat").strip().splitlines()[1:]  # (its first line is longer than GRAMMAR_CHAIN)
    cut_text = "<cnf>\n" + "\n".join(full[:2]) + "\n" + full[2][: len(full[2]) // 2]
    backend = Cut([cut_text])
    summary = run_attempt(
        RunConfig(task="fashion", format="nat", prompt="zs", llm=SCRIPTED, decoding="grammar", max_repairs=0),
        tmp_path / "r",
        backend=backend,
    )
    assert summary.accepted and summary.repair_rounds == 0
    assert (tmp_path / "r" / "answer.txt").read_text().strip() == "<cnf>\n" + "\n".join(full[:2]) + "\n</cnf>"
    call = next(e for e in read_trace(tmp_path / "r") if e["event"] == "llm_call")
    assert call["decoding"]["cut_by_token_budget"] == {"closed": True, "dropped": full[2][: len(full[2]) // 2]}


@pytest.mark.parametrize(("decoding", "tokens"), [("grammar", 128), ("free", 128), ("free", None)])
def test_an_answer_the_token_budget_stopped_before_its_first_line_ended_is_repaired_as_too_long(
    tmp_path, decoding, tokens
):
    """Nothing is left to close when the budget runs out inside the first constraint: the checker's
    error and the repair prompt name the token budget (not only an unclosed parenthesis), and the
    repaired answer goes on."""

    class StoppedFirst(Recorded):
        def complete(self, messages, *, cache_salt="", **params):
            response = super().complete(messages, cache_salt=cache_salt, **params)
            stopped = len(self.calls) == 1
            return dataclasses.replace(
                response, finish_reason="length" if stopped else "stop", completion_tokens=tokens
            )

    backend = StoppedFirst(["<cnf>\n(NOT (NOT (code_red AND (NOT", "[[FIXED]]\n<cnf>\ncode_red\n</cnf>"])
    summary = run_attempt(
        RunConfig(task="chx", format="nat", prompt="zs", llm=SCRIPTED, decoding=decoding, max_repairs=1),
        tmp_path / "r",
        backend=backend,
    )
    errors = [e for e in read_trace(tmp_path / "r") if e["event"] == "syntax_error"]
    assert [e["kind"] for e in errors] == ["token_budget"]
    said = "the answer stopped at the token budget" + (" (128 tokens)" if tokens else "") + " before the formula"
    assert errors[0]["message"].startswith(said)  # no count where the server reported none
    assert said in backend.calls[1]["messages"][-1]["content"]
    assert summary.repair_rounds == 1 and summary.status == "accepted"


def test_a_parse_error_of_an_answer_that_ended_by_itself_keeps_its_kind(tmp_path):
    """Only an answer the budget stopped blames the budget."""
    backend = Recorded(["<cnf>\n(code_red AND\n</cnf>", "[[FIXED]]\n<cnf>\ncode_red\n</cnf>"])
    run_attempt(
        RunConfig(task="chx", format="nat", prompt="zs", llm=SCRIPTED, decoding="free", max_repairs=1),
        tmp_path / "r",
        backend=backend,
    )
    errors = [e for e in read_trace(tmp_path / "r") if e["event"] == "syntax_error"]
    assert len(errors) == 1 and errors[0]["kind"] != "token_budget"


def test_a_free_answer_cut_by_the_token_budget_is_not_touched():
    task = load_task("fashion")
    backend = Recorded(["<cnf>\nTRUE\nsho"])
    backend_response = backend.complete  # a free decoding never closes what it was given

    def cut(messages, **params):
        return dataclasses.replace(backend_response(messages, **params), finish_reason="length")

    backend.complete = cut
    turn = make_policy("zs", backend, decoding="free").formalize(AttemptSpec(task, "nat", "detailed", "zs"))
    assert turn.text == "<cnf>\nTRUE\nsho" and "cut_by_token_budget" not in turn.decoding
