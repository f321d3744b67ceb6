"""What the sandbox tests share: the live sandbox processes this test process started."""

from __future__ import annotations

import os

from autonesy.tools import sandbox


def sandbox_processes() -> list[int]:
    """Live processes of this process's sandboxes: the harness and the program's process carry the
    harness path and the caller's pid in their argv (other xdist workers run sandboxes too)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read()
            if sandbox.HARNESS_INSIDE.encode() in argv and f'"caller": {os.getpid()},'.encode() in argv:
                found.append(int(name))
        except (OSError, ValueError):
            pass
    return found
