"""The Warcraft task: the chosen edges of the 4 × 4 grid form one simple top-left → bottom-right path."""

import dataclasses
import itertools

import numpy as np
import pytest
from pysat.solvers import Solver

from autonesy.tasks.catalogue.warcraft import simple_cycles, warcraft
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tools.compile import compile_to_sdd


@pytest.fixture(scope="module")
def task():
    return warcraft()


def edge(task, a, b):
    """DIMACS index of the edge between cells a and b, looked up by name (either order)."""
    a, b = sorted((a, b))
    return task.index_of(f"edge_r{a[0]}c{a[1]}_r{b[0]}c{b[1]}")


def along(task, *cells):
    """Assignment choosing the edges between consecutive cells (several walks: pass lists)."""
    row = [0] * 24
    for walk in cells:
        for a, b in zip(walk, walk[1:]):
            row[edge(task, a, b) - 1] = 1
    return row


TOP_THEN_RIGHT = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 3), (2, 3), (3, 3)]
SNAKE = [
    (0, 0),
    (1, 0),
    (1, 1),
    (0, 1),
    (0, 2),
    (0, 3),
    (1, 3),
    (1, 2),
    (2, 2),
    (2, 1),
    (2, 0),
    (3, 0),
    (3, 1),
    (3, 2),
    (3, 3),
]
SQUARE_BOTTOM_LEFT = [(2, 0), (2, 1), (3, 1), (3, 0), (2, 0)]  # a 4-cycle away from TOP_THEN_RIGHT
SQUARE_MIDDLE = [(1, 1), (1, 2), (2, 2), (2, 1), (1, 1)]


def cnf_accepts(clauses, row):
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in clauses]) as solver:
        return solver.solve(assumptions=[i + 1 if v else -(i + 1) for i, v in enumerate(row)])


def both_say(task, row):
    by_oracle, by_cnf = task.oracle(row), cnf_accepts(task.ground_truth.clauses, row)
    assert by_oracle == by_cnf, f"oracle {by_oracle}, ground truth {by_cnf}"
    return by_oracle


def count_paths_by_bitmask(size=4):
    """Independent count of simple corner-to-corner paths: memo-free DFS over visited bitmasks."""
    goal = size * size - 1

    def go(cell, visited):
        if cell == goal:
            return 1
        r, c = divmod(cell, size)
        total = 0
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nr, nc = r + dr, c + dc
            nxt = nr * size + nc
            if 0 <= nr < size and 0 <= nc < size and not visited >> nxt & 1:
                total += go(nxt, visited | 1 << nxt)
        return total

    return go(0, 1)


def test_variables_name_both_cells(task):
    assert task.num_vars == 24
    assert task.names[:3] == ["edge_r0c0_r0c1", "edge_r0c1_r0c2", "edge_r0c2_r0c3"]
    assert task.names[12] == "edge_r0c0_r1c0" and task.names[-1] == "edge_r2c3_r3c3"
    assert "horizontal" in task.variables[0].meaning and "vertical" in task.variables[12].meaning
    for name in task.names:  # every edge joins 4-neighbours
        _, a, b = name.split("_")
        (r1, c1), (r2, c2) = (int(a[1]), int(a[3])), (int(b[1]), int(b[3]))
        assert abs(r1 - r2) + abs(c1 - c2) == 1


def test_there_are_184_paths(task):
    assert count_paths_by_bitmask() == 184  # OEIS A007764: 1, 2, 12, 184, 8512
    assert count_paths_by_bitmask(3) == 12
    rows = [tuple(r) for r in task.enumerate_valid()]
    assert len(rows) == len(set(rows)) == 184


def test_grid_has_213_simple_cycles():
    cycles = simple_cycles()
    assert len(cycles) == 213  # OEIS A140517: cycles of the n x n grid graph, 1, 13, 213, 9349
    assert sum(len(c) == 4 for c in cycles) == 9 and max(len(c) for c in cycles) == 16


def test_ground_truth_is_proved_equivalent(task):
    report = prove_equivalence(task)
    assert (report.method, report.model_count) == ("construction", 184)
    assert task.ground_truth.num_aux_vars == 0


