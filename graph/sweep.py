"""Sweeps: a grid of formalization attempts (LLMs × tasks × formats × prompts × details × repeats),
run concurrently, resumable after a kill, gathered into one results table.

    autonesy-agent sweep --llm SPEC --tasks all --formats all --prompts zs,zs-cot --details both --out DIR

The sweep directory:

    sweep.json          the grids run into DIR (one entry per distinct grid, in the order first run)
    llm_cache.sqlite    ONE response cache shared by every attempt (keyed by endpoint, model, prompt)
    attempts/<id>/      one run directory per attempt (what ``run_attempt`` writes, see graph/run.py)
                        plus ``job.json`` (the attempt's grid point) and, after a failure, ``error.json``
    results.jsonl       one row per attempt (schema: ``ROW_FIELDS``), deterministic order
    results.csv         the same rows as CSV (lists joined with ';')

**The unit of work** is :func:`execute_attempt` — a pure function of its job (the attempt's
``RunConfig`` and the sweep directory): it runs (or resumes) ``run_attempt`` in
``DIR/attempts/<id>/`` and returns the attempt's row. The attempt id is a hash of the attempt's
identity (task, format, prompt, detail, policy, LLM spec, repair budget, token limit, compile budget,
repeat), so the same grid point always lands in the same directory.

**Resume**: an attempt whose ``summary.json`` exists is finished and never rerun; any other
attempt is (re)started, and ``run_attempt`` itself resumes it from its LangGraph checkpoint. LLM
answers already received are in the shared response cache, so a restarted sweep repeats no LLM
call that had finished. Cache keys carry the attempt id (see ``SaltedBackend``): attempts never
share answers, so results do not depend on the order in which attempts ran. The results table is always rebuilt from the attempt directories (never
appended), so a restart yields no duplicated and no missing rows. An attempt that raised (a bug, a
sandbox failure) gets status ``error`` and ``error.json``; the next run retries it.

**Executors**:
- ``local`` (default): one process; attempts run in threads, at most ``concurrency`` at a time per
  LLM endpoint (an asyncio semaphore per endpoint in front of a thread pool). LLM calls are I/O
  bound; the backends are thread-safe (their counters and the cache are locked). One backend per
  LLM spec is built with the shared cache and handed to every attempt.
- ``process``: the same, with a pool of worker processes (for CPU-bound sweeps such as the
  ``expert`` policy); each worker builds its own backends on the shared cache file.
- ``ray``: every attempt is a Ray task (``--ray-address`` for a cluster, else a local Ray
  instance); the same per-endpoint limit is kept by the driver. Workers write their attempt
  directory and the cache themselves, so DIR must be on a filesystem every node sees at the same
  path (trivially true on one machine; NFS or similar on a cluster) and ``autonesy-agent`` must
  be installed on every node. Ray is an optional extra (``pip install "autonesy-agent[ray]"``).
  Training jobs will use the same path: any module-level function of a JSON job can be dispatched
  with :func:`run_jobs`.

Ctrl-C stops starting new attempts; attempts already running finish first (a second Ctrl-C
aborts the wait — interrupted attempts resume on the next run).
"""

from __future__ import annotations

import asyncio
import csv
import fcntl
import hashlib
import io
import json
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autonesy.agents.llm import (
    ChatBackend,
    LLMResponse,
    ResponseCache,
    backend_from_spec,
    default_llm_spec,
    redact_spec,
)
from autonesy.agents.policies import POLICIES
from autonesy.agents.prompts import PROMPT_STYLES
from autonesy.graph.run import RunConfig, default_decoding, run_attempt
from autonesy.graph.rundir import CHECKPOINTS_FILE, SUMMARY_FILE, read_json, write_json
from autonesy.graph.summary import RunSummary, SummaryError
from autonesy.tasks.reference import NoReference
from autonesy.tasks.registry import TASK_NAMES, load_task
from autonesy.tasks.task import DETAIL_LEVELS, TaskError
from autonesy.tools import safe_files
from autonesy.tools.config import LLM_TIMEOUT_S
from autonesy.tools.errors import AutonesyError
from autonesy.tools.formats.base import FORMATS

EXECUTORS = ("local", "process", "ray")
EXPERT = "expert"
ATTEMPTS_DIR = "attempts"
JOB_FILE = "job.json"
ERROR_FILE = "error.json"
NOT_APPLICABLE_FILE = "not_applicable.json"
TIMEOUT_FILE = "timeout.json"
TIMING_FILE = "timing.json"
CACHE_FILE = "llm_cache.sqlite"
SWEEP_FILE = "sweep.json"
RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"
LOCK_FILE = ".sweep.lock"

