"""Sweep overhead: the 360-attempt grid (18 tasks × 5 formats × 2 prompts × 2 details) against a
scripted LLM, once with zero latency and once with a simulated latency at a given concurrency;
the latency run's wall time is compared with the ideal, calls × latency / concurrency.

    python benchmarks/sweep_overhead.py [--latency 0.5] [--concurrency 16] [--answers reject|reference]

Answers (the scripted model is in tests/scripted_llm.py):
- ``reject`` (default): the formalizer answers without a formula and the repair agent answers
  [[OK]], so each attempt makes 2 LLM calls and is rejected — no parsing, sandbox, compilation or
  counting: what remains is the sweep's own machinery (thread pool, semaphores, the LangGraph
  attempt with its SQLite checkpoints, the trace, the shared response cache, the results table).
- ``reference``: the formalizer answers with the task's reference formula in the attempt's format
  (1 call per attempt, every attempt accepted and scored): the full pipeline. Its CPU work (SDD
  compilation, counting, sandboxed programs) dwarfs 0.5 s of latency on a small machine, so its
  ratio to the latency-only ideal measures the pipeline, not the sweep.

Printed: wall times, the ideal, wall/ideal, and wall/max(ideal, zero-latency wall) — the best any
schedule could do when the pipeline's own work (measured at zero latency) is counted too.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from scripted_llm import ScriptedChatModel, format_of, task_of  # noqa: E402

from autonesy.agents.llm import LangChainChatBackend, ResponseCache  # noqa: E402
from autonesy.graph.sweep.grid import SweepSpec  # noqa: E402
from autonesy.graph.sweep.run import run_sweep  # noqa: E402
from autonesy.tasks.registry import TASK_NAMES, get_task  # noqa: E402

SPEC = "http://scripted.bench/v1@overhead"


def answer_for(mode: str, tasks):
    def reject(prompt: str) -> str:
        return "[[OK]] nothing to change" if "## Checker error" in prompt else "I cannot formalize this constraint."

    def reference(prompt: str) -> str:
        from autonesy.tasks.reference import reference_formalization

        return reference_formalization(task_of(prompt, tasks), format_of(prompt))

    return reject if mode == "reject" else reference


def one_sweep(out: Path, spec: SweepSpec, answer, latency_s: float, concurrency: int) -> tuple[float, int, dict]:
    model = ScriptedChatModel(answer=answer, latency_s=latency_s)
    backend = LangChainChatBackend(
        model, "http://scripted.bench/v1", "overhead", retries=1, cache=ResponseCache(out / "llm_cache.sqlite")
    )
    start = time.perf_counter()
    result = run_sweep(spec, out, backends={SPEC: backend}, concurrency=concurrency, progress=False)
    return time.perf_counter() - start, backend.calls, result.counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5, help="simulated seconds per LLM call")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--answers", choices=("reject", "reference"), default="reject")
    parser.add_argument("--tasks", default="all", help="'all' (the 360-attempt grid) or a comma list")
    args = parser.parse_args()
    names = TASK_NAMES if args.tasks == "all" else tuple(args.tasks.split(","))
    tasks = [get_task(name) for name in names]
    for task in tasks:  # build the ground truths up front: not part of the sweep's cost
        _ = task.ground_truth
    spec = SweepSpec(tasks=tuple(names), llms=(SPEC,))
    answer = answer_for(args.answers, tasks)
    with tempfile.TemporaryDirectory() as tmp:
        zero, zero_calls, zero_counts = one_sweep(Path(tmp) / "zero", spec, answer, 0.0, args.concurrency)
        slow, calls, counts = one_sweep(Path(tmp) / "slow", spec, answer, args.latency, args.concurrency)
    attempts = sum(counts.values())
    ideal = calls * args.latency / args.concurrency
    print(f"grid: {attempts} attempts, answers '{args.answers}', outcomes {counts}, {calls} LLM calls")
    print(f"zero latency      : {zero:7.2f} s wall ({1000 * zero / attempts:.1f} ms per attempt, {zero_calls} calls)")
    print(f"latency {args.latency:g} s, c={args.concurrency:<3}: {slow:7.2f} s wall")
    print(f"ideal (calls × latency / concurrency) = {calls} × {args.latency:g} / {args.concurrency} = {ideal:.2f} s")
    print(f"wall / ideal                     = {slow / ideal:.2f}×   (aim: ≤ 1.2×)")
    print(f"wall / max(ideal, zero-latency)  = {slow / max(ideal, zero):.2f}×")


if __name__ == "__main__":
    main()
