"""What every format front-end returns: a CNF over the task variables, or an error for an LLM."""

from __future__ import annotations

from dataclasses import dataclass, field

from autonesy.tools.cnf import CNF
from autonesy.tools.options import FORMATS

FRONT_ENDS: dict[str, str] = {  # format -> the module of its front-end (imported on first use)
    "dimacs": "autonesy.tools.formats.dimacs",
    "nat": "autonesy.tools.formats.nat",
    "pysat": "autonesy.tools.formats.pysat_program",
    "cpmpy": "autonesy.tools.formats.cpmpy_program",
    "sympy": "autonesy.tools.formats.sympy_program",
}
assert tuple(FRONT_ENDS) == FORMATS

# Error kinds, stable names that traces aggregate into an error taxonomy.
ERROR_KINDS = (
    "no_block",  # no <cnf>…</cnf> block (or it is empty)
    "syntax",  # the text does not parse in the format's grammar
    "unknown_variable",  # a name or index that is not a task variable
    "out_of_range",  # a DIMACS literal outside the declared/allowed range
    "header",  # DIMACS header wrong in a way autofix could not repair
    "missing_definition",  # a program did not define what the format requires
    "type",  # a program defined it with the wrong type
    "runtime",  # a program raised an exception
    "timeout",  # a program ran past its time limit
    "resource",  # a program hit its memory/output/process limit
    "forbidden",  # a program tried something the sandbox forbids (network, files outside, env)
    "too_large",  # input or result larger than allowed
)


class FormatError(Exception):
    """A formula the front-end cannot turn into CNF. ``message`` says what, where, and what was expected."""

    def __init__(self, kind: str, message: str, line: int | None = None) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"[{self.kind}] {where}{self.message}"


@dataclass(frozen=True)
class Conversion:
    """The outcome of turning an answer into CNF: exactly one of ``cnf`` and ``error`` is set."""

    format: str
    source: str  # the formula text actually parsed (after block extraction and autofixes)
    cnf: CNF | None = None
    error: FormatError | None = None
    autofixes: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())  # lint findings on a parsed formula (see .lint), "[name] message"

    @property
    def ok(self) -> bool:
        """Whether the answer became a CNF."""
        return self.cnf is not None
