"""Held-out counts for issue #51: formulas `auto` counting missed, with counts known from outside the code.

Each case is counted by ``count_models(cnf, "auto")`` under a time limit; printed per case: variables,
clauses, wall and CPU seconds (this process and its racers), the route that answered, whether it was
exact and whether it equals the known count.

- ``latin n``: n × n Latin squares (``benchmarks/scaling.py``); 161,280 (n = 5) and 812,851,200 (n = 6),
  OEIS A002860.
- ``all-different n``: n items, each taking one of n values, no two the same (a permutation: n!). The
  truth writes its at-most-ones pairwise; the answer in another encoding (``ladder``, ``bitwise``) and
  the two overlapping (their conjunction, what scoring counts).
- ``pb-60 <encoding>``: a weighted at-most over 60 items (weights 1–20 drawn with seed 1, bound a third of
  their sum) in one of PySAT's PB encodings, alone and overlapping the same constraint as a sequential
  counter; its count by a dynamic programme over sums, written here.
- ``sudoku-6 overlap``: the 6 × 6 Sudoku with pairwise at-most-ones conjoined with the same Sudoku whose
  at-most-ones are ladders or sequential counters; 28,200,960 grids (Pettersen's count, "Mathematics of
  Sudoku", Wikipedia; also ``benchmarks/scaling.py``'s ``sudoku 6``).
- ``sudoku-9``: the 9 × 9 Sudoku without clues; 6,670,903,752,021,072,936,960 grids (Felgenhauer and
  Jarvis, 2005). The aim, not a requirement.
- ``colouring-30``: 3-colourings of a banded graph on 30 nodes (i and j joined, with probability one half
  drawn with seed 3, the first from 1 whose graph has a 3-colouring, when 0 < j − i ≤ 3); 120,932,352, by a
  dynamic programme over the last three nodes' colours, written here.
- ``paths n``: the simple paths between opposite corners of the n × n grid, as the edges they use: degree
  one at the corners, zero or two elsewhere, and every used node reachable from the start within k steps
  for some k, through reachability auxiliaries (one per node and step count, defined from the step before);
  OEIS A007764: 1,262,816 (n = 6) and 575,780,564 (n = 7, the aim). ``paths-n-overlap`` conjoins it with
  ``benchmarks/scaling.py``'s ``grid_path`` (the same paths, a node's layers only from the step a neighbour
  can first reach it, one start variable): what scoring counts when truth and answer encode it differently.

    python benchmarks/held_out_counts.py [--limit 60] [--cases latin-5,all-different-10-ladder-overlap]

Timings on a shared machine are read with the load average, printed first.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from pysat.card import EncType
from pysat.pb import EncType as PBEncType
from pysat.pb import PBEnc

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import grid_path, latin_squares, sudoku  # noqa: E402

from autonesy.tasks.encoding import ClauseBuilder  # noqa: E402
from autonesy.tools.cnf import CNF  # noqa: E402
from autonesy.tools.counting import CountTimedOut, count_models  # noqa: E402

SUDOKU_6_GRIDS = 28_200_960
SUDOKU_9_GRIDS = 6_670_903_752_021_072_936_960


def all_different(n: int, at_most_one: int = EncType.pairwise) -> CNF:
    """n items (rows of n one-hot variables, item i value v is variable i·n + v + 1) all different: each item
    takes at least one value, and at most one item takes each value and each item at most one value."""

    def var(i: int, v: int) -> int:
        return i * n + v + 1

    builder = ClauseBuilder(n * n)
    for i in range(n):
        builder.add([var(i, v) for v in range(n)])
        builder.at_most([var(i, v) for v in range(n)], 1, at_most_one)
    for v in range(n):
        builder.at_most([var(i, v) for i in range(n)], 1, at_most_one)
    return builder.cnf()


def weighted_sum(kind: str, weights: list[int], bound: int, encodings: list[str]) -> CNF:
    """Σ weights·x against ``bound`` (``kind``: PBEnc's ``atmost``, ``atleast`` or ``equals``) over variables
    1..n, in each of PySAT's PB ``encodings`` (each one's auxiliaries numbered after the last)."""
    n, clauses, top = len(weights), [], len(weights)
    for encoding in encodings:
        formula = getattr(PBEnc, kind)(
            lits=list(range(1, n + 1)), weights=weights, bound=bound, top_id=top, encoding=getattr(PBEncType, encoding)
        )
        clauses += [tuple(clause) for clause in formula.clauses]
        top = max(top, formula.nv)
    return CNF(n, tuple(clauses), top)


def subsets_meeting(weights: list[int], holds: Callable[[int], bool]) -> int:
    """Subsets of items with these ``weights`` whose total weight ``holds``: a count per reachable total,
    item by item (a weighted constraint's models, without listing them)."""
    ways = {0: 1}
    for weight in weights:
        following = dict(ways)
        for total, count in ways.items():
            following[total + weight] = following.get(total + weight, 0) + count
        ways = following
    return sum(count for total, count in ways.items() if holds(total))


def banded_graph(nodes: int, band: int, seed: int) -> list[tuple[int, int]]:
    """Edges (i, j), i < j ≤ i + ``band``, each kept with probability one half."""
    chooser = random.Random(seed)
    return [(i, j) for i in range(nodes) for j in range(i + 1, min(nodes, i + band + 1)) if chooser.random() < 0.5]


def colouring(nodes: int, edges: list[tuple[int, int]], colours: int) -> CNF:
    """Node i's colour c is variable i·colours + c + 1: exactly one colour per node, none shared along an edge."""
    builder = ClauseBuilder(nodes * colours)
    for i in range(nodes):
        builder.exactly_one([i * colours + c + 1 for c in range(colours)])
    for (i, j), c in itertools.product(edges, range(colours)):
        builder.add([-(i * colours + c + 1), -(j * colours + c + 1)])
    return builder.cnf()


def colourings(nodes: int, edges: list[tuple[int, int]], colours: int) -> int:
    """The proper colourings of a graph whose edges join nodes at most ``band`` apart, node by node, keeping the
    count per colouring of the last ``band`` nodes."""
    band = max((j - i for i, j in edges), default=1)
    ways: dict[tuple[int, ...], int] = {(): 1}
    for j in range(nodes):
        earlier = [i for i, k in edges if k == j]
        following: dict[tuple[int, ...], int] = defaultdict(int)
        for window, count in ways.items():  # window[-d] is node j - d's colour
            for c in range(colours):
                if all(window[i - j] != c for i in earlier):
                    following[(*window, c)[-band:]] += count
        ways = following
    return sum(ways.values())


def grid_paths(n: int) -> CNF:
    """Simple paths between opposite corners of the n × n grid graph, over its edges (the task variables, row
    edges then column edges): the corners meet one used edge, every other node none or two, and each used node is
    reachable from the start in at most n² − 1 steps along used edges (``reach[k][v]``: v within k steps, defined
    from step k − 1 by an and per edge and an or per node), which rules out cycles apart from the path."""
    nodes = [(r, c) for r in range(n) for c in range(n)]
    edges = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
    edges += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
    edge = {frozenset(e): i + 1 for i, e in enumerate(edges)}
    builder = ClauseBuilder(len(edges))
    start, end = nodes[0], nodes[-1]
    incident = {v: [edge[frozenset(e)] for e in edges if v in e] for v in nodes}
    for v, lits in incident.items():
        if v in (start, end):
            builder.exactly_one(lits)
            continue
        builder.add(*([-a, -b, -c] for a, b, c in itertools.combinations(lits, 3)))  # at most two
        for lit in lits:  # not exactly one
            builder.add([-lit, *(other for other in lits if other != lit)])
    reach = {v: builder.new_var() for v in nodes}
    builder.add(*([reach[v]] if v == start else [-reach[v]] for v in nodes))
    for _ in range(len(nodes) - 1):
        following = {}
        for v in nodes:
            steps = []
            for u, v2 in edges:
                if v in (u, v2):
                    other = v2 if v == u else u
                    step = builder.new_var()
                    builder.iff_and(step, [reach[other], edge[frozenset((u, v2))]])
                    steps.append(step)
            following[v] = builder.new_var()
            builder.iff_or(following[v], [reach[v], *steps])
        reach = following
    for v, lits in incident.items():
        builder.add(*([-lit, reach[v]] for lit in lits))
    return builder.cnf()


SIMPLE_CORNER_PATHS = {3: 12, 4: 184, 5: 8512, 6: 1_262_816, 7: 575_780_564}  # OEIS A007764


def _cases() -> dict[str, tuple[Callable[[], CNF], int]]:
    cases: dict[str, tuple[Callable[[], CNF], int]] = {
        "latin-5": (lambda: latin_squares(5), 161_280),
        "latin-6": (lambda: latin_squares(6), 812_851_200),
    }
    for n in (10, 12):
        for name, encoding in (("ladder", EncType.ladder), ("bitwise", EncType.bitwise)):
            cases[f"all-different-{n}-{name}"] = (lambda n=n, e=encoding: all_different(n, e), math.factorial(n))
            cases[f"all-different-{n}-{name}-overlap"] = (
                lambda n=n, e=encoding: all_different(n).conjoin(all_different(n, e)),
                math.factorial(n),
            )
    chooser = random.Random(1)
    weights = [chooser.randint(1, 20) for _ in range(60)]
    bound = sum(weights) // 3
    subsets = subsets_meeting(weights, lambda total: total <= bound)
    for encoding in ("bdd", "adder", "totalizer", "sortnetwrk"):
        cases[f"pb-60-{encoding}"] = (lambda e=encoding: weighted_sum("atmost", weights, bound, [e]), subsets)
        cases[f"pb-60-{encoding}-overlap"] = (
            lambda e=encoding: weighted_sum("atmost", weights, bound, ["seqcounter", e]),
            subsets,
        )
    for name, encoding in (("ladder", EncType.ladder), ("seqcounter", EncType.seqcounter)):
        cases[f"sudoku-6-{name}-overlap"] = (lambda e=encoding: sudoku(6).conjoin(sudoku(6, e)), SUDOKU_6_GRIDS)
    cases["sudoku-9"] = (lambda: sudoku(9), SUDOKU_9_GRIDS)
    edges = banded_graph(30, 3, seed=3)
    cases["colouring-30"] = (lambda: colouring(30, edges, 3), colourings(30, edges, 3))
    for n in (6, 7):
        cases[f"paths-{n}"] = (lambda n=n: grid_paths(n), SIMPLE_CORNER_PATHS[n])
        cases[f"paths-{n}-overlap"] = (lambda n=n: grid_paths(n).conjoin(grid_path(n)), SIMPLE_CORNER_PATHS[n])
    return cases


def _cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=60.0, help="time limit per count (seconds)")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    args = parser.parse_args()
    cases = _cases()
    chosen = [name for name in args.cases.split(",") if name] or list(cases)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores, limit {args.limit} s")
    print(f"{'case':36} {'vars':>6} {'clauses':>8} {'wall_s':>8} {'cpu_s':>8}  {'route':22} exact  correct")
    for name in chosen:
        build, expected = cases[name]
        cnf = build()
        start, cpu = time.perf_counter(), _cpu_now()
        try:
            result = count_models(cnf, "auto", time_limit_s=args.limit)
            route, exact, correct = result.method, str(result.exact), str(result.value == expected)
        except CountTimedOut:
            route, exact, correct = "timed out", "-", "-"
        wall, used = time.perf_counter() - start, _cpu_now() - cpu
        print(
            f"{name:36} {cnf.num_vars:>6} {len(cnf.clauses):>8} {wall:>8.2f} {used:>8.2f}  {route:22} {exact:5}  {correct}",
            flush=True,
        )


if __name__ == "__main__":
    main()