def test_hand_written_paths(task):
    assert both_say(task, along(task, TOP_THEN_RIGHT))
    assert both_say(task, along(task, SNAKE))
    assert both_say(task, along(task, list(reversed(SNAKE))))
    assert not both_say(task, along(task, TOP_THEN_RIGHT, SQUARE_BOTTOM_LEFT))  # detached cycle
    assert not both_say(task, along(task, SQUARE_MIDDLE))  # a cycle alone
    assert not both_say(task, along(task, TOP_THEN_RIGHT[:-1]))  # stops before the goal
    assert not both_say(task, along(task, TOP_THEN_RIGHT[1:]))  # does not leave the start
    assert not both_say(task, along(task, TOP_THEN_RIGHT, [(0, 1), (1, 1)]))  # a branch
    assert not both_say(task, along(task, TOP_THEN_RIGHT, [(2, 0), (2, 1)]))  # a detached segment
    assert not both_say(
        task, along(task, [(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)], [(1, 1), (2, 1), (2, 2), (3, 2), (3, 3)])
    )
    assert not both_say(task, [0] * 24)
    assert not both_say(task, [1] * 24)


def test_degree_rules_alone_would_admit_a_detached_cycle(task):
    """The example with a detached square passes every degree clause: the cycle clauses matter."""
    cycle_clauses = {tuple(sorted(-e for e in cycle)) for cycle in simple_cycles()}
    degree_only = [c for c in task.ground_truth.clauses if tuple(sorted(c)) not in cycle_clauses]
    assert len(degree_only) == len(task.ground_truth.clauses) - 213
    assert cnf_accepts(degree_only, along(task, TOP_THEN_RIGHT, SQUARE_BOTTOM_LEFT))
    assert not cnf_accepts(task.ground_truth.clauses, along(task, TOP_THEN_RIGHT, SQUARE_BOTTOM_LEFT))


def test_oracle_agrees_with_ground_truth_near_every_path(task):
    valid = np.array(list(task.enumerate_valid()), dtype=bool)
    eye = np.eye(24, dtype=bool)
    rows = [valid ^ eye[i] for i in range(24)]
    rows += [valid ^ eye[i] ^ eye[j] for i, j in itertools.combinations(range(24), 2)]
    rng = np.random.default_rng(2)
    rows.append(rng.integers(0, 2, size=(5000, 24)).astype(bool))
    rows = np.concatenate(rows)
    assert np.array_equal(task.oracle_batch(rows), compile_to_sdd(task.ground_truth).evaluate(rows))


@pytest.mark.slow
def test_exhaustive_proof_over_all_2_to_the_24_assignments(task):
    report = prove_equivalence(task, method="exhaustive")
    assert report.model_count == 184 and report.assignments_checked == 2**24


def _mutated(task, clauses):
    truth = task.ground_truth
    return dataclasses.replace(task, encode=lambda: truth.with_clauses(clauses))


def test_dropping_a_cycle_clause_breaks_the_proof(task):
    square = tuple(sorted(-edge(task, a, b) for a, b in zip(SQUARE_BOTTOM_LEFT, SQUARE_BOTTOM_LEFT[1:])))
    clauses = [c for c in task.ground_truth.clauses if tuple(sorted(c)) != square]
    assert len(clauses) == len(task.ground_truth.clauses) - 1
    with pytest.raises(EquivalenceError, match="184 assignments are valid"):
        prove_equivalence(_mutated(task, clauses))


def edges_at(task, cell):
    r, c = cell
    return {
        edge(task, cell, (r + dr, c + dc))
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0))
        if 0 <= r + dr < 4 and 0 <= c + dc < 4
    }


def test_dropping_degree_rules_breaks_the_proof(task):
    # Each degree clause alone is implied by the rest (the degrees sum to an even number, and a cell of
    # degree 4 closes a cycle), so drop them by cell: at both end cells the empty edge set becomes a
    # model; at two inner cells a detached segment between them does.
    def without_cells(*cells):
        touching = set().union(*(edges_at(task, cell) for cell in cells))
        kept = [
            c
            for c in task.ground_truth.clauses
            if not ({abs(l) for l in c} <= touching and len(c) <= 4 and c not in cycles)
        ]
        return _mutated(task, kept)

    cycles = {tuple(-e for e in sorted(cycle)) for cycle in simple_cycles()}
    for cells, witness in (
        (((0, 0), (3, 3)), [0] * 24),
        (((1, 1), (2, 2)), along(task, TOP_THEN_RIGHT, [(1, 1), (2, 1), (2, 2)])),
    ):
        mutant = without_cells(*cells)
        assert len(mutant.ground_truth.clauses) < len(task.ground_truth.clauses)
        assert cnf_accepts(mutant.ground_truth.clauses, witness) and not task.oracle(witness)
        with pytest.raises(EquivalenceError):
            prove_equivalence(mutant)


def test_adding_a_clause_breaks_the_proof(task):
    not_top_then_right = [-edge(task, a, b) for a, b in zip(TOP_THEN_RIGHT, TOP_THEN_RIGHT[1:])]
    with pytest.raises(EquivalenceError, match="rejects valid"):
        prove_equivalence(_mutated(task, list(task.ground_truth.clauses) + [not_top_then_right]))