# One row per attempt, in this column order (results.jsonl and results.csv).
ROW_FIELDS: dict[str, str] = {
    "attempt_id": "16 hex digits: SHA-256 of the attempt's identity (see attempt_identity)",
    "task": "task name (catalogue name, task-file name, satbench-<key>, dcpbench-<problem>)",
    "task_spec": "what load_task reads: a catalogue name, a task file, satbench:PATH#KEY, dcpbench:PATH#ID",
    "benchmark": "catalogue | taskfile | satbench | dcpbench",
    "num_vars": "number of task variables",
    "llm": "the LLM spec as given to --llm ('expert' for the expert policy)",
    "model": "the model name (the part after '@' or 'openai:'; 'expert')",
    "format": "output format: dimacs | nat | pysat | cpmpy | sympy",
    "prompt": "prompt style: zs | zs-cot",
    "detail": "description level: detailed | not-detailed",
    "policy": "agent policy: zs | zs-cot | oracle-feedback | few-shot | expert",
    "decoding": "free | grammar (constrained to the format's answer grammar for the task)",
    "repeat": "repeat index (0-based; --repeats draws independent answers: cache keys carry the attempt id)",
    "max_repairs": "syntax-repair budget",
    "status": (
        "accepted | rejected | timeout (ran past the per-attempt time limit; retried only under a longer "
        "limit) | not_applicable (the format cannot express this task's reference, e.g. NAT/SymPy for a "
        "ground truth with auxiliaries; never retried) | error (raised; retried on the next run) | unfinished "
        "| pending"
    ),
    "syntax_error": "true when rejected because no parseable formula was reached (after repair, or [[OK]] on an error)",
    "llm_error": "true when rejected because the LLM call failed (timeout, HTTP error, empty answer)",
    "reason": "why the attempt was rejected (or the exception, for status error)",
    "repair_rounds": "[[OK]]/[[FIXED]] rounds used",
    "semantic_rounds": "oracle-feedback rounds used",
    "autofixes": "autofixes applied (list in JSONL, ';'-joined in CSV)",
    "n_autofixes": "number of autofixes",
    "llm_calls": "requests sent to the model (answers from the response cache not counted)",
    "prompt_tokens": "prompt tokens of those requests",
    "completion_tokens": "completion tokens of those requests",
    "llm_seconds": "summed latency of those requests",
    "wall_seconds": "wall time of the run that finished the attempt (a resumed attempt: the last run only)",
    "oracle_passed": "oracle test verdict on the accepted formula (empty when rejected)",
    "compiled": "the SDD fit its budget (empty when rejected)",
    "sdd_size": "SDD size",
    "f1": "F1 vs the ground truth; 0 for a rejected attempt (as in the paper); empty without ground truth",
    "precision": "precision (empty when rejected)",
    "recall": "recall (empty when rejected)",
    "relation": "equal | permissive | strict | incomparable (empty when rejected)",
    "mc_ratio": "MC(formula) / max(MC(ground truth), 1)",
    "tp": "MC(truth ∧ formula)",
    "fp": "MC(¬truth ∧ formula)",
    "fn": "MC(truth ∧ ¬formula)",
    "tn": "MC(¬truth ∧ ¬formula)",
    "count_method": "how the counts were obtained (enumeration | sdd | ganak | approxmc)",
    "exact": "counts are exact (false only with approxmc)",
    "run_dir": "the attempt's run directory, relative to the sweep directory",
}
TIMING_FIELDS = ("wall_seconds", "llm_seconds")  # differ between two runs of the same sweep


class SweepError(AutonesyError, ValueError):
    """A sweep that cannot start (bad grid, unusable option, a directory held by another sweep)."""


# --------------------------------------------------------------------------------------- grid
@dataclass(frozen=True)
class SweepSpec:
    """The grid. Empty ``llms`` means the default LLM ($AUTONESY_LLM, else local); the expert
    policy has no LLM. ``policy=None`` runs each prompt style's own benchmark policy."""

    tasks: tuple[str, ...] = ("all",)
    formats: tuple[str, ...] = FORMATS
    prompts: tuple[str, ...] = PROMPT_STYLES
    details: tuple[str, ...] = DETAIL_LEVELS
    llms: tuple[str, ...] = ()
    policy: str | None = None
    repeats: int = 1
    max_repairs: int = 5
    max_tokens: int | None = None
    compile_time_limit_s: float = 60.0
    llm_timeout_s: float = LLM_TIMEOUT_S
    decoding: str | None = None  # free | grammar; default: grammar for the embedded model, else free
    attempt_time_limit_s: float | None = None  # wall seconds per attempt (run in a child process); None: unbounded
    data: bool = False  # oracle tests also check the tasks' annotated training labels (catalogue tasks)

    def to_dict(self) -> dict[str, Any]:
        """The grid as JSON (tuples as lists), as ``sweep.json`` records it."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def split_list(values: Iterable[str] | str | None) -> list[str]:
    """'a,b' and ['a,b', 'c'] → ['a', 'b', 'c'] (order kept, duplicates dropped)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        for item in str(value).split(","):
            item = item.strip()
            if item and item not in out:
                out.append(item)
    return out


def parse_choice(
    values: Iterable[str] | str | None, allowed: Sequence[str], what: str, aliases: Mapping[str, str] = {}
) -> tuple[str, ...]:
    """Parse a comma list of options against ``allowed``: 'all'/'both' (or nothing) means every one, an alias maps to
    its name, anything else is a ``SweepError`` naming the choices."""
    items = split_list(values)
    if not items or items in (["all"], ["both"]):
        return tuple(allowed)
    out = []
    for item in items:
        item = aliases.get(item, item)
        if item not in allowed:
            raise SweepError(f"unknown {what} {item!r}; choose from {', '.join(allowed)} (or all)")
        if item not in out:
            out.append(item)
    return tuple(out)


