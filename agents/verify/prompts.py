"""Prompts of the instruction-following verifier (Nsvif design, DESIGN §11).

One system prompt per agent role (``SYSTEM``: formulation, plan, checker, judge, holistic_judge,
writer) and one builder per request. The response being verified appears *only* in judge prompts
(semantic constraints, fallbacks, the LLM-as-judge baseline) and in the writer's feedback prompts;
the agents that write checker code never see it — a checker receives the text as its argument, so
no LLM ever re-types the output it checks.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from autonesy.agents.prompts import Prompt

SYSTEM = {
    "formulation": ("You are the formulation agent of an instruction-following verifier: you decompose an "
                    "instruction into atomic constraints and write their logical composition as a formula."),
    "plan": ("You are the checking agent of an instruction-following verifier: you classify one constraint as "
             "logic or semantic and plan how to check it."),
    "checker": ("You are the checking agent of an instruction-following verifier: you write small, exact Python "
                "checker functions."),
    "judge": ("You are a careful judge of one constraint: you decide whether a response satisfies it, and you "
              "say why."),
    "holistic_judge": ("You are a careful judge of instruction following: you decide whether a response follows "
                       "every requirement of an instruction."),
    "writer": "You write texts that follow instructions exactly.",
}
SATISFIED, VIOLATED = "[[SATISFIED]]", "[[VIOLATED]]"

FORMULA_SYNTAX = (
    "one requirement per line (all lines must hold together); operators NOT, AND, OR, IMPLIES, IFF "
    "(also written ¬ ∧ ∨ ⇒ ⇔) and parentheses; precedence NOT > AND > OR > IMPLIES > IFF, so "
    "\"C1 AND C2 IMPLIES C3\" means \"(C1 AND C2) IMPLIES C3\"; use parentheses when in doubt"
)

FORMULATION_EXAMPLES = (
    (
        "Write a product description for a smart watch in an enthusiastic tone. Mention the battery life. If you "
        "mention the price, keep the whole description under 100 words. Do not use the word \"cheap\".",
        "The text must be a product description of a smart watch (semantic), in an enthusiastic tone (semantic), "
        "and mention the battery life (semantic). Mentioning the price (semantic) makes a word limit of fewer "
        "than 100 words (logic) required: an implication. \"Do not use the word cheap\" is the negation of a "
        "keyword constraint (logic), so the constraint is stated positively and negated in the formula.",
        ["The response is a product description of a smart watch.",
         "The response is written in an enthusiastic tone.",
         "The response mentions the battery life.",
         "The response mentions the price.",
         "The response has fewer than 100 words.",
         "The response contains the word \"cheap\"."],
        "C1\nC2\nC3\nC4 IMPLIES C5\nNOT C6",
    ),
    (
        "Answer in exactly three paragraphs, either in French or in Spanish. Start your answer with the word "
        "\"Yes\" if and only if the answer is written in a formal register. End with a question.",
        "Three paragraphs is a count (logic). French or Spanish are two language constraints (semantic) joined "
        "by OR. Starting with \"Yes\" (logic) is equivalent to a formal register (semantic): IFF. Ending with a "
        "question is a format check (logic).",
        ["The response has exactly three paragraphs.",
         "The response is written in French.",
         "The response is written in Spanish.",
         "The first word of the response is \"Yes\".",
         "The response is written in a formal register.",
         "The response ends with a question mark."],
        "C1\nC2 OR C3\nC4 IFF C5\nC6",
    ),
)


def _example_block(number: int, instruction: str, reasoning: str, constraints: list[str], formula: str) -> str:
    listed = "\n".join(f"C{i}: {text}" for i, text in enumerate(constraints, start=1))
    return (f"### Example {number}\n<instruction>\n{instruction}\n</instruction>\n"
            f"Reasoning: {reasoning}\n<constraints>\n{listed}\n</constraints>\n<formula>\n{formula}\n</formula>")


def formulation_prompt(instruction: str, previous: str | None = None, error: str | None = None) -> Prompt:
    examples = "\n\n".join(_example_block(i, *ex) for i, ex in enumerate(FORMULATION_EXAMPLES, start=1))
    text = (
        "Decompose an instruction into the constraints a response must meet, and write their logical composition.\n\n"
        "## How to answer\n"
        "1. Think step by step: go through the instruction requirement by requirement; split each into atomic "
        "constraints (one checkable property each), stated positively — negations, \"either … or\", \"if … then\" "
        "and \"if and only if\" belong in the formula, not in the constraints. Note for each whether it is a "
        "logic constraint (counts, words, keywords, format, positions) or a semantic one (tone, topic, style, "
        "meaning).\n"
        "2. Then list the constraints inside <constraints> … </constraints>, one per line, as "
        "\"C<number>: <one-line summary>\", numbered C1, C2, … in order. The same property gets one identifier.\n"
        f"3. Then write the formula over C1, C2, … inside <formula> … </formula>: {FORMULA_SYNTAX}. Every "
        "constraint must appear in the formula.\n\n"
        f"## Examples\n{examples}\n\n"
        f"## The instruction to decompose\n<instruction>\n{instruction.strip()}\n</instruction>\n"
    )
    if previous is not None:
        text += (f"\n## Your previous answer\n{previous.strip()}\n\n## Problem with it\n{(error or '').strip()}\n\n"
                 "Answer again, in full, in the same format (reasoning, <constraints>, <formula>).\n")
    else:
        text += "\nReasoning:"
    return Prompt(SYSTEM["formulation"], text)


def _user_checker_lines(user_checkers: Iterable[Any]) -> str:
    return "\n".join(f"- {c.info.signature()}: {c.info.description}"
                     + (" Parameters: " + "; ".join(f"{k}: {v}" if v else k for k, v in c.info.params.items())
                        if c.info.params else "")
                     for c in user_checkers)


def plan_prompt(instruction: str, cid: str, summary: str, user_checkers: Iterable[Any] = ()) -> Prompt:
    user_checkers = list(user_checkers)
    offered = ""
    checker_field = ""
    if user_checkers:
        offered = (
            "\n## User checkers\nThese trusted checker functions are available. If one of them checks exactly "
            "this constraint, use it — it is preferred over writing new code:\n"
            f"{_user_checker_lines(user_checkers)}\n"
        )
        checker_field = ("checker: the name of the user checker to use, or none\n"
                         "arguments: its arguments as one JSON object (without the response), e.g. {\"limit\": 3}\n")
    text = (
        "Plan how to check one constraint of an instruction on a response.\n\n"
        f"## Instruction (for context)\n{instruction.strip()}\n\n"
        f"## Constraint {cid}\n{summary.strip()}\n"
        f"{offered}\n"
        "## How to answer\n"
        "Decide whether the constraint is *logic* — decidable by a short deterministic Python function over the "
        "text (counts, words, keywords, format, positions) — or *semantic* — it needs understanding (tone, topic, "
        "style, meaning). Then write the plan inside <plan> … </plan>, one field per line:\n"
        "type: logic or semantic\n"
        "summary: the constraint in one line\n"
        "input: what the checker receives (the full response text, a str)\n"
        "output: what it returns (True when …, False otherwise)\n"
        "behaviour: how it decides, including edge cases and the conventions the instruction states\n"
        f"{checker_field}"
        "question: for a semantic constraint, the yes/no question a judge must answer about the response\n"
    )
    return Prompt(SYSTEM["plan"], text)


def _checker_rules(wall_seconds: float) -> str:
    return (
        "## Rules\n"
        "- Define `def check(response: str) -> bool`. It receives the full response text as its only argument "
        "and returns True when the constraint holds, False otherwise — a bool, nothing else.\n"
        "- Work only on the `response` argument. You are not shown the response: never copy, retype or embed "
        "response text in the code.\n"
        "- Standard library only (re, string, collections, …); no files, network, input() or printing.\n"
        "- Follow the conventions the instruction states (what counts as a word, a title, a sentence, …).\n"
        f"- Keep it short and deterministic; it runs in a sandbox with a {wall_seconds:g} s time limit.\n"
    )


def _plan_text(plan: Mapping[str, Any]) -> str:
    keys = ("type", "summary", "input", "output", "behaviour")
    return "\n".join(f"{k}: {plan.get(k)}" for k in keys if plan.get(k))


def checker_prompt(instruction: str, cid: str, summary: str, plan: Mapping[str, Any], wall_seconds: float) -> Prompt:
    text = (
        "Write a Python checker for one constraint of an instruction.\n\n"
        f"## Instruction (for context)\n{instruction.strip()}\n\n"
        f"## Constraint {cid}\n{summary.strip()}\n\n"
        f"## Checking plan\n{_plan_text(plan)}\n\n"
        f"{_checker_rules(wall_seconds)}\n"
        "## Answer\nThink briefly about the edge cases, then give the complete program in one ```python block."
    )
    return Prompt(SYSTEM["checker"], text)


def reflection_prompt(instruction: str, cid: str, summary: str, plan: Mapping[str, Any], code: str, failure: str,
                      round_number: int, wall_seconds: float) -> Prompt:
    text = (
        "Your checker for one constraint of an instruction failed when it ran on the response. Fix it.\n\n"
        f"## Instruction (for context)\n{instruction.strip()}\n\n"
        f"## Constraint {cid}\n{summary.strip()}\n\n"
        f"## Checking plan\n{_plan_text(plan)}\n\n"
        f"{_checker_rules(wall_seconds)}\n"
        f"## Your checker (attempt {round_number})\n```python\n{code.rstrip()}\n```\n\n"
        f"## What happened when it ran\n{failure.strip()}\n\n"
        "## Answer\nReflect on the cause in a few sentences, then give the complete corrected program in one "
        "```python block."
    )
    return Prompt(SYSTEM["checker"], text)


def judge_prompt(instruction: str, cid: str, summary: str, question: str, output: str) -> Prompt:
    """The tailored judge prompt of one constraint (the response is quoted verbatim)."""
    text = (
        "Decide whether the response satisfies one constraint of an instruction.\n\n"
        f"## Instruction (for context)\n{instruction.strip()}\n\n"
        f"## Constraint {cid}\n{summary.strip()}\n\n"
        f"## Question\n{question.strip()}\n\n"
        "## Response\n<response>\n" + output + "\n</response>\n\n"
        "## Answer\nJudge only this constraint. Reason briefly, quoting the response where it matters, then end "
        f"with exactly one of {SATISFIED} or {VIOLATED}."
    )
    return Prompt(SYSTEM["judge"], text)


HOLISTIC_EXAMPLES = (
    (
        "Write two sentences about the sea. Do not use the word \"blue\". End with a question.",
        "The sea is calm tonight. Will the storm come tomorrow?",
        "Two sentences, about the sea, no \"blue\", and the last sentence is a question.",
        SATISFIED,
    ),
    (
        "Write a haiku about autumn in a cheerful tone, and include the word \"maple\".",
        "Cold rain on the roof\nleaves rot in the empty yard\nsummer will not come",
        "It has the 5-7-5 shape and is about autumn, but it is gloomy rather than cheerful and the word "
        "\"maple\" is missing.",
        VIOLATED,
    ),
)


def holistic_judge_prompt(instruction: str, output: str) -> Prompt:
    """The LLM-as-judge baseline: one two-shot prompt for the whole instruction."""
    shots = "\n\n".join(
        f"### Example {i}\nInstruction:\n{ins}\nResponse:\n<response>\n{resp}\n</response>\nReasoning: {why}\n{mark}"
        for i, (ins, resp, why, mark) in enumerate(HOLISTIC_EXAMPLES, start=1)
    )
    text = (
        "Decide whether the response follows every requirement of the instruction.\n\n"
        f"## Examples\n{shots}\n\n"
        f"## Instruction\n{instruction.strip()}\n\n"
        "## Response\n<response>\n" + output + "\n</response>\n\n"
        "## Answer\nCheck each requirement in turn (counts must be counted exactly), reason briefly, then end "
        f"with exactly one of {SATISFIED} (every requirement is met) or {VIOLATED} (at least one is not)."
    )
    return Prompt(SYSTEM["holistic_judge"], text)


def writer_prompt(instruction: str) -> Prompt:
    return Prompt(SYSTEM["writer"],
                  f"## Instruction\n{instruction.strip()}\n\n## Answer\nWrite the response only, inside "
                  "<response> … </response>.")


def rewrite_prompt(instruction: str, previous: str, feedback: str | None) -> Prompt:
    """A new attempt after a failed verification: with the explanation, or (``None``) the verdict only."""
    if feedback is None:
        why = "A verifier found that your previous response does not follow the instruction."
    else:
        why = f"A verifier found that your previous response does not follow the instruction:\n{feedback.strip()}"
    return Prompt(SYSTEM["writer"],
                  f"## Instruction\n{instruction.strip()}\n\n## Your previous response\n<response>\n{previous}\n"
                  f"</response>\n\n## Verification\n{why}\n\n## Answer\nWrite a new response that follows every "
                  "requirement, inside <response> … </response>.")


def violating_writer_prompt(instruction: str, break_these: list[str], keep_these: list[str]) -> Prompt:
    """For VifBench data written by an LLM: a response that breaks some constraints on purpose."""
    broken = "\n".join(f"- {text}" for text in break_these)
    kept = "\n".join(f"- {text}" for text in keep_these) or "- (none)"
    return Prompt(SYSTEM["writer"],
                  f"## Instruction\n{instruction.strip()}\n\n## Task\nWrite a response to this instruction that "
                  f"deliberately does NOT satisfy these constraints:\n{broken}\nand satisfies these:\n{kept}\n\n"
                  "## Answer\nWrite the response only, inside <response> … </response>.")


def role_of(messages: list[Mapping[str, str]]) -> str | None:
    """The role whose system prompt opens ``messages`` (for scripted models and traces)."""
    system = messages[0].get("content", "") if messages else ""  # a system message, or one folded into the user turn
    for role, text in SYSTEM.items():
        if system.startswith(text):
            return role
    return None


__all__ = ["FORMULA_SYNTAX", "SATISFIED", "SYSTEM", "VIOLATED", "checker_prompt", "formulation_prompt",
           "holistic_judge_prompt", "judge_prompt", "plan_prompt", "reflection_prompt", "rewrite_prompt", "role_of",
           "violating_writer_prompt", "writer_prompt"]
