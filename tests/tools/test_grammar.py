"""The answer grammars (tools/grammar): the reference formalizations of all 18 tasks × 5 formats are
inside them, strings sampled from them convert in the format's front-end, and what they are meant
to rule out (unknown names, unbalanced parentheses, bad DIMACS lines) is outside them."""

from __future__ import annotations

import functools
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autonesy.agents.policies import GRAMMAR_DEPTH
from autonesy.tasks.reference import reference_formalization, reference_source
from autonesy.tasks.registry import TASK_NAMES, load_task
from autonesy.tools.formats import convert
from autonesy.tools.grammar import FORMATS, answer_grammar, repair_grammar, to_gbnf, to_regex
from autonesy.tools.grammar.ir import Grammar, int_range
from autonesy.tools.grammar.recognize import Recognizer
from autonesy.tools.grammar.sample import Sampler

KEYWORDS = {"not", "and", "xor", "or", "implies", "iff", "true", "false"}
PYTHON_RESERVED = {
    "cp",
    "VARS",
    "itertools",
    "math",
    "constraints",
    "model",
    "submit",
    "N",
    "vpool",
    "CNF",
    "CNFPlus",
    "WCNF",
    "IDPool",
    "CardEnc",
    "PBEnc",
    "EncType",
    "PBEncType",
    "formula",
    "clauses",
    "sp",
    "And",
    "Or",
    "Not",
    "Implies",
    "Equivalent",
    "Xor",
    "ITE",
    "true",
    "false",
    "None",
    "True",
    "False",
    "print",
    "range",
}


@functools.cache
def recognizer(fmt: str, names: tuple[str, ...], reasoning_chars: int = 0) -> Recognizer:
    return Recognizer(answer_grammar(fmt, names, reasoning_chars=reasoning_chars))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_reference_answers_are_inside_the_grammar(task_name, fmt):
    task = load_task(task_name)
    names = tuple(task.names)
    bare = f"<cnf>\n{reference_source(task, fmt)}</cnf>"
    assert recognizer(fmt, names).error(bare) is None
    # ... and inside the bounded grammar the policies decode with (nesting depth GRAMMAR_DEPTH).
    assert Recognizer(answer_grammar(fmt, names, max_depth=GRAMMAR_DEPTH)).error(bare) is None
    # With zs-cot the expert's full answer (a sentence, then the block) is inside the grammar too.
    assert recognizer(fmt, names, 2000).error(reference_formalization(task, fmt)) is None


def test_reasoning_is_bounded_and_cannot_open_a_block_early():
    r = recognizer("nat", ("a", "b"), 20)
    assert r.accepts("x" * 20 + "<cnf>\na OR b\n</cnf>")
    assert not r.accepts("x" * 21 + "<cnf>\na OR b\n</cnf>")
    assert not r.accepts("see <b>\n<cnf>\na OR b\n</cnf>")
    assert not recognizer("nat", ("a", "b")).accepts("x<cnf>\na OR b\n</cnf>")  # zs: no reasoning


@pytest.mark.parametrize(
    "fmt, text",
    [
        ("nat", "a OR zz\n"),  # unknown name
        ("nat", "(a OR b\n"),  # unbalanced parenthesis
        ("nat", "a OR b)\n"),
        ("nat", "AND a\n"),
        ("dimacs", "p cnf 2 1\n1 a 0\n"),  # not an integer
        ("dimacs", "p cnf 2 1\n1 -2\n"),  # no terminating 0
        ("dimacs", "p cnf 2 1\n0\n"),  # empty clause
        ("dimacs", "1 2 0\n"),  # no header
        ("pysat", "clauses = [\n    [a, zz],\n]\n"),
        ("pysat", "clauses = [\n    [a, aux[0]],\n]\n"),  # an auxiliary without its declaration
        ("cpmpy", "constraints = [\n    cp.any([a, b],\n]\n"),
        ("cpmpy", "constraints = [\n    a and b,\n]\n"),
        ("sympy", "constraints = [\n    Implies(a),\n]\n"),
        ("sympy", "constraints = [\n    a | zz,\n]\n"),
    ],
)
def test_what_the_grammar_rules_out(fmt, text):
    assert not recognizer(fmt, ("a", "b")).accepts(f"<cnf>\n{text}</cnf>")


def test_repair_grammar():
    r = Recognizer(repair_grammar("nat", ["a", "b"]))
    assert r.accepts("[[OK]]")
    assert r.accepts("[[FIXED]]\n<cnf>\na IMPLIES b\n</cnf>")
    assert not r.accepts("[[FIXED]]")
    assert not r.accepts("I think [[OK]]")
    strict = Recognizer(repair_grammar("nat", ["a", "b"], allow_ok=False, comments=False))
    assert not strict.accepts("[[OK]]") and not strict.accepts("[[FIXED]]\n<cnf>\n# a comment\na\n</cnf>")
    assert strict.accepts("[[FIXED]]\n<cnf>\na\n</cnf>")


