"""The sandbox against a corpus of hostile programs: each is contained with a clear error kind,
nothing outside the sandbox changes, and the caller survives (docs/architecture.md §10)."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from pathlib import Path

import pytest
from sandbox_probe import sandbox_processes

from autonesy.tools import sandbox
from autonesy.tools.sandbox import SandboxLimits, run_program

QUICK = SandboxLimits(wall_seconds=2.0, cpu_seconds=2.0, memory_bytes=512 << 20)
ROOT = os.geteuid() == 0


@pytest.fixture(autouse=True)
def no_spares():
    """Sandboxes other tests started ahead of need would count as left-over processes."""
    sandbox.shutdown()


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A file outside the sandbox, in a directory anyone may read (as the sandbox's uid can)."""
    os.chmod(tmp_path, 0o755)
    path = tmp_path / "canary.txt"
    path.write_text("alive")
    path.chmod(0o644)
    return path


def run(code: str, **kwargs) -> sandbox.SandboxResult:
    kwargs.setdefault("limits", QUICK)
    result = run_program(code, **kwargs)
    assert os.getpid() > 0  # the caller is alive and well
    return result


# --- ordinary programs ---------------------------------------------------------------------------


def test_program_gets_inputs_and_returns_json():
    result = run(
        "total = sum(values)\nprint('hello')\nsubmit({'total': total, 'n': len(values)})", inputs={"values": [1, 2, 3]}
    )
    assert result.ok, result.message
    assert result.result == {"total": 6, "n": 3}
    assert result.stdout == "hello\n"
    assert result.error_kind is None and result.duration > 0


def test_result_variable_and_setup_and_collect():
    collect = "def collect(ns, submitted):\n    return ns['answer'] * 2\n"
    result = run("answer = base + 1", setup="base = 20", collect=collect)
    assert result.ok and result.result == 42


def test_runtime_error_names_exception_and_line():
    result = run("x = 1\n\ndef f(y):\n    return y / 0\n\nf(x)\n")
    assert result.error_kind == "runtime"
    assert result.exception == "ZeroDivisionError"
    assert result.line == 4
    assert "ZeroDivisionError" in result.message and "line 4" in result.message and "return y / 0" in result.message


def test_syntax_error_has_line():
    result = run("x = 1\ny = (2,\n")
    assert result.error_kind == "syntax"
    assert result.line == 2


def test_name_error_reports_the_name():
    result = run("result = undefined_thing + 1")
    assert result.error_kind == "runtime" and result.exception == "NameError" and result.name == "undefined_thing"


def test_lazy_standard_library_imports_work():
    result = run("import fractions, decimal, statistics\nresult = str(fractions.Fraction(1, 3))")
    assert result.ok, result.message
    assert result.result == "1/3"


# --- the hostile corpus ----------------------------------------------------------------------------


def test_infinite_loop_hits_the_wall_clock():
    result = run("while True:\n    pass\n", limits=SandboxLimits(wall_seconds=1.5, cpu_seconds=10))
    assert result.error_kind == "timeout"
    assert "1.5 s" in result.message
    assert result.duration < 6


def test_cpu_limit_stops_a_busy_loop():
    result = run("while True:\n    pass\n", limits=SandboxLimits(wall_seconds=10, cpu_seconds=0.5))
    assert result.error_kind == "timeout"
    assert "CPU" in result.message


def test_sleeping_program_times_out():
    result = run("import time\ntime.sleep(60)\n", limits=SandboxLimits(wall_seconds=1.0))
    assert result.error_kind == "timeout"


def test_memory_bomb():
    result = run(
        "chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))\n",
        limits=SandboxLimits(wall_seconds=10, memory_bytes=256 << 20),
    )
    assert result.error_kind == "resource"
    assert "MemoryError" in result.message


def test_single_huge_allocation():
    result = run("x = bytearray(10 ** 11)", limits=SandboxLimits(memory_bytes=256 << 20))
    assert result.error_kind == "resource"


def test_fork_bomb_with_os_fork():
    result = run("import os\nwhile True:\n    os.fork()\n")
    assert result.error_kind == "forbidden"
    assert "os.fork" in result.message and result.line == 3
    assert not sandbox_processes()


def test_fork_bomb_that_swallows_the_error_is_still_reported():
    result = run(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except Exception:\n        pass\n",
        limits=SandboxLimits(wall_seconds=1.0),
    )
    assert result.error_kind == "forbidden"
    assert not sandbox_processes()


def test_fork_bomb_with_subprocess():
    result = run("import subprocess\nwhile True:\n    subprocess.Popen(['sleep', '60'])\n")
    assert result.error_kind == "forbidden"
    assert "subprocess" in result.message
    assert not sandbox_processes()


def test_os_system_is_forbidden():
    result = run("import os\nos.system('echo hi')")
    assert result.error_kind == "forbidden"
    assert "hi" not in result.stdout


