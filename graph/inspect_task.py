"""The benchmark as an Inspect task package (docs/inspect.md): ``inspect eval autonesy/formalize``.

Samples are tasks × formats × prompt styles × detail levels. The solver runs the project's attempt
graph (``graph/attempt.py``: the policy's prompts, the syntax check with autofix, the [[OK]]/[[FIXED]]
repair loop, the oracle test) with Inspect's model as its LLM backend, so Inspect's retries, limits,
cache and transcript apply to every call. The scorer converts the final answer and scores it by exact
model counting against the expert formula (``tools/metrics.py``), the value ``autonesy-agent score``
gives. Only this module imports ``inspect_ai`` (the optional ``[inspect]`` extra); Inspect finds it
through the ``inspect_ai`` entry point named ``autonesy``.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task
from inspect_ai import task as inspect_task
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.package import get_installed_package_name
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import Transcript, transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from autonesy.agents.llm import ChatBackend, LLMError, LLMResponse, normalize_messages
from autonesy.agents.options import PROMPT_STYLES
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.attempt import AttemptRuntime, AttemptState, build_attempt_graph
from autonesy.graph.run import INITIAL_STATE, THREAD
from autonesy.graph.summary import json_safe
from autonesy.graph.sweep.grid import expand_tasks, parse_choice, split_list
from autonesy.graph.tracer import Tracer
from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tasks.registry import TaskSpec
from autonesy.tools.config import MAX_REPAIRS
from autonesy.tools.counting import CountTimedOut
from autonesy.tools.errors import AutonesyError
from autonesy.tools.formats import convert
from autonesy.tools.metrics import score_formula
from autonesy.tools.options import COUNT_METHODS, FORMATS
from autonesy.tools.trace_events import TOOL_CALL_EVENT

PACKAGE = "autonesy"  # the entry point's name: Inspect loads it for names written ``autonesy/...``
ATTEMPT_KEY = "autonesy/attempt"  # the solver's outcome in the sample's store, for the scorer
# the trace events that are steps of the repair loop, shown in the sample's transcript
TRANSCRIPT_EVENTS = ("autofix", "lint", "syntax_error", "repair_round", "semantic_round", TOOL_CALL_EVENT)
_STOP_REASONS = {"max_tokens": "length", "model_length": "length"}  # Inspect's words for the cut by the token budget


def _registered(name: str) -> str:
    """The name to give Inspect's decorators so the object is ``autonesy/name``: Inspect adds the package
    itself when it finds the module installed, but an editable install of autonesy-agent (whose
    distribution is not named ``autonesy``) it takes for a local file and would leave unprefixed."""
    return name if get_installed_package_name(_registered) == PACKAGE else f"{PACKAGE}/{name}"


@dataclass(frozen=True)
class Setting:
    """One sample: a task spec and the setting it is formalized in."""

    task: str
    format: str
    prompt: str
    detail: str

    def metadata(self) -> dict[str, str]:
        """The sample's metadata: what the solver and the scorer read the setting from."""
        return {"task": self.task, "format": self.format, "prompt": self.prompt, "detail": self.detail}


def settings(task: object, format: object, prompt: object, detail: object) -> list[Setting]:
    """Every combination of the comma lists (``all`` for every choice); an unknown choice is one
    ``AutonesyError`` naming the known ones."""
    tasks = expand_tasks(split_list(_texts(task)) or ["all"])
    formats = parse_choice(_texts(format), FORMATS, "format")
    prompts = parse_choice(_texts(prompt), PROMPT_STYLES, "prompt style")
    details = parse_choice(_texts(detail), DETAIL_LEVELS, "detail level")
    return [Setting(t, f, p, d) for t in tasks for f in formats for p in prompts for d in details]


def _texts(value: object) -> list[str]:
    """A ``-T`` value as text: Inspect reads it as YAML, so ``-T task=[a, b]`` is a list and ``-T detail=1`` a number."""
    return [str(item) for item in value] if isinstance(value, (list, tuple)) else [str(value)]


def _chat_messages(messages: Sequence[Mapping[str, str]]) -> list[ChatMessage]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in normalize_messages(messages)]


def _sample(setting: Setting, policy: str | None) -> Sample:
    """The sample of one setting; its input is the formalizer's prompt (what the log shows first)."""
    task = TaskSpec.parse(setting.task).load()
    task.descriptions.get(setting.detail)  # a task file without this detail level is an error now, not later
    spec = AttemptSpec(task, setting.format, setting.detail, setting.prompt)
    prompt = make_policy(policy or setting.prompt, None).formalizer_prompt(spec)
    return Sample(
        id=f"{task.name}/{setting.format}/{setting.prompt}/{setting.detail}",
        input=_chat_messages(prompt.messages()),
        target=task.name,
        metadata=setting.metadata(),
    )


