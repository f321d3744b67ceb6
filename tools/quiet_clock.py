"""A clock for time limits that buy the same work on a loaded machine as on a quiet one.

A limit on the wall clock is a smaller budget while other work shares the cores: DCP-Bench's ground
truths, counted by two workers on two cores (load about 4), got half a core per racer, and a Steiner
certification that takes 244 s alone ran out of its 300 s — so whether a ground truth was scorable
depended on what else ran. A quiet clock watches the tasks of one piece of work (the thread that reads
it, the children and helper threads it is told about): it runs at the wall clock's speed while they
get all the CPU they ask for (up to the cores there are), and slower in proportion while they get less
— whatever takes the CPU from them: other programs, or other threads of this process with their own
children. Never slower than :data:`SLOWEST` of the wall clock, so a limit of t seconds ends within
t / SLOWEST seconds on the wall. Where /proc cannot be read (not Linux) it is the wall clock.

Who asks for CPU: the watched children and threads that are runnable (state R) at either end of an
interval, and the reading thread when it used a tenth of the interval or more (work between readings).
What they got: their CPU time over the interval, from /proc. Each thread has its own clock
(:func:`current`): the counts of a sweep's worker threads are one another's load.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

__all__ = ["SLOWEST", "QuietClock", "Sample", "available_cores", "current"]

SLOWEST = 0.25  # a quiet clock runs at least this fast against the wall clock
READER_WORKS = 0.1  # the reading thread asks for CPU when it used this share of an interval
Sample = tuple[float, dict[str, float], int]
"""(wall-clock seconds, the CPU seconds each watched task has used so far, how many of them ask for CPU);
a task that ends between two readings loses its last interval's CPU (the clock is then slow)."""


class QuietClock:
    """Monotonic seconds, slowed while the watched tasks are short of CPU; thread-safe.

    Only differences between two readings mean anything (like :func:`time.monotonic`). The thread
    that creates it is its reader; :meth:`watch` adds a child process or a helper thread.
    ``sample`` and ``cores`` are for tests (the machine's readings and size otherwise).
    """

    def __init__(self, sample: Callable[[], Sample] | None = None, cores: int | None = None):
        self._sample = sample or self._read_proc
        self._cores = cores or available_cores()
        self._reader = threading.get_native_id()
        self._children: set[int] = set()
        self._threads: set[int] = set()
        self._lock = threading.Lock()
        self._last: Sample | None = None
        self._elapsed = 0.0

    def watch(self, *, child: int | None = None, thread: int | None = None) -> None:
        """Count a child process (pid) or a helper thread (native id) among the tasks asking for CPU."""
        with self._lock:
            if child is not None:
                self._children.add(child)
            if thread is not None:
                self._threads.add(thread)

    def forget(self, *, child: int | None = None, thread: int | None = None) -> None:
        """Stop watching a child or thread (it has ended)."""
        with self._lock:
            if child is not None:
                self._children.discard(child)
            if thread is not None:
                self._threads.discard(thread)

    def now(self) -> float:
        """The quiet seconds so far (the interval since the last reading counted at its measured rate)."""
        with self._lock:
            wall, cpu, asking = self._sample()
            if self._last is not None:
                last_wall, last_cpu, last_asking = self._last
                interval = wall - last_wall
                if interval > 0:
                    got = {task: max(0.0, seconds - last_cpu.get(task, 0.0)) for task, seconds in cpu.items()}
                    asked = max(asking, last_asking) + (got.get("reader", 0.0) >= READER_WORKS * interval)
                    wanted = min(self._cores, asked) * interval
                    rate = 1.0 if wanted <= 0 else sum(got.values()) / wanted
                    self._elapsed += interval * min(1.0, max(SLOWEST, rate))
            self._last = (wall, cpu, asking)
            return self._elapsed

    def _read_proc(self) -> Sample:
        """The watched tasks, read from /proc (the reading thread's CPU as "reader", never asking here)."""
        wall = time.monotonic()
        try:
            _, reader = _stat(f"/proc/self/task/{self._reader}/stat")
        except (OSError, ValueError, IndexError):
            return wall, {"wall": wall}, 1  # every interval at full rate
        cpu, asking = {"reader": reader}, 0
        paths = [(f"thread {t}", f"/proc/self/task/{t}/stat") for t in self._threads]
        paths += [(f"child {pid}", f"/proc/{pid}/stat") for pid in self._children]
        for task, path in paths:
            try:
                state, cpu[task] = _stat(path)
            except (OSError, ValueError, IndexError):
                continue  # a task that has just ended
            asking += state == "R"
        return wall, cpu, asking


_local = threading.local()


def current() -> QuietClock:
    """The calling thread's quiet clock (made on first use)."""
    clock = getattr(_local, "clock", None)
    if clock is None:
        clock = _local.clock = QuietClock()
    return clock


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(path: str) -> tuple[str, float]:
    """A task's state letter and CPU seconds (utime + stime) from its /proc stat file."""
    with open(path) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # from field 3 (state) on: utime and stime are 14, 15
    return fields[0], (int(fields[11]) + int(fields[12])) / _TICKS
