"""The quiet clock: wall-clock speed while its tasks get the CPU they ask for, slower in proportion when not."""

import os
import signal
import time

import pytest
from pysat.examples.genhard import PHP

from autonesy.tools.cnf import CNF
from autonesy.tools.counting import CountTimedOut, count_models
from autonesy.tools.quiet_clock import SLOWEST, QuietClock, _stat


class Readings:
    """Samples handed to the clock one by one: (wall, {task: CPU seconds}, tasks asking)."""

    def __init__(self, *samples):
        self.samples = list(samples)

    def __call__(self):
        return self.samples.pop(0)


def _elapsed(clock: QuietClock, readings: int) -> float:
    start = clock.now()
    for _ in range(readings - 1):
        end = clock.now()
    return end - start


def test_tasks_getting_what_they_ask_for_keep_the_wall_clocks_pace():
    # Two tasks ask on two cores and get 2 s of CPU in 1 s: a full rate.
    clock = QuietClock(Readings((0.0, {"a": 0.0, "b": 0.0}, 2), (1.0, {"a": 1.0, "b": 1.0}, 2)), cores=2)
    assert _elapsed(clock, 2) == pytest.approx(1.0)


def test_tasks_getting_half_of_what_they_ask_for_halve_the_pace():
    clock = QuietClock(Readings((0.0, {"a": 0.0, "b": 0.0}, 2), (2.0, {"a": 1.0, "b": 1.0}, 2)), cores=2)
    assert _elapsed(clock, 2) == pytest.approx(1.0)


def test_more_tasks_than_cores_ask_only_for_the_cores():
    # Three asking on two cores, 2 s of CPU in 1 s between them: all the machine has, a full rate.
    readings = Readings((0.0, {"a": 0.0, "b": 0.0, "c": 0.0}, 3), (1.0, {"a": 0.7, "b": 0.7, "c": 0.6}, 3))
    assert _elapsed(QuietClock(readings, cores=2), 2) == pytest.approx(1.0)


def test_nothing_asking_keeps_the_wall_clocks_pace():
    clock = QuietClock(Readings((5.0, {"a": 1.0}, 0), (8.0, {"a": 1.0}, 0)), cores=2)
    assert _elapsed(clock, 2) == pytest.approx(3.0)


def test_a_starved_task_slows_the_clock_no_further_than_its_floor():
    clock = QuietClock(Readings((0.0, {"a": 0.0}, 1), (10.0, {"a": 0.1}, 1)), cores=1)
    assert _elapsed(clock, 2) == pytest.approx(10.0 * SLOWEST)


def test_a_task_that_ends_does_not_run_the_clock_backwards():
    # "b" (0.9 s of CPU) has ended by the second reading; "a" got its full second.
    clock = QuietClock(Readings((0.0, {"a": 0.0, "b": 0.9}, 2), (1.0, {"a": 1.0}, 1), (2.0, {"a": 2.0}, 1)), cores=2)
    assert 0.5 * 1 + 1.0 <= _elapsed(clock, 3) <= 2.0


def test_the_reader_working_between_readings_asks_for_cpu():
    # The reading thread used the whole second itself, and one watched child got half a second: two asked.
    readings = Readings((0.0, {"reader": 0.0, "a": 0.0}, 1), (1.0, {"reader": 1.0, "a": 0.5}, 1))
    assert _elapsed(QuietClock(readings, cores=2), 2) == pytest.approx(0.75)


def test_on_this_machine_a_child_the_clock_does_not_watch_is_load():
    """One core, two busy children: the watched one gets about half of it, and the clock advances by the
    CPU it gets (whatever else the machine runs), unless it is starved below the floor. The other child
    is this process's too (another thread's count, say), but not this clock's: it is load."""
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    watched, other = _busy_child(), _busy_child()
    try:
        clock = QuietClock()
        clock.watch(child=watched)
        start_quiet, start_wall, start_cpu = clock.now(), time.monotonic(), _cpu(watched)
        while time.monotonic() - start_wall < 1.5:
            time.sleep(0.1)
            clock.now()
        quiet, wall, cpu = clock.now() - start_quiet, time.monotonic() - start_wall, _cpu(watched) - start_cpu
    finally:
        os.sched_setaffinity(0, affinity)
        for pid in (watched, other):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert quiet == pytest.approx(max(cpu, SLOWEST * wall), abs=0.25)
    assert quiet < 0.8 * wall


def _busy_child() -> int:
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    return pid


def _cpu(pid: int) -> float:
    return _stat(f"/proc/{pid}/stat")[1]


def test_a_count_on_a_shared_core_runs_longer_on_the_wall_clock():
    """This process and two busy processes that are not its children share one core: Ganak's child gets
    about a third of it, so its 1 s limit takes about 3 s on the wall (at most 1 / SLOWEST = 4 s, plus set-up);
    on the wall clock it would stop after 1 s."""
    formula = PHP(11)  # unsatisfiable, far beyond Ganak's second
    pigeonhole = CNF(formula.nv, tuple(tuple(c) for c in formula.clauses))
    affinity = os.sched_getaffinity(0)
    core = {min(affinity)}
    hogs = [_busy_orphan(core) for _ in range(2)]
    try:
        os.sched_setaffinity(0, core)
        start = time.monotonic()
        with pytest.raises(CountTimedOut):
            count_models(pigeonhole, "ganak", time_limit_s=1.0)
        wall = time.monotonic() - start
    finally:
        os.sched_setaffinity(0, affinity)
        for hog in hogs:
            os.kill(hog, signal.SIGKILL)
    assert 1.8 < wall < 1.0 / SLOWEST + 3.0


def _busy_orphan(core: set[int]) -> int:
    """A busy process pinned to ``core`` whose parent has left (not a child of this one); its pid."""
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read_end)
        hog = os.fork()
        if hog == 0:
            os.sched_setaffinity(0, core)
            while True:
                pass
        os.write(write_end, str(hog).encode())
        os._exit(0)
    os.close(write_end)
    hog = int(os.read(read_end, 32))
    os.close(read_end)
    os.waitpid(middle, 0)
    return hog


def test_an_sdd_count_on_a_shared_core_gets_its_limit_in_cpu_time():
    """The SDD child measures its own budget on its CPU time: on a core shared with three busy processes
    it gets about a quarter of it, so a compilation that needs c seconds of CPU takes about 4c on the wall;
    with a limit of 3c + 0.3 s it still finishes (on the wall clock its budget would have run out)."""
    import random

    from autonesy.tools.compile import compile_to_sdd

    rng = random.Random(7)
    clauses = tuple(tuple(rng.choice((1, -1)) * v for v in rng.sample(range(1, 26), 3)) for _ in range(75))
    cnf = CNF(25, clauses)
    start = time.thread_time()
    compile_to_sdd(cnf, time_limit_s=60)
    cpu = time.thread_time() - start
    expected = count_models(cnf, "enumeration").value
    affinity = os.sched_getaffinity(0)
    core = {min(affinity)}
    hogs = [_busy_orphan(core) for _ in range(3)]
    try:
        os.sched_setaffinity(0, core)
        counted = count_models(cnf, "sdd", time_limit_s=3 * cpu + 0.3)
    finally:
        os.sched_setaffinity(0, affinity)
        for hog in hogs:
            os.kill(hog, signal.SIGKILL)
    assert counted.value == expected
