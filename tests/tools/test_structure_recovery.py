"""Structure recovery against brute force, closed forms, published counts and dynamic programmes written here.

Expected values never come from the code under test: small formulas are listed by SAT enumeration
(tests/bruteforce.py), larger ones have closed forms (C(n, k) - C(n - 2, k) for exactly-k with
x1 ∨ x2), published counts (288 and 28,200,960 Sudokus of order 4 and 6, 161,280 Latin squares of
order 5) or a dynamic programme over the weights written in the test.
"""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.card import CardEnc, EncType
from pysat.pb import EncType as PBEncType
from pysat.pb import PBEnc
from pysat.solvers import Solver

from autonesy.tools import structure_recovery
from autonesy.tools.cnf import CNF
from autonesy.tools.structure_recovery import NotRecoverable, auxiliary_blocks, count_by_recovery, recover_blocks
from tests.bruteforce import sat_models as listed_models


def sat_models(cnf: CNF, n: int) -> list[tuple[int, ...]]:
    """The task assignments that extend to a model: each of the 2^n tried by one SAT call (brute force)."""
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        for var in range(1, cnf.num_vars + 1):
            solver.add_clause([var, -var])
        rows = itertools.product((0, 1), repeat=n)
        return [row for row in rows if solver.solve([v if bit else -v for v, bit in enumerate(row, start=1)])]


CARD_ENCODINGS = {  # PySAT's encodings with auxiliaries, each a different circuit
    "seqcounter": EncType.seqcounter,
    "totalizer": EncType.totalizer,
    "sortnetwrk": EncType.sortnetwrk,
    "cardnetwrk": EncType.cardnetwrk,
}


def card(kind: str, literals: list[int], k: int, encoding: int, top: int) -> tuple[list[tuple[int, ...]], int]:
    make = {"atmost": CardEnc.atmost, "atleast": CardEnc.atleast, "equals": CardEnc.equals}[kind]
    formula = make(lits=literals, bound=k, top_id=top, encoding=encoding)
    return [tuple(c) for c in formula.clauses], max(formula.nv, top)


def exactly_k_overlap(n: int, k: int, first: int, second: int) -> CNF:
    """Exactly k of x1..xn in one encoding, again in another, and x1 ∨ x2: what scoring counts."""
    truth, top = card("equals", list(range(1, n + 1)), k, first, n)
    answer, top = card("equals", list(range(1, n + 1)), k, second, top)
    return CNF(n, tuple(truth + answer + [(1, 2)]), top)


@pytest.mark.parametrize("first,second", [("seqcounter", "totalizer"), ("sortnetwrk", "cardnetwrk")])
def test_exactly_k_overlap_of_two_encodings_against_brute_force(first: str, second: str) -> None:
    for n, k in ((5, 2), (7, 3), (8, 1)):
        cnf = exactly_k_overlap(n, k, CARD_ENCODINGS[first], CARD_ENCODINGS[second])
        assert count_by_recovery(cnf) == len(sat_models(cnf, n))


def test_exactly_25_of_50_overlap_against_the_closed_form() -> None:
    cnf = exactly_k_overlap(50, 25, EncType.seqcounter, EncType.totalizer)
    assert count_by_recovery(cnf) == math.comb(50, 25) - math.comb(48, 25)


@pytest.mark.slow
@pytest.mark.parametrize("n", [100, 200])
@pytest.mark.parametrize("second", [EncType.totalizer, EncType.cardnetwrk])
def test_exactly_half_of_n_overlap_against_the_closed_form(n: int, second: int) -> None:
    cnf = exactly_k_overlap(n, n // 2, EncType.seqcounter, second)
    assert count_by_recovery(cnf) == math.comb(n, n // 2) - math.comb(n - 2, n // 2)


@st.composite
def encoded_constraints(draw):
    """A random cardinality constraint on random literals of n ≤ 6 variables in a random encoding, and a
    random clause over the task variables beside it."""
    n = draw(st.integers(2, 6))
    chosen = draw(st.lists(st.integers(1, n), min_size=2, max_size=n, unique=True))
    literals = [var if draw(st.booleans()) else -var for var in chosen]
    kind = draw(st.sampled_from(["atmost", "atleast", "equals"]))
    k = draw(st.integers(0 if kind == "atmost" else 1, len(literals) - 1))
    encoding = draw(st.sampled_from(sorted(CARD_ENCODINGS)))
    clauses, top = card(kind, literals, k, CARD_ENCODINGS[encoding], n)
    extra = draw(st.lists(st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v))), min_size=1, max_size=3))
    return CNF(n, tuple(clauses) + (tuple(extra),), top), encoding


