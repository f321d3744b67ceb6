"""Counting by orbits against brute force and against counts known from combinatorics."""

import itertools
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models, sat_accepts
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models
from autonesy.tools.literal_count import LiteralCount, with_literal_counts
from autonesy.tools.orbit_count import NoUsefulSymmetry, count_by_orbits

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scaling import latin_squares, social_golfers  # noqa: E402


@st.composite
def symmetric_cnfs(draw, task_signs: bool = True, task_fixed: bool = False):
    """A random CNF closed under one or two random signed permutations (task variables among themselves,
    auxiliaries among themselves; the task variables' signs kept unless ``task_signs``; the task
    variables fixed, only auxiliaries moved, when ``task_fixed``): its clause set then has those
    symmetries by construction."""
    cnf = draw(cnfs(max_task_vars=6 - 2 * task_fixed, max_aux=3 + 2 * task_fixed, max_clauses=5))
    n, total = cnf.num_task_vars, cnf.num_vars

    def signed_permutation() -> dict[int, int]:
        task = list(range(1, n + 1)) if task_fixed else draw(st.permutations(range(1, n + 1)))
        aux = draw(st.permutations(range(n + 1, total + 1)))
        signs = draw(st.lists(st.sampled_from((1, -1)), min_size=total, max_size=total))
        if not task_signs or task_fixed:
            signs[:n] = [1] * n
        return {v: image * sign for v, image, sign in zip(range(1, total + 1), [*task, *aux], signs)}

    generators = [signed_permutation() for _ in range(draw(st.integers(1, 2)))]
    moved = range(n + 1, total + 1) if task_fixed else range(1, n + 1)
    assume(any(abs(g[v]) != v or g[v] < 0 for g in generators for v in moved))
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


@settings(max_examples=250, deadline=None)
@given(symmetric_cnfs(task_fixed=True))
def test_symmetries_of_the_auxiliaries_alone_keep_every_projected_model(cnf):
    # each projected model's extensions are closed under the symmetries: one per orbit is enough
    try:
        count, found = count_by_orbits(cnf)
    except NoUsefulSymmetry:  # the clauses' symmetries can be trivial (no clause moved by the generators)
        assume(False)
    assert count == len(projected_models(cnf))
    assert found.get("fixing_task_variables") or found["orbits"] <= found["representatives"]


def handshakes(couples: int) -> CNF:
    """Hilary (person 0), her husband Jocelyn (1) and ``couples`` couples (2k, 2k + 1); nobody shakes their
    own or their spouse's hand; everyone but Hilary shook a different number of hands. Task variables: the
    number Hilary shook, one-hot; each person's number equal to the count of their handshakes (guarded)."""
    n = 2 + 2 * couples
    ids: dict[tuple, int] = {}

    def var(*key) -> int:
        return ids.setdefault(key, len(ids) + 1)

    for i in range(n):
        for v in range(n - 1):
            var("x", i, v)
    clauses: list[tuple[int, ...]] = []
    for i in range(n):
        values = [var("x", i, v) for v in range(n - 1)]
        clauses += [tuple(values)] + [(-a, -b) for a, b in itertools.combinations(values, 2)]
        clauses += [(-var("y", i, i),), (-var("y", i, i ^ 1),)]
        clauses += [(-var("y", i, j), var("y", j, i)) for j in range(n) if j != i]
    for a, b in itertools.combinations(range(1, n), 2):
        clauses += [(-var("x", a, v), -var("x", b, v)) for v in range(n - 1)]
    clauses += [tuple(var("x", i, v) for i in range(1, n)) for v in range(n - 1)]  # n - 1 numbers, each taken
    counts = [
        LiteralCount(
            tuple(var("y", i, j) for j in range(n)),
            tuple(range(n - 1)),
            guards=tuple((var("x", i, v), (v,)) for v in range(n - 1)),
        )
        for i in range(n)
    ]
    return with_literal_counts(CNF(n - 1, tuple(clauses), len(ids)), counts)


def hilary_s_handshakes(couples: int) -> set[int]:
    """By listing every handshake graph: Hilary's number in those where the others' numbers all differ."""
    n = 2 + 2 * couples
    pairs = [(i, j) for i, j in itertools.combinations(range(n), 2) if j != i ^ 1]
    found = set()
    for shaken in itertools.product((0, 1), repeat=len(pairs)):
        degree = [0] * n
        for (i, j), s in zip(pairs, shaken):
            degree[i] += s
            degree[j] += s
        if len(set(degree[1:])) == n - 1:
            found.add(degree[0])
    return found


def test_handshakes_among_interchangeable_couples():
    # no symmetry moves Hilary's number (each value is its own guard): the couples' 2^k k! permutations
    # fix every task variable, and breaking them leaves the search one model to find and none to refute
    assert hilary_s_handshakes(2) == {2}
    small = handshakes(2)
    rows = [row for row in itertools.product((0, 1), repeat=small.num_task_vars) if sat_accepts(small, row)]
    assert rows == [(0, 0, 1, 0, 0)]  # Hilary's number one-hot: 2, as the listing found
    assert count_by_orbits(small)[0] == 1
    count, found = count_by_orbits(handshakes(8))  # the puzzle as DCP-Bench states it
    assert (count, found["fixing_task_variables"], found["group_order"]) == (1, True, str(2**8 * 40320))


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


