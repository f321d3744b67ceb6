"""``AutonesyError``: the one base class of the problems a user can fix.

Bad input (a task file, a formula, a run directory), a missing file, an LLM that does not answer:
each subclass carries a one-line message that says what is wrong, and the command line prints it as
``error: MESSAGE`` instead of a traceback. Lives in tools/ so that every layer can raise it.
"""

from __future__ import annotations


class AutonesyError(Exception):
    """A problem the user can fix; ``str(error)`` is one line that names the problem."""


def one_line(error: BaseException) -> str:
    """The error's message on one line (a multi-line message has its lines joined by " / ")."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return " / ".join(lines) or type(error).__name__