def test_bounds_make_the_language_finite():
    r = Recognizer(answer_grammar("nat", ["a", "b", "c"], max_depth=1, max_lines=2, max_chain=3))
    assert r.accepts("<cnf>\n(a OR b) AND NOT c\nb\n</cnf>")
    assert not r.accepts("<cnf>\n((a))\n</cnf>")  # nested two deep
    assert not r.accepts("<cnf>\na OR b OR c OR a\n</cnf>")  # four operands
    assert not r.accepts("<cnf>\na\nb\nc\n</cnf>")  # three lines
    assert not r.accepts("<cnf>\nNOT NOT a\n</cnf>")


# -- sampled strings convert ------------------------------------------------------------------------

identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True)


def task_names(reserved: set[str]):
    ok = identifier.filter(lambda n: n.lower() not in KEYWORDS and n not in reserved and not n.startswith("__"))
    return st.lists(ok, min_size=1, max_size=6, unique=True)


def samples(fmt: str, names: list[str], seed: int, count: int, reasoning: int, bounded: bool = False) -> list[str]:
    bounds = {"max_depth": 2, "max_lines": 3} if bounded else {}
    grammar = answer_grammar(fmt, names, reasoning_chars=reasoning, max_aux=12, **bounds)
    sampler, rng = Sampler(grammar, max_depth=7), random.Random(seed)
    texts = [sampler.sample(rng) for _ in range(count)]
    check = Recognizer(grammar)
    for text in texts:  # the sampler and the recognizer agree on the grammar
        assert check.error(text) is None, text
    return texts


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=task_names(set()), seed=st.integers(0, 2**32), reasoning=st.sampled_from([0, 30]), bounded=st.booleans())
def test_sampled_nat_always_parses(names, seed, reasoning, bounded):
    for text in samples("nat", names, seed, 5, reasoning, bounded):
        conversion = convert(text, "nat", names, autofix=False)
        assert conversion.ok, (conversion.error, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=task_names(set()), seed=st.integers(0, 2**32), reasoning=st.sampled_from([0, 30]), bounded=st.booleans())
def test_sampled_dimacs_always_converts(names, seed, reasoning, bounded):
    for text in samples("dimacs", names, seed, 5, reasoning, bounded):
        strict = convert(text, "dimacs", names, autofix=False)
        # The header's counts are what no context-free grammar can check; autofix rewrites them.
        assert strict.ok or strict.error.kind in ("header", "out_of_range"), (strict.error, text)
        assert convert(text, "dimacs", names, autofix=True).ok, text


AUX_INDEX = re.compile(r"IndexError|out of bounds")


@pytest.mark.parametrize("fmt", ["pysat", "cpmpy", "sympy"])
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(names=task_names(PYTHON_RESERVED), seed=st.integers(0, 2**32), bounded=st.booleans())
def test_sampled_programs_always_run(fmt, names, seed, bounded):
    """Every sampled program runs and converts, except an auxiliary index beyond the declared count
    (``aux[7]`` after ``shape=3``): the one runtime error the grammar leaves to the repair loop."""
    for text in samples(fmt, names, seed, 3, 0, bounded):
        conversion = convert(text, fmt, names, autofix=False)
        if not conversion.ok:
            assert conversion.error.kind == "runtime" and AUX_INDEX.search(conversion.error.message), (
                conversion.error,
                text,
            )


# -- renderings -------------------------------------------------------------------------------------


@given(st.integers(0, 5000), st.integers(0, 5000), st.integers(0, 6000))
def test_int_range_matches_exactly_the_range(a, b, x):
    low, high = min(a, b), max(a, b)
    g = Grammar("n")
    g.add("n", int_range(low, high))
    assert bool(re.fullmatch(to_regex(g), str(x))) == (low <= x <= high)
    assert not re.fullmatch(to_regex(g), "0" + str(x))  # no leading zeros


def test_gbnf_rendering_names_every_rule_once():
    gbnf = to_gbnf(answer_grammar("cpmpy", ["a", "b"], reasoning_chars=100))
    heads = [line.split(" ::= ")[0] for line in gbnf.splitlines()]
    assert heads[0] == "root" and len(heads) == len(set(heads))
    assert "reasoning ::= [^<]{1,100}" in gbnf


def test_bounded_regex_of_a_nat_block():
    g = answer_grammar("nat", ["a", "b"])
    pattern = re.compile(to_regex(g, "body", depth=2))
    assert pattern.fullmatch("a OR (b AND NOT a)\n") is None  # NOT nests one level too deep
    assert pattern.fullmatch("NOT a OR (b AND a)\n")
    assert not pattern.fullmatch("a OR (b\n")
