"""Run untrusted (LLM-written) Python in a separate, isolated process (docs/architecture.md §10).

    result = run_program("x = sum(values)\\nsubmit(x)", inputs={"values": [1, 2, 3]})
    result.ok, result.result          # True, 6
    result.error_kind, result.message # on failure: a stable kind and a message written for an LLM

How it is contained (the OS layer is the boundary; the audit hook is a second layer):

* **bubblewrap** (``bwrap``, Debian/Ubuntu package ``bubblewrap``) starts every sandbox in new
  PID, mount, network, IPC, UTS and cgroup namespaces (plus a user namespace for a non-root
  caller), with the harness as PID 1 (``--as-pid-1``: bubblewrap's own PID 1 would be a process
  of the program's uid, without the filter or limits, that it could write through ``/proc/1/mem``),
  in a new session, with an allow-listed environment (no API keys, no HOME of the
  caller). The filesystem it sees is built from nothing: ``/usr`` and the interpreter's prefix and
  site-packages read-only, ``/etc/ld.so.cache``, a fresh ``/proc`` of its own PID namespace, a
  minimal read-only ``/dev`` (null, zero, random, ...; no host ``/dev/shm``) and a private
  tmpfs at ``/sandbox``, bounded in bytes and in entries (the harness mounts it in a mount
  namespace of its own, with the CAP_SYS_ADMIN bubblewrap gives a non-root caller's harness for
  that and that it drops at once; where it may not, bubblewrap's tmpfs bounds bytes only), as
  the only writable place (working directory, HOME and
  TMPDIR; there is no ``/tmp``; the root itself is remounted read-only). The
  network namespace has only a loopback that is down; abstract unix sockets are per namespace.
  **Fails closed:** if ``bwrap`` is missing or cannot set up the namespaces, no program runs and
  the result is an ``internal`` error with one line saying what is missing.
* **The program runs in a process of its own** forked by the trusted harness inside the sandbox
  (:mod:`autonesy.tools._sandbox_harness`): rlimits (CPU seconds, address space, file size, open
  files, tasks), a uid without capabilities (for a root caller, a uid of its own, ``UID_BASE +
  pid``), and a seccomp filter that refuses new processes (threads stay possible), ``exec``,
  ``ptrace``, new namespaces, mounts, sockets other than AF_UNIX, signals to or limits of
  other processes (also through a descriptor's owner: ``F_SETOWN``/``F_SETSIG``), and memory the
  limits do not count (SysV IPC and message queues, ``memfd``, xattrs on the tmpfs). The harness
  ignores every signal it can; if it dies once the program's process exists, the outcome is the
  program's (``forbidden``), never ``internal``, which would stop the caller's run.
* **The result channel belongs to the harness**: the program's process never holds the pipe to
  the caller. It reports to the harness, which accepts one final message carrying a token it
  handed out (so bytes written on descriptors then ``os._exit`` are not a result), bounds its size,
  and reports exits and signals itself; the caller parses it once, with bounds on size and
  nesting (nothing is raised: a malformed report is an error result; once the program ran, its
  report cannot claim an ``internal`` error, which would stop the caller's run). The program still chooses
  its own result *value* (code in its process can reach the token by walking frames), so every
  caller validates what it gets as untrusted data (the formats re-check clauses, variables and
  sizes; the checker requires a bool).
* **Wall clock, output size and result size** are enforced by the caller, which reads the pipes
  incrementally (never more than the limit into memory) and at the end kills the bubblewrap
  process, which takes the whole PID namespace (and the tmpfs) with it: nothing is left behind
  on the host, so there is nothing to clean up.
* **A pooled sandbox serves programs in turn** (``prewarm=True``): each in a new process forked
  from the harness, which never ran untrusted code. Before the next job the harness kills and
  reaps every other process of the namespace, empties ``/sandbox`` and checks both; the caller
  reads each job's output up to that report only, and retires the sandbox (kills the namespace)
  after any abnormal outcome (timeout, violation, a limit, a malformed or missing report, a
  cleanup that failed), after ``SANDBOX_JOBS`` jobs or ``SANDBOX_SECONDS``.
* **An audit hook** (defence in depth, with a clear "forbidden" error and the program's line):
  sockets, subprocesses, signals, writes outside ``/sandbox``, other processes' ``/proc`` entries,
  ``ctypes`` and rlimit changes.

Start-up: bubblewrap adds a few milliseconds to a fresh interpreter (~0.1 s); importing cpmpy takes
~1-2 s, sympy ~0.4 s, pysat ~0.05 s. ``prewarm=True`` (used by the format front-ends) keeps a
sandbox started ahead of need, imports done, waiting for its job, and gives it back to the pool after
an ordinary outcome, so the imports are paid once per sandbox, not per program: a call then costs
~0.05-0.1 s (``benchmarks/sandbox_startup.py``, ``benchmarks/sweep_cpu.py``).

The caller always survives and always gets a :class:`SandboxResult`.
"""

