"""The verify graph with scripted LLMs: verdicts, explanations, checker failure paths, the output's
integrity, formulation repair, ablations, per-agent LLMs, user checkers, the feedback loop, VifBench eval."""

import json

import pytest
from scripted_llm import (
    CODES,
    CRASH,
    FORMULATION,
    GARBAGE,
    INSTRUCTION,
    LONG_GLOOMY,
    LOOP,
    NO_DEF,
    NO_LANTERN,
    SAT,
    ScriptedRoles,
    oracle_chat_model,
)
from typer.testing import CliRunner

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify.prompts import role_of
from autonesy.graph.cli import app
from autonesy.graph.trace import read_trace
from autonesy.graph.verify.run import VerifyConfig, VerifyError, verify_output
from autonesy.graph.verify.vifbench import evaluate
from autonesy.tasks.vifbench import Instruction, generate
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.verify.results import Assignment, CheckerResult, Contradiction, Correction, SolverDecision

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM the scripted backends stand for


def verify(tmp_path, roles, output, name="run", **options):
    config = VerifyConfig(llm=SCRIPTED, **options)
    return verify_output(INSTRUCTION, output, config, tmp_path / name, backend=roles.backend())


def test_sat_response_checked_by_code_and_judge(tmp_path):
    roles = ScriptedRoles()
    summary = verify(tmp_path, roles, SAT)
    assert summary.status == "sat" and summary.verdict == "sat"
    methods = {c["id"]: (c["kind"], c["method"], c["value"]) for c in summary.constraints}
    assert methods == {
        "C1": ("logic", "checker", True),
        "C2": ("logic", "checker", False),
        "C3": ("semantic", "judge", True),
        "C4": ("logic", "checker", False),
    }
    assert roles.roles() == ["formulation", "checker", "judge"]  # three requests for a fresh instruction
    checker_prompt = roles.calls[1][1]
    assert all(f"{cid}: " in checker_prompt for cid in ("C1", "C2", "C4")) and "C3: " not in checker_prompt
    assert summary.checker_runs == 3 * 2 + 3  # each program's two self-test examples, then the response
    assert summary.llm_calls == 3 and summary.prompt_tokens > 0
    run = tmp_path / "run"
    for name in (
        "config.json",
        "trace.jsonl",
        "summary.json",
        "explanation.txt",
        "instruction.txt",
        "output.txt",
        "checkers/C1.py",
        "checkers/C2.py",
        "checkers/C4.py",
    ):
        assert (run / name).is_file(), name
    assert (run / "output.txt").read_text() == SAT
    assert "C3" not in {p.stem for p in (run / "checkers").iterdir()}


def test_one_violated_logic_constraint_flips_the_verdict_and_is_named(tmp_path):
    good = verify(tmp_path, ScriptedRoles(), SAT, "good")
    bad = verify(tmp_path, ScriptedRoles(), NO_LANTERN, "bad")
    assert good.verdict == "sat" and bad.verdict == "unsat"
    before = {c["id"]: c["value"] for c in good.constraints}
    after = {c["id"]: c["value"] for c in bad.constraints}
    assert [cid for cid in before if before[cid] != after[cid]] == ["C1"]
    decision = bad.decision
    assert isinstance(decision, SolverDecision)
    assert decision.violated == [Assignment(id="C1", value=False)] and decision.core == ["C1"]
    assert decision.falsified_parts == ["C1"] and decision.to_fix == [Correction(id="C1", should_be=True)]
    text = bad.explanation
    assert 'C1 "The response contains the word "lantern"" does not hold' in text
    assert "check(response) returned False" in text and "\\blantern\\b" in text  # the checker's code is the evidence
    assert "C2" not in text.split("Violated constraints:")[1].split("Minimal reason")[0]
    assert (tmp_path / "bad" / "explanation.txt").read_text().strip() == text.strip()


def test_an_implication_blames_its_consequent_and_names_the_condition(tmp_path):
    summary = verify(tmp_path, ScriptedRoles(), LONG_GLOOMY)
    decision = summary.decision
    assert summary.verdict == "unsat" and isinstance(decision, SolverDecision)
    assert decision.violated == [Assignment(id="C3", value=False)]
    assert decision.conditions == [Assignment(id="C2", value=True)]
    assert decision.falsified_parts == ["C2 IMPLIES C3"] and decision.to_fix == [Correction(id="C3", should_be=True)]
    assert "judged by the LLM" in summary.explanation and "They are required because" in summary.explanation


