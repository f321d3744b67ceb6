import itertools
import math
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

from autonesy.tools import onehot_count
from autonesy.tools.cnf import CNF
from autonesy.tools.onehot_count import (
    MAX_STATE_BYTES,
    NotOneHot,
    StateBudgetExceeded,
    count_one_hot,
    interchangeable_values,
    one_hot_groups,
    one_hot_projection,
    state_memory_budget,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from held_out_counts import all_different  # noqa: E402
from scaling import latin_squares, sudoku  # noqa: E402

AT_MOST_ONES = (EncType.pairwise, EncType.ladder, EncType.seqcounter, EncType.bitwise, EncType.totalizer)


@st.composite
def one_hot_cnfs(draw):
    """Random exactly-one groups (a positive clause, pairwise exclusions) over some of N variables, plus random
    clauses over all of them: the groups' structure, and clauses that cut across it."""
    n = draw(st.integers(2, 9))
    order = draw(st.permutations(range(1, n + 1)))
    clauses: list[tuple[int, ...]] = []
    start = 0
    while start < n and draw(st.booleans()):
        size = draw(st.integers(2, 4))
        group = order[start : start + size]
        start += size
        if len(group) >= 2:
            clauses.append(tuple(group))
            clauses.extend((-a, -b) for a, b in itertools.combinations(group, 2))
    literal = st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v)))
    clauses += draw(st.lists(st.lists(literal, min_size=1, max_size=4).map(tuple), max_size=8))
    return CNF(n, tuple(draw(st.permutations(clauses))), n)


@settings(max_examples=150, deadline=None)
@given(one_hot_cnfs())
def test_one_hot_count_is_the_brute_force_count(cnf):
    assert count_one_hot(cnf) == len(projected_models(cnf))


@settings(max_examples=100, deadline=None)
@given(cnfs(max_task_vars=7, max_aux=0, max_clauses=10))
def test_one_hot_count_of_any_cnf_without_auxiliaries(cnf):
    assert count_one_hot(cnf) == len(projected_models(cnf))


def test_sudoku_4_has_288_grids_counted_over_its_cells():
    cnf = sudoku(4)
    groups = one_hot_groups(cnf)
    assert groups == [tuple(range(4 * cell + 1, 4 * cell + 5)) for cell in range(16)]
    assert count_one_hot(cnf) == 288  # the number of 4 × 4 Sudoku grids


def test_latin_squares_of_order_4():
    n = 4

    def var(r: int, c: int, d: int) -> int:
        return (r * n + c) * n + d + 1

    clauses = []
    for r, c in itertools.product(range(n), range(n)):
        cell = [var(r, c, d) for d in range(n)]
        clauses += [tuple(cell)] + [(-a, -b) for a, b in itertools.combinations(cell, 2)]
    for d, i in itertools.product(range(n), range(n)):
        for line in ([var(i, c, d) for c in range(n)], [var(r, i, d) for r in range(n)]):
            clauses += [(-a, -b) for a, b in itertools.combinations(line, 2)]
    assert count_one_hot(CNF(n**3, tuple(clauses), n**3)) == 576  # Latin squares of order 4


def test_unsatisfiable_and_empty_cnfs():
    assert count_one_hot(CNF(2, ((1,), (-1,)), 2)) == 0
    assert count_one_hot(CNF(2, ((),), 2)) == 0
    assert count_one_hot(CNF(3, (), 3)) == 8


def test_a_wide_layer_stops_at_the_state_budget():
    with pytest.raises(StateBudgetExceeded, match="states budget"):
        count_one_hot(latin_squares(5), max_states=10)


@pytest.mark.parametrize("n", [8, 9, 10])
def test_all_different_with_ladder_at_most_ones_alone_and_overlapping_pairwise_has_n_factorial_models(n):
    ladder = all_different(n, EncType.ladder)
    assert ladder.num_aux_vars and count_one_hot(ladder) == math.factorial(n)
    assert count_one_hot(all_different(n).conjoin(ladder)) == math.factorial(n)


def test_binary_and_counter_at_most_ones_are_read_as_the_same_groups():
    for encoding in (EncType.bitwise, EncType.seqcounter):
        cnf = all_different(6, encoding)
        assert one_hot_groups(one_hot_projection(cnf)) == [tuple(range(6 * i + 1, 6 * i + 7)) for i in range(6)]
        assert count_one_hot(cnf) == math.factorial(6)


def test_a_block_that_is_not_an_at_most_one_stops_the_route():
    at_most_two = CardEnc.atmost(lits=[1, 2, 3, 4], bound=2, vpool=IDPool(start_from=5), encoding=EncType.seqcounter)
    cnf = CNF(4, tuple(map(tuple, at_most_two.clauses)), at_most_two.nv)
    with pytest.raises(NotOneHot, match="together"):
        count_one_hot(cnf)


@st.composite
def encoded_one_hot_cnfs(draw):
    """Exactly-one groups whose at-most-ones some encoder wrote with auxiliaries, random clauses over the task
    variables, and (when ``spoiled``) one random clause on an auxiliary, which may make a block anything."""
    n = draw(st.integers(2, 8))
    pool = IDPool(start_from=n + 1)
    clauses: list[tuple[int, ...]] = []
    order, start = draw(st.permutations(range(1, n + 1))), 0
    while start < n and draw(st.booleans()):
        group = order[start : start + draw(st.integers(2, 4))]
        start += len(group)
        encoding = draw(st.sampled_from(AT_MOST_ONES))
        clauses += [tuple(c) for c in CardEnc.atmost(lits=list(group), bound=1, vpool=pool, encoding=encoding).clauses]
        if draw(st.booleans()):
            clauses.append(tuple(group))
    literal = st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v)))
    clauses += draw(st.lists(st.lists(literal, min_size=1, max_size=3).map(tuple), max_size=5))
    spoiled = pool.top > n and draw(st.booleans())
    if spoiled:
        any_literal = st.integers(1, pool.top).flatmap(lambda v: st.sampled_from((v, -v)))
        clauses.append(tuple(draw(st.lists(any_literal, min_size=1, max_size=3))))
    return CNF(n, tuple(clauses), max(n, pool.top)), spoiled


