"""Adder networks read as weighted sums: the projection read equals the clauses' own, listed by SAT.

Expected projections never come from the code under test: they are every assignment of the task variables
that a SAT solver extends to a model of the clauses (``sat_models``), or the weights the input was written
with. Mutated encodings (a literal flipped, a clause dropped or added) check that a block is read only when
the reading is right: a reading that is wrong on one row fails.
"""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pysat.pb import EncType, PBEnc
from pysdd.sdd import SddManager, SddNode, Vtree

from autonesy.tools.adder_network import AdderReading, allowed_projection, read_adders
from autonesy.tools.cnf import CNF, Clause

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bruteforce import sat_models, satisfies  # noqa: E402

# x1 + x2 = s + 2c (s = 3, c = 4), and "no carry": at most one of x1 and x2
HALF_ADDER_AT_MOST_ONE: list[Clause] = [
    (-1, -2, -3), (1, 2, -3), (1, -2, 3), (-1, 2, 3),  # s = x1 xor x2
    (-1, -2, 4), (1, -4), (2, -4),  # c = x1 and x2
    (-4,),
]  # fmt: skip


def read(clauses: list[Clause], n: int) -> AdderReading | None:
    """``read_adders`` as structure recovery calls it: the clauses with auxiliaries, those without beside."""
    block = [clause for clause in clauses if any(abs(lit) > n for lit in clause)]
    return read_adders(block, n, [clause for clause in clauses if clause not in block]) if block else None


def projection(reading: AdderReading, n: int) -> SddNode:
    manager = SddManager.from_vtree(Vtree(var_count=n, var_order=list(range(n, 0, -1)), vtree_type="right"))
    visible = sorted({abs(lit) for clause in reading.clauses for lit in clause if abs(lit) <= n})
    found = allowed_projection(reading, visible, manager, list(range(n, 0, -1)), lambda doing: None)
    assert found is not None
    return found


def models(clauses, n: int, top: int) -> set[tuple[int, ...]]:
    return sat_models(CNF(n, tuple(clauses), top), n)


def rows_of(node: SddNode, n: int) -> set[tuple[int, ...]]:
    manager = node.manager
    rows = set()
    for row in itertools.product((0, 1), repeat=n):
        cube = manager.true()
        for var, bit in enumerate(row, start=1):
            cube = cube & (manager.literal(var) if bit else ~manager.literal(var))
        if not (node & cube).is_false():
            rows.add(row)
    return rows


def test_a_half_adder_with_no_carry_is_at_most_one_of_its_inputs() -> None:
    reading = read(HALF_ADDER_AT_MOST_ONE, 2)
    assert reading == AdderReading({1: (0, 1), 2: (0, 1)}, (), tuple(HALF_ADDER_AT_MOST_ONE))
    assert rows_of(projection(reading, 2), 2) == {(0, 0), (0, 1), (1, 0)}


def test_a_gate_whose_table_is_not_an_adder_is_not_read() -> None:
    """The carry's clause flipped: c = x1 and not x2 meets no polarity of the identity with s = x1 xor x2."""
    clauses = [clause if clause != (2, -4) else (-2, -4) for clause in HALF_ADDER_AT_MOST_ONE]
    clauses = [clause if clause != (-1, -2, 4) else (-1, 2, 4) for clause in clauses]
    reading = read(clauses, 2)
    assert reading is None or rows_of(projection(reading, 2), 2) == models(clauses, 2, 4)


def adder_clauses(kind: str, weights: list[int], bound: int) -> tuple[list[Clause], int]:
    formula = getattr(PBEnc, kind)(
        lits=list(range(1, len(weights) + 1)), weights=weights, bound=bound, top_id=len(weights), encoding=EncType.adder
    )
    return [tuple(clause) for clause in formula.clauses], max(formula.nv, len(weights))


@st.composite
def adders(draw):
    n = draw(st.integers(2, 7))
    weights = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    kind = draw(st.sampled_from(["atmost", "atleast", "equals"]))
    bound = draw(st.integers(1, sum(weights) - 1))
    return n, weights, kind, bound


