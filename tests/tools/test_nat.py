"""NAT: grammar, precedence, aliases and errors; differential against expr.evaluate."""

import random
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.counting import enumerate_models
from autonesy.tools.formats import nat
from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.expr import Const, Op, Var, evaluate

ABC = ["a", "b", "c"]


def models(source, names=ABC):
    return set(enumerate_models(nat.parse(source, names)))


def table(fn, n=3):
    return {bits for bits in product((0, 1), repeat=n) if fn(*map(bool, bits))}


def error(source, names=ABC):
    with pytest.raises(FormatError) as info:
        nat.parse(source, names)
    return info.value


# --------------------------------------------------------------------------- precedence

IMP = lambda p, q: (not p) or q  # noqa: E731

# (source, meaning under the documented precedence, meaning under the competing reading)
PRECEDENCE_CASES = [
    ("NOT a AND b", lambda a, b, c: (not a) and b, lambda a, b, c: not (a and b)),
    ("NOT a OR b", lambda a, b, c: (not a) or b, lambda a, b, c: not (a or b)),
    ("a OR b AND c", lambda a, b, c: a or (b and c), lambda a, b, c: (a or b) and c),
    ("a AND b OR c", lambda a, b, c: (a and b) or c, lambda a, b, c: a and (b or c)),
    ("a AND b XOR c", lambda a, b, c: (a and b) != c, lambda a, b, c: a and (b != c)),
    ("a XOR b OR c", lambda a, b, c: (a != b) or c, lambda a, b, c: a != (b or c)),
    ("a OR b XOR c", lambda a, b, c: a or (b != c), lambda a, b, c: (a or b) != c),
    ("a OR b IMPLIES c", lambda a, b, c: IMP(a or b, c), lambda a, b, c: a or IMP(b, c)),
    ("a IMPLIES b AND c", lambda a, b, c: IMP(a, b and c), lambda a, b, c: IMP(a, b) and c),
    ("a IMPLIES b IFF c", lambda a, b, c: IMP(a, b) == c, lambda a, b, c: IMP(a, b == c)),
    ("a IFF b IMPLIES c", lambda a, b, c: a == IMP(b, c), lambda a, b, c: IMP(a == b, c)),
    ("a IMPLIES b IMPLIES c", lambda a, b, c: IMP(a, IMP(b, c)), lambda a, b, c: IMP(IMP(a, b), c)),
    ("a IFF b IFF c", lambda a, b, c: (a == b) == c, lambda a, b, c: a == b == c),
    ("a XOR b XOR c", lambda a, b, c: (a + b + c) % 2 == 1, lambda a, b, c: a != b != c),
    ("NOT a IMPLIES b", lambda a, b, c: IMP(not a, b), lambda a, b, c: not IMP(a, b)),
]


@pytest.mark.parametrize("source, meaning, other", PRECEDENCE_CASES, ids=[c[0] for c in PRECEDENCE_CASES])
def test_precedence(source, meaning, other):
    assert table(meaning) != table(other)  # the example tells the two readings apart
    assert models(source) == table(meaning)


def test_precedence_constant_matches_the_docs():
    assert nat.PRECEDENCE == ("NOT", "AND", "XOR", "OR", "IMPLIES", "IFF")
    assert "NOT > AND > XOR > OR > IMPLIES > IFF" in nat.__doc__
    assert "NOT > AND > XOR > OR > IMPLIES > IFF" in nat.CONVENTION


# --------------------------------------------------------------------------- lexical rules


@pytest.mark.parametrize(
    "source",
    [
        "(a AND NOT b) OR (c XOR a) IMPLIES (b IFF c)",
        "(a and not b) or (c xor a) implies (b iff c)",
        "(a And Not b) Or (c Xor a) Implies (b Iff c)",
        "(a & ~b) | (c ^ a) -> (b <-> c)",
        "(a && !b) || (c ^ a) => (b <=> c)",
        "(a∧¬b)∨(c⊕a)→(b↔c)",
        "(a&!b)|(c^a)⇒(b⇔c)",
    ],
)
def test_keywords_in_any_case_and_symbol_aliases(source):
    expected = table(lambda a, b, c: IMP((a and not b) or (c != a), b == c))
    assert models(source) == expected


