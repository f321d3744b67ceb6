"""``trace``: each attempt's repair loop and the error taxonomy of run directories."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import cell, console, json_option, print_json, say, user_errors


def trace(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (or folders holding them)."),
    as_json: bool = json_option(),
) -> None:
    """Show each attempt's repair loop and the error taxonomy (per format, model and error kind)."""
    from autonesy.graph.trace import attempt_report, error_taxonomy, find_run_dirs

    with user_errors():
        reports = [attempt_report(path) for path in find_run_dirs(run_dirs)]
        taxonomy = error_taxonomy(reports)
    if as_json:
        print_json({"attempts": reports, "taxonomy": taxonomy})
        return
    for report in reports:
        say(
            f"{report['run_dir']}: {report['task']} · {report['format']} · {report['policy']} · "
            f"{report['model']} → {report['status']}" + (f" ({report['reason']})" if report["reason"] else "")
        )
        if report["autofixes"]:
            say(f"  autofixes: {', '.join(report['autofixes'])}")
        for item in report["rounds"]:
            first_line = item["error"].splitlines()[0] if item["error"] else ""
            say(
                f"  round {item['round']}: [{item['error_kind']}] {first_line[:120]} → {item['verdict']}"
                + (f" ({item['changed']})" if item.get("changed") else "")
            )
        say(f"  LLM calls: {report['llm_calls']}")
    if taxonomy:
        from rich import box
        from rich.table import Table

        table = Table(title="syntax errors by format, model and kind", box=box.SIMPLE_HEAD)
        for column in ("format", "model", "error kind", "count"):
            table.add_column(column)
        for row in taxonomy:
            table.add_row(cell(row["format"]), cell(row["model"]), cell(row["error_kind"]), str(row["count"]))
        console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``trace`` to the app."""
    app.command("trace")(trace)