from __future__ import annotations

import atexit
import collections
import functools
import json
import math
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autonesy.tools.errors import AutonesyError

HARNESS = Path(__file__).with_name("_sandbox_harness.py")
HARNESS_INSIDE = "/.autonesy/harness.py"
WORKDIR = "/sandbox"  # the private tmpfs: working directory, HOME and TMPDIR of the program
UID_BASE = 1_900_000_000  # root caller: program uid = UID_BASE + pid, above systemd's container range, below 2**31
WORK_BYTES = 256 << 20  # size of the private tmpfs (all files the program writes, together)
WORK_INODES = 16_384  # files, directories, symbolic links and hard links on it: kernel memory its size does not count
MAX_RESULT_DEPTH = 64  # nesting of any JSON the caller parses from the sandbox
MAX_RESULT_CONTAINERS = 2_000_000  # lists and dicts in a result: 16 MiB of "{}," would cost the caller ~0.8 GiB
MAX_MESSAGE_CHARS = 20_000  # any text field of a report (messages are for an LLM; longer is noise)
AUDIT_HOOK = True  # the second layer; tests turn it off to show that the OS layer holds on its own
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"


class SandboxError(AutonesyError, RuntimeError):
    """The sandbox cannot run programs here (isolation unavailable): one line saying what is missing."""


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

DEFAULT_COLLECT = """
def collect(ns, submitted):
    if submitted is not NOTHING:
        return submitted
    if "result" in ns:
        return ns["result"]
    raise ProgramError("missing_definition", "the program neither called submit(obj) nor defined `result`")
"""


@dataclass(frozen=True)
class SandboxLimits:
    """The resources one sandboxed program may use: CPU and wall time, memory, file, output and result sizes."""

    cpu_seconds: float = 20.0
    wall_seconds: float = 30.0
    memory_bytes: int = 2 << 30  # address space; after importing cpmpy (+ortools, pandas) ~0.3 GiB is in use
    output_bytes: int = 1 << 20  # stdout and stderr together
    result_bytes: int = 16 << 20  # the JSON result; the caller parses at most this much
    file_bytes: int = 64 << 20  # largest file the program may write (all files together: WORK_BYTES)
    max_processes: int = 8  # threads of the program (it cannot start processes)


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed program produced: its result or an error written for an LLM (kind, message, line), its output,
    timings, protections and any violations."""

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
        """The result as JSON data (traces, checker records)."""
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
    trusted modules in ``preload`` are imported (in order; ``"!name"`` makes module ``name``
    unimportable instead, for the program and the imports after it); it pre-binds what the program may use. ``collect``
    (trusted source) defines ``collect(ns, submitted)`` returning JSON data from the namespace or
    raising ``ProgramError(kind, message, line=None)``; ``submitted`` is the last value passed to
    ``submit`` or the sentinel ``NOTHING``. The default returns the submitted value, else ``result``.
    Trusted setup and collect run in the program's process, after its privileges are dropped
    (collect also runs under the audit hook, since program objects may run code when inspected).
    Without bubblewrap the program does not run: the result is an ``internal`` error saying so.

    The wall-clock limit counts from the moment the program starts, not the trusted imports.
    ``prewarm=True`` keeps sandboxes per ``preload`` set started ahead of need, their imports done
    and waiting for a job, and lets one sandbox serve up to ``SANDBOX_JOBS`` programs in turn (each
    in a fresh process forked from the harness's clean state; between them the harness kills every
    other process of the sandbox and empties its directory; an abnormal outcome retires the sandbox):
    repeated calls skip the import time (~0.5 s of CPU for sympy). :func:`shutdown` stops the idle
    sandboxes (also at exit).
    """
    start = time.monotonic()
    try:
        inputs = dict(inputs or {})
        for key in inputs:
            if not isinstance(key, str) or not key.isidentifier():
                raise ValueError(f"input name {key!r} is not a Python identifier")
        job = json.dumps(
            {
                "code": code,
                "inputs": inputs,
                "setup": setup,
                "collect": collect or DEFAULT_COLLECT,
                "audit_hook": AUDIT_HOOK,
                "limits": {
                    k: getattr(limits, k)
                    for k in (
                        "cpu_seconds",
                        "wall_seconds",
                        "memory_bytes",
                        "file_bytes",
                        "max_processes",
                        "result_bytes",
                    )
                },
            },
            allow_nan=False,
        ).encode()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sandbox inputs must be JSON data: {exc}") from None
    try:
        bwrap = _bwrap()
    except SandboxError as exc:
        return SandboxResult(False, error_kind="internal", message=str(exc), duration=time.monotonic() - start)
    modules = tuple(preload)  # the pool keeps ready harnesses per preloaded module set
    harness = _POOL.take(modules) if prewarm else None
    if harness is None:
        try:  # a pooled sandbox may serve calls from other threads: not tied to this one
            harness = _Harness.spawn(bwrap, modules, die_with_parent=not prewarm)
        except OSError as exc:
            if prewarm:
                _POOL.forget(modules)
            return SandboxResult(
                False,
                error_kind="internal",
                message=f"cannot start the sandbox: {exc}",
                duration=time.monotonic() - start,
            )
    capture = _Capture(limits)
    try:
        capture.pump(harness, _with_uid(job, harness.proc.pid))
    except BaseException:
        harness.close()
        if prewarm:
            _POOL.forget(modules)
        raise
    harness.jobs += 1
    status = None if capture.ready else harness.close()
    result = _outcome(capture, status, limits, time.monotonic() - start)
    if prewarm and capture.ready and _may_serve_again(result) and not harness.worn():
        _POOL.give_back(modules, harness)
    else:
        if capture.ready:  # idle and clean: let it exit by itself
            harness.stop()
        harness.close(wait=STOP_SECONDS if capture.ready else 0.0)
        if prewarm:
            _POOL.forget(modules)
            _POOL.refill(modules)  # a fresh spare for the next call
    return result


