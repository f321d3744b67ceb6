"""Prompts of the instruction-following verifier (Nsvif design, docs/architecture.md §11).

One system prompt per agent role (``SYSTEM``: formulation, checker, judge, holistic_judge, writer) and
one builder per request. They are kept short: a verification costs at most three requests for a
fresh instruction (formulation with logic/semantic tags, every checker in one answer, every judged
constraint in one answer) and one for another response to the same instruction. The response being verified appears *only* in judge prompts
(semantic constraints, fallbacks, the LLM-as-judge baseline) and in the writer's feedback prompts;
the agents that write checker code never see it — a checker receives the text as its argument, so
no LLM ever re-types the output it checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from autonesy.agents.prompts import Prompt
from autonesy.tools.verify.checkers import helper_api

SYSTEM = {
    "formulation": (
        "You are the formulation agent of an instruction-following verifier: you decompose an "
        "instruction into atomic constraints, tag each as logic or semantic, and write their logical "
        "composition as a formula."
    ),
    "checker": (
        "You are the checking agent of an instruction-following verifier: you write small, exact Python "
        "checker functions."
    ),
    "judge": (
        "You are a careful judge of constraints: you decide whether a response satisfies each of them, and you say why."
    ),
    "holistic_judge": (
        "You are a careful judge of instruction following: you decide whether a response follows "
        "every requirement of an instruction."
    ),
    "cot_judge": (
        "You are a judge of instruction following who reasons step by step before deciding whether a "
        "response follows every requirement of an instruction."
    ),
    "literalist": (
        "You are the Literalist on a panel of three judges of instruction following: you hold the "
        "response to the exact letter of every requirement."
    ),
    "pragmatist": (
        "You are the Pragmatist on a panel of three judges of instruction following: you ask whether the "
        "response does what the instruction plainly means."
    ),
    "skeptic": (
        "You are the Skeptic on a panel of three judges of instruction following: you look for the "
        "requirement the response breaks, and doubt the others' reasons until checked."
    ),
    "writer": "You write texts that follow instructions exactly.",
}
PERSONAS = ("literalist", "pragmatist", "skeptic")  # Conv-CoT's panel, in speaking order
COT_GUIDANCE = (
    "Go through the instruction requirement by requirement. For each, quote the part of the response "
    'that decides it; count words, sentences and keywords exactly; apply negations, "either … or", '
    '"if … then" and "if and only if" as written.'
)
SATISFIED, VIOLATED = "[[SATISFIED]]", "[[VIOLATED]]"

FORMULA_SYNTAX = (
    "one requirement per line (all must hold); NOT, AND, OR, IMPLIES, IFF (or ¬ ∧ ∨ ⇒ ⇔) and parentheses; "
    "precedence NOT > AND > OR > IMPLIES > IFF"
)

FORMULATION_EXAMPLE = (
    'If you mention the price, stay under 100 words. Do not use the word "cheap".',
    [
        ("semantic", "The response mentions the price."),
        ("logic", "The response has fewer than 100 words."),
        ("logic", 'The response contains the word "cheap".'),
    ],
    "C1 IMPLIES C2\nNOT C3",
)


def formulation_prompt(instruction: str, previous: str | None = None, error: str | None = None) -> Prompt:
    """The formulation prompt, with a worked example; on a retry, the previous answer and its error."""
    example, listed, formula = FORMULATION_EXAMPLE
    lines = "\n".join(f"C{i} [{kind}]: {text}" for i, (kind, text) in enumerate(listed, start=1))
    text = (
        "Decompose the instruction into atomic constraints (one checkable property each, self-contained, stated positively: "
        'negations, "either … or", "if … then", "if and only if" go into the formula).\n'
        '<constraints>: one per line, "C<n> [logic|semantic]: <summary>", numbered C1, C2, … in order; logic: '
        "decidable by a short Python function (counts, words, keywords, format, positions); semantic: needs "
        "understanding (tone, topic, meaning).\n"
        f"<formula>: over every constraint; {FORMULA_SYNTAX}.\n\n"
        f"Example: {example}\n<constraints>\n{lines}\n</constraints>\n<formula>\n{formula}\n</formula>\n\n"
        f"<instruction>\n{instruction.strip()}\n</instruction>\n"
    )
    if previous is not None:
        text += (
            f"\n## Your previous answer\n{previous.strip()}\n\n## Problem with it\n{(error or '').strip()}\n\n"
            "Answer again, in full, in the same format (<constraints>, <formula>).\n"
        )
    return Prompt(SYSTEM["formulation"], text)


def _user_checker_lines(user_checkers: Iterable[Any]) -> str:
    return "\n".join(
        f"- {c.info.signature()}: {c.info.description}"
        + (
            " Parameters: " + "; ".join(f"{k}: {v}" if v else k for k, v in c.info.params.items())
            if c.info.params
            else ""
        )
        for c in user_checkers
    )


def _checker_rules(wall_seconds: float) -> str:
    """What a program is and may use: the helpers it finds defined, the function it defines, the limits."""
    helpers = "\n".join(f"- {line}" for line in helper_api())
    return (
        "## Helpers (already defined)\nThey follow the conventions of VifBench's instructions (the Nsvif paper's Table "
        "5): titles are lines that start with only one #, subsection titles lines that start with more than one #; "
        "counts of words and sentences and first and last words leave those lines out; keywords are string inclusion "
        "regardless of capitalization. Where an instruction states other conventions, follow the instruction.\n"
        f"{helpers}\n\n"
        "## Rules\nDefine `check(response: str) -> bool` (a bool, nothing else) and optionally `spans(response) -> "
        "list[str]`: the words, sentences or lines the result rests on. You never see the response. Standard "
        f"library only; no files, network, input() or printing; deterministic, under {wall_seconds:g} s.\n"
    )


def checkers_prompt(
    constraints: Iterable[tuple[str, str]], user_checkers: Iterable[Any], wall_seconds: float
) -> Prompt:
    """One request for the checkers of every logic constraint, each with examples it must accept and reject.

    The instruction is not repeated: the constraints are self-contained (the formulation states them
    so) and the helpers carry the conventions; a failed checker's reflection sees the instruction."""
    listed = "\n".join(f"{cid}: {summary.strip()}" for cid, summary in constraints)
    user_checkers = list(user_checkers)
    offered = (
        (
            "\n## User checkers\nTrusted functions; when one checks a constraint exactly, name it instead of "
            "writing a program:\n" + _user_checker_lines(user_checkers) + "\n"
        )
        if user_checkers
        else ""
    )
    text = (
        "Write a Python checker for each constraint.\n\n"
        f"## Constraints\n{listed}\n{offered}\n"
        f"{_checker_rules(wall_seconds)}\n"
        "## Answer\nPer constraint, in order: `### C<n>`, the program in one ```python block, then "
        '`examples: {"accept": [...], "reject": [...]}` (JSON: a short response it must accept, one it must reject)'
        + (', or instead `user checker: NAME {"argument": value}`' if user_checkers else "")
        + "."
    )
    return Prompt(SYSTEM["checker"], text)


