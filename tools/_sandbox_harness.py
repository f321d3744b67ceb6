"""Inside side of :mod:`autonesy.tools.sandbox`: run as a script (``python -I -B`` this file) by bubblewrap.

Never imported by the parent. It starts inside the namespaces bubblewrap made (its own PID, mount,
network, IPC, UTS and, for a non-root caller, user namespace; a read-only view of the interpreter; a
private size-limited tmpfs at ``/sandbox``), mounts over it a tmpfs bounded in entries too (then a
non-root caller's harness drops the one capability it had for that), imports the trusted modules
named on its command line, waits for a job on stdin (so a sandbox can be started ahead of need),
and then **forks the program's process** from that clean, trusted state; the process:

    gets back the interpreter's signal dispositions (this process ignores every signal it can),
    sets the resource limits, drops to the sandbox uid (root caller: a uid of its own), installs a
    seccomp filter (no new processes, no exec, no ptrace, no namespaces, no sockets but AF_UNIX,
    no signals to other processes, also none through a descriptor's owner, no limits of other
    processes, no memfd, SysV IPC, message queues or xattr changes: RAM outside both the memory
    limit and the tmpfs), compiles and runs the trusted ``setup``, installs the audit
    hook (a second layer with clear messages), runs the untrusted program and the trusted
    ``collect``, and reports on a private pipe to this process.

This process never runs untrusted code and alone holds the result pipe to the caller. It reads the
program's pipe with a size bound, accepts only a final message that carries the token it gave the
program's process (so bytes the program scribbles on its descriptors are not a result), forwards
that message's JSON unparsed (the caller parses it once, with bounds on size and depth), and
reports the program's exit (signal, status, CPU seconds) itself. It is not dumpable, so the
program's process (same uid for a non-root caller) can neither ptrace it nor open its ``/proc``
entries. Nothing is ever unpickled on either side.

One sandbox serves several jobs in turn (the imports are paid once). After each, this process kills
every other process of the PID namespace (it is PID 1: ``kill(-1)`` reaches all the others), reaps
them, empties ``/sandbox`` whatever the modes left in it, checks that no process and no file is left,
and only then reports ``ready``; otherwise it reports ``retired`` and exits. What a program changes in
its own process (modules, builtins, limits, environment, working directory) dies with it: this
process's state is what it was after the imports.

Messages on the result pipe (one JSON object per line):
    {"event": "started"}                                    the program is about to run (wall clock starts)
    {"event": "violation", "what": ..., "line": ...}        as soon as the program tries something forbidden
    {"event": "result", "exit": {"signal": n | null, "code": n | null, "cpu": s, "program_ran": bool}, "timings": ..., "isolation": ...,
     "report_follows": true}
    REPORT                                                  on the next line, as the program's process wrote it
    {"event": "ready", "jobs": n}                           clean again: waiting for job n + 1
    {"event": "retired", "why": ...}                        could not be made clean: exits
REPORT (from the program's process, or this one's own):
    {"status": "ok", "result": ...}
    {"status": "error", "kind": ..., "message": ..., "line": ..., "exception": ..., "name": ...}
    {"status": "exited", "forged": bool}                    ended without a report (signal, os._exit, crash)
"""

import ctypes  # trusted use only (prctl, seccomp), before any untrusted code runs
import gc
import json
import os
import resource
import select
import signal
import stat
import struct
import sys
import time

