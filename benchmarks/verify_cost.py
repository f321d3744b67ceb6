"""Cost of one verification — LLM calls, tokens, wall time — for Nsvif, Nsvif-Neu and the LLM-as-judge
baseline, side by side on the same scripted VifBench data, for a **fresh** instruction (its first
output) and a **repeated** one (a second output of the same instruction — the offline writer's,
with the next seed — in the same evaluation).

Every verifier is answered by the VifBench oracle of the tests (``tests/scripted_llm.py``), a
label-reading plumbing model: the right decomposition, checker programs and judgements, returned
instantly. Its answers are canned, so completion tokens are those of answers shaped like good ones. Tokens are counted by a real
tokenizer (tiktoken's ``cl100k_base``) over the real prompts and answers. So

- the **calls and tokens** are those of the real prompts (and of answers shaped like good answers);
- the **pipeline wall time** is everything except LLM latency: graph, sandboxed checker runs, Z3, traces;
- the **modelled wall time** adds an LLM latency model (``--call-s`` per call plus ``--tok-s`` generated
  tokens per second, calls in sequence) to put the two into proportion.

No response cache is used: every call is paid. All verifiers must reproduce every label (F1 = 1);
the script says so if one does not.

    python benchmarks/verify_cost.py [--count 12] [--seed 0] [--call-s 0.5] [--tok-s 50]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from autonesy.graph.verify.run import VerifyConfig
from autonesy.graph.verify.vifbench import evaluate
from autonesy.tasks.vifbench import generate
from autonesy.tools.llm_spec import LLMSpec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from scripted_llm import oracle_chat_model, scripted_backend  # noqa: E402  (the tests' label-reading model)

VERIFIERS = ("nsvif", "nsvif-neu", "judge")
KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "checker_runs", "wall_seconds")


def _means(rows: list[dict]) -> dict[str, float]:
    return {k: sum(float(r.get(k) or 0) for r in rows) / len(rows) for k in KEYS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12, help="instructions (two outputs each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--call-s", type=float, default=0.5, help="modelled latency per LLM call (s)")
    parser.add_argument("--tok-s", type=float, default=50.0, help="modelled generation speed (tokens/s)")
    args = parser.parse_args()

    first = generate(args.count, args.seed)
    second = [{**r, "id": r["id"] + "-again"} for r in generate(args.count, args.seed + 1)]
    records = [r for pair in zip(first, second) for r in pair]
    print(
        f"data: {len(records)} pairs from {args.count} instructions (seeds {args.seed}, {args.seed + 1}); each "
        "instruction's first output is 'fresh', its second 'repeated'"
    )
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "vifbench.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in records))
        for verifier in VERIFIERS:
            backend = scripted_backend(oracle_chat_model(records))
            config = VerifyConfig(llm=LLMSpec.parse("http://scripted.test/v1@vifbench-oracle"))
            report = evaluate(data, [verifier], config, Path(tmp) / verifier, backend=backend)
            f1 = report["verifiers"][verifier]["overall"]["f1"]
            if f1 != 1.0:
                print(f"WARNING: {verifier} did not reproduce every label (F1 {f1})")
            rows = [
                json.loads(line)
                for line in (Path(tmp) / verifier / f"results-{verifier}.jsonl").read_text().splitlines()
            ]
            seen, fresh, repeated = set(), [], []
            for row in rows:
                (repeated if row["instruction_id"] in seen else fresh).append(row)
                seen.add(row["instruction_id"])
            table[verifier] = {"f1": f1, "fresh": _means(fresh), "repeated": _means(repeated)}

    def tokens(m: dict) -> float:
        return m["prompt_tokens"] + m["completion_tokens"]

    def modelled(m: dict) -> float:
        return m["wall_seconds"] + m["llm_calls"] * args.call_s + m["completion_tokens"] / args.tok_s

    print("\ncost per verification (means; tokens by tiktoken cl100k_base)")
    print(
        f"  {'verifier':10} {'output':9} {'calls':>6} {'prompt tok':>10} {'compl. tok':>10} {'total tok':>10} "
        f"{'× judge':>8} {'checker runs':>12} {'pipeline s':>10} {'modelled s':>10}"
    )
    for verifier, row in table.items():
        for kind in ("fresh", "repeated"):
            m, judge = row[kind], table["judge"][kind]
            print(
                f"  {verifier:10} {kind:9} {m['llm_calls']:6.2f} {m['prompt_tokens']:10.0f} {m['completion_tokens']:10.0f} "
                f"{tokens(m):10.0f} {tokens(m) / tokens(judge):8.2f} {m['checker_runs']:12.1f} "
                f"{m['wall_seconds']:10.3f} {modelled(m):10.2f}"
            )
    print(f"  (modelled s = pipeline s + {args.call_s:g} s per call + completion tokens at {args.tok_s:g} tokens/s)")


if __name__ == "__main__":
    main()
