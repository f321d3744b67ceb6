"""The grammar of a valid answer in each output format, for one task's variable names.

An answer is an optional stretch of free reasoning (no ``<``; at most ``reasoning_chars``
characters; only with ``reasoning_chars > 0``, i.e. the zs-cot prompt) and then one
``<cnf>\\n … </cnf>`` block. Inside the block (what :mod:`autonesy.tools.formats` parses):

- ``dimacs`` (the whole format): comment lines ``c …``, one header ``p cnf V C`` before the
  clauses, clause lines of non-zero literals each ended by `` 0`` (several clauses may share a
  line). Literals are ``±1..N`` (task variables) or ``±(N+1)..(N+max_aux)`` (auxiliaries). What no
  context-free grammar can check — that ``C`` is the clause count and ``V`` the highest variable —
  is left to the checker, and autofix rewrites the header.
- ``nat`` (the whole format, in its canonical spelling): one constraint or ``#`` comment per line;
  operands the task's names, ``TRUE``, ``FALSE``, parenthesised formulas; operators ``NOT`` (prefix)
  and ``AND XOR OR IMPLIES IFF`` with one blank before them and a blank or a line break after them;
  inside parentheses line breaks after ``(`` and before ``)`` are free.
- ``pysat`` (a subset of PySAT): ``#`` comment lines, optionally ``AUX = [vpool.id() for _ in
  range(K)]``, then ``clauses = [`` one clause ``[lit, …],`` per line ``]``, where a literal is
  ``[-]name`` or ``[-]AUX[i]`` (only after the declaration).
- ``cpmpy`` (a subset of CPMpy): ``#`` comment lines, optionally ``AUX = cp.boolvar(shape=K,
  name="AUX")``, then ``constraints = [`` one expression per line ``]``. An expression is a name,
  ``AUX[i]`` (only after the declaration), ``~x``, ``cp.all([…])``, ``cp.any([…])``,
  ``cp.Xor([…])``, ``x.implies(y)``, ``x == y`` or a parenthesised expression; a whole constraint
  may also be ``True``/``False``.
- ``sympy`` (a subset of SymPy): ``#`` comment lines, then ``constraints = [`` one expression per
  line ``]``. An expression is names, ``true``, ``false``, ``~x``, ``x & y``, ``x | y``, ``x ^ y``,
  parentheses and the calls ``And(…)``, ``Or(…)``, ``Xor(…)``, ``Equivalent(…)`` (any number of
  arguments), ``Not(x)`` and ``Implies(x, y)``.

In the Python formats a list or call may break its line after its opening bracket, after each
comma and before its closing bracket (with any indentation), and may end with a trailing comma.
``AUX`` is ``aux`` (``aux_``, … when a task variable takes that name), as the reference renderer
writes it. These subsets cover the reference formalizations of every catalogue task (a test).

:func:`repair_grammar` is the repair agent's answer: ``[[OK]]``, or ``[[FIXED]]`` and a block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from autonesy.tools.formats import cpmpy_program, pysat_program
from autonesy.tools.grammar.ir import (
    Grammar,
    Lit,
    Ref,
    Repeat,
    alt,
    chars,
    int_range,
    opt,
    seq,
    star,
)

FORMATS = ("dimacs", "nat", "pysat", "cpmpy", "sympy")
DEFAULT_MAX_AUX = 100_000
DEFAULT_REASONING_CHARS = 1200
MAX_CLAUSE_COUNT = 10_000_000

__all__ = ["FORMATS", "answer_grammar", "repair_grammar", "aux_name"]


def aux_name(names: Sequence[str], reserved: Iterable[str]) -> str:
    """``aux``, or ``aux_``, ``aux__``, … — the first that is neither a task variable nor reserved
    (the reference renderer's choice)."""
    taken = {*names, *reserved}
    name = "aux"
    while name in taken:
        name += "_"
    return name


def _names(names: Sequence[str]) -> list[str]:
    names = list(names)
    if not names:
        raise ValueError("no task variables")
    if len(set(names)) != len(names):
        raise ValueError("duplicate task variable names")
    return names


def _name_token(g: Grammar, names: Sequence[str]) -> Ref:
    # Longest first: a recognizer that tries alternatives in order must not stop at a prefix.
    return g.add("name", alt(*sorted(names, key=len, reverse=True)), word=True)


def _comment(g: Grammar, mark: str) -> Ref:
    return g.add("comment", seq(mark, star(chars("\n<", negated=True)), "\n"), token=True)


def _lines(item, lines: int | None, low: int = 0):
    """``item`` repeated at least ``low`` times, and at most ``lines`` times when that is set."""
    return Repeat(seq(item), low, lines)


def _chain(item, separator, longest: int | None):
    """``item (separator item)*`` with at most ``longest`` items when that is set."""
    return seq(item, Repeat(seq(separator, item), 0, None if longest is None else max(0, longest - 1)))


def _levels(depth: int | None) -> list[tuple[str, str | None]]:
    """(suffix of a nesting level, suffix of the level inside its brackets): one self-nested level
    when ``depth`` is None, else levels 0..depth where the last has no brackets."""
    if depth is None:
        return [("", "")]
    return [(f"-{k}", f"-{k + 1}" if k < depth else None) for k in range(depth + 1)]


def _breaks(g: Grammar, depth: int | None) -> Ref:
    """A line break and indentation (inside brackets and after operators): any with unbounded
    nesting, else at most four blanks per nesting level and two more (a model cannot indent forever)."""
    return g.add("brk", seq("\n", Repeat(Lit(" "), 0, None if depth is None else 4 * (depth + 2))), token=True)


# -- DIMACS ---------------------------------------------------------------------------------------


def _dimacs(
    g: Grammar, names: Sequence[str], max_aux: int, lines: int | None, chain: int | None, comments: bool
) -> Ref:
    n = len(names)
    comment = _comment(g, "c")
    literal = g.add("lit", seq(opt("-"), int_range(1, n + max_aux)), token=True)
    count = g.add("count", int_range(0, MAX_CLAUSE_COUNT), token=True)
    header = g.add(
        "header",
        seq(
            g.add("p-cnf", Lit("p cnf "), token=True),
            count,
            g.add("sp", Lit(" "), token=True),
            count,
            g.add("nl", Lit("\n"), token=True),
        ),
    )
    end = g.add("end", Lit(" 0"), token=True)
    clause = g.add("clause", seq(_chain(literal, Ref("sp"), chain), end))
    line = g.add("clause-line", seq(_chain(clause, Ref("sp"), chain), Ref("nl")))
    if not comments:
        return g.add("body", seq(header, _lines(line, lines)))
    return g.add("body", seq(_lines(comment, lines), header, _lines(alt(comment, line), lines)))


# -- NAT ------------------------------------------------------------------------------------------


def _nat(
    g: Grammar, names: Sequence[str], lines: int | None, depth: int | None, chain: int | None, comments: bool
) -> Ref:
    name = _name_token(g, names)
    brk = _breaks(g, depth)
    after = alt(" ", brk)
    ops = {
        word: g.add(f"op-{word.lower()}", seq(f" {word}", after), token=True)
        for word in ("IFF", "IMPLIES", "OR", "XOR", "AND")
    }
    negation = g.add("op-not", Lit("NOT "), token=True)
    constant = g.add("constant", alt("TRUE", "FALSE"), word=True)
    lpar = g.add("lpar", seq("(", opt(brk)), token=True)
    rpar = g.add("rpar", seq(opt(brk), ")"), token=True)
    levels = [("iff", "IFF"), ("implies", "IMPLIES"), ("or", "OR"), ("xor", "XOR"), ("and", "AND")]
    for at, inner in _levels(depth):
        for (level, word), (lower, _) in zip(levels, levels[1:] + [("not", "")]):
            g.add(f"nat-{level}{at}", _chain(Ref(f"nat-{lower}{at}"), ops[word], chain))
        atoms = [name, constant] + ([] if inner is None else [seq(lpar, Ref(f"nat-iff{inner}"), rpar)])
        if depth is None:
            g.add("nat-not", alt(seq(negation, Ref("nat-not")), *atoms))
        else:  # bounded: one NOT at most (NOT NOT x is x)
            g.add(f"nat-not{at}", seq(opt(negation), alt(*atoms)))
    top = "nat-iff" if depth is None else "nat-iff-0"
    comment = _comment(g, "#")
    constraint = seq(Ref(top), g.add("nl", Lit("\n"), token=True))
    line = alt(comment, constraint) if comments else constraint
    return g.add("body", _lines(line, lines, 1))


# -- the Python formats ---------------------------------------------------------------------------


def _items(item: Ref, comma: Ref, lines: int | None = None):
    return seq(item, _lines(seq(comma, item), None if lines is None else lines - 1), opt(comma))


def _program_list(g: Grammar, variable: str, item: Ref, suffix: str, lines: int | None) -> Ref:
    """``variable = [`` items ``]``: a bracketed list like any other (its items on their own lines or not)."""
    return g.add(
        f"list{suffix}", seq(f"{variable} = [", opt(Ref("brk")), opt(_items(item, Ref("comma"), lines)), "]\n")
    )


def _python_head(g: Grammar, depth: int | None) -> None:
    brk = _breaks(g, depth)
    g.add("comma", seq(",", alt(" ", brk)), token=True)
    _comment(g, "#")


def _pysat(
    g: Grammar,
    names: Sequence[str],
    max_aux: int,
    lines: int | None,
    depth: int | None,
    chain: int | None,
    comments: bool,
) -> Ref:
    _python_head(g, depth)
    name = _name_token(g, names)
    aux = aux_name(names, pysat_program.RESERVED_NAMES)
    loop = "range(" if "range" not in names else "itertools.repeat(None, "
    declaration = g.add(
        "aux-decl", seq(f"{aux} = [vpool.id() for _ in {loop}", int_range(1, max_aux), ")]\n"), token=True
    )
    aux_ref = g.add("aux-ref", seq(f"{aux}[", int_range(0, max_aux - 1), "]"), token=True)
    comma = Ref("comma")
    for suffix, atom in (("", name), ("-aux", alt(name, aux_ref))):
        literal = g.add(f"lit{suffix}", seq(opt(g.add(f"minus{suffix}", Lit("-"), token=True)), atom))
        clause = g.add(f"clause{suffix}", seq("[", _items(literal, comma, chain), "]"))
        _program_list(g, "clauses", clause, suffix, lines)
    return g.add(
        "body",
        seq(
            *([_lines(Ref("comment"), lines)] if comments else []), alt(Ref("list"), seq(declaration, Ref("list-aux")))
        ),
    )


def _cpmpy(
    g: Grammar,
    names: Sequence[str],
    max_aux: int,
    lines: int | None,
    depth: int | None,
    chain: int | None,
    comments: bool,
) -> Ref:
    _python_head(g, depth)
    name = _name_token(g, names)
    aux = aux_name(names, cpmpy_program.RESERVED_NAMES)
    declaration = g.add(
        "aux-decl",
        seq(f"{aux} = cp.boolvar(shape=", alt(int_range(2, max_aux), "(1,)"), f', name="{aux}")\n'),
        token=True,
    )
    aux_ref = g.add("aux-ref", seq(f"{aux}[", int_range(0, max_aux - 1), "]"), token=True)
    brk, comma = Ref("brk"), Ref("comma")
    list_open = g.add("list-open", seq(alt("cp.all", "cp.any", "cp.Xor"), "([", opt(brk)), token=True)
    list_close = g.add("list-close", seq(opt(brk), "])"), token=True)
    lpar = g.add("lpar", seq("(", opt(brk)), token=True)
    rpar = g.add("rpar", seq(opt(brk), ")"), token=True)
    implies = g.add("implies", seq(".implies(", opt(brk)), token=True)
    equals = g.add("equals", Lit(" == "), token=True)
    tilde = g.add("tilde", Lit("~"), token=True)
    constant = g.add("constant", alt("True", "False"), word=True)
    for suffix, atom in (("", name), ("-aux", alt(name, aux_ref))):
        for at, inner in _levels(depth):
            operand = Ref(f"operand{suffix}{at}")
            nested = (
                []
                if inner is None
                else [
                    seq(list_open, _items(Ref(f"expr{suffix}{inner}"), comma, chain), list_close),
                    seq(lpar, Ref(f"expr{suffix}{inner}"), rpar),
                ]
            )
            g.add(f"operand{suffix}{at}", alt(atom, *nested))
            # Left-factored (one operand, then an optional tail): a decoder that tracks every open
            # alternative (llama.cpp) would otherwise follow four copies of each nested operand.
            tails = ([] if inner is None else [seq(implies, Ref(f"expr{suffix}{inner}"), rpar)]) + [
                seq(equals, operand)
            ]
            g.add(f"expr{suffix}{at}", alt(seq(tilde, operand), seq(operand, opt(alt(*tails)))))
        top = Ref(f"expr{suffix}" if depth is None else f"expr{suffix}-0")
        item = g.add(f"item{suffix}", alt(top, constant))
        _program_list(g, "constraints", item, suffix, lines)
    return g.add(
        "body",
        seq(
            *([_lines(Ref("comment"), lines)] if comments else []), alt(Ref("list"), seq(declaration, Ref("list-aux")))
        ),
    )


def _sympy(
    g: Grammar, names: Sequence[str], lines: int | None, depth: int | None, chain: int | None, comments: bool
) -> Ref:
    _python_head(g, depth)
    name = _name_token(g, names)
    brk, comma = Ref("brk"), Ref("comma")
    rpar = g.add("rpar", seq(opt(brk), ")"), token=True)
    binary = g.add("binop", alt(" & ", " | ", " ^ "), token=True)
    constant = g.add("constant", alt("true", "false"), word=True)
    tilde = g.add("tilde", Lit("~"), token=True)

    def opener(label: str, *functions: str) -> Ref:
        return g.add(label, seq(alt(*functions), "(", opt(brk)), token=True)

    nary = opener("call-nary", "And", "Or", "Xor", "Equivalent")
    unary = opener("call-not", "Not")
    binary_call = opener("call-implies", "Implies")
    lpar = g.add("lpar", seq("(", opt(brk)), token=True)
    for at, inner in _levels(depth):
        nested = []
        if inner is not None:
            e = Ref(f"expr{inner}")
            nested = [
                seq(nary, _items(e, comma, chain), rpar),
                seq(unary, e, opt(comma), rpar),
                seq(binary_call, e, comma, e, opt(comma), rpar),
                seq(lpar, e, rpar),
            ]
        g.add(f"primary{at}", alt(name, constant, *nested))
        if depth is None:
            g.add("unary", alt(seq(tilde, Ref("unary")), Ref("primary")))
        else:  # bounded: one ~ at most
            g.add(f"unary{at}", seq(opt(tilde), Ref(f"primary{at}")))
        g.add(f"expr{at}", _chain(Ref(f"unary{at}"), binary, chain))
    top = Ref("expr" if depth is None else "expr-0")
    return g.add(
        "body",
        seq(*([_lines(Ref("comment"), lines)] if comments else []), _program_list(g, "constraints", top, "", lines)),
    )


# -- answers --------------------------------------------------------------------------------------


def _block(
    g: Grammar,
    fmt: str,
    names: Sequence[str],
    max_aux: int,
    lines: int | None,
    depth: int | None,
    chain: int | None,
    comments: bool,
) -> Ref:
    if chain is None and depth is not None:
        chain = max(2, len(names))
    if fmt == "dimacs":
        body = _dimacs(g, names, max_aux, lines, chain, comments)
    elif fmt == "nat":
        body = _nat(g, names, lines, depth, chain, comments)
    elif fmt == "pysat":
        body = _pysat(g, names, max_aux, lines, depth, chain, comments)
    elif fmt == "cpmpy":
        body = _cpmpy(g, names, max_aux, lines, depth, chain, comments)
    elif fmt == "sympy":
        body = _sympy(g, names, lines, depth, chain, comments)
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    open_tag = g.add("open-tag", Lit("<cnf>\n"), token=True)
    close_tag = g.add("close-tag", seq("</cnf>", opt("\n")), token=True)
    return g.add("block", seq(open_tag, body, close_tag))


def answer_grammar(
    fmt: str,
    names: Sequence[str],
    *,
    reasoning_chars: int = 0,
    max_aux: int = DEFAULT_MAX_AUX,
    max_lines: int | None = None,
    max_depth: int | None = None,
    max_chain: int | None = None,
    comments: bool = True,
) -> Grammar:
    """The answers the formalizer may give in ``fmt`` for a task with variables ``names``:
    ``reasoning_chars`` of free text (0: none) and one ``<cnf>`` block. ``max_lines`` bounds the
    block's clause/constraint/comment lines (each kind separately; list items in the Python formats),
    so that a model cannot run past its token budget by adding lines forever. ``max_depth`` bounds
    bracket nesting (and, with it, chains to as many operands as there are task variables, and
    negation to one ``NOT``/``~`` in a row): a finite language, which a weak model must end.
    ``max_chain`` bounds operands per chain, list or clause (default with ``max_depth``: the number
    of task variables); ``comments=False`` leaves comment lines out (a weak model fills a block
    with them)."""
    names = _names(names)
    if max_aux < 1:
        raise ValueError("max_aux must be at least 1")
    g = Grammar("answer")
    block = _block(g, fmt, names, max_aux, max_lines, max_depth, max_chain, comments)
    if reasoning_chars > 0:
        reasoning = g.add("reasoning", Repeat(chars("<", negated=True), 1, reasoning_chars), token=True)
        g.add("answer", seq(opt(reasoning), block))
    else:
        g.add("answer", seq(block))
    return g.check()


def repair_grammar(
    fmt: str,
    names: Sequence[str],
    *,
    max_aux: int = DEFAULT_MAX_AUX,
    max_lines: int | None = None,
    max_depth: int | None = None,
    max_chain: int | None = None,
    comments: bool = True,
    allow_ok: bool = True,
) -> Grammar:
    """The repair agent's answers: ``[[OK]]`` (unless ``allow_ok`` is false), or ``[[FIXED]]``, a
    line break and a block."""
    names = _names(names)
    g = Grammar("repair")
    block = _block(g, fmt, names, max_aux, max_lines, max_depth, max_chain, comments)
    fixed = seq("[[FIXED]]\n", block)
    g.add("repair", alt("[[OK]]", fixed) if allow_ok else fixed)
    return g.check()