def benchmark_of(task_spec: str) -> str:
    """Which benchmark a task spec comes from (the results table's ``benchmark`` column, which the report's marginals
    group by)."""
    if task_spec.startswith("satbench:"):
        return "satbench"
    if task_spec.startswith("dcpbench:"):
        return "dcpbench"
    if task_spec.endswith(".toml"):
        return "taskfile"
    return "catalogue"


def expand_tasks(items: Iterable[str]) -> list[str]:
    """Task specs of the grid: 'all' → the 18 catalogue tasks; 'satbench:PATH' / 'dcpbench:PATH' →
    one spec per kept record/problem; task files by absolute path; catalogue names as they are."""
    from autonesy.tasks import adapters

    specs: list[str] = []
    for item in items:
        if item == "all":
            found = list(TASK_NAMES)
        elif adapters.is_adapter_spec(item):
            try:
                found = adapters.expand(item)
            except TaskError as error:
                raise SweepError(str(error)) from None
            if not found:
                raise SweepError(f"{item}: no usable task found")
        elif item.endswith(".toml"):
            path = Path(item).expanduser()
            if not path.is_file():
                raise SweepError(f"{item}: no such task file")
            found = [str(path.resolve())]
        elif item in TASK_NAMES:
            found = [item]
        else:
            raise SweepError(
                f"unknown task {item!r}; give catalogue names, 'all', task files (*.toml), "
                "satbench:PATH or dcpbench:PATH"
            )
        specs.extend(spec for spec in found if spec not in specs)
    return specs


def model_name(llm: str) -> str:
    """The model part of an LLM spec, so the report can group attempts by model whatever endpoint served it."""
    if llm == EXPERT:
        return EXPERT
    if llm.startswith("openai:"):
        return llm[len("openai:") :]
    if "://" in llm and "@" in llm.split("://", 1)[1]:
        return llm.rsplit("@", 1)[1]
    return llm


def attempt_identity(config: RunConfig, repeat: int) -> dict[str, Any]:
    """What makes two attempts the same: everything that can change the outcome (not the timeout)."""
    return {
        "task": config.task,
        "format": config.format,
        "prompt": config.prompt,
        "detail": config.detail,
        "policy": config.policy,
        "llm": redact_spec(config.llm) or EXPERT,
        "max_repairs": config.max_repairs,
        "max_tokens": config.max_tokens,
        "compile_time_limit_s": config.compile_time_limit_s,
        "repeat": repeat,
        **({"decoding": "grammar"} if config.decoding == "grammar" else {}),
    }


def attempt_id(config: RunConfig, repeat: int) -> str:
    """The attempt's directory name: a short hash of its identity, so the same grid point always lands in the same
    directory and resumes there."""
    text = json.dumps(attempt_identity(config, repeat), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """The grid's attempts as jobs (JSON data), in grid order; raises SweepError on a bad grid."""
    formats = parse_choice(spec.formats, FORMATS, "format")
    prompts = parse_choice(spec.prompts, PROMPT_STYLES, "prompt style")
    details = parse_choice(spec.details, DETAIL_LEVELS, "detail level", {"not_detailed": "not-detailed"})
    policy = spec.policy
    if policy is not None and policy not in POLICIES:
        raise SweepError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}")
    if policy in PROMPT_STYLES and set(prompts) != {policy}:
        raise SweepError(
            f"--policy {policy} fixes the prompt style; leave --policy out to run each prompt "
            f"style's own policy, or give --prompts {policy}"
        )
    if spec.repeats < 1:
        raise SweepError("--repeats must be at least 1")
    if spec.decoding not in (None, "free", "grammar"):
        raise SweepError(f"unknown decoding {spec.decoding!r}; choose free or grammar")
    if policy == EXPERT:
        llms: list[str | None] = [None]
    else:
        llms = list(split_list(spec.llms)) or [default_llm_spec()]
    tasks = expand_tasks(split_list(spec.tasks) or ["all"])
    jobs = []
    for llm in llms:
        for task in tasks:
            for fmt in formats:
                for prompt in prompts:
                    for detail in details:
                        for repeat in range(spec.repeats):
                            config = RunConfig(
                                task=task,
                                format=fmt,
                                prompt=prompt,
                                detail=detail,
                                policy=policy or prompt,
                                llm=llm,
                                max_repairs=spec.max_repairs,
                                compile_time_limit_s=spec.compile_time_limit_s,
                                llm_timeout_s=spec.llm_timeout_s,
                                max_tokens=spec.max_tokens,
                                decoding=None if llm is None else spec.decoding or default_decoding(llm),
                                data=spec.data,
                            )
                            jobs.append(
                                {
                                    "attempt_id": attempt_id(config, repeat),
                                    "config": asdict(config),
                                    "repeat": repeat,
                                    "llm": llm or EXPERT,
                                }
                            )
    return jobs


def job_group(job: Mapping[str, Any]) -> str:
    """The concurrency group of a job: its LLM endpoint (the spec before '@'), or 'expert'."""
    llm = job["llm"]
    if llm == EXPERT:
        return EXPERT
    if "://" in llm and "@" in llm.split("://", 1)[1]:
        return llm.rsplit("@", 1)[0].rstrip("/")
    if llm.startswith("openai:"):
        return "openai"
    return llm


