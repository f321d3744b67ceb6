"""A scripted LLM for the verifier tests that answers by prompt role (formulation / checker code for every
logic constraint / reflection / judge / holistic judge / writer), plus a small hand-written instruction
to use it on.

    roles = ScriptedRoles()                       # the NOTE instruction below, answered correctly
    roles.codes["C1"] = [CRASH, LOOP, GARBAGE]    # checker programs for C1, in order (the last repeats)
    roles.examples["C1"] = {"accept": [...], "reject": [...]}   # its self-test examples
    backend = roles.backend()                     # a LangChainChatBackend over a HandlerChatModel
    LoopbackLLM(lambda body: roles(body["messages"]))   # the same answers over real HTTP

``roles.calls`` lists (role, user prompt) of every request.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify import HandlerChatModel, role_of
from autonesy.agents.verify.scripted_llm import quoted_response

INSTRUCTION = (
    'Write a short note. Include the word "lantern". If you write more than 20 words, use a humorous '
    'tone. Do not use the word "cheap".'
)
SUMMARIES = {
    "C1": 'The response contains the word "lantern".',
    "C2": "The response has more than 20 words.",
    "C3": "The response is written in a humorous tone.",
    "C4": 'The response contains the word "cheap".',
}
FORMULA = "C1\nC2 IMPLIES C3\nNOT C4"
KINDS = {"C1": "logic", "C2": "logic", "C3": "semantic", "C4": "logic"}
FORMULATION = (
    "Reasoning: four constraints; C2 (length) makes C3 (tone) required; C4 is negated.\n<constraints>\n"
    + "\n".join(f"{cid} [{KINDS[cid]}]: {text}" for cid, text in SUMMARIES.items())
    + f"\n</constraints>\n<formula>\n{FORMULA}\n</formula>"
)
EXAMPLES = {
    "C1": {"accept": ["A lantern."], "reject": ["A candle."]},
    "C2": {"accept": [" ".join(["word"] * 21)], "reject": ["Too short."]},
    "C4": {"accept": ["It is cheap."], "reject": ["It is dear."]},
}
CODES = {
    "C1": "import re\n\ndef check(response):\n    return re.search(r'\\blantern\\b', response, re.I) is not None\n",
    "C2": "def check(response):\n    return len(response.split()) > 20\n",
    "C4": "import re\n\ndef check(response):\n    return re.search(r'\\bcheap\\b', response, re.I) is not None\n",
}
CRASH = "def check(response):\n    return response.split()[1000]\n"
LOOP = "def check(response):\n    while True:\n        pass\n"
GARBAGE = "def check(response):\n    return 'yes'\n"
NO_DEF = "result = 42\n"

SAT = "The lantern made us giggle all evening."  # 7 words: C1 holds, C2 does not, C4 does not
NO_LANTERN = "The candle made us giggle all evening."  # violates C1 only
LONG_GLOOMY = (
    "The lantern light fell on the empty road and we walked home slowly through the rain, thinking about "
    "the long winter ahead."
)  # C2 holds, C3 (humorous) does not


def humorous(response: str) -> bool:
    return bool(re.search(r"\b(giggle|laugh|joke|silly)\w*", response, re.I))


def fenced(code: str) -> str:
    return f"Here is the checker.\n```python\n{code}```"


class ScriptedRoles:
    def __init__(
        self,
        *,
        formulation: list[str] | None = None,
        judge: Callable[[str, str], bool] | None = None,
        writer: list[str] | None = None,
    ) -> None:
        self.formulation = list(formulation or [FORMULATION])
        self.codes: dict[str, list[str]] = {cid: [code] for cid, code in CODES.items()}
        self.examples: dict[str, dict[str, list[str]]] = {cid: dict(e) for cid, e in EXAMPLES.items()}
        self.user_checker: dict[str, str] = {}  # constraint id -> "NAME {json arguments}"
        self.judge = judge or (lambda cid, response: humorous(response) if cid == "C3" else None)
        self.writer = list(writer or [SAT])
        self.calls: list[tuple[str, str]] = []
        self._seen: dict[str, int] = defaultdict(int)

    def _next(self, key: str, answers: list[str]) -> str:
        index = self._seen[key]
        self._seen[key] += 1
        return answers[min(index, len(answers) - 1)]

    @staticmethod
    def listed(user: str) -> list[str]:
        block = user.split("## Constraints\n", 1)[1].split("\n\n", 1)[0] if "## Constraints\n" in user else ""
        return re.findall(r"^(C[0-9]+): ", block, re.MULTILINE)

    def _judged(self, cid: str, response: str) -> bool | None:
        if cid == "C3" or cid not in CODES:
            return self.judge(cid, response)
        namespace: dict = {}  # a fallback for a logic constraint: judge with the reference program
        exec(CODES[cid], namespace)
        return namespace["check"](response)

    def __call__(self, messages) -> str:
        role = role_of(messages)
        user = messages[-1]["content"]
        if role == "checker" and "failed." in user.split("\n", 1)[0]:
            role = "reflection"
        self.calls.append((role, user))
        if role == "formulation":
            return self._next("formulation", self.formulation)
        if role == "checker":
            sections = []
            for cid in self.listed(user):
                if cid in self.user_checker:
                    sections.append(f"### {cid}\nuser checker: {self.user_checker[cid]}")
                    continue
                code = self._next(f"code:{cid}", self.codes.get(cid, [GARBAGE]))
                sections.append(f"### {cid}\n{fenced(code)}\nexamples: {json.dumps(self.examples.get(cid, {}))}")
            return "\n".join(sections)
        if role == "reflection":
            cid = re.search(r"## Constraint (C[0-9]+)\n", user).group(1)
            return fenced(self._next(f"code:{cid}", self.codes.get(cid, [GARBAGE])))
        if role == "judge":
            response = quoted_response(user) or ""
            lines = []
            for cid in self.listed(user):
                value = self._judged(cid, response)
                lines.append(
                    f"{cid}: I am not sure."
                    if value is None
                    else f"{cid}: looking at the response. {'[[SATISFIED]]' if value else '[[VIOLATED]]'}"
                )
            return "\n".join(lines)
        if role == "holistic_judge":
            response = quoted_response(user) or ""
            ok = (
                bool(re.search(r"\blantern\b", response, re.I))
                and not re.search(r"\bcheap\b", response, re.I)
                and (len(response.split()) <= 20 or humorous(response))
            )
            return "All requirements checked. " + ("[[SATISFIED]]" if ok else "[[VIOLATED]]")
        if role == "writer":
            return f"<response>\n{self._next('writer', self.writer)}\n</response>"
        return "?"

    def roles(self) -> list[str]:
        return [role for role, _ in self.calls]

    def backend(self, name: str = "scripted") -> LangChainChatBackend:
        return LangChainChatBackend(HandlerChatModel(handler=self, model_name=name), "scripted", name, retries=1)