@inspect_task(name=_registered("formalize"))
def formalize(
    task: str = "all",
    format: str = "cpmpy",
    prompt: str = "zs-cot",
    detail: str = "detailed",
    policy: str | None = None,
    max_repairs: int = MAX_REPAIRS,
) -> Task:
    """The auto-nesy-bench benchmark: formalize each task in each setting on Inspect's model, repair
    it with the [[OK]]/[[FIXED]] loop, score it by exact model counting against the expert formula.

    ``task``, ``format``, ``prompt`` and ``detail`` are comma lists (``all``: every choice); ``task``
    takes catalogue names, task files (``*.toml``) and ``satbench:PATH`` / ``dcpbench:PATH``;
    ``policy`` defaults to the prompt style's own."""
    try:
        if isinstance(max_repairs, bool) or not isinstance(max_repairs, int) or max_repairs < 0:
            raise AutonesyError(f"max_repairs must be a whole number of rounds, 0 or more, not {max_repairs!r}")
        policy = None if policy is None else str(policy)  # -T values are YAML: a name may arrive as a number
        samples = [_sample(setting, policy) for setting in settings(task, format, prompt, detail)]
    except AutonesyError as error:  # Inspect prints a prerequisite as its one line, not a traceback
        raise PrerequisiteError(f"autonesy/formalize: {error}") from None
    return Task(
        dataset=MemoryDataset(samples, name="auto-nesy-bench"),
        solver=formalizer(policy=policy, max_repairs=max_repairs),
        scorer=model_count(),
    )


