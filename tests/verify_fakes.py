"""A scripted LLM for the verifier tests that answers by prompt role (formulation / plan / checker code /
reflection / judge / holistic judge / writer), plus a small hand-written instruction to use it on.

    roles = ScriptedRoles()                       # the NOTE instruction below, answered correctly
    roles.codes["C1"] = [CRASH, LOOP, GARBAGE]    # checker programs for C1, in order (the last repeats)
    backend = roles.backend()                     # a LangChainChatBackend over a HandlerChatModel
    LoopbackLLM(lambda body: roles(body["messages"]))   # the same answers over real HTTP

``roles.calls`` lists (role, user prompt) of every request.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify import HandlerChatModel, role_of
from autonesy.agents.verify.scripted_llm import quoted_response

INSTRUCTION = ('Write a short note. Include the word "lantern". If you write more than 20 words, use a humorous '
               'tone. Do not use the word "cheap".')
SUMMARIES = {
    "C1": 'The response contains the word "lantern".',
    "C2": "The response has more than 20 words.",
    "C3": "The response is written in a humorous tone.",
    "C4": 'The response contains the word "cheap".',
}
FORMULA = "C1\nC2 IMPLIES C3\nNOT C4"
FORMULATION = ("Reasoning: four constraints; C2 (length) makes C3 (tone) required; C4 is negated.\n<constraints>\n"
               + "\n".join(f"{cid}: {text}" for cid, text in SUMMARIES.items())
               + f"\n</constraints>\n<formula>\n{FORMULA}\n</formula>")
KINDS = {"C1": "logic", "C2": "logic", "C3": "semantic", "C4": "logic"}
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
LONG_GLOOMY = ("The lantern light fell on the empty road and we walked home slowly through the rain, thinking about "
               "the long winter ahead.")  # C2 holds, C3 (humorous) does not


def humorous(response: str) -> bool:
    return bool(re.search(r"\b(giggle|laugh|joke|silly)\w*", response, re.I))


def fenced(code: str) -> str:
    return f"Here is the checker.\n```python\n{code}```"


class ScriptedRoles:
    def __init__(self, *, formulation: list[str] | None = None, judge: Callable[[str, str], bool] | None = None,
                 writer: list[str] | None = None) -> None:
        self.formulation = list(formulation or [FORMULATION])
        self.codes: dict[str, list[str]] = {cid: [code] for cid, code in CODES.items()}
        self.plans: dict[str, str] = {}
        self.judge = judge or (lambda cid, response: humorous(response) if cid == "C3" else None)
        self.writer = list(writer or [SAT])
        self.calls: list[tuple[str, str]] = []
        self._seen: dict[str, int] = defaultdict(int)

    def _next(self, key: str, answers: list[str]) -> str:
        index = self._seen[key]
        self._seen[key] += 1
        return answers[min(index, len(answers) - 1)]

    def __call__(self, messages) -> str:
        role = role_of(messages)
        user = messages[-1]["content"]
        if role == "checker" and "failed when it ran" in user:
            role = "reflection"
        self.calls.append((role, user))
        cid_match = re.search(r"## Constraint (C[0-9]+)\n", user)
        cid = cid_match.group(1) if cid_match else None
        if role == "formulation":
            return self._next("formulation", self.formulation)
        if role == "plan":
            if cid in self.plans:
                return self.plans[cid]
            kind = KINDS.get(cid, "semantic")
            extra = f"\nquestion: Is it true that {SUMMARIES[cid].lower().rstrip('.')}?" if kind == "semantic" else ""
            return (f"<plan>\ntype: {kind}\nsummary: {SUMMARIES.get(cid, '')}\ninput: the response text\n"
                    f"output: True when it holds\nbehaviour: as stated{extra}\n</plan>")
        if role in ("checker", "reflection"):
            return fenced(self._next(f"code:{cid}", self.codes.get(cid, [GARBAGE])))
        if role == "judge":
            response = quoted_response(user) or ""
            if cid == "C3" or cid not in CODES:
                value = self.judge(cid, response)
            else:  # a fallback for a logic constraint: judge with the reference program
                namespace: dict = {}
                exec(CODES[cid], namespace)
                value = namespace["check"](response)
            if value is None:
                return "I am not sure."
            return f"Looking at the response. {'[[SATISFIED]]' if value else '[[VIOLATED]]'}"
        if role == "holistic_judge":
            response = quoted_response(user) or ""
            ok = bool(re.search(r"\blantern\b", response, re.I)) and not re.search(r"\bcheap\b", response, re.I) \
                and (len(response.split()) <= 20 or humorous(response))
            return "All requirements checked. " + ("[[SATISFIED]]" if ok else "[[VIOLATED]]")
        if role == "writer":
            return f"<response>\n{self._next('writer', self.writer)}\n</response>"
        return "?"

    def roles(self) -> list[str]:
        return [role for role, _ in self.calls]

    def backend(self, name: str = "scripted") -> LangChainChatBackend:
        return LangChainChatBackend(HandlerChatModel(handler=self, model_name=name), "scripted", name, retries=1)
