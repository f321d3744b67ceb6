"""A scripted chat model whose answer is a function of the prompt (thread-safe, order-independent).

    model = ScriptedChatModel(answer=lambda prompt: "...", latency_s=0.0)
    backend = LangChainChatBackend(model, "http://scripted.test/v1", "mistakes", retries=1)

Unlike langchain-core's FakeListChatModel (which answers from a list in call order), the answer
depends only on the last user message, so attempts running concurrently in any order get the
same answers. ``latency_s`` simulates a slow endpoint (sleeps, releasing the GIL).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedChatModel(BaseChatModel):
    answer: Callable[[str], str]
    latency_s: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        prompt = str(messages[-1].content)
        if self.latency_s:
            time.sleep(self.latency_s)
        text = self.answer(prompt)
        usage = {
            "input_tokens": len(prompt) // 4,
            "output_tokens": len(text) // 4,
            "total_tokens": len(prompt) // 4 + len(text) // 4,
        }
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def task_of(prompt: str, tasks) -> Any:
    """Which of ``tasks`` a prompt is about (by its variable list)."""
    for task in tasks:
        if all(f". {name}: " in prompt for name in task.names):
            return task
    raise AssertionError("prompt about an unknown task")


def format_of(prompt: str) -> str:
    from autonesy.agents.prompts import FORMAT_TITLES

    for fmt, title in FORMAT_TITLES.items():
        if f"propositional formula in {title}." in prompt:
            return fmt
    raise AssertionError("prompt without a known format")


# --------------------------------------------------------------------------------------------
# The "known mistakes" script of tests/graph/test_sweep.py, over fashion and sushi in DIMACS and NAT:
#   fashion · dimacs                  the right formula                                   F1 1
#   fashion · nat · zs                "at least one class" only (permissive)              F1 20/1033
#   fashion · nat · zs-cot            the right formula                                   F1 1
#   sushi · dimacs                    a broken formula; the repair agent then answers
#        detailed                     [[FIXED]] + the right formula (1 repair round)      F1 1
#        not-detailed                 [[OK]] → rejected as a syntax error (1 round)       F1 0
#   sushi · nat · detailed            the right formula                                   F1 1
#   sushi · nat · not-detailed        "each item has exactly one rank" only (permissive)  F1 6/35
MISTAKE_TASKS = ("fashion", "sushi")


def _block(text: str) -> str:
    return f"<cnf>\n{text.strip()}\n</cnf>"


def _exactly_one_nat(names) -> list[str]:
    return [" OR ".join(names)] + [f"NOT ({a} AND {b})" for i, a in enumerate(names) for b in names[i + 1 :]]


def mistakes_answer(prompt: str) -> str:
    from autonesy.tasks.reference import reference_source
    from autonesy.tasks.registry import get_task

    tasks = [get_task(name) for name in MISTAKE_TASKS]
    task = task_of(prompt, tasks)
    fmt = format_of(prompt)
    right = _block(reference_source(task, fmt))
    detailed = task.descriptions.detailed.strip() in prompt
    if "## Checker error" in prompt:  # the repair prompt
        return f"[[FIXED]]\n{right}" if detailed else "[[OK]] the formula is fine"
    cot = "Think step by step" in prompt
    if task.name == "fashion":
        if fmt == "nat" and not cot:
            return _block(" OR ".join(task.names))
        return ("Step by step: exactly one class.\n" if cot else "") + right
    if fmt == "dimacs":
        return _block("p cnf 16 1\n1 2 banana 0")
    if detailed:
        return right
    rows = [task.names[i : i + 4] for i in range(0, 16, 4)]
    return _block("\n".join(line for row in rows for line in _exactly_one_nat(row)))
