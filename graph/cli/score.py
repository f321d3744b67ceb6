"""``score``: a formula against the task's ground truth; ``read_formula`` is shared with ``compile``."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import (
    UserError,
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


def read_formula(task_name: str, fmt: str, file: Path):
    """The task and the file's formula converted to CNF over the task's variables."""
    from autonesy.tasks.registry import load_task
    from autonesy.tools.formats import convert

    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; choose one of {listed(FORMATS)}")
    task = load_task(task_name)
    text = file.read_text()
    bare = "<cnf" not in text.lower()
    if bare:  # a bare formula file: the whole file is the block
        text = f"<cnf>\n{text}\n</cnf>"
    conversion = convert(text, fmt, task.names)
    if conversion.error is not None:
        prefix = f"no <cnf> block, and the whole file is not a {fmt} formula either: " if bare else ""
        raise UserError(f"{file}: {prefix}{conversion.error}")
    return task, conversion


def score(
    file: Path = typer.Argument(..., help=FILE_HELP),
    task_name: str = typer.Option(..., "--task", help=TASK_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    method: str = typer.Option("auto", "--count", help=f"Counting method: {listed(COUNT_METHODS)}."),
    as_json: bool = json_option(),
) -> None:
    """Score a formula against the task's ground truth (precision, recall, F1, relation, MC-R)."""
    from autonesy.tools.metrics import score_formula

    with user_errors():
        task, conversion = read_formula(task_name, fmt, file)
        result = score_formula(conversion.cnf, task.ground_truth, method)
    data = {**result.to_dict(), "task": task.name, "format": fmt, "autofixes": list(conversion.autofixes)}
    if as_json:
        print_json(data)
        return
    say(
        f"{task.name}: relation {result.relation}, F1 {score_text(result.f1)} "
        f"(precision {score_text(result.precision)}, recall {score_text(result.recall)}), MC-R {result.mc_ratio:.4g}\n"
        f"TP {count_text(result.tp)}  FP {count_text(result.fp)}  FN {count_text(result.fn)}  TN {count_text(result.tn)}  "
        f"(counts: {result.count_method}, {'exact' if result.exact else 'approximate'})"
    )
    if conversion.autofixes:
        say("autofixes: " + ", ".join(conversion.autofixes))


def register(app: typer.Typer) -> None:
    """Add ``score`` to the app."""
    app.command("score")(score)