RETIRING_KINDS = frozenset({"timeout", "resource", "forbidden", "too_large", "internal"})


def _may_serve_again(result: SandboxResult) -> bool:
    """Whether the sandbox that ran this may take another job: only after an ordinary outcome (a result,
    or an error the program raised); anything abnormal retires it, even though the harness cleaned up."""
    return not result.violations and (result.ok or result.error_kind not in RETIRING_KINDS)


def prewarm(preload: Iterable[str] = ()) -> None:
    """Start a sandbox for this ``preload`` set ahead of need (used by ``run_program(prewarm=True)``)."""
    _POOL.refill(tuple(preload))


def shutdown() -> None:
    """Stop the sandboxes started ahead of need (``prewarm``)."""
    _POOL.close_all()


def require_isolation() -> str:
    """The bubblewrap binary, or :class:`SandboxError` saying what to install."""
    return _bwrap()


# --------------------------------------------------------------------------------------------------

STARTUP_SECONDS = 120.0  # trusted imports before the program starts (cpmpy: ~1-2 s)
CLEANUP_SECONDS = 10.0  # after the program's report, for the harness to report its sandbox clean
STOP_SECONDS = 0.5  # for an idle sandbox told to stop to exit by itself before it is killed


MIN_BWRAP = (0, 7)  # --size (a size-limited tmpfs) came with 0.7; --disable-userns with 0.8


def _bwrap() -> str:
    found = shutil.which("bwrap") or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")
    if not found:
        raise SandboxError(f"the sandbox needs bubblewrap (bwrap), which is not installed: {INSTALL_HINT}")
    version = _bwrap_version(found)
    if version < MIN_BWRAP:
        shown = ".".join(map(str, version)) if version else "unknown"
        raise SandboxError(
            f"the sandbox needs bubblewrap {'.'.join(map(str, MIN_BWRAP))} or newer; {found} is "
            f"version {shown}: {INSTALL_HINT}"
        )
    return found


@functools.lru_cache(maxsize=4)
def _bwrap_version(path: str) -> tuple[int, ...]:
    try:
        text = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False, env=dict(_ENV)
        ).stdout
        return tuple(int(part) for part in text.split()[-1].split(".")[:3])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return ()


