"""DIMACS as an LLM writes it: a forgiving reader with errors the model can act on.

Accepted (the prompt states the same conventions):

- one header ``p cnf VARIABLES CLAUSES`` (``p``/``cnf`` in any case) before the first clause;
- comment lines starting with ``c``; blank lines; a line holding only ``%`` ends the formula
  (the SATLIB trailer) and everything after it is ignored;
- clauses are whitespace-separated non-zero integers ended by ``0``; a clause may span lines and a
  line may hold several clauses; ``0`` is only a terminator (a ``0`` with no literal before it —
  an empty clause — is rejected as a mistake);
- variables 1..N are the task variables (N = number of task names); variables above N are
  auxiliaries and are allowed; every literal must be within the header's variable count;
- the header's clause count must equal the number of clauses; no clause at all is valid (≡ true).

The CNF returned numbers the auxiliaries it uses consecutively from N+1 (:func:`compact_auxiliaries`):
a header that declares more variables than are used, or auxiliaries numbered with gaps (one
clause on variable N+10^6), add nothing to what counting it costs (unused auxiliaries change no
projected count).

Errors are :class:`FormatError` of kind ``syntax`` (a token that is not an integer, an unterminated
last clause, an empty clause), ``header`` (missing, malformed, duplicated, misplaced, wrong clause
count) or ``out_of_range`` (a literal above the header's count or above ``max_var``). Each names
the line and the token and says what was expected. Header problems and missing terminators are
what :mod:`.autofix` repairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from autonesy.tools.cnf import CNF, MAX_AUX_VARS
from autonesy.tools.formats.base import FormatError

CONVENTION = """\
Write the formula in DIMACS CNF:
- first the header line 'p cnf V C', where V is the highest variable index used and C the number
  of clauses;
- then the clauses, one per line: non-zero integers separated by spaces, each clause ending with 0.
  The literal 3 means variable 3 is true and -3 that it is false; variable i is the i-th variable
  of the list above (the first one is 1). Variables are written by index, never by name;
