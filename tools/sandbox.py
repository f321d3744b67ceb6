"""Run untrusted (LLM-written) Python in a separate, locked-down process (DESIGN §10).

    result = run_program("x = sum(values)\\nsubmit(x)", inputs={"values": [1, 2, 3]})
    result.ok, result.result          # True, 6
    result.error_kind, result.message # on failure: a stable kind and a message written for an LLM

How it is contained (each layer catches what the one before may miss):

* **A fresh interpreter** (``python -I -B``: no user site, no ``PYTHON*`` variables, no bytecode
  written) in a **new session**, with ``close_fds`` and only four pipes: stdin (the job, as JSON),
  stdout, stderr and a private result pipe (newline-delimited JSON) — never pickles. Each process
  runs exactly one program.
* **A scrubbed environment** built from an allow-list (PATH, LANG, HOME=TMPDIR=the working
  directory, BLAS thread counts): no API keys, tokens, secrets or proxy settings can leak in.
* **A fresh working directory** (deleted afterwards, with anything the program left in the shared
  temporary directories under its uid).
* **Resource limits** set by the trusted harness after its trusted imports and before it compiles
  or runs anything of the program (``preexec_fn`` is avoided: it is unsafe in a threaded caller
  such as a LangGraph run): CPU seconds (not counting the imports), address space, file size,
  processes; core dumps off from the start.
* **Privileges dropped** when the caller is root: the harness imports the trusted modules, then
  becomes a uid of its own (``UID_BASE + pid``, never shared by two sandboxes, ``nobody`` where
  that uid cannot be mapped). Only then does ``RLIMIT_NPROC`` bind (it never binds root), files
  outside the working directory become read-only to the program, other processes cannot be
  signalled, and at the end every process of that uid is killed at once (``kill -KILL -1`` run as
  that uid), so fork bombs and orphans that left the process group die too. The interpreter's
  own library directories may be unreadable to that uid (e.g. under ``/root``); they stay
  reachable through directory descriptors opened before the switch.
* **No network**: a new network namespace (``unshare(CLONE_NEWNET)``; its loopback is down, so
  even 127.0.0.1 is unreachable); an unprivileged user namespace when not root; where the OS
  refuses, only the audit hook remains (``SandboxResult.isolation`` says which).
* **An audit hook** (defence in depth, with a clear "forbidden" error and the program's line):
  sockets, subprocesses/``os.system``/``exec``/``fork``, signals to other processes, writes or
  removals outside the working directory, reads of other processes' ``/proc`` entries, ``ctypes``
  and rlimit changes. Attempts are reported even when the program catches the exception.
* **Wall clock, output size and result size** are enforced by the caller, which reads the pipes
  incrementally (never more than the limit into memory) and kills the whole group on excess; a
  watchdog thread in the harness ends the sandbox if the caller disappears.

Start-up: a fresh interpreter costs ~0.1 s here, importing cpmpy ~1-2 s, sympy ~0.4 s, pysat
~0.05 s. ``prewarm=True`` (used by the format front-ends) keeps a sandbox started ahead of need,
imports done, waiting for its job: a call then costs ~0.05-0.1 s.

The caller always survives and always gets a :class:`SandboxResult`.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

HARNESS = Path(__file__).with_name("_sandbox_harness.py")
UID_BASE = 1_900_000_000  # sandbox uid = UID_BASE + pid: above systemd's container range, below 2**31
NOBODY = 65534

ERROR_KINDS = (
    "syntax",  # the program does not compile
    "runtime",  # the program raised an exception (or exited abnormally)
    "missing_definition",  # the program did not define / submit what the caller collects
    "type",  # it did, with the wrong type (or not JSON data)
    "timeout",  # wall-clock or CPU limit
    "resource",  # memory, output size, recursion depth, process count, file size, crash
    "forbidden",  # network, processes, signals, files outside its directory, ctypes
    "too_large",  # the result is larger than allowed
    "internal",  # the sandbox itself could not run (not the program's fault)
)

DEFAULT_COLLECT = '''
def collect(ns, submitted):
    if submitted is not NOTHING:
        return submitted
    if "result" in ns:
        return ns["result"]
    raise ProgramError("missing_definition", "the program neither called submit(obj) nor defined `result`")
'''


@dataclass(frozen=True)
class SandboxLimits:
    cpu_seconds: float = 20.0
    wall_seconds: float = 30.0
    memory_bytes: int = 2 << 30  # address space; after importing cpmpy (+ortools, pandas) ~0.3 GiB is in use
    output_bytes: int = 1 << 20  # stdout and stderr together
    result_bytes: int = 64 << 20
    file_bytes: int = 64 << 20  # largest file the program may write (in its working directory)
    max_processes: int = 8  # tasks (processes and threads) of the sandbox uid


@dataclass(frozen=True)
class SandboxResult:
    ok: bool
    result: Any = None
    stdout: str = ""
    stderr: str = ""
    error_kind: str | None = None
    message: str = ""  # for an LLM: what happened, where (line of the program), what to do
    line: int | None = None  # line of the program the error points at
    exception: str | None = None  # exception type name, for runtime errors
    name: str | None = None  # the missing name of a NameError / AttributeError
    duration: float = 0.0  # wall seconds, start to finish, as seen by the caller
    timings: Mapping[str, float] = field(default_factory=dict)  # harness-side: imports, program, collect
    isolation: Mapping[str, Any] = field(default_factory=dict)  # which protections were in force
    violations: tuple[Mapping[str, Any], ...] = ()
    exit_status: int | None = None  # process exit code, or -signal

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def run_program(
    code: str,
    *,
    inputs: Mapping[str, Any] | None = None,
    setup: str = "",
    collect: str | None = None,
    preload: Iterable[str] = (),
    limits: SandboxLimits = SandboxLimits(),
    prewarm: bool = False,
) -> SandboxResult:
    """Run ``code`` in the sandbox and return what it produced.

    The program runs as ``__main__`` in a fresh namespace holding ``inputs`` (JSON data, bound as
    names) and ``submit(obj)``. ``setup`` (trusted source) runs first in that namespace, after the
    trusted modules in ``preload`` are imported; it pre-binds what the program may use. ``collect``
    (trusted source) defines ``collect(ns, submitted)`` returning JSON data from the namespace or
    raising ``ProgramError(kind, message, line=None)``; ``submitted`` is the last value passed to
    ``submit`` or the sentinel ``NOTHING``. The default returns the submitted value, else ``result``.
    Trusted code runs inside the sandbox too, after privileges are dropped (collect also runs under
    the audit hook, since program objects may run code when inspected).

    The wall-clock limit counts from the moment the program starts, not the trusted imports.
    ``prewarm=True`` keeps one sandbox per ``preload`` set started ahead of need, its imports done
    and waiting for a job (each sandbox still runs exactly one program): repeated calls then skip
    the import time (about a second for cpmpy). :func:`shutdown` stops the spares (also at exit).
    """
    start = time.monotonic()
    try:
        inputs = dict(inputs or {})
        for key in inputs:
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"input name {key!r} is not a Python identifier")
        job = json.dumps({
            "code": code,
            "inputs": inputs,
            "setup": setup,
            "collect": collect or DEFAULT_COLLECT,
            "limits": {k: getattr(limits, k) for k in ("cpu_seconds", "wall_seconds", "memory_bytes",
                                                        "file_bytes", "max_processes")},
        }, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sandbox inputs must be JSON data: {exc}") from None
    key = tuple(preload)
    harness = _POOL.take(key) if prewarm else None
    if harness is None:
        try:
            harness = _Harness.spawn(key, pdeathsig=True)
        except OSError as exc:
            return SandboxResult(False, error_kind="internal", message=f"cannot start the sandbox: {exc}",
                                 duration=time.monotonic() - start)
    if prewarm:
        _POOL.refill(key)
    try:
        capture = _Capture(limits)
        capture.pump(harness, job)
    finally:
        status, rusage = harness.close()
    return _outcome(capture, status, rusage, limits, time.monotonic() - start)


def prewarm(preload: Iterable[str] = ()) -> None:
    """Start a sandbox for this ``preload`` set ahead of need (used by ``run_program(prewarm=True)``)."""
    _POOL.refill(tuple(preload))


def shutdown() -> None:
    """Stop the sandboxes started ahead of need (``prewarm``)."""
    _POOL.close_all()


# --------------------------------------------------------------------------------------------------

STARTUP_SECONDS = 120.0  # trusted imports before the program starts (cpmpy: ~1-2 s)


class _Harness:
    """One sandbox process: started (possibly ahead of need), given one job, then torn down."""

    def __init__(self, proc: subprocess.Popen, base: Path, read_fd: int) -> None:
        self.proc = proc
        self.base = base
        self.read_fd = read_fd
        self.closed = False

    @classmethod
    def spawn(cls, preload: tuple[str, ...], pdeathsig: bool) -> "_Harness":
        base = Path(tempfile.mkdtemp(prefix="autonesy-sandbox-"))
        try:
            control, workdir = base / "control", base / "work"
            control.mkdir(mode=0o700)
            workdir.mkdir(mode=0o700)
            os.chmod(base, 0o711)  # the sandbox uid may pass through to its working directory, not list
            warm = {"preload": list(preload), "uid_base": UID_BASE, "parent_pid": os.getpid(),
                    "workdir": str(workdir), "pdeathsig": pdeathsig}
            (control / "warm.json").write_text(json.dumps(warm), encoding="utf-8")
            read_fd, write_fd = os.pipe()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-B", str(HARNESS), str(control), str(write_fd)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=(write_fd,),
                    close_fds=True,
                    start_new_session=True,
                    env=_scrubbed_env(workdir),
                    cwd=workdir,
                )
            except OSError:
                os.close(read_fd)
                raise
            finally:
                os.close(write_fd)
        except BaseException:
            _remove_tree(base)
            raise
        return cls(proc, base, read_fd)

    def alive(self) -> bool:
        return not self.closed and not _has_exited(self.proc.pid)

    def close(self):
        """Kill whatever is left, reap, remove the directories; returns (wait status, rusage)."""
        if self.closed:
            return None, None
        self.closed = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status, rusage = _reap(self.proc)
        uid = _read_uid(self.base / "control")
        _kill_everything(self.proc.pid, uid)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass
        os.close(self.read_fd)
        _remove_tree(self.base)
        if uid is not None and uid != NOBODY:
            _remove_leftovers(uid)
        return status, rusage


PREWARM_SPARES = 1  # idle sandboxes kept per preload set (each holds its imports in memory)


class _Pool:
    """Idle, pre-started sandboxes per set of preloaded modules, oldest (warmest) first."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spares: dict[tuple[str, ...], list[_Harness]] = {}
        self.owner = os.getpid()
        self.registered = False

    def take(self, key: tuple[str, ...]) -> _Harness | None:
        while True:
            with self.lock:
                if self.owner != os.getpid():  # a forked copy of the caller: those children are not ours
                    self.spares, self.owner = {}, os.getpid()
                waiting = self.spares.get(key)
                spare = waiting.pop(0) if waiting else None
            if spare is None or spare.alive():
                return spare
            spare.close()

    def refill(self, key: tuple[str, ...]) -> None:
        with self.lock:
            missing = PREWARM_SPARES - len(self.spares.get(key, ()))
            if not self.registered:
                atexit.register(self.close_all)
                self.registered = True
        for _ in range(max(missing, 0)):
            try:
                spare = _Harness.spawn(key, pdeathsig=False)  # not tied to this thread: it may end first
            except OSError:
                return
            with self.lock:
                waiting = self.spares.setdefault(key, [])
                extra = spare if len(waiting) >= PREWARM_SPARES else None
                if extra is None:
                    waiting.append(spare)
            if extra is not None:
                extra.close()

    def close_all(self) -> None:
        with self.lock:
            spares = [spare for waiting in self.spares.values() for spare in waiting]
            self.spares = {}
            mine = self.owner == os.getpid()
        if mine:
            for spare in spares:
                spare.close()


