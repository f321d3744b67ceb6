"""Procedural Warcraft-style terrain maps (4 × 4 cells) labelled with their cheapest path.

Tiles. Six terrain types, each with a traversal cost, a base colour, an accent colour and a texture:

    type      cost  look
    road         1  grey-brown, a light stripe along or across the tile
    grass        2  light green with dark green speckles
    desert       4  sand with diagonal dune lines
    forest       7  dark green with three round tree crowns
    water       10  blue with light wave lines
    mountain    15  grey-brown with a white-capped peak

Each cell's type is drawn independently (probabilities 0.15, 0.25, 0.15, 0.2, 0.15, 0.1 in the
order above). A cell is rendered as 8 × 8 RGB pixels: the texture mask (shifted or flipped at
random, speckles drawn fresh) blends base and accent colours, then a per-tile brightness jitter
(±8 % s.d.) and per-pixel noise (s.d. 6 grey levels) are applied. x has shape (B, 3, 32, 32); cell
(r, c) occupies rows 8r…8r+7 and columns 8c…8c+7. Stored as uint8 0–255 (scaled to [0, 1] on load).

Label. The cost of a path is the sum of the costs of the cells it visits, both corner cells
included. The cheapest path from the top-left cell (0, 0) to the bottom-right cell (3, 3) under
4-neighbour moves is found with Dijkstra's algorithm run from the goal, giving every cell its
cheapest cost-to-goal; the path is then walked from the start. Tie rule: among equally cheap paths
the one whose sequence of cell ids (id = 4·row + column) is lexicographically smallest is chosen —
at every step the walk moves to the smallest-id neighbour that stays on a cheapest path. Costs are
positive integers, so the comparison is exact and the path is always simple. y sets the variables
of the path's edges (names ``edge_r{r}c{c}_r{r'}c{c'}`` of the warcraft task).
Extras: ``tiles`` (B, 4, 4) type ids, ``costs`` (B, 4, 4), ``path_cost`` (B,).
"""

from __future__ import annotations

import heapq

import numpy as np

from autonesy.tasks.data.context import SPLITS, GenerationContext
from autonesy.tasks.task import Task

VERSION = "warcraft-1"
SIZE = 4
TILE = 8
X_SCALE = 1.0 / 255.0
CHUNK = 500

# name, cost, base colour, accent colour, sampling probability
TILES = (
    ("road", 1, (165, 150, 125), (222, 212, 186), 0.15),
    ("grass", 2, (104, 172, 66), (56, 122, 38), 0.25),
    ("desert", 4, (226, 200, 132), (190, 160, 92), 0.15),
    ("forest", 7, (42, 104, 46), (16, 56, 22), 0.20),
    ("water", 10, (46, 96, 190), (128, 176, 236), 0.15),
    ("mountain", 15, (124, 114, 104), (242, 242, 242), 0.10),
)
TILE_NAMES = tuple(t[0] for t in TILES)
TILE_COSTS = np.array([t[1] for t in TILES], dtype=np.int64)
_BASE = np.array([t[2] for t in TILES], dtype=np.float64)
_ACCENT = np.array([t[3] for t in TILES], dtype=np.float64)
_PROBS = np.array([t[4] for t in TILES])


def _disc(cy: float, cx: float, radius: float) -> np.ndarray:
    yy, xx = np.mgrid[0:TILE, 0:TILE]
    return ((yy - cy) ** 2 + (xx - cx) ** 2 <= radius**2).astype(np.float64)


def _variants() -> dict[str, np.ndarray]:
    """Texture masks (V, 8, 8) in [0, 1] for the patterned tile types (all shifts and flips)."""
    yy, xx = np.mgrid[0:TILE, 0:TILE]
    stripe = ((yy >= 3) & (yy <= 4)).astype(np.float64)
    road = np.stack(
        [np.roll(stripe, s, axis=0) for s in (-1, 0, 1)] + [np.roll(stripe.T, s, axis=1) for s in (-1, 0, 1)]
    )
    dunes = (((xx + yy) % 4) == 0).astype(np.float64) * 0.8
    desert = np.stack(
        [np.roll(dunes, s, axis=1) for s in range(4)] + [np.roll(dunes[:, ::-1], s, axis=1) for s in range(4)]
    )
    trees = np.clip(_disc(2, 2, 1.6) + _disc(5, 5.5, 1.6) + _disc(1.5, 6, 1.2), 0, 1)
    forest = np.stack(
        [
            np.roll(np.roll(t, dy, axis=0), dx, axis=1)
            for t in (trees, trees[:, ::-1])
            for dy in (-1, 0, 1)
            for dx in (-1, 0, 1)
        ]
    )
    waves = np.zeros((TILE, TILE))
    for row0 in (1, 5):
        for x in range(TILE):
            waves[(row0 + (1 if x % 4 in (1, 2) else 0)) % TILE, x] = 1.0
    water = np.stack([np.roll(np.roll(waves, dy, axis=0), dx, axis=1) for dy in range(4) for dx in range(0, 4, 2)])
    peak = np.zeros((TILE, TILE))
    for row in range(1, 7):
        half = (row - 1) * 0.6
        peak[row, int(np.floor(3.5 - half)) : int(np.ceil(3.5 + half)) + 1] = 0.35
    peak[1:3, 3:5] = 1.0
    peak[3, 2:6] = np.maximum(peak[3, 2:6], 0.7)
    mountain = np.stack([np.roll(peak, dx, axis=1) for dx in (-1, 0, 1)] + [np.roll(peak, 1, axis=0)])
    return {"road": road, "desert": desert, "forest": forest, "water": water, "mountain": mountain}


