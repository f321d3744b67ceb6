"""Warcraft maps: the label is the cheapest simple path under the documented tie rule."""

import numpy as np

from autonesy.tasks.data.dataset import generate
from autonesy.tasks.data.warcraft_maps import TILE_COSTS, cheapest_path, path_labels
from autonesy.tasks.registry import get_task


def _cell(name_part: str) -> int:  # "r1c2" -> 6
    return 4 * int(name_part[1]) + int(name_part[3])


def _all_paths(task):
    """The 184 valid edge sets from the task's own enumeration, each as its walk of cell ids."""
    paths = []
    for row in task.enumerate_valid():
        edges = [task.names[j][len("edge_") :].split("_") for j, v in enumerate(row) if v]
        adjacency = {}
        for a, b in edges:
            adjacency.setdefault(_cell(a), []).append(_cell(b))
            adjacency.setdefault(_cell(b), []).append(_cell(a))
        walk, previous = [0], None
        while walk[-1] != 15:
            nxt = [c for c in adjacency[walk[-1]] if c != previous]
            previous = walk[-1]
            walk.append(nxt[0])
        paths.append((walk, np.array(row, dtype=np.uint8)))
    return paths


def _brute_force(paths, costs):
    flat = costs.reshape(-1)
    return min(paths, key=lambda p: (int(flat[p[0]].sum()), p[0]))


def test_labels_equal_a_brute_force_cheapest_path():
    task = get_task("warcraft")
    paths = _all_paths(task)
    assert len(paths) == 184
    data = generate(get_task("warcraft"), seed=5, sizes={"train": 150, "val": 5, "test": 5})["train"]
    for i in range(len(data["y"])):
        walk, row = _brute_force(paths, data["costs"][i])
        np.testing.assert_array_equal(data["y"][i], row)
        assert data["path_cost"][i] == data["costs"][i].reshape(-1)[walk].sum()
    np.testing.assert_array_equal(data["costs"], TILE_COSTS[data["tiles"]])


def test_ties_go_to_the_lexicographically_smallest_cell_sequence():
    task = get_task("warcraft")
    paths = _all_paths(task)
    flat = np.ones((4, 4), dtype=int)
    path, cost = cheapest_path(flat)
    assert path == [0, 1, 2, 3, 7, 11, 15] and cost == 7  # along the top row, then down
    rng = np.random.default_rng(0)
    for _ in range(300):  # costs from a tiny range: many ties
        costs = rng.integers(1, 3, size=(4, 4))
        walk, row = _brute_force(paths, costs)
        found, total = cheapest_path(costs)
        assert found == walk and total == costs.reshape(-1)[walk].sum()
        np.testing.assert_array_equal(path_labels(task, [found])[0], row)


def test_tiles_look_different():
    data = generate(get_task("warcraft"), seed=0, sizes={"train": 300, "val": 5, "test": 5})["train"]
    x, tiles = data["x"].astype(float), data["tiles"]
    cells = x.reshape(-1, 3, 4, 8, 4, 8).transpose(0, 2, 4, 1, 3, 5).reshape(-1, 3, 64)
    means = np.array([cells[tiles.reshape(-1) == t].mean(axis=(0, 2)) for t in range(len(TILE_COSTS))])
    gaps = np.linalg.norm(means[:, None] - means[None], axis=-1) + np.eye(len(means)) * 1e9
    assert gaps.min() > 15  # every pair of tile types differs in mean colour
