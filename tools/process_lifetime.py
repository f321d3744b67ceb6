"""Child processes that die with their parent, however the parent dies (a SIGKILL from ``timeout`` or a job
scheduler included, where no ``finally`` or ``atexit`` runs).

A child calls :func:`die_with_parent` first thing: the kernel sends it SIGKILL when its parent goes
(``PR_SET_PDEATHSIG``), and a parent that died before the call is caught by comparing ``getppid``.
The signal follows the *thread* that started the child, not the process: every caller here waits for
its child on the thread that started it (the counting race, the SDD compilation, a bounded sweep
attempt, a process pool's workers started from the thread that runs the pool), so the two coincide.
A grandchild that calls it too dies with the child, so a whole tree goes.

A program we do not write (llama.cpp's server) cannot make that call, and the thread that starts it
may end first. It runs under :func:`supervise` instead (``python -m autonesy.tools.process_lifetime
COMMAND…``, built by :func:`supervised`): the supervisor holds the read end of a pipe whose write end
only the parent process holds, and kills its process group when the pipe closes — which the kernel does
however the parent dies, whichever thread started it.
"""

from __future__ import annotations

import ctypes
import os
import platform
import select
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _prctl():
    if platform.system() != "Linux":
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_set = _prctl()  # resolved in the parent: a forked child only calls it


def die_with_parent(parent_pid: int) -> None:
    """In a child of ``parent_pid``: be killed (SIGKILL) when it dies; leave at once if it already has."""
    if _set is not None:
        _set(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the request: nobody would send the signal
        os._exit(1)


def supervised(command: list[str]) -> list[str]:
    """``command`` run under :func:`supervise`: start it with ``stdin=subprocess.PIPE`` (that pipe is the
    lifeline: keep it open, write nothing) and ``start_new_session=True`` (one group to kill)."""
    return [sys.executable, "-m", __name__, *command]


def supervise(command: list[str]) -> int:
    """Run ``command`` until it ends (its exit status is returned) or standard input reaches its end (the parent
    died): then the whole process group, this process included, is killed. A SIGTERM to the group is left to the
    command; this process waits for it to end."""
    signal.signal(signal.SIGTERM, lambda signum, frame: None)  # a handler, not SIG_IGN: the command keeps the default
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    while child.poll() is None:
        if select.select([0], [], [], 0.5)[0] and not os.read(0, 1 << 12):
            if os.getpgrp() == os.getpid():  # our own group (start_new_session): the command and its children
                os.killpg(0, signal.SIGKILL)
            child.kill()
            os._exit(1)
    return child.returncode


__all__ = ["die_with_parent", "supervise", "supervised"]

if __name__ == "__main__":
    sys.exit(supervise(sys.argv[1:]))
