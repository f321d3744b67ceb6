"""Cost of one verification — tokens and wall time — for Nsvif, Nsvif-Neu and the LLM-as-judge baseline,
measured side by side on the same scripted VifBench data.

Every verifier is answered by the VifBench oracle (``autonesy.agents.verify.oracle``): the right
decomposition, plans, checker programs and judgements, returned instantly, with token counts estimated
as characters / 4 over the real prompts and answers. So

- the **tokens** are those of the real prompts (and of answers shaped like good answers);
- the **pipeline wall time** is everything except LLM latency: graph, sandboxed checker runs, Z3, traces;
- the **modelled wall time** adds an LLM latency model (``--call-s`` per call plus ``--tok-s`` generated
  tokens per second, calls in sequence) to put the two into proportion.

No response cache is used: every call is paid. All verifiers must reproduce every label (F1 = 1);
the script says so if one does not.

    python benchmarks/verify_cost.py [--count 20] [--seed 0] [--call-s 0.5] [--tok-s 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify.oracle import oracle_chat_model
from autonesy.graph.verify_run import VerifyConfig
from autonesy.graph.vifbench import GROUP_ORDER, evaluate
from autonesy.tasks.vifbench import generate, label_distribution

VERIFIERS = ("nsvif", "nsvif-neu", "judge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20, help="instructions (two verifications each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--call-s", type=float, default=0.5, help="modelled latency per LLM call (s)")
    parser.add_argument("--tok-s", type=float, default=50.0, help="modelled generation speed (tokens/s)")
    args = parser.parse_args()

    start = time.perf_counter()
    records = generate(args.count, args.seed)
    generated = time.perf_counter() - start
    print(f"data: {len(records)} pairs from {args.count} instructions, generated in {generated:.2f} s (seed {args.seed})")
    print("label distribution per complexity group:")
    print(f"  {'group':6} {'instr':>5} {'sat':>4} {'unsat':>5} {'constraints':>11} {'true':>5} {'false':>5} {'clean':>6}")
    for group, row in label_distribution(records).items():
        print(f"  {group:6} {row['instructions']:5d} {row['sat']:4d} {row['unsat']:5d} {row['mean_constraints']:11.1f} "
              f"{row['labels_true']:5d} {row['labels_false']:5d} {100 * row['clean_share']:5.0f}%")

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "vifbench.jsonl"
        data.write_text("".join(__import__("json").dumps(r) + "\n" for r in records))
        for verifier in VERIFIERS:
            backend = LangChainChatBackend(oracle_chat_model(records), "oracle", "vifbench-oracle", retries=1)
            begin = time.perf_counter()
            report = evaluate(data, [verifier], VerifyConfig(llm="oracle"), Path(tmp) / verifier, backend=backend)
            scores = report["verifiers"][verifier]
            scores["elapsed"] = time.perf_counter() - begin
            results[verifier] = scores
            f1 = scores["overall"]["f1"]
            if f1 != 1.0:
                print(f"WARNING: {verifier} did not reproduce every label (F1 {f1})")

    base = results["judge"]["cost"]["per_pair"]
    base_tokens = base["prompt_tokens"] + base["completion_tokens"]

    def modelled(per_pair: dict) -> float:
        return per_pair["wall_seconds"] + per_pair["llm_calls"] * args.call_s + per_pair["completion_tokens"] / args.tok_s

    print("\ncost per verification (means over pairs)")
    print(f"  {'verifier':10} {'F1':>5} {'calls':>6} {'prompt tok':>10} {'compl. tok':>10} {'total tok':>10} {'× judge':>8} "
          f"{'checker runs':>12} {'pipeline s':>10} {'modelled s':>10} {'× judge':>8}")
    for verifier, scores in results.items():
        p = scores["cost"]["per_pair"]
        total = p["prompt_tokens"] + p["completion_tokens"]
        print(f"  {verifier:10} {scores['overall']['f1']:5.2f} {p['llm_calls']:6.1f} {p['prompt_tokens']:10.0f} "
              f"{p['completion_tokens']:10.0f} {total:10.0f} {total / base_tokens:8.1f} {p['checker_runs']:12.1f} "
              f"{p['wall_seconds']:10.3f} {modelled(p):10.2f} {modelled(p) / modelled(base):8.1f}")
    print(f"  (modelled s = pipeline s + {args.call_s:g} s per call + completion tokens at {args.tok_s:g} tokens/s)")

    print("\ntotal tokens per verification by complexity group")
    print(f"  {'group':6} " + " ".join(f"{v:>10}" for v in VERIFIERS) + f" {'nsvif × judge':>14}")
    for group in GROUP_ORDER:
        row = []
        for verifier in VERIFIERS:
            p = results[verifier]["group_cost"][group]["per_pair"]
            row.append(p["prompt_tokens"] + p["completion_tokens"])
        print(f"  {group:6} " + " ".join(f"{v:10.0f}" for v in row) + f" {row[0] / row[2]:14.1f}")


if __name__ == "__main__":
    main()
