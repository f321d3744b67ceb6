"""The checking agent, per constraint: classify (logic / semantic), plan, and write checker code.

- ``plan``: one request; the answer's ``<plan>`` block holds ``type``, ``summary``, ``input``,
  ``output``, ``behaviour``, and for semantic constraints the ``question`` a judge must answer (the
  tailored judge prompt). When user checkers are offered, ``checker`` / ``arguments`` name one of them
  and its arguments (JSON) — the agent's way of preferring a user checker for a matching constraint.
- ``write`` / ``reflect``: the program defining ``check(response) -> bool``, read from the last
  ```` ```python ```` block. The agent never sees the response: it is handed to ``check`` in the sandbox
  (:mod:`autonesy.tools.checker_run`).

A plan that cannot be read falls back to ``semantic`` with the summary as the judge's question
(``note`` says so) — a judge can always answer; a missing program is a failed round like a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import checker_prompt, plan_prompt, reflection_prompt

KINDS = ("logic", "semantic")
_PLAN_BLOCK = re.compile(r"<\s*plan\s*>(.*?)(?:<\s*/\s*plan\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_FIELD = re.compile(r"^\s*[-*]?\s*\**(type|kind|summary|input|output|behaviou?r|checker|arguments|question)\**\s*:\s*(.*)$",
                    re.IGNORECASE)
_CODE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.IGNORECASE | re.DOTALL)


@dataclass
class Plan:
    kind: str  # logic | semantic
    summary: str = ""
    input: str = ""
    output: str = ""
    behaviour: str = ""
    question: str = ""
    checker: str | None = None  # a user checker's name
    arguments: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "summary": self.summary, "input": self.input, "output": self.output,
                "behaviour": self.behaviour, "question": self.question, "checker": self.checker,
                "arguments": self.arguments, "note": self.note}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Plan":
        return cls(data.get("type", "semantic"), data.get("summary", ""), data.get("input", ""),
                   data.get("output", ""), data.get("behaviour", ""), data.get("question", ""), data.get("checker"),
                   dict(data.get("arguments") or {}), data.get("note", ""))


def default_question(summary: str) -> str:
    return f"Does the response satisfy this constraint: {summary.strip()}"


def parse_plan(text: str, summary: str, user_checkers: Iterable[str] = ()) -> Plan:
    """Read a ``<plan>`` block; unreadable or incomplete plans get safe defaults (see ``note``)."""
    blocks = _PLAN_BLOCK.findall(text or "")
    fields: dict[str, str] = {}
    if blocks:
        current = None
        for line in blocks[-1].splitlines():
            match = _FIELD.match(line)
            if match:
                current = match.group(1).lower().replace("behavior", "behaviour").replace("kind", "type")
                fields[current] = match.group(2).strip()
            elif current and line.strip():
                fields[current] += " " + line.strip()
    notes = []
    kind = fields.get("type", "").strip().strip("*`'\"").lower()
    kind = next((k for k in KINDS if kind.startswith(k)), None)
    if kind is None:
        notes.append("no readable plan type; judged as a semantic constraint")
        kind = "semantic"
    plan = Plan(kind, fields.get("summary") or summary, fields.get("input", ""), fields.get("output", ""),
                fields.get("behaviour", ""), fields.get("question", ""))
    if kind == "semantic" and not plan.question:
        plan.question = default_question(summary)
    name = (fields.get("checker") or "").strip().strip("`'\"*")
    name = re.split(r"[\s(]", name, maxsplit=1)[0] if name else ""
    known = set(user_checkers)
    if name and name.lower() not in ("none", "no", "n/a", "-") and name in known:
        plan.checker = name
        raw = fields.get("arguments", "").strip().strip("`")
        if raw and raw.lower() not in ("none", "{}"):
            try:
                arguments = json.loads(raw)
            except ValueError:
                arguments = None
            if isinstance(arguments, dict):
                plan.arguments = arguments
            else:
                notes.append(f"the arguments for {name} are not a JSON object")
    elif name and name.lower() not in ("none", "no", "n/a", "-"):
        notes.append(f"unknown user checker {name!r} ignored")
    plan.note = "; ".join(notes)
    return plan


def extract_code(text: str) -> str | None:
    """The program in the answer: the last fenced block defining ``check``, else the last block,
    else the whole answer when it defines ``check``."""
    blocks = _CODE.findall(text or "")
    with_check = [b for b in blocks if re.search(r"def\s+check\s*\(", b)]
    if with_check:
        return with_check[-1].strip() + "\n"
    if blocks:
        return blocks[-1].strip() + "\n"
    if re.search(r"^def\s+check\s*\(", text or "", re.MULTILINE):
        return text.strip() + "\n"
    return None


NO_CODE = "the answer holds no ```python block defining check(response)"


class CheckingAgent:
    def __init__(self, backend: ChatBackend | None, *, user_checkers: Iterable[Any] = (), wall_seconds: float = 10.0,
                 **params: Any) -> None:
        self.backend = backend
        self.user_checkers = list(user_checkers)
        self.wall_seconds = wall_seconds
        self.params = params

    def plan(self, instruction: str, cid: str, summary: str) -> tuple[AgentTurn, Plan]:
        turn = ask(self.backend, "plan", plan_prompt(instruction, cid, summary, self.user_checkers), cid, **self.params)
        if turn.error is not None:
            return turn, Plan("semantic", summary, question=default_question(summary),
                              note=f"LLM error while planning ({turn.error.kind}); judged as semantic")
        return turn, parse_plan(turn.text, summary, [c.name for c in self.user_checkers])

    def write(self, instruction: str, cid: str, summary: str, plan: Plan) -> tuple[AgentTurn, str | None]:
        prompt = checker_prompt(instruction, cid, summary, plan.to_dict(), self.wall_seconds)
        turn = ask(self.backend, "checker", prompt, f"{cid}:0", **self.params)
        return turn, None if turn.error else extract_code(turn.text)

    def reflect(self, instruction: str, cid: str, summary: str, plan: Plan, code: str, failure: str,
                round_number: int) -> tuple[AgentTurn, str | None]:
        prompt = reflection_prompt(instruction, cid, summary, plan.to_dict(), code, failure, round_number,
                                   self.wall_seconds)
        turn = ask(self.backend, "reflection", prompt, f"{cid}:{round_number}", **self.params)
        return turn, None if turn.error else extract_code(turn.text)


__all__ = ["CheckingAgent", "KINDS", "NO_CODE", "Plan", "default_question", "extract_code", "parse_plan"]
