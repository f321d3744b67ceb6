"""Executors: run a function over JSON jobs, at most ``concurrency`` at a time per LLM endpoint.

- ``local`` (default): one process; jobs run in threads, at most ``concurrency`` at a time per
  LLM endpoint (an asyncio semaphore per endpoint in front of a thread pool). LLM calls are I/O
  bound; the backends are thread-safe (their counters and the cache are locked).
- ``process``: the same, with a pool of worker processes (for CPU-bound sweeps such as the
  ``expert`` policy); each worker builds its own backends on the shared response cache file.
- ``ray``: every job is a Ray task (``--ray-address`` for a cluster, else a local Ray
  instance); the same per-endpoint limit is kept by the driver. Workers write their attempt
  directory themselves, so DIR must be on a filesystem every node sees at the same path (trivially
  true on one machine; NFS or similar on a cluster) and ``autonesy-agent`` must be installed on
  every node. Each node answers from its own response cache (``$AUTONESY_LLM_CACHE``). Ray is an optional extra (``pip install "autonesy-agent[ray]"``).

Any module-level function of a JSON job can be dispatched with :func:`run_jobs` (training jobs
will use the same path). Plus the progress a sweep shows while its jobs run (:class:`Progress`, :func:`progress_display`).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from autonesy.graph.options import EXECUTORS
from autonesy.graph.results import EXPERT
from autonesy.graph.sweep.grid import SweepError, job_group
from autonesy.tools.process_lifetime import die_with_parent


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
            initializer=die_with_parent,  # started from this thread, which waits for the pool: killed with it
            initargs=(os.getpid(),),
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


RAY_AUTH_ADVICE = (
    "the cluster asks for Ray's token authentication (started with RAY_AUTH_MODE=token): set RAY_AUTH_MODE=token "
    "here too, with the cluster's token in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token "
    "(`ray get-auth-token` on the head node prints it)"
)


def connect_ray(ray: Any, address: str | None) -> None:
    """``ray.init``, with what Ray's C++ client writes to stderr held back until it is known to be
    useful: a cluster that refuses the connection (token authentication, nothing listening) is one
    ``SweepError`` line with the fix, not dozens of retry lines. Output of a good connection is replayed."""
    where = f" at {address}" if address else ""
    with tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
            failure: Exception | None = None
        except Exception as error:  # a cluster that cannot be reached or refuses us
            failure = error
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        held.seek(0)
        said = held.read(1 << 20).decode("utf-8", errors="replace")
    if failure is None:
        sys.stderr.write(said)
        return
    if (
        "InvalidAuthToken" in said
        or "InvalidAuthToken" in str(failure)
        or type(failure).__name__ == "AuthenticationError"
    ):
        raise SweepError(f"cannot connect to Ray{where}: {RAY_AUTH_ADVICE}") from None
    first = str(failure).strip().splitlines()[0] if str(failure).strip() else type(failure).__name__
    raise SweepError(
        f"cannot connect to Ray{where}: {first} (is `ray start --head` running there, and is the address "
        "the HOST:PORT its start-up printed?)"
    ) from None


def _run_ray(jobs, fn, args, concurrency, on_done, on_crash, address, num_cpus) -> None:
    try:
        import ray
    except ImportError:
        raise SweepError("--executor ray needs Ray: pip install 'autonesy-agent[ray]'") from None
    owns = not ray.is_initialized()
    if owns:
        connect_ray(ray, address)
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


@contextmanager
def progress_display(state: Progress, enabled: bool, console) -> Iterator[Callable[[Mapping, dict], None]]:
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
        before = f" · {state.skipped} done before" if state.skipped else ""  # a resumed sweep counts its new attempts
        return f"sweep{before} · accepted {c.get('accepted', 0)} · rejected {c.get('rejected', 0)}" + "".join(
            f" · {name} {c[key]}"
            for key, name in (
                ("infra_failed", "infra_failed"),
                ("timeout", "timeouts"),
                ("not_applicable", "not applicable"),
                ("error", "errors"),
            )
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
