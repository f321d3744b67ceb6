"""Check DCP-Bench-Open ground truths against the original models: the ground truth's model count (from
an expert sweep's results) against OR-Tools' count of the original CPMpy model's solutions, projected on
its decision variables (``tasks.adapters.dcpbench.solution_count``, in the sandbox).

    python benchmarks/dcpbench_counts.py DCP_BENCH_COPY SWEEP_DIR [--workers 2] [--limit 100000] [--out FILE.md]

An expert attempt scored ``equal`` with exact counts has tp = MC(ground truth); an attempt settled by
an equivalence proof alone (the count ran out of time) has no count and is listed as not checkable.
Prints one line per problem as it finishes, then the table (also written to ``--out`` with a JSON twin).
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autonesy.tasks.adapters import dcpbench


def truth_counts(sweep: Path) -> dict[str, int | None]:
    """Problem id → the ground truth's exact model count from the expert sweep (None: not counted)."""
    counts: dict[str, int | None] = {}
    for line in (sweep / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("benchmark") != "dcpbench" or row.get("policy") != "expert":
            continue
        key = row["task"].removeprefix("dcpbench-")
        exact = row.get("status") == "accepted" and row.get("relation") == "equal" and row.get("exact")
        counts[key] = int(row["tp"]) if exact and row.get("tp") not in (None, "") else counts.get(key)
    return counts


def verdict(truth: int | None, reference: dict) -> str:
    if "error" in reference:
        return f"not checkable: OR-Tools: {reference['error']}"
    if not reference.get("complete"):
        return f"not checkable: OR-Tools stopped at its limit of {reference['count']:,} solutions"
    if truth is None:
        return "not checkable: the ground truth's count ran out of time"
    return "agrees" if truth == reference["count"] else "DIFFERS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("copy", type=Path)
    parser.add_argument("sweep", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/dcpbench_counts.md"))
    args = parser.parse_args()
    found = dcpbench.problems(args.copy)
    truths = truth_counts(args.sweep)
    rows = {}
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(dcpbench.solution_count, found[key], args.limit): key for key in sorted(truths)}
        for future in as_completed(futures):
            key = futures[future]
            reference = future.result()
            rows[key] = {"truth": truths[key], "ortools": reference, "verdict": verdict(truths[key], reference)}
            print(f"{len(rows)}/{len(futures)} {key}: {rows[key]['verdict']}", flush=True)
    tally: dict[str, int] = {}
    for row in rows.values():
        tally[row["verdict"].split(":")[0]] = tally.get(row["verdict"].split(":")[0], 0) + 1
    lines = [
        f"# DCP-Bench-Open ground truths vs OR-Tools ({len(rows)} loaded problems)",
        "",
        f"Command: `python benchmarks/dcpbench_counts.py {args.copy} {args.sweep} --limit {args.limit}`",
        "",
        ", ".join(f"{name}: {n}" for name, n in sorted(tally.items())),
        "",
        "| problem | MC(ground truth) | OR-Tools solutions | verdict |",
        "|---|---|---|---|",
    ]
    for key, row in sorted(rows.items()):
        solutions = row["ortools"].get("count")
        lines.append(f"| {key} | {row['truth']} | {'' if solutions is None else solutions} | {row['verdict']} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, sort_keys=True))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
