"""A :class:`~.ir.Grammar` written for a consumer: GBNF (llama.cpp, and the EBNF that vLLM's and
SGLang's xgrammar backends read) and Lark (our recognizer: LALR with a contextual lexer, tokens as
terminals, whitespace explicit).

GBNF: ``root ::= <start>``; rule names are the IR names (``[a-z0-9-]``); literals are
double-quoted with ``\\n``/``\\"``/``\\\\`` escapes; character sets are ``[...]``/``[^...]``;
bounded repetition is ``{m,n}`` (llama.cpp ≥ b3500 and xgrammar read it).
"""

from __future__ import annotations

import json
import re

from autonesy.tools.grammar.ir import Alt, Chars, Expr, Grammar, Lit, Ref, Seq

_RULE_NAME = re.compile(r"^[a-z][a-z0-9-]*$")

__all__ = ["to_gbnf", "to_lark", "to_regex"]


# -- GBNF -----------------------------------------------------------------------------------------


def _gbnf_char(char: str) -> str:
    escapes = {
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\\": "\\\\",
        "]": "\\]",
        "[": "\\[",
        "^": "\\^",
        "-": "\\-",
        '"': '\\"',
    }
    return escapes.get(char, char)


def _gbnf(expr: Expr, nested: bool = False) -> str:
    if isinstance(expr, Lit):
        return json.dumps(expr.text, ensure_ascii=False)
    if isinstance(expr, Chars):
        body = "".join(_gbnf_char(lo) if lo == hi else f"{_gbnf_char(lo)}-{_gbnf_char(hi)}" for lo, hi in expr.ranges)
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, Ref):
        return expr.name
    if isinstance(expr, Seq):
        text = " ".join(_gbnf(item, True) for item in expr.items)
        return f"({text})" if nested else text
    if isinstance(expr, Alt):
        text = " | ".join(_gbnf(option) for option in expr.options)
        return f"({text})" if nested else text
    item = _gbnf(expr.item, True)
    if (expr.min, expr.max) == (0, 1):
        return item + "?"
    if (expr.min, expr.max) == (0, None):
        return item + "*"
    if (expr.min, expr.max) == (1, None):
        return item + "+"
    return f"{item}{{{expr.min},{'' if expr.max is None else expr.max}}}"


def to_gbnf(grammar: Grammar) -> str:
    """GBNF text of ``grammar``; its ``root`` is the grammar's start rule."""
    grammar.check()
    lines = [f"root ::= {grammar.start}"]
    for name, expr in grammar.rules.items():
        if not _RULE_NAME.match(name) or name == "root":
            raise ValueError(f"rule name {name!r} cannot be written in GBNF")
        lines.append(f"{name} ::= {_gbnf(expr)}")
    return "\n".join(lines) + "\n"


# -- Lark -----------------------------------------------------------------------------------------


def _lark_name(name: str, grammar: Grammar) -> str:
    base = name.replace("-", "_")
    return base.upper() if name in grammar.tokens else base.lower()


def _regex_char(char: str) -> str:
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "/":
        return "\\/"
    return re.escape(char)


def _lark(expr: Expr, grammar: Grammar, nested: bool = False) -> str:
    if isinstance(expr, Lit):
        return json.dumps(expr.text, ensure_ascii=False)
    if isinstance(expr, Chars):
        body = "".join(
            _regex_char(lo) if lo == hi else f"{_regex_char(lo)}-{_regex_char(hi)}" for lo, hi in expr.ranges
        )
        return f"/[{'^' if expr.negated else ''}{body}]/"
    if isinstance(expr, Ref):
        return _lark_name(expr.name, grammar)
    if isinstance(expr, Seq):
        text = " ".join(_lark(item, grammar, True) for item in expr.items)
        return f"({text})" if nested else text
    if isinstance(expr, Alt):
        text = " | ".join(_lark(option, grammar) for option in expr.options)
        return f"({text})" if nested else text
    item = _lark(expr.item, grammar, True)
    if (expr.min, expr.max) == (0, 1):
        return item + "?"
    if (expr.min, expr.max) == (0, None):
        return item + "*"
    if (expr.min, expr.max) == (1, None):
        return item + "+"
    if expr.max is None:
        return f"{item} ~ {expr.min} {item}*"
    return f"{item} ~ {expr.min}..{expr.max}"


def to_lark(grammar: Grammar) -> str:
    """Lark grammar text of ``grammar``: tokens become terminals, other rules rules, ``start`` the start."""
    grammar.check()
    lines = [f"start: {_lark_name(grammar.start, grammar)}"]
    for name, expr in grammar.rules.items():
        if name in grammar.words:  # one regex, whole words only
            pattern = to_regex(grammar, name, depth=1).replace("/", "\\/")
            lines.append(f"{_lark_name(name, grammar)}: /{pattern}(?![A-Za-z0-9_])/")
        else:
            lines.append(f"{_lark_name(name, grammar)}: {_lark(expr, grammar)}")
    return "\n".join(lines) + "\n"


# -- regular expression (bounded) -------------------------------------------------------------------


def to_regex(grammar: Grammar, rule: str | None = None, *, depth: int = 3) -> str:
    """A Python/JSON-schema regular expression for ``rule`` (default: the start rule), with
    recursion unrolled ``depth`` times (deeper nesting is not matched): what a server that takes
    only a JSON schema ``pattern`` can enforce."""
    grammar.check()

    def rx(expr: Expr, budget: dict[str, int]) -> str | None:
        if isinstance(expr, Lit):
            return re.escape(expr.text)
        if isinstance(expr, Chars):
            body = "".join(
                _regex_char(lo) if lo == hi else f"{_regex_char(lo)}-{_regex_char(hi)}" for lo, hi in expr.ranges
            ).replace("\\/", "/")
            return f"[{'^' if expr.negated else ''}{body}]"
        if isinstance(expr, Ref):
            left = budget.get(expr.name, depth)
            if left <= 0:
                return None
            inner = rx(grammar.rules[expr.name], {**budget, expr.name: left - 1})
            return None if inner is None else f"(?:{inner})"
        if isinstance(expr, Seq):
            items = [rx(item, budget) for item in expr.items]
            parts = [p for p in items if p is not None]
            return None if len(parts) < len(items) else "".join(parts)
        if isinstance(expr, Alt):
            options: list[str] = [p for p in (rx(option, budget) for option in expr.options) if p is not None]
            return None if not options else "(?:" + "|".join(options) + ")"
        inner = rx(expr.item, budget)
        if inner is None:
            return "" if expr.min == 0 else None
        return f"(?:{inner}){{{expr.min},{'' if expr.max is None else expr.max}}}"

    result = rx(Ref(rule or grammar.start), {})
    if result is None:
        raise ValueError(f"rule {rule or grammar.start!r} has no derivation within depth {depth}")
    return result