@settings(max_examples=150, deadline=None)
@given(symmetric_cnfs(task_signs=False), st.data())
def test_a_literal_count_over_every_task_variable_keeps_the_symmetry(cnf, data):
    # the count (of the task variables, or that modulo m) is invariant under any permutation of them, so
    # the orbits are those of the clauses; its counter's states are no symmetry of their own
    n = cnf.num_task_vars
    modulus = data.draw(st.none() | st.integers(2, 4))
    allowed = tuple(data.draw(st.lists(st.integers(0, (modulus or n + 1) - 1), min_size=1, max_size=3)))
    counted = with_literal_counts(cnf, [LiteralCount(tuple(range(1, n + 1)), allowed, modulus)])
    expected = {m for m in projected_models(cnf) if (sum(m) % modulus if modulus else sum(m)) in allowed}
    assert {m for m in itertools.product((0, 1), repeat=n) if sat_accepts(counted, m)} == expected
    count, found = count_by_orbits(counted)
    assert count == len(expected) and found.get("literal_counts") == 1


def adjacency(n: int, triangles: bool, edges_even: bool) -> CNF:
    """Graphs on n vertices as an adjacency matrix (task variable i*n + j + 1), stated as a program would:
    the matrix equal to its transpose, no loops, no triangle (over the upper triangle) unless
    ``triangles``, and, when ``edges_even``, every entry counted modulo 4 (each edge twice)."""
    m = [[i * n + j + 1 for j in range(n)] for i in range(n)]
    clauses: list[tuple[int, ...]] = [(-m[i][i],) for i in range(n)]
    clauses += [c for i, j in itertools.combinations(range(n), 2) for c in ((-m[i][j], m[j][i]), (m[i][j], -m[j][i]))]
    if not triangles:
        clauses += [(-m[a][b], -m[a][c], -m[b][c]) for a, b, c in itertools.combinations(range(n), 3)]
    cnf = CNF(n * n, tuple(clauses))
    if edges_even:
        cnf = with_literal_counts(cnf, [LiteralCount(tuple(v for row in m for v in row), (0,), modulus=4)])
    return cnf


def graphs(n: int, keep) -> int:
    """How many labelled graphs on n vertices ``keep`` accepts (given the edge set), by listing them all."""
    pairs = list(itertools.combinations(range(n), 2))
    return sum(keep({p for p, bit in zip(pairs, bits) if bit}) for bits in itertools.product((0, 1), repeat=len(pairs)))


def triangle_free(edges) -> bool:
    return not any({(a, b), (a, c), (b, c)} <= edges for a, b, c in itertools.combinations(range(6), 3))


def test_equal_task_variables_are_merged_and_their_symmetries_found():
    # as written, the triangle clauses name only the upper triangle: no permutation of the vertices maps
    # the clause set onto itself until each entry is merged with its transpose (15 edges and the 6 loops
    # left; the loops, false, are permuted among themselves on their own: 6! x 6!)
    count, found = count_by_orbits(adjacency(6, triangles=False, edges_even=False))
    assert count == graphs(6, triangle_free) == 5_789  # OEIS A006785
    assert found["task_variables"].startswith("21 of 36") and found["group_order"] == str(720 * 720)


def test_an_edge_total_modulo_four_over_the_whole_matrix():
    # each edge is two entries of the matrix: the total is 2|E|, a multiple of 4 when |E| is even
    count, found = count_by_orbits(adjacency(6, triangles=False, edges_even=True))
    assert count == graphs(6, lambda e: triangle_free(e) and len(e) % 2 == 0)
    assert found["literal_counts"] == 1 and found["group_order"] == str(720 * 720)
    assert count_by_orbits(adjacency(5, triangles=True, edges_even=True))[0] == 2**10 // 2


def designs(v: int, b: int, r: int, k: int) -> CNF:
    """(v, b, r, k, 1) incidence matrices: exactly r in each row and k in each column, clause by clause;
    each two rows' scalar product 1, a literal count over Booleans defined equal to the products."""
    x = [[i * b + j + 1 for j in range(b)] for i in range(v)]
    clauses: list[tuple[int, ...]] = []
    for line, ones in [*((row, r) for row in x), *((column, k) for column in zip(*x))]:
        clauses += [tuple(-a for a in s) for s in itertools.combinations(line, ones + 1)]
        clauses += list(itertools.combinations(line, len(line) - ones + 1))
    top, counts = v * b, []
    for r, s in itertools.combinations(range(v), 2):
        products = []
        for j in range(b):
            top += 1
            clauses += [(-top, x[r][j]), (-top, x[s][j]), (top, -x[r][j], -x[s][j])]
            products.append(top)
        counts.append(LiteralCount(tuple(products), (1,)))
    return with_literal_counts(CNF(v * b, tuple(clauses), top), counts)


def test_fano_planes_with_scalar_products_as_literal_counts():
    # (7, 7, 3, 3, 1) designs: 30 Fano planes on 7 labelled points, each in 7! orders of its lines
    count, found = count_by_orbits(designs(7, 7, 3, 3))
    assert count == 30 * 5_040 == 151_200
    assert found["orbits"] == 1 and found["literal_counts"] == 21


@pytest.mark.slow
def test_auto_counts_the_affine_plane_of_order_3_by_orbits():
    # DCP-Bench-Open's BIBD (9, 12, 4, 3, 1): the affine plane AG(2, 3), unique, 432 automorphisms, so
    # 9! 12! / 432 labelled incidence matrices (Ganak and the SDD routes run out of time)
    result = count_models(designs(9, 12, 4, 3), time_limit_s=300)
    assert (result.value, result.method) == (362_880 * 479_001_600 // 432, "orbits")
