import math
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from pysat.card import EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tools.cnf import CNF
from autonesy.tools.frontier_count import count_by_frontier
from autonesy.tools.onehot_count import StateBudgetExceeded

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scaling import grid_path  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(cnfs(max_task_vars=6, max_aux=5, max_clauses=12))
def test_frontier_count_is_the_brute_force_projected_count(cnf):
    assert count_by_frontier(cnf) == len(projected_models(cnf))


@settings(max_examples=100, deadline=None)
@given(cnfs(max_task_vars=4, max_aux=7, max_clauses=16))
def test_frontier_count_with_more_auxiliaries_than_task_variables(cnf):
    assert count_by_frontier(cnf) == len(projected_models(cnf))


def _cardinality(kind: str, n: int, bound: int, encoding: int) -> CNF:
    builder = ClauseBuilder(n)
    {"atmost": builder.at_most, "atleast": builder.at_least, "equals": builder.exactly}[kind](
        list(range(1, n + 1)), bound, encoding
    )
    return builder.cnf()


CARDINALITY_CASES = [
    (kind, encoding)
    for encoding in (EncType.seqcounter, EncType.totalizer, EncType.sortnetwrk, EncType.cardnetwrk)
    for kind in ("atmost", "atleast", "equals")
] + [("atmost", EncType.ladder), ("equals", EncType.ladder)]  # pysat's ladder is at-most-1 / exactly-1 only


@pytest.mark.parametrize(("kind", "encoding"), CARDINALITY_CASES)
def test_cardinality_encodings_count_as_binomial_sums(kind, encoding):
    n, bound = 12, 1 if encoding == EncType.ladder else 5
    allowed = {"atmost": range(bound + 1), "atleast": range(bound, n + 1), "equals": [bound]}[kind]
    assert count_by_frontier(_cardinality(kind, n, bound, encoding)) == sum(math.comb(n, i) for i in allowed)


def test_sequential_counter_exactly_50_of_100():
    assert count_by_frontier(_cardinality("equals", 100, 50, EncType.seqcounter)) == math.comb(100, 50)


def test_unconstrained_task_variables_double_the_count():
    cnf = CNF(5, ((1, 6), (-6, 2)), 6)  # 3, 4, 5 appear in no clause; ∃6: 1 ∨ 2
    assert count_by_frontier(cnf) == 3 * 2**3


def test_a_grid_path_overruns_the_state_budget_with_a_clear_message():
    with pytest.raises(StateBudgetExceeded, match="frontier count"):
        count_by_frontier(grid_path(4), max_states=500, max_residual=200)


def test_the_state_budget_has_a_ceiling_whatever_the_number_of_task_variables():
    """10,000 task variables would allow 160,000 states by the per-variable rule; the ceiling stops at
    100,000. The first 17 each leave an auxiliary open until the last clause: 2^17 = 131,072 states."""
    n, kept = 10_000, 17
    aux = list(range(n + 1, n + kept + 1))
    clauses = [(task, a) for task, a in zip(range(1, kept + 1), aux)] + [tuple(aux) + (n,)]
    with pytest.raises(StateBudgetExceeded, match="more than 100000"):
        count_by_frontier(CNF(n, tuple(clauses), n + kept))
