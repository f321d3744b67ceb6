"""``compile``: a formula to CNF and to an SDD over exactly the task's variables (``autonesy.compile``)."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import count_text, say, user_errors
from autonesy.graph.cli.score import FILE_HELP, FORMAT_HELP, TASK_HELP
from autonesy.tools.config import COMPILE_TIME_LIMIT_S


def compile_formula(
    file: Path = typer.Argument(..., help=FILE_HELP),
    task_name: str = typer.Option(..., "--task", help=TASK_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    out: Path = typer.Option(..., "--out", help="Directory for the DIMACS file and the SDD."),
    time_limit: float = typer.Option(COMPILE_TIME_LIMIT_S, "--time-limit", help="Compilation time budget in seconds."),
) -> None:
    """Convert a formula to CNF and compile it to an SDD over exactly the task's variables."""
    from autonesy import compile as compile_answer

    with user_errors():
        compiled = compile_answer(file, task=task_name, format=fmt, out=out, name=file.stem, time_limit=time_limit)
    cnf_path, sdd_path, vtree_path = compiled.files
    say(
        f"wrote {cnf_path}, {sdd_path} and {vtree_path}: SDD size {compiled.size}, "
        f"{count_text(compiled.model_count)} models over {compiled.formula.num_task_vars} variables, "
        f"{compiled.sdd.seconds:.2f} s"
    )


def register(app: typer.Typer) -> None:
    """Add ``compile`` to the app."""
    app.command("compile")(compile_formula)
