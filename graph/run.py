"""One formalization attempt end to end, in a run directory that survives crashes.

The run directory holds (docs/architecture.md §9):
    config.json        the attempt's configuration, package versions, the LLM (never its key)
    trace.jsonl        every node visit, LLM request/response, repair round, autofix, the outcome
    answer.txt         the last raw answer of the LLM
    formula.txt        the accepted formula as written (after block extraction and autofixes)
    formula.cnf        the accepted formula as DIMACS (task variables named in comments)
    formula.sdd/.vtree its compiled circuit (PySDD text formats), when compilation fit the budget
    metrics.json       oracle test, compilation and formula metrics against the ground truth
    downstream.json    SPL/SL trained on the formula and on the ground truth (with --train)
    summary.json       the outcome in one object (what `run --json` prints)
    checkpoints.sqlite LangGraph checkpoints: run again with the same --out to resume

LLM answers go to the response cache shared by every run and sweep (``$AUTONESY_CACHE_DIR``,
``agents/llm/cache.py``), so a resumed run, or the same attempt in another directory, never pays twice
for a call. An attempt whose LLM endpoint failed past its retries ends ``infra_failed`` (or ``error``
for a request the endpoint refused) with its checkpoint before the failed call: running it again
with the same ``--out`` retries the call, and nothing of it is scored meanwhile.

How the directory is claimed, checkpointed and written is ``graph/rundir.py`` (shared with
verifications); ``summary.json`` is a ``RunSummary`` (``graph/summary.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.agents.llm import (
    LOCAL_NOTICE,
    ChatBackend,
    LLMError,
    backend_from_spec,
    shared_cache,
)
from autonesy.agents.llm.replay import recorded_decoding
from autonesy.agents.options import DECODING_MODES, PROMPT_STYLES
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.attempt import (
    AttemptRuntime,
    AttemptState,
    EndpointFailure,
    TrainingRequest,
    accepted_cnf,
    build_attempt_graph,
)
from autonesy.graph.checkpoint_store import run_checkpointer
from autonesy.graph.rundir import SUMMARY_FILE, RunDir, run_or_resume
from autonesy.graph.score_seal import score_of, score_seal, seal_holds
from autonesy.graph.summary import (
    Compilation,
    FormulaMetrics,
    FormulaResult,
    FormulaScore,
    OracleTest,
    OracleVerdict,
    Outcome,
    Record,
    RunSummary,
    SummaryError,
)
from autonesy.graph.tracer import Tracer
from autonesy.tasks.registry import TaskSpec
from autonesy.tasks.task import Task
from autonesy.tools import registry
from autonesy.tools.config import COMPILE_TIME_LIMIT_S, LLM_TIMEOUT_S, MAX_REPAIRS
from autonesy.tools.errors import AutonesyError
from autonesy.tools.llm_spec import LLMSpec, default_llm
from autonesy.tools.options import FORMATS

THREAD = {"configurable": {"thread_id": "attempt"}, "recursion_limit": 100}
# What a resume must agree on: the same --out given to a different attempt is refused.
IDENTITY = ("task", "format", "prompt", "detail", "policy", "llm", "max_repairs", "decoding")


class RunError(AutonesyError, ValueError):
    """A run that cannot start (bad option, a run directory holding another run)."""


@dataclass
class RunConfig:
    """Everything that defines one attempt; ``config.json`` records it (the LLM without its key)."""

    task: str
    format: str = "cpmpy"
    prompt: str = "zs-cot"
    detail: str = "detailed"
    policy: str | None = None  # default: the prompt style's policy
    llm: LLMSpec | None = None  # default: $AUTONESY_LLM, else the embedded local model
    max_repairs: int = MAX_REPAIRS
    cache: bool = True  # answers from (and into) the shared response cache; False: every call goes to the LLM
    compile_time_limit_s: float = COMPILE_TIME_LIMIT_S
    llm_timeout_s: float = LLM_TIMEOUT_S
    max_tokens: int | None = None  # None: the backend's default (the local model caps its own)
    decoding: str | None = None  # free | grammar; default: grammar for the embedded model, else free
    extra: dict[str, Any] = field(default_factory=dict)
    data: bool = False  # the oracle test also checks the task's annotated training labels (catalogue tasks)
    data_dir: str | None = None  # where annotated data is cached (default: $AUTONESY_DATA_DIR, else the user cache)
    train: str = "none"  # NeSy predictors trained on the accepted formula: spl,sl | spl | sl | none | auto
    seeds: int | None = None  # training seeds (default 5; 1 under --train auto)
    epochs: int | None = None  # training epochs (default: the trainer's; 3 under --train auto)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """The configuration :meth:`to_dict` wrote (a sweep's job): the LLM spec parsed from its text."""
        llm = data.get("llm")
        return cls(**{**data, "llm": LLMSpec.parse(llm) if llm else None})

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON data, the LLM as its spec text (with any password: redact to show it)."""
        return {**asdict(self), "llm": self.llm.text if self.llm else None}

    def resolved(self, has_data: bool) -> RunConfig:
        """The configuration with every default decided and every choice checked (a ``RunError`` names
        the bad one), so what ``config.json`` records is what ran; ``has_data``: whether the task has
        annotated data (what ``--train`` and the oracle test's labels need)."""
        if self.format not in FORMATS:
            raise RunError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        if self.prompt not in PROMPT_STYLES:
            raise RunError(f"unknown prompt style {self.prompt!r}; choose one of {', '.join(PROMPT_STYLES)}")
        policy = self.policy or self.prompt
        try:
            registry.lookup("policy", policy)  # a plugin's (mypkg/name) is loaded now; unknown: the known ones
        except registry.RegistryError as error:
            raise RunError(str(error)) from None
        llm = None if policy == "expert" else (self.llm or default_llm())
        decoding = self.decoding or default_decoding(llm)
        if decoding not in DECODING_MODES:
            raise RunError(f"unknown decoding {decoding!r}; choose one of {', '.join(DECODING_MODES)}")
        train, seeds, epochs = resolve_training(self.train, self.seeds, self.epochs, llm, has_data)
        if train != "none" and not has_data:
            raise RunError(f"--train needs annotated data, and task {self.task!r} has none")
        return replace(
            self,
            policy=policy,
            llm=llm,
            decoding=decoding,
            train=train,
            seeds=seeds,
            epochs=epochs,
            data=has_data and (self.data or train != "none"),
        )


def default_decoding(llm: LLMSpec | None) -> str:
    """``grammar`` for the embedded model (whose server takes GBNF), what a replayed trace was
    recorded with, ``free`` elsewhere (a server's grammar support is only known when its config names it)."""
    if llm is not None and llm.kind == "replay":
        return recorded_decoding(llm.path)
    return "grammar" if llm is not None and llm.kind == "local" else "free"


def resolve_training(
    train: str, seeds: int | None, epochs: int | None, llm: LLMSpec | None, has_data: bool
) -> tuple[str, int, int | None]:
    """``--train auto``: the main command (embedded model, a task with data) trains SPL and SL on a
    short schedule (1 seed, 3 epochs) so it ends in minutes; anything else trains only when asked."""
    if train == "auto":
        main_job = has_data and llm is not None and llm.kind == "local"
        return ("spl,sl", seeds or 1, epochs or 3) if main_job else ("none", seeds or 5, epochs)
    return train, seeds or 5, epochs


def training_note(requested: str, config: RunConfig, has_data: bool) -> str:
    """One line on what ``--train`` decided, so a run that trains nothing says why."""
    if config.train == "none":
        if requested == "auto":
            why = "no annotated data" if not has_data else "--train auto trains only with the embedded model"
            return f"training: none ({why}; --train spl,sl trains SPL and SL on an accepted formula)"
        return "training: none"
    epochs = f"{config.epochs} epochs" if config.epochs else "the trainer's epochs"
    return f"training: {config.train} on an accepted formula, {config.seeds} seed(s), {epochs}"


def training_request(config: RunConfig, dataset: Any, progress: bool) -> TrainingRequest | None:
    """What ``config.train`` asks the attempt to train on its accepted formula (None: nothing)."""
    if config.train == "none" or dataset is None:
        return None
    from autonesy.nesy.evaluate import parse_methods

    try:
        methods = parse_methods(config.train)
    except ValueError as error:
        raise RunError(str(error)) from None
    return TrainingRequest(methods, dataset, config.seeds or 5, config.epochs, progress=progress)


def default_run_dir(config: RunConfig, task: Task) -> Path:
    """``runs/<task>/<format>-<policy>-<detail>-<time>``: runs of one task sort together, newest last
    (a plugin's ``mypkg/name`` is written ``mypkg+name``: one path component)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    policy = registry.path_component(config.policy or "")
    return Path("runs") / registry.path_component(task.name) / f"{config.format}-{policy}-{config.detail}-{stamp}"


def config_record(config: RunConfig, task: Task, backend: ChatBackend | None) -> dict[str, Any]:
    """What ``config.json`` records: the resolved options, the task's name and spec, the LLM's label
    (never its key), and the generation settings the backend sends (a ``max_tokens`` left unset on
    the command line is the backend's default, which is what the server received)."""
    sent = getattr(backend, "default_params", {}) or {}
    return {
        **config.to_dict(),
        "task": task.name,
        "task_spec": config.task,
        "llm": backend.label if backend else None,
        "max_tokens": config.max_tokens if config.max_tokens is not None else sent.get("max_tokens"),
    }


def run_attempt(
    config: RunConfig,
    run_dir: Path | None = None,
    *,
    backend: ChatBackend | None = None,
    labels: np.ndarray | None = None,
    training: TrainingRequest | None = None,
    progress: bool = False,
    notify: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run (or resume) one attempt; returns the summary that is also written to summary.json.

    This is the attempt's composition root: the task, its data (``config.data``, ``config.train``),
    the backend and the policy are all resolved here. ``backend``, ``labels`` and ``training``
    replace what would be built (tests, sweeps sharing one backend); ``progress`` shows training
    progress bars; ``notify`` hears progress lines (None: nobody listens)."""
    task_spec = TaskSpec.parse(config.task)
    task, has_data = task_spec.load(), task_spec.has_data
    task.descriptions.get(config.detail)  # validates the detail level
    resolved = config.resolved(has_data)
    if notify is not None:
        notify(training_note(config.train, resolved, has_data))
    config = resolved
    rundir = RunDir.open(Path(run_dir) if run_dir else default_run_dir(config, task), RunError)
    dataset = None
    if config.data:  # the task's annotated splits (built on first use) for the oracle test and training
        from autonesy.tasks.data.dataset import load_dataset

        dataset = load_dataset(task, config.data_dir)
    if labels is None and dataset is not None:
        labels = dataset.train.y
    if training is None:
        training = training_request(config, dataset, progress)
    policy_name = config.policy or config.prompt  # resolved: the policy is always named
    owns_backend = backend is None and config.llm is not None  # the expert policy has no LLM
    if backend is None and config.llm is not None:
        cache = shared_cache() if config.cache else None
        options = {} if config.max_tokens is None else {"max_tokens": config.max_tokens}
        backend = backend_from_spec(config.llm, timeout_s=config.llm_timeout_s, cache=cache, **options)
        if config.llm.kind == "local" and not config.llm.path and notify is not None:
            notify(f"note: {LOCAL_NOTICE}")
    try:
        policy = make_policy(policy_name, backend, max_repairs=config.max_repairs, decoding=config.decoding)
        try:
            policy.check_backend()  # a backend that cannot decode under a grammar says so before any call
        except LLMError as error:
            raise RunError(str(error)) from None
        rundir.claim(config_record(config, task, backend), IDENTITY, defaults={"decoding": "free"})
        tracer = Tracer(rundir.path, progress=notify)
        spec = AttemptSpec(task, config.format, config.detail, config.prompt, labels)
        runtime = AttemptRuntime(spec, policy, tracer, rundir.path, labels, config.compile_time_limit_s, training)
        with run_checkpointer(rundir) as checkpointer:
            graph = build_attempt_graph(checkpointer)
            checkpointed = graph.get_state(THREAD)
            read_back_whole = bool(checkpointed.values) and not checkpointed.next  # no node runs now
            try:
                final = run_or_resume(
                    graph,
                    THREAD,
                    INITIAL_STATE,
                    on_resume=lambda next_nodes: tracer.event("resumed", next=next_nodes),
                    context=runtime,
                )
                state = AttemptState.model_validate(final)
            except EndpointFailure as failure:  # the checkpoint stays before the failed call: a rerun retries it
                state = AttemptState.model_validate(graph.get_state(THREAD).values).model_copy(
                    update={"status": failure.outcome, "failure": failure.failure, "reason": str(failure)}
                )
        if read_back_whole:
            state = _believed_score(state, rundir.path, task)
        summary = summarize(config, task, rundir.path, state)
        write_outputs(rundir, state, summary)
        tracer.event("outcome", status=summary.status, failure=summary.failure, reason=summary.reason)
        return summary
    finally:
        if owns_backend and backend is not None:
            backend.close()


def _believed_score(state: AttemptState, run_dir: Path, task: Task) -> AttemptState:
    """A finished attempt read back whole from its checkpoint: its score is kept when the summary beside it is this
    user's seal on that score for that formula (``graph/score_seal.py``), else made again (the checkpoint may
    come from elsewhere: a received sweep with its summary removed)."""
    if not state.dimacs or not isinstance(state.metrics, FormulaMetrics) or not task.has_ground_truth:
        return state
    score = FormulaScore.part_of(state.metrics)
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError:
        summary = None
    if summary is not None and summary.metrics == score and seal_holds(state.dimacs, score, summary.score_seal):
        return state
    return state.model_copy(update={"metrics": score_of(accepted_cnf(state.dimacs), task)})


INITIAL_STATE = {"status": "running"}  # every other field of AttemptState starts at its default


def summarize(config: RunConfig, task: Task, run_dir: Path, state: AttemptState) -> RunSummary:
    """The attempt's final graph state as its summary record."""
    status = state.status if state.status != "running" else Outcome.UNFINISHED
    score = FormulaScore.part_of(state.metrics)
    return RunSummary(
        run_dir=str(run_dir),
        task=task.name,
        format=config.format,
        prompt=config.prompt,
        detail=config.detail,
        policy=config.policy or "",
        llm=config.llm.redacted if config.llm else None,
        decoding=config.decoding or "free",
        status=Outcome(status),
        failure=state.failure,
        accepted=status == Outcome.ACCEPTED,
        reason=state.reason,
        repair_rounds=state.repair_round,
        semantic_rounds=state.semantic_round,
        autofixes=state.autofixes,
        oracle_test=OracleVerdict.part_of(state.oracle_test),
        compiled=state.compiled,
        metrics=score,
        score_seal=score_seal(state.dimacs, score) if state.dimacs else None,
        training=_training_note(state),
        llm_calls=state.llm_calls,
        cached_calls=state.cached_calls,
        prompt_tokens=state.prompt_tokens,
        completion_tokens=state.completion_tokens,
        llm_seconds=state.llm_seconds,
        cached_prompt_tokens=state.cached_prompt_tokens,
        cached_completion_tokens=state.cached_completion_tokens,
        cached_llm_seconds=state.cached_llm_seconds,
    )


def _training_note(state: AttemptState) -> dict[str, Any] | None:
    if state.downstream is not None:
        return state.downstream.model_dump()
    if state.status == Outcome.REJECTED:
        return {"skipped": "the formula was rejected, so no predictor was trained on it"}
    return None


class AttemptMetrics(Record):
    """``metrics.json``: the oracle test, the compilation and the score, as the nodes recorded them."""

    oracle_test: OracleTest | None = None
    compiled: Compilation | None = None
    formula: FormulaResult | None = None


def write_outputs(rundir: RunDir, state: AttemptState, summary: RunSummary) -> None:
    """The attempt's files (see this module's docstring); ``summary.json`` last, as it marks the
    attempt finished for a sweep."""
    if state.answer:
        rundir.write_text("answer.txt", state.answer)
    if state.dimacs:
        rundir.write_text("formula.txt", state.source)
        rundir.write_text("formula.cnf", state.dimacs)
    metrics = AttemptMetrics(oracle_test=state.oracle_test, compiled=state.compiled, formula=state.metrics)
    rundir.write_json("metrics.json", metrics.model_dump(mode="json"))
    if state.downstream is not None:
        rundir.write_json("downstream.json", state.downstream.model_dump(mode="json"))
    rundir.write_json(SUMMARY_FILE, summary.model_dump())
