"""A sweep's CPU per attempt: the 90-attempt grid (18 tasks × 5 formats, zs-cot, detailed) at
concurrency 8 against a scripted LLM that answers each task's reference formalization in the
attempt's format, so every attempt is parsed (Python formats in the sandbox), oracle-tested,
compiled and scored. The LLM costs nothing: what is measured is the pipeline's CPU.

CPU is this process's and its children's (sandbox runs, forked counters), from ``os.times``, so
the load of other processes inflates it far less than wall time; the idle sandboxes are stopped
before the clock stops, so that the imports they paid for count too. Ground truths and their counts are
built before the clock starts (a sweep's first attempt of a task pays them once; a study's later
sweeps find them in the count cache), and so is the scripted LLM's tokenizer (its usage counts are the fake
endpoint's work, not the pipeline's). Per node: the wall seconds the trace records, summed. Memory: this
process's RSS when the sweep starts and its peak during it (VmHWM, started again at the clock); ``--repeats``
runs each grid cell that many times, to see whether the peak grows with the attempts.

    python benchmarks/sweep_cpu.py [--concurrency 8] [--repeats 1] [--out benchmarks/results/sweep_cpu.md]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from scripted_llm import ScriptedChatModel, count_tokens, format_of, task_of  # noqa: E402

from autonesy.agents.llm import LangChainChatBackend, ResponseCache  # noqa: E402
from autonesy.graph.sweep.grid import SweepSpec  # noqa: E402
from autonesy.graph.sweep.run import run_sweep  # noqa: E402
from autonesy.graph.trace import read_trace  # noqa: E402
from autonesy.tasks.reference import reference_formalization  # noqa: E402
from autonesy.tasks.registry import TASK_NAMES, get_task  # noqa: E402
from autonesy.tools import sandbox  # noqa: E402
from autonesy.tools.metrics import score_formula  # noqa: E402

SPEC = "http://scripted.bench/v1@sweep-cpu"


def _cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS now, VmHWM its peak), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    """Start VmHWM again from the current RSS (Linux 4.0+; without it the peak includes what came before)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--tasks", default="all", help="'all' or a comma list")
    parser.add_argument("--formats", default="all", help="'all' or a comma list")
    parser.add_argument("--repeats", type=int, default=1, help="attempts per grid cell (memory as the sweep grows)")
    parser.add_argument("--out", type=Path, help="write the table here (Markdown)")
    args = parser.parse_args()
    names = TASK_NAMES if args.tasks == "all" else tuple(args.tasks.split(","))
    tasks = [get_task(name) for name in names]
    for task in tasks:  # the ground truths and their counts: paid once per study, not per attempt
        score_formula(task.ground_truth, task.ground_truth)
    count_tokens("")  # the scripted LLM's tokenizer, loaded once (eight threads at once would each load it)

    def answer(prompt: str) -> str:
        return reference_formalization(task_of(prompt, tasks), format_of(prompt))

    formats = {} if args.formats == "all" else {"formats": tuple(args.formats.split(","))}
    spec = SweepSpec(
        tasks=tuple(names), llms=(SPEC,), prompts=("zs-cot",), details=("detailed",), repeats=args.repeats, **formats
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep"
        backend = LangChainChatBackend(
            ScriptedChatModel(answer=answer),
            "http://scripted.bench/v1",
            "sweep-cpu",
            retries=1,
            cache=ResponseCache(Path(tmp) / "llm_cache.sqlite"),
        )
        load = os.getloadavg()[0]
        before_mb = _status_mb("VmRSS")
        _reset_peak()  # the sweep's own peak, not the ground truths' built before it
        cpu0, wall0 = _cpu_seconds(), time.perf_counter()
        result = run_sweep(spec, out, backends={SPEC: backend}, concurrency=args.concurrency, progress=False)
        sandbox.shutdown()  # idle sandboxes exit and are reaped: what they used (imports) counts too
        cpu, wall = _cpu_seconds() - cpu0, time.perf_counter() - wall0
        nodes: collections.Counter[str] = collections.Counter()
        for trace in out.rglob("trace.jsonl"):  # read_trace takes the run directory
            for event in read_trace(trace.parent):
                if event.get("event") == "node" and isinstance(event.get("seconds"), (int, float)):
                    nodes[str(event.get("node"))] += float(event["seconds"])
    attempts = sum(result.counts.values())
    peak_mb = _status_mb("VmHWM")
    lines = [
        f"# Sweep CPU per attempt ({attempts} attempts, concurrency {args.concurrency}, load {load:.2f} at start)",
        "",
        f"outcomes {dict(result.counts)}",
        "",
        "| measure | value |",
        "|---|---|",
        f"| CPU, this process and its children | {cpu:.2f} s |",
        f"| **CPU per attempt** | **{cpu / attempts:.3f} s** |",
        f"| wall | {wall:.2f} s |",
        f"| RSS of this process when the sweep starts | {before_mb:.0f} MB |",
        f"| peak RSS of this process during the sweep | {peak_mb:.0f} MB |",
        "",
        "| node | wall seconds summed over attempts | per attempt |",
        "|---|---|---|",
        *(f"| {node} | {seconds:.2f} | {seconds / attempts:.3f} |" for node, seconds in nodes.most_common()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
