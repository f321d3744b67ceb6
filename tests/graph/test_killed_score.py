"""A `score` killed with SIGKILL mid-race (as `timeout`, a job scheduler or a test harness kill it) leaves no
counting racer behind: every child it forked is gone within seconds, found by its command line in /proc."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")


def random_3cnf(rng: random.Random, n: int, m: int) -> str:
    """A random 3-CNF near the hard ratio: counting it keeps the race's racers busy for many seconds."""
    clauses = [" ".join(str(v if rng.random() < 0.5 else -v) for v in rng.sample(range(1, n + 1), 3)) for _ in range(m)]
    return f"p cnf {n} {m}\n" + "".join(f"{clause} 0\n" for clause in clauses)


def hard_task(folder: Path, n: int = 90) -> tuple[Path, Path]:
    rng = random.Random(7)
    variables = "".join(f'[[variables]]\nname = "v{i}"\nmeaning = "variable {i}"\n' for i in range(1, n + 1))
    (folder / "hard.toml").write_text(
        f'name = "hard"\n{variables}[descriptions]\ndetailed = "x"\nnot_detailed = "x"\n'
        '[ground_truth]\ndimacs = "hard.cnf"\n[metadata]\nsource_dataset = "none"\nlicence = "MIT"\n'
    )
    (folder / "hard.cnf").write_text(random_3cnf(rng, n, 3 * n + 30))
    (folder / "answer.cnf").write_text(random_3cnf(rng, n, 3 * n + 30))
    return folder / "hard.toml", folder / "answer.cnf"


def ours(marker: str) -> dict[int, int]:
    """pid → parent pid of every live process whose command line holds ``marker`` (zombies are dead already)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if marker.encode() in cmdline and stat[0] != "Z":
            found[int(entry)] = int(stat[1])
    return found


def test_a_score_killed_mid_race_leaves_no_racer(tmp_path):
    task, answer = hard_task(tmp_path)
    exe = Path(sys.executable).parent / "autonesy-agent"
    env = {**os.environ, "AUTONESY_CACHE_DIR": str(tmp_path / "cache")}
    score = subprocess.Popen(
        [str(exe), "score", str(answer), "--task", str(task), "--format", "dimacs"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        racers: dict[int, int] = {}
        while time.monotonic() < deadline and len(racers) < 2:  # the race has begun: two racers or more
            racers = {pid: ppid for pid, ppid in ours(str(tmp_path)).items() if ppid == score.pid}
            assert score.poll() is None, "score ended before its race began: the formula is too easy"
            time.sleep(0.05)
        assert len(racers) >= 2, "no counting race within 120 s"
        score.send_signal(signal.SIGKILL)
        score.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and ours(str(tmp_path)):
            time.sleep(0.1)
        survivors = ours(str(tmp_path))
    finally:
        for pid in ours(str(tmp_path)):  # never leave a survivor to the next test
            os.kill(pid, signal.SIGKILL)
        if score.poll() is None:
            score.kill()
            score.wait()
    assert survivors == {}, f"children of the killed score still running: {sorted(survivors)}"