@settings(max_examples=200, deadline=None)
@given(encoded_one_hot_cnfs())
def test_a_cnf_with_auxiliaries_is_counted_exactly_or_refused(case):
    """Never a wrong count: either the brute-force projected count or :class:`NotOneHot`, which only a spoiled
    block may cause (every encoder's at-most-one is proved to be one)."""
    cnf, spoiled = case
    try:
        value = count_one_hot(cnf)
    except NotOneHot:
        assert spoiled
    else:
        assert value == len(projected_models(cnf))


def test_latin_squares_of_order_5():
    assert count_one_hot(latin_squares(5)) == 161_280  # OEIS A002860


def test_latin_squares_of_order_6_within_a_few_seconds_of_states():
    """Without reading its symbols as interchangeable, the 6 × 6 Latin square took about 56 s of CPU and 600,000
    states in one layer; its first row fixed, a layer holds a few thousand."""
    assert count_one_hot(latin_squares(6), max_states=100_000) == 812_851_200  # OEIS A002860


@st.composite
def symmetric_one_hot_cnfs(draw):
    """k exactly-one groups of m values (group g's value v is variable g·m + v + 1) and random clauses over them,
    each clause with its images under every permutation of the values: a CSP whose values are interchangeable."""
    k, m = draw(st.integers(1, 4)), draw(st.integers(2, 3))
    groups = [[g * m + v + 1 for v in range(m)] for g in range(k)]
    clauses = {tuple(group) for group in groups} | {(-a, -b) for g in groups for a, b in itertools.combinations(g, 2)}
    literal = st.tuples(st.integers(0, k - 1), st.integers(0, m - 1), st.booleans())
    for drawn in draw(st.lists(st.lists(literal, min_size=1, max_size=3), max_size=4)):
        for permuted in itertools.permutations(range(m)):
            clauses.add(tuple((1 if pos else -1) * groups[g][permuted[v]] for g, v, pos in drawn))
    return CNF(k * m, tuple(sorted(clauses)), k * m), m


@settings(max_examples=150, deadline=None)
@given(symmetric_one_hot_cnfs())
def test_interchangeable_values_are_counted_through_first_uses_as_brute_force_counts(case):
    cnf, m = case
    assert interchangeable_values(cnf, one_hot_groups(cnf)) == m
    assert count_one_hot(cnf) == len(projected_models(cnf))


def test_values_are_interchangeable_only_when_every_clause_maps_onto_one():
    assert interchangeable_values(sudoku(4), one_hot_groups(sudoku(4))) == 4
    clue = CNF(64, (*sudoku(4).clauses, (1,)), 64)  # the first cell holds 1: the values no longer interchangeable
    assert interchangeable_values(clue, one_hot_groups(clue)) == 0
    assert count_one_hot(clue) == 288 // 4
    mixed = CNF(5, ((1, 2), (-1, -2), (3, 4, 5), (-3, -4), (-3, -5), (-4, -5)), 5)  # groups of 2 and 3 values
    assert interchangeable_values(mixed, one_hot_groups(mixed)) == 0


def test_the_state_budget_follows_the_memory_available(monkeypatch):
    """Sudoku 4 × 4's layers take a few kilobytes (48 states of about 170 bytes at its 5th cell): refused with
    16 KiB available (2 KiB for the states of one racer), counted with 64 MiB; a huge machine gets the ceiling."""
    monkeypatch.setattr(onehot_count, "available_memory", lambda: 16 << 10)
    assert state_memory_budget() == (16 << 10) // 8
    with pytest.raises(StateBudgetExceeded, match="memory budget"):
        count_one_hot(sudoku(4))
    monkeypatch.setattr(onehot_count, "available_memory", lambda: 64 << 20)
    assert count_one_hot(sudoku(4)) == 288
    monkeypatch.setattr(onehot_count, "available_memory", lambda: 1 << 50)
    assert state_memory_budget() == MAX_STATE_BYTES


def test_the_memory_available_is_at_most_the_address_space_limit_left(monkeypatch):
    with open("/proc/self/statm") as statm:
        in_use = int(statm.read().split()[0]) * onehot_count.os.sysconf("SC_PAGE_SIZE")
    limit = in_use + (100 << 20)
    monkeypatch.setattr(onehot_count.resource, "getrlimit", lambda which: (limit, limit))
    assert onehot_count.available_memory() <= 101 << 20


def test_a_measured_state_is_what_python_allocates_for_it():
    """The estimate per state against tracemalloc's count of a layer-sized table of alike states (within 30 %)."""
    import tracemalloc

    keys = [(1 << 200) | i for i in range(100_000)]
    tracemalloc.start()
    table: dict[int, int] = {}
    for key in keys:
        table[key] = 10**12 + key % 997
    allocated = tracemalloc.get_traced_memory()[0] + sum(map(sys.getsizeof, keys))
    tracemalloc.stop()
    estimated = onehot_count.Footprint(onehot_count._key_bytes).bytes(table)
    assert 0.7 * allocated < estimated < 1.3 * allocated