_VARIANTS = _variants()


def render_maps(tiles: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """RGB images (n, 3, 32, 32) uint8 for tile-type grids (n, 4, 4)."""
    n = len(tiles)
    flat = tiles.reshape(-1)
    masks = np.zeros((flat.size, TILE, TILE))
    for t, name in enumerate(TILE_NAMES):
        where = np.flatnonzero(flat == t)
        if not len(where):
            continue
        if name == "grass":
            masks[where] = rng.random((len(where), TILE, TILE)) < 0.25
        else:
            variants = _VARIANTS[name]
            masks[where] = variants[rng.integers(0, len(variants), size=len(where))]
    base, accent = _BASE[flat][:, None, None, :], _ACCENT[flat][:, None, None, :]
    pixels = base * (1 - masks[..., None]) + accent * masks[..., None]  # (cells, 8, 8, 3)
    pixels *= 1 + 0.08 * rng.standard_normal((flat.size, 1, 1, 1))
    pixels += 6.0 * rng.standard_normal(pixels.shape)
    pixels = np.clip(np.rint(pixels), 0, 255).astype(np.uint8)
    grid = pixels.reshape(n, SIZE, SIZE, TILE, TILE, 3).transpose(0, 5, 1, 3, 2, 4)
    return np.ascontiguousarray(grid.reshape(n, 3, SIZE * TILE, SIZE * TILE))


def _neighbours(cell: int) -> list[int]:
    r, c = divmod(cell, SIZE)
    out = []
    for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= nr < SIZE and 0 <= nc < SIZE:
            out.append(nr * SIZE + nc)
    return sorted(out)


_NEIGHBOURS = [_neighbours(cell) for cell in range(SIZE * SIZE)]
START, GOAL = 0, SIZE * SIZE - 1


def cheapest_path(costs: np.ndarray) -> tuple[list[int], int]:
    """(cell ids of the cheapest start→goal path under the tie rule, its cost) for a (4, 4) cost grid."""
    cost = [int(v) for v in np.asarray(costs).reshape(-1)]
    to_goal: list[int | None] = [None] * (SIZE * SIZE)  # cheapest cost from a cell to the goal, both included
    heap = [(cost[GOAL], GOAL)]
    while heap:
        d, cell = heapq.heappop(heap)
        if to_goal[cell] is not None:
            continue
        to_goal[cell] = d
        for nb in _NEIGHBOURS[cell]:
            if to_goal[nb] is None:
                heapq.heappush(heap, (d + cost[nb], nb))
    reached = [d if d is not None else -1 for d in to_goal]  # the grid is connected: every cell is reached
    path = [START]
    while path[-1] != GOAL:
        here = path[-1]
        path.append(min(nb for nb in _NEIGHBOURS[here] if reached[here] == cost[here] + reached[nb]))
    return path, reached[START]


def edge_name(a: int, b: int) -> str:
    """The variable name of the edge between two grid cells (cells in reading order, so each edge has one name)."""
    (r1, c1), (r2, c2) = sorted((divmod(a, SIZE), divmod(b, SIZE)))
    return f"edge_r{r1}c{c1}_r{r2}c{c2}"


def path_labels(task: Task, paths: list[list[int]]) -> np.ndarray:
    """Label rows (one per map) with the edges of its cheapest path set."""
    column = {}
    y = np.zeros((len(paths), task.num_vars), dtype=np.uint8)
    for i, path in enumerate(paths):
        for a, b in zip(path, path[1:]):
            key = (a, b) if a < b else (b, a)
            if key not in column:
                column[key] = task.index_of(edge_name(a, b)) - 1
            y[i, column[key]] = 1
    return y


def make_warcraft(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Procedural 4 × 4 terrain maps rendered as images, labelled with the edges of their cheapest start-to-goal path."""
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        tiles = rng.choice(len(TILES), size=(n, SIZE, SIZE), p=_PROBS).astype(np.uint8)
        costs = TILE_COSTS[tiles]
        images, paths, totals = [], [], np.zeros(n, dtype=np.int16)
        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            images.append(render_maps(tiles[start:stop], rng))
            for i in range(start, stop):
                path, total = cheapest_path(costs[i])
                paths.append(path)
                totals[i] = total
            ctx.advance(stop - start)
        x = np.concatenate(images) if images else np.zeros((0, 3, SIZE * TILE, SIZE * TILE), dtype=np.uint8)
        out[split] = {
            "x": x,
            "y": path_labels(ctx.task, paths),
            "tiles": tiles,
            "costs": costs.astype(np.uint8),
            "path_cost": totals,
        }
    return out


def describe_warcraft(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """A map's example caption: its cheapest path's cost."""
    return f"cost {int(extras['path_cost'][index])}"


def path_overlay(task: Task, y: np.ndarray) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Line segments (in cell units, centres at .5) of the chosen edges, for drawing on the map."""
    segments = []
    for j in np.flatnonzero(y):
        name = task.names[j]  # edge_r{r}c{c}_r{r'}c{c'}
        a, b = name[len("edge_") :].split("_")
        (r1, c1), (r2, c2) = (int(a[1]), int(a[3])), (int(b[1]), int(b[3]))
        segments.append(((c1 + 0.5, r1 + 0.5), (c2 + 0.5, r2 + 0.5)))
    return segments
