"""Child side of :mod:`autonesy.tools.sandbox`: run as a script (``python -I -B`` this file).

Never imported by the parent. It starts with the caller's privileges and, in this order: leaves the
network (a fresh network namespace), imports the trusted modules named in ``warm.json`` of its
private control directory, waits for its job on stdin (so a sandbox can be started ahead of need),
sets the resource limits, compiles the program, drops to the sandbox uid (when started as root),
runs the trusted ``setup`` code, installs an audit hook, runs the untrusted program, runs the
trusted ``collect`` code, and writes newline-delimited JSON messages to the result pipe. Nothing is
ever unpickled on either side.

Messages on the result pipe (one JSON object per line):
    {"event": "started"}                                    the program is about to run (wall clock starts)
    {"event": "violation", "what": ..., "line": ...}        as soon as the program tries something forbidden
    {"event": "result", "status": "ok", "result": ..., ...}
    {"event": "result", "status": "error", "kind": ..., "message": ..., "line": ..., ...}
"""

import json
import os
import resource
import signal
import sys
import time

_START = time.perf_counter()

PROGRAM = "<program>"
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38


class ProgramError(Exception):
    """Raised by trusted collect code: the program's outcome is wrong in a way the LLM can fix."""

    def __init__(self, kind, message, line=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


class SandboxViolation(PermissionError):
    """Raised by the audit hook."""


def _send(fd, obj):
    data = (json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n").encode()
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _program_line(tb_or_frame=None):
    """Innermost line of the untrusted program in a traceback (or the current stack)."""
    line = None
    if tb_or_frame is None:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == PROGRAM:
                return frame.f_lineno
            frame = frame.f_back
        return None
    tb = tb_or_frame
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == PROGRAM:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _set_limits(limits, root_mode):
    def setlim(which, soft, hard=None):
        hard = soft if hard is None else hard
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))

    setlim(resource.RLIMIT_CORE, 0)
    cpu = max(1, int(limits["cpu_seconds"] + 0.999))  # RLIMIT_CPU counts whole seconds
    setlim(resource.RLIMIT_CPU, cpu, cpu + 1)
    setlim(resource.RLIMIT_AS, int(limits["memory_bytes"]))
    setlim(resource.RLIMIT_FSIZE, int(limits["file_bytes"]))
    nproc = int(limits["max_processes"]) + 1  # + the harness's watchdog thread
    if not root_mode:  # RLIMIT_NPROC counts every task of the uid, and here that uid is the caller's
        nproc += _tasks_of_uid(os.getuid())
    setlim(resource.RLIMIT_NPROC, nproc)


def _tasks_of_uid(uid):
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat("/proc/" + entry).st_uid == uid:
                    count += len(os.listdir("/proc/" + entry + "/task"))
            except OSError:
                pass
    return count


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _leave_network(libc, root_mode):
    """A fresh network namespace has only a loopback device, and it is down: nothing is reachable."""
    if root_mode:
        for flags in (CLONE_NEWNET | CLONE_NEWIPC, CLONE_NEWNET):
            if libc.unshare(flags) == 0:
                return "namespace"
        return "audit-hook only (unshare refused)"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        return "audit-hook only (unprivileged namespaces refused)"
    try:  # keep our own ids inside the new user namespace
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")
    except OSError:
        pass
    return "namespace (user namespace)"


