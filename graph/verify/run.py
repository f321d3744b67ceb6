"""Verification runs: ``verify`` (one instruction, one response) and ``follow`` (the feedback loop), each
in a run directory that survives crashes and that ``autonesy-agent trace`` reads.

A run directory holds:
    config.json        the options, the LLM of each agent (labels, never keys), package versions
    trace.jsonl        node visits, LLM calls, formulation, plans, checker runs, reflection rounds, verdict
    instruction.txt    the instruction, verbatim
    output.txt         the response verified (``follow``: the last one written)
    outputs/round-K.txt  (follow) every response written, in order
    checkers/Ck.py     the checker program of each logic constraint, as run
    explanation.txt    the verdict and its evidence in words
    summary.json       the outcome in one object (what ``--json`` prints)
    checkpoints.sqlite LangGraph checkpoints: the same --out resumes an interrupted run
    llm_cache.sqlite   LLM answers by prompt: a resumed run never pays twice for a call
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from autonesy.agents.llm import LOCAL_NOTICE, ChatBackend, ResponseCache, backend_from_spec
from autonesy.agents.verify import CheckingAgent, FormulationAgent, JudgeAgent, WriterAgent
from autonesy.graph.checkpoint_store import run_checkpointer
from autonesy.graph.options import FEEDBACK_MODES, VERIFIERS
from autonesy.graph.rundir import SUMMARY_FILE, RunDir, run_or_resume
from autonesy.graph.tracer import Tracer
from autonesy.graph.verify.graph import (
    RECURSION_LIMIT,
    WHOLE_INSTRUCTION_JUDGES,
    VerifierMemory,
    VerifyAgents,
    VerifyRuntime,
    VerifyState,
    initial_state,
    verify_graph,
)
from autonesy.graph.verify.summary import VERDICTS, VerificationSummary
from autonesy.tools.config import CHECKER_TIMEOUT_S, LLM_TIMEOUT_S, MAX_REFLECTIONS
from autonesy.tools.errors import AutonesyError
from autonesy.tools.llm_spec import LLMSpec, default_llm
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.verify.results import ConstraintResult
from autonesy.tools.verify.user_checkers import UserChecker, load_user_checkers

ROLES = ("formulation", "checker", "judge", "writer")
LLM_FIELDS = ("llm", "formulation_llm", "checker_llm", "judge_llm", "writer_llm")
THREAD = "verify"
IDENTITY = ("kind", "verifier", "instruction_sha256", "output_sha256", "budget", "feedback")  # what a resume must match


class VerifyError(AutonesyError, ValueError):
    """A verification that cannot start (bad option, a run directory holding another run); one line."""


@dataclass
class VerifyConfig:
    """Everything that defines a verification (or a feedback loop); ``config.json`` records it, LLMs by label only."""

    verifier: str = "nsvif"
    llm: LLMSpec | None = None  # default for every agent: $AUTONESY_LLM, else the embedded local model
    formulation_llm: LLMSpec | None = None
    checker_llm: LLMSpec | None = None  # checker code
    judge_llm: LLMSpec | None = None
    writer_llm: LLMSpec | None = None  # follow: the model that writes the responses
    max_reflections: int = MAX_REFLECTIONS
    max_formulation_repairs: int = 2
    checkers: list[str] = field(default_factory=list)  # user checker modules (paths, modules, module:function)
    entry_point_checkers: bool = False
    llm_timeout_s: float = LLM_TIMEOUT_S
    max_tokens: int | None = None
    checker_wall_s: float = CHECKER_TIMEOUT_S
    budget: int = 0  # follow: responses written at most (0: verify only)
    feedback: str = "explanation"  # follow: explanation | boolean
    judge_guidance: str | None = None  # gepa-cot: the CoT judge's optimised guidance (text)

    def resolved(self) -> VerifyConfig:
        """The configuration checked (a ``VerifyError`` names a bad choice) with the default LLM decided."""
        if self.verifier not in VERIFIERS:
            raise VerifyError(f"unknown verifier {self.verifier!r}; choose one of {', '.join(VERIFIERS)}")
        if self.feedback not in FEEDBACK_MODES:
            raise VerifyError(f"unknown feedback mode {self.feedback!r}; choose one of {', '.join(FEEDBACK_MODES)}")
        if self.max_reflections < 0 or self.max_formulation_repairs < 0 or self.budget < 0:
            raise VerifyError("reflection rounds, formulation repairs and the budget cannot be negative")
        if self.checker_wall_s <= 0:
            raise VerifyError("the checker time limit must be positive")
        return replace(self, llm=self.llm or default_llm())

    def role_specs(self) -> dict[str, LLMSpec]:
        """The LLM spec of each agent role: its own option, else ``--llm``, else the default."""
        default = self.llm or default_llm()
        return {
            "formulation": self.formulation_llm or default,
            "checker": self.checker_llm or default,
            "judge": self.judge_llm or default,
            "writer": self.writer_llm or default,
        }

    def to_dict(self) -> dict[str, Any]:
        """The configuration as JSON data, each LLM as its spec text shown (a URL password as ``***``)."""
        data = asdict(self)
        for name in LLM_FIELDS:
            spec = getattr(self, name)
            data[name] = spec.redacted if spec else None
        return data

    def limits(self) -> SandboxLimits:
        """The sandbox limits of one checker run: the checker time limit for CPU and wall clock, fixed memory and
        output caps."""
        return SandboxLimits(
            cpu_seconds=self.checker_wall_s,
            wall_seconds=self.checker_wall_s,
            memory_bytes=1 << 30,
            output_bytes=256 << 10,
            result_bytes=64 << 10,
        )


def needed_roles(config: VerifyConfig) -> tuple[str, ...]:
    """The agent roles this verifier calls (a whole-instruction judge needs no formulation or checker; a budget adds
    the writer), so unused roles build no backend."""
    roles = ("judge",) if config.verifier in WHOLE_INSTRUCTION_JUDGES else ("formulation", "checker", "judge")
    return roles + ("writer",) if config.budget else roles


class Backends:
    """One ``ChatBackend`` per agent role; roles naming the same spec share one backend (and cache)."""

    def __init__(
        self,
        config: VerifyConfig,
        run_dir: Path | None,
        *,
        backend: ChatBackend | None = None,
        backends: Mapping[str, ChatBackend] | None = None,
        notify: Callable[[str], None] = lambda m: None,
        cache: bool = True,
    ) -> None:
        self.by_role: dict[str, ChatBackend] = {}
        self._owned: list[ChatBackend] = []
        given = dict(backends or {})
        unknown = set(given) - set(ROLES)
        if unknown:
            raise VerifyError(f"unknown agent role(s) {', '.join(sorted(unknown))}; roles: {', '.join(ROLES)}")
        specs = config.role_specs()
        needed = needed_roles(config)
        by_spec: dict[LLMSpec, ChatBackend] = {}
        response_cache = ResponseCache(run_dir / "llm_cache.sqlite") if (cache and run_dir is not None) else None
        for role in needed:
            if role in given:
                self.by_role[role] = given[role]
            elif backend is not None:
                self.by_role[role] = backend
            else:
                spec = specs[role]
                if spec not in by_spec:  # one backend per spec
                    options = {} if config.max_tokens is None else {"max_tokens": config.max_tokens}
                    by_spec[spec] = backend_from_spec(
                        spec, timeout_s=config.llm_timeout_s, cache=response_cache, **options
                    )
                    self._owned.append(by_spec[spec])
                    if spec.kind == "local" and not spec.path:
                        notify(f"note: {LOCAL_NOTICE}")
                self.by_role[role] = by_spec[spec]

    def labels(self) -> dict[str, str]:
        """Each role's backend label (endpoint and model, never a key) for config.json and the summary."""
        return {role: backend.label for role, backend in self.by_role.items()}

    def close(self) -> None:
        """Close the backends built here; ones handed in belong to the caller."""
        for backend in self._owned:
            backend.close()

    def __enter__(self) -> Backends:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_checkers(config: VerifyConfig) -> dict[str, UserChecker]:
    """The user checkers the configuration names, by name; a module that cannot be loaded is a ``VerifyError`` line."""
    from autonesy.tools.verify.user_checkers import UserCheckerError

    try:
        return {c.name: c for c in load_user_checkers(config.checkers, entry_points=config.entry_point_checkers)}
    except UserCheckerError as error:
        raise VerifyError(str(error)) from None


