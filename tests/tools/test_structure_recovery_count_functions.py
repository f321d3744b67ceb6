"""Count tables (tools/count_functions.py) against truth tables: random formulas over a few literals, built
with the tables' AND, OR and NOT, must agree with the formula evaluated on every assignment, and so must
their SDDs, their equality and the literal counts they are read as."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysdd.sdd import SddManager, Vtree

from autonesy.tools.count_functions import CountFunction, TooLarge, or_of_ands

N = 6


def formulas(depth: int = 4) -> st.SearchStrategy:
    """Formulas as nested tuples: ("lit", l), ("not", f), ("and"/"or", f, g), ("count", literals, allowed)
    (a symmetric function built as an OR of ANDs, so that groups merge), or ("const", b)."""
    literal = st.integers(1, N).flatmap(lambda v: st.sampled_from((v, -v)))
    leaves = st.one_of(
        literal.map(lambda lit: ("lit", lit)),
        st.booleans().map(lambda value: ("const", value)),
        st.lists(st.integers(1, N), min_size=1, max_size=N, unique=True).flatmap(
            lambda vars_: st.tuples(
                st.just("count"),
                st.tuples(*(st.sampled_from((v, -v)) for v in vars_)),
                st.frozensets(st.integers(0, len(vars_))),
            )
        ),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            inner.map(lambda f: ("not", f)),
            st.tuples(st.sampled_from(("and", "or")), inner, inner),
        ),
        max_leaves=depth * 2,
    )


def truth(formula, bits: dict[int, bool]) -> bool:
    kind = formula[0]
    if kind == "lit":
        return bits[abs(formula[1])] == (formula[1] > 0)
    if kind == "const":
        return formula[1]
    if kind == "count":
        return sum(bits[abs(lit)] == (lit > 0) for lit in formula[1]) in formula[2]
    if kind == "not":
        return not truth(formula[1], bits)
    left, right = truth(formula[1], bits), truth(formula[2], bits)
    return left and right if kind == "and" else left or right


def table(formula) -> CountFunction:
    kind = formula[0]
    if kind == "lit":
        return CountFunction.literal(formula[1])
    if kind == "const":
        return CountFunction.constant(formula[1])
    if kind == "count":  # "exactly c" for each allowed c: an OR over subsets, merged into one group
        literals = formula[1]
        terms = [
            [(CountFunction.literal(lit), lit in chosen) for lit in literals]
            for c in sorted(formula[2])
            for chosen in itertools.combinations(literals, c)
        ]
        return or_of_ands(terms)
    if kind == "not":
        return ~table(formula[1])
    left, right = table(formula[1]), table(formula[2])
    return left & right if kind == "and" else left | right


def assignments():
    for row in itertools.product((False, True), repeat=N):
        yield dict(enumerate(row, start=1))


def value(f: CountFunction, bits: dict[int, bool]) -> bool:
    counts = tuple(sum(bits[abs(lit)] == (lit > 0) for lit in group) for group in f.groups)
    return bool(f.table[counts])


@settings(max_examples=300, deadline=None)
@given(formulas())
def test_a_table_is_the_function_it_was_built_as(formula) -> None:
    f = table(formula)
    assert f.table.shape == tuple(len(group) + 1 for group in f.groups)
    assert len({abs(lit) for group in f.groups for lit in group}) == sum(len(group) for group in f.groups)
    for bits in assignments():
        assert value(f, bits) == truth(formula, bits)


@settings(max_examples=150, deadline=None)
@given(formulas(), formulas())
def test_tables_are_equal_exactly_when_the_functions_are(one, other) -> None:
    same = all(truth(one, bits) == truth(other, bits) for bits in assignments())
    assert table(one).equals(table(other)) == same
    assert table(one).equals(table(one))


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_the_sdd_of_a_table_has_its_models(formula) -> None:
    manager = SddManager.from_vtree(Vtree(var_count=N, var_order=list(range(N, 0, -1)), vtree_type="right"))
    sdd = table(formula).to_sdd(manager, list(range(N, 0, -1)))
    models = sum(truth(formula, bits) for bits in assignments())
    assert sdd.global_model_count() == models


@settings(max_examples=150, deadline=None)
@given(formulas())
def test_a_one_group_table_is_read_as_its_literal_count(formula) -> None:
    f = table(formula)
    count = f.literal_count(tuple(range(1, N + 1)))
    if count is None:
        assert len(f.groups) > 1 or not any(truth(formula, bits) for bits in assignments())
        return
    for bits in assignments():
        assert (sum(bits[abs(lit)] == (lit > 0) for lit in count.literals) in count.allowed) == truth(formula, bits)


def test_a_symmetric_function_ends_as_one_group() -> None:
    """At most 2 of x1..x5 written as a sequential counter's prefixes (each an OR of ANDs over the previous
    prefix and the next literal): one group of five literals, its allowed counts 0, 1 and 2."""
    prefix = [CountFunction.constant(True)] + [CountFunction.constant(False)] * 3  # prefix[j]: at least j so far
    for var in range(1, 6):
        x = CountFunction.literal(var)
        prefix = [prefix[0]] + [prefix[j] | (x & prefix[j - 1]) for j in range(1, 4)]
    at_most_two = ~prefix[3]
    assert [sorted(group) for group in at_most_two.groups] == [[1, 2, 3, 4, 5]]
    count = at_most_two.literal_count((1, 2, 3, 4, 5))
    assert count is not None and count.allowed == (0, 1, 2)


def test_a_function_of_many_groups_outgrows_the_tables() -> None:
    """Each pair's count of (x, ¬y) is read on its own in "x1 ∧ ¬x2, or x3 ∧ ¬x4, or …": k groups and 3^k
    cells for k pairs, past the budget before 12 pairs."""
    f = CountFunction.constant(False)
    with pytest.raises(TooLarge):
        for pair in range(12):
            f = f | (CountFunction.literal(2 * pair + 1) & ~CountFunction.literal(2 * pair + 2))
