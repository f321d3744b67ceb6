"""A clock for time limits that buy the same work on a loaded machine as on a quiet one.

A limit on the wall clock is a smaller budget while other work shares the cores: DCP-Bench's ground
truths, counted by two workers on two cores (load about 4), got half a core per racer, and a Steiner
certification that takes 244 s alone ran out of its 300 s — so whether a ground truth was scorable
depended on what else ran. The quiet clock runs at the wall clock's speed while this process's threads
and its children get all the CPU they ask for (up to the cores there are), and slower in proportion
while they get less; never slower than :data:`SLOWEST` of the wall clock, so a limit of t seconds
ends within t / SLOWEST seconds on the wall. Where /proc cannot be read (not Linux) it is the wall clock.

What asks for CPU: the threads of this process other than the one reading the clock, and its
children, that are runnable (state R) at either end of an interval. What they got: the CPU time of
all of them over the interval, from /proc.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

__all__ = ["SLOWEST", "QuietClock", "Sample"]

SLOWEST = 0.25  # the quiet clock runs at least this fast against the wall clock
Sample = tuple[float, dict[str, float], int]
"""(wall-clock seconds, the CPU seconds each of this process's threads and children has used so far, how many
of them ask for CPU); a task that ends between two readings loses its last interval's CPU (the clock is then slow)."""


class QuietClock:
    """Monotonic seconds, slowed while this process and its children are short of CPU; thread-safe.

    Only differences between two readings mean anything (like :func:`time.monotonic`).
    ``sample`` and ``cores`` are for tests (the machine's readings and size otherwise).
    """

    def __init__(self, sample: Callable[[], Sample] | None = None, cores: int | None = None):
        self._sample = sample or _proc_sample
        self._cores = cores or _cores()
        self._lock = threading.Lock()
        self._last: Sample | None = None
        self._elapsed = 0.0

    def now(self) -> float:
        """The quiet seconds so far (the interval since the last reading counted at its measured rate)."""
        with self._lock:
            wall, cpu, asking = self._sample()
            if self._last is not None:
                last_wall, last_cpu, last_asking = self._last
                interval = wall - last_wall
                if interval > 0:
                    wanted = min(self._cores, max(asking, last_asking)) * interval
                    got = sum(max(0.0, seconds - last_cpu.get(task, 0.0)) for task, seconds in cpu.items())
                    rate = 1.0 if wanted <= 0 else got / wanted
                    self._elapsed += interval * min(1.0, max(SLOWEST, rate))
            self._last = (wall, cpu, asking)
            return self._elapsed


def _cores() -> int:
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


def _proc_sample() -> Sample:
    """This process's threads and children, read from /proc; the wall clock alone where that fails."""
    wall = time.monotonic()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return wall, {"wall": wall}, 1  # every interval at full rate
    reader = threading.get_native_id()
    cpu: dict[str, float] = {}
    asking, children = 0, []
    for tid in tasks:
        try:
            state, seconds = _stat(f"/proc/self/task/{tid}/stat")
            with open(f"/proc/self/task/{tid}/children") as listed:
                children.extend(listed.read().split())
        except (OSError, ValueError, IndexError):
            continue  # a thread that has just ended
        cpu[tid] = seconds
        asking += state == "R" and int(tid) != reader
    for pid in children:
        try:
            state, seconds = _stat(f"/proc/{pid}/stat")
        except (OSError, ValueError, IndexError):
            continue  # a child that has just been reaped
        cpu[f"child {pid}"] = seconds
        asking += state == "R"
    return wall, cpu, asking