_POOL = _Pool()


class _Capture:
    """Feeds the job and reads stdout, stderr and the result pipe, keeping at most the limits in memory."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self.out = bytearray()
        self.err = bytearray()
        self.res = bytearray()
        self.output_seen = 0
        self.started = False
        self.timed_out = False
        self.startup_timed_out = False
        self.output_exceeded = False
        self.result_exceeded = False

    def pump(self, harness: _Harness, job: bytes) -> None:
        proc = harness.proc
        streams = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err", harness.read_fd: "res"}
        stdin = proc.stdin.fileno()
        pending = memoryview(job)
        deadline = time.monotonic() + STARTUP_SECONDS
        with selectors.DefaultSelector() as selector:
            for fd in (*streams, stdin):
                os.set_blocking(fd, False)
            for fd in streams:
                selector.register(fd, selectors.EVENT_READ)
            selector.register(stdin, selectors.EVENT_WRITE)
            exited_at = None
            while streams:
                now = time.monotonic()
                if now >= deadline:
                    if self.started:
                        self.timed_out = True
                    else:
                        self.startup_timed_out = True
                    return
                if exited_at is None and _has_exited(proc.pid):
                    exited_at = now
                if exited_at is not None and now - exited_at > 0.5:
                    return  # the harness is gone; whatever still holds a pipe is an orphan
                for key, _ in selector.select(min(deadline - now, 0.1)):
                    if key.fd == stdin:
                        try:
                            pending = pending[os.write(stdin, pending[: 1 << 16]):]
                        except BlockingIOError:
                            continue
                        except OSError:  # the harness died before taking its job
                            pending = pending[:0]
                        if not pending:
                            selector.unregister(stdin)
                            proc.stdin.close()
                        continue
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(key.fd)
                        del streams[key.fd]
                        continue
                    if self._take(streams[key.fd], chunk):
                        return
                    if not self.started and streams[key.fd] == "res" and b'{"event":"started"}' in self.res:
                        self.started = True
                        deadline = time.monotonic() + self.limits.wall_seconds

    def _take(self, stream: str, chunk: bytes) -> bool:
        """Store a chunk; True when a limit is exceeded (the caller stops reading and kills)."""
        if stream == "res":
            if len(self.res) + len(chunk) > self.limits.result_bytes:
                self.result_exceeded = True
                return True
            self.res += chunk
            return False
        room = self.limits.output_bytes - self.output_seen
        self.output_seen += len(chunk)
        (self.out if stream == "out" else self.err).extend(chunk[: max(room, 0)])
        if self.output_seen > self.limits.output_bytes:
            self.output_exceeded = True
            return True
        return False

    def messages(self) -> tuple[list[dict], dict | None]:
        violations, final = [], None
        for raw in bytes(self.res).split(b"\n"):
            if not raw.strip():
                continue
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # a torn line (killed mid-write) or the program scribbling on the pipe
            if not isinstance(message, dict):
                continue
            if message.get("event") == "violation":
                violations.append(message)
            elif message.get("event") == "result":
                final = message
        return violations, final


def _outcome(capture: _Capture, status: int | None, rusage, limits: SandboxLimits, duration: float) -> SandboxResult:
    stdout = capture.out.decode("utf-8", "replace")
    stderr = capture.err.decode("utf-8", "replace")
    violations, final = capture.messages()
    final = final or {}
    for seen in final.get("violations") or ():
        if seen not in violations:
            violations.append(seen)
    exit_status = None
    if status is not None:
        exit_status = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    common = dict(
        stdout=stdout,
        stderr=stderr,
        duration=duration,
        timings=final.get("timings") or {},
        isolation=final.get("isolation") or {},
        violations=tuple(violations),
        exit_status=exit_status,
    )

    def fail(kind: str, message: str, **extra: Any) -> SandboxResult:
        return SandboxResult(False, error_kind=kind, message=message, **common, **extra)

    if violations:
        first = violations[0]
        where = f" at line {first['line']}" if first.get("line") else ""
        message = f"the program tried {first['what']}{where}; this is not allowed in the sandbox"
        others = sorted({v["what"] for v in violations[1:]} - {first["what"]})
        if others:
            message += " (also: " + "; ".join(others[:3]) + ")"
        if capture.timed_out:
            message += f", and then ran past the {limits.wall_seconds:g} s time limit"
        return fail("forbidden", message, line=first.get("line"))
    if capture.output_exceeded:
        return fail("resource", f"the program printed more than {_size(limits.output_bytes)} and was stopped; "
                    "print less (the caller reads the defined result, not the printed output)")
    if capture.result_exceeded:
        return fail("too_large", f"the result is larger than {_size(limits.result_bytes)}")
    if capture.startup_timed_out:
        return fail("internal", f"the sandbox did not start the program within {STARTUP_SECONDS:g} s")
    if capture.timed_out:
        return fail("timeout", f"the program ran longer than {limits.wall_seconds:g} s (wall clock) and was "
                    "stopped; look for an endless loop or a search that is too large")
    if final.get("status") == "ok":
        return SandboxResult(True, result=final.get("result"), **common)
    if final.get("status") == "error":
        return fail(final.get("kind") or "runtime", final.get("message") or "the program failed",
                    line=final.get("line"), exception=final.get("exception"), name=final.get("name"))
    # No report: the process died (signal, os._exit, a crash in native code).
    if not capture.started:
        tail = stderr.strip()[-1500:]
        return fail("internal", f"the sandbox stopped before the program started (exit status {exit_status})"
                    + (f":\n{tail}" if tail else ""))
    cpu = (rusage.ru_utime + rusage.ru_stime) if rusage is not None else 0.0
    tail = stderr.strip()[-1500:]
    detail = f"\nLast error output:\n{tail}" if tail else ""
    if exit_status is not None and exit_status < 0:
        sig = -exit_status
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_seconds - 0.05):
            return fail("timeout", f"the program used more than {limits.cpu_seconds:g} s of CPU time and was "
                        "stopped; look for an endless loop or a search that is too large")
        if sig == signal.SIGXFSZ:
            return fail("resource", f"the program wrote a file larger than {_size(limits.file_bytes)}")
        if sig == signal.SIGSEGV:
            return fail("resource", "the program crashed (segmentation fault), usually a recursion that went "
                        "too deep after sys.setrecursionlimit, or a native library failing; use loops" + detail)
        if sig == signal.SIGKILL:
            return fail("resource", "the program was killed (out of memory or another limit)" + detail)
        return fail("runtime", f"the program was terminated by {name}" + detail)
    if "MemoryError" in stderr:
        return fail("resource", f"the program ran out of memory (limit {_size(limits.memory_bytes)})" + detail)
    return fail("runtime", f"the program ended the interpreter (exit status {exit_status}, e.g. os._exit) before "
                "a result was reported; let the program end normally" + detail)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def _scrubbed_env(workdir: Path) -> dict[str, str]:
    """An allow-list, not a deny-list: nothing from the caller's environment passes through."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": str(workdir),
        "TMPDIR": str(workdir),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


