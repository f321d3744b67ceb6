"""Close an answer that a token budget cut off while the server decoded it under a grammar.

A grammar keeps every decoded token on a path to a valid answer, but the server stops at
``max_tokens`` wherever it is: inside a clause, a parenthesis or an unclosed list. What was
written is then a *prefix* of the grammar's language. :func:`close_cut` keeps the longest part of
it that ends after a line break or a comma (where a clause, constraint or list item ends) and can be
closed by one of a few fixed endings (a Python list needs ``]``, every block needs ``</cnf>``), and
returns that closed text: a cut answer loses its unfinished last item instead of all of it. Nothing
is added but those closers and no item is kept unless it ended, so none is shortened into another.

    >>> from autonesy.tools.grammar import answer_grammar
    >>> g = answer_grammar("dimacs", ["a", "b"])
    >>> close_cut("<cnf>\\np cnf 2 2\\n1 -2 0\\n2 -", g)
    ('<cnf>\\np cnf 2 2\\n1 -2 0\\n</cnf>', 23)
"""

from __future__ import annotations

from autonesy.tools.grammar.ir import Grammar
from autonesy.tools.grammar.recognize import Recognizer

ENDINGS = ("", "</cnf>", "\n</cnf>", "]\n</cnf>", "\n]\n</cnf>")
ITEM_ENDS = ",\n"  # a prefix may end after these (an item boundary), never inside a name or a number
MAX_CUTS = 400  # prefixes tried from the end (each try is a few LALR parses)


def close_cut(text: str, grammar: Grammar, recognizer: Recognizer | None = None) -> tuple[str, int] | None:
    """``text`` itself when ``grammar`` accepts it; else its longest prefix ending after a line break
    or a comma (the cut item may have gone on: ``c`` may have been ``c AND d``) that one of
    ``ENDINGS`` closes into the grammar, and that prefix's length; ``None`` when there is none
    (e.g. the budget ran out before the block's first item ended)."""
    recognizer = recognizer or Recognizer(grammar)
    if recognizer.accepts(text):
        return text, len(text)
    cuts = [i + 1 for i in range(len(text) - 1, -1, -1) if text[i] in ITEM_ENDS]
    for cut in cuts[:MAX_CUTS]:
        prefix = text[:cut]
        for ending in ENDINGS:
            if recognizer.accepts(prefix + ending):
                return prefix + ending, cut
    return None