def reflection_prompt(
    instruction: str, cid: str, summary: str, code: str, failure: str, round_number: int, wall_seconds: float
) -> Prompt:
    """The prompt to fix a failed checker: the constraint, the code, what went wrong and the time limit."""
    text = (
        "Your checker for one constraint of an instruction failed. Fix it.\n\n"
        f"## Instruction (for context)\n{instruction.strip()}\n\n## Constraint {cid}\n{summary.strip()}\n\n"
        f"{_checker_rules(wall_seconds)}\n"
        f"## Your checker (attempt {round_number})\n```python\n{code.rstrip()}\n```\n\n"
        f"## What happened\n{failure.strip()}\n\n"
        "## Answer\nName the cause in a sentence, then give the corrected program in one ```python block."
    )
    return Prompt(SYSTEM["checker"], text)


def judge_prompt(instruction: str | None, items: Iterable[tuple[str, str]], output: str) -> Prompt:
    """One request judging several constraints (``items``: id, summary) of one response, quoted verbatim.

    ``instruction`` is context for constraints that depend on its conventions (counts, formats); a
    semantic constraint is judged on its own (``None``), which keeps the prompt short."""
    listed = "\n".join(f"{cid}: {summary.strip()}" for cid, summary in items)
    context = f"## Instruction (for context)\n{instruction.strip()}\n\n" if instruction else ""
    text = (
        "Decide, for each constraint, whether the response satisfies it.\n\n"
        f"{context}## Constraints\n{listed}\n\n"
        "## Response\n<response>\n" + output + "\n</response>\n\n"
        "## Answer\nOne line per constraint: `C<n>: <brief reason, quoting the response where it matters> "
        f"{SATISFIED}` or `… {VIOLATED}`."
    )
    return Prompt(SYSTEM["judge"], text)