- you may introduce auxiliary variables, numbered consecutively after the last task variable;
- comment lines start with 'c'.
Example (variables 1 OR NOT 2, and 2 OR 3):
c two clauses over three variables
p cnf 3 2
1 -2 0
2 3 0"""

_INTEGER = re.compile(r"^[+-]?[0-9]+$")  # ASCII digits: int() refuses some Unicode digits (²)
MAX_DIGITS = 18  # a longer literal is above any variable bound (and int() refuses over 4300 digits)


def _show(line: str, width: int = 120) -> str:
    line = line.strip()
    return line if len(line) <= width else line[: width - 1] + "…"


def is_comment(stripped: str) -> bool:
    """A DIMACS comment line (any line starting with ``c``)."""
    return stripped.startswith("c")


def is_header(stripped: str) -> bool:
    """The ``p`` header line (case-insensitive, not a word that starts with p)."""
    return stripped[:1] in ("p", "P") and (len(stripped) == 1 or not stripped[1].isalnum())


def parse_header(stripped: str) -> tuple[int, int] | None:
    """(variables, clauses) of a well-formed header line, else None."""
    parts = stripped.split()
    if len(parts) != 4 or parts[0].lower() != "p" or parts[1].lower() != "cnf":
        return None
    if not all(re.fullmatch(f"[0-9]{{1,{MAX_DIGITS}}}", part) for part in parts[2:]):
        return None
    return int(parts[2]), int(parts[3])


def parse(source: str, names: Sequence[str], *, max_var: int | None = None, **_limits) -> CNF:
    """CNF over task variables 1..len(names) (auxiliaries above); raises :class:`FormatError`.

    ``max_var`` bounds variable indices (default N + 1,000,000); other limits are ignored.
    """
    n = len(names)
    max_var = n + MAX_AUX_VARS if max_var is None else max_var
    header: tuple[int, int] | None = None
    header_line = 0
    clauses: list[tuple[int, ...]] = []
    current: list[int] = []
    current_line = 0
    first_clause_line = 0
    highest = 0

    for lineno, raw in enumerate(source.splitlines(), start=1):
        line = raw.strip()
        if not line or is_comment(line):
            continue
        if line == "%":
            break
        if is_header(line):
            if header is not None:
                raise FormatError(
                    "header",
                    f"a second header {_show(line)!r} (the first is on line {header_line}); write exactly "
                    "one header 'p cnf VARIABLES CLAUSES' before the first clause.",
                    line=lineno,
                )
            parsed = parse_header(line)
            if parsed is None:
                raise FormatError(
                    "header",
                    f"malformed header {_show(line)!r}; expected 'p cnf VARIABLES CLAUSES' with two "
                    "non-negative integers, e.g. 'p cnf 12 30'.",
                    line=lineno,
                )
            if first_clause_line:
                raise FormatError(
                    "header",
                    f"the header {_show(line)!r} comes after the first clause (line {first_clause_line}); "
                    "put 'p cnf VARIABLES CLAUSES' before all clauses.",
                    line=lineno,
                )
            header, header_line = parsed, lineno
            continue
        for token in line.split():
            if not _INTEGER.match(token):
                raise FormatError(
                    "syntax",
                    f"{token!r} in {_show(line)!r} is not an integer. A clause is a list of non-zero "
                    "integers ending with 0 (3 means variable 3 is true, -3 that it is false); variables "
                    "are written by their index, not their name; comments go on their own line "
                    "starting with 'c'.",
                    line=lineno,
                )
            if len(token.lstrip("+-")) > MAX_DIGITS:
                raise FormatError(
                    "out_of_range",
                    f"literal {_show(token)} has {len(token.lstrip('+-')):,} digits, above the limit of {max_var:,} "
                    f"variables. Task variables are 1..{n}; number auxiliary variables consecutively from {n + 1}.",
                    line=lineno,
                )
            lit = int(token)
            if lit == 0:
                if not current:
                    raise FormatError(
                        "syntax",
                        f"a 0 with no literal before it in {_show(line)!r}: that is an empty clause, "
                        "which can never be satisfied. Each clause needs at least one literal before "
                        "its terminating 0; remove the extra 0.",
                        line=lineno,
                    )
                clauses.append(tuple(current))
                current = []
                continue
            var = abs(lit)
            if var > max_var:
                raise FormatError(
                    "out_of_range",
                    f"literal {token} uses variable {var}, above the limit of {max_var:,} variables. "
                    f"Task variables are 1..{n}; number auxiliary variables consecutively from {n + 1}.",
                    line=lineno,
                )
            if header is not None and var > header[0]:
                raise FormatError(
                    "out_of_range",
                    f"literal {token} in {_show(line)!r} uses variable {var}, but the header declares "
                    f"only {header[0]} variables. The header's first number must be at least the "
                    f"highest variable used (task variables are 1..{n}, auxiliaries above {n}).",
                    line=lineno,
                )
            if not current:
                current_line = lineno
            if not first_clause_line:
                first_clause_line = lineno
            highest = max(highest, var)
            current.append(lit)

    if current:
        raise FormatError(
            "syntax",
            f"the last clause ({' '.join(map(str, current))}) does not end with 0; every clause, "
            "the last one included, must be terminated by 0.",
            line=current_line,
        )
    expected = f"'p cnf {max(n, highest)} {len(clauses)}'"
    if header is None:
        raise FormatError(
            "header",
            f"no header line; the formula must start with 'p cnf VARIABLES CLAUSES', here {expected}.",
            line=None,
        )
    if header[1] != len(clauses):
        raise FormatError(
            "header",
            f"the header declares {header[1]} clauses but the formula has {len(clauses)} (a clause "
            f"ends at each 0); write 'p cnf {header[0]} {len(clauses)}'.",
            line=header_line,
        )
    compacted, top = compact_auxiliaries(n, clauses)
    return CNF(n, compacted, top)


def compact_auxiliaries(n: int, clauses: Sequence[Sequence[int]]) -> tuple[tuple[tuple[int, ...], ...], int]:
    """Renumber the variables above ``n`` that occur, in order of first use, to n+1, n+2, ...

    Projected on 1..n the formula is the same; its size is now bounded by its text, not by the
    largest index an untrusted answer wrote. Returns the clauses and the highest variable.
    """
    renumber: dict[int, int] = {}
    out = []
    for clause in clauses:
        new = []
        for lit in clause:
            var = abs(lit)
            if var > n:
                var = renumber.setdefault(var, n + len(renumber) + 1)
            new.append(var if lit > 0 else -var)
        out.append(tuple(new))
    return tuple(out), n + len(renumber)
