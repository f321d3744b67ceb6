import itertools
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.onehot_count import StateBudgetExceeded, count_one_hot, one_hot_groups

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scaling import sudoku  # noqa: E402


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


def test_auxiliaries_are_refused():
    with pytest.raises(ValueError, match="no auxiliaries"):
        count_one_hot(CNF(1, ((1, 2),), 2))


def test_a_wide_layer_stops_at_the_state_budget():
    with pytest.raises(StateBudgetExceeded, match="states budget"):
        count_one_hot(sudoku(4), max_states=10)
