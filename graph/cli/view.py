"""``view``: a local web viewer over runs, sweeps and verifications."""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import user_errors


def view(
    dirs: list[Path] = typer.Argument(..., help="Run, sweep and verification directories (or folders holding them)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (default: this machine only)."),
    port: int = typer.Option(0, "--port", help="Port (default: a free one)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the viewer in a web browser."),
    compare_published: bool = typer.Option(False, "--compare-published", help="Published figures in the sweep tables."),
) -> None:
    """A local web viewer over runs, sweeps and verifications (prints its URL)."""
    from autonesy.graph.view.server import serve

    with user_errors():
        serve(dirs, host=host, port=port, open_browser=open_browser, compare_published=compare_published)


def register(app: typer.Typer) -> None:
    """Add ``view`` to the app."""
    app.command("view")(view)