PROGRAM = "<program>"
WORKDIR = "/sandbox"
MAX_EXCEPTION_CHARS = 2000  # of an exception's text in a message (it goes back into a prompt)
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV = 0x2, 0x4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class ProgramError(Exception):
    """Raised by trusted collect code: the program's outcome is wrong in a way the LLM can fix."""

    def __init__(self, kind, message, line=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


class SandboxViolation(PermissionError):
    """Raised by the audit hook."""


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _send(fd, obj):
    _write_all(fd, (json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n").encode())


def _program_line(tb_or_frame=None):
    """Innermost line of the untrusted program in a traceback (or the current stack)."""
    line = None
    if tb_or_frame is None:
        frame = sys._getframe(1)
        while frame.f_code.co_filename != PROGRAM:
            caller = frame.f_back
            if caller is None:
                return None
            frame = caller
        return frame.f_lineno
    tb = tb_or_frame
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == PROGRAM:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# --- seccomp ---------------------------------------------------------------------------------------

# (audit arch, syscalls refused with EPERM, those whose arguments are checked). SysV IPC (shm, sem,
# msg) and POSIX message queues hold memory in the sandbox's IPC namespace, outside the address-space
# limit and the tmpfs size (6 x 512 MiB of shm held 3 GiB); xattr values on the tmpfs are kernel memory
# its size does not count (1 GiB accepted). Neither architecture has the 32-bit ``ipc`` multiplexer or
# ``fcntl64``, and other ABIs (i386, x32) are refused outright below.
_SYSCALLS = {
    "x86_64": (
        0xC000003E,
        {
            "fork": 57,
            "vfork": 58,
            "execve": 59,
            "execveat": 322,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "unshare": 272,
            "setns": 308,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "init_module": 175,
            "finit_module": 313,
            "mknod": 133,
            "mknodat": 259,
            "pidfd_send_signal": 424,
            "pidfd_open": 434,
            "pidfd_getfd": 438,
            "open_by_handle_at": 304,
            "kcmp": 312,
            "fsopen": 430,
            "fsmount": 432,
            "open_tree": 428,
            "move_mount": 429,
            "personality": 135,
            "tkill": 200,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "syslog": 103,
            "process_madvise": 440,
            "migrate_pages": 256,
            "move_pages": 279,
            "memfd_create": 319,
            "memfd_secret": 447,
            "shmget": 29,
            "shmat": 30,
            "shmctl": 31,
            "shmdt": 67,
            "semget": 64,
            "semop": 65,
            "semctl": 66,
            "semtimedop": 220,
            "msgget": 68,
            "msgsnd": 69,
            "msgrcv": 70,
            "msgctl": 71,
            "mq_open": 240,
            "mq_unlink": 241,
            "mq_timedsend": 242,
            "mq_timedreceive": 243,
            "mq_notify": 244,
            "mq_getsetattr": 245,
            "setxattr": 188,
            "lsetxattr": 189,
            "fsetxattr": 190,
            "removexattr": 197,
            "lremovexattr": 198,
            "fremovexattr": 199,
            "setxattrat": 463,
            "removexattrat": 466,
        },
        {
            "clone": 56,
            "clone3": 435,
            "socket": 41,
            "socketpair": 53,
            "kill": 62,
            "tgkill": 234,
            "prlimit64": 302,
            "fcntl": 72,
            "ioctl": 16,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "execve": 221,
            "execveat": 281,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "unshare": 97,
            "setns": 268,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "init_module": 105,
            "finit_module": 273,
            "mknodat": 33,
            "pidfd_send_signal": 424,
            "pidfd_open": 434,
            "pidfd_getfd": 438,
            "open_by_handle_at": 265,
            "kcmp": 272,
            "fsopen": 430,
            "fsmount": 432,
            "open_tree": 428,
            "move_mount": 429,
            "personality": 92,
            "tkill": 130,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "syslog": 116,
            "process_madvise": 440,
            "migrate_pages": 238,
            "move_pages": 239,
            "memfd_create": 279,
            "memfd_secret": 447,
            "shmget": 194,
            "shmat": 196,
            "shmctl": 195,
            "shmdt": 197,
            "semget": 190,
            "semop": 193,
            "semctl": 191,
            "semtimedop": 192,
            "msgget": 186,
            "msgsnd": 189,
            "msgrcv": 188,
            "msgctl": 187,
            "mq_open": 180,
            "mq_unlink": 181,
            "mq_timedsend": 182,
            "mq_timedreceive": 183,
            "mq_notify": 184,
            "mq_getsetattr": 185,
            "setxattr": 5,
            "lsetxattr": 6,
            "fsetxattr": 7,
            "removexattr": 14,
            "lremovexattr": 15,
            "fremovexattr": 16,
            "setxattrat": 463,
            "removexattrat": 466,
        },
        {
            "clone": 220,
            "clone3": 435,
            "socket": 198,
            "socketpair": 199,
            "kill": 129,
            "tgkill": 131,
            "prlimit64": 261,
            "fcntl": 25,
            "ioctl": 29,
        },
    ),
}
_LD_W_ABS, _JEQ, _JSET, _JGE, _RET = 0x20, 0x15, 0x45, 0x35, 0x06
_ALLOW, _KILL = 0x7FFF0000, 0x80000000
_EPERM, _ENOSYS = 0x00050000 | 1, 0x00050000 | 38
_CLONE_THREAD, _AF_UNIX = 0x00010000, 1
# Commands that make the kernel signal another process when a descriptor is ready (SIGIO/SIGURG or a
# signal of the program's choice): fcntl F_SETOWN, F_SETSIG, F_SETOWN_EX; ioctl FIOSETOWN, SIOCSPGRP on
# a socket. A non-root caller's program shares its uid with the harness, which the kernel would signal.
_FCNTL_SIGNAL_OWNER = (8, 10, 15)
_IOCTL_SIGNAL_OWNER = (0x8901, 0x8902)


def _seccomp_program(machine, own_pid):
    """A classic-BPF filter: refuse what a formula-building program never needs."""
    arch, denied, special = _SYSCALLS[machine]

    def ins(code, k, jt=0, jf=0):
        return (code, jt, jf, k)

    def arg0():
        return ins(_LD_W_ABS, 16)  # low 32 bits of args[0] (little endian)

    def refused_values(values):  # the accumulator holds an argument: EPERM for these values, allow others
        body = [ins(_JEQ, value, len(values) - i, 0) for i, value in enumerate(values)]
        return body + [ins(_RET, _ALLOW), ins(_RET, _EPERM)]

    rules = []  # (syscall number, body that ends in a return)
    for nr in denied.values():
        rules.append((nr, [ins(_RET, _EPERM)]))
    rules.append((special["clone3"], [ins(_RET, _ENOSYS)]))  # the C library falls back to clone
    rules.append((special["clone"], [arg0(), ins(_JSET, _CLONE_THREAD, 0, 1), ins(_RET, _ALLOW), ins(_RET, _EPERM)]))
    for name in ("socket", "socketpair"):
        rules.append((special[name], [arg0(), ins(_JEQ, _AF_UNIX, 0, 1), ins(_RET, _ALLOW), ins(_RET, _EPERM)]))
    for name in ("kill", "tgkill"):
        rules.append((special[name], [arg0(), ins(_JEQ, own_pid, 0, 1), ins(_RET, _ALLOW), ins(_RET, _EPERM)]))
    # Limits of itself only (pid 0 or its own): a non-root caller's program shares the harness's uid,
    # and prlimit on the harness or on PID 1 would kill them.
    rules.append(
        (
            special["prlimit64"],
            [arg0(), ins(_JEQ, 0, 1, 0), ins(_JEQ, own_pid, 0, 1), ins(_RET, _ALLOW), ins(_RET, _EPERM)],
        )
    )
    # the command is args[1], an unsigned int to the kernel: its low 32 bits are all of it
    rules.append((special["fcntl"], [ins(_LD_W_ABS, 24), *refused_values(_FCNTL_SIGNAL_OWNER)]))
    rules.append((special["ioctl"], [ins(_LD_W_ABS, 24), *refused_values(_IOCTL_SIGNAL_OWNER)]))
    prog = [ins(_LD_W_ABS, 4), ins(_JEQ, arch, 1, 0), ins(_RET, _KILL), ins(_LD_W_ABS, 0)]
    if machine == "x86_64":  # the x32 ABI reuses numbers with bit 30 set
        prog += [ins(_JGE, 0x40000000, 0, 1), ins(_RET, _EPERM)]
    for nr, body in rules:
        prog.append(ins(_JEQ, nr, 0, len(body)))
        prog.extend(body)
    prog.append(ins(_RET, _ALLOW))
    return prog


def _install_seccomp(libc, own_pid):
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        raise OSError(f"no seccomp filter for {machine} (x86_64 and aarch64 only)")
    prog = _seccomp_program(machine, own_pid)
    raw = b"".join(struct.pack("HBBI", *i) for i in prog)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(prog), ctypes.cast(buffer, ctypes.c_void_p))
    if (
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0
    ):
        raise OSError(ctypes.get_errno(), "the seccomp filter could not be installed")


# --- the working directory -------------------------------------------------------------------------


def _mount_workdir(libc, workdir):
    """A tmpfs of our own at /sandbox, bounded in bytes and in inodes; the inode bound, or None.

    bubblewrap's tmpfs has a size but no ``nr_inodes``: each file, directory or link on it holds an
    inode and a dentry of kernel memory that its size does not count (a program made 388,000
    directories, ~480 MiB of slab, in 15 s). This process, in a mount namespace of its own, mounts
    one with both bounds over it. Where it may not (e.g. an AppArmor profile refusing capabilities
    to bubblewrap's children), bubblewrap's tmpfs stays and the inodes are not bounded.
    """
    if libc.unshare(CLONE_NEWNS) != 0:
        return None
    options = f"size={int(workdir['bytes'])},nr_inodes={int(workdir['inodes'])},mode=0700".encode()
    if libc.mount(b"tmpfs", WORKDIR.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        return None
    return int(workdir["inodes"])


def _drop_capabilities(libc):
    """A non-root caller's harness was given CAP_SYS_ADMIN (in its user namespace) only to mount /sandbox."""

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    none = (Data * 2)()
    if libc.capset(ctypes.byref(Header(_LINUX_CAPABILITY_VERSION_3, 0)), none) != 0:
        raise OSError(ctypes.get_errno(), "the sandbox could not drop its capabilities")


# --- signals -------------------------------------------------------------------------------------------


def _ignore_signals():
    """Ignore every signal that can be ignored; return the dispositions the program's process gets back.

    The kernel lets a signal reach a namespace's PID 1 only where it has a handler (Python's SIGINT), but
    a harness killed by a signal would end a program's run as if the sandbox were unavailable. SIGCHLD
    keeps its default (ignored all the same): set to SIG_IGN, the kernel would reap the program's process
    itself and its exit status (signal, CPU time) would be lost.
    """
    dispositions = {}
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            continue
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):  # the C library's own real-time signals cannot be changed
            continue
        dispositions[sig] = _AT_START_UP.get(sig, signal.SIG_DFL)
    return dispositions


# What a Python started from a plain shell has, whatever this process inherited: under ``nohup`` or from a
# background job, SIGHUP or SIGINT arrive ignored, and the program would otherwise run with them ignored.
_AT_START_UP = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGPIPE: signal.SIG_IGN,
    signal.SIGXFSZ: signal.SIG_IGN,
}


# --- the program's process -------------------------------------------------------------------------


def _set_limits(limits):
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
    setlim(resource.RLIMIT_NOFILE, 256)
    # Threads only (the seccomp filter refuses new processes); counted per uid in this user namespace.
    setlim(resource.RLIMIT_NPROC, int(limits["max_processes"]) + _tasks_here())


def _tasks_here():
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += len(os.listdir("/proc/" + entry + "/task"))
            except OSError:
                pass
    return count


def _make_hook(violations, send_violation):
    """Defence in depth behind the OS layer: clear messages for network, processes, signals, writes outside."""
    own_pid = os.getpid()
    root = WORKDIR
    write_bits = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    path_events = {  # event -> positions of path arguments that get written/changed
        "os.remove": (0,),
        "os.rmdir": (0,),
        "os.rename": (0, 1),
        "os.mkdir": (0,),
        "os.symlink": (1,),
        "os.link": (0, 1),
        "os.chmod": (0,),
        "os.chown": (0,),
        "os.truncate": (0,),
        "os.utime": (0,),
        "os.chflags": (0,),
        "os.lchflags": (0,),
        "os.setxattr": (0,),
        "os.removexattr": (0,),
        "shutil.rmtree": (0,),
        "shutil.copyfile": (1,),
        "shutil.copymode": (1,),
        "shutil.copystat": (1,),
        "shutil.chown": (0,),
        "shutil.move": (0, 1),
        "shutil.unpack_archive": (1,),
        "shutil.make_archive": (0,),
        "tempfile.mkstemp": (0,),
        "tempfile.mkdtemp": (0,),
    }
    dir_fd_position = {"os.remove": 1, "os.rmdir": 1, "os.mkdir": 2, "os.chmod": 2, "os.chown": 3, "os.utime": 3}
    process_events = {
        "os.fork": "starting a process (os.fork)",
        "os.forkpty": "starting a process (os.forkpty)",
        "os.system": "running a shell command (os.system)",
        "os.exec": "replacing the process (os.exec*)",
        "os.posix_spawn": "starting a process (os.posix_spawn)",
        "os.spawn": "starting a process (os.spawn*)",
        "subprocess.Popen": "starting a process (subprocess)",
        "os.startfile": "starting a program",
        "pty.spawn": "starting a process (pty.spawn)",
    }
    network_events = {
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyname_ex",
        "socket.gethostbyaddr",
        "socket.getnameinfo",
        "urllib.Request",
        "http.client.connect",
        "ftplib.connect",
        "smtplib.connect",
        "webbrowser.open",
    }
    native_events = {
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.memmove",
        "ctypes.memset",
        "ctypes.call_function",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "resource.setrlimit",
        "resource.prlimit",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    }
    import threading

    state = threading.local()  # per thread: another thread's hook call must not open a gap

    # The hook never runs program code: its arguments may be program objects (``sys.audit`` is callable by
    # the program), so it looks only at exact builtin values, found by type, never by isinstance (which
    # reads ``__class__``) or by comparing (``__eq__``/``__ne__``), and copies str/bytes subclasses in C.
    def text_of(value):
        kind = type(value)
        if issubclass(kind, str):
            return str.__getitem__(value, slice(None))
        if issubclass(kind, bytes):
            try:
                return os.fsdecode(bytes.__getitem__(value, slice(None)))
            except ValueError:  # undecodable
                return None
        return None

    def resolve(path, dir_fd=None):
        if issubclass(type(path), int):
            return None  # a file descriptor: nothing to resolve
        path = text_of(path)
        if path is None or "\0" in path:
            return "?"
        if not os.path.isabs(path):
            base = os.getcwd()
            if type(dir_fd) is int and dir_fd >= 0:
                try:
                    base = os.readlink(f"/proc/self/fd/{dir_fd}")
                except OSError:
                    return "?"
            path = os.path.join(base, path)
        return os.path.realpath(path)

    def inside(real):
        return real is None or real == root or real.startswith(root + os.sep) or real == os.devnull

    def deny(what):
        line = _program_line()
        if len(violations) < 20:
            violations.append({"what": what, "line": line})
            send_violation(what, line)
        raise SandboxViolation(f"forbidden in the sandbox: {what}")

    def proc_path_of_other(real):
        parts = real.split(os.sep)
        return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != own_pid

    def hook(event, args):
        if getattr(state, "busy", False):
            return
        state.busy = True
        try:
            if event == "open":
                path, mode, flags = (tuple(args) + (None, None, None))[:3]
                real = resolve(path)
                writing = (type(mode) is str and any(c in mode for c in "wax+")) or (
                    type(flags) is int and flags & write_bits
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
                target = args[0] if args else None
                if event == "os.killpg" or type(target) is not int or target != own_pid:
                    deny(f"sending a signal to another process ({event} {target if type(target) is int else '?'})")
            elif event in network_events:
                deny(f"network access ({event})")
            elif event in native_events:
                deny(f"low-level access ({event})")
            elif event == "sqlite3.connect" and args and text_of(args[0]) != ":memory:":
                if not inside(resolve(args[0])):
                    deny("opening a database outside the working directory")
        finally:
            state.busy = False

    return hook


def _describe_exception(exc, code_lines):
    kind = "runtime"
    if isinstance(exc, (RecursionError, MemoryError)):
        kind = "resource"
    elif isinstance(exc, SandboxViolation):
        kind = "forbidden"
    try:
        detail = str(exc)
        text = f"{type(exc).__name__}: {detail[:MAX_EXCEPTION_CHARS]}" if detail else type(exc).__name__
        if len(detail) > MAX_EXCEPTION_CHARS:
            text += f" ... ({len(detail) - MAX_EXCEPTION_CHARS} more characters cut)"
    except Exception:  # noqa: BLE001 - a program's exception whose __str__ fails
        text = type(exc).__name__
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
    if isinstance(exc, (NameError, AttributeError)) and isinstance(getattr(exc, "name", None), str):
        info["name"] = exc.name
    return info


def _run_program(job, channel, token, libc, sandbox_uid, dispositions):
    """The forked process: signals, limits, uid, seccomp, then setup, program and collect. Never returns."""
    status = None
    try:
        status = _program_outcome(job, channel, token, libc, sandbox_uid, dispositions)
    except BaseException as exc:  # noqa: BLE001 - the program broke the trusted code around it
        status = {
            "status": "error",
            "kind": "runtime",
            "line": None,
            "message": f"the program broke the sandbox's reporting: {type(exc).__name__}: {str(exc)[:200]}",
        }
    finally:
        try:
            if status is not None and "payload" not in status:
                _write_all(channel, b"R " + token + b" " + json.dumps(status, separators=(",", ":")).encode() + b"\n")
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)


def _program_outcome(job, channel, token, libc, sandbox_uid, dispositions):
    try:  # fail closed: without its limits, uid and filter the program does not run
        for sig, handler in dispositions.items():  # the interpreter's own, not the harness's ignored ones
            signal.signal(sig, handler)
        _set_limits(job["limits"])
        if sandbox_uid is not None:  # root caller: the program gets a uid of its own, without capabilities
            os.chown(WORKDIR, sandbox_uid, sandbox_uid)
            os.setgroups([])
            os.setresgid(sandbox_uid, sandbox_uid, sandbox_uid)
            os.setresuid(sandbox_uid, sandbox_uid, sandbox_uid)
        _install_seccomp(libc, os.getpid())
    except (OSError, ValueError) as exc:
        return {
            "status": "error",
            "kind": "internal",
            "line": None,
            "message": f"the sandbox could not restrict the program's process ({exc}); the program did not run",
        }

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
        return {"status": "error", "kind": "syntax", "message": message, "line": line, "exception": "SyntaxError"}
    except (ValueError, RecursionError, MemoryError) as exc:
        return {
            "status": "error",
            "kind": "resource" if isinstance(exc, MemoryError) else "syntax",
            "message": f"the program cannot be compiled: {type(exc).__name__}: {exc}",
            "line": None,
            "exception": type(exc).__name__,
        }

    submitted: list[object] = []

    def submit(obj):
        """Hand the result to the caller (the last call wins)."""
        submitted[:] = [obj]

    namespace = {"__name__": "__main__", "__builtins__": __builtins__, "submit": submit}
    namespace.update(job.get("inputs") or {})
    if job.get("setup"):
        exec(compile(job["setup"], "<setup>", "exec", dont_inherit=True), namespace)
    collect_globals: dict[str, object] = {
        "ProgramError": ProgramError,
        "NOTHING": _NOTHING,
        "__builtins__": __builtins__,
        "__name__": "collect",
    }
    exec(compile(job["collect"], "<collect>", "exec", dont_inherit=True), collect_globals)
    collect = collect_globals["collect"]
    if not callable(collect):  # the trusted collect code defines it; never the program
        raise RuntimeError("the collect code defines no collect()")
    dumps, write_all = json.dumps, _write_all

    def send_violation(what, line):
        try:
            write_all(channel, b"V " + dumps({"what": what[:300], "line": line}).encode() + b"\n")
        except OSError:
            pass

    violations: list[dict[str, object]] = []
    if job.get("audit_hook", True):
        sys.addaudithook(_make_hook(violations, send_violation))
    reserve = bytearray(4 << 20)  # released on MemoryError so the report can still be written
    exited = None
    write_all(channel, b"S\n")  # from here on, what this process reports may be the program's choice
    try:
        exec(program, namespace)
    except SystemExit as exc:
        line = _program_line(exc.__traceback__)
        if exc.code not in (None, 0):
            where = f" at line {line}" if line else ""
            code_text = repr(exc.code) if isinstance(exc.code, int) else type(exc.code).__name__
            return {
                "status": "error",
                "kind": "runtime",
                "line": line,
                "exception": "SystemExit",
                "message": f"the program called sys.exit({code_text}){where}; do not call sys.exit/exit/quit",
            }
        exited = line if line is not None else "?"
    except BaseException as exc:  # noqa: BLE001 - everything the program raises is reported
        if isinstance(exc, MemoryError):
            del reserve
            namespace.clear()
        return {"status": "error", **_describe_exception(exc, code_lines)}

    try:
        data = collect(namespace, submitted[0] if submitted else _NOTHING)
        payload = dumps(data, allow_nan=False, separators=(",", ":"))
    except ProgramError as exc:
        message = str(exc.message)
        if exited is not None:
            message += f" (the program called sys.exit at line {exited}, before defining it)"
        return {
            "status": "error",
            "kind": str(exc.kind),
            "message": message,
            "line": exc.line if isinstance(exc.line, int) else None,
        }
    except (TypeError, ValueError) as exc:
        if _program_line(exc.__traceback__) is not None:
            return {"status": "error", **_describe_exception(exc, code_lines)}
        return {
            "status": "error",
            "kind": "type",
            "line": None,
            "message": f"the result is not plain JSON data (lists, numbers, strings, dicts): {exc}",
        }
    except BaseException as exc:  # noqa: BLE001
        status = {"status": "error", **_describe_exception(exc, code_lines)}
        status["message"] = "while reading the program's definitions: " + status["message"]
        return status
    write_all(channel, b"R " + token + b' {"status":"ok","result":' + payload.encode() + b"}\n")
    return {"status": "ok", "payload": True}


_NOTHING = object()


# --- this process: relay, bound, report ------------------------------------------------------------


def _relay(channel, result_fd, token, pid, job):
    """Forward the program's violations, take its one final message, reap it.

    Returns the exit of the program's process and its report: the raw JSON bytes of its final
    message (the caller parses it, with bounds, once), or a report of this process's own.
    """
    bound = int(job["limits"]["result_bytes"]) + (1 << 20)
    deadline = time.monotonic() + float(job["limits"]["wall_seconds"]) + 5.0
    buffer = bytearray()
    final = None
    forged = too_large = ran = False
    open_ = True
    while open_:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([channel], [], [], min(left, 1.0))
        if not ready:
            continue
        chunk = os.read(channel, 1 << 16)
        if not chunk:
            open_ = False
        buffer += chunk
        if len(buffer) > bound:
            too_large = True
            break
        if b"\n" not in chunk:  # a long line still arriving: do not rescan what came before
            continue
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer = bytearray(rest)
            if line.startswith(b"V "):
                try:
                    seen = json.loads(line[2:])
                    what, where = str(seen["what"])[:300], seen.get("line")
                except (ValueError, TypeError, KeyError, RecursionError):
                    continue
                _send(
                    result_fd, {"event": "violation", "what": what, "line": where if isinstance(where, int) else None}
                )
            elif line == b"S" and not ran:
                ran = True
            elif line.startswith(b"R " + token + b" ") and final is None:
                final = line[len(token) + 3 :]
            else:
                forged = True  # bytes the program wrote on the channel itself
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status, usage = os.wait4(pid, 0)
    exit_info = {
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "cpu": round(usage.ru_utime + usage.ru_stime, 3),
        "program_ran": ran,
    }
    own: dict[str, object]
    if too_large:
        own = {
            "status": "error",
            "kind": "too_large",
            "message": f"the result is larger than {job['limits']['result_bytes']} bytes",
        }
    elif final is None:
        own = {"status": "exited", "forged": forged}
    else:
        return exit_info, final
    return exit_info, json.dumps(own).encode()


def _read_exactly(fd, size):
    """``size`` bytes of ``fd``, or None when it closes first."""
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_job(jobs_in):
    """The next job, once the caller needs this (possibly pre-started) sandbox: its length (8 bytes,
    big-endian), then its JSON. Framed, not read to the end: the pipe stays open for the jobs after it
    (and a process the caller forked while this sandbox waited holds a copy of its write end)."""
    header = _read_exactly(jobs_in, 8)
    body = _read_exactly(jobs_in, int.from_bytes(header, "big")) if header is not None else None
    return json.loads(body) if body is not None else None


def main():
    warm = json.loads(sys.argv[1])
    result_fd = int(sys.argv[2])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # the program's process cannot ptrace or read /proc of this one
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    isolation = dict(warm["isolation"])
    isolation["workdir_inodes"] = _mount_workdir(libc, warm["workdir"])
    if os.getuid() != 0:
        _drop_capabilities(libc)
    timings = {}
    t = time.perf_counter()
    for module in warm.get("preload", ()):
        if module.startswith("!"):  # unimportable from here on (see sandbox.run_program's ``preload``)
            sys.modules[module[1:]] = None  # type: ignore[assignment]
        else:
            __import__(module)
    timings["imports"] = round(time.perf_counter() - t, 4)
    gc.freeze()  # the programs' processes never scan (and so copy) the imports' objects in a collection

    jobs_in = os.dup(0)  # the caller's jobs; the programs' processes get /dev/null as stdin
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.chdir(WORKDIR)
    dispositions = _ignore_signals()
    isolation["sandbox"] = os.urandom(8).hex()  # the same for every job this sandbox serves
    isolation["seccomp"] = (
        "no processes, exec, ptrace, namespaces, mounts, sockets (but AF_UNIX), signals to others "
        "(also through descriptor owners), SysV IPC and message queues, xattr changes"
    )
    served = 0
    while True:
        job = _read_job(jobs_in)
        if job is None:
            return  # the caller went away (or discarded this sandbox)
        served += 1
        _serve(job, served, jobs_in, result_fd, libc, dispositions, dict(timings), dict(isolation))
        unclean = _clean_up()
        if unclean is not None:
            _send(result_fd, {"event": "retired", "why": unclean})
            return
        _send(result_fd, {"event": "ready", "jobs": served})


def _serve(job, served, jobs_in, result_fd, libc, dispositions, timings, isolation):
    """One job: fork the program's process from this clean state, relay its outcome, report."""
    token = os.urandom(16).hex().encode()
    read_end, channel = os.pipe()
    sandbox_uid = job.get("uid") if os.getuid() == 0 else None
    isolation["program_uid"] = sandbox_uid if sandbox_uid is not None else os.getuid()
    isolation["job"] = served
    # Before the fork: no program code runs before the caller knows that whatever ends this process
    # from now on is the program's doing (and its wall clock starts).
    _send(result_fd, {"event": "started"})
    t = time.perf_counter()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(read_end)
        os.close(channel)
        report = {"status": "error", "kind": "internal", "message": f"the sandbox could not fork the program: {exc}"}
        exit_info = {"signal": None, "code": None, "cpu": 0.0, "program_ran": False}
        _report(result_fd, timings, isolation, exit_info, json.dumps(report).encode())
        return
    if pid == 0:
        os.close(read_end)
        os.close(result_fd)
        os.close(jobs_in)
        _run_program(job, channel, token, libc, sandbox_uid, dispositions)
    os.close(channel)
    try:
        exit_info, report = _relay(read_end, result_fd, token, pid, job)
    finally:
        os.close(read_end)
    timings["program"] = round(time.perf_counter() - t, 4)
    _report(result_fd, timings, isolation, exit_info, report)


CLEANUP_SECONDS = 5.0  # for the killed processes to be gone


def _clean_up():
    """Between jobs: kill and reap every other process of this PID namespace, empty the working directory,
    and check both. None when the sandbox is as clean as before its first job, else what is not."""
    try:
        os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace but this one
    except ProcessLookupError:
        pass  # there was none
    deadline = time.monotonic() + CLEANUP_SECONDS
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)  # orphans are this process's children too
        except ChildProcessError:
            break
        if pid == 0:
            if time.monotonic() > deadline:
                return f"processes still running {CLEANUP_SECONDS:g} s after they were killed"
            time.sleep(0.002)
    others = [entry for entry in os.listdir("/proc") if entry.isdigit() and int(entry) != os.getpid()]
    if others:
        return f"processes left in the sandbox: {', '.join(others[:5])}"
    try:
        _empty_workdir()
        left = os.listdir(WORKDIR)
    except OSError as exc:
        return f"the working directory could not be emptied: {exc}"
    return f"{len(left)} entries left in the working directory" if left else None