@settings(max_examples=120, deadline=None)
@given(encoded_constraints())
def test_recovered_counts_match_brute_force_in_every_encoding(case: tuple[CNF, str]) -> None:
    cnf, _ = case
    assert count_by_recovery(cnf) == len(sat_models(cnf, cnf.num_task_vars))


@settings(max_examples=120, deadline=None)
@given(encoded_constraints(), st.data())
def test_a_forged_block_is_never_counted_wrong(case: tuple[CNF, str], data: st.DataObject) -> None:
    """A counter with one clause dropped or one literal flipped looks like a counter and is not one: it is
    either recovered as what it is (its brute-force count) or refused."""
    cnf, _ = case
    index = data.draw(st.integers(0, len(cnf.clauses) - 1))
    clause = list(cnf.clauses[index])
    if data.draw(st.booleans()):
        forged = cnf.clauses[:index] + cnf.clauses[index + 1 :]
    else:
        position = data.draw(st.integers(0, len(clause) - 1))
        clause[position] = -clause[position]
        forged = cnf.clauses[:index] + (tuple(clause),) + cnf.clauses[index + 1 :]
    forgery = CNF(cnf.num_task_vars, forged, cnf.num_vars)
    try:
        counted = count_by_recovery(forgery)
    except NotRecoverable:
        return
    assert counted == len(sat_models(forgery, cnf.num_task_vars))


def test_a_block_that_is_not_a_function_of_its_inputs_is_refused_or_exact() -> None:
    """x1 ⊕ a ⊕ x2 = 1 through two auxiliaries that choose freely: no circuit reads it as a least model."""
    cnf = CNF(2, ((1, 3, 4), (-1, -3, 4), (1, -3, -4), (-1, 3, -4), (2, 3), (-2, -3)), 4)
    try:
        assert count_by_recovery(cnf) == len(sat_models(cnf, 2))
    except NotRecoverable:
        pass


def test_a_tautology_does_not_define_an_auxiliary() -> None:
    """(a ∨ ¬a ∨ x1) forces nothing; read as "a = ¬x1" it would make (¬a ∨ x2) cut x1 = 0, x2 = 0 away."""
    cnf = CNF(2, ((3, -3, 1), (-3, 2)), 3)
    assert count_by_recovery(cnf) == len(sat_models(cnf, 2)) == 4


def test_blocks_split_at_auxiliaries_and_keep_task_clauses_apart() -> None:
    cnf = CNF(3, ((1, 2), (-1, 4), (-4, 5), (-2, -5), (3, 6)), 6)
    plain, blocks = auxiliary_blocks(cnf)
    assert plain == [(1, 2)]
    assert sorted(block.visible for block in blocks) == [(1, 2), (3,)]


def test_an_at_most_one_by_a_sequential_counter_is_read_as_a_count_and_pairwise_clauses() -> None:
    clauses, top = card("atmost", [1, 2, 3, 4], 1, EncType.seqcounter, 4)
    _, _, recovered, refused = recover_blocks(CNF(4, tuple(clauses), top))
    assert not refused and len(recovered) == 1
    count = recovered[0].count
    assert count is not None and count.literals == (1, 2, 3, 4) and count.allowed == (0, 1)
    assert sorted(recovered[0].clauses_without_auxiliaries() or []) == sorted(
        itertools.combinations([-1, -2, -3, -4], 2)
    )


def sudoku(n: int, rows: int, columns: int, truth: int, answer: int) -> CNF:
    """A one-hot Sudoku of order n (boxes rows × columns): every cell, row, column and box value exactly once,
    stated twice, with the at-most-ones in two encodings (``truth``'s and ``answer``'s)."""

    def var(r: int, c: int, d: int) -> int:
        return r * n * n + c * n + d + 1

    groups = [[var(r, c, d) for d in range(n)] for r in range(n) for c in range(n)]
    groups += [[var(r, c, d) for c in range(n)] for r in range(n) for d in range(n)]
    groups += [[var(r, c, d) for r in range(n)] for c in range(n) for d in range(n)]
    for top_row in range(0, n, rows):
        for left in range(0, n, columns):
            for d in range(n):
                cells = itertools.product(range(top_row, top_row + rows), range(left, left + columns))
                groups.append([var(r, c, d) for r, c in cells])
    clauses: list[tuple[int, ...]] = []
    top = n**3
    for encoding in (truth, answer):
        for group in groups:
            clauses.append(tuple(group))
            encoded, top = card("atmost", group, 1, encoding, top)
            clauses.extend(encoded)
    return CNF(n**3, tuple(clauses), top)


