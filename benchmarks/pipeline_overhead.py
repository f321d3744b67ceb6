"""The pipeline's own cost per attempt (everything except LLM latency), per task, by node.

Each attempt is answered instantly by a scripted chat model that returns the task's ground truth
as a DIMACS answer, so the wall time is the pipeline's: prompt building, parsing, oracle test,
SDD compilation, scoring, checkpoints and trace writes. Also reported: CPU seconds of this process
and its finished children (forked counters, sandbox runs), which the load of other processes on a
shared machine inflates far less than wall time. Optionally also times the README's main
command with the embedded local model (`--with-local`).

    python benchmarks/pipeline_overhead.py [--tasks a,b] [--with-local] [--out benchmarks/results/pipeline_overhead.md]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from autonesy.agents.llm import LangChainChatBackend
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.trace import read_trace
from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tools.cnf import to_dimacs
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM a ready backend stands for


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the forked counters, the sandbox)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def overhead(task_name: str, root: Path) -> dict:
    task = get_task(task_name)
    answer = f"<cnf>\n{to_dimacs(task.ground_truth, task.names)}</cnf>"
    backend = LangChainChatBackend(FakeListChatModel(responses=[answer]), "scripted", "zero-latency")
    start, cpu = time.perf_counter(), _cpu_seconds()
    summary = run_attempt(RunConfig(task=task_name, format="dimacs", llm=SCRIPTED), root / task_name, backend=backend)
    wall, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    nodes = collections.Counter()
    for event in read_trace(root / task_name):
        if event["event"] == "node":
            nodes[event["node"]] += event["seconds"]
    return {
        "task": task_name,
        "vars": task.num_vars,
        "wall": wall,
        "cpu": cpu,
        "llm": summary.llm_seconds,
        "status": summary.status,
        **nodes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument(
        "--with-local", action="store_true", help="also time `run --task warcraft` with the local model"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/pipeline_overhead.md"), help="the table, as Markdown"
    )
    args = parser.parse_args()
    lines: list[str] = []
    loads = [_load()]

    def say(line: str = "") -> None:  # every line to the terminal and to the table
        lines.append(line)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    columns = ("formalize", "check_syntax", "oracle_test", "compile", "evaluate")
    say(f"{'task':13} {'wall s':>7} {'cpu s':>6} {'llm s':>6} " + " ".join(f"{c:>12}" for c in columns) + "  outcome")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [overhead(name, Path(tmp)) for name in args.tasks.split(",")]
    for row in rows:
        say(
            f"{row['task']:13} {row['wall']:7.2f} {row['cpu']:6.2f} {row['llm']:6.2f} "
            + " ".join(f"{row.get(c, 0.0):12.3f}" for c in columns)
            + f"  {row['status']}"
        )
    for clock in ("wall", "cpu"):
        times = sorted(row[clock] for row in rows)
        small = [row[clock] for row in rows if row["vars"] <= 40]
        say(
            f"pipeline overhead per attempt ({clock}): median {statistics.median(times):.2f} s, max {times[-1]:.2f} s; "
            f"median over the {len(small)} tasks of at most 40 variables {statistics.median(small):.2f} s"
        )
    if args.with_local:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "autonesy.graph", "run", "--task", "warcraft", "--out", tmp], check=False
            )
            local_wall = time.perf_counter() - start
            summary = __import__("json").loads((Path(tmp) / "summary.json").read_text())
        say(
            f"run --task warcraft with the local model: {local_wall:.1f} s wall, {summary['llm_seconds']:.1f} s in "
            f"{summary['llm_calls']} LLM calls, overhead {local_wall - summary['llm_seconds']:.1f} s"
        )
    loads.append(_load())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        "# The pipeline's own cost per attempt (a scripted model answering the ground truth)\n\n"
        f"Command: `{' '.join(['python', 'benchmarks/pipeline_overhead.py', *sys.argv[1:]])}`; load average (1 min) before and "
        f"after: {', '.join(loads)}.\n\n```\n" + "\n".join(lines) + "\n```\n"
    )


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


if __name__ == "__main__":
    main()
