"""Scripted chat models for the verifier: ``HandlerChatModel`` (a LangChain chat model that answers with
a Python function of the messages and reports estimated token usage) and ``VifBenchOracle`` (a
handler that answers every verifier role from the VifBench ground truth).

The oracle is the verifier's self-test, like the ``expert`` policy of the formalization pipeline: it
returns the right decomposition, plans, checker programs (the reference checkers written out as
standalone programs, which still run in the sandbox) and judgements (the reference checkers applied
to the quoted response). With it, ``vifbench eval`` must reproduce every label; it is also what
``benchmarks/verify_cost.py`` runs to compare the cost of the verifiers on the same data.
Token counts are estimates (characters / 4).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from autonesy.agents.verify.prompts import SATISFIED, VIOLATED, role_of
from autonesy.tasks.vifbench.constraints import Constraint, Instruction
from autonesy.tools.checkers import standalone_source

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


def estimate_tokens(text: str) -> int:
    return max(1, round(len(text) / 4))


def _content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


class HandlerChatModel(BaseChatModel):
    """Answers with ``handler(messages) -> str`` (``messages`` as ``[{"role", "content"}]``)."""

    handler: Any
    model_name: str = "handler"

    @property
    def _llm_type(self) -> str:
        return "handler-chat-model"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        plain = [{"role": _ROLES.get(m.type, m.type), "content": _content(m)} for m in messages]
        text = self.handler(plain)
        prompt_tokens = sum(estimate_tokens(m["content"]) for m in plain)
        completion_tokens = estimate_tokens(text)
        usage = {"input_tokens": prompt_tokens, "output_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def _between(text: str, start: str, end: str) -> str | None:
    i = text.rfind(start)
    if i < 0:
        return None
    i += len(start)
    j = text.find(end, i)
    return text[i:j] if j >= 0 else text[i:]


def quoted_response(text: str) -> str | None:
    """The response a judge prompt quotes (between ``## Response\\n<response>\\n`` and the last
    ``\\n</response>``)."""
    marker = "## Response\n<response>\n"
    i = text.rfind(marker)
    j = text.rfind("\n</response>")
    return text[i + len(marker): j] if i >= 0 and j >= i + len(marker) - 1 else None


class VifBenchOracle:
    """Answers each verifier role for VifBench records (see the module docstring)."""

    def __init__(self, records: Iterable[Mapping[str, Any]]) -> None:
        self.instructions: dict[str, Instruction] = {}
        self.outputs: dict[tuple[str, str], str] = {}
        self.constraints: dict[str, Constraint] = {}
        for rec in records:
            instruction = Instruction.from_dict(rec)
            self.instructions[rec["instruction"].strip()] = instruction
            self.outputs.setdefault((rec["instruction"].strip(), rec["verdict"]), rec["output"])
            for constraint in instruction.constraints:
                self.constraints[constraint.summary] = constraint

    def __call__(self, messages: list[Mapping[str, str]]) -> str:
        role = role_of(messages)
        user = messages[-1]["content"]
        answer = getattr(self, f"_{role}", None) if role else None
        return answer(user) if answer else "I cannot help with this request."

    # -- roles -------------------------------------------------------------------------------------
    def _constraint(self, user: str) -> Constraint | None:
        summary = re.search(r"## Constraint C[0-9]+\n(.*?)\n", user)
        return self.constraints.get(summary.group(1).strip()) if summary else None

    def _formulation(self, user: str) -> str:
        text = _between(user, "<instruction>\n", "\n</instruction>")
        instruction = self.instructions.get((text or "").strip())
        if instruction is None:
            return "I do not know this instruction."
        listed = "\n".join(f"{c.id}: {c.summary}" for c in instruction.constraints)
        kinds = ", ".join(f"{c.id} is {c.kind}" for c in instruction.constraints)
        return (f"Reasoning: the instruction has {len(instruction.parts)} requirements over "
                f"{len(instruction.constraints)} atomic constraints; {kinds}. Negations, alternatives, conditions and "
                f"equivalences go into the formula.\n<constraints>\n{listed}\n</constraints>\n"
                f"<formula>\n{instruction.formula}\n</formula>")

    def _plan(self, user: str) -> str:
        constraint = self._constraint(user)
        if constraint is None:
            return "<plan>\ntype: semantic\nquestion: Does the response satisfy the constraint?\n</plan>"
        fields = [f"type: {constraint.kind}", f"summary: {constraint.summary}",
                  "input: the full response text (str)",
                  "output: True when the constraint holds, False otherwise",
                  f"behaviour: apply the instruction's conventions for the {constraint.type.replace('_', ' ')} check"]
        if constraint.kind == "logic" and "## User checkers" in user and re.search(rf"^- {constraint.type}\(", user, re.MULTILINE):
            fields += [f"checker: {constraint.type}", f"arguments: {json.dumps(dict(constraint.params))}"]
        if constraint.kind == "semantic":
            fields.append(f"question: Is it true that {constraint.clause}?")
        return "The constraint is " + constraint.kind + ".\n<plan>\n" + "\n".join(fields) + "\n</plan>"

    def _checker(self, user: str) -> str:
        constraint = self._constraint(user)
        if constraint is None:
            return "```python\ndef check(response):\n    return True\n```"
        return f"The check follows the plan.\n```python\n{standalone_source(constraint.type, constraint.params)}```"

    def _judge(self, user: str) -> str:
        constraint = self._constraint(user)
        response = quoted_response(user)
        if constraint is None or response is None:
            return "I cannot tell. " + VIOLATED
        holds = constraint.check(response)
        return f"Checking whether {constraint.clause}: it {'does' if holds else 'does not'}.\n" + (SATISFIED if holds else VIOLATED)

    def _holistic_judge(self, user: str) -> str:
        text = _between(user, "## Instruction\n", "\n\n## Response")
        instruction = self.instructions.get((text or "").strip())
        response = quoted_response(user)
        if instruction is None or response is None:
            return "I cannot tell. " + VIOLATED
        labels = instruction.labels(response)
        verdict = instruction.verdict(labels)
        unmet = [c.id for c in instruction.constraints if not labels[c.id]]
        return (f"Going through the requirements: {', '.join(unmet) or 'none'} not met; the composition is "
                f"{'satisfied' if verdict == 'sat' else 'violated'}.\n" + (SATISFIED if verdict == "sat" else VIOLATED))

    def _writer(self, user: str) -> str:
        text = _between(user, "## Instruction\n", "\n\n## ")
        key = (text or "").strip()
        verdict = "unsat" if "deliberately does NOT satisfy" in user else "sat"
        output = self.outputs.get((key, verdict))
        return f"<response>\n{output}\n</response>" if output is not None else "<response>\nI am not sure.\n</response>"


def oracle_chat_model(records: Iterable[Mapping[str, Any]], model_name: str = "vifbench-oracle") -> HandlerChatModel:
    return HandlerChatModel(handler=VifBenchOracle(records), model_name=model_name)


__all__ = ["HandlerChatModel", "VifBenchOracle", "estimate_tokens", "oracle_chat_model", "quoted_response"]
