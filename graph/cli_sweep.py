"""Moved to :mod:`autonesy.graph.cli.sweep` and :mod:`autonesy.graph.cli.report`; this name stays for old imports."""

import typer

from autonesy.graph.cli.report import report
from autonesy.graph.cli.sweep import sweep


def register(app: typer.Typer) -> None:
    """Add ``sweep`` and ``report`` to the app (old registration path)."""
    app.command("sweep")(sweep)
    app.command("report")(report)


__all__ = ["register", "report", "sweep"]
