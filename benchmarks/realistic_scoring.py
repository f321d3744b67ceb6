"""Time scoring realistic LLM answers (prose, fences, auxiliaries) as `autonesy-agent score` does.

Each answer in tests/tools/data/realistic/<task>_<format>_*.txt is converted and scored against its
task's ground truth; the phases (conversion, the three counts) are printed side by side. Usage:

    python benchmarks/realistic_scoring.py [FILE ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autonesy.tasks.registry import get_task
from autonesy.tools.formats import FORMATS, convert
from autonesy.tools.metrics import score_formula

DATA = Path(__file__).resolve().parent.parent / "tests" / "tools" / "data" / "realistic"


def main(files: list[Path]) -> None:
    print(f"{'answer':45} {'convert s':>9} {'score s':>8} {'total s':>8}  counts (method, s)")
    for path in files:
        task_name, fmt = next((path.stem.split(f"_{f}_")[0], f) for f in FORMATS if f"_{f}_" in path.stem)
        task = get_task(task_name)
        start = time.perf_counter()
        conversion = convert(path.read_text(), fmt, task.names)
        converted = time.perf_counter()
        if not conversion.ok:
            print(f"{path.name:45} {converted - start:9.1f} error: {conversion.error}")
            continue
        score = score_formula(conversion.cnf, task.ground_truth)
        done = time.perf_counter()
        counts = ", ".join(f"{k} {v['method']} {v['seconds']:.1f}" for k, v in score.counts.items())
        print(
            f"{path.name:45} {converted - start:9.1f} {done - converted:8.1f} {done - start:8.1f}  F1 {score.f1:.3f}; {counts}"
        )


if __name__ == "__main__":
    main([Path(a) for a in sys.argv[1:]] or sorted(DATA.glob("*.txt")))
