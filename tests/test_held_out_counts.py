"""The held-out counting cases of benchmarks/held_out_counts.py say what their docstrings say: each encoding's
models are checked against an independent listing (a depth-first search over paths, every colouring tried)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
from pysat.solvers import Solver

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from held_out_counts import banded_graph, colouring, colourings, grid_paths  # noqa: E402

from autonesy.tools.counting import count_models  # noqa: E402


def corner_paths(n: int) -> set[frozenset[frozenset[tuple[int, int]]]]:
    """Every simple path from (0, 0) to (n − 1, n − 1) in the n × n grid, as its set of edges, by depth-first search."""
    found = set()

    def walk(node, seen, edges):
        if node == (n - 1, n - 1):
            found.add(frozenset(edges))
            return
        r, c = node
        for step in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= step[0] < n and 0 <= step[1] < n and step not in seen:
                walk(step, seen | {step}, [*edges, frozenset((node, step))])

    walk((0, 0), {(0, 0)}, [])
    return found


def test_the_paths_encoding_has_exactly_the_simple_corner_paths_as_models():
    """3 × 3 grid: each of the 2^12 edge sets is a model (some auxiliaries extend it) iff it is a path's edges."""
    n = 3
    edges = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
    edges += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
    paths = corner_paths(n)
    assert len(paths) == 12  # OEIS A007764
    cnf = grid_paths(n)
    with Solver(name="minisat22", bootstrap_with=cnf.clauses) as solver:
        for chosen in itertools.product((False, True), repeat=len(edges)):
            used = frozenset(frozenset(e) for e, on in zip(edges, chosen) if on)
            assumptions = [i + 1 if on else -(i + 1) for i, on in enumerate(chosen)]
            assert solver.solve(assumptions=assumptions) == (used in paths), sorted(map(sorted, used))


def test_the_paths_encoding_of_the_4_by_4_grid_counts_its_184_paths():
    assert len(corner_paths(4)) == 184
    result = count_models(grid_paths(4), "auto", time_limit_s=60)
    assert (result.value, result.exact) == (184, True)


@pytest.mark.parametrize("seed", range(6))
def test_the_colouring_count_is_every_colouring_tried(seed):
    edges = banded_graph(8, 3, seed)
    tried = sum(all(c[i] != c[j] for i, j in edges) for c in itertools.product(range(3), repeat=8))
    assert colourings(8, edges, 3) == tried
    assert count_models(colouring(8, edges, 3), "auto", time_limit_s=30).value == tried