def make_runtime(
    config: VerifyConfig,
    backends: Backends,
    tracer: Tracer,
    *,
    tag: Mapping[str, Any] | None = None,
    user_checkers: Mapping[str, UserChecker] | None = None,
    memory: VerifierMemory | None = None,
) -> VerifyRuntime:
    """The verify graph's runtime: one agent per role on its backend, the checkers, limits and loop settings; shared by
    ``verify``, ``follow`` and VifBench evaluation."""
    checkers = dict(user_checkers if user_checkers is not None else load_checkers(config))
    roles = backends.by_role
    agents = VerifyAgents(
        FormulationAgent(roles.get("formulation")),
        CheckingAgent(roles.get("checker"), user_checkers=checkers.values(), wall_seconds=config.checker_wall_s),
        JudgeAgent(roles.get("judge")),
        WriterAgent(roles.get("writer")),
    )
    return VerifyRuntime(
        agents,
        tracer,
        config.verifier,
        config.max_reflections,
        config.max_formulation_repairs,
        config.limits(),
        checkers,
        config.budget,
        config.feedback,
        dict(tag or {}),
        memory,
        config.judge_guidance,
    )


def run_graph(runtime: VerifyRuntime, state: VerifyState, checkpointer: Any = None) -> VerifyState:
    """Run to the end (or resume a checkpointed run) and return the final state."""
    settings: dict[str, Any] = {"recursion_limit": RECURSION_LIMIT}
    if checkpointer is None:
        return VerifyState.model_validate(verify_graph().invoke(state, settings, context=runtime))
    settings["configurable"] = {"thread_id": THREAD}
    final = run_or_resume(
        verify_graph(checkpointer),
        settings,
        dict(state),
        on_resume=lambda next_nodes: runtime.event("resumed", next=next_nodes),
        context=runtime,
    )
    return VerifyState.model_validate(final)


