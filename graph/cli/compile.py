"""``compile``: a formula to CNF and to an SDD over exactly the task's variables."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import count_text, say, user_errors
from autonesy.graph.cli.score import FILE_HELP, FORMAT_HELP, TASK_HELP, read_formula
from autonesy.tools.config import COMPILE_TIME_LIMIT_S


def compile_formula(
    file: Path = typer.Argument(..., help=FILE_HELP),
    task_name: str = typer.Option(..., "--task", help=TASK_HELP),
    fmt: str = typer.Option(..., "--format", help=FORMAT_HELP),
    out: Path = typer.Option(..., "--out", help="Directory for the DIMACS file and the SDD."),
    time_limit: float = typer.Option(COMPILE_TIME_LIMIT_S, "--time-limit", help="Compilation time budget in seconds."),
) -> None:
    """Convert a formula to CNF and compile it to an SDD over exactly the task's variables."""
    from autonesy.tools import safe_files
    from autonesy.tools.cnf import to_dimacs
    from autonesy.tools.compile import compile_to_sdd

    with user_errors():
        task, conversion = read_formula(task_name, fmt, file)
        out = safe_files.output_dir(out)
        stem = file.stem
        safe_files.write_text(out / f"{stem}.cnf", to_dimacs(conversion.cnf, task.names))
        sdd = compile_to_sdd(conversion.cnf, time_limit_s=time_limit)
        sdd_path, vtree_path = sdd.save(out, stem)
    say(
        f"wrote {out / (stem + '.cnf')}, {sdd_path} and {vtree_path}: SDD size {sdd.size}, "
        f"{count_text(sdd.model_count())} models over {task.num_vars} variables, {sdd.seconds:.2f} s"
    )


def register(app: typer.Typer) -> None:
    """Add ``compile`` to the app."""
    app.command("compile")(compile_formula)
