"""``terminal_line`` / ``terminal_text``: nothing a terminal interprets survives, printable text is untouched."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from autonesy.tools.terminal_text import terminal_line, terminal_text

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def interpreted(char: str) -> bool:
    """What a terminal acts on or reorders by: control characters (C0, C1, DEL), line and paragraph
    separators, bidi controls, and lone surrogates."""
    return unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char in BIDI


printable = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp"), exclude_characters=BIDI))


@given(st.text())
def test_a_line_holds_nothing_a_terminal_interprets(text: str):
    assert not any(interpreted(char) for char in terminal_line(text))


@given(st.text())
def test_text_holds_nothing_a_terminal_interprets_but_newlines_and_tabs(text: str):
    assert not any(interpreted(char) and char not in "\n\t" for char in terminal_text(text))


@given(printable)
def test_printable_text_passes_unchanged(text: str):
    assert terminal_line(text) == text
    assert terminal_text(text) == text


@given(st.lists(printable, min_size=1))
def test_lines_are_kept_by_text_and_shown_escaped_by_line(lines: list[str]):
    text = "\n".join(lines)
    assert terminal_text(text) == text
    assert terminal_line(text) == "\\x0a".join(lines)


def test_escape_sequences_are_shown_not_sent():
    osc52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # write the clipboard
    osc8 = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"  # a link drawn over "click"
    title = "\x1b]0;root@prod\x9c"  # set the window title, ended by the C1 string terminator
    dcs, csi = "\x1bP1$r\x1b\\", "\x1b[2J\x9b31m"
    assert terminal_line(osc52) == "\\x1b]52;c;ZWNobyBwd25lZA==\\x07"
    assert terminal_line(osc8) == "\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\"
    assert terminal_line(title) == "\\x1b]0;root@prod\\x9c"
    assert terminal_text(dcs + "\n" + csi) == "\\x1bP1$r\\x1b\\\n\\x1b[2J\\x9b31m"


def test_bidi_overrides_carriage_returns_and_tabs():
    assert terminal_line("ok \u202egnp.exe\u2066") == "ok \\u202egnp.exe\\u2066"
    assert terminal_text("accepted\rrejected") == "accepted\\x0drejected"
    assert terminal_text("a\r\nb\tc") == "a\nb\tc"
    assert terminal_line("a\tb\r\nc") == "a b\\x0d\\x0ac"
    assert terminal_line("\ud800") == "\\ud800"  # a lone surrogate cannot even be encoded for the terminal