def sha(text: str) -> str:
    """SHA-256 of a text (lone surrogates kept), to record an instruction or response in config.json without repeating
    it."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _write_config(run_dir: Path, record: dict[str, Any], keys: tuple[str, ...]) -> None:
    """``config.json`` of a verification-style run (``graph/verify/vifbench.py`` writes its own through this)."""
    RunDir(Path(run_dir), VerifyError).claim(record, keys)


def config_record(kind: str, config: VerifyConfig, backends: Backends, **extra: Any) -> dict[str, Any]:
    """What a verification's config.json records: the options, the agents' LLM labels, and the kind of run; ``extra``
    adds the run's identity (hashes of its inputs)."""
    labels = backends.labels()
    used = needed_roles(config)
    shown = sorted({labels[r] for r in used})
    return {
        **config.to_dict(),
        "kind": kind,
        "task": kind,
        "format": config.verifier,
        "policy": config.verifier,
        "detail": config.feedback if config.budget else "",
        "llm": " + ".join(shown),
        "llm_spec": config.llm.redacted if config.llm else None,
        "llms": {r: labels[r] for r in used},
        **extra,
    }


def _with_result(constraint: Mapping[str, str], result: ConstraintResult | None) -> dict[str, Any]:
    """A constraint of the formulation with how its result was obtained (kind, method, value; None without one)."""
    if result is None:
        return {**constraint, "kind": None, "method": None, "value": None}
    return {**constraint, "kind": result.kind, "method": result.method, "value": result.value}


