"""What every command shares: the consoles, the JSON printer, one-line errors and the common options.

Conventions: a problem the user can fix (any :class:`AutonesyError`, a file that cannot be read)
prints one ``error: …`` line and exits 1 (``verify`` and ``follow``: 2); ``--json`` prints JSON only.
``run`` and ``sweep`` exit 3 (``INFRA_FAILED_EXIT``) when attempts ended ``infra_failed`` (the LLM
endpoint failed past its retries; nothing of them was scored) and none crashed: running the same
command again retries exactly those. An attempt that crashed (status ``error``) exits 1.
Nothing heavy is imported here: ``--help`` must answer at once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from autonesy.tools.config import DATA_DIR_ENV, LLM_ENV, LLM_TIMEOUT_S, MAX_REFLECTIONS, MAX_REPAIRS
from autonesy.tools.errors import AutonesyError, one_line
from autonesy.tools.terminal_text import terminal_line, terminal_text

console = Console()
errors = Console(stderr=True)


class UserError(AutonesyError):
    """A wrong or inconsistent command-line argument."""


@contextlib.contextmanager
def user_errors(code: int = 1) -> Iterator[None]:
    """Turn a problem the user can fix into one ``error:`` line on stderr and exit ``code``."""
    try:
        yield
    except (AutonesyError, OSError, UnicodeDecodeError) as error:
        typer.echo(f"error: {terminal_line(one_line(error))}", err=True)
        raise typer.Exit(code) from None


class _TerminalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record))


_plain_warning = warnings.formatwarning


def _escaped_warning(*args: Any, **kwargs: Any) -> str:
    return terminal_text(_plain_warning(*args, **kwargs))


def escape_library_output() -> None:
    """Warnings and log lines that libraries print on stderr may quote text from elsewhere (matplotlib a
    label's missing glyph, a client a server's error): show their control characters escaped too."""
    warnings.formatwarning = _escaped_warning
    if logging.lastResort is not None:  # what prints a warning when logging is not configured
        logging.lastResort.setFormatter(_TerminalFormatter())


def print_json(data: Any) -> None:
    """Print data as indented JSON (what every ``--json`` prints), unknown types and counts past 2^53 as text."""
    from autonesy.graph.summary import json_safe

    typer.echo(json.dumps(json_safe(data), indent=2, default=str))


def say(text: str, *, err: bool = False, **style: Any) -> None:
    """Print text that may come from elsewhere (names, formulas, errors, files of a received directory) on
    stdout, or stderr with ``err``: control characters shown escaped, no markup, emoji codes or highlighting."""
    (errors if err else console).print(terminal_text(text), highlight=False, markup=False, emoji=False, **style)


def cell(value: Any) -> Text:
    """A table cell for a value that may come from elsewhere: one line, control characters shown escaped,
    never read as markup."""
    return Text(terminal_line(str(value)))


def score_text(value: float | None) -> str:
    """A score in [0, 1] to four places, or in scientific notation when those would read 0.0000 (a
    permissive formula's F1 is small but not zero); ``unknown`` for a score not recorded."""
    if value is None:
        return "unknown"
    return f"{value:.4f}" if value == 0 or value >= 5e-5 else f"{value:.2e}"


MAX_EXACT_BITS = 12_000  # 3,613 digits: Python writes no integer past 4,300


def count_text(count: int | str | None) -> str:
    """A model count for a person: exact with thousands separators up to ``MAX_EXACT_BITS``, then as
    a power of ten (counts reach 2^(10^5)). A recorded count is text that may come from elsewhere:
    anything but digits is "unknown"."""
    if isinstance(count, str) and count.isascii() and count.isdigit():
        digits = count.lstrip("0") or "0"
        if len(digits) > MAX_EXACT_BITS // 3:  # past the exact range whatever its bits: not converted
            return f"about 10^{len(digits) - 1}"
        count = int(digits)
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        if count.bit_length() <= MAX_EXACT_BITS:
            return f"{count:,}"
        return f"about 10^{int((count.bit_length() - 1) * 0.30103)}"
    return "unknown"


def progress_printer(quiet: bool):
    """The ``notify`` callback of the runners: progress lines on stderr, none with ``--json``."""
    return (lambda message: None) if quiet else (lambda message: say(message, err=True))


LLM_HELP = (
    f"openai:MODEL | http://HOST:PORT/v1@MODEL | local | replay:TRACE | CONFIG.toml (default: ${LLM_ENV}, else local)."
)
DATA_DIR_HELP = f"Data directory (default: ${DATA_DIR_ENV}, else the user cache directory)."


INFRA_FAILED_EXIT = 3


def infra_failed_line(count: int, again: str) -> str:
    """The line ``run`` and ``sweep`` end with when attempts outlived the endpoint's retries."""
    attempts = "1 attempt" if count == 1 else f"{count} attempts"
    return (
        f"error: {attempts} ended infra_failed (the LLM endpoint failed past its retries; nothing of them was "
        f"scored): {again} retries them (exit status {INFRA_FAILED_EXIT})"
    )


def cache_option() -> Any:
    """``--cache/--no-cache``: the response cache shared by every run and sweep."""
    return typer.Option(
        True,
        "--cache/--no-cache",
        help="Answer repeated LLM requests from the shared response cache ($AUTONESY_LLM_CACHE, else "
        "$AUTONESY_CACHE_DIR/llm/responses.sqlite); --no-cache sends every request.",
    )


def max_tokens_option() -> Any:
    """``--max-tokens``: the completion token limit sent with every LLM request."""
    return typer.Option(None, "--max-tokens", min=1, help="Completion token limit (default: the backend's).")


def llm_timeout_option() -> Any:
    """``--llm-timeout``, with the shared default from ``tools/config.py``."""
    return typer.Option(
        LLM_TIMEOUT_S,
        "--llm-timeout",
        min=0.1,
        help="Wall-clock seconds for one LLM answer, retries included (the request is abandoned then).",
    )


def max_repairs_option() -> Any:
    """``--max-repairs``, with the shared default from ``tools/config.py``."""
    return typer.Option(MAX_REPAIRS, "--max-repairs", min=0, help="Syntax-repair rounds before rejecting.")


def max_reflections_option(help: str | None = None) -> Any:
    """``--max-reflections``, with the shared default from ``tools/config.py``."""
    return typer.Option(MAX_REFLECTIONS, "--max-reflections", min=0, help=help)


def data_dir_option(*names: str, help: str = DATA_DIR_HELP) -> Any:
    """``--data-dir`` (plus any short names), defaulting to the environment or the user cache."""
    return typer.Option(None, "--data-dir", *names, help=help)


def json_option(help: str | None = None) -> Any:
    """``--json``, one spelling for every command."""
    return typer.Option(False, "--json", help=help)


def listed(names: tuple[str, ...]) -> str:
    """Options as a comma list for help texts."""
    return ", ".join(names)