KINDS = {"atmost": int.__le__, "atleast": int.__ge__, "equals": int.__eq__}


@settings(max_examples=200, deadline=None)
@given(adders())
def test_pysat_adders_read_are_read_as_the_weighted_sum(case) -> None:
    """Small adders PySAT simplifies (an "equals" fixes output bits to constants) may be left to the other
    readings; one read is the weighted sum, with the clauses over items alone it did not read."""
    n, weights, kind, bound = case
    clauses, top = adder_clauses(kind, weights, bound)
    reading = read(clauses, n)
    if reading is None:
        return
    expected = {
        row for row in itertools.product((0, 1), repeat=n) if KINDS[kind](sum(itertools.compress(weights, row)), bound)
    }
    unread = [clause for clause in clauses if clause not in reading.clauses]
    assert {
        row
        for row in rows_of(projection(reading, n), n)
        if satisfies(unread, {i: bool(bit) for i, bit in enumerate(row, 1)})
    } == expected
    assert rows_of(projection(reading, n), n) == models(reading.clauses, n, top)


@pytest.mark.parametrize("kind", ["atmost", "atleast"])
def test_every_larger_at_most_or_at_least_as_adders_is_read(kind: str) -> None:
    """20 to 60 items, weights up to 20, 100 or 1,000, bounds from a fifth to four fifths of their sum."""
    for seed in range(12):
        chooser = random.Random(seed)
        n, top_weight = chooser.randint(20, 60), chooser.choice([20, 100, 1000])
        weights = [chooser.randint(1, top_weight) for _ in range(n)]
        clauses, _ = adder_clauses(kind, weights, chooser.randint(sum(weights) // 5, 4 * sum(weights) // 5))
        reading = read(clauses, n)
        assert reading is not None, (seed, n, weights)
        assert {var: abs(high - low) for var, (low, high) in reading.weights.items()} == dict(enumerate(weights, 1))


@st.composite
def mutated_adders(draw):
    n, weights, kind, bound = draw(adders())
    clauses, top = adder_clauses(kind, weights, bound)
    if not clauses:
        return n, clauses, top
    index = draw(st.integers(0, len(clauses) - 1))
    how = draw(st.sampled_from(["flip", "drop", "add"]))
    if how == "flip" and clauses[index]:
        position = draw(st.integers(0, len(clauses[index]) - 1))
        clause = list(clauses[index])
        clause[position] = -clause[position]
        clauses[index] = tuple(clause)
    elif how == "drop":
        del clauses[index]
    else:
        literal = st.integers(1, top).flatmap(lambda v: st.sampled_from((v, -v)))
        clauses.append(tuple(draw(st.lists(literal, min_size=1, max_size=3, unique_by=abs))))
    return n, clauses, top


@settings(max_examples=400, deadline=None)
@given(mutated_adders())
def test_a_mutated_adder_is_read_only_as_what_it_is(case) -> None:
    n, clauses, top = case
    reading = read(clauses, n)
    if reading is not None:
        assert rows_of(projection(reading, n), n) == models(reading.clauses, n, top)


def test_many_auxiliaries_over_the_same_inputs_are_not_paired_quadratically(monkeypatch) -> None:
    """1,000 auxiliaries each the parity of x1 and x2 (a hostile or careless answer): every two used to be tried
    as a sum and a carry, a million pairings (19 s); at most a few definitions over one set of inputs are."""
    from autonesy.tools import adder_network

    tried = []
    polarities = adder_network._polarities
    monkeypatch.setattr(adder_network, "_polarities", lambda s, c: tried.append(1) or polarities(s, c))
    clauses: list[Clause] = []
    for o in range(3, 1003):
        clauses += [(-1, -2, -o), (1, 2, -o), (1, -2, o), (-1, 2, o)]
    assert read_adders(clauses, 2) is None  # no carry, no comparator: nothing reads only a total
    assert len(tried) < 100


def adder_gate(inputs: tuple[int, ...], s: int, c: int) -> list[Clause]:
    """``s`` and ``c`` the sum and carry of ``inputs``, one clause per row and output."""
    clauses = []
    for row in itertools.product((0, 1), repeat=len(inputs)):
        total, base = sum(row), [-var if bit else var for var, bit in zip(inputs, row)]
        clauses += [(*base, s if total % 2 else -s), (*base, c if total // 2 else -c)]
    return clauses


# x1 + x2 = s5 + 2·c6; x3 + x4 + c6 = s7 + 2·c8; x2 + s7 = s11 + 2·c12: c8 and c12 both unread at level 2
SHARED_TOP = adder_gate((1, 2), 5, 6) + adder_gate((3, 4, 6), 7, 8) + adder_gate((2, 7), 11, 12)


@pytest.mark.parametrize(
    "comparator",
    [
        [(-8, -12), (-8, -5), (-12, -5)],  # the same after swapping c8 and c12: a function of c8 + c12 and s5
        [(-8, -12), (-8, -5)],  # not: c8 and c12 told apart beside a lower digit
    ],
)
def test_digits_sharing_the_top_level_read_beside_a_lower_digit(comparator) -> None:
    """A comparator's clause over a top digit and a lower one (which once raised KeyError): read only when the
    clauses depend on the top digits through their sum, and then as the SAT-listed projection."""
    clauses = SHARED_TOP + comparator
    reading = read(clauses, 4)
    if len(comparator) == 3:
        assert reading is not None
    if reading is not None:
        assert rows_of(projection(reading, 4), 4) == models(clauses, 4, 12)


@st.composite
def gate_networks(draw):
    """Adder gates over items and outputs of earlier gates (a sum or a carry sometimes left out, an output
    sometimes read twice), then a few random clauses over items, outputs and a free auxiliary: the shapes a
    careless or hostile answer can take around an adder, many of them no adder at all."""
    n = draw(st.integers(2, 6))
    terms, outputs, clauses, top = list(range(1, n + 1)), [], [], n
    for _ in range(draw(st.integers(1, 5))):
        inputs = draw(st.lists(st.sampled_from(terms), min_size=2, max_size=3, unique=True))
        s, c = top + 1, top + 2
        top += 2
        gate = adder_gate(tuple(inputs), s, c)
        dropped = draw(st.sampled_from([None, s, c]))
        clauses += [clause for clause in gate if dropped not in map(abs, clause)]
        for var in inputs:
            if var > n and draw(st.booleans()):
                terms.remove(var)
        terms += [var for var in (s, c) if var != dropped]
        outputs += [var for var in (s, c) if var != dropped]
    top += 1
    variables = st.sampled_from([*range(1, n + 1), *outputs, top])
    literal = variables.flatmap(lambda v: st.sampled_from((v, -v)))
    clauses += draw(st.lists(st.lists(literal, min_size=1, max_size=3, unique_by=abs).map(tuple), max_size=4))
    return n, clauses, top


def without(clauses: list[Clause], var: int) -> list[Clause]:
    return [clause for clause in clauses if var not in map(abs, clause)]


# found by fuzzing: the clauses after the gates give an auxiliary two definitions (one with a clause left out),
# which were once paired as the sum and the carry of one gate (KeyError)
TWICE_DEFINED = (
    adder_gate((1, 2), 3, 4)
    + without(adder_gate((1, 3, 4), 5, 6), 6)
    + without(adder_gate((1, 2, 5), 7, 8), 8)
    + adder_gate((2, 7), 9, 10)
    + [(-1, -10, 9), (-3, 2), (-9,)]
)


@settings(max_examples=400, deadline=None)
@given(gate_networks())
@example((2, TWICE_DEFINED, 11))
def test_random_gate_networks_are_read_only_as_what_they_are(case) -> None:
    """No error, and a block read is the SAT-listed projection (an auxiliary defined twice once made a gate
    whose sum and carry were one variable, and a KeyError)."""
    n, clauses, top = case
    reading = read(clauses, n)
    if reading is not None:
        assert rows_of(projection(reading, n), n) == models(reading.clauses, n, top)