def _empty_workdir():
    """Remove everything under WORKDIR, whatever its modes (a program may leave ``chmod 000`` directories)
    or depth (one open directory at a time, no recursion). Nothing else runs now: nothing moves meanwhile."""
    os.chmod(WORKDIR, 0o700)
    fd = os.open(WORKDIR, os.O_RDONLY | os.O_DIRECTORY)
    above: list[tuple[str, list[str]]] = []  # (directory being emptied, its parent's subdirectories still to empty)
    subdirs: list[str] | None = None
    try:
        while True:
            if subdirs is None:
                subdirs = []
                for name in os.listdir(fd):
                    if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                        subdirs.append(name)
                    else:
                        os.unlink(name, dir_fd=fd)
            if subdirs:
                name = subdirs.pop()
                os.chmod(name, 0o700, dir_fd=fd)  # a directory (lstat said so), of this or the program's uid
                inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
                above.append((name, subdirs))
                subdirs = None
                continue
            if not above:
                return
            outer = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = outer
            name, subdirs = above.pop()
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


def _report(result_fd, timings, isolation, exit_info, report):
    """The final message: what this process vouches for on one line, the report on the next, unparsed.

    Spliced into the first line, a program's report such as ``1},"isolation":{...`` would add keys of
    its own to what this process vouches for.
    """
    head = json.dumps(
        {"event": "result", "timings": timings, "isolation": isolation, "exit": exit_info, "report_follows": True}
    )
    _write_all(result_fd, head.encode() + b"\n" + report + b"\n")


if __name__ == "__main__":
    _result_fd = int(sys.argv[2])
    try:
        main()
    except BaseException as _exc:  # noqa: BLE001 - the harness itself failed; say so on the pipe
        try:
            _send(
                _result_fd,
                {
                    "event": "result",
                    "status": "error",
                    "kind": "internal",
                    "line": None,
                    "message": f"the sandbox failed: {type(_exc).__name__}: {_exc}",
                },
            )
        except BaseException:  # noqa: BLE001
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
