"""A context-free grammar as plain data: the one source every backend rendering is made from.

A :class:`Grammar` is a set of named rules over six kinds of expression — :class:`Lit` (exact
text), :class:`Chars` (one character from a set, or outside it), :class:`Seq`, :class:`Alt`,
:class:`Repeat` (bounded or not) and :class:`Ref` (another rule). Rules named in ``tokens`` are
lexical: they use only ``Lit``/``Chars``/``Seq``/``Alt``/``Repeat`` and other tokens, so a
recognizer with a lexer (Lark) can treat them as terminals; GBNF and EBNF renderings ignore the
distinction. Nothing here knows about formats or backends.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Lit:
    """A literal string."""

    text: str


@dataclass(frozen=True)
class Chars:
    """One character in ``ranges`` (pairs of inclusive bounds), or, when ``negated``, outside them."""

    ranges: tuple[tuple[str, str], ...]
    negated: bool = False

    def contains(self, char: str) -> bool:
        """Whether a character falls in the class (ranges, possibly negated)."""
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Seq:
    """Items one after another."""

    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Alt:
    """One of several options."""

    options: tuple[Expr, ...]


@dataclass(frozen=True)
class Repeat:
    """An item repeated ``min`` to ``max`` times (bounded repeats keep decoding grammars finite where it matters)."""

    item: Expr
    min: int = 0
    max: int | None = None  # None: unbounded


@dataclass(frozen=True)
class Ref:
    """A reference to a named rule."""

    name: str


Expr = Lit | Chars | Seq | Alt | Repeat | Ref


@dataclass
class Grammar:
    """Rules by name; ``start`` is the rule a whole answer must match."""

    start: str
    rules: dict[str, Expr] = field(default_factory=dict)
    tokens: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)  # tokens never followed by a letter, digit or "_"

    def add(self, name: str, expr: Expr, *, token: bool = False, word: bool = False) -> Ref:
        """Add a rule; ``word`` marks a token after which the grammar never allows an identifier
        character (a lexer may then insist on that, so a name is not lexed as a prefix of another)."""
        if name in self.rules:
            raise ValueError(f"rule {name!r} defined twice")
        self.rules[name] = expr
        if token or word:
            self.tokens.add(name)
        if word:
            self.words.add(name)
        return Ref(name)

    def check(self) -> Grammar:
        """Every reference resolves, and tokens only use tokens; ``ValueError`` otherwise."""
        if self.start not in self.rules:
            raise ValueError(f"no start rule {self.start!r}")
        for name, expr in self.rules.items():
            for ref in references(expr):
                if ref not in self.rules:
                    raise ValueError(f"rule {name!r} refers to the undefined rule {ref!r}")
                if name in self.tokens and ref not in self.tokens:
                    raise ValueError(f"token {name!r} refers to the rule {ref!r}, which is not a token")
        return self


def references(expr: Expr) -> Iterable[str]:
    """The rule names an expression refers to (to check a grammar is closed)."""
    if isinstance(expr, Ref):
        yield expr.name
    elif isinstance(expr, Seq):
        for item in expr.items:
            yield from references(item)
    elif isinstance(expr, Alt):
        for option in expr.options:
            yield from references(option)
    elif isinstance(expr, Repeat):
        yield from references(expr.item)


# -- builders -------------------------------------------------------------------------------------


def seq(*items: Expr | str) -> Expr:
    """A sequence, strings taken as literals; one item stays itself."""
    parts = tuple(Lit(i) if isinstance(i, str) else i for i in items)
    return parts[0] if len(parts) == 1 else Seq(parts)


def alt(*options: Expr | str) -> Expr:
    """An alternative, strings taken as literals; one option stays itself."""
    parts = tuple(Lit(o) if isinstance(o, str) else o for o in options)
    if not parts:
        raise ValueError("an alternative needs at least one option")
    return parts[0] if len(parts) == 1 else Alt(parts)


def opt(item: Expr | str) -> Expr:
    """An optional item."""
    return Repeat(seq(item), 0, 1)


def star(item: Expr | str) -> Expr:
    """Zero or more repeats of an item."""
    return Repeat(seq(item), 0, None)


def chars(spec: str, *, negated: bool = False) -> Chars:
    """``chars("a-z_")``: single characters and ``x-y`` ranges (a ``-`` first or last is literal)."""
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            ranges.append((spec[i], spec[i + 2]))
            i += 3
        else:
            ranges.append((spec[i], spec[i]))
            i += 1
    return Chars(tuple(ranges), negated)


def int_range(low: int, high: int) -> Expr:
    """Decimal numerals (no leading zeros) of exactly the integers ``low..high`` (``0 <= low <= high``)."""
    if not 0 <= low <= high:
        raise ValueError(f"bad integer range {low}..{high}")
    options: list[Expr] = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        lo = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        hi = min(high, 10**digits - 1)
        if lo <= hi:
            options.extend(_same_length(str(lo), str(hi)))
    return alt(*options)


def _digit(low: str, high: str) -> Expr:
    return Lit(low) if low == high else Chars(((low, high),))


def _same_length(low: str, high: str) -> list[Expr]:
    """Patterns for the numerals low..high, both with the same number of digits."""
    if len(low) == 1:
        return [_digit(low, high)]
    if low[0] == high[0]:
        return [seq(Lit(low[0]), rest) for rest in _same_length(low[1:], high[1:])]
    width = len(low) - 1
    out: list[Expr] = []
    first, last = int(low[0]), int(high[0])
    lower_full = low[1:] == "0" * width
    upper_full = high[1:] == "9" * width
    start = first if lower_full else first + 1
    end = last if upper_full else last - 1
    if not lower_full:
        out += [seq(Lit(low[0]), rest) for rest in _same_length(low[1:], "9" * width)]
    if start <= end:
        out.append(seq(_digit(str(start), str(end)), *([Chars((("0", "9"),))] * width)))
    if not upper_full:
        out += [seq(Lit(high[0]), rest) for rest in _same_length("0" * width, high[1:])]
    return out
