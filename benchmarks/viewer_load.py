"""Viewer load times in a real browser: a 10,000-attempt results table (load, filter, sort) and an
attempt whose trace is 50 MB (page load, opening one LLM call), side by side with the bare cost of
reading the same files in Python (``read_results``, ``json.loads`` of every trace line).

    python benchmarks/viewer_load.py [--attempts 10000] [--trace-mb 50] [--keep DIR]

Needs Debian's chromium and the playwright package (no browser download). Prints one table; the
issue's target: the table loads and filters in under 2 s; the big trace does not freeze the page.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from autonesy.graph.results import ROW_FIELDS, SWEEP_FILE, read_results, write_results
from autonesy.graph.tracer import Tracer

TASKS = ("fashion", "sushi", "sudoku4", "nqueens5", "warcraft", "grid", "music", "courses")
MODELS = ("gpt-oss-120b", "gemma4-31b", "qwen3-32b", "mistral-nemo")
FORMATS = ("dimacs", "nat", "pysat", "cpmpy", "sympy")


STATUSES = ("accepted",) * 6 + ("rejected",) * 3 + ("error",)
FAILURES = {"rejected": "syntax", "infra_failed": "connection", "error": "crash"}


def make_sweep(out: Path, attempts: int, models: Sequence[str] = MODELS, statuses: Sequence[str] = STATUSES) -> None:
    """A sweep directory holding only its results table (what the table page and ``report`` read): attempt ``i``
    asks ``models[i % len(models)]`` (so every model has attempts), its status drawn from ``statuses``."""
    rng = random.Random(0)
    out.mkdir(parents=True)
    (out / SWEEP_FILE).write_text(json.dumps({"grids": []}))
    rows = []
    for i in range(attempts):
        status = rng.choice(statuses)
        relation = rng.choice(("equal", "permissive", "strict", "incomparable")) if status == "accepted" else None
        model = models[i % len(models)]
        row = dict.fromkeys(ROW_FIELDS)
        row.update(
            attempt_id=f"{i:016x}",
            task=rng.choice(TASKS),
            task_spec="fashion",
            benchmark="catalogue",
            num_vars=16,
            llm=f"http://llm.example/v1@{model}",
            model=model,
            format=rng.choice(FORMATS),
            prompt=rng.choice(("zs", "zs-cot")),
            detail=rng.choice(("detailed", "not-detailed")),
            policy="zs",
            repeat=i % 3,
            max_repairs=5,
            status=status,
            syntax_error=status == "rejected",
            failure=FAILURES.get(status),
            reason="no parseable formula after 5 repair rounds" if status == "rejected" else "",
            repair_rounds=rng.randint(0, 5),
            semantic_rounds=0,
            autofixes=[],
            n_autofixes=0,
            llm_calls=2,
            prompt_tokens=900,
            completion_tokens=300,
            llm_seconds=1.5,
            wall_seconds=2.0,
            f1=round(rng.random(), 4) if status == "accepted" else (0.0 if status == "rejected" else None),
            relation=relation,
            run_dir=f"attempts/{i:016x}",
        )
        rows.append(row)
    time.sleep(0.01)
    write_results(out, rows)


def make_big_trace(run_dir: Path, megabytes: int) -> int:
    """An attempt whose trace holds ``megabytes`` MB of LLM calls (long prompts, repair rounds)."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(
        json.dumps({"task": "fashion", "format": "dimacs", "policy": "zs", "llm": "x"})
    )
    tracer = Tracer(run_dir)
    prompt = "Formalize the constraint below as a propositional formula in DIMACS CNF.\n" + ("1 -2 3 0\n" * 30_000)
    rounds = 0
    while (run_dir / "trace.jsonl").exists() is False or (run_dir / "trace.jsonl").stat().st_size < megabytes * 2**20:
        tracer.event("node", node="formalize", seconds=0.01, status="running")
        tracer.event(
            "llm_call",
            role="repair",
            round=rounds,
            prompt_hash="0" * 64,
            messages=[{"role": "system", "content": "You are an expert."}, {"role": "user", "content": prompt}],
            response={"text": f"[[FIXED]]\n<cnf>\np cnf 3 {rounds + 1}\n" + "1 2 0\n" * (rounds + 1) + "</cnf>"},
            text=f"[[FIXED]]\n<cnf>\np cnf 3 {rounds + 1}\n" + "1 2 0\n" * (rounds + 1) + "</cnf>",
            error=None,
        )
        tracer.event("syntax_error", round=rounds, kind="syntax", message="line 2: 'x' is not an integer")
        tracer.event(
            "repair_round",
            round=rounds + 1,
            error_kind="syntax",
            error="line 2",
            verdict="fixed",
            changed="+1 −0 lines",
        )
        rounds += 1
    tracer.event("outcome", status="rejected", reason="repair budget exhausted")
    return (run_dir / "trace.jsonl").stat().st_size


