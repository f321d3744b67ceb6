"""``score``: a formula against the task's ground truth (``autonesy.score`` on the command line)."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import (
    count_text,
    json_option,
    listed,
    print_json,
    say,
    score_text,
    user_errors,
)
from autonesy.tools.options import COUNT_METHODS, FORMATS

FILE_HELP = "The formula text, with or without a <cnf> block."
TASK_HELP = "Task name or task file."
FORMAT_HELP = f"One of: {listed(FORMATS)}."


def score(
    file: Path = typer.Argument(..., help=FILE_HELP),
    task_name: str = typer.Option(..., "--task", help=TASK_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    method: str = typer.Option("auto", "--count", help=f"Counting method: {listed(COUNT_METHODS)}."),
    as_json: bool = json_option(),
) -> None:
    """Score a formula against the task's ground truth (precision, recall, F1, relation, MC-R)."""
    from autonesy import score as score_answer

    with user_errors():
        result = score_answer(file, task=task_name, format=fmt, count=method)
    if as_json:
        print_json(result.to_dict())
        return
    say(
        f"{result.task}: relation {result.relation}, F1 {score_text(result.f1)} "
        f"(precision {score_text(result.precision)}, recall {score_text(result.recall)}), MC-R {result.mc_ratio:.4g}\n"
        f"TP {count_text(result.tp)}  FP {count_text(result.fp)}  FN {count_text(result.fn)}  TN {count_text(result.tn)}  "
        f"(counts: {result.count_method}, {'exact' if result.exact else 'approximate'})"
    )
    if result.autofixes:
        say("autofixes: " + ", ".join(result.autofixes))


def register(app: typer.Typer) -> None:
    """Add ``score`` to the app."""
    app.command("score")(score)
