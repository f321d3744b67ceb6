"""``plugins``: what the registry holds — the built-in policies, tasks and LLM providers, and those of every
installed plugin (docs/plugins.md), with the package and version each comes from."""

from __future__ import annotations

import importlib.metadata

import typer

from autonesy.graph.cli.common import cell, console, json_option, print_json
from autonesy.tools.errors import one_line
from autonesy.tools.terminal_text import terminal_line


def warn_broken(failures: list) -> None:
    """One ``warning:`` line on stderr per plugin that cannot be used (never folded at the terminal's width)."""
    for failure in failures:
        typer.echo(f"warning: {terminal_line(one_line(failure))}", err=True)


def load_registry() -> list:
    """Import the built-in registrations and every installed plugin; the plugins that cannot be used."""
    import autonesy.agents.policies  # noqa: F401 - registers the built-in policies
    import autonesy.tasks.registry  # noqa: F401 - registers the catalogue
    from autonesy.agents.llm.registry import builtin_providers
    from autonesy.tools import registry

    builtin_providers()
    return registry.load_plugins()


def list_plugins(as_json: bool = json_option("Print JSON: the registered entries and the broken plugins.")) -> None:
    """What can be named on the command line: policies, tasks and LLM providers, built-in or from a plugin."""
    from rich import box
    from rich.table import Table

    from autonesy.tools import registry

    failures = load_registry()
    own = importlib.metadata.version(registry.BUILTIN_PACKAGE)
    rows = [
        {"kind": e.kind, "name": e.name, "package": e.package, "version": e.version or own, "builtin": e.builtin}
        for kind in registry.KINDS
        for e in registry.entries(kind)
    ]
    if as_json:
        print_json({"entries": rows, "broken": [str(failure) for failure in failures]})
        return
    warn_broken(failures)
    table = Table(title="registered policies, tasks and LLM providers", box=box.SIMPLE_HEAD)
    for column in ("kind", "name", "package", "version"):
        table.add_column(column, no_wrap=column != "package")
    for row in rows:
        package = f"{row['package']} (built-in)" if row["builtin"] else row["package"]
        table.add_row(cell(row["kind"]), cell(row["name"]), cell(package), cell(row["version"]))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``plugins`` to the app."""
    app.command("plugins")(list_plugins)
