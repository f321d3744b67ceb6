"""A program started under the supervisor (the local llama.cpp server's way) dies with the process that started it,
however that process dies: its parent is SIGKILLed and the program is gone within seconds. Without the supervisor
the same program survives (the check can see a survivor)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autonesy.tools.process_lifetime import supervise

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def running(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``marker``."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


@pytest.mark.parametrize("supervised", [True, False])
def test_a_supervised_program_dies_with_its_parent_killed_by_sigkill(supervised):
    marker = f"{time.time_ns() % 10**9 / 1000:.3f}"  # a unique `sleep` argument
    command = f"supervised(['sleep', {marker!r}])" if supervised else f"['sleep', {marker!r}]"
    parent_code = textwrap.dedent(f"""
        import subprocess, threading, time
        from autonesy.tools.process_lifetime import supervised
        def start():  # from a thread that ends at once: the lifeline must not depend on it
            subprocess.Popen({command}, stdin=subprocess.PIPE, start_new_session=True)
        thread = threading.Thread(target=start)
        thread.start()
        thread.join()
        print("started", flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 30
        while not running(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert running(marker), "the program did not start"
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = running(marker)
    finally:
        for pid in running(marker):
            os.kill(pid, signal.SIGKILL)
        parent.kill()
        parent.wait()
    assert bool(survivors) is not supervised, survivors


def test_the_supervisor_returns_the_programs_exit_status():
    read_end, write_end = os.pipe()  # the lifeline stays open: the program ends by itself
    saved, handler = os.dup(0), signal.getsignal(signal.SIGTERM)
    os.dup2(read_end, 0)
    try:
        assert supervise([sys.executable, "-c", "raise SystemExit(7)"]) == 7
    finally:
        signal.signal(signal.SIGTERM, handler)
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
