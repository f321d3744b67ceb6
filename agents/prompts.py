"""Prompts of the formalization pipeline: the formalizer (5 formats × zs/zs-cot × 2 detail levels),
the syntax-repair prompt ([[OK]] / [[FIXED]]) and the semantic-repair prompt (oracle feedback).

Only the description differs between the detailed and the not-detailed prompt of a task; every
other byte is shared (a test pins this). Each format's conventions come from its front-end module
(``CONVENTION``), so what the prompt promises is what the parser accepts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from autonesy.agents.options import PROMPT_STYLES
from autonesy.tasks.task import Task
from autonesy.tools.formats import front_end

SYSTEM_ROLE = "You are an expert in SAT solving and constraint modeling."
FORMAT_TITLES = {
    "dimacs": "DIMACS CNF",
    "nat": "NAT (natural logic notation)",
    "pysat": "PySAT (Python)",
    "cpmpy": "CPMpy (Python)",
    "sympy": "SymPy (Python)",
}


@dataclass(frozen=True)
class Prompt:
    """A system and a user message, with optional few-shot turns before the question."""

    system: str
    user: str
    examples: tuple[tuple[str, str], ...] = ()  # few-shot: (question, answer) turns before the question

    def messages(self) -> list[dict[str, str]]:
        """The chat messages to send: system, the few-shot question/answer turns, then the question."""
        shots = [
            {"role": role, "content": text}
            for question, answer in self.examples
            for role, text in (("user", question), ("assistant", answer))
        ]
        return [{"role": "system", "content": self.system}, *shots, {"role": "user", "content": self.user}]


def with_examples(prompt: Prompt, examples: Sequence[tuple[str, str]]) -> Prompt:
    """The prompt preceded by worked examples, each a user question and the assistant's answer."""
    return replace(prompt, examples=tuple(examples))


def format_convention(fmt: str) -> str:
    """The output format's convention as its front-end states it (one text for the prompt and the parser)."""
    return front_end(fmt).CONVENTION.strip()


def variables_block(task: Task) -> str:
    """The numbered variable list of a prompt: DIMACS index, name and meaning."""
    lines = [f"{index}. {v.name}: {v.meaning}" for index, v in enumerate(task.variables, start=1)]
    return "\n".join(lines)


def _instructions(style: str) -> str:
    if style == "zs":
        return (
            "Answer with the formula only, inside a single <cnf> … </cnf> block. "
            "Do not add explanations outside the block."
        )
    if style == "zs-cot":
        return (
            "Think step by step: first restate each rule of the constraint in your own words and decide "
            "how to encode it, then write the complete formula inside a <cnf> … </cnf> block at the end "
            "of your answer. Only the last <cnf> block is read."
        )
    raise ValueError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")


def _problem(task: Task, fmt: str, description: str) -> str:
    return (
        f"Formalize the constraint below as a propositional formula in {FORMAT_TITLES[fmt]}.\n\n"
        f"## Variables\nThe constraint is over {task.num_vars} Boolean variables "
        f"(index. name: meaning):\n{variables_block(task)}\n\n"
        f"## Constraint\n{description.strip()}\n\n"
        f"## Output format: {FORMAT_TITLES[fmt]}\n{format_convention(fmt)}\n"
    )


def formalizer_prompt(task: Task, fmt: str, style: str, detail: str) -> Prompt:
    """The first prompt of an attempt."""
    body = _problem(task, fmt, task.descriptions.get(detail))
    return Prompt(SYSTEM_ROLE, f"{body}\n## Answer\n{_instructions(style)}")


def repair_prompt(task: Task, fmt: str, detail: str, source: str, error: str) -> Prompt:
    """Syntax repair: the rejected formula and the checker's error; answer [[OK]] or [[FIXED]] + block."""
    body = _problem(task, fmt, task.descriptions.get(detail))
    return Prompt(
        SYSTEM_ROLE,
        f"{body}\n## Your formula\n<cnf>\n{source.strip()}\n</cnf>\n\n"
        f"## Checker error\n{error.strip()}\n\n"
        "## Answer\nIf the formula is correct as it is and the error is not a real problem, answer exactly "
        "[[OK]]. Otherwise answer [[FIXED]] followed by the complete corrected formula inside a "
        "<cnf> … </cnf> block.",
    )


def semantic_repair_prompt(task: Task, fmt: str, detail: str, source: str, counterexamples: str) -> Prompt:
    """Oracle feedback: the formula parses but disagrees with the task on concrete assignments."""
    body = _problem(task, fmt, task.descriptions.get(detail))
    return Prompt(
        SYSTEM_ROLE,
        f"{body}\n## Your formula\n<cnf>\n{source.strip()}\n</cnf>\n\n"
        f"## Test failures\nThe formula parses, but it disagrees with the constraint on these assignments:\n"
        f"{counterexamples.strip()}\n\n"
        "## Answer\nWrite the complete corrected formula inside a <cnf> … </cnf> block.",
    )
