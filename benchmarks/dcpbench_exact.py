"""How many DCP-Bench-Open ground truths get an exact model count, by which route, in what time (cold cache).

Converts the copy's problems (cached: ``$AUTONESY_CACHE_DIR/dcpbench``), then counts each kept problem's
ground truth with ``auto`` under ``--limit`` seconds (``tasks.adapters.dcpbench.truth_count``; the count
cache is pointed at an empty folder, so every count is computed). ``--first`` names problems to count
before the rest (e.g. the ones an earlier run could not count); ``--budget`` stops starting new counts
after that many seconds, and lists the problems it did not reach.

    python benchmarks/dcpbench_exact.py DCP_BENCH_COPY [--limit 60] [--budget 900] [--first a,b]
                                        [--out benchmarks/results/dcpbench_exact.md]

Up to ``--limit`` seconds per problem that cannot be counted; the rest take a fraction of a second each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from autonesy.tasks.adapters import dcpbench


def cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("copy", type=Path)
    parser.add_argument("--limit", type=float, default=60.0)
    parser.add_argument("--budget", type=float, default=None)
    parser.add_argument("--first", default="")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/dcpbench_exact.md"))
    args = parser.parse_args()
    kept = dcpbench.keys(args.copy)
    first = [k for k in args.first.split(",") if k in kept]
    order = first + [k for k in kept if k not in first]
    counts_home = tempfile.mkdtemp(prefix="dcpbench-exact-")
    rows: dict[str, dict] = {}
    start = time.perf_counter()
    for key in order:
        if args.budget is not None and time.perf_counter() - start > args.budget:
            rows[key] = {"outcome": "not run (budget)"}
            continue
        truth = dcpbench.load(args.copy, key).ground_truth
        load = open("/proc/loadavg").read().split()[0]
        wall, cpu = time.perf_counter(), cpu_now()
        previous = os.environ.get("AUTONESY_CACHE_DIR")
        os.environ["AUTONESY_CACHE_DIR"] = counts_home  # cold counts; conversions were read before
        try:
            result = dcpbench.truth_count(args.copy, key, args.limit)
        finally:
            if previous is None:
                del os.environ["AUTONESY_CACHE_DIR"]
            else:
                os.environ["AUTONESY_CACHE_DIR"] = previous
        rows[key] = {
            **result,
            "outcome": "exact" if "count" in result else "unscorable",
            "wall_s": time.perf_counter() - wall,
            "cpu_s": cpu_now() - cpu,
            "load": load,
            "N": truth.num_task_vars,
            "vars": truth.num_vars,
            "clauses": len(truth.clauses),
        }
        print(
            f"{len(rows)}/{len(order)} {key}: {rows[key]['outcome']} {result.get('count', '')} "
            f"{result.get('method', '')} {rows[key]['wall_s']:.1f} s (load {load})",
            flush=True,
        )
    counted = [k for k, r in rows.items() if r["outcome"] != "not run (budget)"]
    exact = [k for k in counted if rows[k]["outcome"] == "exact"]
    lines = [
        f"# DCP-Bench-Open: exact ground-truth counts ({len(kept)} kept problems, limit {args.limit:g} s, cold cache)",
        "",
        f"Command: `python benchmarks/dcpbench_exact.py {args.copy} --limit {args.limit:g}"
        + (f" --budget {args.budget:g}" if args.budget is not None else "")
        + (" --first …" if first else "")
        + f"`. Exact: {len(exact)} of {len(counted)} counted ({100 * len(exact) / max(len(counted), 1):.0f} %)"
        + (f"; {len(order) - len(counted)} not reached within the budget" if len(counted) < len(order) else "")
        + f". Load average (1 min) is listed per problem, on {os.cpu_count()} cores.",
        "",
        "| problem | N | vars | clauses | models | route | wall s | CPU s | load | unscorable because |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in order:
        r = rows[key]
        if r["outcome"] == "not run (budget)":
            lines.append(f"| {key} | | | | | not run (budget) | | | | |")
            continue
        lines.append(
            f"| {key} | {r['N']} | {r['vars']} | {r['clauses']} | {r.get('count', '')} | {r.get('method', '')} | "
            f"{r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['load']} | {r.get('unscorable', '')[:120]} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, sort_keys=True))
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