def test_sudoku_4x4_under_two_at_most_one_encodings_has_288_solutions() -> None:
    assert count_by_recovery(sudoku(4, 2, 2, EncType.pairwise, EncType.seqcounter)) == 288
    assert count_by_recovery(sudoku(4, 2, 2, EncType.seqcounter, EncType.totalizer)) == 288


@pytest.mark.slow
def test_sudoku_6x6_under_two_at_most_one_encodings_has_28200960_solutions() -> None:
    assert count_by_recovery(sudoku(6, 2, 3, EncType.pairwise, EncType.seqcounter)) == 28_200_960


def latin(n: int, rows: int, encoding: int = EncType.seqcounter) -> CNF:
    """``rows`` rows of n cells, one-hot over n symbols, each cell exactly one symbol by pairwise clauses and
    each symbol at most once per row and (with more than one row) per column in ``encoding``: a Latin
    square when ``rows`` is n, all-different over n when it is 1."""
    symbols = n

    def var(r: int, c: int, s: int) -> int:
        return (r * n + c) * symbols + s + 1

    clauses: list[tuple[int, ...]] = []
    top = rows * n * symbols
    for r, c in itertools.product(range(rows), range(n)):
        cell = [var(r, c, s) for s in range(symbols)]
        clauses.append(tuple(cell))
        clauses.extend((-a, -b) for a, b in itertools.combinations(cell, 2))
    lines = [[var(r, c, s) for c in range(n)] for r in range(rows) for s in range(symbols)]
    if rows > 1:
        lines += [[var(r, c, s) for r in range(rows)] for c in range(n) for s in range(symbols)]
    for line in lines:
        encoded, top = card("atmost", line, 1, encoding, top)
        clauses.extend(encoded)
    return CNF(rows * n * symbols, tuple(clauses), top)


def test_all_different_over_12_has_12_factorial_assignments() -> None:
    assert count_by_recovery(latin(12, 1, EncType.totalizer)) == math.factorial(12)


def test_latin_squares_of_order_5() -> None:
    assert count_by_recovery(latin(5, 5, EncType.totalizer)) == 161_280


def test_latin_squares_of_order_4_against_brute_force_listing() -> None:
    """576 = 4! · 3! · 4 by hand (first row any permutation, then 24 completions); listed by SAT here."""
    cnf = latin(4, 4, EncType.cardnetwrk)
    assert count_by_recovery(cnf) == len(listed_models(cnf, cnf.num_task_vars)) == 576


def weighted_at_most_count(weights: list[int], bound: int, forced: tuple[int, ...] = ()) -> int:
    """Subsets of the items (``forced`` ones always in) whose weights sum to at most ``bound``: a DP over sums."""
    ways = {0: 1}
    for index, weight in enumerate(weights, start=1):
        following: dict[int, int] = {}
        for total, count in ways.items():
            if index not in forced:
                following[total] = following.get(total, 0) + count
            if total + weight <= bound:
                following[total + weight] = following.get(total + weight, 0) + count
        ways = following
    return sum(ways.values())


def test_weighted_at_most_k_over_60_items_in_two_encodings_against_a_dp() -> None:
    rng = random.Random(7)
    weights = [rng.randint(1, 9) for _ in range(60)]
    bound = sum(weights) // 3
    items = list(range(1, 61))
    truth = PBEnc.atmost(lits=items, weights=weights, bound=bound, top_id=60, encoding=PBEncType.seqcounter)
    answer = PBEnc.atmost(lits=items, weights=weights, bound=bound, top_id=truth.nv, encoding=PBEncType.binmerge)
    clauses = tuple(map(tuple, truth.clauses + answer.clauses)) + ((1,),)
    cnf = CNF(60, clauses, answer.nv)
    assert count_by_recovery(cnf) == weighted_at_most_count(weights, bound, forced=(1,))


