"""The verifier's agents without a graph: reading their answers, their prompts, the explanation, the oracle."""

import pytest
from scripted_llm import VifBenchOracle

from autonesy.agents.verify import (
    FormulationError,
    explain,
    extract_code,
    extract_response,
    parse_checkers,
    parse_formulation,
    parse_judgement,
    parse_judgements,
    role_of,
)
from autonesy.agents.verify.prompts import (
    SYSTEM,
    checkers_prompt,
    formulation_prompt,
    holistic_judge_prompt,
    judge_prompt,
    reflection_prompt,
)
from autonesy.tasks.vifbench import generate
from autonesy.tools.verify.checker_run import run_checker_code
from autonesy.tools.verify.results import CheckerResult, JudgeResult, SolverDecision


def test_formulation_answers_are_read_as_data():
    answer = (
        "Reasoning: the first block below is an example.\n<constraints>\nC1: a\n</constraints>\n"
        "Final:\n<constraints>\n- **C1**: The response has a title.\nC2) It is short.\n</constraints>\n"
        "<formula>\n```\nC1 ⇒ C2\n```\n</formula>"
    )
    formulation = parse_formulation(answer)
    assert formulation.constraints == (("C1", "The response has a title."), ("C2", "It is short."))
    assert formulation.composition.text() == "C1 IMPLIES C2"
    assert formulation.kinds == ("semantic", "semantic") and "no logic/semantic tag for C1, C2" in formulation.note
    tagged = parse_formulation(
        "<constraints>\nC1 [logic]: a\n**C2** (Semantic): b\nC3: [logic] c\n</constraints><formula>C1\nC2\nC3</formula>"
    )
    assert tagged.kinds == ("logic", "semantic", "logic") and tagged.note == ""
    assert [c["kind"] for c in tagged.to_state()["constraints"]] == ["logic", "semantic", "logic"]


@pytest.mark.parametrize(
    "answer, message",
    [
        ("no blocks", "no <constraints>"),
        ("<constraints>\nC1: a\n</constraints>", "no <formula>"),
        ("<constraints>\nC2: a\n</constraints><formula>C2</formula>", "number the constraints C1, C2"),
        ("<constraints>\nfirst: a\n</constraints><formula>C1</formula>", "cannot read the constraint line"),
        ("<constraints>\nC1: a\nC2: b\n</constraints><formula>C1</formula>", "does not use C2"),
        ("<constraints>\nC1: a\n</constraints><formula>C1 AND import os</formula>", "does not parse"),
        ("<constraints>\nC1: a\n</constraints><formula>__import__('os').system('x')</formula>", "does not parse"),
    ],
)
def test_bad_formulations_say_what_to_fix(answer, message):
    with pytest.raises(FormulationError, match=message):
        parse_formulation(answer)


def test_all_checkers_come_in_one_answer_with_their_examples():
    answer = (
        'Here they are.\n### C1\n```python\ndef check(response):\n    return "x" in response\n```\n'
        'examples: {"accept": ["x"], "reject": ["y"]}\n## C3 (the count)\n```python\ndef check(r):\n    return True\n```\n'
        '### C4\nuser checker: `short` {"n": 3}\n### C5\nuser checker: other\n```python\ndef check(r):\n'
        "    return False\n```"
    )
    drafts = parse_checkers(answer, ["C1", "C2", "C3", "C4", "C5"], ["short"])
    assert drafts["C1"].code.startswith("def check") and drafts["C1"].accept == ["x"] and drafts["C1"].reject == ["y"]
    assert drafts["C2"].code is None and "no section ### C2" in drafts["C2"].note
    assert drafts["C3"].code == "def check(r):\n    return True\n" and "no examples" in drafts["C3"].note
    assert drafts["C4"].checker == "short" and drafts["C4"].arguments == {"n": 3} and drafts["C4"].code is None
    assert drafts["C5"].checker is None and "unknown user checker" in drafts["C5"].note and drafts["C5"].code
    single = parse_checkers("```python\ndef check(r):\n    return True\n```", ["C7"])
    assert single["C7"].code and parse_checkers('### C1\nexamples: {"accept": 1', ["C1"])["C1"].note


def test_judgements_of_several_constraints_in_one_answer():
    found = parse_judgements(
        "C1: it has one. [[SATISFIED]]\n- **C3**: gloomy [[violated]]\nC9: [[SATISFIED]]", ["C1", "C3", "C4"]
    )
    assert found["C1"].value is True and found["C3"].value is False and found["C4"].value is None
    assert parse_judgements("Overall fine. [[SATISFIED]]", ["C2"])["C2"].value is True


