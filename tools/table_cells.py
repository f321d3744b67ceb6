"""Table cells made safe for whoever opens the file: a spreadsheet (CSV), TeX (``.tex``) or a Markdown renderer.

Names in a table (models, tasks, prompts, plugins' ``pkg/name``) may come from a received sweep, so
they are data, never markup:
- **CSV** (OWASP "CSV injection"): a text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return (also after leading spaces) is prefixed with ``'`` so a spreadsheet shows it as text, and no
  carriage return is left to start a row; numbers we wrote stay numbers (a text cell that is just a decimal number,
  such as ``-0.25``, too).
- **LaTeX**: all ten special characters (``& % $ # _ { } ~ ^ \\``) become their text commands in one
  pass, so no ``^`` survives to start TeX's ``^^5c`` notation; line breaks become spaces.
- **Markdown**: HTML is escaped (``<img onerror=…>`` shows as text), as are ``|`` (a column break) and
  ``[`` (a link); line breaks become spaces, so a cell stays one cell.
"""

from __future__ import annotations

import html
import re
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")

_LATEX = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        "±": r"$\pm$",
        "Δ": r"$\Delta$",
        "—": "--",
    }
)
_MARKDOWN = str.maketrans({"|": r"\|", "[": r"\["})  # an escaped "[" starts no link


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs as a formula (non-text values unchanged). A carriage return
    becomes a line feed: Python's writer quotes a cell holding a line feed, but not one holding a lone carriage
    return, where a spreadsheet would start a new row (and a formula in its first cell)."""
    if not isinstance(value, str) or _DECIMAL.fullmatch(value):
        return value
    if value.startswith(FORMULA_STARTS) or value.lstrip(" ").startswith(FORMULA_STARTS):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")


def latex_text(text: Any) -> str:
    """``text`` as LaTeX text: every special character escaped, one line."""
    return _LINE_BREAKS.sub(" ", str(text)).translate(_LATEX)


def markdown_text(text: Any) -> str:
    """``text`` as the content of a Markdown table cell or caption: no HTML, no column break, no link, one line."""
    return html.escape(_LINE_BREAKS.sub(" ", str(text)), quote=False).translate(_MARKDOWN)
