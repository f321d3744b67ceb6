"""Agent policies: how an attempt asks for a formula, repairs it, and reacts to oracle feedback.

A policy is a :class:`Policy` subclass registered with the public ``@autonesy.policy("name")``
(``tools/registry.py``; docs/plugins.md has the contract); the graph only calls ``formalize``,
``repair`` and ``semantic_repair`` and reads ``max_repairs``, ``autofix`` and ``semantic_rounds``.
A policy asks its LLM through :meth:`Policy.ask` (the project's backend: cache, retries, deadlines,
grammar decoding, usage) as often as it likes in one step, may call the project's tools itself
(:meth:`Policy.check`, :meth:`Policy.oracle_test`, :meth:`Policy.compare`), and keeps its own state on
the instance across rounds; the graph traces and counts every call and tool use of the step.

The built-in five, registered like any plugin's:

- ``zs`` / ``zs-cot``: the benchmark's zero-shot and zero-shot chain-of-thought prompts;
- ``oracle-feedback``: as the chosen prompt style, plus semantic repair rounds fed with the oracle
  test's counterexamples (an extension beyond the paper; off in benchmark sweeps);
- ``few-shot``: the chosen prompt style after worked examples: the reference formalizations, in
  the same format, of the other tasks with the shortest ones (leave-one-task-out: never the task
  itself); a base model continues a pattern far better than it follows instructions;
- ``expert``: no LLM; answers with the task's reference formalization (the pipeline's self-test
  and the ceiling of every table).

Every LLM policy decodes ``free`` or under a ``grammar`` (``decoding``): the answer grammar of the
format for the task's variables (:mod:`autonesy.tools.grammar`), sent in the backend's dialect
(:mod:`autonesy.agents.llm.guided`). The formalizer's grammar allows bounded free reasoning before
the block with ``zs-cot``; the repair agent's is ``[[OK]]`` or ``[[FIXED]]`` and a block; the
semantic repair's a block. What a grammar cannot rule out (a header's counts, a program that
raises) still goes through autofix and the repair loop.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from autonesy.agents.llm.errors import LLMError
from autonesy.agents.llm.guided import answer_text, check_decoding, guided_params
from autonesy.agents.llm.response import LLMResponse
from autonesy.agents.options import DECODING_MODES
from autonesy.agents.prompts import Prompt, formalizer_prompt, repair_prompt, semantic_repair_prompt, with_examples
from autonesy.agents.repair import RepairVerdict, parse_repair_answer
from autonesy.tasks.task import Task
from autonesy.tools.cnf import CNF
from autonesy.tools.config import MAX_REPAIRS
from autonesy.tools.formats import convert
from autonesy.tools.formats.base import Conversion
from autonesy.tools.grammar import Grammar, answer_grammar, repair_grammar, to_gbnf
from autonesy.tools.grammar.close import close_cut
from autonesy.tools.registry import RegistryError, lookup, policy

if TYPE_CHECKING:
    from autonesy.agents.llm.chat import ChatBackend
    from autonesy.tasks.oracle_check import OracleTestResult
    from autonesy.tools.metrics import FormulaScore

DEFAULT_REASONING_CHARS = 1200  # zs-cot under a grammar: free text before the block, at most this long
TOKENS_PER_LINE = 32  # under a grammar, a block has at most (token budget / this) lines
GRAMMAR_DEPTH = 5  # bracket nesting allowed under a grammar: the deepest reference formalization (kand-logic, SymPy)
GRAMMAR_CHAIN = 8  # operands per chain, list or clause under a grammar (longer ones: more lines)
DEFAULT_SHOTS = 2


@dataclass(frozen=True)
class AttemptSpec:
    """What one formalization attempt is about: the task, the answer's format, the prompt style and the
    detail level of the description; ``labels``, the annotated training labels the oracle test checks
    (None: the task's oracle alone)."""

    task: Task
    format: str
    detail: str
    prompt: str = "zs-cot"
    labels: Any = field(default=None, repr=False, compare=False)


@dataclass
class AgentTurn:
    """One agent step: the messages sent, the answer (or the LLM error), for the trace."""

    role: str  # formalizer | repair | semantic_repair
    messages: list[dict[str, str]]
    text: str = ""
    response: LLMResponse | None = None
    error: LLMError | None = None
    verdict: RepairVerdict | None = None
    decoding: dict[str, Any] = field(default_factory=lambda: {"mode": "free"})
    sample: int = 0  # which of several answers to the same prompt in one step (0: the first)

    def to_dict(self) -> dict[str, Any]:
        """The turn as JSON data for the trace (messages, answer, usage, verdict, error)."""
        return {
            "role": self.role,
            "messages": self.messages,
            "text": self.text,
            "response": self.response.to_dict() if self.response else None,
            "error": self.error.to_dict() if self.error else None,
            "verdict": None if self.verdict is None else self.verdict.__dict__,
            "decoding": self.decoding,
            **({"sample": self.sample} if self.sample else {}),
        }


@dataclass
class ToolUse:
    """One project tool a policy called itself during a step (for the trace): which, what it said, how long."""

    tool: str  # check | oracle_test | compare
    result: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The use as JSON data for the trace's ``tool_call`` event."""
        return {"tool": self.tool, "result": self.result, "seconds": self.seconds}


@dataclass
class Policy:
    """How an attempt talks to its LLM: which prompts it sends, whether answers are autofixed, the repair and
    semantic-round budgets, and the grammar it decodes under. One instance serves one attempt: state kept
    on it lasts across the attempt's rounds (a resumed attempt starts a fresh instance)."""

    uses_llm: ClassVar[bool] = True
    backend: ChatBackend | None = None
    name: str = ""  # the registered name (set by make_policy)
    max_repairs: int = MAX_REPAIRS
    autofix: bool = True
    semantic_rounds: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    decoding: str = "free"  # free | grammar
    reasoning_chars: int = DEFAULT_REASONING_CHARS
    calls: list[AgentTurn | ToolUse] = field(default_factory=list, repr=False)  # this step's, for the trace

    def __post_init__(self) -> None:
        if self.decoding not in DECODING_MODES:
            raise ValueError(f"unknown decoding {self.decoding!r}; choose one of {', '.join(DECODING_MODES)}")

    def style(self, spec: AttemptSpec) -> str:
        """The prompt style this policy formalizes with (the spec's, unless the policy fixes one)."""
        return spec.prompt

    def check_backend(self) -> None:
        """``LLMError("config")`` when the backend cannot decode as asked (say so before any call)."""
        if self.uses_llm and self.backend is not None:
            check_decoding(self.decoding, getattr(self.backend, "grammar_dialect", "none"), self.backend.label)

    def ask(
        self,
        role: str,
        prompt: Prompt,
        round_number: int = 0,
        grammar: Grammar | None = None,
        sample: int = 0,
        **params: Any,
    ) -> AgentTurn:
        """Send ``prompt`` to the backend and return the turn (a failed call is the turn's ``error``,
        never raised). ``grammar`` applies under ``decoding="grammar"``; ``sample`` tells apart
        several answers to one prompt in a step (each its own cache entry); ``params`` override the
        generation settings (e.g. ``temperature``). Every turn is traced and counted by the graph."""
        turn = AgentTurn(role, prompt.messages(), sample=sample)
        self.calls.append(turn)
        if self.backend is None:
            turn.error = LLMError("config", f"policy {self.name!r} needs an LLM backend")
            return turn
        params, dialect = {**self.params, **params}, "none"
        salt = f"{role}:{round_number}" + (f":{sample}" if sample else "")
        try:
            if grammar is not None and self.decoding == "grammar":
                dialect = getattr(self.backend, "grammar_dialect", "none")
                check_decoding(self.decoding, dialect, self.backend.label)
                params.update(guided_params(dialect, grammar))
                gbnf = to_gbnf(grammar)
                turn.decoding = {
                    "mode": "grammar",
                    "dialect": dialect,
                    "grammar": grammar.start,
                    "grammar_sha256": hashlib.sha256(gbnf.encode()).hexdigest()[:16],
                    "grammar_chars": len(gbnf),
                    "token_budget": self.token_budget(),  # bounds the grammar: a replay needs it back
                }
            turn.response = self.backend.complete(turn.messages, cache_salt=salt, **params)
            turn.text = answer_text(dialect, turn.response.text)
            if grammar is not None and dialect != "none" and turn.response.finish_reason == "length":
                _close_cut_answer(turn, grammar)
        except LLMError as error:
            turn.error = error
        return turn

    def take_calls(self) -> list[AgentTurn | ToolUse]:
        """The LLM calls and tool uses since the last take, in order (the graph traces them after each step)."""
        calls, self.calls = self.calls, []
        return calls

    def check(self, spec: AttemptSpec, answer: str) -> Conversion:
        """The syntax check the graph runs on an answer (extraction, the format's parser, autofix as
        this policy allows, lint): ``.cnf`` is the formula or None, ``.error`` why not."""
        start = time.perf_counter()
        conversion = convert(answer, spec.format, spec.task.names, autofix=self.autofix)
        error = conversion.error
        result = {"ok": conversion.cnf is not None, "error": f"{error.kind}: {error}" if error else None}
        self.calls.append(ToolUse("check", result, time.perf_counter() - start))
        return conversion

    def oracle_test(self, spec: AttemptSpec, formula: CNF) -> OracleTestResult:
        """The oracle test the graph runs on an accepted formula (the task's oracle, and the attempt's
        training labels when it has them): ``.passed``, ``.counterexamples``, ``.feedback()``."""
        from autonesy.tasks.oracle_check import oracle_test

        start = time.perf_counter()
        result = oracle_test(formula, spec.task, spec.labels)
        summary = {"passed": result.passed, "counterexamples": len(result.counterexamples)}
        self.calls.append(ToolUse("oracle_test", summary, time.perf_counter() - start))
        return result

    def compare(self, formula: CNF, other: CNF) -> FormulaScore:
        """Score ``formula`` against ``other`` by exact model counting, as the graph scores an answer
        against the ground truth: ``.relation == "equal"`` when both say the same on the task variables.
        A count past its time limit raises ``autonesy.tools.counting.CountTimedOut`` (traced too)."""
        from autonesy.tools.counting import CountTimedOut
        from autonesy.tools.metrics import score_formula

        start = time.perf_counter()
        try:
            score = score_formula(formula, other)
        except CountTimedOut as error:
            self.calls.append(ToolUse("compare", {"timed_out": str(error)}, time.perf_counter() - start))
            raise
        self.calls.append(ToolUse("compare", {"relation": score.relation, "f1": score.f1}, time.perf_counter() - start))
        return score

    def token_budget(self) -> int | None:
        """The answer's token budget (``max_tokens``) when known."""
        budget = self.params.get("max_tokens") or (getattr(self.backend, "default_params", None) or {}).get(
            "max_tokens"
        )
        return int(budget) if budget else None

    def grammar_for(self, spec: AttemptSpec, role: str) -> Grammar | None:
        """The role's grammar: nesting bounded by ``GRAMMAR_DEPTH`` (a finite language, which a weak
        model must end); with a known token budget the block's lines are bounded by it, and the
        reasoning by a quarter of it (about 4 characters a token), so a small model cannot spend the
        budget before closing its block."""
        if self.decoding != "grammar":
            return None
        reasoning = self.reasoning_chars if role == "formalizer" and self.style(spec) == "zs-cot" else 0
        budget, lines = self.token_budget(), None
        if budget:
            reasoning, lines = min(reasoning, budget), max(4, budget // TOKENS_PER_LINE)
        return _grammar(role, spec.format, tuple(spec.task.names), reasoning, lines)

    def formalizer_prompt(self, spec: AttemptSpec) -> Prompt:
        """The first prompt: task, variables, format convention and the style's instructions."""
        return formalizer_prompt(spec.task, spec.format, self.style(spec), spec.detail)

    def formalize(self, spec: AttemptSpec) -> AgentTurn:
        """Ask for a formalization (under the format's answer grammar when decoding is constrained)."""
        return self.ask("formalizer", self.formalizer_prompt(spec), grammar=self.grammar_for(spec, "formalizer"))

    def repair(self, spec: AttemptSpec, source: str, error: str, round_number: int = 1) -> AgentTurn:
        """Show the repair agent its formula and the checker's error; its answer is parsed into an [[OK]]/[[FIXED]]
        verdict."""
        turn = self.ask(
            "repair",
            repair_prompt(spec.task, spec.format, spec.detail, source, error),
            round_number,
            grammar=self.grammar_for(spec, "repair"),
        )
        if turn.error is None:
            turn.verdict = parse_repair_answer(turn.text)
        return turn

    def semantic_repair(self, spec: AttemptSpec, source: str, counterexamples: str, round_number: int = 1) -> AgentTurn:
        """Show the formula with the oracle test's counterexamples and ask for a corrected one."""
        prompt = semantic_repair_prompt(spec.task, spec.format, spec.detail, source, counterexamples)
        return self.ask("semantic_repair", prompt, round_number, grammar=self.grammar_for(spec, "semantic_repair"))


def _close_cut_answer(turn: AgentTurn, grammar: Grammar) -> None:
    """An answer the token budget cut off under a grammar is a prefix of it: keep its finished items
    and close the block (:func:`close_cut`), and record in the trace what was dropped."""
    closed = close_cut(turn.text, grammar)
    if closed is None or closed[0] == turn.text:
        turn.decoding["cut_by_token_budget"] = {"closed": False}
        return
    text, kept = closed
    turn.decoding["cut_by_token_budget"] = {"closed": True, "dropped": turn.text[kept:][-300:]}
    turn.text = text


@functools.lru_cache(maxsize=64)
def _grammar(role: str, fmt: str, names: tuple[str, ...], reasoning_chars: int, lines: int | None) -> Grammar:
    """The decode-time grammar: bounded (see ``Policy._grammar``), without comment lines (a weak
    model fills its block with them), and for the repair agent ``[[FIXED]]`` only: under a grammar
    every checker error left is real (a header count, a program that raises, a block cut off)."""
    if role == "repair":
        return repair_grammar(
            fmt,
            names,
            allow_ok=False,
            max_lines=lines,
            max_depth=GRAMMAR_DEPTH,
            max_chain=GRAMMAR_CHAIN,
            comments=False,
        )
    return answer_grammar(
        fmt,
        names,
        reasoning_chars=reasoning_chars,
        max_lines=lines,
        max_depth=GRAMMAR_DEPTH,
        max_chain=GRAMMAR_CHAIN,
        comments=False,
    )


@policy("zs")
@dataclass
class ZeroShot(Policy):
    """The paper's zero-shot baseline: the formula straight away, no reasoning asked for."""

    def style(self, spec: AttemptSpec) -> str:
        """Always zero-shot, whatever the spec says."""
        return "zs"


@policy("zs-cot")
@dataclass
class ZeroShotCoT(Policy):
    """The paper's zero-shot chain-of-thought baseline: reason first, then the formula."""

    def style(self, spec: AttemptSpec) -> str:
        """Always zero-shot CoT, whatever the spec says."""
        return "zs-cot"


@policy("oracle-feedback")
@dataclass
class OracleFeedback(Policy):
    """The spec's prompt style plus semantic repair: a formula that fails the oracle test goes back to the LLM with
    counterexamples (two rounds by default)."""

    semantic_rounds: int = 2


@policy("few-shot")
@dataclass
class FewShot(Policy):
    """Worked examples before the question: leave-one-task-out reference formalizations."""

    shots: int = DEFAULT_SHOTS

    def formalizer_prompt(self, spec: AttemptSpec) -> Prompt:
        """The formalizer prompt preceded by worked examples: other tasks' reference formalizations in the same format."""
        examples = []
        for other in example_tasks(spec.task.name, spec.format, self.shots):
            from autonesy.tasks.reference import reference_source

            question = formalizer_prompt(other, spec.format, self.style(spec), spec.detail)
            examples.append((question.user, f"<cnf>\n{reference_source(other, spec.format).rstrip()}\n</cnf>"))
        return with_examples(super().formalizer_prompt(spec), examples)


@functools.lru_cache(maxsize=32)
def example_tasks(task_name: str, fmt: str, shots: int) -> tuple[Task, ...]:
    """The ``shots`` catalogue tasks other than ``task_name`` whose reference formalization in
    ``fmt`` is shortest (short examples leave the context to the question)."""
    from autonesy.tasks.reference import NoReference, reference_source
    from autonesy.tasks.registry import TASK_NAMES, load_task

    sized = []
    for name in TASK_NAMES:
        if name == task_name:
            continue
        task = load_task(name)
        try:
            sized.append((len(reference_source(task, fmt)), name, task))
        except NoReference:
            continue
    return tuple(task for _, _, task in sorted(sized, key=lambda item: item[:2])[:shots])


@policy("expert")
@dataclass
class Expert(Policy):
    """No LLM: answers with the task's reference formalization, an upper bound and an end-to-end check of the pipeline."""

    uses_llm: ClassVar[bool] = False

    def formalize(self, spec: AttemptSpec) -> AgentTurn:
        """The reference formalization in the spec's format, as if an LLM had written it."""
        from autonesy.tasks.reference import reference_formalization

        prompt = formalizer_prompt(spec.task, spec.format, self.style(spec), spec.detail)
        return AgentTurn("formalizer", prompt.messages(), text=reference_formalization(spec.task, spec.format))

    def repair(self, spec: AttemptSpec, source: str, error: str, round_number: int = 1) -> AgentTurn:
        """The reference needs no repair: always [[OK]]."""
        return AgentTurn("repair", [], text="[[OK]]", verdict=RepairVerdict("ok", ""))


def make_policy(name: str, backend: ChatBackend | None, **options: Any) -> Policy:
    """Build the registered policy ``name`` (a plugin's as ``mypkg/name``) on a backend; an unknown
    name is a ``RegistryError`` listing the known ones."""
    cls = lookup("policy", name).target
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise RegistryError(f"policy {name!r} is a {type(cls).__name__}, not a Policy subclass")
    return cls(backend=backend, name=name, **options)
