"""Every PySAT pseudo-Boolean encoding counted exactly by structure recovery, alone and overlapped.

Expected counts never come from the code under test: each is the number of subsets of the items whose
weight meets the bound, by the held-out benchmark's dynamic programme over sums (or, with an extra clause,
by listing the rows here), as scoring needs when an answer writes a weighted sum another way than the truth.
The formulas are the benchmark's too (``weighted_sum``).
"""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.pb import EncType

from autonesy.tools import structure_recovery
from autonesy.tools.cnf import CNF
from autonesy.tools.structure_recovery import NotRecoverable, count_by_recovery

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from held_out_counts import subsets_meeting, weighted_sum  # noqa: E402

ENCODINGS = ("adder", "bdd", "binmerge", "mixedradix", "seqcounter", "sortnetwrk", "totalizer", "watchdog")
BOUNDS = {"atmost": int.__le__, "atleast": int.__ge__, "equals": int.__eq__}


def test_every_encoding_pysat_offers_is_listed() -> None:
    """A new PySAT PB encoding must be added above (``best`` picks one of them; ``native`` needs a solver
    that reads PB constraints)."""
    offered = {name for name in vars(EncType) if not name.startswith("_")}
    assert offered == set(ENCODINGS) | {"best", "native"}


def encoded(kind: str, weights: list[int], bound: int, encodings: list[str], extra: tuple[int, ...] = ()) -> CNF:
    """``weighted_sum`` in each of ``encodings``, and ``extra`` as a clause."""
    cnf = weighted_sum(kind, weights, bound, encodings)
    return CNF(cnf.num_task_vars, cnf.clauses + ((extra,) if extra else ()), cnf.num_vars)


def rows_meeting(weights: list[int], kind: str, bound: int, extra: tuple[int, ...]) -> int:
    """The rows of the items' variables whose weight meets the bound and that satisfy ``extra``, listed."""
    total = 0
    for row in itertools.product((False, True), repeat=len(weights)):
        weight = sum(w for w, chosen in zip(weights, row) if chosen)
        clause = not extra or any(row[abs(lit) - 1] == (lit > 0) for lit in extra)
        total += BOUNDS[kind](weight, bound) and clause
    return total


@st.composite
def weighted_constraints(draw):
    """A weighted sum of n ≤ 9 items against a bound, in one encoding or two overlapping, and a random clause."""
    n = draw(st.integers(2, 9))
    weights = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    kind = draw(st.sampled_from(sorted(BOUNDS)))
    bound = draw(st.integers(1, sum(weights) - 1))
    chosen = draw(st.lists(st.sampled_from(ENCODINGS), min_size=1, max_size=2))
    extra = tuple(draw(st.lists(st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v))), max_size=3)))
    return weights, kind, bound, chosen, extra


def recovered_or_refused(cnf: CNF, case_split: bool) -> int | None:
    """``count_by_recovery``, with blocks decided row by row or (``case_split`` False) by circuits alone, where
    a refusal (None) is allowed: a block of crossed circuits (a sorting network's exactly-k) may have no proof."""
    with pytest.MonkeyPatch.context() as patch:
        if not case_split:
            patch.setattr(structure_recovery, "MAX_CASE_SPLIT_VARS", 0)
        try:
            return count_by_recovery(cnf, 60)
        except NotRecoverable:
            assert not case_split, "a block of at most 16 visible variables is always decided row by row"
            return None


@settings(max_examples=300, deadline=None)
@given(weighted_constraints(), st.booleans())
def test_pb_encodings_alone_or_overlapped_with_a_clause_are_recovered_exactly(case, case_split: bool) -> None:
    weights, kind, bound, encodings, extra = case
    counted = recovered_or_refused(encoded(kind, weights, bound, encodings, extra), case_split)
    assert counted in (None, rows_meeting(weights, kind, bound, extra))


def _items(n: int, seed: int) -> tuple[list[int], int]:
    chooser = random.Random(seed)
    weights = [chooser.randint(1, 20) for _ in range(n)]
    return weights, sum(weights) // 3


