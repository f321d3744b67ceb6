"""NAT: constraints as Boolean formulas over the task's variable names, one per line.

Syntax (also in :data:`CONVENTION`, the text the prompt shows):

- **One constraint per line**; the lines are conjoined. Blank lines are ignored, and so is any text
  from ``#`` or ``//`` to the end of its line (comment lines and trailing comments).
- A constraint continues on the next line only while a parenthesis is open, or when its line ends
  with a binary operator (``a AND`` / ``b``). A line may not *start* with a binary operator.
- Operands: the task's variable names, written exactly (case-sensitive), and the constants
  ``TRUE`` and ``FALSE``; parentheses group.
- Operators, keywords in any case (``AND``, ``and``, ``And``), each with symbol aliases:

  ========  ===========================  ===========================================
  keyword   aliases                      meaning
  ========  ===========================  ===========================================
  NOT       ``~`` ``!`` ``¬``            negation (prefix)
  AND       ``&`` ``&&`` ``∧``           conjunction
  XOR       ``^`` ``⊕``                  exclusive or (a chain: an odd number true)
  OR        ``|`` ``||`` ``∨``           disjunction
  IMPLIES   ``->`` ``=>`` ``→`` ``⇒``    implication
  IFF       ``<->`` ``<=>`` ``↔`` ``⇔``  equivalence
  ========  ===========================  ===========================================

- **Precedence, tightest first: NOT > AND > XOR > OR > IMPLIES > IFF.** So ``NOT a AND b`` is
  ``(NOT a) AND b``, ``a OR b AND c`` is ``a OR (b AND c)``, ``a XOR b OR c`` is ``(a XOR b) OR c``,
  ``a AND b IMPLIES c OR d`` is ``(a AND b) IMPLIES (c OR d)`` and ``a IMPLIES b IFF c`` is
  ``(a IMPLIES b) IFF c``.
- **Associativity:** IMPLIES is right-associative (``a IMPLIES b IMPLIES c`` is
  ``a IMPLIES (b IMPLIES c)``); AND, OR, XOR and IFF are left-associative (AND, OR and XOR chains
  are flattened into one n-ary operator, which means the same). Note that ``a IFF b IFF c`` is
  ``(a IFF b) IFF c`` — true when an even number of the three are false — *not* "all three equal".

Each line becomes an :mod:`.expr` tree; the conjunction is Tseitin-encoded (:mod:`.tseitin`), so the
CNF's models projected on the task variables are exactly the formula's models.

Errors (:class:`FormatError`): ``syntax`` with line, column, the offending token, the line's text and
the tokens that were expected there; ``unknown_variable`` listing every unknown name with its first
position and the closest task names; ``too_large`` for formulas nested too deeply to encode.

The parser is a lark LALR(1) grammar; task names that a keyword would shadow (``true``, ``xor``, …
in any case) cannot be referred to and are rejected up front with ``ValueError``.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterator, Sequence

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from autonesy.tools.cnf import CNF
from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.expr import Const, Expr, Op, Var
from autonesy.tools.formats.tseitin import tseitin

KEYWORDS = ("NOT", "AND", "XOR", "OR", "IMPLIES", "IFF", "TRUE", "FALSE")
PRECEDENCE = ("NOT", "AND", "XOR", "OR", "IMPLIES", "IFF")  # tightest first
ALIASES = {
    "NOT": ("~", "!", "¬"),
    "AND": ("&", "&&", "∧"),
    "XOR": ("^", "⊕"),
    "OR": ("|", "||", "∨"),
    "IMPLIES": ("->", "=>", "→", "⇒"),
    "IFF": ("<->", "<=>", "↔", "⇔"),
}

CONVENTION = """\
Write the formula in NAT notation: one constraint per line; all lines must hold together (they are
joined by AND).
- Operands: the variable names exactly as listed above (names are case-sensitive), the constants
  TRUE and FALSE, and parenthesised sub-formulas.
- Operators: NOT, AND, XOR, OR, IMPLIES, IFF. Precedence, tightest first:
  NOT > AND > XOR > OR > IMPLIES > IFF. IMPLIES groups to the right (a IMPLIES b IMPLIES c means
  a IMPLIES (b IMPLIES c)); the others group to the left. Use parentheses whenever in doubt.