def test_a_crashing_looping_garbage_checker_is_reflected_three_times_then_judged(tmp_path):
    roles = ScriptedRoles()
    roles.codes["C1"] = [CRASH, LOOP, GARBAGE, NO_DEF]
    summary = verify(tmp_path, roles, NO_LANTERN, checker_wall_s=0.5)
    result = summary.results["C1"]
    assert result.method == "judge_fallback" and result.value is False
    assert [f.error_kind for f in result.failures] == ["runtime", "timeout", "type", "missing_definition"]
    assert isinstance(summary.decision, SolverDecision) and summary.verdict == "unsat"
    assert summary.decision.violated == [Assignment(id="C1", value=False)]
    reflections = [user for role, user in roles.calls if role == "reflection"]
    assert len(reflections) == 3  # then no fourth reflection: the judge decides
    assert "IndexError" in reflections[0] and "ran longer than 0.5 s" in reflections[1]
    assert "returned str 'yes'" in reflections[2] and "must return True or False" in reflections[2]
    events = read_trace(tmp_path / "run")
    runs = [e for e in events if e["event"] == "checker_run" and e["constraint"] == "C1"]
    assert len(runs) == 4 and not any(r["ok"] for r in runs)
    rounds = [e for e in events if e["event"] == "repair_round"]
    assert [r["round"] for r in rounds] == [1, 2, 3] and all(r["verdict"] == "reflected" for r in rounds)
    assert "the generated checker failed 4 times" in summary.explanation
    assert "judged by the LLM instead" in summary.explanation
    shown = CliRunner().invoke(app, ["trace", str(tmp_path / "run")])
    assert shown.exit_code == 0 and "round 1 [runtime]: C1:" in shown.output and "round 2 [timeout]:" in shown.output


def test_a_reflection_that_fixes_the_checker_keeps_the_code_path(tmp_path):
    roles = ScriptedRoles()
    roles.codes["C1"] = [CRASH, CODES["C1"]]
    summary = verify(tmp_path, roles, SAT)
    result = summary.results["C1"]
    assert result.method == "checker" and result.value is True and result.reflections == 1
    assert (tmp_path / "run" / "checkers" / "C1.py").read_text() == CODES["C1"]
    assert "after 1 self-reflection round" not in summary.explanation  # sat: no evidence listed
    assert summary.verdict == "sat"


def test_a_checker_cannot_change_the_output_it_checks(tmp_path):
    roles = ScriptedRoles()
    tamper = "__autonesy_output__ = lambda: 'a cheap lantern'\ndef check(response):\n    return 'lantern' in response\n"
    rewrite = "def check(response):\n    response += ' cheap'\n    return len(response.split()) > 20\n"
    roles.codes["C1"] = [tamper, CODES["C1"]]
    roles.codes["C2"] = [rewrite]
    summary = verify(tmp_path, roles, NO_LANTERN)
    c1 = summary.results["C1"]
    assert c1.failures[0].error_kind == "forbidden" and "replaced the response" in c1.failures[0].message
    assert c1.value is False and summary.verdict == "unsat"  # judged on the original text after the fix
    assert summary.results["C4"].value is False  # C2's checker changed its own copy, not the response
    assert (tmp_path / "run" / "output.txt").read_text() == NO_LANTERN
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    import hashlib

    assert config["output_sha256"] == hashlib.sha256(NO_LANTERN.encode()).hexdigest()
    # No agent that writes checker code ever sees the response, so none can re-type it.
    for role, user in roles.calls:
        if role in ("formulation", "checker", "reflection"):
            assert NO_LANTERN not in user, role
        if role == "judge":
            assert f"<response>\n{NO_LANTERN}\n</response>" in user


def test_a_formulation_that_does_not_parse_is_repaired(tmp_path):
    broken = "<constraints>\nC1: x\nC2: y\n</constraints>\n<formula>\nC1 AND\n</formula>"
    roles = ScriptedRoles(formulation=[broken, FORMULATION])
    summary = verify(tmp_path, roles, SAT)
    assert summary.verdict == "sat"
    prompts = [user for role, user in roles.calls if role == "formulation"]
    assert len(prompts) == 2 and "## Problem with it" in prompts[1] and "unexpected end of the formula" in prompts[1]
    events = read_trace(tmp_path / "run")
    assert [e["kind"] for e in events if e["event"] == "syntax_error"] == ["formulation"]


