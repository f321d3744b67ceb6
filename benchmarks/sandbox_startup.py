"""The sandbox's own start-up cost per program, before and after bubblewrap isolation, side by side.

    .venv/bin/python benchmarks/sandbox_startup.py [--baseline REV] [--runs N]

The baseline is the sandbox at ``REV`` (default: the commit before bubblewrap came in), copied out
of git into a temporary package and run in the same process as the current one, alternating, so both
see the same machine load. For each: a trivial program started cold (``prewarm=False``), and started
from the warm pool (``prewarm=True``, imports done ahead of need) with and without ``pysat`` preloaded.
Printed: median wall seconds per program for each, the ratio current / baseline, and the caller's
own CPU seconds per program (``time.thread_time``: what the calling thread pays).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "7e95664"  # main before tools/sandbox.py moved to bubblewrap


def load_baseline(rev: str, into: Path):
    """The sandbox module at ``rev``, importable under its own name, its harness next to it."""
    for name in ("sandbox.py", "_sandbox_harness.py"):
        text = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:tools/{name}"], check=True, capture_output=True, text=True
        ).stdout
        (into / name).write_text(text)
    spec = importlib.util.spec_from_file_location("baseline_sandbox", into / "sandbox.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_sandbox"] = module
    spec.loader.exec_module(module)
    return module


def measure(module, preload: tuple[str, ...], prewarm: bool, runs: int) -> tuple[float, float]:
    """Median wall seconds and mean caller-thread CPU seconds per ``result = 1`` program."""
    if prewarm:
        module.prewarm(preload)
        time.sleep(1.0 if preload else 0.3)  # let the spare finish its imports, as between real calls
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.thread_time()
        result = module.run_program("result = 1", preload=preload, prewarm=prewarm)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.thread_time() - cpu)
        assert result.ok, result.message
        if prewarm:
            time.sleep(1.0 if preload else 0.3)
    module.shutdown()
    return statistics.median(walls), statistics.fmean(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from autonesy.tools import sandbox as current

    with tempfile.TemporaryDirectory() as tmp:
        baseline = load_baseline(args.baseline, Path(tmp))
        cases = [
            ("cold, no preload", (), False),
            ("warm pool, no preload", (), True),
            ("warm pool, pysat", ("pysat.formula", "pysat.card"), True),
        ]
        print(f"{'case':<24} {'baseline s':>11} {'current s':>10} {'ratio':>6} {'caller CPU base/cur ms':>24}")
        for label, preload, prewarm in cases:
            (base_wall, base_cpu), (cur_wall, cur_cpu) = (
                measure(m, preload, prewarm, args.runs) for m in (baseline, current)
            )
            print(
                f"{label:<24} {base_wall:>11.4f} {cur_wall:>10.4f} {cur_wall / base_wall:>6.2f} "
                f"{base_cpu * 1e3:>11.1f} / {cur_cpu * 1e3:<10.1f}"
            )


if __name__ == "__main__":
    main()