def test_deleting_a_file_outside(canary: Path):
    result = run(f"import os\nos.remove({str(canary)!r})")
    assert result.error_kind == "forbidden"  # and the caller's /tmp is not even in the sandbox's view
    assert canary.read_text() == "alive"


def test_writing_a_file_outside(canary: Path):
    result = run(f"with open({str(canary)!r}, 'w') as f:\n    f.write('pwned')")
    assert result.error_kind == "forbidden"
    assert canary.read_text() == "alive"


def test_writing_next_to_the_interpreter_is_refused():
    target = Path(sys.prefix) / "autonesy-sandbox-probe.pth"
    result = run(f"open({str(target)!r}, 'w').write('import os')")
    assert result.error_kind == "forbidden"
    assert not target.exists()


def test_writing_into_the_callers_home():
    target = Path.home() / "autonesy-sandbox-probe.txt"
    assert not target.exists()
    result = run(f"open({str(target)!r}, 'w').write('x')")
    assert result.error_kind == "forbidden"
    assert not target.exists()


def test_home_inside_the_sandbox_is_its_working_directory():
    result = run(
        "import os\nopen(os.path.expanduser('~/notes.txt'), 'w').write('ok')\n"
        "result = [os.path.expanduser('~'), os.getcwd()]"
    )
    assert result.ok, result.message
    home, cwd = result.result
    assert home == cwd == sandbox.WORKDIR  # a private tmpfs: nothing of it is left on the host afterwards


