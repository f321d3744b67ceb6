"""A small study against a flaky OpenAI-compatible server: what a researcher's sweep, rerun and
report look like when the endpoint misbehaves, and the seconds each executor takes side by side.

The grid is 2 models × 6 tasks × 3 formats × 2 prompts (72 attempts). Both models are served on
loopback by tests/loopback_llm.py with latency (0.05–0.3 s a call), 2 % HTTP 503, about 20 %
reasoning-style answers (a ``<think>`` block before the answer, or an empty ``content`` with the
answer in ``reasoning_content``), syntax mistakes and semantic ones. The second model's endpoint is
down for the first sweep (an outage): those attempts must come out ``infra_failed``, unscored,
with a non-zero exit; the same command once it is up must retry and score them.

**Plumbing, not a ranking.** The scripted models build their answers from the tasks' reference
formalizations (the answer key), the realistic answers in tests/tools/data/realistic, and
deliberate mutations of both, at hand-set rates. The tables show what the report computes; they
say nothing about any real LLM.

    python benchmarks/flaky_study.py [--executors local,process,ray] [--out DIR]

Writes DIR/<executor>/ (one sweep each), DIR/report/ (the report of the local sweep) and
benchmarks/results/flaky_study.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from loopback_llm import LoopbackLLM, Reply, unused_loopback_port  # noqa: E402
from scripted_llm import _block, format_of, task_of  # noqa: E402

from autonesy.tasks.reference import reference_source  # noqa: E402
from autonesy.tasks.registry import get_task  # noqa: E402

TASKS = ("fashion", "chx", "kand-logic", "cebab", "bdd-oia-2", "cifar100")
FORMATS = ("nat", "cpmpy", "pysat")
PROMPTS = ("zs", "zs-cot")
REALISTIC = HERE.parent / "tests" / "tools" / "data" / "realistic"
# model -> (share answered with the reference, share with a realistic or mutated answer; the rest: a syntax mistake)
QUALITY = {"strong-model": (0.70, 0.20), "weak-model": (0.35, 0.25)}
PRICES = {"strong-model": (2.50, 10.00), "weak-model": (0.15, 0.60)}  # $ per million prompt / completion tokens


def realistic_answer(task: str, fmt: str) -> str | None:
    found = sorted(REALISTIC.glob(f"{task}_{fmt}_*.txt"))
    return found[0].read_text(encoding="utf-8") if found else None


def mutated(source: str, rng: random.Random) -> str:
    """The reference with one of its lines dropped: usually a weaker (permissive) formula."""
    lines = source.strip().splitlines()
    body = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(("#", "import", "from"))]
    if len(body) > 1:
        del lines[rng.choice(body)]
    return "\n".join(lines)


def handler(model: str, tasks):
    good, other = QUALITY[model]
    outages = random.Random(f"{model} 503")  # per request, so a retried request may get through

    def answer(request: dict) -> Reply:
        prompt = request["messages"][-1]["content"]
        rng = random.Random(hashlib.sha256(f"{model}\n{prompt}".encode()).digest())  # the same prompt, the same answer
        delay = rng.uniform(0.05, 0.3)
        if outages.random() < 0.02:
            return Reply(status=503, error="the server is overloaded", delay_s=delay)
        task = task_of("\n".join(m["content"] for m in request["messages"] if m["role"] != "assistant"), tasks)
        fmt = format_of("\n".join(m["content"] for m in request["messages"]))
        right = reference_source(task, fmt)
        if "## Checker error" in prompt or len(request["messages"]) > 2:  # a repair or feedback round
            text = (
                f"[[FIXED]]\n{_block(right)}" if rng.random() < (0.8 if model == "strong-model" else 0.4) else "[[OK]]"
            )
        else:
            draw = rng.random()
            if draw < good:
                text = _block(right)
            elif draw < good + other:
                text = realistic_answer(task.name, fmt) or _block(mutated(right, rng))
            else:
                text = _block(right + "\nthis line is not part of any formula ::")
        tokens = len(prompt) // 4
        if rng.random() < 0.2:  # reasoning style
            if rng.random() < 0.5:
                return Reply(
                    content=f"<think>Let me work through the constraint.</think>\n{text}",
                    prompt_tokens=tokens,
                    completion_tokens=len(text) // 4 + 12,
                    delay_s=delay,
                )
            return Reply(
                content="", reasoning=text, prompt_tokens=tokens, completion_tokens=len(text) // 4, delay_s=delay
            )
        return Reply(content=text, prompt_tokens=tokens, completion_tokens=len(text) // 4, delay_s=delay)

    return answer


def llm_config(folder: Path, model: str, base_url: str) -> Path:
    prompt_price, completion_price = PRICES[model]
    path = folder / f"{model}.toml"
    path.write_text(
        f'[llm]\nbase_url = "{base_url}"\nmodel = "{model}"\ntimeout_s = 30\nretries = 2\n'
        f"prompt_price_per_mtok = {prompt_price}\ncompletion_price_per_mtok = {completion_price}\n",
        encoding="utf-8",
    )
    return path


def sweep(out: Path, configs: list[Path], executor: str) -> tuple[int, float, str]:
    command = [str(Path(sys.executable).parent / "autonesy-agent"), "sweep", "--out", str(out), "--quiet"]
    for config in configs:
        command += ["--llm", str(config)]
    command += ["--tasks", ",".join(TASKS), "--formats", ",".join(FORMATS), "--prompts", ",".join(PROMPTS)]
    command += ["--details", "detailed", "--executor", executor, "--concurrency", "4", "--max-repairs", "1"]
    start = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "AUTONESY_CACHE_DIR": str(out.parent / f"cache-{executor}")},
    )
    return done.returncode, time.perf_counter() - start, (done.stdout + done.stderr).strip()


def condensed(said: str) -> str:
    """A command's output with its per-call retry lines counted instead of listed."""
    lines = said.splitlines()
    retries = [line for line in lines if "; retrying in " in line]
    kept = [line for line in lines if "; retrying in " not in line]
    return "\n".join(kept + ([f"({len(retries)} lines 'attempt N failed …; retrying' left out)"] if retries else []))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executors", default="local,process,ray")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="flaky-study-"))
    out.mkdir(parents=True, exist_ok=True)
    tasks = [get_task(name) for name in TASKS]
    lines = [f"# Flaky-server study ({time.strftime('%Y-%m-%d')}, load average {os.getloadavg()[0]:.1f})", ""]
    lines += ["Plumbing, not a ranking: the scripted models answer from the answer key (see the script).", ""]
    lines += ["| executor | first sweep (weak model down) | exit | rerun (both up) | exit |", "|---|---|---|---|---|"]
    outputs = []
    with LoopbackLLM(handler("strong-model", tasks), model="strong-model") as strong:
        for executor in args.executors.split(","):
            weak_port = unused_loopback_port()
            configs = [
                llm_config(out, "strong-model", strong.base_url),
                llm_config(out, "weak-model", f"http://127.0.0.1:{weak_port}/v1"),
            ]
            code, seconds, said = sweep(out / executor, configs, executor)
            first = (code, seconds, condensed(said))
            with LoopbackLLM(handler("weak-model", tasks), model="weak-model", port=weak_port):
                code, seconds, said = sweep(out / executor, configs, executor)
            again = (code, seconds, condensed(said))
            lines.append(f"| {executor} | {first[1]:.1f} s | {first[0]} | {again[1]:.1f} s | {again[0]} |")
            outputs.append(
                f"### {executor}\n\nfirst sweep:\n\n    {first[2].replace(chr(10), chr(10) + '    ')}\n\n"
                f"rerun:\n\n    {again[2].replace(chr(10), chr(10) + '    ')}\n"
            )
    report = subprocess.run(
        [
            str(Path(sys.executable).parent / "autonesy-agent"),
            "report",
            str(out / "local"),
            "--out",
            str(out / "report"),
        ],
        capture_output=True,
        text=True,
    )
    lines += ["", *outputs, "## report of the local sweep", "", report.stdout.strip(), ""]
    for table in sorted((out / "report").glob("*.md")):
        lines += [f"### {table.name}", "", table.read_text(encoding="utf-8").strip(), ""]
    text = "\n".join(lines) + "\n"
    (HERE / "results" / "flaky_study.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