- Keywords may be written in any case (AND, and, And). The same operators may be written
  ~ ! ¬ (NOT), & && ∧ (AND), ^ ⊕ (XOR), | || ∨ (OR), -> => → ⇒ (IMPLIES), <-> <=> ↔ ⇔ (IFF).
- Text from # or // to the end of a line is a comment (whole lines or after a constraint).
  A constraint may continue on the next line only inside parentheses or after an operator that
  ends the line.
- There are no functions, numbers or cardinality operators: write "exactly one of a, b, c" as the
  four lines
  a OR b OR c
  NOT (a AND b)
  NOT (a AND c)
  NOT (b AND c)"""

SYNTAX_SUMMARY = CONVENTION  # the text the prompt shows (agents/prompts reads CONVENTION)

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _kw(word: str, *aliases: str) -> str:
    alternatives = [f"/(?i:{word.lower()})(?![A-Za-z0-9_])/"] + [
        f'"{a}"' for a in sorted(aliases, key=len, reverse=True)
    ]
    return f"_{word}.2: " + " | ".join(alternatives)


_GRAMMAR = "\n".join(
    [
        "start: (_NL | constraint _NL)* constraint?",
        "?constraint: iff",
        "?iff: implies | iff _IFF _NL* implies -> iff_op",
        "?implies: or_ | or_ _IMPLIES _NL* implies -> implies_op",
        "?or_: xor | or_ _OR _NL* xor -> or_op",
        "?xor: and_ | xor _XOR _NL* and_ -> xor_op",
        "?and_: not_ | and_ _AND _NL* not_ -> and_op",
        "?not_: _NOT _NL* not_ -> not_op | atom",
        "?atom: NAME -> var | _TRUE -> true | _FALSE -> false | _LPAR iff _RPAR",
        "NAME: /[A-Za-z_][A-Za-z0-9_]*/",
        *(_kw(word, *ALIASES[word]) for word in PRECEDENCE),
        _kw("TRUE"),
        _kw("FALSE"),
        '_LPAR: "("',
        '_RPAR: ")"',
        r"_NL: /\r?\n/",
        r"COMMENT: /(#|\/\/)[^\n]*/",
        "%ignore COMMENT",
        r"%ignore /[ \t\f\v]+/",
    ]
)

_HUMAN = {
    "NAME": "a variable name",
    "_TRUE": "TRUE",
    "_FALSE": "FALSE",
    "_NOT": "NOT",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_AND": "AND",
    "_XOR": "XOR",
    "_OR": "OR",
    "_IMPLIES": "IMPLIES",
    "_IFF": "IFF",
    "_NL": "the end of the line",
    "$END": "the end of the formula",
}
_BINARY = {"_AND", "_XOR", "_OR", "_IMPLIES", "_IFF"}


class _ParenNewlines:
    """Post-lexer: newlines inside parentheses do not end a constraint."""

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for token in stream:
            if token.type == "_LPAR":
                depth += 1
            elif token.type == "_RPAR":
                depth = max(0, depth - 1)
            elif token.type == "_NL" and depth:
                continue
            yield token


class _Build(Transformer):
    """Inline LALR callbacks: parse tree → expr tree, names resolved through ``self.index``."""

    def __init__(self) -> None:
        super().__init__()
        self.index: dict[str, int] = {}
        self.unknown: dict[str, tuple[int | None, int | None]] = {}

    def start(self, children: list[_Node]) -> list[Expr]:
        return [_done(child) for child in children]

    def var(self, children: list[Token]) -> Expr:
        token = children[0]
        name = str(token)
        if name not in self.index:
            self.unknown.setdefault(name, (token.line, token.column))
            return Var(0)
        return Var(self.index[name])

    def true(self, _children) -> Expr:
        return Const(True)

    def false(self, _children) -> Expr:
        return Const(False)

    def not_op(self, children: list[_Node]) -> Expr:
        inner = _done(children[0])
        if isinstance(inner, Op) and inner.op == "not":  # NOT NOT x is x
            return inner.args[0]
        return Op("not", (inner,))

    def _flat(self, op: str, left: _Node, right: _Node) -> _Chain:
        if isinstance(left, _Chain) and left.op == op:
            left.args.append(_done(right))  # in place: a chain of n operands costs n, not n²
            return left
        return _Chain(op, [_done(left), _done(right)])

    def and_op(self, children: list[_Node]) -> _Chain:
        return self._flat("and", *children)

    def or_op(self, children: list[_Node]) -> _Chain:
        return self._flat("or", *children)

    def xor_op(self, children: list[_Node]) -> _Chain:
        return self._flat("xor", *children)

    def implies_op(self, children: list[_Node]) -> Expr:
        return Op("implies", (_done(children[0]), _done(children[1])))

    def iff_op(self, children: list[_Node]) -> Expr:
        return Op("iff", (_done(children[0]), _done(children[1])))


class _Chain:
    """An AND/OR/XOR chain while the parser is still extending it (an Op once anything else uses it)."""

    def __init__(self, op: str, args: list[Expr]) -> None:
        self.op = op
        self.args = args


_Node = Expr | _Chain  # what a callback receives: a finished expression or a chain still growing


def _done(node: _Node) -> Expr:
    return Op(node.op, tuple(node.args)) if isinstance(node, _Chain) else node


_BUILD = _Build()
_PARSER = Lark(
    _GRAMMAR, parser="lalr", lexer="basic", postlex=_ParenNewlines(), transformer=_BUILD, maybe_placeholders=False
)
_LOCK = threading.Lock()


def parse_expressions(source: str, names: Sequence[str]) -> list[Expr]:
    """One expression per constraint; raises :class:`FormatError` (``syntax``/``unknown_variable``)."""
    _check_names(names)
    with _LOCK:
        _BUILD.index = {name: i for i, name in enumerate(names, start=1)}
        _BUILD.unknown = {}
        try:
            # lark types parse() as returning a Tree; with an inline transformer it returns start()'s list
            exprs: list[Expr] = _PARSER.parse(source)  # type: ignore[assignment]
        except UnexpectedInput as error:
            raise _syntax_error(source, error, names) from None
        except RecursionError:
            raise _too_deep() from None
        unknown = dict(_BUILD.unknown)
    if unknown:
        raise _unknown_error(unknown, names)
    return exprs


def parse(source: str, names: Sequence[str], **_limits) -> CNF:
    """CNF over task variables 1..len(names) plus Tseitin auxiliaries; raises :class:`FormatError`."""
    exprs = parse_expressions(source, names)
    try:
        return tseitin(exprs, len(names))
    except RecursionError:
        raise _too_deep() from None


def _check_names(names: Sequence[str]) -> None:
    for name in names:
        if not _NAME_RE.fullmatch(name):
            raise ValueError(f"variable name {name!r} cannot be written in NAT (letters, digits and '_' only)")
        if name.upper() in KEYWORDS:
            raise ValueError(f"variable name {name!r} is a NAT keyword (in some case) and cannot be referred to")


def _too_deep() -> FormatError:
    return FormatError(
        "too_large",
        "the formula is nested too deeply to encode; split it into several shorter constraints, one per line.",
    )


def _line_text(source: str, line: int) -> str:
    lines = source.splitlines()
    text = lines[line - 1].strip() if 1 <= line <= len(lines) else ""
    return text if len(text) <= 160 else text[:159] + "…"


def _expected(terminals) -> str:
    wanted = set(terminals)
    human = [text for terminal, text in _HUMAN.items() if terminal in wanted]
    if not human:
        return "something else"
    return human[0] if len(human) == 1 else ", ".join(human[:-1]) + " or " + human[-1]


def _unclosed_paren(source: str) -> tuple[int, int] | None:
    stack: list[tuple[int, int]] = []
    for lineno, line in enumerate(source.splitlines(), start=1):
        code = re.split(r"#|//", line, maxsplit=1)[0]
        for col, char in enumerate(code, start=1):
            if char == "(":
                stack.append((lineno, col))
            elif char == ")" and stack:
                stack.pop()
    return stack[0] if stack else None


def _syntax_error(source: str, error: UnexpectedInput, names: Sequence[str]) -> FormatError:
    hints: list[str] = []
    line: int | None
    if isinstance(error, UnexpectedToken):
        token = error.token
        try:  # the exact set the parser accepts here (error.expected is LALR's merged set)
            accepted = set(error.interactive_parser.accepts())
        except Exception:  # pragma: no cover - older lark
            accepted = set(error.expected)
        if "NAME" in accepted:
            accepted.discard("_NL")  # after an operator a newline only continues the constraint
        if token.type == "$END":
            found = "end of the formula"
            line = len(source.rstrip().splitlines()) or 1
            column = len(source.rstrip().splitlines()[-1]) + 1 if source.strip() else 1
            unclosed = _unclosed_paren(source)
            if unclosed is not None:
                hints.append(f"The '(' at line {unclosed[0]}, column {unclosed[1]} is never closed.")
        else:
            line, column = token.line, token.column
            found = "end of the line" if token.type == "_NL" else repr(str(token))
            if token.type in _BINARY and _line_text(source, line).startswith(str(token)):
                hints.append(
                    "Each line is a separate constraint and cannot start with a binary operator; to continue "
                    "a constraint, end the previous line with the operator or keep it inside parentheses."
                )
            elif token.type == "_LPAR" and "_LPAR" not in accepted:
                hints.append(
                    "NAT has no functions: write cardinality and other rules with NOT, AND, OR, XOR, IMPLIES and IFF."
                )
            elif token.type == "_RPAR" and "_RPAR" not in accepted:
                hints.append("This ')' has no matching '('.")
            elif token.type in ("NAME", "_TRUE", "_FALSE", "_NOT") and "NAME" not in accepted:
                hints.append("An operator (AND, OR, XOR, IMPLIES, IFF) is missing before it.")
            if token.type == "NAME" and token.upper() in ("IF", "THEN", "EQUALS", "ONLY"):
                hints.append("Use IMPLIES for 'if … then …' and IFF for 'if and only if'.")
        message = (
            f"column {column}: unexpected {found} in {_line_text(source, line)!r}; expected {_expected(accepted)}."
        )
    elif isinstance(error, UnexpectedCharacters):
        line, column = error.line, error.column
        lines = source.splitlines()
        char = lines[line - 1][column - 1] if 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) else "?"
        message = (
            f"column {column}: unexpected character {char!r} in {_line_text(source, line)!r}. NAT allows only "
            "variable names, TRUE, FALSE, parentheses and the operators NOT AND XOR OR IMPLIES IFF "
            "(or ~ ! & && ^ | || -> => <-> <=>)."
        )
        if char.isdigit():
            hints.append(f"Variables are written by name (e.g. {names[0] if names else 'x'}), not by number.")
        elif char in "=<>":
            hints.append(
                "Use IFF (or <->) for equivalence and IMPLIES (or ->) for implication; there is no '=' or comparison."
            )
        elif char in ",;":
            hints.append(
                "NAT has no functions or lists: put each constraint on its own line and combine operands with AND, OR."
            )
    else:  # pragma: no cover - other lark errors (UnexpectedEOF) do not occur with LALR
        line = getattr(error, "line", None)
        message = f"cannot parse the formula: {error}"
    if hints:
        message += " " + " ".join(hints)
    return FormatError("syntax", message, line=line)


def _unknown_error(unknown: dict[str, tuple[int | None, int | None]], names: Sequence[str]) -> FormatError:
    items = []
    for name, (line, column) in list(unknown.items())[:10]:
        same_case = [n for n in names if n.lower() == name.lower()]
        close = same_case + [n for n in difflib.get_close_matches(name, names, n=3, cutoff=0.6) if n not in same_case]
        hint = f": did you mean {' or '.join(repr(c) for c in close[:3])}?" if close else ""
        items.append(f"- {name!r} at line {line}, column {column}{hint}")
    if len(unknown) > 10:
        items.append(f"- and {len(unknown) - 10} more")
    shown = ", ".join(names[:60]) + (", …" if len(names) > 60 else "")
    first_line = next(iter(unknown.values()))[0]
    plural = "s" if len(unknown) > 1 else ""
    return FormatError(
        "unknown_variable",
        f"unknown variable name{plural} (names are case-sensitive and must be spelled exactly as given):\n"
        + "\n".join(items)
        + f"\nThe task's variable names are: {shown}.",
        line=first_line,
    )
