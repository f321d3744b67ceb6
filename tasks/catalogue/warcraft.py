"""Warcraft shortest path on a 4 × 4 map: the chosen grid edges form one simple top-left → bottom-right path.

The map's 16 cells are the vertices of a 4 × 4 grid graph (4-neighbourhood); rows and columns are
numbered 0–3 from the top-left corner. The 24 variables are its edges, each named by the two cells it
joins: ``edge_r{r}c{c}_r{r}c{c+1}`` for a horizontal step and ``edge_r{r}c{c}_r{r+1}c{c}`` for a
vertical one. Order: the 12 horizontal edges row by row (left to right within a row), then the 12
vertical edges row by row (rows 0→1, 1→2, 2→3; left to right within a row).

Ground truth (no auxiliaries): degree constraints — the two corner end points touch exactly one
chosen edge, every other cell zero or two — plus one clause per simple cycle of the grid forbidding
all of its edges at once. Degree constraints alone admit a path together with detached cycles; with
every cycle blocked, the only edge sets left are single simple paths.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
from pysat.card import EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

SIZE = 4
START = (0, 0)
GOAL = (SIZE - 1, SIZE - 1)

Cell = tuple[int, int]
EDGES: tuple[tuple[Cell, Cell], ...] = tuple(
    [((r, c), (r, c + 1)) for r in range(SIZE) for c in range(SIZE - 1)]
    + [((r, c), (r + 1, c)) for r in range(SIZE - 1) for c in range(SIZE)]
)
NUM_EDGES = len(EDGES)  # 24
CELLS: tuple[Cell, ...] = tuple(itertools.product(range(SIZE), range(SIZE)))


def _edge_name(a: Cell, b: Cell) -> str:
    return f"edge_r{a[0]}c{a[1]}_r{b[0]}c{b[1]}"


def _edge_meaning(a: Cell, b: Cell) -> str:
    step = "horizontal" if a[0] == b[0] else "vertical"
    return (
        f"the path uses the {step} step between the cell in row {a[0]}, column {a[1]} and the cell in "
        f"row {b[0]}, column {b[1]}"
    )


# ------------------------------------------------------------------------------------- ground truth


def _incident_edges() -> dict[Cell, list[int]]:
    """DIMACS indices of the edges touching each cell."""
    incident: dict[Cell, list[int]] = {cell: [] for cell in CELLS}
    for index, (a, b) in enumerate(EDGES, start=1):
        incident[a].append(index)
        incident[b].append(index)
    return incident


def simple_cycles() -> list[frozenset[int]]:
    """Every simple cycle of the grid graph as a set of DIMACS edge indices (213 on the 4 × 4 grid).

    Each cycle is found once: from its smallest cell, walking only through larger cells, and kept
    as an edge set (the two walking directions give the same set).
    """
    edge_index = {frozenset(pair): i for i, pair in enumerate(EDGES, start=1)}
    neighbours: dict[Cell, list[Cell]] = {cell: [] for cell in CELLS}
    for a, b in EDGES:
        neighbours[a].append(b)
        neighbours[b].append(a)
    found: set[frozenset[int]] = set()

    def extend(origin: Cell, path: list[Cell]) -> None:
        for nxt in neighbours[path[-1]]:
            if nxt == origin and len(path) >= 4:
                found.add(frozenset(edge_index[frozenset(p)] for p in zip(path, path[1:] + [origin])))
            elif nxt > origin and nxt not in path:
                path.append(nxt)
                extend(origin, path)
                path.pop()

    for origin in CELLS:
        extend(origin, [origin])
    return sorted(found, key=lambda cycle: (len(cycle), sorted(cycle)))


def _encode():
    builder = ClauseBuilder(NUM_EDGES)
    for cell, edges in _incident_edges().items():
        if cell in (START, GOAL):
            builder.exactly_one(edges, EncType.pairwise)  # an end point: exactly one chosen edge
            continue
        # Any other cell: zero or two chosen edges, i.e. never exactly one and never three or more.
        for edge in edges:
            builder.implies([edge], [other for other in edges if other != edge])
        for triple in itertools.combinations(edges, 3):
            builder.add([-edge for edge in triple])
    for cycle in simple_cycles():
        builder.add([-edge for edge in sorted(cycle)])  # not every edge of this cycle at once
    return builder.cnf()


# ------------------------------------------------------------------------------------------- oracle

_CELL_ID = {cell: SIZE * cell[0] + cell[1] for cell in CELLS}
_START_ID, _GOAL_ID = _CELL_ID[START], _CELL_ID[GOAL]
_ENDS = np.array([_CELL_ID[a] for a, _ in EDGES] + [_CELL_ID[b] for _, b in EDGES]).reshape(2, NUM_EDGES)


def _neighbour_table() -> tuple[np.ndarray, np.ndarray]:
    """For each cell id, up to 4 (edge column, neighbour id); padding uses a never-chosen edge column."""
    edge_of = np.full((SIZE * SIZE, 4), NUM_EDGES, dtype=np.int64)
    other_of = np.full((SIZE * SIZE, 4), -1, dtype=np.int64)
    fill = np.zeros(SIZE * SIZE, dtype=np.int64)
    for column, (u, v) in enumerate(_ENDS.T):
        for here, there in ((u, v), (v, u)):
            edge_of[here, fill[here]], other_of[here, fill[here]] = column, there
            fill[here] += 1
    return edge_of, other_of


_EDGE_OF, _OTHER_OF = _neighbour_table()
_TOUCHES = np.zeros((NUM_EDGES, SIZE * SIZE), dtype=np.int64)  # edge × cell incidence
_TOUCHES[np.arange(NUM_EDGES), _ENDS[0]] = 1
_TOUCHES[np.arange(NUM_EDGES), _ENDS[1]] = 1


def _oracle(x: np.ndarray) -> np.ndarray:
    """Walk the chosen edges from the top-left cell; valid iff the walk reaches the bottom-right cell
    without ever having a choice or a dead end, and uses every chosen edge (nothing detached)."""
    x = np.asarray(x, dtype=bool)
    batch = x.shape[0]
    chosen = np.concatenate([x, np.zeros((batch, 1), dtype=bool)], axis=1)  # last column: padding edge
    degree = x.astype(np.int64) @ _TOUCHES  # (B, 16): chosen edges at each cell
    inner = np.ones(SIZE * SIZE, dtype=bool)
    inner[[_START_ID, _GOAL_ID]] = False
    valid = (degree[:, _START_ID] == 1) & (degree[:, _GOAL_ID] == 1) & np.isin(degree[:, inner], (0, 2)).all(axis=1)

    rows = np.arange(batch)
    here: np.ndarray = np.full(batch, _START_ID)
    came_from: np.ndarray = np.full(batch, -1)
    walked = np.zeros(batch, dtype=np.int64)
    for _ in range(SIZE * SIZE):  # a simple path has at most 15 steps
        moving = valid & (here != _GOAL_ID)
        if not moving.any():
            break
        options = chosen[rows[:, None], _EDGE_OF[here]] & (_OTHER_OF[here] != came_from[:, None])
        one_way = options.sum(axis=1) == 1
        valid &= ~moving | one_way
        moving &= one_way
        step = options.argmax(axis=1)
        came_from = np.where(moving, here, came_from)
        here = np.where(moving, _OTHER_OF[here, step], here)
        walked += moving
    return valid & (here == _GOAL_ID) & (walked == x.sum(axis=1))


# ------------------------------------------------------------------------------ valid by construction


def _paths() -> Iterator[list[Cell]]:
    """Every simple path of cells from START to GOAL through 4-neighbours (depth-first search)."""
    path = [START]

    def extend() -> Iterator[list[Cell]]:
        r, c = path[-1]
        if (r, c) == GOAL:
            yield list(path)
            return
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < SIZE and 0 <= nc < SIZE and (nr, nc) not in path:
                path.append((nr, nc))
                yield from extend()
                path.pop()

    yield from extend()


def _enumerate_valid() -> Iterator[list[int]]:
    position = {frozenset(pair): i for i, pair in enumerate(EDGES)}
    for cells in _paths():
        row = [0] * NUM_EDGES
        for a, b in zip(cells, cells[1:]):
            row[position[frozenset((a, b))]] = 1
        yield row


def warcraft() -> Task:
    """Warcraft shortest path: the 24 grid edges, chosen ones forming one simple top-left to bottom-right path."""
    variables = tuple(Variable(_edge_name(a, b), _edge_meaning(a, b)) for a, b in EDGES)
    return Task(
        name="warcraft",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "A map is a 4 x 4 grid of cells, rows numbered 0 to 3 from top to bottom and columns 0 to 3 from "
                "left to right. Every two cells that are next to each other horizontally or vertically are joined "
                "by an edge (24 edges; no diagonal edges), and each variable says whether the path uses that edge. "
                "The chosen edges must form one simple path from the top-left cell (row 0, column 0) to the "
                "bottom-right cell (row 3, column 3):\n"
                "- Exactly one chosen edge touches the top-left cell (the path leaves it once).\n"
                "- Exactly one chosen edge touches the bottom-right cell (the path enters it once).\n"
                "- Every other cell is touched by either no chosen edge (it is off the path) or exactly two chosen "
                "edges (the path enters and leaves it once); one, three or four chosen edges at a cell are "
                "forbidden.\n"
                "- The chosen edges contain no cycle: no set of chosen edges may form a closed loop, whether the "
                "loop is detached from the path or not.\n"
                "- Consequently all chosen edges belong to one single connected path from the top-left to the "
                "bottom-right cell: no detached pieces, and no cell is visited twice.\n"
                "- Any such path is allowed, whatever its length or shape; it need not be the shortest one.\n"
                "Background facts that must NOT be encoded: the map is a Warcraft terrain image whose cells have "
                "travel costs, and the annotated path is the cheapest one for those costs; the costs and "
                "optimality are not part of the rule, which only requires a valid path."
            ),
            not_detailed="The chosen edges must trace a single path through the grid from the top-left cell to the bottom-right cell, with no loops and no extra disconnected pieces.",
        ),
        metadata=TaskMetadata(
            source_dataset="Warcraft shortest path",
            citation=(
                "Vlastelica Pogančić, Paulus, Musil, Martius, Rolínek. Differentiation of Blackbox Combinatorial "
                "Solvers. ICLR 2020."
            ),
            licence="MIT",
            published_clauses=289,
            data_provenance="procedural",
            equivalence_method="construction",
            design_notes=(
                "Variables: the 24 edges of the 4 x 4 grid graph (cells as vertices, 4-neighbourhood), rows and "
                "columns 0-3 from the top-left, named edge_r<r>c<c>_r<r'>c<c'> by the two cells joined; order: "
                "12 horizontal edges row by row, then 12 vertical edges row by row. Encoding, no auxiliaries: "
                "exactly-one (pairwise) at the two end cells (4 clauses); degree 0 or 2 at every other cell, as "
                "'an edge implies another edge at the same cell' plus 'no three edges at a cell' (68 clauses); "
                "and one clause per simple cycle of the grid forbidding all its edges (213 cycles). Degree "
                "constraints alone leave a path plus detached cycles; blocking every cycle leaves exactly the "
                "184 simple corner-to-corner paths (OEIS A007764). 285 clauses against 289 published. Of the "
                "213 cycle clauses only 25 are not implied by the degree constraints (cycles avoiding both end "
                "cells without separating them); the rest are kept so that the rule reads 'no cycle anywhere'. "
                "Each degree clause alone is likewise implied by the others (degrees sum to an even number; "
                "degree 4 closes a cycle), but not the degree rules of a pair of cells. "
                "Annotated data: procedurally generated terrain maps with per-cell costs, labelled with the "
                "cheapest path (Dijkstra)."
            ),
        ),
        encode=_encode,
        oracle_batch=_oracle,
        enumerate_valid=_enumerate_valid,
    )