def _bwrap_args(bwrap: str, preload: tuple[str, ...], die_with_parent: bool) -> list[str]:
    """The namespaces, the read-only view and the tmpfs; the harness runs as the sandbox's command."""
    root = os.geteuid() == 0
    args = [
        bwrap,
        "--unshare-pid",
        "--as-pid-1",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--new-session",
        "--hostname",
        "sandbox",
        "--clearenv",
    ]
    if not root:  # a root caller keeps the capabilities the harness needs to give the program its own uid
        args += ["--unshare-user"] + (["--disable-userns"] if _bwrap_version(bwrap) >= (0, 8) else [])
        args += ["--cap-add", "CAP_SYS_ADMIN"]  # for the harness to mount /sandbox; it drops it at once
    if die_with_parent:
        args.append("--die-with-parent")
    for key, value in _ENV.items():
        args += ["--setenv", key, value]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    paths = _python_paths()
    parents = {os.path.dirname(p) for p in (*paths, "/etc/", HARNESS_INSIDE)}
    parents |= {os.path.dirname(p) for p in list(parents) for p in _ancestors(p)}
    for parent in sorted(parents - {"/"}, key=len):  # bwrap would make them 0700: unreadable to the program
        args += ["--perms", "0755", "--dir", parent]
    for etc in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", etc, etc]
    for path in paths:
        args += ["--ro-bind", path, path]
    args += [
        "--ro-bind",
        str(HARNESS),
        HARNESS_INSIDE,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--perms",
        "0700",
        "--size",
        str(WORK_BYTES),
        "--tmpfs",
        WORKDIR,
        "--chdir",
        WORKDIR,
        "--remount-ro",
        "/",
    ]  # the root tmpfs bwrap builds has no size limit: only /sandbox is writable
    warm = {
        "preload": list(preload),
        "caller": os.getpid(),  # the caller's pid: lets a test tell its own sandboxes
        "workdir": {"bytes": WORK_BYTES, "inodes": WORK_INODES},
        "isolation": {
            "backend": f"bubblewrap ({'root caller' if root else 'user namespace'})",
            "namespaces": ["pid", "mount", "net", "ipc", "uts"] + ([] if root else ["user"]),
        },
    }
    return args + ["--", sys.executable, "-I", "-B", HARNESS_INSIDE, json.dumps(warm)]


