"""The ``autonesy-agent`` command line: a thin layer over tasks/, tools/ and the runners in graph/.

One module per command group; each has ``register(app)``. Building the app imports typer and rich
only: every command imports what it needs when it runs, so ``--help`` and ``tasks`` answer at once.
"""

from __future__ import annotations

import os

import typer

from autonesy.graph.cli import compile, data, plugins, report, run, score, sweep, tasks, trace, verify, view
from autonesy.graph.cli.common import UserError, escape_library_output, user_errors
from autonesy.tools.config import TRUST_TASK_CODE_ENV

app = typer.Typer(
    name="autonesy-agent",
    help="LLM agents that formalize constraints into CNF, score them against expert formulas, and train NeSy predictors.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _global_options(
    trust_task_code: bool = typer.Option(
        False,
        "--trust-task-code",
        help="Import the Python modules a task file names beside it (encoder, oracle). They run as your code, "
        "outside the sandbox: only for task files you trust.",
    ),
) -> None:
    """LLM agents that formalize constraints into CNF, score them against expert formulas, and train NeSy
    predictors."""
    escape_library_output()
    if trust_task_code:
        os.environ[TRUST_TASK_CODE_ENV] = "1"  # sweep workers inherit it


for _group in (tasks, data, score, compile, run, trace, view, sweep, report, verify, plugins):
    _group.register(app)


def main() -> None:  # pragma: no cover - console-script entry
    """Run the command line (the console-script entry point)."""
    app()


__all__ = ["UserError", "app", "main", "user_errors"]
