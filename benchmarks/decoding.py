"""Free vs grammar-constrained decoding on the embedded model (or any --llm): for each task ×
format × policy × decoding, the syntax-error rate, repair rounds, LLM seconds and F1.

    python benchmarks/decoding.py [--tasks all|LIST] [--formats dimacs,nat,cpmpy]
                                  [--policies zs,few-shot] [--decodings free,grammar]
                                  [--llm local] [--max-tokens 256] [--max-repairs 2] [--out DIR]

Each (policy, decoding) pair is one sweep (``autonesy-agent sweep``'s machinery, detailed
descriptions, concurrency 1: the embedded server answers one request at a time) in ``OUT/<policy>-<decoding>``;
run again with the same ``--out`` to resume. One backend serves every sweep, so the embedded
server starts once. Printed: one row per cell, then one per (policy, decoding) over all cells, in
Markdown; ``OUT/decoding.json`` holds the same numbers. The full grid (18 × 3 × 2 × 2 = 216
attempts, up to 1 + max-repairs calls each) takes hours on 2 cores; use --tasks/--formats subsets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from autonesy.agents.llm import ResponseCache, backend_from_spec
from autonesy.graph.sweep import CACHE_FILE, SweepSpec, run_sweep, split_list
from autonesy.tasks.registry import TASK_NAMES


def cell_stats(rows: list[dict]) -> dict:
    finished = [r for r in rows if r["status"] in ("accepted", "rejected")]
    n = len(finished)
    f1 = [float(r["f1"]) for r in finished if r.get("f1") is not None]
    return {
        "attempts": n,
        "accepted": sum(r["status"] == "accepted" for r in finished),
        "syntax_error_rate": round(sum(bool(r["syntax_error"]) for r in finished) / n, 3) if n else None,
        "llm_error": sum(bool(r["llm_error"]) for r in finished),
        "repair_rounds": round(statistics.fmean(r["repair_rounds"] or 0 for r in finished), 2) if n else None,
        "llm_seconds": round(sum(float(r["llm_seconds"] or 0) for r in finished), 1),
        "f1": round(statistics.fmean(f1), 4) if f1 else None,
    }


def table(title: str, keys: list[str], entries: list[dict]) -> str:
    columns = keys + ["attempts", "accepted", "syntax_error_rate", "llm_error", "repair_rounds", "llm_seconds", "f1"]
    lines = [f"### {title}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for entry in entries:
        lines.append("| " + " | ".join("" if entry.get(c) is None else str(entry[c]) for c in columns) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--formats", default="dimacs,nat,cpmpy")
    parser.add_argument("--policies", default="zs,few-shot")
    parser.add_argument("--decodings", default="free,grammar")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--max-tokens", type=int, default=256, help="completion token cap per call")
    parser.add_argument("--max-repairs", type=int, default=2)
    parser.add_argument("--llm-timeout", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=Path("runs/bench-decoding"))
    args = parser.parse_args()

    tasks = tuple(TASK_NAMES) if args.tasks == "all" else tuple(split_list(args.tasks))
    formats, policies, decodings = (tuple(split_list(v)) for v in (args.formats, args.policies, args.decodings))
    args.out.mkdir(parents=True, exist_ok=True)
    backend = backend_from_spec(
        args.llm, timeout_s=args.llm_timeout, max_tokens=args.max_tokens, cache=ResponseCache(args.out / CACHE_FILE)
    )
    cells, overall = [], []
    start = time.perf_counter()
    try:
        for policy in policies:
            for decoding in decodings:
                spec = SweepSpec(
                    tasks=tasks,
                    formats=formats,
                    prompts=("zs",),
                    details=("detailed",),
                    llms=(args.llm,),
                    policy=None if policy == "zs" else policy,
                    max_repairs=args.max_repairs,
                    max_tokens=args.max_tokens,
                    llm_timeout_s=args.llm_timeout,
                    decoding=decoding,
                )
                result = run_sweep(
                    spec, args.out / f"{policy}-{decoding}", concurrency=1, backends={args.llm: backend}, progress=False
                )
                for task in dict.fromkeys(r["task"] for r in result.rows):
                    for fmt in formats:
                        rows = [r for r in result.rows if r["task"] == task and r["format"] == fmt]
                        cells.append(
                            {"task": task, "format": fmt, "policy": policy, "decoding": decoding, **cell_stats(rows)}
                        )
                overall.append({"policy": policy, "decoding": decoding, **cell_stats(result.rows)})
                print(
                    f"{policy}/{decoding}: {len(result.rows)} attempts done ({time.perf_counter() - start:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        backend.close()
    report = {
        "llm": args.llm,
        "max_tokens": args.max_tokens,
        "max_repairs": args.max_repairs,
        "tasks": list(tasks),
        "formats": list(formats),
        "seconds": round(time.perf_counter() - start, 1),
        "cells": cells,
        "overall": overall,
    }
    (args.out / "decoding.json").write_text(json.dumps(report, indent=2))
    print(table("per cell", ["task", "format", "policy", "decoding"], cells))
    print()
    print(table("per policy and decoding", ["policy", "decoding"], overall))
    print(f"\n{report['seconds']} s; llm {args.llm}, max_tokens {args.max_tokens}, max_repairs {args.max_repairs}")


if __name__ == "__main__":
    main()
