"""Counting time of ``auto`` against ApproxMC on a perturbed ground truth per catalogue task, cold caches.

Each task's ground truth loses one clause and gains one random binary clause over its task variables
(seeded), so no stored count applies. Each round counts every perturbed formula with each method
(the in-process enumeration memo emptied before each count; ``count_models`` keeps nothing on disk).
Reported per task and method: the median over the rounds of the wall seconds and of the CPU seconds
(this process, all its threads, plus its waited-for children: the forked counters), the count and
whether it is exact; then the totals, the ratio auto/ApproxMC of both, and the load average.

    python benchmarks/perturbed_counts.py [--rounds 3] [--limit 60] [--tasks a,b] [--out benchmarks/results/perturbed_counts.md]

About 1-3 minutes on a quiet machine for 3 rounds.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import time
from pathlib import Path

from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tools import enumeration
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models

METHODS = ("auto", "approxmc")


def perturbed(truth: CNF, seed: int = 0) -> CNF:
    rng = random.Random(seed)
    clauses = list(truth.clauses)
    del clauses[rng.randrange(len(clauses))]
    a, b = rng.sample(range(1, truth.num_task_vars + 1), 2)
    return truth.with_clauses(clauses + [(a * rng.choice((1, -1)), b * rng.choice((1, -1)))])


def cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed_count(cnf: CNF, method: str, limit: float) -> dict:
    with enumeration._recent_lock:
        enumeration._recent.clear()
    wall, cpu = time.perf_counter(), cpu_now()
    try:
        result = count_models(cnf, method, time_limit_s=limit)
        outcome = {"count": result.value, "exact": result.exact, "route": result.method}
    except Exception as error:  # noqa: BLE001 - a failed count is a row of the table
        outcome = {"count": None, "exact": False, "route": type(error).__name__}
    return {**outcome, "wall_s": time.perf_counter() - wall, "cpu_s": cpu_now() - cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/perturbed_counts.md"))
    args = parser.parse_args()
    names = args.tasks.split(",")
    formulas = {name: perturbed(get_task(name).ground_truth) for name in names}
    loads = [open("/proc/loadavg").read().split()[0]]
    samples: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.rounds):
        for name, cnf in formulas.items():
            for method in METHODS:
                samples.setdefault((name, method), []).append(timed_count(cnf, method, args.limit))
        loads.append(open("/proc/loadavg").read().split()[0])
    lines = [
        f"# Counting a perturbed ground truth per task: auto vs ApproxMC ({args.rounds} rounds, median)",
        "",
        f"Command: `python benchmarks/perturbed_counts.py --rounds {args.rounds} --limit {args.limit:g}`; "
        f"load average (1 min) before and after each round: {', '.join(loads)} on {_cores()} cores.",
        "",
        "| task | models | auto route | auto wall s | auto CPU s | ApproxMC says | ApproxMC wall s | ApproxMC CPU s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    totals = {(m, k): 0.0 for m in METHODS for k in ("wall_s", "cpu_s")}
    rows = {}
    for name in names:
        med = {}
        for method in METHODS:
            runs = samples[(name, method)]
            med[method] = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s")}
            for k in ("wall_s", "cpu_s"):
                totals[(method, k)] += med[method][k]
        auto, approx = samples[(name, "auto")][0], samples[(name, "approxmc")][0]
        rows[name] = {"auto": samples[(name, "auto")], "approxmc": samples[(name, "approxmc")]}
        lines.append(
            f"| {name} | {auto['count'] if auto['exact'] else '?'} | {auto['route']} | {med['auto']['wall_s']:.3f} | "
            f"{med['auto']['cpu_s']:.3f} | {approx['count']} | {med['approxmc']['wall_s']:.3f} | {med['approxmc']['cpu_s']:.3f} |"
        )
    exact = all(r["exact"] for runs in rows.values() for r in runs["auto"])
    lines += [
        "",
        f"Totals (sum of medians): auto {totals[('auto', 'wall_s')]:.2f} s wall, {totals[('auto', 'cpu_s')]:.2f} s CPU; "
        f"ApproxMC {totals[('approxmc', 'wall_s')]:.2f} s wall, {totals[('approxmc', 'cpu_s')]:.2f} s CPU.",
        f"Ratio auto / ApproxMC: wall {totals[('auto', 'wall_s')] / totals[('approxmc', 'wall_s')]:.2f}, "
        f"CPU {totals[('auto', 'cpu_s')] / totals[('approxmc', 'cpu_s')]:.2f}. auto exact everywhere: {exact}.",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps({"loads": loads, "rows": rows}, indent=1))
    print("\n".join(lines))


def _cores() -> int:
    import os

    return os.cpu_count() or 1


if __name__ == "__main__":
    main()
