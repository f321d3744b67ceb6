"""Decoding speed of the embedded server, free vs grammar, llama-cpp-python's server vs ours, side by side.

    .venv/bin/python benchmarks/grammar_sampling.py [--task warcraft] [--formats cpmpy,nat,dimacs]
                                                    [--prompts zs,zs-cot] [--max-tokens 128] [--runs 1]

Two servers run at once on the embedded model: ``llama_cpp.server`` as shipped (the grammar sampler
applied to all 262k tokens of Gemma's vocabulary at every step) and ``autonesy.agents.llm.llama_server``
(the free choice checked first; see that module). For each format and prompt, both get the task's
formalizer prompt: once with ``max_tokens=1`` (the prompt is evaluated and cached), then free and
under the decode-time grammar, alternating servers, so every measured call generates only and all
see the same machine load. Printed per call: completion tokens, seconds, tokens/s; then per server
and decoding the total tokens/s, and the ratios grammar/free and ours/shipped. Greedy decoding:
both servers must return the same text under the grammar (checked; a mismatch is printed).
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
from collections import defaultdict

from autonesy.agents.llm.chat import fold_system_prompt
from autonesy.agents.llm.local import LocalLlamaServer
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.sweep.grid import split_list
from autonesy.tasks.registry import load_task
from autonesy.tools.grammar import to_gbnf

SERVERS = {"shipped": "llama_cpp.server", "ours": "autonesy.agents.llm.llama_server"}


def complete(
    server: LocalLlamaServer, messages: list[dict], max_tokens: int, grammar: str | None
) -> tuple[int, float, str]:
    body = {"messages": messages, "max_tokens": max_tokens, "temperature": 0.0}
    if grammar is not None:
        body["grammar"] = grammar
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=3600) as reply:
        data = json.loads(reply.read())
    seconds = time.perf_counter() - start
    return int(data["usage"]["completion_tokens"]), seconds, data["choices"][0]["message"]["content"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="warcraft")
    parser.add_argument("--formats", default="cpmpy,nat,dimacs")
    parser.add_argument("--prompts", default="zs,zs-cot")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()

    task = load_task(args.task)
    servers = {label: LocalLlamaServer(server_module=module) for label, module in SERVERS.items()}
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    try:
        for server in servers.values():
            server.start()
        print("| format | prompt | server | decoding | tokens | seconds | tokens/s |\n|---|---|---|---|---|---|---|")
        for fmt in split_list(args.formats):
            for prompt in split_list(args.prompts):
                policy = make_policy(prompt, None, decoding="grammar", params={"max_tokens": args.max_tokens})
                spec = AttemptSpec(task, fmt, "detailed", prompt)
                messages = fold_system_prompt(policy.formalizer_prompt(spec).messages())
                gbnf = to_gbnf(policy.grammar_for(spec, "formalizer"))
                for server in servers.values():
                    complete(server, messages, 1, None)
                texts = {}
                for _ in range(args.runs):
                    for decoding, grammar in (("free", None), ("grammar", gbnf)):
                        for label, server in servers.items():
                            tokens, seconds, text = complete(server, messages, args.max_tokens, grammar)
                            totals[label, decoding][0] += tokens
                            totals[label, decoding][1] += seconds
                            texts[label, decoding] = text
                            print(
                                f"| {fmt} | {prompt} | {label} | {decoding} | {tokens} | {seconds:.1f} | {tokens / seconds:.1f} |",
                                flush=True,
                            )
                if texts["shipped", "grammar"] != texts["ours", "grammar"]:
                    print(f"MISMATCH {fmt}/{prompt}: {texts['shipped', 'grammar']!r} != {texts['ours', 'grammar']!r}")
    finally:
        for server in servers.values():
            server.stop()
    rate = {key: tokens / seconds for key, (tokens, seconds) in totals.items()}
    print("\n| server | free tokens/s | grammar tokens/s | grammar / free |\n|---|---|---|---|")
    for label in servers:
        free, grammar = rate[label, "free"], rate[label, "grammar"]
        print(f"| {label} | {free:.1f} | {grammar:.1f} | {grammar / free:.2f} |")
    print(
        f"\ngrammar decoding, ours / shipped: {rate['ours', 'grammar'] / rate['shipped', 'grammar']:.1f}x "
        f"(task {args.task}, max_tokens {args.max_tokens}, greedy)"
    )


if __name__ == "__main__":
    main()
