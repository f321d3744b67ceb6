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
    llm_cache.sqlite   LLM responses by prompt hash: a resumed run never pays twice for a call
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.agents.llm import (
    LOCAL_NOTICE,
    ChatBackend,
    LLMError,
    ResponseCache,
    backend_from_spec,
    default_llm_spec,
    redact_spec,
)
from autonesy.agents.llm.guided import DECODING_MODES
from autonesy.agents.llm.replay import recorded_decoding
from autonesy.agents.policies import POLICIES, AttemptSpec, check_prompt_style, make_policy
from autonesy.graph.attempt import AttemptRuntime, AttemptState, TrainingRequest, build_attempt_graph, json_safe
from autonesy.graph.checkpoint_store import CheckpointError, data_checkpointer
from autonesy.graph.trace import Tracer
from autonesy.tasks.registry import load_task
from autonesy.tasks.task import Task
from autonesy.tools.config import COMPILE_TIME_LIMIT_S, LLM_TIMEOUT_S, MAX_REPAIRS
from autonesy.tools.errors import AutonesyError
from autonesy.tools.formats.base import FORMATS

VERSIONED_PACKAGES = (
    "autonesy-agent",
    "langgraph",
    "langchain-openai",
    "langchain-core",
    "python-sat",
    "pysdd",
    "pyapproxmc",
    "pyganak",
    "cpmpy",
    "sympy",
    "z3-solver",
    "torch",
    "libcirkit",
    "klaycircuits",
)
THREAD = {"configurable": {"thread_id": "attempt"}, "recursion_limit": 100}


class RunError(AutonesyError, ValueError):
    """A run that cannot start (bad option, a run directory holding another run)."""


@dataclass
class RunConfig:
    task: str
    format: str = "cpmpy"
    prompt: str = "zs-cot"
    detail: str = "detailed"
    policy: str | None = None  # default: the prompt style's policy
    llm: str | None = None  # default: $AUTONESY_LLM, else the embedded local model
    max_repairs: int = MAX_REPAIRS
    compile_time_limit_s: float = COMPILE_TIME_LIMIT_S
    llm_timeout_s: float = LLM_TIMEOUT_S
    max_tokens: int | None = None  # None: the backend's default (the local model caps its own)
    decoding: str | None = None  # free | grammar; default: grammar for the embedded model, else free
    extra: dict[str, Any] = field(default_factory=dict)

    def resolved(self) -> RunConfig:
        if self.format not in FORMATS:
            raise RunError(f"unknown format {self.format!r}; choose one of {', '.join(FORMATS)}")
        try:
            check_prompt_style(self.prompt)
        except ValueError as error:
            raise RunError(str(error)) from None
        policy = self.policy or self.prompt
        if policy not in POLICIES:
            raise RunError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
        llm = None if policy == "expert" else (self.llm or default_llm_spec())
        decoding = self.decoding or default_decoding(llm)
        if decoding not in DECODING_MODES:
            raise RunError(f"unknown decoding {decoding!r}; choose one of {', '.join(DECODING_MODES)}")
        return RunConfig(**{**asdict(self), "policy": policy, "llm": llm, "decoding": decoding})


def default_decoding(llm: str | None) -> str:
    """``grammar`` for the embedded model (whose server takes GBNF), what a replayed trace was
    recorded with, ``free`` elsewhere (a server's grammar support is only known when its config names it)."""
    if llm is not None and llm.startswith("replay:"):
        return recorded_decoding(llm[len("replay:") :].strip())
    return "grammar" if llm is not None and (llm == "local" or llm.startswith("local:")) else "free"


def package_versions() -> dict[str, str]:
    return dict(_package_versions())


@functools.lru_cache(maxsize=1)
def _package_versions() -> tuple[tuple[str, str], ...]:  # reading 14 METADATA files costs ~30 ms: once per process
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return tuple(versions.items())


def default_run_dir(config: RunConfig, task: Task) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path("runs") / task.name / f"{config.format}-{config.policy}-{config.detail}-{stamp}"


def first_link(run_dir: Path) -> str | None:
    """A symbolic link inside the run directory, if any. A directory to resume may come from someone
    else, and a link in it (``answer.txt`` → ``~/.bashrc``, the answer replayed from its own cache)
    would make the run write outside it."""
    for parent, dirs, files in os.walk(run_dir):  # links are listed, never followed
        for name in (*dirs, *files):
            if os.path.islink(os.path.join(parent, name)):
                return os.path.join(parent, name)
    return None


LINK_REFUSED = "{} is a symbolic link; a run directory holds plain files only (nothing was run)"