HOLISTIC_EXAMPLES = (
    (
        'Write two sentences about the sea. Do not use the word "blue". End with a question.',
        "The sea is calm tonight. Will the storm come tomorrow?",
        'Two sentences, about the sea, no "blue", and the last sentence is a question.',
        SATISFIED,
    ),
    (
        'Write a haiku about autumn in a cheerful tone, and include the word "maple".',
        "Cold rain on the roof\nleaves rot in the empty yard\nsummer will not come",
        "It has the 5-7-5 shape and is about autumn, but it is gloomy rather than cheerful and the word "
        '"maple" is missing.',
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


def cot_judge_prompt(instruction: str, output: str, guidance: str = COT_GUIDANCE) -> Prompt:
    """The CoT judge (GEPA-CoT): ``guidance`` is the part of the prompt GEPA optimises."""
    text = (
        "Decide whether the response follows every requirement of the instruction.\n\n"
        f"## How to judge\n{guidance.strip()}\n\n"
        f"## Instruction\n{instruction.strip()}\n\n"
        "## Response\n<response>\n" + output + "\n</response>\n\n"
        f"## Answer\nThink step by step, then end with exactly one of {SATISFIED} or {VIOLATED}."
    )
    return Prompt(SYSTEM["cot_judge"], text)


def panel_prompt(persona: str, instruction: str, output: str, transcript: list[tuple[str, str]]) -> Prompt:
    """One turn of the Conv-CoT panel: the persona reads what the others said so far and gives its verdict."""
    said = "\n\n".join(f"### {name.capitalize()}\n{text.strip()}" for name, text in transcript) or "(you speak first)"
    text = (
        "Decide, with the other judges, whether the response follows every requirement of the instruction.\n\n"
        f"## Instruction\n{instruction.strip()}\n\n"
        "## Response\n<response>\n" + output + "\n</response>\n\n"
        f"## The panel so far\n{said}\n\n"
        "## Answer\nThink step by step from your point of view, answer the others' points, then end with exactly "
        f"one of {SATISFIED} or {VIOLATED}."
    )
    return Prompt(SYSTEM[persona], text)


def writer_prompt(instruction: str) -> Prompt:
    """The prompt that asks for a response to an instruction."""
    return Prompt(
        SYSTEM["writer"],
        f"## Instruction\n{instruction.strip()}\n\n## Answer\nWrite the response only, inside "
        "<response> … </response>.",
    )


def rewrite_prompt(instruction: str, previous: str, feedback: str | None) -> Prompt:
    """A new attempt after a failed verification: with the explanation, or (``None``) the verdict only."""
    if feedback is None:
        why = "A verifier found that your previous response does not follow the instruction."
    else:
        why = f"A verifier found that your previous response does not follow the instruction:\n{feedback.strip()}"
    return Prompt(
        SYSTEM["writer"],
        f"## Instruction\n{instruction.strip()}\n\n## Your previous response\n<response>\n{previous}\n"
        f"</response>\n\n## Verification\n{why}\n\n## Answer\nWrite a new response that follows every "
        "requirement, inside <response> … </response>.",
    )


def role_of(messages: list[Mapping[str, str]]) -> str | None:
    """The role whose system prompt opens ``messages`` (for scripted models and traces)."""
    system = messages[0].get("content", "") if messages else ""  # a system message, or one folded into the user turn
    for role, text in SYSTEM.items():
        if system.startswith(text):
            return role
    return None


__all__ = [
    "COT_GUIDANCE",
    "FORMULA_SYNTAX",
    "PERSONAS",
    "SATISFIED",
    "SYSTEM",
    "VIOLATED",
    "checkers_prompt",
    "cot_judge_prompt",
    "formulation_prompt",
    "holistic_judge_prompt",
    "judge_prompt",
    "panel_prompt",
    "reflection_prompt",
    "rewrite_prompt",
    "role_of",
    "writer_prompt",
]
