"""Counting by orbits against brute force and against counts known from combinatorics."""

import itertools
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models
from autonesy.tools.orbit_count import NoUsefulSymmetry, count_by_orbits

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scaling import latin_squares, social_golfers  # noqa: E402


@st.composite
def symmetric_cnfs(draw):
    """A random CNF closed under one or two random signed permutations (task variables among themselves,
    auxiliaries among themselves): its clause set then has those symmetries by construction."""
    cnf = draw(cnfs(max_task_vars=6, max_aux=3, max_clauses=5))
    n, total = cnf.num_task_vars, cnf.num_vars

    def signed_permutation() -> dict[int, int]:
        task = draw(st.permutations(range(1, n + 1)))
        aux = draw(st.permutations(range(n + 1, total + 1)))
        signs = draw(st.lists(st.sampled_from((1, -1)), min_size=total, max_size=total))
        return {v: image * sign for v, image, sign in zip(range(1, total + 1), [*task, *aux], signs)}

    generators = [signed_permutation() for _ in range(draw(st.integers(1, 2)))]
    assume(any(abs(g[v]) != v or g[v] < 0 for g in generators for v in range(1, n + 1)))
    closed = {frozenset(c) for c in cnf.clauses}
    frontier = list(closed)
    while frontier:
        clause = frontier.pop()
        for g in generators:
            image = frozenset(g[abs(lit)] * (1 if lit > 0 else -1) for lit in clause)
            if image not in closed:
                closed.add(image)
                frontier.append(image)
    return CNF(n, tuple(tuple(sorted(c)) for c in closed), total)


@settings(max_examples=250, deadline=None)
@given(symmetric_cnfs())
def test_the_orbit_count_is_the_brute_force_projected_count(cnf):
    count, found = count_by_orbits(cnf)
    assert count == len(projected_models(cnf))
    assert found["orbits"] <= found["representatives"]


def test_latin_squares_of_orders_3_to_5():
    # OEIS A002860: 12, 576, 161,280 Latin squares of orders 3, 4, 5
    assert [count_by_orbits(latin_squares(n))[0] for n in (3, 4, 5)] == [12, 576, 161_280]


def test_representatives_of_one_orbit_are_merged():
    count, found = count_by_orbits(latin_squares(5))
    # the order-5 squares are two main classes (rows, columns, symbols permuted, their roles exchanged)
    assert count == 161_280 and found["representatives"] > found["orbits"] == 2


def test_a_projection_with_symmetric_auxiliaries():
    # a_i <-> x_i & x_{i+1} around a 6-cycle, and some a_i: strings with two cyclically adjacent ones,
    # 2^6 minus the 18 cyclic strings without (the Lucas number L_6)
    n = 6
    clauses: list[tuple[int, ...]] = []
    for i in range(n):
        x, y, a = i + 1, (i + 1) % n + 1, n + i + 1
        clauses += [(-a, x), (-a, y), (a, -x, -y)]
    clauses.append(tuple(range(n + 1, 2 * n + 1)))
    assert count_by_orbits(CNF(n, tuple(clauses), 2 * n))[0] == 64 - 18


def test_phase_symmetries_and_no_models():
    odd = CNF(4, tuple(c for c in itertools.product(*[(v, -v) for v in range(1, 5)]) if sum(l < 0 for l in c) % 2 == 0))
    assert count_by_orbits(odd)[0] == 8  # x1 ^ x2 ^ x3 ^ x4: half of 16
    holes = {(p, h): 1 + p * 4 + h for p in range(5) for h in range(4)}  # five pigeons, four holes
    pigeonhole = [tuple(holes[p, h] for h in range(4)) for p in range(5)]
    pigeonhole += [(-holes[p, h], -holes[q, h]) for h in range(4) for p, q in itertools.combinations(range(5), 2)]
    assert count_by_orbits(CNF(20, tuple(pigeonhole)))[0] == 0


def test_social_golfers_one_orbit():
    # the 9 golfers' 4 weeks are the affine plane of order 3 (unique, 432 automorphisms, one resolution):
    # 9!/432 = 840 labelled planes, times 4! orders of the weeks and 3!^4 labellings of the groups
    count, found = count_by_orbits(social_golfers(weeks=4))
    assert count == 840 * 24 * 6**4 == 26_127_360
    assert (found["group_order"], found["orbits"]) == (str(362_880 * 24 * 6**4), 1)


def test_auto_counts_the_golfers_by_orbits():
    # Ganak alone ran out of 60 s on this CNF; enumeration, tables and the SDD routes give up
    result = count_models(social_golfers(weeks=4), time_limit_s=120)
    assert (result.value, result.method, result.exact) == (26_127_360, "orbits", True)


def test_a_group_order_of_thousands_of_digits():
    # 2,000 task variables, one clause over the first three: 7 of its 8 assignments, the rest free
    # (the group, 3! x 2^1997 x 1997!, has 6,328 digits: past Python's default for reading integers)
    assert count_by_orbits(CNF(2000, ((1, 2, 3),)))[0] == 7 * 2**1997


def test_gives_up_without_a_symmetry_or_with_too_many_orbits():
    chain = CNF(4, ((1,), (-1, 2), (-2, 3, 4), (-3, 4)))
    with pytest.raises(NoUsefulSymmetry, match="no symmetry"):
        count_by_orbits(chain)
    with pytest.raises(NoUsefulSymmetry, match="too many orbits"):
        count_by_orbits(latin_squares(5), max_representatives=10)
