"""How many DCP-Bench-Open ground truths get an exact model count at load time, by which route, in what time.

Loads the copy as a sweep does (``tasks.adapters.dcpbench.convert``: each problem's CPMpy model converted
in the sandbox, then its ground truth counted with ``auto`` under ``--limit`` seconds, with OR-Tools'
listing certified by SAT after it, and once more under ``--last-try`` seconds when no encoding's was
counted; a ground truth still not counted is ``unscorable``, with the reason) and writes one row per problem: every kept
problem with its count or its reason, and the problems left out with theirs. Point
``AUTONESY_CACHE_DIR`` at an empty folder for a cold run (conversions and counts are cached there;
a warm run reads the verdicts back and says so).

    AUTONESY_CACHE_DIR=/tmp/dcp-cold python benchmarks/dcpbench_exact.py DCP_BENCH_COPY [--limit 60]
        [--last-try 300] [--only a,b] [--workers 2] [--out benchmarks/results/dcpbench_exact.md]

``--only`` converts just the named problems (a quick check on a subset; the table then says so).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autonesy.tasks.adapters import dcpbench
from autonesy.tools.formats.cpmpy_program import reindex


def cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _load(problem: dcpbench.Problem) -> dict:
    cached = dcpbench.static_reason(problem) is None and dcpbench.cached(problem) is not None  # an earlier run's
    start = time.perf_counter()
    outcome = dcpbench.convert(problem)
    row = {"wall_s": time.perf_counter() - start, "from_cache": cached, "load": open("/proc/loadavg").read().split()[0]}
    if not outcome.get("ok"):
        return {**row, "outcome": "left out", "reason": outcome.get("reason")}
    truth = reindex(outcome["data"], outcome["names"])
    row |= {"N": truth.num_task_vars, "vars": truth.num_vars, "clauses": len(truth.clauses)}
    row["encoding"] = outcome.get("encoding", "")
    if "truth" in outcome:
        return {**row, **outcome["truth"], "outcome": "exact"}
    return {**row, "outcome": "unscorable", "unscorable": outcome["unscorable"]}


def write_table(args: argparse.Namespace, found: dict, rows: dict[str, dict], wall: float, cpu: float) -> list[str]:
    """The table over the problems done so far (rewritten after each one: an interrupted run keeps its table)."""
    done = [k for k in found if k in rows]
    kept = [k for k in done if rows[k]["outcome"] != "left out"]
    exact = [k for k in kept if rows[k]["outcome"] == "exact"]
    unscorable = [k for k in kept if rows[k]["outcome"] == "unscorable"]
    cached = sum(rows[k]["from_cache"] for k in done)
    reasons: dict[str, int] = {}
    for k in done:
        if rows[k]["outcome"] == "left out":
            reason = str(rows[k]["reason"])
            why = "no encoding within the sandbox's limits" if "linear encoders: " in reason else reason.split(":")[0]
            reasons[why] = reasons.get(why, 0) + 1
    loads = sorted(float(rows[k]["load"]) for k in done if not rows[k]["from_cache"])
    lines = [
        f"# DCP-Bench-Open: exact ground-truth counts at load time ({len(kept)} loaded problems, "
        f"limit {args.limit:g} s, last try {args.last_try:g} s)",
        "",
        f"Command: `AUTONESY_CACHE_DIR=<empty dir> python benchmarks/dcpbench_exact.py {args.copy} "
        f"--limit {args.limit:g} --last-try {args.last_try:g}"
        + (f" --only {args.only}" if args.only else "")
        + "`"
        + (f" (a subset: {len(found)} problems)" if args.only else f" ({len(found)} problems in the copy)")
        + ("" if len(done) == len(found) else f"; **interrupted: {len(done)} of {len(found)} done**")
        + f". **Exact: {len(exact)} of {len(kept)} loaded ({100 * len(exact) / max(len(kept), 1):.0f} %)**; "
        f"unscorable: {len(unscorable)}; left out: {len(done) - len(kept)} "
        f"({', '.join(f'{n} {why}' for why, n in sorted(reasons.items(), key=lambda x: -x[1]))}). "
        f"{cached} of {len(done)} read from the cache (converted and counted by an earlier run into the same "
        f"folder). This run: {wall:.0f} s wall, {cpu:.0f} s CPU (this process and its children), "
        f"{args.workers} workers on {os.cpu_count()} cores"
        + (
            f", load average (1 min) {loads[0]:.1f}–{loads[-1]:.1f}, median {loads[len(loads) // 2]:.1f}"
            if loads
            else ""
        )
        + ".",
        "",
        "Unscorable (an answer gets a metric only when proved equivalent):"
        + ("".join(f"\n- {k}: {rows[k]['unscorable']}" for k in unscorable) or " none."),
        "",
        "| problem | N | vars | clauses | models | route | count s | load s (convert + count) | load | encoding |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in kept:
        r = rows[key]
        seconds = f"{r['seconds']:.2f}" if "seconds" in r else ""
        loaded = "cached" if r["from_cache"] else f"{r['wall_s']:.1f}"
        lines.append(
            f"| {key} | {r['N']} | {r['vars']} | {r['clauses']} | {r.get('count', 'unscorable')} | "
            f"{r.get('method', '')} | {seconds} | {loaded} | {r['load']} | {r.get('encoding', '')} |"
        )
    lines += ["", "Left out:", *(f"- {k}: {rows[k]['reason']}" for k in done if rows[k]["outcome"] == "left out")]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, sort_keys=True))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("copy", type=Path)
    parser.add_argument("--limit", type=float, default=dcpbench.TRUTH_COUNT_LIMIT_S)
    parser.add_argument("--last-try", type=float, default=dcpbench.TRUTH_LAST_TRY_S)
    parser.add_argument("--only", default="")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/dcpbench_exact.md"))
    args = parser.parse_args()
    dcpbench.TRUTH_COUNT_LIMIT_S = args.limit
    dcpbench.TRUTH_LAST_TRY_S = args.last_try
    found = dcpbench.problems(args.copy)
    if args.only:
        found = {k: found[k] for k in args.only.split(",") if k in found}
    rows: dict[str, dict] = {}
    wall, cpu = time.perf_counter(), cpu_now()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = {pool.submit(_load, problem): key for key, problem in found.items()}
        for future in as_completed(futures):
            key = futures[future]
            try:
                r = rows[key] = future.result()
            except BaseException:  # say so now: the queued problems would otherwise run on, unreported
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            print(
                f"{len(rows)}/{len(found)} {key}: {r['outcome']} {r.get('count', '')} {r.get('method', '')} "
                f"{r.get('reason') or r.get('unscorable') or ''} ({r['wall_s']:.1f} s, load {r['load']})"[:220],
                flush=True,
            )
            lines = write_table(args, found, rows, time.perf_counter() - wall, cpu_now() - cpu)
    print("\n".join(lines[:3]))


if __name__ == "__main__":
    main()
