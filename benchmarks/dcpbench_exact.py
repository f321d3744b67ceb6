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

``--only`` converts just the named problems and replaces their rows in the table at ``--out``; the other
problems keep the verdicts of the runs that decided them, and every row names its run (one current table,
its history in git).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
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


def run_record(args: argparse.Namespace, found: dict, rows: dict[str, dict], wall: float, cpu: float) -> dict:
    """What this invocation was (command, code, time, load): every row it decided names it."""
    loads = sorted(float(r["load"]) for r in rows.values() if not r["from_cache"])
    code = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    return {
        "source": f"code at {code or 'an unknown commit'}",
        "command": f"AUTONESY_CACHE_DIR=<empty dir> python benchmarks/dcpbench_exact.py {args.copy} "
        f"--limit {args.limit:g} --last-try {args.last_try:g}" + (f" --only {args.only}" if args.only else ""),
        "summary": f"{len(rows)} of {len(found)} problems done, {sum(r['from_cache'] for r in rows.values())} read "
        f"from the cache; {wall:.0f} s wall, {cpu:.0f} s CPU (this process and its children), {args.workers} "
        f"workers on {os.cpu_count()} cores"
        + (
            f", load average (1 min) {loads[0]:.1f}–{loads[-1]:.1f}, median {loads[len(loads) // 2]:.1f}"
            if loads
            else ""
        ),
    }


def render(table: dict) -> str:
    """The Markdown table of every problem's current verdict, each row naming the run that decided it."""
    rows, runs = table["problems"], table["runs"]
    kept = [k for k in sorted(rows) if rows[k]["outcome"] != "left out"]
    exact = [k for k in kept if rows[k]["outcome"] == "exact"]
    unscorable = [k for k in kept if rows[k]["outcome"] == "unscorable"]
    reasons: dict[str, int] = {}
    for r in rows.values():
        if r["outcome"] == "left out":
            reason = str(r["reason"])
            why = "no encoding within the sandbox's limits" if "linear encoders: " in reason else reason.split(":")[0]
            reasons[why] = reasons.get(why, 0) + 1
    lines = [
        f"# DCP-Bench-Open: exact ground-truth counts at load time ({len(kept)} loaded problems)",
        "",
        f"**Exact: {len(exact)} of {len(kept)} loaded ({100 * len(exact) / max(len(kept), 1):.0f} %)**; "
        f"unscorable: {len(unscorable)}; left out: {len(rows) - len(kept)} "
        f"({', '.join(f'{n} {why}' for why, n in sorted(reasons.items(), key=lambda x: -x[1]))}). "
        "Each problem's verdict is the one of the latest run that loaded it (`--only` runs replace the rows of "
        "the problems they name); the runs, by when they started or were recorded, oldest first:",
        "",
        *(f"- **{rid}** ({run['source']}): `{run['command']}`; {run['summary']}." for rid, run in runs.items()),
        "",
        "Unscorable (an answer gets a metric only when proved equivalent):"
        + ("".join(f"\n- {k} ({rows[k]['run']}): {rows[k]['unscorable']}" for k in unscorable) or " none."),
        "",
        "| problem | N | vars | clauses | models | route | count s | load s (convert + count) | load | encoding | run |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key in kept:
        r = rows[key]
        seconds = f"{r['seconds']:.2f}" if "seconds" in r else ""
        loaded = "cached" if r["from_cache"] else f"{r['wall_s']:.1f}"
        lines.append(
            f"| {key} | {r['N']} | {r['vars']} | {r['clauses']} | {r.get('count', 'unscorable')} | "
            f"{r.get('method', '')} | {seconds} | {loaded} | {r['load']} | {r.get('encoding', '')} | {r['run']} |"
        )
    lines += [
        "",
        "Left out:",
        *(f"- {k} ({r['run']}): {r['reason']}" for k, r in sorted(rows.items()) if r["outcome"] == "left out"),
    ]
    return "\n".join(lines) + "\n"


def write_table(out: Path, earlier: dict, run_id: str, run: dict, rows: dict[str, dict]) -> None:
    """Merge this run's rows into the table at ``out`` (rewritten after each problem: an interrupted run
    keeps what it did); a run no row names any more leaves the table."""
    problems = {**earlier.get("problems", {}), **{k: {**r, "run": run_id} for k, r in rows.items()}}
    named = {r["run"] for r in problems.values()}
    runs = {rid: r for rid, r in {**earlier.get("runs", {}), run_id: run}.items() if rid in named}
    table = {"runs": runs, "problems": problems}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(table))
    out.with_suffix(".json").write_text(json.dumps(table, indent=1, sort_keys=True))


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
    earlier = json.loads(args.out.with_suffix(".json").read_text()) if args.out.with_suffix(".json").exists() else {}
    run_id = time.strftime("%Y-%m-%dT%H:%M UTC", time.gmtime())  # when it started: the rows name their run by it
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
            run = run_record(args, found, rows, time.perf_counter() - wall, cpu_now() - cpu)
            write_table(args.out, earlier, run_id, run, rows)
    print(render(json.loads(args.out.with_suffix(".json").read_text())).split("\n")[2])


if __name__ == "__main__":
    main()
