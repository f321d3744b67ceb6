"""The CNF value every part of autonesy passes around, and its DIMACS I/O (kept in one place).

A :class:`CNF` knows how many of its variables are *task* variables (1..N): every variable above N
is auxiliary and is projected out before anything is counted or compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autonesy.tools.errors import AutonesyError

Clause = tuple[int, ...]
MAX_AUX_VARS = 1_000_000  # auxiliaries an untrusted formula (an answer, a task file's DIMACS) may number above N


class DimacsError(AutonesyError, ValueError):
    """A DIMACS text that cannot be read; the message says where and what was expected."""


@dataclass(frozen=True)
class CNF:
    """Clauses over task variables 1..num_task_vars plus auxiliaries up to num_vars."""

    num_task_vars: int
    clauses: tuple[Clause, ...]
    num_vars: int = 0
    comments: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        clauses = tuple(tuple(int(lit) for lit in clause) for clause in self.clauses)
        object.__setattr__(self, "clauses", clauses)
        highest = max((abs(lit) for clause in clauses for lit in clause), default=0)
        if any(lit == 0 for clause in clauses for lit in clause):
            raise ValueError("a clause holds the literal 0, which DIMACS reserves as terminator")
        num_vars = max(self.num_vars, self.num_task_vars, highest)
        object.__setattr__(self, "num_vars", num_vars)

    @property
    def num_aux_vars(self) -> int:
        """How many auxiliary variables sit above the task variables."""
        return self.num_vars - self.num_task_vars

    @property
    def task_vars(self) -> range:
        """The task variables' DIMACS indices, 1..N."""
        return range(1, self.num_task_vars + 1)

    def conjoin(self, other: CNF) -> CNF:
        """Both formulas at once; the other's auxiliaries are renumbered above ours. Our comments are kept
        (what they say of our variables still holds: a declared literal count is still recognised)."""
        if other.num_task_vars != self.num_task_vars:
            raise ValueError("cannot conjoin formulas over different task variables")
        shift = self.num_vars - self.num_task_vars

        def move(lit: int) -> int:
            return lit if abs(lit) <= self.num_task_vars else lit + shift if lit > 0 else lit - shift

        moved = tuple(tuple(move(lit) for lit in clause) for clause in other.clauses)
        return CNF(self.num_task_vars, self.clauses + moved, self.num_vars + other.num_aux_vars, self.comments)

    def with_clauses(self, clauses: Iterable[Sequence[int]]) -> CNF:
        """The same variables with other clauses (e.g. after simplification)."""
        return CNF(self.num_task_vars, tuple(tuple(c) for c in clauses), self.num_vars)


def from_pysat(formula, num_task_vars: int) -> CNF:
    """Wrap a PySAT ``CNF``/``CNFPlus`` (or plain clause list); its ``nv`` keeps unused aux ids."""
    clauses = getattr(formula, "clauses", formula)
    return CNF(num_task_vars, tuple(tuple(c) for c in clauses), getattr(formula, "nv", 0))


def to_dimacs(cnf: CNF, names: Sequence[str] | None = None, comments: Iterable[str] = ()) -> str:
    """DIMACS text; ``c var <index> <name>`` lines name the task variables when given."""
    lines = [f"c {line}" for text in comments for line in text.splitlines()]
    if names is not None:
        if len(names) != cnf.num_task_vars:
            raise ValueError(f"{len(names)} names for {cnf.num_task_vars} task variables")
        lines += [f"c var {i} {name}" for i, name in enumerate(names, start=1)]
    lines.append(f"c task_vars {cnf.num_task_vars}")
    lines.append(f"p cnf {cnf.num_vars} {len(cnf.clauses)}")
    lines += [" ".join(map(str, clause + (0,))) for clause in cnf.clauses]
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r"^p\s+cnf\s+(\d+)\s+(\d+)\s*$")


def _count(text: str, lineno: int) -> int:
    """A count from a header or comment: ASCII digits, at most 18 (int() refuses '²' and > 4300 digits)."""
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise DimacsError(f"line {lineno}: {text[:30]!r} is not a count (at most 18 digits)")
    return int(text)


def parse_dimacs(text: str, num_task_vars: int | None = None, *, max_vars: int | None = None) -> CNF:
    """Strict DIMACS reader (ground truths, exports, fixtures).

    The header must be present and right. ``num_task_vars`` defaults to a ``c task_vars N`` comment
    when the file has one, else to every variable being a task variable. ``max_vars`` bounds the header's
    variable count for a file from elsewhere (``p cnf 999999999999999999 1`` and a clause naming that
    variable make the solvers allocate per variable until they run out of memory).
    """
    header: tuple[int, int] | None = None
    clauses: list[Clause] = []
    current: list[int] = []
    comments: list[str] = []
    declared_task_vars: int | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line == "%":
            continue
        if line.startswith("c"):
            comments.append(line[1:].strip())
            parts = line.split()
            if len(parts) == 3 and parts[1] == "task_vars" and parts[2].isdigit():
                declared_task_vars = _count(parts[2], lineno)
            continue
        if line.startswith("p"):
            match = _HEADER.match(line)
            if match is None or header is not None:
                raise DimacsError(f"line {lineno}: expected one header 'p cnf VARS CLAUSES', got {line[:80]!r}")
            header = (_count(match.group(1), lineno), _count(match.group(2), lineno))
            if max_vars is not None and header[0] > max_vars:
                raise DimacsError(
                    f"line {lineno}: the header declares {header[0]:,} variables, above the limit of {max_vars:,}"
                )
            continue
        if header is None:
            raise DimacsError(f"line {lineno}: clause before the 'p cnf' header")
        for token in line.split():
            try:
                lit = int(token)
            except ValueError:
                raise DimacsError(f"line {lineno}: {token[:40]!r} is not an integer literal") from None
            if lit == 0:
                clauses.append(tuple(current))
                current = []
            elif abs(lit) > header[0]:
                raise DimacsError(f"line {lineno}: literal {token[:40]} exceeds the {header[0]} declared variables")
            else:
                current.append(lit)
    if header is None:
        raise DimacsError("no 'p cnf VARS CLAUSES' header")
    if current:
        raise DimacsError("the last clause is not terminated by 0")
    if len(clauses) != header[1]:
        raise DimacsError(f"header declares {header[1]} clauses, found {len(clauses)}")
    n = num_task_vars if num_task_vars is not None else declared_task_vars
    n = header[0] if n is None else n
    if n > header[0]:
        raise DimacsError(f"{n} task variables but the header declares only {header[0]} variables")
    return CNF(n, tuple(clauses), header[0], tuple(comments))


def read_dimacs(path: str | Path, num_task_vars: int | None = None) -> CNF:
    """A CNF from a DIMACS file we trust (a file from elsewhere: read it bounded, then :func:`parse_dimacs`)."""
    return parse_dimacs(Path(path).read_text(), num_task_vars)
