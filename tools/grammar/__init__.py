"""Grammars of valid answers (one source per format and task), rendered per decoding backend.

- :mod:`.ir`: the grammar as data; :mod:`.formats`: the grammar of each output format for a task;
- :mod:`.render`: GBNF (llama.cpp; vLLM/SGLang's xgrammar), Lark (our recognizer), a bounded regex;
- :mod:`.sample`: random strings of a grammar (property tests); :mod:`.recognize`: membership.
"""

from autonesy.tools.grammar.formats import FORMATS, answer_grammar, repair_grammar
from autonesy.tools.grammar.ir import Grammar
from autonesy.tools.grammar.render import to_gbnf, to_lark, to_regex

__all__ = ["FORMATS", "Grammar", "answer_grammar", "repair_grammar", "to_gbnf", "to_lark", "to_regex"]