@contextmanager
def serving(dirs: list[Path]) -> Iterator[str]:
    """``autonesy-agent view DIR…`` in its own process (as a user runs it); yields the URL it prints."""
    server = subprocess.Popen(
        [sys.executable, "-m", "autonesy.graph", "view", *map(str, dirs)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = server.stdout.readline()
        match = re.search(r"http://\S+", line)
        if not match:
            raise SystemExit(f"the viewer did not start: {line!r}")
        yield match.group(0)
    finally:
        server.terminate()
        server.wait(10)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--trace-mb", type=int, default=50)
    parser.add_argument("--keep", type=Path, help="write the generated directories here and keep them")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    base = args.keep or Path(tempfile.mkdtemp(prefix="viewer-load-"))
    sweep, attempt = base / "sweep", base / "big-attempt"
    make_sweep(sweep, args.attempts)
    size = make_big_trace(attempt, args.trace_mb)
    results: list[tuple[str, float]] = []
    results.append(("python: read_results (baseline)", timed(lambda: read_results(sweep))))
    results.append(
        (
            "python: json.loads every trace line (baseline)",
            timed(lambda: [json.loads(line) for line in (attempt / "trace.jsonl").open()]),
        )
    )
    try:
        with serving([sweep, attempt]) as url, sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))

            def shown_until(done) -> None:  # polled from here: the page's CSP forbids Playwright's eval-based waits
                while not done(page.inner_text("#shown")):
                    time.sleep(0.005)

            def load_table():
                page.goto(f"{url}r/0/")
                shown_until(lambda text: text.startswith(f"{args.attempts} of"))

            results.append(
                (f"browser: table page, {args.attempts} rows, load until rendered (cold)", timed(load_table))
            )
            results.append(("browser: the same page again (rows cached by the server)", timed(load_table)))

            def filter_table():
                page.select_option("select[data-filter=status]", "accepted")
                page.select_option("select[data-filter=format]", "cpmpy")
                page.fill("#search", "sushi")
                shown_until(lambda text: not text.startswith(f"{args.attempts} of"))

            results.append(("browser: filter (status, format, search), as driven by Playwright", timed(filter_table)))
            results.append(
                (
                    "browser: the last filter's work inside the page (filter + render)",
                    float(page.get_attribute("#results", "data-render-ms")) / 1000,
                )
            )
            results.append(("browser: sort by f1", timed(lambda: page.click("th[data-sort=f1]"))))
            shown = page.inner_text("#shown")

            def load_trace():
                page.goto(f"{url}r/1/")
                page.wait_for_selector("li.ev-outcome")

            results.append(
                (f"browser: attempt page, {size / 2**20:.0f} MB trace, first load (server parses)", timed(load_trace))
            )
            html_kb = len(page.content()) / 1024
            results.append(("browser: the same page again (parsed trace cached)", timed(load_trace)))

            def open_call():
                page.locator("li.ev-llm_call details summary").nth(3).click()
                page.wait_for_selector("li.ev-llm_call .answer pre")

            results.append(("browser: open one LLM call (lazy fetch of its prompt/answer)", timed(open_call)))
            responsive = timed(lambda: page.evaluate("1 + 1"))
            results.append(("browser: main thread answers after that", responsive))
            browser.close()
    finally:
        if args.keep is None:
            shutil.rmtree(base)
    width = max(len(name) for name, _ in results)
    for name, seconds in results:
        print(f"{name:<{width}}  {seconds:8.3f} s")
    print(
        f"filtered: {shown}; attempt page HTML {html_kb:.0f} KB for a {size / 2**20:.0f} MB trace; JS errors: {len(errors)}"
    )
    seconds = dict(results)
    table = next(v for k, v in seconds.items() if k.startswith("browser: table page"))
    trace = next(v for k, v in seconds.items() if k.startswith("browser: attempt page"))
    print(
        f"ratios: table load / read_results = {table / results[0][1]:.1f}×; "
        f"trace page first load / json.loads of the trace = {trace / results[1][1]:.1f}×"
    )


if __name__ == "__main__":
    main()