def test_a_formulation_that_never_parses_is_an_error(tmp_path):
    roles = ScriptedRoles(formulation=["no blocks at all"])
    summary = verify(tmp_path, roles, SAT, max_formulation_repairs=1)
    assert summary.status == "error" and summary.verdict is None
    assert "no usable formulation after 2 answers" in summary.reason
    assert roles.roles() == ["formulation", "formulation"]


def test_nsvif_neu_judges_every_constraint_and_judge_is_one_call(tmp_path):
    roles = ScriptedRoles()
    neu = verify(tmp_path, roles, NO_LANTERN, "neu", verifier="nsvif-neu")
    assert neu.verdict == "unsat" and {c["method"] for c in neu.constraints} == {"judge"}
    assert set(roles.roles()) == {"formulation", "judge"} and neu.checker_runs == 0
    baseline = ScriptedRoles()
    judged = verify(tmp_path, baseline, NO_LANTERN, "judge", verifier="judge")
    assert judged.verdict == "unsat" and baseline.roles() == ["holistic_judge"]
    assert "judged by the LLM on the whole instruction" in judged.explanation


def test_each_agent_can_use_its_own_llm(tmp_path):
    formulation, checking, judging = ScriptedRoles(), ScriptedRoles(), ScriptedRoles()
    backends = {
        "formulation": formulation.backend("f-model"),
        "checker": checking.backend("c-model"),
        "judge": judging.backend("j-model"),
    }
    summary = verify_output(INSTRUCTION, SAT, VerifyConfig(llm=SCRIPTED), tmp_path / "run", backends=backends)
    assert summary.verdict == "sat"
    assert set(formulation.roles()) == {"formulation"} and set(checking.roles()) == {"checker"}
    assert set(judging.roles()) == {"judge"}
    assert summary.llms == {
        "formulation": "scripted@f-model",
        "checker": "scripted@c-model",
        "judge": "scripted@j-model",
    }


def test_a_user_checker_is_preferred_for_a_matching_constraint(tmp_path):
    module = tmp_path / "my_checkers.py"
    module.write_text(
        "from autonesy.tools.verify.checkers import checker\n\n"
        "@checker(description='The response contains a given word (whole word, any case).', params={'word': 'the word'})\n"
        "def contains_word(response, word):\n"
        "    return word.lower() in response.lower().replace('.', ' ').split()\n"
    )
    roles = ScriptedRoles()
    roles.user_checker["C1"] = 'contains_word {"word": "lantern"}'
    roles.user_checker["C4"] = 'contains_word {"wrong": 1}'
    summary = verify(tmp_path, roles, SAT, checkers=[str(module)])
    c1, c4 = summary.results["C1"], summary.results["C4"]
    assert c1.method == "user_checker" and c1.value is True and c1.checker == "contains_word"
    # a user checker that fails (here: arguments it does not take) leaves the constraint to the judge
    assert c4.method == "judge_fallback" and c4.value is False
    assert c4.failures[0].message.startswith("user checker contains_word: bad arguments")
    checker_prompt = next(user for role, user in roles.calls if role == "checker")
    assert "contains_word(response, word): The response contains a given word" in checker_prompt
    assert "checked by the user checker" not in summary.explanation  # sat
    bad = verify(tmp_path, roles, NO_LANTERN, "bad", checkers=[str(module)])
    assert "checked by the user checker contains_word(response, word='lantern'): returned False" in bad.explanation


