import math
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from pysat.card import EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tools import onehot_count
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


def test_the_state_budget_follows_the_memory_available(monkeypatch):
    """The first 14 task variables each leave an auxiliary open until the last clause: 2^14 states of about a
    kilobyte (the big clause's residual). Refused with 16 MiB available (2 MiB for one racer's states), counted
    with 4 GiB: every assignment extends (all auxiliaries true), 2^15 models."""
    kept = 14
    n = kept + 1
    aux = list(range(n + 1, n + kept + 1))
    cnf = CNF(n, tuple(zip(range(1, kept + 1), aux)) + (tuple(aux) + (n,),), n + kept)
    monkeypatch.setattr(onehot_count, "available_memory", lambda: 16 << 20)
    with pytest.raises(StateBudgetExceeded, match="memory budget"):
        count_by_frontier(cnf)
    monkeypatch.setattr(onehot_count, "available_memory", lambda: 4 << 30)
    assert count_by_frontier(cnf) == 2**n


def test_the_residual_budget_follows_the_memory_available(monkeypatch):
    """One state's open clauses may take a thousandth of the budget, which resolution on a 3 × 3 grid's paths
    passes: 14 clauses with 32 MiB available (4 MiB for one racer), twice as many with twice the memory."""
    for available, clauses in ((32 << 20, 14), (64 << 20, 29)):
        monkeypatch.setattr(onehot_count, "available_memory", lambda available=available: available)
        with pytest.raises(StateBudgetExceeded, match=f"more than {clauses} open clauses"):
            count_by_frontier(grid_path(3))
