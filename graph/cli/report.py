"""``report``: the paper's tables and plots from sweep and run directories."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import UserError, listed, say, user_errors
from autonesy.graph.options import REPORT_FORMATS
from autonesy.tools.terminal_text import terminal_text


def report(
    dirs: list[Path] = typer.Argument(..., help="Sweep directories, results.jsonl files or run directories."),
    fmt: str = typer.Option(
        "md", "--format", help=f"Printed format: {listed(REPORT_FORMATS)} (files are written in all three)."
    ),
    out: Path | None = typer.Option(None, "--out", help="Folder for the tables and plots (default: DIR/report)."),
    compare_published: bool = typer.Option(
        False, "--compare-published", help="Put the published auto-nesy-bench figures next to ours."
    ),
    pool: list[str] = typer.Option(
        [],
        "--pool",
        help="Average over a setting that varies (llm, format, prompt, detail, policy, decoding, max_repairs, "
        "benchmark); repeatable. Without it every varying setting is a column of the tables.",
    ),
    no_plots: bool = typer.Option(False, "--no-plots", help="Skip the PNG plots."),
    html: bool = typer.Option(
        False, "--html", help="Also write the viewer's pages as a static site (OUT/html/index.html)."
    ),
    rescore: bool = typer.Option(
        False,
        "--rescore",
        help="First score again each accepted attempt of a sweep directory whose score you did not seal for the "
        "formula it holds (a received sweep, an edited formula.cnf); its summary and results files are rewritten.",
    ),
) -> None:
    """The paper's tables (by description, prompting and format; per LLM; downstream) and plots."""
    with user_errors():
        if fmt not in REPORT_FORMATS:
            raise UserError(f"unknown --format {fmt!r}; choose one of {listed(REPORT_FORMATS)}")
        from autonesy.graph.report import build_report

        if rescore:
            from autonesy.graph.score_seal import rescore_sweep

            for folder in dirs:
                say(f"rescored {rescore_sweep(folder)} attempts in {folder}", err=True)
        result = build_report(dirs, out, compare_published=compare_published, plots=not no_plots, pool=pool)
        if html:
            from autonesy.graph.view.export import export_html

            site = export_html(dirs, result.folder / "html", compare_published=compare_published)
    typer.echo(terminal_text(result.render(fmt)))  # not through rich: a table is printed unwrapped
    if result.merged:
        say(
            f"merged: {len(result.merged)} attempts read more than once; the most complete outcome of each kept",
            err=True,
        )
    if result.plots:
        say(f"plots: {', '.join(str(p) for p in result.plots)}", err=True)
    if html:
        say(f"html: {site}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the app."""
    app.command("report")(report)
