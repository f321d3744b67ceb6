"""``trace``: each attempt's repair loop and the error taxonomy of run directories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from autonesy.graph.cli.common import cell, console, json_option, print_json, say, user_errors

SEMANTIC_KIND = "semantic"  # --kind value of the oracle-feedback rounds


def _steps(report: dict[str, Any], kinds: list[str]) -> list[tuple[int, str]]:
    """The attempt's syntax and oracle-feedback rounds as lines, in trace order (only ``kinds`` when given)."""
    from autonesy.graph.trace import shorten

    steps = []
    for item in report["rounds"]:
        if kinds and item["error_kind"] not in kinds:
            continue
        first_line = item["error"].splitlines()[0] if item["error"] else ""
        line = f"  round {item['round']} [{item['error_kind']}]: {shorten(first_line, 120)} → answered "
        line += f"{item['verdict']}; next check: {item['next_check']}"
        steps.append((item["index"], line + (f" ({item['changed']})" if item.get("changed") else "")))
    for item in report["semantic_rounds"]:
        if kinds and SEMANTIC_KIND not in kinds:
            continue
        shown = item["counterexamples"]
        told = "counterexamples not recorded" if shown is None else f"{shown} counterexample{'s' * (shown != 1)}"
        steps.append((item["index"], f"  semantic round {item['round']}: {told} → {item['changed'] or '…'}"))
    return sorted(steps)


def _outcome(report: dict[str, Any]) -> str:
    """The outcome, with the relation and F1 beside an accepted one (accepted is not correct)."""
    text = str(report["status"])
    if report["status"] == "accepted":
        f1 = report["f1"]
        text += f" · relation {report['relation'] or '—'} · F1 " + ("—" if f1 is None else f"{f1:.3f}")
    return text + (f" ({report['reason']})" if report["reason"] else "")


def trace(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (or folders holding them)."),
    kinds: list[str] = typer.Option(
        [],
        "--kind",
        help=f"Show only rounds of this error kind (syntax, token_budget, lint, …; '{SEMANTIC_KIND}' for "
        "oracle-feedback rounds) and the attempts that have one; repeatable.",
    ),
    nodes: list[str] = typer.Option(
        [], "--node", help="Also show how often this graph node ran and its seconds (check_syntax, …); repeatable."
    ),
    as_json: bool = json_option(),
) -> None:
    """Show each attempt's repair loop (syntax and oracle-feedback rounds) and the error taxonomy (per format, model
    and error kind)."""
    from autonesy.graph.trace import attempt_report, error_taxonomy, find_run_dirs

    with user_errors():
        reports = [attempt_report(path) for path in find_run_dirs(run_dirs)]
        taxonomy = error_taxonomy(reports)
    if kinds:
        reports = [r for r in reports if _steps(r, kinds)]
        taxonomy = [row for row in taxonomy if row["error_kind"] in kinds]
    if as_json:
        print_json({"attempts": reports, "taxonomy": taxonomy})
        return
    for report in reports:
        say(
            f"{report['run_dir']}: {report['task']} · {report['format']} · {report['policy']} · "
            f"{report['model']} → {_outcome(report)}"
        )
        if report["autofixes"] and not kinds:
            say(f"  autofixes: {', '.join(report['autofixes'])}")
        for _, line in _steps(report, kinds):
            say(line)
        for node in nodes:
            visits = report["nodes"].get(node)
            say(f"  node {node}: " + (f"{visits['visits']} visits, {visits['seconds']:.3f} s" if visits else "not run"))
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