def _write_config(run_dir: Path, config: RunConfig, task: Task, backend: ChatBackend | None) -> None:
    path = run_dir / "config.json"
    record = {
        **asdict(config),
        "task": task.name,
        "task_spec": config.task,
        "llm": backend.label if backend else config.llm,
    }
    if path.is_file():
        try:  # the directory may come from someone else: a crafted file is an error line, not a traceback
            previous = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        except (ValueError, RecursionError):
            previous = None
        if not isinstance(previous, dict):
            raise RunError(f"{run_dir}/config.json is not a run configuration; choose another --out")
        keys = ("task", "format", "prompt", "detail", "policy", "llm", "max_repairs", "decoding")
        if any(previous.get(k, "free" if k == "decoding" else None) != record.get(k) for k in keys):
            shown = ", ".join(f"{k}={str(previous.get(k))[:80]}" for k in keys)
            raise RunError(f"{run_dir} holds a different run ({shown}); choose another --out")
        return
    record["versions"] = package_versions()
    record["started"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    path.write_text(json.dumps(record, indent=2))


def run_attempt(
    config: RunConfig,
    run_dir: Path | None = None,
    *,
    backend: ChatBackend | None = None,
    labels: np.ndarray | None = None,
    training: TrainingRequest | None = None,
    notify=lambda message: None,
) -> dict[str, Any]:
    """Run (or resume) one attempt; returns the summary that is also written to summary.json."""
    config = config.resolved()
    task = load_task(config.task)
    task.descriptions.get(config.detail)  # validates the detail level
    run_dir = Path(run_dir) if run_dir else default_run_dir(config, task)
    run_dir.mkdir(parents=True, exist_ok=True)
    if (link := first_link(run_dir)) is not None:
        raise RunError(LINK_REFUSED.format(link))
    owns_backend = backend is None and config.policy != "expert"
    if owns_backend:
        cache = ResponseCache(run_dir / "llm_cache.sqlite")
        options = {} if config.max_tokens is None else {"max_tokens": config.max_tokens}
        backend = backend_from_spec(config.llm, timeout_s=config.llm_timeout_s, cache=cache, **options)
        if config.llm == "local":
            notify(f"note: {LOCAL_NOTICE}")
    try:
        policy = make_policy(config.policy, backend, max_repairs=config.max_repairs, decoding=config.decoding)
        try:
            policy.check_backend()  # a backend that cannot decode under a grammar says so before any call
        except LLMError as error:
            raise RunError(str(error)) from None
        _write_config(run_dir, config, task, backend)
        tracer = Tracer(run_dir)
        spec = AttemptSpec(task, config.format, config.detail, config.prompt)
        runtime = AttemptRuntime(spec, policy, tracer, run_dir, labels, config.compile_time_limit_s, training)
        connection = sqlite3.connect(run_dir / "checkpoints.sqlite", check_same_thread=False)
        # WAL (set by the saver) + NORMAL: a commit survives the process being killed, without an fsync each
        connection.execute("PRAGMA synchronous=NORMAL")
        try:
            graph = build_attempt_graph(data_checkpointer(connection))
            snapshot = graph.get_state(THREAD)
            if snapshot.values and not snapshot.next:
                state = snapshot.values  # finished before: nothing to do
            elif snapshot.next:
                tracer.event("resumed", next=list(snapshot.next))
                state = graph.invoke(None, THREAD, context=runtime)
            else:
                initial: AttemptState = {
                    "status": "running",
                    "repair_round": 0,
                    "semantic_round": 0,
                    "autofixes": [],
                    "llm_calls": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "llm_seconds": 0.0,
                }
                state = graph.invoke(initial, THREAD, context=runtime)
        except CheckpointError as error:  # a crafted or foreign checkpoints.sqlite: one line, nothing ran
            raise RunError(f"{run_dir}: {error}") from None
        finally:
            connection.close()
        summary = _summary(config, task, run_dir, state)
        _write_outputs(run_dir, state, summary)
        tracer.event("outcome", status=summary["status"], reason=summary["reason"])
        return summary
    finally:
        if owns_backend and backend is not None:
            backend.close()


def _summary(config: RunConfig, task: Task, run_dir: Path, state: dict[str, Any]) -> dict[str, Any]:
    oracle = state.get("oracle_test") or {}
    metrics = state.get("metrics") or {}
    return json_safe(
        {
            "run_dir": str(run_dir),
            "task": task.name,
            "format": config.format,
            "prompt": config.prompt,
            "detail": config.detail,
            "policy": config.policy,
            "llm": redact_spec(config.llm),
            "decoding": config.decoding,
            "status": state.get("status", "unfinished"),
            "accepted": state.get("status") == "accepted",
            "reason": state.get("reason", ""),
            "repair_rounds": state.get("repair_round", 0),
            "semantic_rounds": state.get("semantic_round", 0),
            "autofixes": state.get("autofixes", []),
            "oracle_test": {
                k: oracle.get(k)
                for k in (
                    "passed",
                    "labels_checked",
                    "labels_rejected",
                    "probes_checked",
                    "too_strict",
                    "too_permissive",
                )
            }
            if oracle
            else None,
            "compiled": state.get("compiled"),
            "metrics": {
                k: metrics.get(k)
                for k in (
                    "precision",
                    "recall",
                    "f1",
                    "relation",
                    "mc_ratio",
                    "tp",
                    "fp",
                    "fn",
                    "tn",
                    "count_method",
                    "exact",
                )
            }
            if metrics
            else None,
            "training": _training_note(state),
            "llm_calls": state.get("llm_calls", 0),
            "prompt_tokens": state.get("prompt_tokens", 0),
            "completion_tokens": state.get("completion_tokens", 0),
            "llm_seconds": state.get("llm_seconds", 0.0),
        }
    )


def _training_note(state: dict[str, Any]) -> Any:
    if state.get("downstream"):
        return state["downstream"]
    if state.get("status") == "rejected":
        return {"skipped": "the formula was rejected, so no predictor was trained on it"}
    return None


def _write_outputs(run_dir: Path, state: dict[str, Any], summary: dict[str, Any]) -> None:
    if state.get("answer"):
        (run_dir / "answer.txt").write_text(state["answer"])
    if state.get("dimacs"):
        (run_dir / "formula.txt").write_text(state.get("source", ""))
        (run_dir / "formula.cnf").write_text(state["dimacs"])
    metrics = {
        "oracle_test": state.get("oracle_test"),
        "compiled": state.get("compiled"),
        "formula": state.get("metrics"),
    }
    (run_dir / "metrics.json").write_text(json.dumps(json_safe(metrics), indent=2))
    if state.get("downstream"):
        (run_dir / "downstream.json").write_text(json.dumps(json_safe(state["downstream"]), indent=2))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
