"""`autonesy-agent sweep` and `autonesy-agent report` (registered on the main app in graph/cli.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from autonesy.graph.report import REPORT_FORMATS, ReportError, build_report
from autonesy.graph.sweep import EXECUTORS, SweepError, SweepSpec, run_sweep

errors = Console(stderr=True)


def sweep(
    llm: Optional[List[str]] = typer.Option(None, "--llm", help="An LLM spec (repeat for several); default: $AUTONESY_LLM, else local. Ignored with --policy expert."),
    tasks: List[str] = typer.Option(["all"], "--tasks", help="all | comma list of catalogue names, task files (*.toml), satbench:PATH, dcpbench:PATH."),
    formats: List[str] = typer.Option(["all"], "--formats", help="all | comma list of dimacs, nat, pysat, cpmpy, sympy."),
    prompts: List[str] = typer.Option(["all"], "--prompts", help="all | comma list of zs, zs-cot."),
    details: List[str] = typer.Option(["both"], "--details", help="both | detailed | not-detailed."),
    policy: Optional[str] = typer.Option(None, "--policy", help="expert | oracle-feedback (default: each prompt style's benchmark policy)."),
    repeats: int = typer.Option(1, "--repeats", min=1, help="Attempts per grid point (fresh LLM answers each)."),
    max_repairs: int = typer.Option(5, "--max-repairs", min=0, help="Syntax-repair rounds before rejecting."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Attempts running at once per LLM endpoint."),
    executor: str = typer.Option("local", "--executor", help=f"One of: {', '.join(EXECUTORS)}."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster address (with --executor ray; default: a local Ray instance)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Worker processes (with --executor process; default: min(concurrency, CPUs))."),
    llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1, help="Seconds to wait for one LLM answer."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="Completion token limit (default: the backend's)."),
    attempt_time_limit: Optional[float] = typer.Option(None, "--attempt-time-limit", min=1.0, help="Wall seconds per attempt; a longer one is stopped and recorded as timeout (default: none)."),
    out: Path = typer.Option(..., "--out", help="Sweep directory (run again with the same one to resume)."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print the outcome as JSON."),
) -> None:
    """Run a grid of attempts (LLMs × tasks × formats × prompts × details) into one results table; resumable."""
    from autonesy.graph.cli import training_labels, user_errors

    with user_errors():
        spec = SweepSpec(tasks=tuple(tasks), formats=tuple(formats), prompts=tuple(prompts), details=tuple(details),
                         llms=tuple(llm or ()), policy=policy, repeats=repeats, max_repairs=max_repairs,
                         max_tokens=max_tokens, llm_timeout_s=llm_timeout, attempt_time_limit_s=attempt_time_limit)
        try:
            result = run_sweep(spec, out, executor=executor, concurrency=concurrency, labels_for=training_labels,
                               ray_address=ray_address, workers=workers, progress=not (quiet or as_json),
                               console=errors)
        except SweepError as error:
            raise _user_error(str(error)) from None
    data = result.to_dict()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(data["counts"].items()))
        typer.echo(f"{data['attempts']} attempts ({counts}); ran {data['ran']} now, {data['skipped']} were already "
                   f"done; {data['seconds']:.1f} s\nresults: {data['results'][0]}, {data['results'][1]}")
    failed = sum(data["counts"].get(status, 0) for status in ("error", "unfinished", "pending"))
    if failed:
        typer.echo(f"error: {failed} attempts did not finish (see error.json in their directories); run the same "
                   "command again to retry them", err=True)
        raise typer.Exit(1)


def report(
    dirs: List[Path] = typer.Argument(..., help="Sweep directories, results.jsonl files or run directories."),
    fmt: str = typer.Option("md", "--format", help=f"Printed format: {', '.join(REPORT_FORMATS)} (files are written in all three)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the tables and plots (default: DIR/report)."),
    compare_published: bool = typer.Option(False, "--compare-published", help="Put the published auto-nesy-bench figures next to ours."),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the PNG plots."),
) -> None:
    """The paper's tables (by description, prompting and format; per LLM; downstream) and plots."""
    from autonesy.graph.cli import user_errors

    with user_errors():
        if fmt not in REPORT_FORMATS:
            raise _user_error(f"unknown --format {fmt!r}; choose one of {', '.join(REPORT_FORMATS)}")
        try:
            result = build_report(dirs, out, compare_published=compare_published, plots=not no_plots)
        except ReportError as error:
            raise _user_error(str(error)) from None
    typer.echo(result.render(fmt))
    if result.plots:
        errors.print(f"plots: {', '.join(str(p) for p in result.plots)}", highlight=False, markup=False)


def _user_error(message: str) -> Exception:
    from autonesy.graph.cli import UserError

    return UserError(message)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
    app.command("report")(report)