def test_an_adder_past_the_sat_checks_reach_is_proved_by_its_definitions(monkeypatch) -> None:
    """A weighted at-most over 30 items as binary adders, read as a circuit (the adder reading off): every sum
    and carry bit is defined both ways, so the block's projection is read without the SAT call (which ran
    past 100 s on it)."""
    monkeypatch.setattr(structure_recovery, "read_adders", lambda *args: None)
    weights, bound = _items(30, 1)
    assert count_by_recovery(encoded("atmost", weights, bound, ["adder"]), 60) == subsets_meeting(
        weights, lambda total: total <= bound
    )


@pytest.mark.parametrize("encodings", [["adder"], ["seqcounter", "adder"]])
def test_an_adder_of_sixty_items_is_read_as_its_weighted_sum(encodings: list[str]) -> None:
    """The held-out weighted at-most of 60 items as adders, alone and overlapping a sequential counter: as a
    circuit past two million SDD nodes and Ganak's 60 s; read by the adder identity in seconds."""
    weights, bound = _items(60, 1)
    assert count_by_recovery(encoded("atmost", weights, bound, encodings), 60) == subsets_meeting(
        weights, lambda total: total <= bound
    )


def test_a_bdd_with_merged_nodes_is_read_as_a_fixpoint() -> None:
    """A weighted at-most over 60 items as a BDD (14,995 clauses): merged nodes make definitions that read
    each other (``a → b`` and ``b ∧ x → a``), solved as a least fixpoint; the union of the other readings
    outgrew 2,000,000 SDD nodes."""
    weights, bound = _items(60, 1)
    assert count_by_recovery(encoded("atmost", weights, bound, ["bdd"]), 60) == subsets_meeting(
        weights, lambda total: total <= bound
    )


def test_a_cyclic_definition_is_its_least_fixpoint_not_any_fixpoint() -> None:
    """x1 → a, a → b, b ∧ x2 → a, and not (a ∧ x3): a and b read each other. With x1 false, a = b = true is
    also a fixpoint, but the clauses allow a = b = false, so the only excluded rows are x1 ∧ x3 (listed: 6 of
    8 rows). With the SAT check and the row listing off: proved by circuits alone."""
    cnf = CNF(3, ((-1, 4), (-4, 5), (-5, -2, 4), (-4, -3)), 5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(structure_recovery, "MAX_CASE_SPLIT_VARS", 0)
        patch.setattr(structure_recovery, "MAX_SAT_CHECK_CLAUSES", 0)
        assert count_by_recovery(cnf) == 6


def test_an_auxiliary_defined_both_ways_is_proved_by_circuits() -> None:
    """¬x1 ∧ ¬x2 → a, ¬x1 ∧ x2 → ¬a, x1 ∧ ¬x2 → ¬a, x1 ∧ x2 → a: a is x1 ↔ x2, forced either way, so every
    row of x1, x2 extends (4 of 4) and x1 ∨ a drops the row x1 = 0, x2 = 1 (3). With the SAT check and the row
    listing off: proved by circuits alone."""
    parity = ((1, 2, 3), (1, -2, -3), (-1, 2, -3), (-1, -2, 3))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(structure_recovery, "MAX_CASE_SPLIT_VARS", 0)
        patch.setattr(structure_recovery, "MAX_SAT_CHECK_CLAUSES", 0)
        assert count_by_recovery(CNF(2, parity, 3)) == 4
        assert count_by_recovery(CNF(2, parity + ((1, 3),), 3)) == 3


def test_a_long_chain_closed_into_a_loop_is_its_least_fixpoint() -> None:
    """Auxiliaries a1..a300 with a(i) → a(i−1), x1 ∧ a1 → a300, x2 → a300 and not (a1 ∧ x3): one loop whose
    definitions each read the next. x2 forces a300 and so a1, and then x3 false: 4 rows of x1, x4; without
    x2 every auxiliary may be false: 8 rows. 12 of 16."""
    chain = list(range(5, 305))
    clauses = [(-chain[i], chain[i - 1]) for i in range(1, len(chain))]
    clauses += [(-chain[0], -1, chain[-1]), (-2, chain[-1]), (-chain[0], -3)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(structure_recovery, "MAX_CASE_SPLIT_VARS", 0)
        patch.setattr(structure_recovery, "MAX_SAT_CHECK_CLAUSES", 0)
        assert count_by_recovery(CNF(4, tuple(clauses), 304)) == 12