# ---------------------------------------------------------------------------- the unit of work
class SaltedBackend(ChatBackend):
    """A backend whose cache keys carry the attempt's id: attempts never answer each other's calls
    from the shared cache (two attempts can send byte-identical repair prompts), so each attempt's
    answers, outcome and call counts depend on its own configuration only, whatever the order in
    which attempts run; repeats are fresh draws."""

    def __init__(self, inner: ChatBackend, salt: str) -> None:
        self.inner, self.salt = inner, salt
        self.label, self.model, self.endpoint, self.notice = inner.label, inner.model, inner.endpoint, inner.notice
        self.grammar_dialect = inner.grammar_dialect
        self.default_params = getattr(inner, "default_params", None) or {}  # the token budget bounds a grammar

    def complete(self, messages, *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """Ask the shared backend with the attempt's salt in the cache key."""
        return self.inner.complete(messages, cache_salt=f"{self.salt}|{cache_salt}", **params)


_WORKER_BACKENDS: dict[tuple, ChatBackend] = {}
_WORKER_LOCK = threading.Lock()


def worker_backend(llm: str, out: str | Path, timeout_s: float, max_tokens: int | None) -> ChatBackend:
    """One backend per (LLM spec, sweep directory) in this process, on the sweep's shared cache."""
    key = (llm, str(out), timeout_s, max_tokens)
    with _WORKER_LOCK:
        backend = _WORKER_BACKENDS.get(key)
        if backend is None:
            options = {} if max_tokens is None else {"max_tokens": max_tokens}
            backend = backend_from_spec(
                llm, timeout_s=timeout_s, cache=ResponseCache(Path(out) / CACHE_FILE), **options
            )
            _WORKER_BACKENDS[key] = backend
        return backend


def close_worker_backends() -> None:
    """Close the backends this process built for sweep workers (their HTTP clients and caches)."""
    with _WORKER_LOCK:
        backends = list(_WORKER_BACKENDS.values())
        _WORKER_BACKENDS.clear()
    for backend in backends:
        backend.close()


def execute_attempt(
    job: Mapping[str, Any],
    out: str | Path,
    backends: Mapping[str, ChatBackend] | None = None,
) -> dict[str, Any]:
    """Run (or resume) one attempt of a sweep in ``out/attempts/<id>/``; return its results row.

    Exceptions of the attempt are caught and recorded (``error.json``, status ``error``); only
    BaseExceptions (a kill, Ctrl-C) escape. ``backends`` maps LLM specs to ready backends (the
    local executor's shared ones); otherwise this process builds its own on the shared cache.
    """
    out = Path(out)
    run_dir = out / ATTEMPTS_DIR / job["attempt_id"]
    safe_files.make_dirs(run_dir, root=out)  # a received sweep's attempts/ or attempt folder may be a link
    config = RunConfig(**job["config"])
    start = time.perf_counter()
    try:
        backend = None
        if job["llm"] != EXPERT:
            backend = (backends or {}).get(job["llm"])
            if backend is None:
                backend = worker_backend(job["llm"], out, config.llm_timeout_s, config.max_tokens)
            backend = SaltedBackend(backend, f"attempt:{job['attempt_id']}")
        run_attempt(config, run_dir, backend=backend)
    except NoReference as error:  # the expert has nothing to say in this format: a final outcome
        write_json(run_dir / NOT_APPLICABLE_FILE, {"reason": str(error), "time": time.time()}, root=out)
        safe_files.remove(run_dir / ERROR_FILE, root=out)
    except Exception as error:  # recorded, retried on the next run; BaseExceptions propagate
        message = f"{type(error).__name__}: {error}".splitlines()[0][:500]
        write_json(run_dir / ERROR_FILE, {"error": message, "time": time.time()}, root=out)
    else:
        safe_files.remove(run_dir / ERROR_FILE, root=out)
        write_json(run_dir / TIMING_FILE, {"wall_seconds": round(time.perf_counter() - start, 4)}, root=out)
    return attempt_row(out, job)


def execute_bounded_attempt(job: Mapping[str, Any], out: str | Path, limit_s: float) -> dict[str, Any]:
    """:func:`execute_attempt` in a child process stopped after ``limit_s`` wall seconds; a stopped
    attempt is recorded in ``timeout.json`` (status ``timeout``). Threads cannot be stopped, and an
    attempt can spend minutes in a native counter or compiler, so the bound needs a process."""
    run_dir = Path(out) / ATTEMPTS_DIR / job["attempt_id"]
    safe_files.make_dirs(run_dir, root=out)
    safe_files.remove(run_dir / TIMEOUT_FILE, root=out)
    child = multiprocessing.get_context("spawn").Process(
        target=execute_attempt, args=(dict(job), str(out)), daemon=True
    )
    start = time.perf_counter()
    child.start()
    child.join(limit_s)
    if child.is_alive():
        child.kill()
        child.join()
        write_json(
            run_dir / TIMEOUT_FILE,
            {"limit_s": limit_s, "seconds": round(time.perf_counter() - start, 1), "time": time.time()},
            root=out,
        )
    elif child.exitcode != 0 and not safe_files.is_file(run_dir / SUMMARY_FILE, root=out):
        write_json(
            run_dir / ERROR_FILE,
            {"error": f"the attempt's process ended with exit status {child.exitcode}", "time": time.time()},
            root=out,
        )
    return attempt_row(out, job)


def finished(run_dir: Path, limit_s: float | None) -> bool:
    """An attempt that needs no rerun: scored or rejected (a readable summary), not applicable, or
    stopped by a limit at least as long as this run's."""
    try:
        if RunSummary.read(run_dir) is not None:
            return True
    except SummaryError:  # damaged: rerun, which resumes from the checkpoint and writes it again
        return False
    if safe_files.is_file(run_dir / NOT_APPLICABLE_FILE):
        return True
    stopped = read_json(run_dir / TIMEOUT_FILE)
    stopped_after = stopped.get("limit_s") if isinstance(stopped, dict) else None
    return isinstance(stopped_after, (int, float)) and limit_s is not None and stopped_after >= limit_s


# ----------------------------------------------------------------------------------- rows
def attempt_row(out: str | Path, job: Mapping[str, Any], run_dir: str | Path | None = None) -> dict[str, Any]:
    """The results row of one attempt, from its directory (whatever state it is in); ``run_dir``
    defaults to the sweep's ``out/attempts/<id>``."""
    out = Path(out)
    run_dir = Path(run_dir) if run_dir is not None else out / ATTEMPTS_DIR / job["attempt_id"]
    config = job["config"]
    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(
        attempt_id=job["attempt_id"],
        task_spec=config["task"],
        benchmark=benchmark_of(config["task"]),
        llm=redact_spec(job["llm"]),
        model=model_name(job["llm"]),
        format=config["format"],
        prompt=config["prompt"],
        detail=config["detail"],
        policy=config["policy"],
        decoding=config.get("decoding") or "free",
        repeat=job.get("repeat", 0),
        max_repairs=config["max_repairs"],
        run_dir=f"{ATTEMPTS_DIR}/{job['attempt_id']}",
        autofixes=[],
    )
    row["task"] = job.get("task") or _task_name(config["task"])
    row["num_vars"] = job.get("num_vars")
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError as error:  # a damaged summary: the attempt is retried like one that raised
        row.update(status="error", reason=str(error))
        return row
    if summary is None:
        failure = read_json(run_dir / ERROR_FILE)
        not_applicable = read_json(run_dir / NOT_APPLICABLE_FILE)
        stopped = read_json(run_dir / TIMEOUT_FILE)
        if isinstance(not_applicable, dict):
            row.update(status="not_applicable", reason=str(not_applicable.get("reason", "")))
        elif isinstance(stopped, dict):
            row.update(
                status="timeout",
                reason=f"stopped after {stopped.get('limit_s')} s, the per-attempt time limit",
                wall_seconds=stopped.get("seconds"),
            )
        elif isinstance(failure, dict):
            row.update(status="error", reason=str(failure.get("error", "")))
        elif any(safe_files.entry_stat(run_dir / name) for name in (CHECKPOINTS_FILE, "trace.jsonl")):
            row["status"] = "unfinished"
        else:
            row["status"] = "pending"
        return row
    row.update(summary_fields(summary))
    row["task"] = summary.task or row["task"]
    timing = read_json(run_dir / TIMING_FILE)
    row["wall_seconds"] = timing.get("wall_seconds") if isinstance(timing, dict) else None
    return row


SCORE_FIELDS = ("f1", "precision", "recall", "relation", "mc_ratio", "tp", "fp", "fn", "tn", "count_method", "exact")


def summary_fields(summary: RunSummary) -> dict[str, Any]:
    """The results-row fields an attempt's summary decides (the rest come from its job)."""
    fields: dict[str, Any] = {
        "status": summary.status,
        "reason": summary.reason,
        "syntax_error": summary.syntax_error,
        "llm_error": summary.llm_error,
        "repair_rounds": summary.repair_rounds,
        "semantic_rounds": summary.semantic_rounds,
        "autofixes": list(summary.autofixes),
        "n_autofixes": len(summary.autofixes),
        "llm_calls": summary.llm_calls,
        "prompt_tokens": summary.prompt_tokens,
        "completion_tokens": summary.completion_tokens,
        "llm_seconds": round(summary.llm_seconds, 4),
    }
    if summary.accepted:
        oracle, compiled = summary.oracle_test, summary.compiled
        fields.update(
            oracle_passed=oracle.passed if oracle else None,
            compiled=compiled.ok if compiled else None,
            sdd_size=compiled.size if compiled else None,
        )
        if summary.metrics:
            fields.update({key: getattr(summary.metrics, key) for key in SCORE_FIELDS})
    elif summary.status == "rejected":
        fields["f1"] = 0.0
    return fields


def _task_name(spec: str) -> str:
    try:
        return load_task(spec).name
    except (TaskError, OSError):
        return spec


def order_key(row: Mapping[str, Any]) -> tuple:
    """Sort key of a results row: expert first, then LLM, catalogue order of tasks, format, prompt, detail, policy and
    repeat, so results files are deterministic."""
    spec = row["task_spec"]
    if spec in TASK_NAMES:
        task_key: tuple = (0, TASK_NAMES.index(spec), "", 0, "")
    else:
        head, _, key = spec.rpartition("#")
        task_key = (1, 0, head or spec, int(key) if key.isdigit() else 0, "" if key.isdigit() else key)
    return (
        row["llm"] != EXPERT,
        row["llm"],
        task_key,
        FORMATS.index(row["format"]) if row["format"] in FORMATS else 9,
        row["prompt"],
        DETAIL_LEVELS.index(row["detail"]) if row["detail"] in DETAIL_LEVELS else 9,
        row["policy"],
        row.get("repeat") or 0,
        row["attempt_id"],
    )


def recorded_jobs(out: str | Path) -> list[dict[str, Any]]:
    """Every job ever written into the sweep directory. A sweep directory may come from someone else:
    a ``job.json`` without the fields a results row is built from is skipped, not a traceback."""
    jobs = []
    for path in sorted((Path(out) / ATTEMPTS_DIR).glob(f"*/{JOB_FILE}")):
        job = read_json(path, root=Path(out))
        if isinstance(job, dict) and job.get("attempt_id") == path.parent.name and _well_formed(job):
            jobs.append(job)
    return jobs


def _well_formed(job: Mapping[str, Any]) -> bool:
    config = job.get("config")
    return (
        isinstance(job.get("llm"), str)
        and type(job.get("repeat", 0)) is int
        and isinstance(config, dict)
        and all(isinstance(config.get(key), str) for key in ("task", "format", "prompt", "detail", "policy"))
        and type(config.get("max_repairs")) is int
        and isinstance(config.get("decoding"), (str, type(None)))
    )


def collect_rows(out: str | Path) -> list[dict[str, Any]]:
    """Every recorded attempt's row, rebuilt from its directory, in table order."""
    return sorted((attempt_row(out, job) for job in recorded_jobs(out)), key=order_key)


def write_results(out: str | Path, rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rebuild results.jsonl and results.csv from the attempt directories (atomically)."""
    out = Path(out)
    rows = collect_rows(out) if rows is None else rows
    safe_files.write_text(out / RESULTS_JSONL, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=list(ROW_FIELDS))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(row.get(k)) for k in ROW_FIELDS})
    safe_files.write_text(out / RESULTS_CSV, table.getvalue())
    return rows


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return ";".join(map(str, value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results.jsonl file (or of the sweep directory holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_JSONL
    return [json.loads(line) for line in safe_files.read_text(path).splitlines() if line.strip()]


# ------------------------------------------------------------------------------- executors
@dataclass
class Progress:
    """Counts a sweep reports while it runs (and at the end)."""

    total: int = 0
    skipped: int = 0  # finished before this run
    done: int = 0  # finished in this run
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one finished attempt under its status."""
        self.done += 1
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1


def run_jobs(
    jobs: Sequence[Mapping[str, Any]],
    fn: Callable[..., dict[str, Any]],
    args: tuple,
    *,
    executor: str = "local",
    concurrency: int = 4,
    on_done: Callable[[Mapping, dict], None] = lambda j, r: None,
    on_crash: Callable[[Mapping, BaseException], dict] | None = None,
    ray_address: str | None = None,
    ray_num_cpus: float | None = None,
    workers: int | None = None,
) -> None:
    """Run ``fn(job, *args)`` for every job, at most ``concurrency`` at a time per ``job_group``.

    ``fn`` must be a module-level function (process and Ray executors pickle it by reference) and
    ``args`` picklable for those executors. When running a job fails outside ``fn`` (a worker
    process died, a Ray task was lost), ``on_crash(job, error)`` gives its result instead (by
    default the error is raised). BaseExceptions (Ctrl-C) always propagate.
    """
    if not jobs:
        return
    if executor == "ray":
        _run_ray(jobs, fn, args, concurrency, on_done, on_crash, ray_address, ray_num_cpus)
        return
    groups = {job_group(job) for job in jobs}
    if executor == "local":
        pool: Executor = ThreadPoolExecutor(max_workers=max(1, concurrency * len(groups)), thread_name_prefix="sweep")
    elif executor == "process":
        pool = ProcessPoolExecutor(
            max_workers=max(1, workers or min(concurrency * len(groups), os.cpu_count() or 1)),
            mp_context=multiprocessing.get_context("spawn"),
        )  # no fork of a threaded parent
    else:
        raise SweepError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    clean = False
    try:
        asyncio.run(_run_async(jobs, fn, args, pool, concurrency, on_done, on_crash))
        clean = True
    finally:
        # On Ctrl-C or a kill-like BaseException: start nothing new and wait for the running attempts
        # (threads cannot be interrupted), so nothing writes into the sweep directory after we return.
        pool.shutdown(wait=True, cancel_futures=not clean)


async def _run_async(jobs, fn, args, pool: Executor, concurrency: int, on_done, on_crash) -> None:
    loop = asyncio.get_running_loop()
    limits: dict[str, asyncio.Semaphore] = {}

    async def one(job) -> None:
        semaphore = limits.setdefault(job_group(job), asyncio.Semaphore(concurrency))
        async with semaphore:
            try:
                row = await loop.run_in_executor(pool, fn, job, *args)
            except Exception as error:  # e.g. BrokenProcessPool: a worker process died
                if on_crash is None:
                    raise
                row = on_crash(job, error)
        on_done(job, row)

    tasks = [asyncio.ensure_future(one(job)) for job in jobs]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


def ray_available() -> bool:
    """Whether the optional Ray extra is installed (the ``ray`` executor needs it)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def _run_ray(jobs, fn, args, concurrency, on_done, on_crash, address, num_cpus) -> None:
    try:
        import ray
    except ImportError:
        raise SweepError("--executor ray needs Ray: pip install 'autonesy-agent[ray]'") from None
    owns = not ray.is_initialized()
    if owns:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        except Exception as error:  # a cluster that cannot be reached
            raise SweepError(f"cannot connect to Ray{f' at {address}' if address else ''}: {error}") from None
    try:
        cpus = num_cpus if num_cpus is not None else (1.0 if all(j["llm"] == EXPERT for j in jobs) else 0.25)
        remote = ray.remote(num_cpus=cpus, max_retries=0)(fn)
        shared = [ray.put(a) for a in args]
        queues: dict[str, list] = {}
        for job in jobs:
            queues.setdefault(job_group(job), []).append(job)
        running: dict[Any, tuple[str, Mapping]] = {}

        def fill() -> None:
            for group, queue in queues.items():
                busy = sum(1 for g, _ in running.values() if g == group)
                while queue and busy < concurrency:
                    job = queue.pop(0)
                    running[remote.remote(job, *shared)] = (group, job)
                    busy += 1

        fill()
        try:
            while running:
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    _, job = running.pop(ref)
                    try:
                        row = ray.get(ref)
                    except Exception as error:  # the worker died or the task was lost
                        if on_crash is None:
                            raise
                        row = on_crash(job, error)
                    on_done(job, row)
                fill()
        except BaseException:
            for ref in running:
                ray.cancel(ref)
            raise
    finally:
        if owns:
            ray.shutdown()


# ------------------------------------------------------------------------------------ sweep
@dataclass
class SweepResult:
    """What a sweep run returns: the rows, what this run did, how long it took and the benchmark records left out."""

    out: Path
    rows: list[dict[str, Any]]
    progress: Progress
    seconds: float
    left_out: dict[str, dict[str, str]] = field(default_factory=dict)  # adapter spec → {record: why not a task}

    @property
    def counts(self) -> dict[str, int]:
        """Attempts per status over the whole table (not only this run)."""
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The outcome as ``sweep --json`` prints it."""
        return {
            "out": str(self.out),
            "attempts": len(self.rows),
            "ran": self.progress.done,
            "skipped": self.progress.skipped,
            "counts": self.counts,
            "seconds": round(self.seconds, 3),
            "results": [str(self.out / RESULTS_JSONL), str(self.out / RESULTS_CSV)],
            "left_out": self.left_out,
        }


@contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    handle = safe_files.open_append(out / LOCK_FILE)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise SweepError(f"{out} is in use by another sweep") from None
        yield
    finally:
        os.close(handle)


def left_out_of(spec: SweepSpec) -> dict[str, dict[str, str]]:
    """For each benchmark copy in the grid's tasks, its records/problems that are not tasks, with why."""
    from autonesy.tasks import adapters

    found = {}
    for item in split_list(spec.tasks):
        if adapters.is_adapter_spec(item):
            try:
                found[item] = adapters.left_out(item)
            except TaskError as error:
                raise SweepError(str(error)) from None
    return {item: reasons for item, reasons in found.items() if reasons}


def _record_grid(out: Path, spec: SweepSpec, jobs: list[dict[str, Any]], left_out: dict[str, dict[str, str]]) -> None:
    path = out / SWEEP_FILE
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("grids"), list):
        data = {"grids": []}  # none yet, or damaged: the grids run from now on are recorded
    data["grids"] = [entry for entry in data["grids"] if isinstance(entry, dict)]
    grid = {k: v for k, v in spec.to_dict().items() if k not in ("llm_timeout_s", "attempt_time_limit_s", "data")}
    grid["llms"] = [redact_spec(llm) for llm in grid["llms"]]
    entry = next((e for e in data["grids"] if e.get("grid") == grid), None)
    if entry is None:
        entry = {"grid": grid, "attempts": len(jobs), "first_run": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        data["grids"].append(entry)
    entry["left_out"] = left_out
    write_json(path, data)


def run_sweep(
    spec: SweepSpec,
    out: str | Path,
    *,
    executor: str = "local",
    concurrency: int = 4,
    backends: Mapping[str, ChatBackend] | None = None,
    ray_address: str | None = None,
    ray_num_cpus: float | None = None,
    workers: int | None = None,
    progress: bool = True,
    console=None,
) -> SweepResult:
    """Run (or resume) the grid into ``out``; returns the results rows (also in results.jsonl/.csv).

    ``backends`` (local executor only) maps LLM specs to ready backends — e.g. scripted models in
    tests; specs not in it are built from the spec with the sweep's shared response cache.
    """
    if executor not in EXECUTORS:
        raise SweepError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if concurrency < 1:
        raise SweepError("--concurrency must be at least 1")
    if backends and executor != "local":
        raise SweepError("ready-made backends can only be used with the local executor")
    start = time.perf_counter()
    jobs = expand(spec)
    out = safe_files.output_dir(out)
    left_out = left_out_of(spec)
    if progress:
        for item, reasons in left_out.items():
            lines = [f"{item}: {len(reasons)} left out (also in {out / SWEEP_FILE}):"]
            lines += [f"  {key}: {reason}" for key, reason in reasons.items()]
            if console is not None:
                console.print("\n".join(lines), highlight=False, markup=False)
            else:
                print("\n".join(lines), file=sys.stderr)
    with _exclusive(out):
        safe_files.make_dirs(out / ATTEMPTS_DIR, root=out)  # a received sweep's attempts/ may be a link: refused
        _record_grid(out, spec, jobs, left_out)
        pending = [
            job for job in jobs if not finished(out / ATTEMPTS_DIR / job["attempt_id"], spec.attempt_time_limit_s)
        ]
        unfinished = {job["attempt_id"] for job in pending}
        tasks: dict[str, Any] = {}
        for job in jobs:  # tasks are loaded only for attempts still to run (a large ground truth takes seconds)
            path = out / ATTEMPTS_DIR / job["attempt_id"] / JOB_FILE
            if job["attempt_id"] not in unfinished and safe_files.is_file(path, root=out):
                continue
            spec_ = job["config"]["task"]
            if spec_ not in tasks:
                tasks[spec_] = _task_or_error(spec_)
            task = tasks[spec_]
            job.update(task=task.name, num_vars=task.num_vars)
            if not safe_files.is_file(path, root=out):
                write_json(path, public_job(job), root=out)
        state = Progress(total=len(jobs), skipped=len(jobs) - len(pending))
        own_backends: dict[str, ChatBackend] = {}
        if executor == "local":
            own_backends = _local_backends(pending, out, spec, backends or {})
        args: tuple = (str(out), {**(backends or {}), **own_backends} or None) if executor == "local" else (str(out),)
        fn: Callable[..., dict[str, Any]] = execute_attempt
        if spec.attempt_time_limit_s is not None:
            if backends:
                raise SweepError(
                    "a per-attempt time limit runs each attempt in its own process, which cannot use "
                    "ready-made backends; give LLM specs instead"
                )
            fn, args = execute_bounded_attempt, (str(out), spec.attempt_time_limit_s)
        try:
            with _progress_display(state, progress, console) as on_done:
                run_jobs(
                    pending,
                    fn,
                    args,
                    executor=executor,
                    concurrency=concurrency,
                    on_done=on_done,
                    on_crash=lambda job, error: _record_crash(out, job, error),
                    ray_address=ray_address,
                    ray_num_cpus=ray_num_cpus,
                    workers=workers,
                )
        finally:
            for backend in own_backends.values():
                backend.close()
            rows = write_results(out)
    return SweepResult(out, rows, state, time.perf_counter() - start, left_out)


def public_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job as written to disk: a password in its LLM spec redacted (the worker gets the job itself)."""
    return {
        **job,
        "llm": redact_spec(job["llm"]),
        "config": {**job["config"], "llm": redact_spec(job["config"]["llm"])},
    }


def _record_crash(out: Path, job: Mapping[str, Any], error: BaseException) -> dict[str, Any]:
    message = f"the worker running this attempt failed: {type(error).__name__}: {error}".splitlines()[0][:500]
    write_json(out / ATTEMPTS_DIR / job["attempt_id"] / ERROR_FILE, {"error": message, "time": time.time()}, root=out)
    return attempt_row(out, job)


def _task_or_error(spec: str):
    try:
        return load_task(spec)
    except (TaskError, OSError) as error:
        raise SweepError(str(error)) from None


def _local_backends(jobs, out: Path, spec: SweepSpec, given: Mapping[str, ChatBackend]) -> dict[str, ChatBackend]:
    needed = sorted({job["llm"] for job in jobs} - {EXPERT} - set(given))
    if not needed:
        return {}
    cache = ResponseCache(out / CACHE_FILE)
    options = {} if spec.max_tokens is None else {"max_tokens": spec.max_tokens}
    built = {}
    try:
        for llm in needed:
            built[llm] = backend_from_spec(llm, timeout_s=spec.llm_timeout_s, cache=cache, **options)
    except BaseException:
        for backend in built.values():
            backend.close()
        raise
    return built


@contextmanager
def _progress_display(state: Progress, enabled: bool, console) -> Iterator[Callable[[Mapping, dict], None]]:
    lock = threading.Lock()
    if not enabled:

        def quiet(job, row) -> None:
            with lock:
                state.add(row)

        yield quiet
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import (
        Progress as Bar,
    )

    def label() -> str:
        c = state.counts
        return f"sweep · accepted {c.get('accepted', 0)} · rejected {c.get('rejected', 0)}" + "".join(
            f" · {name} {c[key]}"
            for key, name in (("timeout", "timeouts"), ("not_applicable", "not applicable"), ("error", "errors"))
            if c.get(key)
        )

    bar = Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("·"),
        TimeElapsedColumn(),
        TextColumn("· ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    with bar:
        task = bar.add_task(label(), total=state.total, completed=state.skipped)

        def show(job, row) -> None:
            with lock:
                state.add(row)
                bar.update(task, advance=1, description=label())

        yield show