def summarize(
    state: VerifyState,
    *,
    run_dir: Path | None,
    config: VerifyConfig,
    llms: Mapping[str, str],
    wall_seconds: float,
) -> VerificationSummary:
    """The final verify state as the summary ``--json`` prints and summary.json holds: verdict, per-constraint results
    and evidence, usage, and for ``follow`` the rounds."""
    status = state.status
    follow: dict[str, Any] = {}
    if config.budget:
        follow = {
            "rounds": state.follow_round,
            "budget": config.budget,
            "feedback": config.feedback,
            "history": [{"round": h["round"], "verdict": h["verdict"]} for h in state.history],
            "output": state.output,
        }
    return VerificationSummary(
        run_dir=str(run_dir) if run_dir else None,
        verifier=config.verifier,
        llms=dict(llms),
        verdict=status if status in VERDICTS else None,
        status=status,
        reason=state.reason,
        formula=state.formula,
        constraints=[_with_result(c, state.results.get(c["id"])) for c in state.constraints],
        decision=state.decision,
        explanation=state.explanation,
        results=state.results,
        llm_calls=state.llm_calls,
        cached_calls=state.cached_calls,
        prompt_tokens=state.prompt_tokens,
        completion_tokens=state.completion_tokens,
        calls_without_usage=state.calls_without_usage,
        cached_tokens=state.cached_tokens,
        failed_requests=state.failed_requests,
        llm_seconds=round(state.llm_seconds, 4),
        checker_runs=state.checker_runs,
        checker_seconds=round(state.checker_seconds, 4),
        wall_seconds=round(wall_seconds, 4),
        **follow,
    )


def _write_outputs(rundir: RunDir, state: VerifyState, summary: VerificationSummary) -> None:
    for cid, code in state.codes.items():
        rundir.write_text(f"checkers/{cid}.py", code)
    for item in state.history:
        if item.get("round"):
            rundir.write_text(f"outputs/round-{item['round']}.txt", item["output"])
    if summary.rounds is not None:
        rundir.write_text("output.txt", state.output)
    rundir.write_text("explanation.txt", (state.explanation or state.reason) + "\n")
    rundir.write_json(SUMMARY_FILE, summary.model_dump(), default=str)


def default_run_dir(kind: str, verifier: str) -> Path:
    """``runs/<kind>/<verifier>-<time>``: runs of one kind sort together, newest last."""
    return Path("runs") / kind / f"{verifier}-{time.strftime('%Y%m%d-%H%M%S')}"


def verify_output(
    instruction: str,
    output: str | None,
    config: VerifyConfig,
    run_dir: Path | None = None,
    *,
    backend: ChatBackend | None = None,
    backends: Mapping[str, ChatBackend] | None = None,
    notify: Callable[[str], None] = lambda m: None,
) -> VerificationSummary:
    """Verify ``output`` against ``instruction`` — or, with ``config.budget > 0`` and ``output=None``,
    run the feedback loop — in a run directory; returns the summary also written to summary.json."""
    config = config.resolved()
    follow = config.budget > 0
    if follow == (output is not None):
        raise VerifyError("give a response to verify, or a budget for the feedback loop — not both")
    if not instruction.strip():
        raise VerifyError("the instruction is empty")
    kind = "follow" if follow else "verify"
    rundir = RunDir.open(Path(run_dir) if run_dir else default_run_dir(kind, config.verifier), VerifyError)
    user_checkers = load_checkers(config)
    start = time.perf_counter()
    with Backends(config, rundir.path, backend=backend, backends=backends, notify=notify) as handles:
        record = config_record(
            kind,
            config,
            handles,
            instruction_sha256=sha(instruction),
            output_sha256=sha(output) if output is not None else None,
            user_checkers=[c.to_dict() for c in user_checkers.values()],
        )
        rundir.claim(record, IDENTITY)
        rundir.write_text("instruction.txt", instruction)
        if output is not None:
            rundir.write_text("output.txt", output)
        tracer = Tracer(rundir.path)
        runtime = make_runtime(config, handles, tracer, user_checkers=user_checkers)
        with run_checkpointer(rundir) as checkpointer:
            state = run_graph(runtime, initial_state(instruction, output), checkpointer)
        summary = summarize(
            state, run_dir=rundir.path, config=config, llms=record["llms"], wall_seconds=time.perf_counter() - start
        )
    _write_outputs(rundir, state, summary)
    tracer.event("outcome", status=summary.status, reason=summary.reason)
    return summary


__all__ = [
    "Backends",
    "ROLES",
    "VerifyConfig",
    "VerifyError",
    "config_record",
    "load_checkers",
    "make_runtime",
    "run_graph",
    "summarize",
    "verify_output",
]