def test_names_that_start_like_keywords():
    names = ["android", "order", "notice", "xor_gate", "iffy", "TRUEish"]
    cnf = nat.parse("android AND order OR notice\nNOT xor_gate OR iffy OR TRUEish", names)
    got = set(enumerate_models(cnf))
    want = {
        bits
        for bits in product((0, 1), repeat=6)
        if ((bits[0] and bits[1]) or bits[2]) and (not bits[3] or bits[4] or bits[5])
    }
    assert got == want


def test_lines_are_conjoined_and_comments_ignored():
    source = "# exactly one of a, b\n\na OR b   // at least one\nNOT (a AND b)\n\n// c is free\n"
    assert models(source) == table(lambda a, b, c: a != b)


def test_continuation_inside_parentheses_and_after_an_operator():
    assert models("(a OR\n  b)\nc AND\n\n  NOT a") == table(lambda a, b, c: (a or b) and c and not a)


def test_constants_and_empty_formula():
    assert models("TRUE") == table(lambda a, b, c: True)
    assert models("a OR FALSE") == table(lambda a, b, c: a)
    assert models("false") == set()
    assert models("# nothing\n") == table(lambda a, b, c: True)


def test_double_negation_is_dropped_and_deep_nots_are_fine():
    assert models("NOT " * 3001 + "a") == table(lambda a, b, c: not a)


def test_chains_are_flattened():
    [expr] = nat.parse_expressions("a AND b AND c", ABC)
    assert expr == Op("and", (Var(1), Var(2), Var(3)))
    [expr] = nat.parse_expressions("a IMPLIES b IMPLIES c", ABC)
    assert expr == Op("implies", (Var(1), Op("implies", (Var(2), Var(3)))))
    [expr] = nat.parse_expressions("a IFF b IFF c", ABC)
    assert expr == Op("iff", (Op("iff", (Var(1), Var(2))), Var(3)))


# --------------------------------------------------------------------------- errors


def test_unknown_variable_lists_close_matches():
    err = error("Green_light OR red\nyelow", names=["green_light", "red", "yellow"])
    assert (err.kind, err.line) == ("unknown_variable", 1)
    assert "'Green_light' at line 1, column 1: did you mean 'green_light'?" in err.message
    assert "'yelow' at line 2, column 1: did you mean 'yellow'?" in err.message
    assert "case-sensitive" in err.message
    assert "green_light, red, yellow" in err.message


def test_missing_operand():
    err = error("a OR b\na AND OR b")
    assert (err.kind, err.line) == ("syntax", 2)
    assert "column 7" in err.message and "unexpected 'OR'" in err.message
    assert "expected a variable name, TRUE, FALSE, NOT or '('" in err.message


def test_missing_operator():
    err = error("a b")
    assert (err.kind, err.line) == ("syntax", 1)
    assert "unexpected 'b'" in err.message and "operator" in err.message


def test_line_starting_with_an_operator():
    err = error("a AND b\nOR c")
    assert (err.kind, err.line) == ("syntax", 2)
    assert "cannot start with a binary operator" in err.message


def test_unclosed_parenthesis():
    err = error("a OR b\n(a AND\nb")
    assert err.kind == "syntax"
    assert "end of the formula" in err.message and "'(' at line 2, column 1 is never closed" in err.message


def test_unmatched_closing_parenthesis():
    err = error("a OR b)")
    assert (err.kind, err.line) == ("syntax", 1) and "no matching '('" in err.message


def test_dangling_operator_at_the_end():
    err = error("a OR")
    assert err.kind == "syntax" and "end of the formula" in err.message


@pytest.mark.parametrize(
    "source, hint",
    [
        ("exactly_one(a, b)", "no functions"),
        ("a = b", "IFF"),
        ("1 OR a", "by name"),
        ("a, b", "no functions or lists"),
        ("IF a THEN b", "IMPLIES"),
    ],
)
def test_common_mistakes_get_a_hint(source, hint):
    err = error(source, names=ABC + ["exactly_one"])
    assert err.kind == "syntax" and hint in err.message and err.line == 1


def test_too_deep():
    assert error("a IMPLIES " * 5000 + "b").kind == "too_large"


@pytest.mark.parametrize("names", [["a", "true"], ["Xor", "b"], ["x-1"]])
def test_names_that_cannot_be_written_are_rejected_up_front(names):
    with pytest.raises(ValueError):
        nat.parse("a", names)


