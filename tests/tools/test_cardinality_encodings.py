"""Every PySAT cardinality encoding, and CPMpy's, counted exactly by structure recovery, alone and overlapped.

Expected counts never come from the code under test: each is the number of task assignments, listed in
Python, whose count of true literals meets the bound and which satisfy the extra clause (brute force over
at most 2^12 rows), or a closed form. An encoding that is not recovered must still be counted exactly by
``auto`` or reported inexact.
"""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.card import CardEnc, EncType

from autonesy.tools import sandbox, structure_recovery
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models
from autonesy.tools.formats import cpmpy_program
from autonesy.tools.structure_recovery import NotRecoverable, count_by_recovery

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from held_out_counts import subsets_meeting  # noqa: E402

ENCODINGS = {
    name: getattr(EncType, name)
    for name in (
        "pairwise",
        "seqcounter",
        "sortnetwrk",
        "cardnetwrk",
        "bitwise",
        "ladder",
        "totalizer",
        "mtotalizer",
        "kmtotalizer",
    )
}
AT_MOST_ONE_ONLY = {"pairwise", "bitwise", "ladder"}  # PySAT refuses them any other bound
NOT_BY_CIRCUITS = {"mtotalizer", "kmtotalizer"}  # digits modulo p: no function of the counted literals
BOUNDS = {"atmost": lambda count, k: count <= k, "atleast": lambda count, k: count >= k, "equals": int.__eq__}


def test_every_encoding_pysat_offers_is_listed() -> None:
    """A new PySAT encoding must be added above (``native`` needs a solver that reads cardinality constraints)."""
    offered = {name for name in vars(EncType) if not name.startswith("_")}
    assert offered == set(ENCODINGS) | {"native"}


def encoded(kind: str, literals: list[int], k: int, encoding: str, top: int) -> tuple[list[tuple[int, ...]], int]:
    make = getattr(CardEnc, kind)
    formula = make(lits=literals, bound=k, top_id=top, encoding=ENCODINGS[encoding])
    return [tuple(clause) for clause in formula.clauses], max(formula.nv, top)


def expected(n: int, literals: list[int], kind: str, k: int, extra: tuple[int, ...]) -> int:
    """Rows of the n task variables whose count of true ``literals`` meets the bound and that satisfy ``extra``."""
    total = 0
    for row in itertools.product((False, True), repeat=n):
        count = sum(row[abs(lit) - 1] == (lit > 0) for lit in literals)
        clause = not extra or any(row[abs(lit) - 1] == (lit > 0) for lit in extra)
        total += BOUNDS[kind](count, k) and clause
    return total


@st.composite
def constraints(draw, encodings: int = 1, max_n: int = 10):
    """A bound on the count of random literals of n ≤ ``max_n`` variables, in ``encodings`` random encodings
    that accept the bound, and a random clause over the task variables."""
    n = draw(st.integers(2, max_n))
    chosen = draw(st.lists(st.integers(1, n), min_size=2, max_size=n, unique=True))
    literals = [var if draw(st.booleans()) else -var for var in chosen]
    kind = draw(st.sampled_from(sorted(BOUNDS)))
    k = draw(st.integers(1, len(literals) - 1))
    names = sorted(name for name in ENCODINGS if k == 1 or name not in AT_MOST_ONE_ONLY)
    chosen_encodings = draw(st.lists(st.sampled_from(names), min_size=encodings, max_size=encodings, unique=True))
    extra = tuple(draw(st.lists(st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v))), max_size=3)))
    return n, literals, kind, k, chosen_encodings, extra


def formula(n: int, literals: list[int], kind: str, k: int, encodings: list[str], extra: tuple[int, ...]) -> CNF:
    clauses, top = [], n
    for encoding in encodings:
        more, top = encoded(kind, literals, k, encoding, top)
        clauses += more
    return CNF(n, tuple(clauses) + ((extra,) if extra else ()), top)


def recovered(cnf: CNF, case_split: bool) -> int:
    """``count_by_recovery``, with blocks decided row by row or (``case_split`` False) by circuits alone."""
    with pytest.MonkeyPatch.context() as patch:
        if not case_split:
            patch.setattr(structure_recovery, "MAX_CASE_SPLIT_VARS", 0)
        return count_by_recovery(cnf)


@settings(max_examples=300, deadline=None)
@given(constraints(), st.booleans())
def test_each_encoding_is_recovered_exactly(case, case_split: bool) -> None:
    n, literals, kind, k, encodings, extra = case
    try:
        counted = recovered(formula(*case), case_split)
    except NotRecoverable:
        assert not case_split and set(encodings) & NOT_BY_CIRCUITS
        return
    assert counted == expected(n, literals, kind, k, extra)


@settings(max_examples=200, deadline=None)
@given(constraints(encodings=2), st.booleans())
def test_two_encodings_of_one_constraint_and_a_clause_are_recovered_exactly(case, case_split: bool) -> None:
    n, literals, kind, k, encodings, extra = case
    try:
        counted = recovered(formula(*case), case_split)
    except NotRecoverable:
        assert not case_split and set(encodings) & NOT_BY_CIRCUITS
        return
    assert counted == expected(n, literals, kind, k, extra)


