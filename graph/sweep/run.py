"""``run_sweep``: run (or resume) a grid into a sweep directory and rebuild its results table.

**Resume**: an attempt that ended ``accepted`` or ``rejected`` is finished and never rerun; any
other attempt is (re)started, and ``run_attempt`` itself resumes it from its LangGraph checkpoint:
one that ended ``infra_failed`` (the endpoint failed past its retries) retries the failed call. LLM
answers already received are in the shared response cache, so a restarted sweep repeats no LLM
call that had finished. The results table is always rebuilt from the attempt directories (never
appended), so a restart yields no duplicated and no missing rows. An attempt that raised (a bug, a
sandbox failure) gets status ``error`` and ``error.json``; the next run retries it.

**Plan** (``sweep --dry-run``, :func:`plan_sweep`): the attempts a run would start or retry, an upper
bound of its LLM calls (each attempt: one formalization, every repair round and every semantic
round) and of their tokens; it runs and writes nothing.

Ctrl-C stops starting new attempts; attempts already running finish first (a second Ctrl-C
aborts the wait — interrupted attempts resume on the next run).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError, LLMResponse, backend_from_spec, shared_cache
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.options import EXECUTORS
from autonesy.graph.results import (
    ATTEMPTS_DIR,
    ERROR_FILE,
    EXPERT,
    JOB_FILE,
    RESULTS_CSV,
    RESULTS_JSONL,
    RESUME_STATES,
    SWEEP_FILE,
    attempt_row,
    collect_rows,
    resume_state,
    write_results,
)
from autonesy.graph.run import default_decoding
from autonesy.graph.rundir import read_json, write_json
from autonesy.graph.score_seal import rescore_untrusted
from autonesy.graph.sweep.executors import Progress, progress_display, run_jobs
from autonesy.graph.sweep.grid import SweepError, SweepSpec, expand, left_out_of, public_job
from autonesy.graph.sweep.worker import SaltedBackend, execute_attempt, execute_bounded_attempt
from autonesy.tasks.registry import load_task
from autonesy.tasks.task import TaskError
from autonesy.tools import safe_files
from autonesy.tools.llm_spec import LLMSpec, redact_spec
from autonesy.tools.terminal_text import terminal_text

LOCK_FILE = ".sweep.lock"
CHARS_PER_TOKEN = 4  # the usual estimate for English text and code


def resume_states(
    jobs: list[dict[str, Any]], out: Path, limit_s: float | None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The jobs a run into ``out`` starts, retries or resumes, and how many attempts it reuses, retries, resumes or
    starts (``RESUME_STATES``)."""
    states = [resume_state(out / ATTEMPTS_DIR / job["attempt_id"], limit_s) for job in jobs]
    counts = {name: states.count(name) for name in RESUME_STATES}
    return [job for job, state in zip(jobs, states) if state != "done"], counts


def resume_text(counts: Mapping[str, int]) -> str:
    """The line that says what a resumed sweep reuses and what it runs again."""
    return (
        f"resume: {counts['done']} done (reused), {counts['infra_failed']} infra_failed retried, "
        f"{counts['error']} errors retried, {counts['unfinished']} interrupted resumed, {counts['new']} new"
    )


