"""Closing an answer cut off by the token budget under a grammar (:mod:`autonesy.tools.grammar.close`):
every cut of a sampled answer is closed into an answer of the grammar that converts, and what is
kept is a prefix of what was written (only closers are added)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autonesy.tools.formats import convert
from autonesy.tools.grammar import answer_grammar
from autonesy.tools.grammar.close import ENDINGS, close_cut
from autonesy.tools.grammar.recognize import Recognizer
from autonesy.tools.grammar.sample import Sampler

NAMES = ["a", "b", "c", "d"]
BOUNDS = {"max_depth": 3, "max_chain": 4, "max_aux": 3, "comments": False}
GRAMMARS = {fmt: answer_grammar(fmt, NAMES, **BOUNDS) for fmt in ("dimacs", "nat", "pysat", "cpmpy", "sympy")}
RECOGNIZERS = {fmt: Recognizer(g) for fmt, g in GRAMMARS.items()}


@pytest.mark.parametrize("fmt", list(GRAMMARS))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), fraction=st.floats(0.3, 1.0))
def test_a_cut_answer_is_closed_into_the_grammar_and_keeps_a_prefix(fmt, seed, fraction):
    text = Sampler(GRAMMARS[fmt], max_depth=6).sample(random.Random(seed))
    cut = text[: int(len(text) * fraction)]
    closed = close_cut(cut, GRAMMARS[fmt], RECOGNIZERS[fmt])
    if closed is None:  # no item had ended before the cut (see the DIMACS test below)
        return
    answer, kept = closed
    assert answer.startswith(cut[:kept]) and answer[kept:] in ENDINGS
    assert RECOGNIZERS[fmt].accepts(answer)
    conversion = convert(answer, fmt, NAMES, autofix=True)
    assert conversion.ok or conversion.error.kind == "runtime", (conversion.error, answer)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), fraction=st.floats(0.0, 1.0))
def test_a_dimacs_answer_cut_after_its_first_clause_line_always_closes_with_every_finished_line(seed, fraction):
    text = Sampler(GRAMMARS["dimacs"], max_depth=6).sample(random.Random(seed))
    lines = text.split("\n")
    clause_rows = [i for i, line in enumerate(lines) if line and line[0] in "-123456789"]
    if not clause_rows:
        return
    first_end = len("\n".join(lines[: clause_rows[0] + 1])) + 1
    cut = text[: first_end + int((len(text) - first_end) * fraction)]
    closed = close_cut(cut, GRAMMARS["dimacs"], RECOGNIZERS["dimacs"])
    assert closed is not None, cut
    finished = cut[: cut.rfind("\n") + 1] if not RECOGNIZERS["dimacs"].accepts(cut) else cut
    assert closed[1] == len(finished)


def test_a_finished_answer_is_left_as_it_is():
    answer = "<cnf>\np cnf 2 1\n1 -2 0\n</cnf>"
    assert close_cut(answer, GRAMMARS["dimacs"]) == (answer, len(answer))


@pytest.mark.parametrize(
    ("fmt", "cut", "expected"),
    [
        # the unfinished clause is dropped, never shortened into another one (1 -2 -3 is not 1 -2)
        ("dimacs", "<cnf>\np cnf 4 2\n1 2 0\n1 -2 -", "<cnf>\np cnf 4 2\n1 2 0\n</cnf>"),
        ("nat", "<cnf>\na OR b\nc AND (d", "<cnf>\na OR b\n</cnf>"),
        ("nat", "<cnf>\na OR b\nc", "<cnf>\na OR b\n</cnf>"),
        ("pysat", "<cnf>\nclauses = [[a, b], [c, -d", "<cnf>\nclauses = [[a, b],\n]\n</cnf>"),
        ("cpmpy", "<cnf>\nconstraints = [\n    a,\n    cp.any([b, c", "<cnf>\nconstraints = [\n    a,\n]\n</cnf>"),
        ("sympy", "<cnf>\nconstraints = [a, (b | c", "<cnf>\nconstraints = [a,\n]\n</cnf>"),
    ],
)
def test_the_unfinished_item_is_dropped(fmt, cut, expected):
    closed = close_cut(cut, GRAMMARS[fmt])
    assert closed is not None and closed[0] == expected


def test_a_cut_before_any_finished_item_cannot_be_closed():
    assert close_cut("<cnf>\nconstraints = [cp.an", GRAMMARS["cpmpy"]) is None
    assert close_cut("The answer is", GRAMMARS["nat"]) is None
