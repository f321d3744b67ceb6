"""Text from elsewhere made safe to print on a terminal.

An error message, a formula, a model name or a trace line may come from an LLM, a generated
program or a directory received from someone else. Printed raw, an escape sequence in it can set
the window title (OSC 0), write the clipboard (OSC 52), draw a link to anywhere (OSC 8), move the
cursor or overwrite what was printed (CSI, a carriage return); bidi overrides reorder what the reader
sees. Every such character is shown escaped instead (ESC as ``\\x1b``): visible, never interpreted.
Printable text, Unicode included, passes unchanged.
"""

from __future__ import annotations

import re

# C0 and C1 control characters (ESC, CSI, OSC, DCS, BEL, CR…), DEL, the line and paragraph separators,
# the bidi marks, embeddings, overrides and isolates, and lone surrogates (not encodable at all)
_OTHER_UNSAFE = "\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_IN_LINE = re.compile(f"[\x00-\x0a{_OTHER_UNSAFE}]")
_UNSAFE_IN_TEXT = re.compile(f"[\x00-\x08{_OTHER_UNSAFE}]")  # newline and tab kept


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def terminal_line(text: str) -> str:
    """``text`` as one safe line: a tab becomes a space, every other control character (newlines too)
    is shown escaped."""
    return _UNSAFE_IN_LINE.sub(_escaped, text.replace("\t", " "))


def terminal_text(text: str) -> str:
    """``text`` safe to print over several lines: newlines and tabs kept (a Windows line end becomes a
    newline), every other control character shown escaped."""
    return _UNSAFE_IN_TEXT.sub(_escaped, text.replace("\r\n", "\n"))
