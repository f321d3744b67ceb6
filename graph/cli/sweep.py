"""``sweep``: a grid of attempts (LLMs × tasks × formats × prompts × details) into one results table (``autonesy.sweep``)."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from autonesy.graph.cli.common import (
    INFRA_FAILED_EXIT,
    cache_option,
    errors,
    infra_failed_line,
    json_option,
    listed,
    llm_timeout_option,
    max_repairs_option,
    max_tokens_option,
    print_json,
    say,
    user_errors,
)
from autonesy.graph.options import EXECUTORS
from autonesy.tools.config import LLM_ENV
from autonesy.tools.terminal_text import terminal_text


def sweep(
    llm: list[str] | None = typer.Option(
        None,
        "--llm",
        help=f"An LLM spec (repeat for several); default: ${LLM_ENV}, else local. Ignored with --policy expert.",
    ),
    tasks: list[str] = typer.Option(
        ["all"],
        "--tasks",
        help="all | comma list of catalogue names, task files (*.toml), satbench:PATH, dcpbench:PATH.",
    ),
    formats: list[str] = typer.Option(
        ["all"], "--formats", help="all | comma list of dimacs, nat, pysat, cpmpy, sympy."
    ),
    prompts: list[str] = typer.Option(["all"], "--prompts", help="all | comma list of zs, zs-cot."),
    details: list[str] = typer.Option(["both"], "--details", help="both | detailed | not-detailed."),
    policy: str | None = typer.Option(
        None, "--policy", help="expert | oracle-feedback | few-shot (default: each prompt style's benchmark policy)."
    ),
    decoding: str | None = typer.Option(
        None, "--decoding", help="free | grammar (default: grammar for the embedded model, else free)."
    ),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Attempts per grid point (fresh LLM answers each)."),
    max_repairs: int = max_repairs_option(),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Attempts running at once per LLM endpoint."),
    executor: str = typer.Option("local", "--executor", help=f"One of: {listed(EXECUTORS)}."),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster address (with --executor ray; default: a local Ray instance)."
    ),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Worker processes (with --executor process; default: min(concurrency, CPUs))."
    ),
    llm_timeout: float = llm_timeout_option(),
    max_tokens: int | None = max_tokens_option(),
    cache: bool = cache_option(),
    limit: int | None = typer.Option(
        None,
        "--limit",
        min=1,
        help="Run a sample of N attempts of the grid: the same N on every run (a larger N keeps them).",
    ),
    sample_seed: int = typer.Option(0, "--sample-seed", help="Which sample --limit draws."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the attempts a run would start or retry, at most how many LLM calls and about how many "
        "tokens; run and write nothing.",
    ),
    attempt_time_limit: float | None = typer.Option(
        None,
        "--attempt-time-limit",
        min=1.0,
        help="Wall seconds per attempt; a longer one is stopped and recorded as timeout (default: none).",
    ),
    out: Path = typer.Option(..., "--out", help="Sweep directory (run again with the same one to resume)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    as_json: bool = json_option("Print the outcome as JSON."),
) -> None:
    """Run a grid of attempts (LLMs × tasks × formats × prompts × details) into one results table; resumable.

    Exit status: 0 when every attempt finished, 3 when some ended infra_failed (the LLM endpoint failed
    past its retries; the same command retries them), 1 when some crashed or did not finish."""
    from autonesy import sweep as run_grid
    from autonesy._sweep import GridOptions, sweep_spec
    from autonesy.graph.sweep.run import plan_sweep, resume_text

    grid: GridOptions = {
        "tasks": tasks,
        "formats": formats,
        "prompts": prompts,
        "details": details,
        "llms": llm or (),
        "policy": policy,
        "repeats": repeats,
        "max_repairs": max_repairs,
        "max_tokens": max_tokens,
        "llm_timeout": llm_timeout,
        "decoding": decoding,
        "attempt_time_limit": attempt_time_limit,
        "data": True,
        "limit": limit,
        "sample_seed": sample_seed,
        "cache": cache,
    }
    with user_errors():
        if dry_run:
            plan = plan_sweep(sweep_spec(**grid), out)
            if as_json:
                print_json(plan.to_dict())
            else:
                typer.echo(plan.text())
            return
        if executor == "process" and workers is None and not as_json:
            cores, wanted = os.cpu_count() or 1, concurrency * max(1, len(llm or ()))
            if wanted > cores:
                say(
                    f"note: the process executor runs {cores} worker processes (one per CPU core), not {wanted}; "
                    "--workers N sets the number",
                    err=True,
                )
        result = run_grid(
            out,
            executor=executor,
            concurrency=concurrency,
            ray_address=ray_address,
            workers=workers,
            progress=not (quiet or as_json),
            console=errors,
            **grid,
        )
    data = result.to_dict()
    if as_json:
        print_json(data)
    else:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(data["counts"].items()))
        usage = data["usage"]
        typer.echo(
            terminal_text(
                f"{data['attempts']} attempts ({counts}); ran {data['ran']} now ({resume_text(data['resume'])}); "
                f"{data['seconds']:.1f} s\nLLM answers: {usage['llm_calls']:,} sent, {usage['cached_answers']:,} from "
                f"the response cache; tokens: {usage['tokens_spent']:,} spent now, {usage['tokens_would_cost']:,} "
                f"would cost without the cache\nresults: {data['results'][0]}, {data['results'][1]}"
            )
        )
    failed = sum(data["counts"].get(status, 0) for status in ("error", "unfinished", "pending"))
    outages = data["counts"].get("infra_failed", 0)
    if outages:
        typer.echo(infra_failed_line(outages, "running the same command again"), err=True)
    if failed:
        typer.echo(
            f"error: {failed} attempts did not finish (see error.json in their directories); run the same "
            "command again to retry them",
            err=True,
        )
        raise typer.Exit(1)
    if outages:
        raise typer.Exit(INFRA_FAILED_EXIT)


def register(app: typer.Typer) -> None:
    """Add ``sweep`` to the app."""
    app.command("sweep")(sweep)