@pytest.mark.parametrize("feedback", ["explanation", "boolean"])
def test_the_feedback_loop_regenerates_until_sat(tmp_path, feedback):
    roles = ScriptedRoles(writer=[LONG_GLOOMY, NO_LANTERN, SAT])
    config = VerifyConfig(llm=SCRIPTED, budget=5, feedback=feedback)
    summary = verify_output(INSTRUCTION, None, config, tmp_path / "run", backend=roles.backend())
    assert summary.status == "sat" and summary.rounds == 3
    assert [h["verdict"] for h in summary.history] == ["unsat", "unsat", "sat"]
    assert summary.output == SAT and (tmp_path / "run" / "output.txt").read_text() == SAT
    assert (tmp_path / "run" / "outputs" / "round-1.txt").read_text() == LONG_GLOOMY
    rewrites = [user for role, user in roles.calls if role == "writer"][1:]
    assert len(rewrites) == 2
    if feedback == "explanation":
        assert 'C3 "The response is written in a humorous tone" does not hold' in rewrites[0]
        assert "make C1" in rewrites[1]
    else:
        assert "does not follow the instruction." in rewrites[0] and "C3" not in rewrites[0]
    # the formulation and the checker programs (self-tested once) are kept from one response to the next
    assert roles.roles().count("formulation") == 1 and roles.roles().count("checker") == 1
    assert summary.checker_runs == 3 * 2 + 3 * 3


def test_the_feedback_loop_stops_at_the_budget(tmp_path):
    roles = ScriptedRoles(writer=[NO_LANTERN])
    summary = verify_output(
        INSTRUCTION, None, VerifyConfig(llm=SCRIPTED, budget=2), tmp_path / "run", backend=roles.backend()
    )
    assert summary.status == "unsat" and summary.rounds == 2 and roles.roles().count("writer") == 2


class Interrupted(BaseException):
    """Stands for the process being killed: no layer catches it."""


class StopsAtTheJudge(ScriptedRoles):
    def __call__(self, messages) -> str:
        if role_of(messages) == "judge":
            raise Interrupted
        return super().__call__(messages)


def test_an_interrupted_verification_resumes_from_its_checkpoint_to_the_same_summary(tmp_path):
    """Killed at the judge, after the checkers ran: the same run directory resumes with the checker results
    of the checkpoint (validated back into their records) and ends where an uninterrupted run ends."""
    with pytest.raises(Interrupted):
        verify(tmp_path, StopsAtTheJudge(), NO_LANTERN, "run")
    roles = ScriptedRoles()
    resumed = verify(tmp_path, roles, NO_LANTERN, "run")
    whole = verify(tmp_path, ScriptedRoles(), NO_LANTERN, "whole")
    assert roles.roles() == ["judge"]  # formulation and checkers came from the checkpoint
    assert [e["event"] for e in read_trace(tmp_path / "run")].count("resumed") == 1
    timing = {"run_dir", "wall_seconds", "llm_seconds", "checker_seconds", "decision"}
    assert resumed.model_dump(exclude=timing) == whole.model_dump(exclude=timing)
    assert resumed.results == whole.results and isinstance(resumed.results["C1"], CheckerResult)
    assert resumed.decision is not None and resumed.decision.model_dump(exclude={"seconds"}) == (
        whole.decision.model_dump(exclude={"seconds"}) if whole.decision else None
    )


def test_a_finished_run_is_not_repeated_and_another_run_is_refused(tmp_path):
    roles = ScriptedRoles()
    first = verify(tmp_path, roles, SAT)
    calls = len(roles.calls)
    again = verify(tmp_path, roles, SAT)
    assert len(roles.calls) == calls and again.verdict == first.verdict
    with pytest.raises(VerifyError, match="holds a different run"):
        verify(tmp_path, roles, NO_LANTERN)