class InspectModelBackend(ChatBackend):
    """An Inspect model as the project's LLM backend. The attempt graph runs in a worker thread
    (it is synchronous); each call goes back to Inspect's event loop, where the model lives."""

    def __init__(self, model: Model) -> None:
        self._model = model
        self.model = model.name
        self.label = str(model)
        self.endpoint = model.api.base_url or ""

    def complete(self, messages: Sequence[Mapping[str, str]], *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """One generation by Inspect's model (``cache_salt`` is ours: Inspect's cache keys on the
        whole request); an empty answer is ``LLMError("empty")``, like any backend's."""
        try:
            config = GenerateConfig(**params)
        except ValueError as error:
            raise LLMError("bad_request", f"Inspect cannot send these parameters: {error}") from None
        output = anyio.from_thread.run(self._generate, _chat_messages(messages), config)
        finish = _STOP_REASONS.get(output.stop_reason, output.stop_reason)
        if not output.completion.strip():
            why = f": {output.error}" if output.error else ""
            raise LLMError("empty", f"{self.label} gave an empty answer{why}", finish_reason=finish)
        usage = output.usage
        return LLMResponse(
            text=output.completion,
            content=output.completion,
            prompt_tokens=usage.input_tokens if usage else None,
            completion_tokens=usage.output_tokens if usage else None,
            latency_s=output.time or 0.0,
            model=self.model,
            endpoint=self.endpoint,
            finish_reason=finish,
        )

    async def _generate(self, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        return await self._model.generate(messages, config=config)


class TranscriptTracer(Tracer):
    """Our trace, whose repair-loop steps (autofixes, lint warnings, syntax errors, repair verdicts,
    semantic rounds, tools a policy called) also go to the sample's Inspect transcript, in order
    with its model calls. Called from the attempt's worker thread."""

    def __init__(self, run_dir: Path, transcript: Transcript) -> None:
        super().__init__(run_dir)
        self._transcript = transcript

    def event(self, event: str, **fields: Any) -> None:
        """Append the event to the trace; a step of the loop also becomes an info event (secrets redacted)."""
        super().event(event, **fields)
        if event in TRANSCRIPT_EVENTS:
            line = json.dumps(fields, default=str, ensure_ascii=False)
            for secret in self.secrets:
                line = line.replace(secret, "***")
            anyio.from_thread.run_sync(
                functools.partial(self._transcript.info, json.loads(line), source=f"autonesy/{event}")
            )


def run_attempt_graph(
    setting: Setting, policy: str | None, max_repairs: int, backend: ChatBackend, transcript: Transcript
) -> AttemptState:
    """One attempt through the project's graph, without a run directory of its own: Inspect's log is
    the record (the trace goes to a temporary directory). An LLM call that fails for the endpoint
    raises ``EndpointFailure``, which Inspect records as the sample's error (never scored)."""
    task = TaskSpec.parse(setting.task).load()
    spec = AttemptSpec(task, setting.format, setting.detail, setting.prompt)
    agent = make_policy(policy or setting.prompt, backend, max_repairs=max_repairs, decoding="free")
    with tempfile.TemporaryDirectory(prefix="autonesy-inspect-") as scratch:
        tracer = TranscriptTracer(Path(scratch), transcript)
        runtime = AttemptRuntime(spec=spec, policy=agent, tracer=tracer, run_dir=Path(scratch))
        final = build_attempt_graph().invoke(INITIAL_STATE, THREAD, context=runtime)
    return AttemptState.model_validate(final)


@solver(name=_registered("formalizer"))
def formalizer(policy: str | None = None, max_repairs: int = MAX_REPAIRS) -> Solver:
    """Our formalizer on Inspect's model: the policy's prompt, autofix, the [[OK]]/[[FIXED]] repair
    loop and the oracle test (semantic repair rounds when the policy has them). The final answer is
    the sample's output; the attempt's outcome goes to the store for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        setting = Setting(**{key: state.metadata[key] for key in ("task", "format", "prompt", "detail")})
        backend = InspectModelBackend(get_model())
        attempt = await anyio.to_thread.run_sync(run_attempt_graph, setting, policy, max_repairs, backend, transcript())
        state.output = ModelOutput.from_content(model=backend.model, content=attempt.answer)
        state.messages.append(state.output.message)
        state.store.set(
            ATTEMPT_KEY,
            {
                "status": str(attempt.status),
                "failure": attempt.failure.value if attempt.failure else None,
                "reason": attempt.reason,
                "repair_rounds": attempt.repair_round,
                "semantic_rounds": attempt.semantic_round,
                "autofixes": list(attempt.autofixes),
                "oracle_test_passed": attempt.oracle_test.passed if attempt.oracle_test else None,
            },
        )
        return state

    return solve


ZERO = {"f1": 0.0, "precision": 0.0, "recall": 0.0}  # an answer that is no formula, or a rejected attempt
SCORE_METADATA = ("relation", "tp", "fp", "fn", "tn", "mc_ratio", "exact", "count_method", "counts")


@scorer(
    metrics={"f1": [mean(), stderr()], "precision": [mean()], "recall": [mean()]},
    name=_registered("model_count"),
)
def model_count(method: str = "auto") -> Scorer:
    """F1, precision and recall of the answer's formula against the expert formula, by exact model
    counting (``autonesy-agent score``'s values); the relation, counts and count method as metadata.
    An answer that does not convert, or an attempt the formalizer rejected, scores 0 with the syntax
    error or the rejection's reason; a count past its time limit leaves the sample unscored."""

    if method not in COUNT_METHODS:
        raise PrerequisiteError(
            f"autonesy/model_count: unknown count method {method!r}; choose one of {', '.join(COUNT_METHODS)}"
        )

    async def score(state: TaskState, target: Target) -> Score | None:
        completion, attempt = state.output.completion, state.store.get(ATTEMPT_KEY)
        try:
            return await anyio.to_thread.run_sync(score_answer, completion, state.metadata, attempt, method)
        except Unscorable as error:  # not a score of 0: the sample stays unscored, and its transcript says why
            transcript().info(f"unscored: {error}")
            return None

    return score


class Unscorable(AutonesyError):
    """A formula with no score: the task has no ground truth, or a count ran past its time limit."""


def score_answer(answer: str, setting: Mapping[str, Any], attempt: Mapping[str, Any] | None, method: str) -> Score:
    """The score of one answer in a sample's setting (``attempt``: the formalizer's outcome, absent
    under another solver); the same conversion and counts as ``autonesy-agent score``."""
    task = TaskSpec.parse(setting["task"]).load()
    conversion = convert(answer, setting["format"], task.names)
    metadata: dict[str, Any] = {"autofixes": list(conversion.autofixes)}
    if attempt is not None:
        metadata["attempt"] = dict(attempt)
    if conversion.error is not None:
        metadata["syntax_error"] = str(conversion.error)
    if attempt is not None and attempt.get("status") != "accepted":  # its reason is the real one (an empty answer…)
        explanation = f"rejected: {attempt.get('reason') or attempt.get('failure')}"
        return Score(value=ZERO, answer=conversion.source, explanation=explanation, metadata=metadata)
    if conversion.error is not None:
        explanation = f"syntax error: {conversion.error}"
        return Score(value=ZERO, answer=conversion.source, explanation=explanation, metadata=metadata)
    if conversion.cnf is None:  # a conversion without an error holds its CNF
        raise Unscorable("the answer's conversion holds no formula")
    if not task.has_ground_truth:
        raise Unscorable(f"task {task.name!r} has no ground truth")
    try:
        result = score_formula(conversion.cnf, task.ground_truth, method)
    except CountTimedOut as error:
        raise Unscorable(str(error)) from None
    record = json_safe(result.to_dict())  # counts past 2^53 as text, as in metrics.json
    return Score(
        value={"f1": result.f1, "precision": result.precision, "recall": result.recall},
        answer=conversion.source,
        explanation=f"relation {result.relation}, F1 {result.f1:.4g} "
        f"(precision {result.precision:.4g}, recall {result.recall:.4g}), counts by {result.count_method}",
        metadata={**metadata, **{key: record[key] for key in SCORE_METADATA}},
    )
