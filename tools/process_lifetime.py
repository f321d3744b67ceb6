"""Child processes that die with their parent, however the parent dies (a SIGKILL from ``timeout`` or a job
scheduler included, where no ``finally`` or ``atexit`` runs).

A child calls :func:`die_with_parent` first thing: the kernel sends it SIGKILL when its parent goes
(``PR_SET_PDEATHSIG``), and a parent that died before the call is caught by comparing ``getppid``.
The signal follows the *thread* that started the child, not the process: every caller here waits for
its child on the thread that started it (the counting race, the SDD compilation, a bounded sweep
attempt, a process pool's workers started from the thread that runs the pool), so the two coincide.
A grandchild that calls it too dies with the child, so a whole tree goes.
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal

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


__all__ = ["die_with_parent"]