def test_vifbench_eval_with_the_oracle_reproduces_every_label(tmp_path):
    records = generate(4, seed=11)  # two instructions of groups 2 and 3: a sat and an unsat round each
    backend = LangChainChatBackend(oracle_chat_model(records), "scripted", "oracle", retries=1)
    data = tmp_path / "vifbench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = evaluate(
        data,
        ["nsvif", "nsvif-neu", "judge"],
        VerifyConfig(llm=SCRIPTED),
        tmp_path / "eval",
        backend=backend,
        workers=2,
    )
    for verifier in ("nsvif", "nsvif-neu", "judge"):
        overall = report["verifiers"][verifier]["overall"]
        assert overall["f1"] == 1.0 and overall["pass_at_1"] == 1.0 and overall["n"] == 4, verifier
        assert overall["fp"] == overall["fn"] == overall["unknown"] == 0
    assert report["verifiers"]["nsvif"]["constraints"]["accuracy"] == 1.0
    rows = [json.loads(line) for line in (tmp_path / "eval" / "results-nsvif.jsonl").read_text().splitlines()]
    by_id = {r["id"]: r for r in records}
    for row in rows:
        assert row["values"] == by_id[row["id"]]["labels"]  # every per-constraint label reproduced
        kinds = {c["id"]: c["kind"] for c in by_id[row["id"]]["constraints"]}
        assert all(row["methods"][cid] == ("checker" if kinds[cid] == "logic" else "judge") for cid in kinds)
    assert set(report["verifiers"]["nsvif"]["groups"]) == {"2", "3"}  # per constraint count
    text = (tmp_path / "eval" / "report.md").read_text()
    assert "## Tables 2–4" in text and "## By complexity group" in text and "## Cost (the paper's Table 7" in text
    assert {p.name for p in (tmp_path / "eval").glob("table-*.csv")} == {
        f"table-{name}.csv" for name in ("verifiers", "groups", "constraint-types", "cost")
    }
    # resuming the same evaluation verifies nothing again
    again = evaluate(data, ["nsvif"], VerifyConfig(llm=SCRIPTED), tmp_path / "eval", backend=backend)
    assert again["verifiers"]["nsvif"]["overall"]["f1"] == 1.0
    with pytest.raises(VerifyError, match="holds a different run"):  # other data in the same directory
        evaluate(data, ["judge"], VerifyConfig(llm=SCRIPTED), tmp_path / "eval", backend=backend, limit=2)


def test_reference_checkers_as_user_checkers_replace_generated_code(tmp_path):
    records = generate(1, seed=3)
    backend = LangChainChatBackend(oracle_chat_model(records), "scripted", "oracle", retries=1)
    for rec in records:
        summary = verify_output(
            rec["instruction"],
            rec["output"],
            VerifyConfig(llm=SCRIPTED, checkers=["autonesy.tools.verify.checkers"]),
            tmp_path / rec["id"],
            backend=backend,
        )
        assert summary.verdict == rec["verdict"] and summary.checker_runs == 0
        kinds = {c["id"]: c["kind"] for c in rec["constraints"]}
        assert {c["id"]: c["method"] for c in summary.constraints} == {
            cid: ("user_checker" if kind == "logic" else "judge") for cid, kind in kinds.items()
        }


def test_llm_written_data_keeps_the_last_output_when_the_budget_runs_out(tmp_path):
    from autonesy.graph.verify.vifbench import generate_data

    roles = ScriptedRoles(writer=["A text that follows nothing."])
    summary = generate_data(tmp_path / "data", 2, seed=1, backend=roles.backend())
    written = [json.loads(line) for line in (tmp_path / "data" / "vifbench.jsonl").read_text().splitlines()]
    # a sat round and an unsat round (§A.2); the fixed text meets no constraint, so both are unsat:
    # the sat round revised 5 times and kept as it is, the unsat round accepted at once
    rounds = [(r["round"], r["verdict"], r["regenerations"]) for r in written]
    assert rounds == [("sat", "unsat", 5), ("unsat", "unsat", 0)]
    assert summary["sources"] == {"llm": 2}
    writes = [user for role, user in roles.calls if role == "writer"]
    assert len(writes) == 7
    # group 2 is topic and word count: the unsat round's writer never sees the word count
    assert written[1]["omitted"] == "C2" and "around" not in writes[-1] and "around" in writes[0]
    assert any("These requirements are not met:\n- " in user for user in writes)
    assert len(writes) <= 4 * 5
    for r in written:  # logic labels by the reference checkers, tone and topic by what the writer was asked for
        for c in Instruction.from_dict(r).constraints:
            expected = c.check(r["output"]) if c.kind == "logic" else r["mutated"] != c.id
            assert r["labels"][c.id] is expected


CONTRADICTORY = FORMULATION.replace("NOT C4\n</formula>", "NOT C4\nC4 AND C1\n</formula>")


def test_a_contradictory_instruction_is_reported_before_anything_is_checked(tmp_path):
    roles = ScriptedRoles(formulation=[CONTRADICTORY])
    summary = verify(tmp_path, roles, SAT)
    assert summary.status == "contradictory" and summary.verdict is None
    assert isinstance(summary.decision, Contradiction) and summary.decision.conflict == ["NOT C4", "C4"]
    assert 'C4 "The response contains the word "cheap""' in summary.explanation
    assert roles.roles() == ["formulation"]  # no plan, no checker, no judge
    from autonesy.graph.cli.verify import _exit_code

    assert _exit_code(summary) == 2