_ENV = {  # an allow-list: nothing from the caller's environment passes through
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": WORKDIR,
    "TMPDIR": WORKDIR,
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


@functools.lru_cache(maxsize=1)
def _python_paths() -> tuple[str, ...]:
    """The interpreter's prefixes and the site-packages directories on sys.path (not the caller's cwd)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    prefixes.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    wanted = set(prefixes)
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        if os.path.isdir(real) and os.path.basename(real) in ("site-packages", "dist-packages"):
            wanted.add(real)
    chosen: list[str] = []
    for path in sorted(wanted, key=len):
        if path in ("/", "") or path == "/usr" or path.startswith("/usr/"):
            continue
        if not any(path.startswith(done + os.sep) for done in chosen):
            chosen.append(path)
    return tuple(chosen)


def _namespace_init(info_read: int) -> int | None:
    """A pidfd of the sandbox's PID 1, from bubblewrap's --info-fd report (None if it failed early)."""
    data = b""
    try:
        while b"}" not in data:
            chunk = os.read(info_read, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(info_read)
    try:
        return os.pidfd_open(int(json.loads(data)["child-pid"]))
    except (ValueError, KeyError, TypeError, OSError):
        return None


def _wait_readable(fd: int, seconds: float) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        selector.select(seconds)


def _ancestors(path: str) -> list[str]:
    found = []
    while path not in ("/", ""):
        found.append(path)
        path = os.path.dirname(path)
    return found


def _with_uid(job: bytes, pid: int) -> bytes:
    """A root caller's sandbox gets a uid of its own (never shared by two live sandboxes)."""
    return job[:-1] + b',"uid":' + str(UID_BASE + pid).encode() + b"}"


SANDBOX_JOBS = 64  # programs one pooled sandbox serves before it is retired
SANDBOX_SECONDS = 600.0  # and its age: a long-lived harness holds its imports' memory, and whatever they cached


class _Harness:
    """One sandbox (a bubblewrap process): started (possibly ahead of need), given jobs in turn, torn down."""

    def __init__(self, proc: subprocess.Popen, read_fd: int, pidfd: int | None) -> None:
        self.proc = proc
        self.read_fd = read_fd
        self.pidfd = pidfd  # the sandbox's PID 1: when it dies, the kernel kills its whole namespace
        self.closed = False
        self.born = time.monotonic()
        self.jobs = 0  # jobs given to it

    def worn(self) -> bool:
        """Served its share: retire it rather than give it another job."""
        return self.jobs >= SANDBOX_JOBS or time.monotonic() - self.born > SANDBOX_SECONDS

    @classmethod
    def spawn(cls, bwrap: str, preload: tuple[str, ...], die_with_parent: bool) -> _Harness:
        read_fd, write_fd = os.pipe()
        info_read, info_write = os.pipe()
        args = _bwrap_args(bwrap, preload, die_with_parent)
        args[1:1] = ["--info-fd", str(info_write)]
        try:
            proc = subprocess.Popen(
                args + [str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd, info_write),
                close_fds=True,
                start_new_session=True,
                env=dict(_ENV),
                cwd="/",
            )
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
            os.close(info_write)
        return cls(proc, read_fd, _namespace_init(info_read))

    def alive(self) -> bool:
        return not self.closed and not _has_exited(self.proc.pid)

    def stop(self) -> None:
        """No more jobs for this idle sandbox (its stdin closes): its harness exits by itself and bubblewrap
        reaps it, so the CPU time the sandbox used counts among this process's children's (``os.times``)."""
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def close(self, wait: float = 0.0) -> int | None:
        """Kill the bubblewrap process (its PID namespace dies with it), reap; returns its wait status.
        ``wait``: seconds a sandbox told to :meth:`stop` gets to exit by itself first."""
        if self.closed:
            return None
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and not _has_exited(self.proc.pid):
            time.sleep(0.005)
        self.closed = True
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.pidfd is not None:
            _wait_readable(self.pidfd, 5.0)  # PID 1 exits only once every process of its namespace is gone
            os.close(self.pidfd)
        status = _reap(self.proc)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        os.close(self.read_fd)
        return status


PREWARM_SPARES = 1  # sandboxes started ahead of need per preload set (each holds its imports in memory)
IDLE_SANDBOXES = 8  # idle sandboxes kept per preload set after serving a job (a sweep runs 8 attempts at once)
SANDBOXES_PER_SET = max(2, os.cpu_count() or 2)  # per preload set, before a caller waits for a busy one
WAIT_FOR_SANDBOX = 10.0  # seconds a caller waits for a busy sandbox to come back before it starts another


class _Pool:
    """Sandboxes per set of preloaded modules: the idle ones (started ahead of need or handed back after
    a job) and how many exist. A caller that finds none idle while ``SANDBOXES_PER_SET`` exist waits up to
    ``WAIT_FOR_SANDBOX`` for one to come back rather than pay another sandbox's imports."""

    def __init__(self) -> None:
        self.lock = threading.Condition()  # notified when a sandbox becomes idle or one is gone
        self.spares: dict[tuple[str, ...], list[_Harness]] = {}
        self.live: collections.Counter[tuple[str, ...]] = collections.Counter()  # idle, busy or starting
        self.owner = os.getpid()
        self.registered = False

    def _forked(self) -> bool:
        """Under the lock: in a forked copy of the caller, the sandboxes counted here are not ours."""
        if self.owner == os.getpid():
            return False
        self.spares, self.live, self.owner = {}, collections.Counter(), os.getpid()
        return True

    def take(self, key: tuple[str, ...]) -> _Harness | None:
        """An idle sandbox, or None: then the caller starts one, counted here (it gives it back or forgets it)."""
        give_up = time.monotonic() + WAIT_FOR_SANDBOX
        while True:
            with self.lock:
                self._forked()
                waiting = self.spares.get(key)
                spare = waiting.pop(0) if waiting else None
                if spare is None:
                    left = give_up - time.monotonic()
                    if self.live[key] < SANDBOXES_PER_SET or left <= 0:
                        self.live[key] += 1
                        return None
                    self.lock.wait(left)
                    continue
            if spare.alive() and not spare.worn():
                return spare
            spare.stop()  # dead, or past its age while it waited here
            spare.close(wait=STOP_SECONDS)
            self.forget(key)

    def give_back(self, key: tuple[str, ...], harness: _Harness) -> None:
        """A sandbox that served a job and reported itself clean, for the next call with this preload set."""
        kept = False
        with self.lock:
            if not self._forked():
                waiting = self.spares.setdefault(key, [])
                if len(waiting) < IDLE_SANDBOXES:
                    waiting.insert(0, harness)  # imports done: before a spare that may still be importing
                    kept = True
                    self.lock.notify()
        if not kept:
            harness.stop()
            harness.close(wait=STOP_SECONDS)
            self.forget(key)

    def forget(self, key: tuple[str, ...]) -> None:
        """A sandbox of this set is gone (retired, or it never started)."""
        with self.lock:
            if not self._forked() and self.live[key] > 0:
                self.live[key] -= 1
                self.lock.notify()

    def refill(self, key: tuple[str, ...]) -> None:
        with self.lock:
            self._forked()
            missing = min(PREWARM_SPARES - len(self.spares.get(key, ())), SANDBOXES_PER_SET - self.live[key])
            missing = max(missing, 0)
            self.live[key] += missing
            if not self.registered:
                atexit.register(self.close_all)
                self.registered = True
        for started in range(missing):
            try:
                # Not tied to this thread (it may end first); a spare exits by itself when the caller
                # goes away (its stdin closes), and a running one when its wall limit has passed.
                spare = _Harness.spawn(_bwrap(), key, die_with_parent=False)
            except (OSError, SandboxError):
                for _ in range(missing - started):
                    self.forget(key)
                return
            with self.lock:
                self.spares.setdefault(key, []).append(spare)
                self.lock.notify()

    def close_all(self) -> None:
        with self.lock:
            spares = [spare for waiting in self.spares.values() for spare in waiting]
            mine = not self._forked()
            for key, waiting in self.spares.items():
                self.live[key] -= len(waiting)
            self.spares = {}
        if mine:
            for spare in spares:
                spare.stop()
            deadline = time.monotonic() + STOP_SECONDS
            for spare in spares:
                spare.close(wait=deadline - time.monotonic())


_POOL = _Pool()


class _Capture:
    """Feeds one job and reads stdout, stderr and the result pipe until the harness reports it clean
    again (or goes away), keeping at most the limits in memory."""

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
        self.reported = False  # the harness's result and the program's report have arrived
        self.ready = False  # then the harness reported the sandbox clean; all of this job's output is read
        self._line_at = 0  # start of the first result-pipe line not yet looked at
        self._search_at = 0  # no newline in res[_line_at:_search_at]
        self._expect = "result"  # the result head, then the report, then "ready" (or "retired")

    def pump(self, harness: _Harness, job: bytes) -> None:
        proc = harness.proc
        if proc.stdin is None or proc.stdout is None or proc.stderr is None:  # spawned with three pipes
            raise SandboxError("the sandbox harness has no pipes")
        streams = {proc.stdout.fileno(): "out", proc.stderr.fileno(): "err", harness.read_fd: "res"}
        stdin = proc.stdin.fileno()  # stays open: the harness waits on it for its next job
        pending = memoryview(len(job).to_bytes(8, "big") + job)  # framed: see the harness's _read_job
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
                    if self.reported:
                        return  # its cleanup did not finish: not ready, the caller retires it
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
                            pending = pending[os.write(stdin, pending[: 1 << 16]) :]
                        except BlockingIOError:
                            continue
                        except OSError:  # the harness died before taking its job
                            pending = pending[:0]
                        if not pending:
                            selector.unregister(stdin)
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
                    if streams[key.fd] != "res":
                        continue
                    if not self.started and b'{"event":"started"}' in self.res:
                        self.started = True
                        deadline = time.monotonic() + self.limits.wall_seconds
                    was_reported = self.reported
                    if self._job_over():
                        if self.ready:  # every other process of the sandbox is gone: their output is all here
                            self.ready = self._drain(proc.stdout.fileno(), "out") and self._drain(
                                proc.stderr.fileno(), "err"
                            )
                        return
                    if self.reported and not was_reported:
                        deadline = time.monotonic() + CLEANUP_SECONDS

    def _job_over(self) -> bool:
        """Look at the result pipe's new lines: True once the harness said ``ready`` or anything else after
        the report (then ``ready`` is set only for exactly one well-formed ``ready`` line, nothing after it)."""
        while True:
            end = self.res.find(b"\n", self._search_at)
            if end < 0:
                self._search_at = len(self.res)
                return False
            line = bytes(self.res[self._line_at : end])
            self._line_at = self._search_at = end + 1
            if self._expect == "result":
                if line.startswith(b'{"event": "result", '):  # the harness's head: the report follows
                    self._expect = "report"
            elif self._expect == "report":
                self._expect = "ready"
                self.reported = True
            else:
                message = _parse_bounded(line)
                self.ready = (
                    isinstance(message, dict)
                    and message.get("event") == "ready"
                    and type(message.get("jobs")) is int
                    and self._line_at == len(self.res)
                )
                return True

    def _drain(self, fd: int, stream: str) -> bool:
        """Read what is left in a pipe whose writers are all gone; False if a limit is exceeded or it closed."""
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return True
            if not chunk or self._take(stream, chunk):
                return False

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
        """The harness's reports, parsed with bounds; anything malformed is skipped, never raised."""
        violations: list[dict] = []
        final: dict | None = None
        lines = iter(bytes(self.res).split(b"\n"))
        for raw in lines:
            message = _parse_bounded(raw) if raw.strip() else None
            if not isinstance(message, dict):
                continue
            if message.get("event") == "violation" and len(violations) < 20:
                line = message.get("line")
                violations.append(
                    {"what": _text(message.get("what"), 300), "line": line if type(line) is int else None}
                )
            elif message.get("event") == "result":
                final = message
                if message.get("report_follows") is True:  # the program's report: its own line, never spliced in
                    raw = next(lines, b"")
                    if raw.count(b"[") + raw.count(b"{") > MAX_RESULT_CONTAINERS:  # before building them
                        final["report"] = {
                            "status": "error",
                            "kind": "too_large",
                            "message": (f"the result holds more than {MAX_RESULT_CONTAINERS:,} lists and dicts"),
                        }
                        continue
                    report = _parse_bounded(raw)
                    if isinstance(report, dict) and report.get("status") == "ok" and not _valid_unicode(raw, report):
                        report = None  # a result with a lone surrogate cannot be written to a trace or cache
                    final["report"] = (
                        report
                        if isinstance(report, dict)
                        else {
                            "status": "error",
                            "kind": "type",
                            "message": (
                                f"the result is not plain JSON data (finite numbers, valid Unicode text) nested at "
                                f"most {MAX_RESULT_DEPTH - 1} levels deep"
                            ),
                        }
                    )
        return violations, final


def _parse_bounded(raw: bytes) -> Any:
    """JSON from the sandbox: None unless it parses within the nesting bound (never raises)."""
    try:
        value = json.loads(raw, parse_constant=_refuse, parse_float=_finite)
    except (ValueError, RecursionError, MemoryError):
        return None
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:  # only containers are pushed: a flat list of a million numbers is one step
        item, depth = stack.pop()
        nested = [v for v in (item.values() if isinstance(item, dict) else item) if isinstance(v, (list, dict))]
        if nested:
            if depth >= MAX_RESULT_DEPTH:
                return None
            stack.extend((v, depth + 1) for v in nested)
    return value


_LONE_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # any surrogate escape; pairs are checked after parsing


def _valid_unicode(raw: bytes, report: dict) -> bool:
    if not _LONE_SURROGATE_ESCAPE.search(raw):  # the common case: no surrogate escape at all
        return True
    try:
        json.dumps(report.get("result"), ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        return False
    return True


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON data")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: a result must survive json.dumps(allow_nan=False) downstream
        raise ValueError(f"{text[:20]} is not a finite number")
    return value


def _text(value: Any, limit: int = MAX_MESSAGE_CHARS) -> str:
    """A report's text as valid UTF-8 (lone surrogates replaced: it is written to traces and caches), capped."""
    text = value if isinstance(value, str) else ""
    text = text if len(text) <= limit else text[: limit - 20] + " ... (cut)"
    return text.encode("utf-8", "replace").decode("utf-8")


def _part(message: dict, key: str) -> dict[str, Any]:
    """A section of the harness's final message; anything but an object reads as empty."""
    value = message.get(key)
    return value if isinstance(value, dict) else {}


def _outcome(capture: _Capture, status: int | None, limits: SandboxLimits, duration: float) -> SandboxResult:
    stdout = capture.out.decode("utf-8", "replace")
    stderr = capture.err.decode("utf-8", "replace")
    violations, final = capture.messages()
    final = final or {}
    report, exit_info = _part(final, "report"), _part(final, "exit")
    signal_number, code = exit_info.get("signal"), exit_info.get("code")
    exit_status = -signal_number if type(signal_number) is int else code if type(code) is int else None
    timings, isolation = _part(final, "timings"), _part(final, "isolation")
    common: dict[str, Any] = dict(
        stdout=stdout,
        stderr=stderr,
        duration=duration,
        timings={k: v for k, v in timings.items() if isinstance(v, (int, float))},
        isolation=isolation,
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
        return fail(
            "resource",
            f"the program printed more than {_size(limits.output_bytes)} and was stopped; "
            "print less (the caller reads the defined result, not the printed output)",
        )
    if capture.result_exceeded:
        return fail("too_large", f"the result is larger than {_size(limits.result_bytes)}")
    if capture.startup_timed_out:
        return fail("internal", f"the sandbox did not start the program within {STARTUP_SECONDS:g} s")
    if capture.timed_out:
        return fail(
            "timeout",
            f"the program ran longer than {limits.wall_seconds:g} s (wall clock) and was "
            "stopped; look for an endless loop or a search that is too large",
        )
    if report.get("status") == "ok" and "result" in report:
        return SandboxResult(True, result=report["result"], **common)
    if report.get("status") == "error":
        kind = report.get("kind")  # one of ERROR_KINDS, or a kind of the caller's collect code
        kind = kind if isinstance(kind, str) and kind.isidentifier() and len(kind) <= 40 else "runtime"
        if kind == "internal" and exit_info.get("program_ran") is not False:  # "the sandbox cannot run" would stop
            kind = "runtime"  # the caller's whole run: once the program ran, it could have chosen this report
        line = report.get("line")
        return fail(
            kind,
            _text(report.get("message")) or "the program failed",
            line=line if type(line) is int else None,
            exception=_text(report.get("exception"), 100) or None,
            name=_text(report.get("name"), 200) or None,
        )
    if not capture.started:
        return fail("internal", _startup_failure(stderr, status))
    if report.get("status") != "exited":  # the harness is gone: once the program ran, the program's doing
        return fail(
            "forbidden",
            "the sandbox stopped while the program ran, before it could report (the program signalled it or "
            "exhausted a resource it needs); the program's result is not accepted",
        )
    # The program's process ended without a report: a signal, os._exit, a crash in native code.
    cpu_used = exit_info.get("cpu")
    cpu = float(cpu_used) if isinstance(cpu_used, (int, float)) else 0.0
    tail = stderr.strip()[-1500:]
    detail = f"\nLast error output:\n{tail}" if tail else ""
    if exit_status is not None and exit_status < 0:
        sig = -exit_status
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits.cpu_seconds - 0.05):
            return fail(
                "timeout",
                f"the program used more than {limits.cpu_seconds:g} s of CPU time and was "
                "stopped; look for an endless loop or a search that is too large",
            )
        if sig == signal.SIGXFSZ:
            return fail("resource", f"the program wrote a file larger than {_size(limits.file_bytes)}")
        if sig == signal.SIGSEGV:
            return fail(
                "resource",
                "the program crashed (segmentation fault), usually a recursion that went "
                "too deep after sys.setrecursionlimit, or a native library failing; use loops" + detail,
            )
        if sig == signal.SIGSYS:
            return fail("forbidden", "the program made a system call the sandbox does not allow" + detail)
        if sig == signal.SIGKILL:
            return fail("resource", "the program was killed (out of memory or another limit)" + detail)
        return fail("runtime", f"the program was terminated by {name}" + detail)
    if report.get("forged"):
        return fail(
            "forbidden",
            "the program wrote on the sandbox's own result channel and ended the "
            "interpreter; its result is not accepted. Define the result and let the program end normally",
        )
    if "MemoryError" in stderr:
        return fail("resource", f"the program ran out of memory (limit {_size(limits.memory_bytes)})" + detail)
    return fail(
        "runtime",
        f"the program ended the interpreter (exit status {exit_status}, e.g. os._exit) before "
        "a result was reported; let the program end normally" + detail,
    )


def _startup_failure(stderr: str, status: int | None) -> str:
    """One line: why the sandbox could not run the program (fail closed: it did not run)."""
    for line in stderr.splitlines():
        if line.startswith("bwrap:"):
            return (
                f"the sandbox could not be set up ({line.strip()[:300]}); the program did not run. It needs "
                "bubblewrap with user namespaces enabled (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu "
                "the AppArmor profile for bwrap); " + INSTALL_HINT
            )
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    tail = " ".join(stderr.strip().splitlines()[-3:])[-500:]
    return f"the sandbox stopped before the program started (exit status {code})" + (f": {tail}" if tail else "")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def _has_exited(pid: int) -> bool:
    """Whether bubblewrap has exited, without reaping it."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _reap(proc: subprocess.Popen) -> int | None:
    """Wait for bubblewrap (it was SIGKILLed if still running); its wait status."""
    try:
        _, status = os.waitpid(proc.pid, 0)
    except ChildProcessError:  # already reaped by poll()
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return status


__all__ = [
    "ERROR_KINDS",
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "prewarm",
    "require_isolation",
    "run_program",
    "shutdown",
]