def test_checker_code_extraction():
    assert (
        extract_code("x\n```python\ndef helper(): pass\n```\n```python\ndef check(response):\n    return True\n```")
        == "def check(response):\n    return True\n"
    )
    assert extract_code("```\nprint(1)\n```") == "print(1)\n"
    assert extract_code("def check(response):\n    return False") == "def check(response):\n    return False\n"
    assert extract_code("I cannot write it.") is None


@pytest.mark.parametrize(
    "text, value",
    [
        ("fine [[SATISFIED]]", True),
        ("**[[ violated ]]**", False),
        ("[[SATISFIED]] at first, but [[VIOLATED]]", False),
        ("no verdict", None),
        ("[SATISFIED]", None),
    ],
)
def test_judgements(text, value):
    assert parse_judgement(text).value is value


def test_only_judges_and_the_writer_see_the_response():
    response = "THE RESPONSE TEXT"
    instruction = "Write something."
    prompts = [
        formulation_prompt(instruction),
        checkers_prompt([("C1", "s")], [], 10),
        reflection_prompt(instruction, "C1", "s", "x", "boom", 1, 10),
    ]
    for prompt in prompts:
        assert response not in prompt.user
        assert role_of(prompt.messages()) in ("formulation", "checker")
    judged = judge_prompt(instruction, [("C1", "s"), ("C2", "t")], response)
    assert f"<response>\n{response}\n</response>" in judged.user and role_of(judged.messages()) == "judge"
    whole = holistic_judge_prompt(instruction, response)
    assert whole.user.count("<response>") == 3 and role_of(whole.messages()) == "holistic_judge"  # two shots + it
    folded = [{"role": "user", "content": SYSTEM["checker"] + "\n\nrest"}]
    assert role_of(folded) == "checker"


def test_writer_answers():
    assert extract_response("Sure!\n<response>\nHello.\n</response>") == "Hello."
    assert extract_response("Just this") == "Just this"


def test_explanations_name_violations_with_evidence():
    constraints = [{"id": "C1", "summary": "Has a title."}, {"id": "C2", "summary": "Is sad."}]
    results = {
        "C1": CheckerResult(
            id="C1", summary="Has a title.", kind="logic", value=False, code="def check(response):\n    return False\n"
        ),
        "C2": JudgeResult(
            id="C2", summary="Is sad.", kind="semantic", method="judge", value=True, reasoning="It mourns."
        ),
    }
    decision = SolverDecision(
        verdict="unsat",
        values={"C1": False, "C2": True},
        core=["C1", "C2"],
        violated=[{"id": "C1", "value": False}],
        conditions=[{"id": "C2", "value": True}],
        falsified_parts=["C2 IMPLIES C1"],
        to_fix=[{"id": "C1", "should_be": True}],
    )
    text = explain(decision, constraints, results)
    assert 'C1 "Has a title" does not hold; checked by generated code: check(response) returned False' in text
    assert "      def check(response):" in text and "C2 IMPLIES C1" in text
    assert 'They are required because: C2 "Is sad" holds (judged by the LLM)' in text
    assert "make C1" in text and "def check" not in explain(decision, constraints, results, with_code=False)


def test_the_oracle_answers_every_role_from_the_ground_truth():
    records = generate(2, seed=2)
    oracle = VifBenchOracle(records)
    rec = records[0]
    answer = oracle(formulation_prompt(rec["instruction"]).messages())
    formulation = parse_formulation(answer)
    assert [s for _, s in formulation.constraints] == [c["summary"] for c in rec["constraints"]]
    assert list(formulation.kinds) == [c["kind"] for c in rec["constraints"]]
    assert formulation.composition.text() == rec["formula"]
    items = [(c["id"], c["summary"]) for c in rec["constraints"]]
    judged = parse_judgements(
        oracle(judge_prompt(rec["instruction"], items, rec["output"]).messages()), [cid for cid, _ in items]
    )
    assert {cid: j.value for cid, j in judged.items()} == rec["labels"]
    logic = [(c["id"], c["summary"]) for c in rec["constraints"] if c["kind"] == "logic"]
    drafts = parse_checkers(oracle(checkers_prompt(logic, [], 10).messages()), [c for c, _ in logic])
    for cid, draft in drafts.items():  # the right program, and examples it accepts and rejects
        assert run_checker_code(draft.code, rec["output"]).value is rec["labels"][cid]
        assert all(run_checker_code(draft.code, text).value is True for text in draft.accept)
        assert all(run_checker_code(draft.code, text).value is False for text in draft.reject)
        assert draft.accept or draft.reject
    whole = parse_judgement(oracle(holistic_judge_prompt(rec["instruction"], rec["output"]).messages()))
    assert whole.value is (rec["verdict"] == "sat")