def _drop_privileges(uid, workdir, control):
    """Become ``uid``; sys.path entries it cannot read are reached through descriptors kept open."""
    keep = {}
    for entry in sys.path:
        if entry and entry not in keep and os.path.isdir(entry):
            try:
                keep[entry] = os.open(entry, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                pass
    for candidate in (uid, 65534):  # 65534 (nobody) when the uid lies outside our user-namespace map
        with open(os.path.join(control, "uid"), "w") as f:  # the caller kills whatever runs as this uid
            f.write(str(candidate))
        try:
            os.chown(workdir, candidate, candidate)
            os.chmod(workdir, 0o700)
            os.setgroups([])
            os.setresgid(candidate, candidate, candidate)
            os.setresuid(candidate, candidate, candidate)
            uid = candidate
            break
        except OSError:
            if candidate == 65534:
                raise
    moved = {}  # unreadable directory -> /proc/self/fd/N, a magic link that needs no search rights above it
    for index, entry in enumerate(list(sys.path)):
        if entry in keep and not os.access(entry, os.R_OK | os.X_OK):
            moved[entry] = sys.path[index] = f"/proc/self/fd/{keep[entry]}"
    for entry, fd in keep.items():
        if entry not in moved:
            os.close(fd)
    if moved:  # packages imported already (collections, encodings, ...) find submodules through __path__
        for module in list(sys.modules.values()):
            search = getattr(module, "__path__", None)
            if isinstance(search, list):
                for i, directory in enumerate(search):
                    for entry, link in moved.items():
                        if isinstance(directory, str) and (directory == entry or directory.startswith(entry + os.sep)):
                            search[i] = link + directory[len(entry):]
                            break
    return uid


def _make_hook(workdir, result_fd, violations, trusted_thread):
    """Defence in depth behind the OS limits: block network, processes, signals, writes outside."""
    own_pid = os.getpid()
    root = os.path.realpath(workdir)
    write_bits = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    path_events = {  # event -> positions of path arguments that get written/changed
        "os.remove": (0,), "os.rmdir": (0,), "os.rename": (0, 1), "os.mkdir": (0,), "os.symlink": (1,),
        "os.link": (0, 1), "os.chmod": (0,), "os.chown": (0,), "os.truncate": (0,), "os.utime": (0,),
        "os.chflags": (0,), "os.lchflags": (0,), "os.setxattr": (0,), "os.removexattr": (0,),
        "shutil.rmtree": (0,), "shutil.copyfile": (1,), "shutil.copymode": (1,), "shutil.copystat": (1,),
        "shutil.chown": (0,), "shutil.move": (0, 1), "shutil.unpack_archive": (1,),
        "shutil.make_archive": (0,), "tempfile.mkstemp": (0,), "tempfile.mkdtemp": (0,),
    }
    dir_fd_position = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 2, "os.chmod": 2, "os.chown": 3, "os.utime": 3}
    process_events = {
        "os.fork": "starting a process (os.fork)", "os.forkpty": "starting a process (os.forkpty)",
        "os.system": "running a shell command (os.system)", "os.exec": "replacing the process (os.exec*)",
        "os.posix_spawn": "starting a process (os.posix_spawn)", "os.spawn": "starting a process (os.spawn*)",
        "subprocess.Popen": "starting a process (subprocess)", "os.startfile": "starting a program",
        "pty.spawn": "starting a process (pty.spawn)",
    }
    network_events = {
        "socket.__new__", "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
        "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr",
        "socket.getnameinfo", "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect",
        "webbrowser.open",
    }
    native_events = {
        "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
        "ctypes.memmove", "ctypes.memset", "ctypes.call_function", "ctypes.string_at", "ctypes.wstring_at",
        "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    }
    import threading

    get_ident = threading.get_ident
    state = threading.local()  # per thread: another thread's hook call must not open a gap

    def resolve(path, dir_fd=None):
        if isinstance(path, int):
            return None
        try:
            path = os.fsdecode(path)
        except TypeError:
            return None
        if not os.path.isabs(path):
            base = os.getcwd()
            if isinstance(dir_fd, int) and dir_fd >= 0:
                base = os.readlink(f"/proc/self/fd/{dir_fd}")
            path = os.path.join(base, path)
        return os.path.realpath(path)

    def inside(real):
        return real is None or real == root or real.startswith(root + os.sep) or real == os.devnull

    def deny(what):
        line = _program_line()
        if len(violations) < 20:
            violations.append({"what": what, "line": line})
            try:
                _send(result_fd, {"event": "violation", "what": what, "line": line})
            except OSError:
                pass
        raise SandboxViolation(f"forbidden in the sandbox: {what}")

    def proc_path_of_other(real):
        parts = real.split(os.sep)
        return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != own_pid

    def hook(event, args):
        if getattr(state, "busy", False) or get_ident() == trusted_thread:
            return
        state.busy = True
        try:
            if event == "open":
                path, mode, flags = (tuple(args) + (None, None, None))[:3]
                real = resolve(path)
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & write_bits
                )
                if writing and not inside(real):
                    deny(f"writing the file {real} outside the working directory")
                if real is not None and proc_path_of_other(real):
                    deny(f"reading {real} (another process's data)")
            elif event in path_events:
                dir_fd = None
                if event in dir_fd_position and len(args) > dir_fd_position[event]:
                    dir_fd = args[dir_fd_position[event]]
                for position in path_events[event]:
                    if position < len(args):
                        real = resolve(args[position], dir_fd)
                        if not inside(real):
                            deny(f"{event} on {real} outside the working directory")
            elif event in process_events:
                deny(process_events[event])
            elif event in ("os.kill", "os.killpg"):
                if event == "os.killpg" or args[0] != own_pid:
                    deny(f"sending a signal to another process ({event} {args[0]})")
            elif event in network_events:
                deny(f"network access ({event})")
            elif event in native_events:
                deny(f"low-level access ({event})")
            elif event == "sqlite3.connect" and args and args[0] != ":memory:":
                if not inside(resolve(args[0])):
                    deny("opening a database outside the working directory")
        finally:
            state.busy = False

    return hook