@pytest.mark.parametrize("n", [50, pytest.param(200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("encoding", sorted(set(ENCODINGS) - AT_MOST_ONE_ONLY - NOT_BY_CIRCUITS))
def test_every_circuit_encoding_of_half_of_n_overlapping_a_sequential_counter(encoding: str, n: int) -> None:
    """Exactly n/2 of n twice and x1 ∨ x2: C(n, n/2) − C(n − 2, n/2), no row listed."""
    cnf = formula(n, list(range(1, n + 1)), "equals", n // 2, ["seqcounter", encoding], (1, 2))
    assert count_by_recovery(cnf) == math.comb(n, n // 2) - math.comb(n - 2, n // 2)


@pytest.mark.parametrize("encoding", sorted(set(ENCODINGS) - AT_MOST_ONE_ONLY))
def test_half_of_twelve_in_each_encoding_overlapping_a_sequential_counter(encoding: str) -> None:
    """Exactly 6 of 12 twice and x1 ∨ x2: C(12, 6) − C(10, 6) (the rows with x1 = x2 = 0 removed)."""
    cnf = formula(12, list(range(1, 13)), "equals", 6, ["seqcounter", encoding], (1, 2))
    assert count_by_recovery(cnf) == math.comb(12, 6) - math.comb(10, 6)


@pytest.mark.parametrize("encoding", ["mtotalizer", "kmtotalizer"])
def test_a_modulo_totalizer_past_the_case_split_is_refused_and_auto_stays_exact(encoding: str) -> None:
    """At most 9 of 18 in a modulo totalizer: no circuit proves its projection and 2^18 rows are past the
    case split, so recovery refuses it; ``auto`` counts it another way, and an exact answer is the sum of
    C(18, i) for i ≤ 9."""
    cnf = formula(18, list(range(1, 19)), "atmost", 9, [encoding], ())
    with pytest.raises(NotRecoverable):
        count_by_recovery(cnf)
    result = count_models(cnf, "auto", time_limit_s=30)
    if result.exact:
        assert result.value == sum(math.comb(18, i) for i in range(10))


@pytest.fixture(scope="module")
def cpmpy_sandbox():
    saved, sandbox.PREWARM_SPARES = sandbox.PREWARM_SPARES, 1
    cpmpy_program.warm_up()
    yield
    sandbox.PREWARM_SPARES = saved
    sandbox.shutdown()


NAMES = [f"x{i}" for i in range(1, 21)]  # past the case split: recovered by circuits or not at all
WEIGHTS = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]


def weighted(bound_holds) -> int:
    """Subsets of the 20 items whose weight meets the bound."""
    return subsets_meeting(WEIGHTS, bound_holds)


CPMPY_PROGRAMS = {  # CPMpy's own encodings (pindakaas), each with its count
    "at most 4": ("constraints = [cp.sum(list(VARS.values())) <= 4]", sum(math.comb(20, i) for i in range(5))),
    "exactly 10": ("constraints = [cp.sum(list(VARS.values())) == 10]", math.comb(20, 10)),
    "at least 3 of the first 7, x20 or x19": (
        "constraints = [cp.sum([x1, x2, x3, x4, x5, x6, x7]) >= 3, x20 | x19]",
        sum(math.comb(7, i) for i in range(3, 8)) * 3 * 2**11,
    ),
    "weighted at most 30": (
        f"constraints = [cp.sum([w * x for w, x in zip({WEIGHTS}, VARS.values())]) <= 30]",
        weighted(lambda total: total <= 30),
    ),
    "weighted exactly 40": (
        f"constraints = [cp.sum([w * x for w, x in zip({WEIGHTS}, VARS.values())]) == 40]",
        weighted(lambda total: total == 40),
    ),
}


@pytest.mark.parametrize("name", sorted(CPMPY_PROGRAMS))
def test_cpmpy_encodings_are_recovered_exactly(cpmpy_sandbox, name: str) -> None:
    source, count = CPMPY_PROGRAMS[name]
    cnf = cpmpy_program.parse(source, NAMES, wall_seconds=30.0)
    assert count_by_recovery(cnf) == count


def test_cpmpy_exactly_ten_overlapping_a_pysat_totalizer(cpmpy_sandbox) -> None:
    """CPMpy's exactly-10 of 20 conjoined with PySAT's totalizer of the same and x1 ∨ x2: C(20, 10) − C(18, 10)."""
    truth = cpmpy_program.parse(CPMPY_PROGRAMS["exactly 10"][0], NAMES, wall_seconds=30.0)
    answer = formula(20, list(range(1, 21)), "equals", 10, ["totalizer"], (1, 2))
    assert count_by_recovery(truth.conjoin(answer)) == math.comb(20, 10) - math.comb(18, 10)
