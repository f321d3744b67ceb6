"""Is a string in a grammar? The :mod:`.render` Lark rendering, parsed LALR(1) with a contextual lexer.

The same grammar source that the LLM server decodes with is what we recognize with, so a test that
an answer is inside the Lark grammar says it is inside the GBNF one too (both are renderings of
one :class:`~.ir.Grammar`).
"""

from __future__ import annotations

from lark import Lark
from lark.exceptions import LarkError

from autonesy.tools.grammar.ir import Grammar
from autonesy.tools.grammar.render import to_lark


class Recognizer:
    """Decides whether a text is in a grammar (an LALR parser built from it), and says where it is not."""

    def __init__(self, grammar: Grammar) -> None:
        self.parser = Lark(to_lark(grammar), parser="lalr", lexer="contextual")

    def error(self, text: str) -> str | None:
        """``None`` when ``text`` is in the grammar, else the parser's first complaint (one line)."""
        try:
            self.parser.parse(text)
        except LarkError as error:
            return " ".join(str(error).split())[:300]
        return None

    def accepts(self, text: str) -> bool:
        """Whether the text is in the grammar."""
        return self.error(text) is None