def _describe_exception(exc, code_lines):
    kind = "runtime"
    if isinstance(exc, RecursionError):
        kind = "resource"
    elif isinstance(exc, MemoryError):
        kind = "resource"
    elif isinstance(exc, SandboxViolation):
        kind = "forbidden"
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    frames = []  # the innermost frames of the program (a deep recursion has a million)
    depth = 0
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == PROGRAM:
            depth += 1
            frames.append((tb.tb_lineno, code.co_name))
            if len(frames) > 16:
                del frames[:8]
        tb = tb.tb_next
    line = frames[-1][0] if frames else None
    message = text
    if line is not None:
        source = code_lines[line - 1].strip() if 0 < line <= len(code_lines) else ""
        message = f"{text} (line {line}: {source})" if source else f"{text} (line {line})"
        if len(frames) > 1:
            calls = " -> ".join(f"line {n} in {name}" for n, name in frames[-8:])
            more = f"{depth} calls deep, innermost: " if depth > 8 else ""
            message += f"\nCall chain in your code ({more}{calls})"
    if isinstance(exc, RecursionError) or depth > 10000:
        kind = "resource" if kind == "runtime" else kind
        message += "\nThe recursion went too deep; use a loop instead."
    info = {"kind": kind, "message": message, "line": line, "exception": type(exc).__name__}
    if isinstance(exc, NameError) and getattr(exc, "name", None):
        info["name"] = exc.name
    if isinstance(exc, AttributeError) and getattr(exc, "name", None):
        info["name"] = exc.name
    return info


def _read_job():
    """The job arrives on stdin once the caller needs this (possibly pre-started) sandbox."""
    chunks = []
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return json.loads(b"".join(chunks)) if chunks else None


def _start_watchdog(parent_pid, wall_seconds, own_uid):
    """Stop the sandbox if the caller disappears, or long after its wall limit (the caller's backstop)."""
    import threading

    deadline = time.monotonic() + wall_seconds + 5.0
    kill, exit_now, getppid, sleep, monotonic = os.kill, os._exit, os.getppid, time.sleep, time.monotonic

    def watch():
        while getppid() == parent_pid and monotonic() < deadline:
            sleep(0.25)
        if own_uid:
            try:  # as the sandbox's own uid: every process of that uid but this one
                kill(-1, signal.SIGKILL)
            except OSError:
                pass
        exit_now(70)

    thread = threading.Thread(target=watch, name="sandbox-watchdog", daemon=True)
    thread.start()
    return thread.ident


