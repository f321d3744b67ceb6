"""The verifier's agents without a graph: reading their answers, their prompts, the explanation, the oracle."""

import pytest

from autonesy.agents.verify import (FormulationError, explain, extract_code, extract_response, parse_formulation,
                                    parse_judgement, parse_plan, role_of)
from autonesy.agents.verify.scripted_llm import VifBenchOracle
from autonesy.agents.verify.prompts import (SYSTEM, checker_prompt, formulation_prompt, holistic_judge_prompt,
                                            judge_prompt, plan_prompt, reflection_prompt)
from autonesy.tasks.vifbench import generate


def test_formulation_answers_are_read_as_data():
    answer = ("Reasoning: the first block below is an example.\n<constraints>\nC1: a\n</constraints>\n"
              "Final:\n<constraints>\n- **C1**: The response has a title.\nC2) It is short.\n</constraints>\n"
              "<formula>\n```\nC1 ⇒ C2\n```\n</formula>")
    formulation = parse_formulation(answer)
    assert formulation.constraints == (("C1", "The response has a title."), ("C2", "It is short."))
    assert formulation.composition.text() == "C1 IMPLIES C2"


@pytest.mark.parametrize("answer, message", [
    ("no blocks", "no <constraints>"),
    ("<constraints>\nC1: a\n</constraints>", "no <formula>"),
    ("<constraints>\nC2: a\n</constraints><formula>C2</formula>", "number the constraints C1, C2"),
    ("<constraints>\nfirst: a\n</constraints><formula>C1</formula>", "cannot read the constraint line"),
    ("<constraints>\nC1: a\nC2: b\n</constraints><formula>C1</formula>", "does not use C2"),
    ("<constraints>\nC1: a\n</constraints><formula>C1 AND import os</formula>", "does not parse"),
    ("<constraints>\nC1: a\n</constraints><formula>__import__('os').system('x')</formula>", "does not parse"),
])
def test_bad_formulations_say_what_to_fix(answer, message):
    with pytest.raises(FormulationError, match=message):
        parse_formulation(answer)


def test_plans():
    plan = parse_plan("<plan>\ntype: Logic\nsummary: s\nbehaviour: count\nthe words\nchecker: none\n</plan>", "S")
    assert plan.kind == "logic" and plan.behaviour == "count the words" and plan.checker is None
    semantic = parse_plan("I think **type**: semantic\n<plan>\n**type**: semantic\n</plan>", "The tone is sad.")
    assert semantic.kind == "semantic" and "The tone is sad." in semantic.question
    unreadable = parse_plan("no idea", "S")
    assert unreadable.kind == "semantic" and "no readable plan type" in unreadable.note
    user = parse_plan('<plan>\ntype: logic\nchecker: `short`\narguments: {"n": 3}\n</plan>', "S", ["short"])
    assert user.checker == "short" and user.arguments == {"n": 3}
    unknown = parse_plan("<plan>\ntype: logic\nchecker: other\n</plan>", "S", ["short"])
    assert unknown.checker is None and "unknown user checker" in unknown.note


def test_checker_code_extraction():
    assert extract_code("x\n```python\ndef helper(): pass\n```\n```python\ndef check(response):\n    return True\n```") \
        == "def check(response):\n    return True\n"
    assert extract_code("```\nprint(1)\n```") == "print(1)\n"
    assert extract_code("def check(response):\n    return False") == "def check(response):\n    return False\n"
    assert extract_code("I cannot write it.") is None


@pytest.mark.parametrize("text, value", [
    ("fine [[SATISFIED]]", True), ("**[[ violated ]]**", False), ("[[SATISFIED]] at first, but [[VIOLATED]]", False),
    ("no verdict", None), ("[SATISFIED]", None),
])
def test_judgements(text, value):
    assert parse_judgement(text).value is value


def test_only_judges_and_the_writer_see_the_response():
    response = "THE RESPONSE TEXT"
    instruction = "Write something."
    plan = {"type": "logic", "summary": "s"}
    prompts = [formulation_prompt(instruction), plan_prompt(instruction, "C1", "s"),
               checker_prompt(instruction, "C1", "s", plan, 10), reflection_prompt(instruction, "C1", "s", plan, "x", "boom", 1, 10)]
    for prompt in prompts:
        assert response not in prompt.user
        assert role_of(prompt.messages()) in ("formulation", "plan", "checker")
    judged = judge_prompt(instruction, "C1", "s", "Is it?", response)
    assert f"<response>\n{response}\n</response>" in judged.user and role_of(judged.messages()) == "judge"
    whole = holistic_judge_prompt(instruction, response)
    assert whole.user.count("<response>") == 3 and role_of(whole.messages()) == "holistic_judge"  # two shots + it
    folded = [{"role": "user", "content": SYSTEM["plan"] + "\n\nrest"}]
    assert role_of(folded) == "plan"


def test_writer_answers():
    assert extract_response("Sure!\n<response>\nHello.\n</response>") == "Hello."
    assert extract_response("Just this") == "Just this"


def test_explanations_name_violations_with_evidence():
    constraints = [{"id": "C1", "summary": "Has a title."}, {"id": "C2", "summary": "Is sad."}]
    results = {"C1": {"method": "checker", "value": False, "code": "def check(response):\n    return False\n"},
               "C2": {"method": "judge", "value": True, "reasoning": "It mourns."}}
    decision = {"verdict": "unsat", "values": {"C1": False, "C2": True}, "core": ["C1", "C2"],
                "violated": [{"id": "C1", "value": False}], "conditions": [{"id": "C2", "value": True}],
                "falsified_parts": ["C2 IMPLIES C1"], "to_fix": [{"id": "C1", "should_be": True}]}
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
    assert formulation.composition.text() == rec["formula"]
    for c in rec["constraints"]:
        plan = parse_plan(oracle(plan_prompt(rec["instruction"], c["id"], c["summary"]).messages()), c["summary"])
        assert plan.kind == c["kind"]
        judged = oracle(judge_prompt(rec["instruction"], c["id"], c["summary"], "?", rec["output"]).messages())
        assert parse_judgement(judged).value is rec["labels"][c["id"]]
    whole = parse_judgement(oracle(holistic_judge_prompt(rec["instruction"], rec["output"]).messages()))
    assert whole.value is (rec["verdict"] == "sat")


def test_scripted_models_count_tokens_with_a_real_tokenizer():
    from autonesy.agents.verify.scripted_llm import HandlerChatModel, count_tokens

    assert count_tokens("hello world") == 2  # cl100k_base: [15339, 1917]
    assert count_tokens("Nsvif verifies instruction following.") != round(len("Nsvif verifies instruction following.") / 4)
    model = HandlerChatModel(handler=lambda messages: "hello world")
    message = model.invoke("hello world").usage_metadata
    assert message["input_tokens"] == 2 and message["output_tokens"] == 2
