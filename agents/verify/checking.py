"""The checking agent: the checkers of every logic constraint of an instruction, in one request.

- ``write``: one request listing the logic constraints; the answer has, per constraint, a section
  ``### C<k>`` with the program defining ``check(response) -> bool`` (the last ```` ```python ````
  block of the section) and ``examples: {"accept": [...], "reject": [...]}`` — responses the program
  must accept and reject, run before the program is trusted (the self-test) — or, when user checkers
  are offered, ``user checker: NAME {json arguments}``.
- ``reflect``: one request for one constraint whose program failed (crashed, returned no bool, or
  disagreed with its own examples), answered with the corrected program.

The agent never sees the response: it is handed to ``check`` in the sandbox
(:mod:`autonesy.tools.verify.checker_run`). A section that cannot be read is a draft without code — a failed
round like a crash, reflected on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autonesy.agents.llm import ChatBackend
from autonesy.agents.policies import AgentTurn
from autonesy.agents.verify.ask import ask
from autonesy.agents.verify.prompts import checkers_prompt, reflection_prompt

_CODE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.IGNORECASE | re.DOTALL)
_SECTION = re.compile(r"^\s*#{2,4}\s*\**\s*(C[1-9][0-9]*)\b.*$", re.MULTILINE)
_EXAMPLES = re.compile(r"^\s*[-*]?\s*\**examples\**\s*:\s*(\{.*\})\s*$", re.IGNORECASE | re.MULTILINE)
_USER = re.compile(
    r"^\s*[-*]?\s*\**user checker\**\s*:\s*`?([A-Za-z_][\w.]*)`?\s*(\{.*\})?\s*`?\s*$", re.IGNORECASE | re.MULTILINE
)
NO_CODE = "the answer holds no ```python block defining check(response) for this constraint"


@dataclass
class Draft:
    """What the agent wrote for one constraint."""

    code: str | None = None
    accept: list[str] = field(default_factory=list)
    reject: list[str] = field(default_factory=list)
    checker: str | None = None  # a user checker's name
    arguments: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The draft as state data."""
        return {
            "code": self.code,
            "accept": self.accept,
            "reject": self.reject,
            "checker": self.checker,
            "arguments": self.arguments,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Draft:
        """A draft from state data (missing fields empty)."""
        return cls(
            data.get("code"),
            list(data.get("accept") or []),
            list(data.get("reject") or []),
            data.get("checker"),
            dict(data.get("arguments") or {}),
            data.get("note", ""),
        )


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


def _examples(section: str) -> tuple[list[str], list[str], str]:
    found = _EXAMPLES.findall(section)
    if not found:
        return [], [], "no examples to self-test the program on"
    try:
        data = json.loads(found[-1])
    except ValueError:
        return [], [], "the examples are not JSON"
    if not isinstance(data, dict):
        return [], [], "the examples are not a JSON object"
    accept = [x for x in data.get("accept") or [] if isinstance(x, str)]
    reject = [x for x in data.get("reject") or [] if isinstance(x, str)]
    return accept, reject, ""


def parse_checkers(text: str, ids: Sequence[str], user_checkers: Iterable[str] = ()) -> dict[str, Draft]:
    """A draft per constraint id; sections are found by their ``### C<k>`` heading (a single requested
    constraint may also be answered without one)."""
    text = text or ""
    known = set(user_checkers)
    marks = [(m.group(1), m.start(), m.end()) for m in _SECTION.finditer(text)]
    sections: dict[str, str] = {}
    for number, (cid, _, end) in enumerate(marks):
        stop = marks[number + 1][1] if number + 1 < len(marks) else len(text)
        sections.setdefault(cid, text[end:stop])
    if not marks and len(ids) == 1:
        sections[ids[0]] = text
    drafts = {}
    for cid in ids:
        section = sections.get(cid)
        if section is None:
            drafts[cid] = Draft(note=f"the answer has no section ### {cid}")
            continue
        user = _USER.search(section)
        if user and user.group(1) in known:
            try:
                arguments = json.loads(user.group(2)) if user.group(2) else {}
            except ValueError:
                arguments = None
            if isinstance(arguments, dict):
                drafts[cid] = Draft(checker=user.group(1), arguments=arguments)
                continue
            drafts[cid] = Draft(note=f"the arguments for {user.group(1)} are not a JSON object")
            continue
        accept, reject, note = _examples(section)
        if user:
            note = "; ".join(filter(None, [f"unknown user checker {user.group(1)!r} ignored", note]))
        drafts[cid] = Draft(extract_code(section), accept, reject, note=note)
    return drafts


class CheckingAgent:
    """Writes a checker program per logic constraint, self-tests it on its own examples, and reflects on failures."""

    def __init__(
        self,
        backend: ChatBackend | None,
        *,
        user_checkers: Iterable[Any] = (),
        wall_seconds: float = 10.0,
        **params: Any,
    ) -> None:
        self.backend = backend
        self.user_checkers = list(user_checkers)
        self.wall_seconds = wall_seconds
        self.params = params

    def write(self, constraints: Sequence[tuple[str, str]]) -> tuple[AgentTurn, dict[str, Draft]]:
        """Drafts for ``constraints`` ((id, summary) pairs); on an LLM error, none (the turn says why)."""
        prompt = checkers_prompt(constraints, self.user_checkers, self.wall_seconds)
        ids = [cid for cid, _ in constraints]
        turn = ask(self.backend, "checker", prompt, ",".join(ids), **self.params)
        if turn.error is not None:
            return turn, {}
        return turn, parse_checkers(turn.text, ids, [c.name for c in self.user_checkers])

    def reflect(
        self, instruction: str, cid: str, summary: str, code: str, failure: str, round_number: int
    ) -> tuple[AgentTurn, str | None]:
        """Show a failed checker and its failure; returns the turn and the corrected code (None when the call failed or
        gave no code)."""
        prompt = reflection_prompt(instruction, cid, summary, code, failure, round_number, self.wall_seconds)
        turn = ask(self.backend, "reflection", prompt, f"{cid}:{round_number}", **self.params)
        return turn, None if turn.error else extract_code(turn.text)


__all__ = ["CheckingAgent", "Draft", "NO_CODE", "extract_code", "parse_checkers"]