@dataclass
class SweepPlan:
    """What a sweep run would do (``--dry-run``): nothing is run or written."""

    attempts: int  # in the grid (after --limit)
    resume: dict[str, int]  # the attempts by what a run would do with them (RESUME_STATES)
    to_run: int  # started, retried or resumed
    llm_calls_max: int  # each attempt to run: 1 + max repairs + semantic rounds (no answer from the cache counted)
    prompt_tokens: int  # about: each call's prompt as long as the attempt's first prompt, 4 characters a token
    completion_tokens_max: int  # each call up to its token budget
    cached_first_answers: int = 0  # attempts to run whose first answer the response cache already holds

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``sweep --dry-run --json`` prints it."""
        return asdict(self)

    def text(self) -> str:
        """The plan for a person."""
        return (
            f"{self.attempts} attempts in the grid; {self.to_run} to run ({resume_text(self.resume)})\n"
            f"LLM calls: at most {self.llm_calls_max:,} (each attempt: 1 formalization + every repair and "
            f"semantic round; answers in the response cache are free)\n"
            f"tokens: about {self.prompt_tokens:,} prompt (at {CHARS_PER_TOKEN} characters a token) + at most "
            f"{self.completion_tokens_max:,} completion\n"
            f"response cache: holds the first answer of {self.cached_first_answers:,} of the {self.to_run:,} attempts "
            "to run (they start without a call; later rounds may be cached too)\n"
            "dry run: nothing was run or written"
        )


def plan_sweep(spec: SweepSpec, out: str | Path) -> SweepPlan:
    """The attempts a run of ``spec`` into ``out`` would start or retry, what they may cost, and how many of their
    first answers the response cache already holds (see the module docstring); reads ``out`` when it exists and the
    cache, writes nothing, sends nothing."""
    jobs = expand(spec)
    out = Path(out)
    to_run, resume = resume_states(jobs, out, spec.attempt_time_limit_s)
    tasks: dict[str, Any] = {}
    calls = prompt_tokens = completion_tokens = cached = 0
    try:
        backends = _local_backends(to_run, out, spec, {})
    except LLMError as error:
        raise SweepError(str(error)) from None
    try:
        for job in to_run:
            if job["llm"] == EXPERT:
                continue
            config = job["config"]
            backend = backends[job["llm"]]
            probe = CacheProbe(backend, f"attempt:{job['attempt_id']}")
            decoding = config.get("decoding") or default_decoding(LLMSpec.parse(job["llm"]))
            policy = make_policy(config["policy"], probe, max_repairs=config["max_repairs"], decoding=decoding)
            rounds = 1 + policy.max_repairs + policy.semantic_rounds
            if config["task"] not in tasks:
                tasks[config["task"]] = _task_or_error(config["task"])
            attempt = AttemptSpec(tasks[config["task"]], config["format"], config["detail"], config["prompt"])
            prompt = policy.formalizer_prompt(attempt)
            policy.formalize(attempt)  # through the probe: looked up in the cache, never sent
            cached += probe.hits
            budget = int((getattr(backend, "default_params", None) or {}).get("max_tokens") or 0)
            calls += rounds
            prompt_tokens += rounds * sum(len(m["content"]) for m in prompt.messages()) // CHARS_PER_TOKEN
            completion_tokens += rounds * budget
    finally:
        for backend in backends.values():
            backend.close()
    return SweepPlan(len(jobs), resume, len(to_run), calls, prompt_tokens, completion_tokens, cached)


class CacheProbe(SaltedBackend):
    """The attempt's backend as a dry run sees it: a call is looked up in the response cache under the key the run
    would use (the attempt's salt, the request as sent) and never sent; ``hits`` counts the answers found."""

    def __init__(self, inner: ChatBackend, salt: str) -> None:
        super().__init__(inner, salt)
        self.hits = 0

    def complete(self, messages, *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """Look the call up; raise (the policy records it as a failed call), as nothing may be sent."""
        cache = getattr(self.inner, "cache", None)
        request_key = getattr(self.inner, "request_key", None)
        if cache is not None and request_key is not None:
            key = request_key(messages, cache_salt=f"{self.salt}|{cache_salt}", **params)
            self.hits += cache.get(self.inner.endpoint, self.inner.model, key) is not None
        raise LLMError("other", "dry run: nothing is sent")


@dataclass
class SweepResult:
    """What a sweep run returns: the rows, what this run did, how long it took and the benchmark records left out."""

    out: Path
    rows: list[dict[str, Any]]
    progress: Progress
    seconds: float
    left_out: dict[str, dict[str, str]] = field(default_factory=dict)  # adapter spec → {record: why not a task}
    resume: dict[str, int] = field(default_factory=dict)  # the attempts by what this run did with them (RESUME_STATES)
    unscorable: dict[str, dict[str, str]] = field(default_factory=dict)  # adapter spec → {record: why no count}

    @property
    def usage(self) -> dict[str, int]:
        """LLM usage over the whole table: calls sent and answers from the response cache; tokens spent now and what
        the study would cost without the cache (the cached answers at what they cost when they were made)."""
        return study_usage(self.rows)

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
            "resume": self.resume,
            "counts": self.counts,
            "usage": self.usage,
            "seconds": round(self.seconds, 3),
            "results": [str(self.out / RESULTS_JSONL), str(self.out / RESULTS_CSV)],
            "left_out": self.left_out,
            "unscorable": self.unscorable,
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


def _record_grid(
    out: Path,
    spec: SweepSpec,
    jobs: list[dict[str, Any]],
    left_out: dict[str, dict[str, str]],
    unscorable: dict[str, dict[str, str]],
) -> None:
    path = out / SWEEP_FILE
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("grids"), list):
        data = {"grids": []}  # none yet, or damaged: the grids run from now on are recorded
    data["grids"] = [entry for entry in data["grids"] if isinstance(entry, dict)]
    grid = {
        k: v for k, v in spec.to_dict().items() if k not in ("llm_timeout_s", "attempt_time_limit_s", "data", "cache")
    }
    grid["llms"] = [redact_spec(llm) for llm in grid["llms"]]
    entry = next((e for e in data["grids"] if e.get("grid") == grid), None)
    if entry is None:
        entry = {"grid": grid, "attempts": len(jobs), "first_run": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        data["grids"].append(entry)
    entry["left_out"] = left_out
    entry["unscorable"] = unscorable
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
    left_out, unscorable = left_out_of(spec), left_out_of(spec, "unscorable")
    if progress:
        listed = [(item, reasons, "left out") for item, reasons in left_out.items()]
        listed += [(item, reasons, "unscorable (no exact ground-truth count)") for item, reasons in unscorable.items()]
        for item, reasons, what in listed:
            lines = [f"{item}: {len(reasons)} {what} (also in {out / SWEEP_FILE}):"]
            lines += [f"  {key}: {reason}" for key, reason in reasons.items()]
            if console is not None:
                console.print(terminal_text("\n".join(lines)), highlight=False, markup=False, emoji=False)
            else:
                print(terminal_text("\n".join(lines)), file=sys.stderr)
    with _exclusive(out):
        safe_files.make_dirs(out / ATTEMPTS_DIR, root=out)  # a received sweep's attempts/ may be a link: refused
        _record_grid(out, spec, jobs, left_out, unscorable)
        pending, resume = resume_states(jobs, out, spec.attempt_time_limit_s)
        if progress and resume["new"] < len(jobs):  # a sweep run before: say what is reused and what runs again
            line = resume_text(resume)
            if console is not None:
                console.print(line, highlight=False, markup=False)
            else:
                print(line, file=sys.stderr)
        unfinished = {job["attempt_id"] for job in pending}
        tasks: dict[str, Any] = {}
        reused = [job for job in jobs if job["attempt_id"] not in unfinished]
        rescored = rescore_untrusted(out, reused, _task_or_error)
        if progress and rescored:
            line = f"rescored {rescored} reused attempts: their score was not sealed by you for the formula on disk"
            if console is not None:
                console.print(line, highlight=False, markup=False)
            else:
                print(line, file=sys.stderr)
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
            with progress_display(state, progress, console) as on_done:
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
            rows = collect_rows(out)
            _record_usage(out, rows)
            write_results(out, rows)
    return SweepResult(out, rows, state, time.perf_counter() - start, left_out, resume, unscorable)


def study_usage(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Summed LLM usage of results rows (see ``SweepResult.usage``); rows written before cached usage was recorded
    count their cached answers' tokens as 0."""

    def total(name: str) -> int:
        return sum(int(row.get(name) or 0) for row in rows)

    spent = total("prompt_tokens") + total("completion_tokens")
    cached = total("cached_prompt_tokens") + total("cached_completion_tokens")
    return {
        "llm_calls": total("llm_calls"),
        "cached_answers": total("cached_calls"),
        "tokens_spent": spent,
        "tokens_would_cost": spent + cached,
    }


def _record_usage(out: Path, rows: list[dict[str, Any]]) -> None:
    """The table's usage in ``sweep.json`` (how many answers came from the cache), written before results.jsonl: a
    sweep.json newer than the table reads as a sweep still running."""
    path = out / SWEEP_FILE
    data = read_json(path, root=out)
    if isinstance(data, dict):
        write_json(path, {**data, "usage": study_usage(rows)}, root=out)


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
    cache = shared_cache() if spec.cache else None
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
