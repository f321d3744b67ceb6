"""`python -m autonesy.graph` is the `autonesy-agent` command."""

from autonesy.graph.cli import app

app()