def test_scripted_models_count_tokens_with_a_real_tokenizer():
    from scripted_llm import ScriptedChatModel, count_tokens

    assert count_tokens("hello world") == 2  # cl100k_base: [15339, 1917]
    assert count_tokens("Nsvif verifies instruction following.") != round(
        len("Nsvif verifies instruction following.") / 4
    )
    model = ScriptedChatModel(handler=lambda messages: "hello world")
    message = model.invoke("hello world").usage_metadata
    assert message["input_tokens"] == 2 and message["output_tokens"] == 2


def _backend(handler):
    from scripted_llm import ScriptedChatModel

    from autonesy.agents.llm import LangChainChatBackend

    return LangChainChatBackend(ScriptedChatModel(handler=handler), "scripted", "m", retries=1)


def test_conv_cot_is_a_conversation_of_three_personas_decided_by_majority():
    from autonesy.agents.verify import JudgeAgent

    seen = []

    def panel(messages):
        role = role_of(messages)
        seen.append((role, messages[-1]["content"]))
        return {
            "literalist": "Too long by two words. [[VIOLATED]]",
            "pragmatist": "It does the job. [[SATISFIED]]",
            "skeptic": "The literalist is right about the count. [[VIOLATED]]",
        }[role]

    turns, verdict = JudgeAgent(_backend(panel)).panel("Write at most 5 words.", "one two three four five six seven")
    assert [role for role, _ in seen] == ["literalist", "pragmatist", "skeptic"] and len(turns) == 3
    assert verdict.value is False and "literalist: Too long by two words" in verdict.reasoning
    assert "(you speak first)" in seen[0][1] and "### Literalist\nToo long by two words" in seen[2][1]
    assert "### Pragmatist\nIt does the job" in seen[2][1]
    undecided = JudgeAgent(
        _backend(
            lambda m: {"literalist": "[[VIOLATED]]", "pragmatist": "[[SATISFIED]]", "skeptic": "no idea"}[role_of(m)]
        )
    ).panel("x", "y")[1]
    assert undecided.value is None and "no majority" in undecided.reasoning


def test_gepa_cot_judges_with_its_guidance():
    from autonesy.agents.verify import JudgeAgent
    from autonesy.agents.verify.prompts import COT_GUIDANCE

    prompts = []

    def cot(messages):
        prompts.append(messages[-1]["content"])
        return "Step 1: the count is 7. [[VIOLATED]]"

    judge = JudgeAgent(_backend(cot))
    assert judge.cot("Write at most 5 words.", "one two three four five six seven")[1].value is False
    assert judge.cot("x", "y", "Count every word twice.")[1].value is False
    assert COT_GUIDANCE in prompts[0] and "## How to judge\nCount every word twice." in prompts[1]
    assert role_of([{"role": "system", "content": SYSTEM["cot_judge"]}]) == "cot_judge"


def test_gepa_optimises_the_cot_guidance_offline_with_scripted_models():
    pytest.importorskip("gepa")  # the optional extra 'gepa' (in 'dev')
    from scripted_llm import quoted_response

    from autonesy.agents.verify.gepa import optimize_guidance

    judged = []

    def judge(messages):  # a CoT judge that counts words only once its guidance tells it to
        told = "count every word" in messages[-1]["content"].lower()
        response = quoted_response(messages[-1]["content"])
        judged.append(response)
        ok = not told or len(response.split()) <= 5
        return f"Step by step: {len(response.split())} words. " + ("[[SATISFIED]]" if ok else "[[VIOLATED]]")

    reflections = []

    def reflection(messages):  # sees the judge's mistakes and proposes a new guidance
        reflections.append(messages[-1]["content"])
        return "The judge did not count.\n```\nCount every word of the response exactly.\n```"

    records = [
        {"instruction": "Use at most 5 words.", "output": text, "verdict": verdict}
        for text, verdict in [
            ("one two", "sat"),
            ("one two three four five six seven", "unsat"),
            ("a b c", "sat"),
            ("x y z w v u t s", "unsat"),
        ]
    ]
    guidance = optimize_guidance(records[:2], records[2:], _backend(judge), _backend(reflection), max_metric_calls=20)
    assert guidance == "Count every word of the response exactly."
    assert reflections and "the judge said sat" in reflections[0]  # GEPA reflected on the judge's mistake
    assert set(judged) == {r["output"] for r in records}  # the judge ran on train and validation pairs


def test_without_gepa_the_optimiser_says_so_in_one_line(monkeypatch):
    import builtins

    from autonesy.agents.verify.gepa import GepaUnavailable, optimize_guidance

    real = builtins.__import__

    def no_gepa(name, *args, **kwargs):
        if name == "gepa" or name.startswith("gepa."):
            raise ImportError("No module named 'gepa'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gepa)
    with pytest.raises(GepaUnavailable, match="pip install 'autonesy-agent\\[gepa\\]'"):
        optimize_guidance([], [], None, None)
