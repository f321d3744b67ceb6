"""Moved to :mod:`autonesy.graph.cli.data`; this name stays for old imports."""

from autonesy.graph.cli.data import build, fetch, group, load, register, show

data_app = group()

__all__ = ["build", "data_app", "fetch", "group", "load", "register", "show"]