def test_an_unsatisfiable_block_counts_nothing() -> None:
    """Auxiliary 3 must be true, and then x1 and ¬x1: no model at all. Its projection is false, which is no
    count of its variables (an empty set of allowed counts was once read as "exactly one": 2 models)."""
    cnf = CNF(2, ((3,), (-3, 1), (-3, -1), (1, 2, -3)), 3)
    assert listed_models(cnf, 2) == set() and count_by_recovery(cnf) == 0


def test_structure_is_announced_once_every_block_is_recovered() -> None:
    """The race's callback fires once for two recovered encodings, never for a block that is refused."""
    calls: list[None] = []
    recoverable = exactly_k_overlap(6, 3, EncType.seqcounter, EncType.totalizer)
    assert count_by_recovery(recoverable, on_structure=lambda: calls.append(None)) == len(sat_models(recoverable, 6))
    assert len(calls) == 1
    clauses, top = card("atmost", list(range(1, 19)), 9, EncType.mtotalizer, 18)  # past the case split
    with pytest.raises(NotRecoverable):
        count_by_recovery(CNF(18, tuple(clauses), top), on_structure=lambda: calls.append(None))
    assert len(calls) == 1


def adder_at_most(weights: list[int], bound: int) -> CNF:
    formula = PBEnc.atmost(
        lits=list(range(1, len(weights) + 1)), weights=weights, bound=bound, encoding=PBEncType.adder
    )
    return CNF(len(weights), tuple(tuple(c) for c in formula.clauses), max(formula.nv, len(weights)))


@pytest.mark.parametrize(
    "cnf,adders_read,large,early",
    [
        (exactly_k_overlap(6, 3, EncType.seqcounter, EncType.totalizer), True, 0, True),  # all Horn
        (adder_at_most([3, 5, 6, 2, 7], 11), True, 0, True),  # read as a weighted sum
        (adder_at_most([3, 5, 6, 2, 7], 11), False, 0, False),  # as a circuit: its bits need proving
        (exactly_k_overlap(6, 3, EncType.seqcounter, EncType.totalizer), True, None, False),  # small blocks
    ],
)
def test_structure_is_announced_before_the_projections_when_no_large_block_needs_a_search(
    monkeypatch, cnf: CNF, adders_read: bool, large: int | None, early: bool
) -> None:
    """Building the projections of large blocks is most of recovery's work (6 s of CPU for a weighted at-most
    of 60 items as a BDD), which the race gives a core to a racer that has announced: so recovery announces
    before it when every block has a reading that needs no search and is large (``large``: the threshold, or
    None for the default, which these blocks are under), and after it otherwise."""
    if large is not None:
        monkeypatch.setattr(structure_recovery, "EARLY_ANNOUNCE_CLAUSES", large)
    events: list[str] = []
    built = structure_recovery._proved_projection
    monkeypatch.setattr(structure_recovery, "_proved_projection", lambda *args: events.append("built") or built(*args))
    if not adders_read:
        monkeypatch.setattr(structure_recovery, "read_adders", lambda *args: None)
    assert count_by_recovery(cnf, on_structure=lambda: events.append("announced")) == len(
        sat_models(cnf, cnf.num_task_vars)
    )
    assert events.count("announced") == 1
    assert (events[0] == "announced") == early


def test_blocks_of_one_binary_at_most_one_are_read_together_as_one(monkeypatch) -> None:
    """A bitwise at-most-one makes a block per bit, each a cut, not a count: read together, the blocks over the
    same items are the at-most-one, and an all-different of 6 (6! = 720) goes to the one-hot programme, never
    to the SDD conjunction (18 s at 10 items)."""
    n = 6
    clauses: list[tuple[int, ...]] = [tuple(i * n + v + 1 for v in range(n)) for i in range(n)]  # each item a value
    top = n * n
    groups = [[i * n + v + 1 for v in range(n)] for i in range(n)] + [
        [i * n + v + 1 for i in range(n)] for v in range(n)
    ]
    for group in groups:
        more, top = card("atmost", group, 1, EncType.bitwise, top)
        clauses += more
    cnf = CNF(n * n, tuple(clauses), top)
    monkeypatch.setattr(structure_recovery, "conjoined", lambda *args: pytest.fail("conjoined the SDDs"))
    assert count_by_recovery(cnf) == math.factorial(n)
