"""One sandbox serves several programs in turn (``prewarm=True``): what a program leaves behind (files,
processes, sockets, its process's state, changed modules) is gone for the next, each job's output is
its own, and an abnormal outcome retires the sandbox. As root the file runs again as an unprivileged
user (:func:`test_reuse_holds_for_an_unprivileged_caller`), since the two isolate differently."""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from pathlib import Path

import pytest
from sandbox_probe import sandbox_processes
from unprivileged import NESTED_RUN, run_file_as_user

from autonesy.tools import sandbox
from autonesy.tools.sandbox import SandboxLimits, run_program

QUICK = SandboxLimits(wall_seconds=3.0, cpu_seconds=3.0, memory_bytes=512 << 20)
ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def fresh_pool():
    sandbox.shutdown()
    yield
    sandbox.shutdown()


@pytest.fixture
def no_audit_hook(monkeypatch):
    """The OS layer alone: a program may then leave state behind without a violation (which would retire
    the sandbox and hide what the cleanup between jobs does)."""
    monkeypatch.setattr(sandbox, "AUDIT_HOOK", False)


def run(code: str, preload: tuple[str, ...] = (), **kwargs) -> sandbox.SandboxResult:
    kwargs.setdefault("limits", QUICK)
    return run_program(code, preload=preload, prewarm=True, **kwargs)


def in_turn(first: str, second: str, preload: tuple[str, ...] = ()) -> sandbox.SandboxResult:
    """Run two programs; check that the same sandbox ran both; the second's result."""
    one, two = run(first, preload), run(second, preload)
    assert one.ok, one.message
    assert two.ok, two.message
    assert two.isolation["sandbox"] == one.isolation["sandbox"]
    assert two.isolation["job"] == one.isolation["job"] + 1
    return two


def test_two_programs_run_in_one_sandbox():
    one, two = run("result = 1"), run("result = 2")
    assert (one.result, two.result) == (1, 2)
    assert one.isolation["sandbox"] == two.isolation["sandbox"]
    assert (one.isolation["job"], two.isolation["job"]) == (1, 2)
    assert one.isolation["program_uid"] == two.isolation["program_uid"]
    assert len(sandbox_processes()) == 2  # bubblewrap and its harness, idle in the pool: no program process left


def test_a_sandbox_is_retired_after_its_share_of_jobs(monkeypatch):
    monkeypatch.setattr(sandbox, "SANDBOX_JOBS", 2)
    ids = [run("result = 1").isolation["sandbox"] for _ in range(3)]
    assert ids[0] == ids[1] != ids[2]


def test_an_idle_sandbox_told_to_stop_exits_by_itself():
    """So the CPU it used is reaped (and counted, ``os.times``) rather than lost with a killed harness."""
    assert run("result = 1").ok
    (idle,) = sandbox._POOL.spares[()]
    sandbox.shutdown()
    assert idle.closed and idle.proc.returncode == 0  # killed, it would be -9


def test_a_caller_waits_for_a_busy_sandbox_rather_than_start_another(monkeypatch):
    monkeypatch.setattr(sandbox, "SANDBOXES_PER_SET", 1)
    monkeypatch.setattr(sandbox, "WAIT_FOR_SANDBOX", 30.0)
    results: list[sandbox.SandboxResult] = []
    threads = [threading.Thread(target=lambda: results.append(run("import time\ntime.sleep(0.3)\nresult = 1")))]
    threads += [threading.Thread(target=lambda: results.append(run("result = 2")))]
    for thread in threads:
        thread.start()
        time.sleep(0.1)
    for thread in threads:
        thread.join()
    assert all(result.ok for result in results), [result.message for result in results]
    assert len({result.isolation["sandbox"] for result in results}) == 1


def test_a_sandbox_past_its_age_is_not_taken_from_the_pool(monkeypatch):
    first = run("result = 1")
    monkeypatch.setattr(sandbox, "SANDBOX_SECONDS", 0.0)
    second = run("result = 1")
    assert second.ok and second.isolation["sandbox"] != first.isolation["sandbox"]


ABNORMAL = {
    "timeout": "while True:\n    pass",
    "forbidden": "import socket\nsocket.create_connection(('127.0.0.1', 80))",
    "resource": "print('x' * (2 << 20))",
    "too_large": "result = 'x' * (17 << 20)",
}


@pytest.mark.parametrize("kind", sorted(ABNORMAL))
def test_an_abnormal_outcome_retires_the_sandbox(kind: str):
    before = run("result = 1")
    failed = run(ABNORMAL[kind])
    after = run("result = 1")
    assert failed.error_kind == kind, failed.message
    assert failed.isolation.get("sandbox") in (None, before.isolation["sandbox"])
    assert after.ok and after.isolation["sandbox"] != before.isolation["sandbox"]
    assert after.isolation["job"] == 1


def test_an_error_the_program_raises_keeps_the_sandbox():
    before, failed, after = run("result = 1"), run("result = 1 / 0"), run("result = 1")
    assert failed.error_kind == "runtime"
    assert before.isolation["sandbox"] == after.isolation["sandbox"]
    assert after.isolation["job"] == 3