def test_follow_stops_on_a_contradictory_instruction_without_writing(tmp_path):
    roles = ScriptedRoles(formulation=[CONTRADICTORY])
    summary = verify_output(
        INSTRUCTION, None, VerifyConfig(llm=SCRIPTED, budget=3), tmp_path / "run", backend=roles.backend()
    )
    assert summary.status == "contradictory" and summary.rounds == 0
    assert "writer" not in roles.roles()


def test_a_checker_can_name_the_offending_words(tmp_path):
    roles = ScriptedRoles()
    roles.codes["C4"] = [
        CODES["C4"] + "\n\ndef spans(response):\n    return re.findall(r'\\bcheap\\b', response, re.I)\n"
    ]
    summary = verify(tmp_path, roles, "A cheap lantern, so cheap.")
    assert summary.verdict == "unsat"
    assert summary.results["C4"].spans == ["cheap", "cheap"]
    assert "because of: 'cheap'; 'cheap'" in summary.explanation


def test_a_program_that_fails_its_own_examples_is_reflected_before_use(tmp_path):
    roles = ScriptedRoles()
    roles.codes["C1"] = ["def check(response):\n    return 'lantern' in response\n", CODES["C1"]]
    roles.examples["C1"] = {"accept": ["A Lantern."], "reject": ["A lanternfish."]}  # whole word, any case
    summary = verify(tmp_path, roles, SAT)
    result = summary.results["C1"]
    assert result.method == "checker" and result.reflections == 1 and result.self_tested
    assert result.failures[0].error_kind == "self_test"
    reflection = next(user for role, user in roles.calls if role == "reflection")
    assert "it returned False on your example 'A Lantern.', which it must accept" in reflection


def test_another_response_to_the_same_instruction_costs_at_most_the_judge(tmp_path):
    records = generate(4, seed=11)
    backend = LangChainChatBackend(oracle_chat_model(records), "scripted", "oracle", retries=1)
    data = tmp_path / "vifbench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    evaluate(data, ["nsvif", "nsvif-neu"], VerifyConfig(llm=SCRIPTED), tmp_path / "eval", backend=backend)
    for verifier in ("nsvif", "nsvif-neu"):
        rows = [json.loads(line) for line in (tmp_path / "eval" / f"results-{verifier}.jsonl").read_text().splitlines()]
        seen = set()
        for row in rows:
            semantic = any(
                c["kind"] == "semantic" for c in next(r for r in records if r["id"] == row["id"])["constraints"]
            )
            if row["instruction_id"] in seen:  # the formulation and the checkers are reused
                assert row["llm_calls"] == (1 if semantic or verifier == "nsvif-neu" else 0), (verifier, row["id"])
            else:
                assert row["llm_calls"] <= 3
            seen.add(row["instruction_id"])


def test_a_fresh_instruction_costs_at_most_three_judge_calls_worth_of_tokens(tmp_path):
    """The cost target of issue #16 on the scripted oracle (real prompts, tiktoken counts): Nsvif on a
    fresh instruction takes ≤ 3 requests and ≤ 3× the LLM-as-judge baseline's tokens."""
    records = generate(6, seed=0)
    data = tmp_path / "vifbench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    tokens = {}
    for verifier in ("nsvif", "judge"):
        backend = LangChainChatBackend(oracle_chat_model(records), "scripted", "oracle", retries=1)
        evaluate(data, [verifier], VerifyConfig(llm=SCRIPTED), tmp_path / verifier, backend=backend)
        rows = [
            json.loads(line) for line in (tmp_path / verifier / f"results-{verifier}.jsonl").read_text().splitlines()
        ]
        fresh = list({row["instruction_id"]: row for row in reversed(rows)}.values())  # each instruction's first
        assert all(row["llm_calls"] <= 3 for row in fresh)
        tokens[verifier] = sum(row["prompt_tokens"] + row["completion_tokens"] for row in fresh) / len(fresh)
    assert tokens["nsvif"] <= 3 * tokens["judge"], tokens
