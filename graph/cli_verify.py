"""Moved to :mod:`autonesy.graph.cli.verify`; this name stays for old imports."""

from autonesy.graph.cli.common import UserError as CommandError
from autonesy.graph.cli.verify import oracle_backend, register

__all__ = ["CommandError", "oracle_backend", "register"]