# --------------------------------------------------------------------------- differential

PREC = {"iff": 0, "implies": 1, "or": 2, "xor": 3, "and": 4, "not": 5}
SPELLINGS = {
    "not": ["NOT ", "not ", "Not ", "~", "!", "¬"],
    "and": ["AND", "and", "&", "&&", "∧"],
    "xor": ["XOR", "xor", "^", "⊕"],
    "or": ["OR", "Or", "|", "||", "∨"],
    "implies": ["IMPLIES", "implies", "->", "=>", "→"],
    "iff": ["IFF", "iff", "<->", "<=>", "⇔"],
}
POOL = ["a", "b", "x1", "y_2", "andy", "orbit", "notable", "xor_gate", "iffy", "TRUEish", "Falsehood", "imply"]


def render(expr, names, rng, minimal):
    """NAT text for ``expr``; with ``minimal`` only the parentheses the precedence requires."""

    def prec(e):
        return PREC[e.op] if isinstance(e, Op) else 9

    def go(e, needs_parens):
        if isinstance(e, Var):
            return names[e.index - 1]
        if isinstance(e, Const):
            return rng.choice(["TRUE", "true", "True"] if e.value else ["FALSE", "false"])
        if e.op == "not":
            inner = e.args[0]
            text = rng.choice(SPELLINGS["not"]) + go(inner, not minimal or prec(inner) < PREC["not"])
        else:
            parts = []
            for i, arg in enumerate(e.args):
                same = prec(arg) == PREC[e.op]
                ok_same = (e.op in ("and", "or", "xor")) or (e.op == "implies" and i == 1) or (e.op == "iff" and i == 0)
                parts.append(go(arg, not minimal or prec(arg) < PREC[e.op] or (same and not ok_same)))
            text = "".join(parts[0:1] + [f" {rng.choice(SPELLINGS[e.op])} {p}" for p in parts[1:]])
        return f"({text})" if needs_parens else text

    return go(expr, False)


def decode(n, codes):
    """Expression trees NAT can write (binary IMPLIES/IFF) from a flat list of integers.

    A stack machine, cheap for hypothesis to draw and shrink. The last entry is one root; all the
    others are OR-ed into a second root, so every node drawn is used.
    """
    stack = []
    for code in codes:
        kind, arg = code % 8, code // 8
        if kind <= 1 or not stack or (kind == 2 and arg % 3):
            stack.append(Var(arg % n + 1))
        elif kind == 2:
            stack.append(Const(bool(arg % 2)))
        elif kind == 3:
            stack.append(Op("not", (stack.pop(),)))
        elif len(stack) < 2:
            stack.append(Var(arg % n + 1))
        elif kind in (4, 5):
            right, left = stack.pop(), stack.pop()
            stack.append(Op("implies" if kind == 4 else "iff", (left, right)))
        else:
            arity = min(len(stack), 2 + arg % 2)
            args = tuple(stack[-arity:])
            del stack[-arity:]
            stack.append(Op(("and", "or", "xor")[(arg // 2) % 3], args))
    if len(stack) > 2:
        return [Op("or", tuple(stack[:-1])), stack[-1]]
    return stack


@st.composite
def nat_cases(draw):
    n = draw(st.integers(1, 6))
    names = draw(st.lists(st.sampled_from(POOL), min_size=n, max_size=n, unique=True))
    exprs = decode(n, draw(st.lists(st.integers(0, 255), min_size=8, max_size=30)))
    return names, exprs, draw(st.booleans()), draw(st.integers(0, 2**16))


@settings(max_examples=120, deadline=None)
@given(nat_cases())
def test_parse_matches_evaluate(case):
    names, exprs, minimal, seed = case
    rng = random.Random(seed)
    lines = []
    for expr in exprs:
        lines.append(render(expr, names, rng, minimal))
        lines.append(rng.choice(["", "# comment", "// note", "   "]))
    source = "\n".join(lines)
    n = len(names)
    want = {
        bits
        for bits in product((0, 1), repeat=n)
        if all(evaluate(e, {i + 1: bool(b) for i, b in enumerate(bits)}) for e in exprs)
    }
    assert set(enumerate_models(nat.parse(source, names))) == want, source