LEAVE_FILES = """
import os
os.makedirs('a/b/c')
for d in ('a', 'a/b', 'a/b/c'):
    open(d + '/f', 'w').write('x')
os.chmod('a/b/c/f', 0)
os.chmod('a/b/c', 0)
os.chmod('a/b', 0o100)
os.chmod('a', 0o500)
os.symlink('/usr', 'to-usr')
open('plain', 'w').write('y')
os.link('plain', 'hard')
os.chmod('plain', 0)
os.mkdir('deep')
os.chdir('deep')
for _ in range(300):
    os.mkdir('d')
    os.chdir('d')
os.chdir('/sandbox')
os.chmod('/sandbox', 0o500)
result = sorted(os.listdir('/sandbox'))
"""


def test_files_left_behind_are_gone_for_the_next_program():
    second = in_turn(
        LEAVE_FILES,
        "import os\nresult = [os.listdir('.'), oct(os.stat('.').st_mode & 0o777), os.access('.', os.W_OK)]",
    )
    assert second.result == [[], "0o700", True]


def test_a_socket_listener_is_gone_for_the_next_program(no_audit_hook):
    listen = (
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.bind('\\0autonesy-reuse')\ns.listen()\n"
        "p = socket.socket(socket.AF_UNIX)\np.bind('/sandbox/sock')\np.listen()\nresult = 1"
    )
    probe = (
        "import os, socket\nc = socket.socket(socket.AF_UNIX)\n"
        "try:\n    c.connect('\\0autonesy-reuse')\n    result = 'connected'\n"
        "except ConnectionRefusedError:\n    s = socket.socket(socket.AF_UNIX)\n    s.bind('\\0autonesy-reuse')\n"
        "    result = ['refused', os.listdir('.')]"
    )
    assert in_turn(listen, probe).result == ["refused", []]


PROCESSES = "import os\nresult = sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid())"


def test_processes_and_threads_are_gone_for_the_next_program(no_audit_hook):
    leave = (
        "import os, threading, time\nrefused = 0\n"
        "for start in (os.fork, lambda: os.posix_spawn('/bin/sleep', ['sleep', '300'], {})):\n"
        "    try:\n        pid = start()\n        if pid == 0:\n            time.sleep(300)\n"
        "    except OSError:\n        refused += 1\n"
        "threading.Thread(target=time.sleep, args=(300,)).start()\n"
        "threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\nresult = refused"
    )
    first = run(leave)
    assert first.ok and first.result == 2, first.message
    second = run(PROCESSES)
    assert second.isolation["sandbox"] == first.isolation["sandbox"]
    assert second.result == [1]  # the harness only


PROCESS_STATE = """
import os, resource, signal, sys, builtins, itertools, json, sympy
state = [
    resource.getrlimit(resource.RLIMIT_NOFILE), os.getcwd(), sorted(os.environ), os.umask(0o022),
    signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, sys.getrecursionlimit(), len('abc'),
    sys.modules['json'] is json, itertools.chain.__name__, sympy.And.__name__, repr(sympy.Symbol('x') & True),
]
"""
CHANGE_STATE = """
resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
os.mkdir('elsewhere'); os.chdir('elsewhere'); os.environ['LEFT'] = 'behind'; os.putenv('PUT', 'env'); os.umask(0o777)
signal.signal(signal.SIGTERM, signal.SIG_IGN); sys.setrecursionlimit(60)
builtins.len = lambda obj: 42; sys.modules['json'] = None; itertools.chain = None
sympy.And = None; sympy.Symbol.__and__ = lambda self, other: 'patched'
"""


def test_a_programs_process_state_and_module_changes_are_gone_for_the_next(no_audit_hook):
    preload = ("itertools", "json", "sympy")
    first = run(PROCESS_STATE + CHANGE_STATE + "result = state", preload)
    second = run(PROCESS_STATE + "result = state", preload)
    assert first.ok and second.ok, (first.message, second.message)
    assert second.isolation["sandbox"] == first.isolation["sandbox"]
    assert second.result == first.result  # what the first saw before it changed anything


def test_each_program_gets_only_its_own_output():
    first = run("import os, sys\nos.write(1, b'1' * 300_000)\nprint('one', end='')\nsys.stderr.write('e1')\nresult = 1")
    second = run("print('two')\nresult = 2")
    assert second.isolation["sandbox"] == first.isolation["sandbox"]
    assert first.stdout == "1" * 300_000 + "one" and first.stderr == "e1"
    assert (second.stdout, second.stderr) == ("two\n", "")


def test_the_working_directory_is_emptied_whatever_its_modes(tmp_path: Path, monkeypatch):
    """The harness's cleanup on its own: never follows a link out, opens ``chmod 000`` directories,
    and goes deeper than Python's recursion limit."""
    spec = importlib.util.spec_from_file_location("sandbox_harness_under_test", sandbox.HARNESS)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("alive")
    work = tmp_path / "work"
    deep = work / "deep"
    deep.mkdir(parents=True)
    os.symlink(outside, work / "link")
    locked = work / "locked" / "inner"
    locked.mkdir(parents=True)
    (locked / "file").write_text("x")
    locked.chmod(0)
    (work / "locked").chmod(0)
    fd = os.open(deep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(1200):  # deeper than the recursion limit
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    monkeypatch.setattr(harness, "WORKDIR", str(work))
    harness._empty_workdir()
    assert os.listdir(work) == []
    assert (outside / "canary").read_text() == "alive"


@pytest.mark.skipif(not ROOT, reason="already unprivileged: the cases above ran as this user")
@pytest.mark.skipif(bool(os.environ.get(NESTED_RUN)), reason="nested run")
def test_reuse_holds_for_an_unprivileged_caller(tmp_path: Path):
    done = run_file_as_user(__file__, tmp_path, "unprivileged_caller")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