def main():
    control = sys.argv[1]
    result_fd = int(sys.argv[2])
    with open(os.path.join(control, "warm.json"), encoding="utf-8") as f:
        warm = json.load(f)
    root_mode = os.geteuid() == 0
    libc = _libc()
    if warm.get("pdeathsig"):
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != warm["parent_pid"]:
        return
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    isolation = {"network": _leave_network(libc, root_mode)}
    timings = {}
    t = time.perf_counter()
    for module in warm.get("preload", ()):
        __import__(module)
    timings["imports"] = round(time.perf_counter() - t, 4)

    job = _read_job()
    if job is None:
        return  # the caller went away (or discarded this spare) before giving it a job
    _STAGE[0] = "job"
    limits = job["limits"]
    workdir = warm["workdir"]
    used = resource.getrusage(resource.RUSAGE_SELF)
    _set_limits(dict(limits, cpu_seconds=limits["cpu_seconds"] + used.ru_utime + used.ru_stime), root_mode)

    code = job["code"]
    code_lines = code.splitlines()
    try:
        program = compile(code, PROGRAM, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno
        text = (exc.text or "").rstrip("\n")
        message = f"SyntaxError: {exc.msg} (line {line})"
        if text.strip():
            caret = " " * max((exc.offset or 1) - 1 - (len(text) - len(text.lstrip())), 0) + "^"
            message += f"\n    {text.strip()}\n    {caret}"
        _send(result_fd, {"event": "result", "status": "error", "kind": "syntax", "message": message,
                          "line": line, "exception": "SyntaxError", "isolation": isolation, "timings": timings})
        return
    except (ValueError, RecursionError, MemoryError) as exc:
        _send(result_fd, {"event": "result", "status": "error",
                          "kind": "resource" if isinstance(exc, MemoryError) else "syntax",
                          "message": f"the program cannot be compiled: {type(exc).__name__}: {exc}",
                          "line": None, "exception": type(exc).__name__, "isolation": isolation, "timings": timings})
        return

    own_uid = False
    if root_mode:
        isolation["uid"] = _drop_privileges(warm["uid_base"] + os.getpid(), workdir, control)
        own_uid = isolation["uid"] != 65534
    else:
        isolation["uid"] = f"{os.getuid()} (not root: the caller's own uid)"
    os.chdir(workdir)
    watchdog = _start_watchdog(warm["parent_pid"], limits["wall_seconds"], own_uid)
    _send(result_fd, {"event": "started"})

    submitted = []

    def submit(obj):
        """Hand the result to the caller (the last call wins)."""
        submitted[:] = [obj]

    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "submit": submit}
    namespace.update(job.get("inputs") or {})
    t = time.perf_counter()
    if job.get("setup"):
        exec(compile(job["setup"], "<setup>", "exec", dont_inherit=True), namespace)
    collect_globals = {"ProgramError": ProgramError, "NOTHING": _NOTHING, "__builtins__": __builtins__,
                       "__name__": "collect"}
    exec(compile(job["collect"], "<collect>", "exec", dont_inherit=True), collect_globals)
    collect = collect_globals["collect"]
    timings["setup"] = round(time.perf_counter() - t, 4)

    violations = []
    sys.addaudithook(_make_hook(workdir, result_fd, violations, watchdog))
    _STAGE[0] = "program"
    reserve = bytearray(4 << 20)  # released on MemoryError so the report can still be written
    status = {"status": "ok"}
    exited = None
    t = time.perf_counter()
    try:
        exec(program, namespace)
    except SystemExit as exc:
        line = _program_line(exc.__traceback__)
        if exc.code not in (None, 0):
            where = f" at line {line}" if line else ""
            status = {"status": "error", "kind": "runtime", "line": line, "exception": "SystemExit",
                      "message": f"the program called sys.exit({exc.code!r}){where}; do not call sys.exit/exit/quit"}
        else:
            exited = line if line is not None else "?"
    except BaseException as exc:  # noqa: BLE001 - everything the program raises is reported
        if isinstance(exc, MemoryError):
            del reserve
            namespace.clear()
        status = {"status": "error", **_describe_exception(exc, code_lines)}
    timings["program"] = round(time.perf_counter() - t, 4)

    if status["status"] == "ok":
        t = time.perf_counter()
        try:
            data = collect(namespace, submitted[0] if submitted else _NOTHING)
            payload = json.dumps(data, allow_nan=False, separators=(",", ":"))
        except ProgramError as exc:
            message = exc.message
            if exited is not None:
                message += f" (the program called sys.exit at line {exited}, before defining it)"
            status = {"status": "error", "kind": exc.kind, "message": message, "line": exc.line}
        except (TypeError, ValueError) as exc:
            if _program_line(exc.__traceback__) is not None:
                status = {"status": "error", **_describe_exception(exc, code_lines)}
            else:
                status = {"status": "error", "kind": "type", "line": None,
                          "message": f"the result is not plain JSON data (lists, numbers, strings, dicts): {exc}"}
        except BaseException as exc:  # noqa: BLE001
            status = {"status": "error", **_describe_exception(exc, code_lines)}
            status["message"] = "while reading the program's definitions: " + status["message"]
        else:
            timings["collect"] = round(time.perf_counter() - t, 4)
            head = json.dumps({"event": "result", "status": "ok", "timings": timings, "isolation": isolation,
                               "violations": violations}, separators=(",", ":"))
            _send_raw(result_fd, (head[:-1] + ',"result":' + payload + "}\n").encode())
            return
    status.update({"event": "result", "timings": timings, "isolation": isolation, "violations": violations})
    _send(result_fd, status)


_NOTHING = object()
_STAGE = ["setup"]


def _send_raw(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


if __name__ == "__main__":
    _result_fd = int(sys.argv[2])
    try:
        main()
    except BaseException as _exc:  # noqa: BLE001 - the harness itself failed; say so on the pipe
        try:
            # Before the program ran, a failure is the sandbox's own; after, the program broke the harness.
            _kind = "runtime" if _STAGE[0] == "program" else "internal"
            if isinstance(_exc, MemoryError):
                _kind = "resource"
            _send(_result_fd, {"event": "result", "status": "error", "kind": _kind, "line": None,
                               "message": f"the sandbox could not report the result: {type(_exc).__name__}: {_exc}"})
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
