"""The unit of work of a sweep: :func:`execute_attempt` — a pure function of its job (the attempt's
``RunConfig`` and the sweep directory) — runs (or resumes) ``run_attempt`` in ``DIR/attempts/<id>/``
and returns the attempt's row. Exceptions of the attempt are recorded in the attempt directory,
never raised. Cache keys carry the attempt id (:class:`SaltedBackend`): attempts never share
answers, so results do not depend on the order in which attempts ran; the id is a hash of the
attempt's settings, not of the sweep directory, so another sweep of the same attempt reads its
answers from the shared response cache."""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMResponse, backend_from_spec, shared_cache
from autonesy.graph.results import (
    ATTEMPTS_DIR,
    ERROR_FILE,
    EXPERT,
    NOT_APPLICABLE_FILE,
    TIMEOUT_FILE,
    TIMING_FILE,
    attempt_row,
)
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.rundir import SUMMARY_FILE, write_json
from autonesy.tasks.reference import NoReference
from autonesy.tools import safe_files
from autonesy.tools.process_lifetime import die_with_parent


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


def worker_backend(llm: str, timeout_s: float, max_tokens: int | None, cache: bool = True) -> ChatBackend:
    """One backend per LLM setting in this process, on the shared response cache (or none)."""
    key = (llm, timeout_s, max_tokens, cache)
    with _WORKER_LOCK:
        backend = _WORKER_BACKENDS.get(key)
        if backend is None:
            options = {} if max_tokens is None else {"max_tokens": max_tokens}
            backend = backend_from_spec(llm, timeout_s=timeout_s, cache=shared_cache() if cache else None, **options)
            if not _WORKER_BACKENDS:  # closed when this process ends: a pool or Ray worker, a bounded attempt
                multiprocessing.util.Finalize(None, close_worker_backends, exitpriority=10)
            _WORKER_BACKENDS[key] = backend
        return backend


def close_worker_backends() -> None:
    """Close the backends this process built for sweep workers (their HTTP clients and caches); runs
    when the process exits (registered by the first :func:`worker_backend`)."""
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
    config = RunConfig.from_dict(job["config"])
    start = time.perf_counter()
    try:
        backend = None
        if job["llm"] != EXPERT:
            backend = (backends or {}).get(job["llm"])
            if backend is None:
                backend = worker_backend(job["llm"], config.llm_timeout_s, config.max_tokens, config.cache)
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


def _attempt_in_child(job: Mapping[str, Any], out: str, parent: int) -> None:
    """:func:`execute_attempt` in a process that dies with the sweep however the sweep dies (its thread waits for it)."""
    die_with_parent(parent)
    execute_attempt(job, out)


def execute_bounded_attempt(job: Mapping[str, Any], out: str | Path, limit_s: float) -> dict[str, Any]:
    """:func:`execute_attempt` in a child process stopped after ``limit_s`` wall seconds; a stopped
    attempt is recorded in ``timeout.json`` (status ``timeout``). Threads cannot be stopped, and an
    attempt can spend minutes in a native counter or compiler, so the bound needs a process."""
    run_dir = Path(out) / ATTEMPTS_DIR / job["attempt_id"]
    safe_files.make_dirs(run_dir, root=out)
    safe_files.remove(run_dir / TIMEOUT_FILE, root=out)
    child = multiprocessing.get_context("spawn").Process(
        target=_attempt_in_child, args=(dict(job), str(out), os.getpid()), daemon=True
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
