"""Free vs grammar-constrained decoding on the embedded model (or any --llm): for each task ×
format × policy × decoding, the syntax-error rate, repair rounds, LLM seconds and F1.

    python benchmarks/decoding.py [--tasks all|LIST] [--formats dimacs,nat,cpmpy]
                                  [--policies zs,few-shot] [--decodings free,grammar]
                                  [--llm local] [--max-tokens 128] [--max-repairs 1]
                                  [--stop-at HH:MM] [--out DIR] [--table-only]

A cell is one attempt (one task, format, policy and decoding; detailed descriptions) run by the
sweep's attempt runner into ``OUT/attempts/<id>``. Cells run task by task, format by format and
policy by policy (a grid cut short still compares every policy and decoding on the tasks it
reached), the decodings of a cell back to back (they share the prompt, which the embedded server
then evaluates once). Each finished cell is appended to ``OUT/cells.jsonl`` at once; a rerun
with the same ``--out`` skips the cells recorded there (and an interrupted attempt resumes from its
checkpoint; finished LLM calls come from ``OUT/cache.sqlite``). ``--stop-at`` (UTC) starts no new
cell after that time. At the end (and with ``--table-only``, without running anything) the tables
are written to ``OUT/decoding.md`` and ``OUT/decoding.json``: one row per cell, then one per policy
and decoding over the (policy, task, format) cells that ran under every decoding, and the list of
cells that did not run. One backend serves every cell, so the embedded server starts once.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

from autonesy.agents.llm import ResponseCache, backend_from_spec
from autonesy.graph.results import ATTEMPTS_DIR
from autonesy.graph.sweep.grid import SweepSpec, expand, split_list
from autonesy.graph.sweep.worker import execute_attempt
from autonesy.graph.trace import read_trace
from autonesy.tasks.registry import TASK_NAMES

CELLS_FILE = "cells.jsonl"
CELL_KEYS = ("policy", "task", "format", "decoding")
ROW_KEYS = (
    *("status", "failure", "reason", "syntax_error", "repair_rounds", "llm_calls", "completion_tokens"),
    *("llm_seconds", "wall_seconds", "f1", "relation", "attempt_id"),
)


def grid(args: argparse.Namespace) -> list[dict[str, str]]:
    tasks = list(TASK_NAMES) if args.tasks == "all" else split_list(args.tasks)
    return [
        {"policy": policy, "task": task, "format": fmt, "decoding": decoding}
        for task in tasks
        for fmt in split_list(args.formats)
        for policy in split_list(args.policies)
        for decoding in split_list(args.decodings)
    ]


def key(cell: dict) -> tuple:
    return tuple(cell[k] for k in CELL_KEYS)


def read_cells(out: Path) -> dict[tuple, dict]:
    """The finished cells, last record of each wins (a line cut by a kill is skipped)."""
    cells: dict[tuple, dict] = {}
    path = out / CELLS_FILE
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                cell = json.loads(line)
            except ValueError:
                continue
            cells[key(cell)] = cell
    return cells


def run_cell(cell: dict, args: argparse.Namespace, backend) -> dict:
    spec = SweepSpec(
        tasks=(cell["task"],),
        formats=(cell["format"],),
        prompts=("zs",),
        details=("detailed",),
        llms=(args.llm,),
        policy=None if cell["policy"] == "zs" else cell["policy"],
        max_repairs=args.max_repairs,
        max_tokens=args.max_tokens,
        llm_timeout_s=args.llm_timeout,
        decoding=cell["decoding"],
    )
    (job,) = expand(spec)
    (args.out / ATTEMPTS_DIR / job["attempt_id"]).mkdir(parents=True, exist_ok=True)
    row = execute_attempt({**job, "task": cell["task"]}, args.out, backends={args.llm: backend})
    return {
        **cell,
        **{k: row.get(k) for k in ROW_KEYS},
        **budget_cuts(args.out / ATTEMPTS_DIR / job["attempt_id"], bool(row.get("syntax_error"))),
    }


def budget_cuts(attempt_dir: Path, syntax_error: bool) -> dict:
    """From the attempt's trace: ``cuts_closed``, the LLM answers the token budget cut off that were
    closed under the grammar (their last item dropped), and ``stopped_unfinished``, whether a
    rejection for syntax came from a last answer the budget stopped with nothing to close (read from
    the call's finish reason, so traces from before the checker named the budget count too)."""
    try:
        calls = [e for e in read_trace(attempt_dir) if e.get("event") == "llm_call"]
    except (OSError, ValueError):
        return {"cuts_closed": None, "stopped_unfinished": None}
    cuts = [(e.get("decoding") or {}).get("cut_by_token_budget") or {} for e in calls]
    last_stopped = bool(calls) and (calls[-1].get("response") or {}).get("finish_reason") == "length"
    return {
        "cuts_closed": sum(bool(cut.get("closed")) for cut in cuts),
        "stopped_unfinished": syntax_error and last_stopped and not cuts[-1].get("closed"),
    }


def stats(cells: list[dict]) -> dict:
    finished = [c for c in cells if c["status"] in ("accepted", "rejected")]
    n = len(finished)
    f1 = [float(c["f1"]) for c in finished if c.get("f1") is not None]
    return {
        "attempts": n,
        "accepted": sum(c["status"] == "accepted" for c in finished),
        "syntax_error_rate": round(sum(bool(c["syntax_error"]) for c in finished) / n, 3) if n else None,
        "empty_answers": sum(c.get("failure") == "empty_answer" for c in finished),
        "repair_rounds": round(statistics.fmean(c["repair_rounds"] or 0 for c in finished), 2) if n else None,
        "llm_seconds": round(sum(float(c["llm_seconds"] or 0) for c in finished), 1),
        "f1": round(statistics.fmean(f1), 4) if f1 else None,
        "cuts_closed": sum(int(c.get("cuts_closed") or 0) for c in finished),
        "stopped_unfinished": sum(bool(c.get("stopped_unfinished")) for c in finished),
    }


def table(title: str, columns: list[str], entries: list[dict]) -> str:
    lines = [f"### {title}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for entry in entries:
        lines.append("| " + " | ".join("" if entry.get(c) is None else str(entry[c]) for c in columns) + " |")
    return "\n".join(lines)


def report(args: argparse.Namespace) -> str:
    planned = grid(args)
    done = read_cells(args.out)
    ran = [done[key(c)] for c in planned if key(c) in done]
    for cell in ran:  # cells recorded before the column existed: read it from their traces when kept
        if "stopped_unfinished" not in cell:
            traced = budget_cuts(args.out / ATTEMPTS_DIR / cell["attempt_id"], bool(cell["syntax_error"]))
            cell["stopped_unfinished"] = traced["stopped_unfinished"]
    missing = [c for c in planned if key(c) not in done]
    decodings = split_list(args.decodings)
    by_case: dict[tuple, list[dict]] = {}
    for cell in ran:
        by_case.setdefault((cell["policy"], cell["task"], cell["format"]), []).append(cell)
    paired = [c for cells in by_case.values() if len(cells) == len(decodings) for c in cells]
    overall = [
        {"policy": p, "decoding": d, **stats([c for c in paired if (c["policy"], c["decoding"]) == (p, d)])}
        for p in split_list(args.policies)
        for d in decodings
    ]
    summary = {
        "llm": args.llm,
        "max_tokens": args.max_tokens,
        "max_repairs": args.max_repairs,
        "planned": len(planned),
        "ran": len(ran),
        "cells": ran,
        "overall_paired": overall,
        "not_run": missing,
    }
    (args.out / "decoding.json").write_text(json.dumps(summary, indent=2))
    cell_columns = [*CELL_KEYS, "status", "syntax_error", "repair_rounds", "llm_calls", "llm_seconds", "f1"]
    cell_columns += ["cuts_closed", "stopped_unfinished"]
    stat_columns = ["policy", "decoding", "attempts", "accepted", "syntax_error_rate", "empty_answers"]
    stat_columns += ["repair_rounds", "llm_seconds", "f1", "cuts_closed", "stopped_unfinished"]
    not_run: dict[tuple, list[str]] = {}
    for c in missing:
        not_run.setdefault((c["policy"], c["decoding"], c["format"]), []).append(c["task"])
    text = "\n\n".join(
        [
            f"{len(ran)} of {len(planned)} cells ran; llm {args.llm}, max_tokens {args.max_tokens}, "
            f"max_repairs {args.max_repairs}, detailed descriptions, greedy decoding.",
            table("per policy and decoding (cells that ran under every decoding)", stat_columns, overall),
            table("per cell", cell_columns, ran),
            "### not run\n\n"
            + (
                "\n".join(f"- {p}/{d}/{f}: {', '.join(tasks)}" for (p, d, f), tasks in not_run.items())
                if not_run
                else "none"
            ),
        ]
    )
    (args.out / "decoding.md").write_text(text + "\n")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all")
    parser.add_argument("--formats", default="dimacs,nat,cpmpy")
    parser.add_argument("--policies", default="zs,few-shot")
    parser.add_argument("--decodings", default="free,grammar")
    parser.add_argument("--llm", default="local")
    parser.add_argument("--max-tokens", type=int, default=128, help="completion token cap per call")
    parser.add_argument("--max-repairs", type=int, default=1)
    parser.add_argument("--llm-timeout", type=float, default=600.0)
    parser.add_argument("--stop-at", help="UTC time HH:MM (its next occurrence) after which no new cell starts")
    parser.add_argument("--out", type=Path, default=Path("runs/bench-decoding"))
    parser.add_argument("--table-only", action="store_true", help="write the tables from the recorded cells")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    stop_at = None
    if args.stop_at:
        now = datetime.datetime.now(datetime.UTC)
        hour, minute = (int(x) for x in args.stop_at.split(":"))
        stop_at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if stop_at <= now:  # the next HH:MM, past midnight if need be
            stop_at += datetime.timedelta(days=1)
    if not args.table_only:
        done = read_cells(args.out)
        todo = [c for c in grid(args) if key(c) not in done]
        backend = backend_from_spec(
            args.llm,
            timeout_s=args.llm_timeout,
            max_tokens=args.max_tokens,
            cache=ResponseCache(args.out / "llm_cache.sqlite"),
        )
        start = time.perf_counter()
        try:
            for n, cell in enumerate(todo, 1):
                if stop_at and datetime.datetime.now(datetime.UTC) >= stop_at:
                    print(f"--stop-at {args.stop_at} reached: {len(todo) - n + 1} cells left", file=sys.stderr)
                    break
                result = run_cell(cell, args, backend)
                with open(args.out / CELLS_FILE, "a") as cells:
                    cells.write(json.dumps(result) + "\n")
                print(
                    f"[{n}/{len(todo)} {time.perf_counter() - start:.0f} s] {'/'.join(key(cell))}: "
                    f"{result['status']} syntax_error={result['syntax_error']} f1={result['f1']} "
                    f"llm {result['llm_seconds']} s",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            backend.close()
    print(report(args))


if __name__ == "__main__":
    main()