def _read_uid(control: Path) -> int | None:
    try:
        return int((control / "uid").read_text())
    except (OSError, ValueError):
        return None


def _kill_everything(pgid: int, uid: int | None) -> None:
    """SIGKILL what is left of the sandbox: its process group, and every process of its own uid."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if os.geteuid() != 0:
        _kill_session(pgid)
        return
    if uid is None or uid == NOBODY or not _pids_of_uid(uid):
        return
    kill = shutil.which("kill", path="/usr/bin:/bin")
    if kill:  # kill(-1) as that uid is atomic in the kernel: a fork bomb cannot outrun it
        try:
            subprocess.run([kill, "-s", "KILL", "--", "-1"], user=uid, group=uid, extra_groups=[],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={"PATH": "/usr/bin:/bin"}, cwd="/", timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            pass
    for _ in range(50):  # and make sure, also where there is no kill(1) binary
        pids = _pids_of_uid(uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _pids_of_uid(uid: int) -> list[int]:
    """Live (non-zombie) processes whose real uid is ``uid``."""
    found = []
    for pid in _all_pids():
        fields = _status_fields(pid, (b"State:", b"Uid:"))
        if fields.get(b"Uid:") == str(uid) and fields.get(b"State:") not in ("Z", "X"):
            found.append(pid)
    return found


def _kill_session(sid: int) -> None:
    """Not root: also kill processes that left the group but not the session."""
    for pid in _all_pids():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[3]) == sid:
                os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _status_fields(pid: int, keys: tuple[bytes, ...]) -> dict[bytes, str]:
    """First value of some /proc/PID/status lines (for Uid: the real uid)."""
    values: dict[bytes, str] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for raw in f:
                key = raw.split(b"\t", 1)[0]
                if key in keys:
                    values[key] = raw.split()[1].decode()
                    if len(values) == len(keys):
                        break
    except (OSError, IndexError):
        pass
    return values


def _has_exited(pid: int) -> bool:
    """Whether the harness has exited, without reaping it (its resource usage is read later)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _reap(proc: subprocess.Popen):
    """Wait for the harness (it was SIGKILLed if still running) and take its resource usage."""
    try:
        _, status, rusage = os.wait4(proc.pid, 0)
    except ChildProcessError:  # already reaped by poll()
        return (None if proc.returncode is None else _encode_status(proc.returncode)), None
    proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return status, rusage


def _encode_status(returncode: int) -> int:
    return (-returncode) & 0x7F if returncode < 0 else (returncode & 0xFF) << 8


def _remove_tree(path: Path) -> None:
    def retry(func, target, _exc_info):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


def _remove_leftovers(uid: int) -> None:
    """Files the program's uid created in the world-writable temporary directories."""
    for directory in {tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"}:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    _remove_tree(Path(entry.path))
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


__all__ = ["ERROR_KINDS", "SandboxLimits", "SandboxResult", "prewarm", "run_program", "shutdown"]
