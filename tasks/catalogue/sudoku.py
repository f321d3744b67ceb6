"""Visual 4 × 4 Sudoku: the 16 cells' digits (read from handwritten images) form a valid solution.

Variables are cell × digit, one-hot per cell: rows and columns are numbered 1–4 from the top-left,
cells are taken row by row, and within a cell the digits 1, 2, 3, 4 in order, so variable
``r{r}c{c}_is_{d}`` has DIMACS index 16·(r−1) + 4·(c−1) + d.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
from pysat.card import EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

SIZE = 4
BOX = 2
DIGITS = tuple(range(1, SIZE + 1))
CELLS = tuple(itertools.product(range(SIZE), range(SIZE)))  # (row, column), 0-based, row-major


def _index(row: int, col: int, digit: int) -> int:
    """DIMACS index of "cell (row, col) holds digit" (row and col 0-based, digit 1-4)."""
    return (row * SIZE + col) * SIZE + digit


def _units() -> list[list[tuple[int, int]]]:
    """The 12 groups of cells that must hold distinct digits: 4 rows, 4 columns, 4 boxes."""
    rows = [[(r, c) for c in range(SIZE)] for r in range(SIZE)]
    cols = [[(r, c) for r in range(SIZE)] for c in range(SIZE)]
    boxes = [
        [(br + r, bc + c) for r in range(BOX) for c in range(BOX)]
        for br in range(0, SIZE, BOX)
        for bc in range(0, SIZE, BOX)
    ]
    return rows + cols + boxes


def _encode():
    builder = ClauseBuilder(SIZE**3)
    for r, c in CELLS:
        builder.exactly_one([_index(r, c, d) for d in DIGITS])  # pairwise: 1 + 6 clauses
    # No digit twice in a unit (pairwise at-most-one). With 4 cells and 4 digits per unit this already
    # forces every digit to occur once, so "at least once" clauses would be redundant. Two cells of a
    # row (or column) that also share a box get the same clause twice; kept, as in the published count.
    for unit in _units():
        for d in DIGITS:
            builder.at_most([_index(r, c, d) for r, c in unit], 1, EncType.pairwise)
    return builder.cnf()


def _oracle(x: np.ndarray) -> np.ndarray:
    """Decode each cell's digit, then check every row, column and box is a permutation of 1-4."""
    cells = np.asarray(x, dtype=bool).reshape(-1, SIZE, SIZE, SIZE)  # (B, row, col, digit)
    one_digit_per_cell = (cells.sum(axis=3) == 1).all(axis=(1, 2))
    grid = cells.argmax(axis=3) + 1  # (B, row, col), meaningful where one_digit_per_cell
    boxes = grid.reshape(-1, SIZE // BOX, BOX, SIZE // BOX, BOX).transpose(0, 1, 3, 2, 4).reshape(-1, SIZE, SIZE)
    full = np.array(DIGITS)

    def all_permutations(groups: np.ndarray) -> np.ndarray:  # (B, group, member) → (B,)
        return (np.sort(groups, axis=2) == full).all(axis=(1, 2))

    return (
        one_digit_per_cell
        & all_permutations(grid)
        & all_permutations(grid.transpose(0, 2, 1))
        & all_permutations(boxes)
    )


def _solutions() -> Iterator[list[list[int]]]:
    """Every completed 4 × 4 Sudoku grid, by backtracking over the cells in row-major order."""
    grid = [[0] * SIZE for _ in range(SIZE)]

    def allowed(r: int, c: int, d: int) -> bool:
        if d in grid[r] or any(grid[i][c] == d for i in range(SIZE)):
            return False
        br, bc = r - r % BOX, c - c % BOX
        return all(grid[br + i][bc + j] != d for i in range(BOX) for j in range(BOX))

    def fill(position: int) -> Iterator[list[list[int]]]:
        if position == SIZE * SIZE:
            yield [row[:] for row in grid]
            return
        r, c = divmod(position, SIZE)
        for d in DIGITS:
            if allowed(r, c, d):
                grid[r][c] = d
                yield from fill(position + 1)
                grid[r][c] = 0

    yield from fill(0)


def _enumerate_valid() -> Iterator[list[int]]:
    for grid in _solutions():
        row = [0] * SIZE**3
        for r, c in CELLS:
            row[_index(r, c, grid[r][c]) - 1] = 1
        yield row


def sudoku() -> Task:
    """4 × 4 Sudoku: one digit per cell, each digit once per row, column and box."""
    variables = tuple(
        Variable(f"r{r + 1}c{c + 1}_is_{d}", f"the cell in row {r + 1}, column {c + 1} holds the digit {d}")
        for r, c in CELLS
        for d in DIGITS
    )
    return Task(
        name="sudoku",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "A 4 x 4 Sudoku grid has rows 1 to 4 (top to bottom) and columns 1 to 4 (left to right), and is "
                "split into four 2 x 2 boxes: rows 1-2 with columns 1-2, rows 1-2 with columns 3-4, rows 3-4 "
                "with columns 1-2, and rows 3-4 with columns 3-4. Each cell shows a handwritten digit from 1 to 4, "
                "given one-hot by four variables (one per digit). The whole grid must be a valid, completely "
                "filled Sudoku solution:\n"
                "- Each cell holds exactly one digit: exactly one of its four variables is true.\n"
                "- Each row contains each digit 1 to 4 exactly once: no digit appears twice in the same row.\n"
                "- Each column contains each digit 1 to 4 exactly once: no digit appears twice in the same column.\n"
                "- Each 2 x 2 box contains each digit 1 to 4 exactly once: no digit appears twice in the same box.\n"
                "- There is no other rule: any grid satisfying these rules is allowed.\n"
                "Background facts that must NOT be encoded: the digits are read from handwritten images; there "
                "are no given clues or pre-filled cells to respect (the rule is about the completed grid only); "
                "the diagonals carry no constraint; and how often a grid occurs in the data is irrelevant."
            ),
            not_detailed="The sixteen digits form a correctly solved 4 x 4 Sudoku: every row, column and 2 x 2 box holds the digits 1 to 4 once each.",
        ),
        metadata=TaskMetadata(
            source_dataset="Visual Sudoku (4 x 4 grids of handwritten digits)",
            citation=(
                "Wang, Donti, Wilder, Kolter. SATNet: Bridging Deep Learning and Logical Reasoning Using a "
                "Differentiable Satisfiability Solver. ICML 2019 (visual Sudoku). Digits: LeCun, Bottou, Bengio, "
                "Haffner. Gradient-Based Learning Applied to Document Recognition. Proceedings of the IEEE "
                "86(11):2278-2324, 1998."
            ),
            licence="unrestricted (NIST-derived)",
            published_clauses=400,
            data_provenance="real",
            equivalence_method="construction",
            design_notes=(
                "Variables: 16 cells (row-major, rows/columns numbered 1-4) x digits 1-4, one-hot per cell. "
                "Encoding: pairwise exactly-one per cell (16 x 7 = 112 clauses) and pairwise at-most-one per "
                "digit in each row, column and box (12 units x 4 digits x 6 = 288): 400 clauses, as published, "
                "no auxiliaries; 'each digit at least once per unit' follows (4 cells, 4 distinct digits). "
                "This is the plain per-unit encoding the published count suggests: the 64 row and column "
                "clauses whose two cells also share a box repeat a box clause verbatim, and the cells' "
                "at-most-one clauses are implied by the rest (pigeonhole); both are kept for readability. In "
                "fact every clause but the cells' at-least-one ones is implied by the others one at a time; "
                "only families matter (without the 32 clauses linking a box's diagonal cells, the 576 Latin "
                "squares of order 4 are models). "
                "Models: the 288 completed 4 x 4 Sudoku grids. Annotated data: grids of real handwritten digits "
                "bundled with scikit-learn (sklearn.datasets.load_digits), so no download is needed."
            ),
        ),
        encode=_encode,
        oracle_batch=_oracle,
        enumerate_valid=_enumerate_valid,
    )
