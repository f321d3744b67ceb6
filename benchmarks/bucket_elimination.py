"""Exact exactly-k of n (sequential counter) by SDD bucket elimination alone: seconds, CPU seconds, SDD size.

The ``auto`` portfolio gives this route only part of its limit (benchmarks/scaling.py); this measures the
route itself, without a portfolio around it, so its cost on a quiet or a loaded machine can be read.

    python benchmarks/bucket_elimination.py [--sizes 20,50,100,200] [--limit 300] [--out benchmarks/results/bucket_elimination.md]

About 1 minute on a quiet machine up to n = 100; n = 200 takes several minutes.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tools.compile import CompilationBudgetExceeded, compile_by_elimination


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20,50,100,200")
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/bucket_elimination.md"))
    args = parser.parse_args()
    lines = [
        f"# Exactly-n/2 of n by SDD bucket elimination (limit {args.limit:g} s)",
        "",
        f"Command: `python benchmarks/bucket_elimination.py --sizes {args.sizes} --limit {args.limit:g}`",
        "",
        "| n | variables | clauses | count = C(n, n/2) | SDD size | wall s | CPU s | load before |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in map(int, args.sizes.split(",")):
        cnf = ClauseBuilder(n).exactly(list(range(1, n + 1)), n // 2).cnf()
        load = open("/proc/loadavg").read().split()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            sdd = compile_by_elimination(cnf, time_limit_s=args.limit)
            count = sdd.model_count()
            outcome = f"{'yes' if count == math.comb(n, n // 2) else 'NO'} | {sdd.size}"
        except CompilationBudgetExceeded as error:
            outcome = f"out of budget: {str(error)[:100]} | -"
        lines.append(
            f"| {n} | {cnf.num_vars} | {len(cnf.clauses)} | {outcome} | {time.perf_counter() - wall:.2f} | "
            f"{time.process_time() - cpu:.2f} | {load} |"
        )
        print(lines[-1], flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