def test_secrets_in_the_environment_are_not_visible(monkeypatch):
    secrets = {
        "OPENAI_API_KEY": "sk-test-0123456789",
        "GITHUB_TOKEN": "ghp-secret-token",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "HTTPS_PROXY": "http://proxy.invalid:3128",
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    code = "import os\nprint(os.environ.get('OPENAI_API_KEY'))\nprint(dict(os.environ))\nresult = dict(os.environ)"
    result = run(code)
    assert result.ok, result.message
    assert not set(secrets) & set(result.result)
    text = result.stdout + result.stderr + repr(result.result) + result.message
    for value in secrets.values():
        assert value not in text


def test_reading_the_callers_environment_through_proc():
    result = run("import os\nresult = open(f'/proc/{os.getppid()}/environ').read()")
    assert result.error_kind == "forbidden"
    assert result.result is None


def test_socket_to_loopback_is_refused():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    try:
        result = run(
            f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "s.sendall(b'leak')\nresult = 1"
        )
        assert result.error_kind == "forbidden"
        assert "network" in result.message
        with pytest.raises(socket.timeout):
            listener.accept()  # no connection ever arrived
    finally:
        listener.close()


def test_namespaces_are_in_force():
    result = run("result = 1")
    assert {"pid", "mount", "net", "ipc", "uts"} <= set(result.isolation["namespaces"])
    assert ("user" in result.isolation["namespaces"]) is not ROOT


def test_huge_output_is_cut_off():
    limits = SandboxLimits(wall_seconds=5, output_bytes=1 << 20)
    result = run("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))\n", limits=limits)
    assert result.error_kind == "resource"
    assert "printed more than" in result.message
    assert len(result.stdout) <= 1 << 20


def test_huge_output_on_stderr_is_cut_off_too():
    limits = SandboxLimits(wall_seconds=5, output_bytes=64 << 10)
    result = run("import sys\nsys.stderr.write('e' * (100 << 20))\n", limits=limits)
    assert result.error_kind == "resource"
    assert len(result.stderr) <= 64 << 10


def test_killing_the_parent():
    result = run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nresult = 'still here'")
    assert result.error_kind == "forbidden"
    assert "signal" in result.message


def test_sys_exit_zero_before_a_result():
    result = run("import sys\nsys.exit(0)\nresult = 1")
    assert result.error_kind == "missing_definition"
    assert "sys.exit" in result.message


def test_sys_exit_nonzero_before_a_result():
    result = run("import sys\nsys.exit(3)")
    assert result.error_kind == "runtime"
    assert "sys.exit(3)" in result.message and result.line == 2


def test_os_exit_before_a_result():
    result = run("import os\nos._exit(0)")
    assert result.error_kind == "runtime"
    assert result.exit_status == 0


def test_deep_recursion():
    result = run("def down(n):\n    return down(n + 1)\n\ndown(0)\n")
    assert result.error_kind == "resource"
    assert "RecursionError" in result.message and result.line == 2


def test_recursion_after_raising_the_limit_is_still_contained():
    result = run(
        "import sys\nsys.setrecursionlimit(10 ** 8)\ndef down(n):\n    return down(n + 1)\ndown(0)\n",
        limits=SandboxLimits(wall_seconds=2, memory_bytes=128 << 20),
    )
    assert result.error_kind in ("resource", "timeout")


def test_non_json_result():
    result = run("result = {1, 2, 3}")
    assert result.error_kind == "type"
    assert "JSON" in result.message


def test_nan_is_not_json():
    result = run("result = float('nan')")
    assert result.error_kind == "type"


def test_ctypes_is_forbidden():
    result = run("import ctypes\nctypes.CDLL(None).fork()")
    assert result.error_kind == "forbidden"


def test_missing_result():
    result = run("x = 1")
    assert result.error_kind == "missing_definition"


# --- the OS layer holds where the audit hook is bypassed -------------------------------------------
# (these encoded the old uid-switch model, root only; the seccomp filter and the namespaces now hold
# for every caller: a process cannot even be started)

BYPASS = """
import subprocess, sys, types
# the audit hook sees subprocess.Popen through sys.audit: hand subprocess a sys without it
fake_sys = {k: getattr(sys, k) for k in dir(sys) if not k.startswith('__')}
fake_sys['audit'] = lambda *args: None
subprocess.sys = types.SimpleNamespace(**fake_sys)
def sh(command):
    try:
        return subprocess.run(['/bin/sh', '-c', command], capture_output=True, text=True, timeout=5)
    except Exception as exc:
        print('refused:', type(exc).__name__, exc)
"""


def test_without_the_audit_hook_no_process_starts(canary: Path):
    code = BYPASS + f"out = sh('echo pwned > {canary}; rm -f {canary}; id -u')\nresult = out is None"
    result = run(code)
    assert result.ok, result.message
    assert result.result is True and "Operation not permitted" in result.stdout
    assert canary.read_text() == "alive"


def test_without_the_audit_hook_threads_are_bounded_and_die():
    code = (
        "import threading, time\nstarted = 0\ntry:\n    for _ in range(100):\n"
        "        threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\n        started += 1\n"
        "except RuntimeError as exc:\n    print('limit:', exc)\nresult = started"
    )
    result = run(code, limits=SandboxLimits(wall_seconds=5, max_processes=8))
    assert result.ok, result.message
    assert "limit:" in result.stdout and result.result <= 8 + 2  # RLIMIT_NPROC: limit + the harness tasks
    assert not sandbox_processes()


def test_files_written_in_the_sandbox_do_not_outlive_it():
    name = f"autonesy-sandbox-leftover-{os.getpid()}"
    result = run(f"import tempfile\nopen(tempfile.gettempdir() + '/{name}', 'w').write('x')\nresult = 1")
    assert result.ok, result.message
    assert not Path("/tmp", name).exists()


# --- start-up ahead of need ----------------------------------------------------------------------


def test_a_prewarmed_sandbox_shows_no_program_the_files_of_the_last():
    try:
        program = "import os\nresult = [os.path.exists('mark'), len(seen)]\nopen('mark', 'w').close()"
        first = run_program(program, inputs={"seen": []}, prewarm=True)
        second = run_program(program, inputs={"seen": [1]}, prewarm=True)
        assert first.ok and second.ok, (first.message, second.message)
        assert first.result[0] is False and second.result[0] is False  # emptied between the two
        assert second.result[1] == 1
        assert sandbox._POOL.spares  # a sandbox is waiting for the next call
    finally:
        sandbox.shutdown()
    assert not sandbox._POOL.spares


def test_a_spare_starts_while_a_process_forked_by_the_caller_holds_its_stdin(monkeypatch):
    """The loader's counters are forked children: one forked while a spare waited holds a copy of the
    spare's stdin. The spare must still take its job (a DCP load failed so, with "did not start")."""
    monkeypatch.setattr(sandbox, "STARTUP_SECONDS", 10.0)
    try:
        assert run_program("result = 1", prewarm=True).ok  # leaves a spare waiting
        holder = os.fork()
        if holder == 0:  # holds every descriptor the caller had, the spare's stdin among them
            time.sleep(30)
            os._exit(0)
        try:
            result = run_program("result = 2", prewarm=True)
        finally:
            os.kill(holder, signal.SIGKILL)
            os.waitpid(holder, 0)
        assert result.ok, result.message
        assert result.result == 2
    finally:
        sandbox.shutdown()


def test_caller_survives_a_bad_input():
    with pytest.raises(ValueError):
        run_program("result = 1", inputs={"not an identifier": 1})
    with pytest.raises(ValueError):
        run_program("result = 1", inputs={"x": {1, 2}})
    assert sys.executable  # still here


@pytest.mark.parametrize("started", [True, False])
def test_a_harness_gone_once_the_program_started_is_the_programs_failure(started: bool):
    # "internal" stops the caller's run, and a resumed run replays the same answer: only a sandbox that
    # never started the program may say so, whatever the harness managed to write before it died
    capture = sandbox._Capture(QUICK)
    capture.started = started
    capture.res += b'{"event":"started"}\n' if started else b""
    capture.res += (
        b'{"event":"result","status":"error","kind":"internal","message":"the sandbox failed: MemoryError"}\n'
    )
    result = sandbox._outcome(capture, 0, QUICK, 0.1)
    assert result.error_kind == ("forbidden" if started else "internal")
    assert ("stopped while the program ran" in result.message) is started
