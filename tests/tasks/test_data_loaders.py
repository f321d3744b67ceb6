"""Loaders for the original datasets, on tiny fixture files written in each original layout."""

from __future__ import annotations

import pickle

import numpy as np
import original_fixtures as F
import pytest

from autonesy.tasks.catalogue import classification as cls
from autonesy.tasks.data import rsbench
from autonesy.tasks.data.loaders import (
    ORIGINAL_SOURCES,
    OriginalDataError,
    load_cifar,
    load_original,
    load_sushi,
    load_warcraft,
    path_matrix_to_edges,
    sushi_orders_to_rankings,
)
from autonesy.tasks.data.store import DataError
from autonesy.tasks.registry import TASK_NAMES, get_task

WARCRAFT, SUSHI = get_task("warcraft"), get_task("sushi")


def row(task_name: str, true_names) -> np.ndarray:
    """The label row with exactly ``true_names`` set."""
    task = get_task(task_name)
    y = np.zeros(task.num_vars, dtype=np.uint8)
    for name in true_names:
        y[task.index_of(name) - 1] = 1
    return y


def check_data(data, task_name: str) -> None:
    task = get_task(task_name)
    assert data.task == task_name and data.provenance == "real" and data.manifest["format"] == "original"
    assert set(data.splits) == {"train", "val", "test"}
    assert data.sizes == {name: len(split) for name, split in data.splits.items()}
    for name, split in data.splits.items():
        assert split.name == name and all(len(v) == len(split) for v in split.extras.values())
        assert split.x.dtype == np.float32 and split.y.dtype == np.uint8
        assert split.y.shape == (len(split.x), task.num_vars)
        assert task.oracle_batch(split.y).all()  # independent of the SDD check inside the loader


# ------------------------------------------------------------------------------------------ Warcraft


def test_path_matrix_to_edges_exact():
    y = path_matrix_to_edges(np.stack([F.STAIR_PATH, F.RIM_PATH]))
    assert (y[0] == row("warcraft", F.STAIR_EDGES)).all()
    assert (y[1] == row("warcraft", F.RIM_EDGES)).all()


def test_warcraft_loads_oneskin_layout(tmp_path):
    folder = F.write_warcraft(tmp_path / "warcraft_shortest_path_oneskin" / "4x4")
    data = load_warcraft(WARCRAFT, tmp_path)  # finds warcraft_shortest_path_oneskin/4x4 below the given directory
    check_data(data, "warcraft")
    train = data.train
    assert (train.y[0] == row("warcraft", F.STAIR_EDGES)).all()
    assert (train.y[1] == row("warcraft", F.RIM_EDGES)).all()
    assert (data.val.y[0] == row("warcraft", F.RIM_EDGES)).all()
    maps = np.load(folder / "train_maps.npy")
    assert train.x.shape == (2, 3, 32, 32)
    np.testing.assert_allclose(train.x, np.moveaxis(maps, -1, 1) / 255.0, rtol=1e-6)
    assert data.manifest["dropped"] == {"train": 0, "val": 0, "test": 0}
    np.testing.assert_array_equal(data.test.extras["costs"], np.load(folder / "test_vertex_weights.npy"))
    assert data.modality == "image" and data.directory == folder


def test_warcraft_accepts_the_4x4_folder_itself_and_no_weights(tmp_path):
    F.write_warcraft(tmp_path, weights=False)
    assert len(load_warcraft(WARCRAFT, tmp_path).train.y) == 2


def test_warcraft_other_grid_sizes_are_refused(tmp_path):
    F.write_warcraft(tmp_path / "12x12", k=12)
    with pytest.raises(OriginalDataError, match=r"12x12.*4x4.*cropping"):
        load_warcraft(WARCRAFT, tmp_path)
    with pytest.raises(OriginalDataError, match=r"12x12 grid.*cropping is not supported"):
        load_warcraft(WARCRAFT, tmp_path / "12x12")


def test_warcraft_missing_file_is_named(tmp_path):
    F.write_warcraft(tmp_path)
    (tmp_path / "val_shortest_paths.npy").unlink()
    with pytest.raises(OriginalDataError, match=r"missing file val_shortest_paths\.npy") as info:
        load_warcraft(WARCRAFT, tmp_path)
    assert "\n" not in str(info.value)


def test_warcraft_bad_map_shape(tmp_path):
    F.write_warcraft(tmp_path)
    np.save(tmp_path / "test_maps.npy", np.zeros((1, 32, 32), dtype=np.uint8))
    with pytest.raises(OriginalDataError, match=r"test_maps\.npy: the map image array has shape \(1, 32, 32\)"):
        load_warcraft(WARCRAFT, tmp_path)


def test_warcraft_diagonal_paths_violate_and_can_be_dropped(tmp_path):
    paths = {
        "train": np.stack([F.STAIR_PATH, F.DIAGONAL_PATH, F.DIAGONAL_PATH]),
        "val": F.RIM_PATH[None],
        "test": F.RIM_PATH[None],
    }
    F.write_warcraft(tmp_path, paths=paths)
    with pytest.raises(OriginalDataError, match=r"2 of 3 train label rows violate the warcraft constraint.*diagonal"):
        load_warcraft(WARCRAFT, tmp_path)
    data = load_warcraft(WARCRAFT, tmp_path, invalid="drop")
    assert data.manifest["dropped"]["train"] == 2 and len(data.train.y) == 1
    check_data(data, "warcraft")


def test_not_a_directory(tmp_path):
    with pytest.raises(OriginalDataError, match="not a directory"):
        load_warcraft(WARCRAFT, tmp_path / "nowhere")
    assert issubclass(OriginalDataError, DataError)


# -------------------------------------------------------------------------------------------- CIFAR

HORSE = ("horse", "is_animal", "has_hooves", "does_work")


def test_cifar10_pickles(tmp_path):
    folder = F.write_cifar10(tmp_path)
    data = load_cifar(get_task("cifar10"), tmp_path, val_fraction=0.2)
    check_data(data, "cifar10")
    assert [data.sizes[s] for s in ("train", "val", "test")] == [8, 2, 3]
    assert (data.test.y[0] == row("cifar10", HORSE)).all()
    assert (data.test.y[1] == row("cifar10", ["airplane", "flies"])).all()
    assert (data.val.y[1] == row("cifar10", ["truck", "does_work"])).all()  # the last training image
    raw = pickle.loads((folder / "test_batch").read_bytes(), encoding="bytes")[b"data"]
    # row layout: 1024 red, 1024 green, 1024 blue values, each 32 rows of 32 pixels
    assert data.test.x[0, 2, 5, 7] == pytest.approx(raw[0, 2 * 1024 + 5 * 32 + 7] / 255.0)
    assert data.test.x.shape == (3, 3, 32, 32)
    assert data.test.extras["labels"].tolist() == [7, 0, 9]


def test_cifar10_missing_batch_and_wrong_names(tmp_path):
    folder = F.write_cifar10(tmp_path)
    (folder / "data_batch_3").unlink()
    with pytest.raises(OriginalDataError, match=r"missing file data_batch_3"):
        load_cifar(get_task("cifar10"), tmp_path)
    folder = F.write_cifar10(tmp_path / "b")
    meta = {b"label_names": [n.encode() for n in reversed(F.CIFAR10_NAMES)]}
    (folder / "batches.meta").write_bytes(pickle.dumps(meta, protocol=2))
    with pytest.raises(OriginalDataError, match="class names"):
        load_cifar(get_task("cifar10"), folder)


def test_cifar_pickles_cannot_run_code(tmp_path):
    folder = F.write_cifar10(tmp_path)

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))

    (folder / "test_batch").write_bytes(pickle.dumps({b"data": Evil(), b"labels": []}, protocol=2))
    with pytest.raises(OriginalDataError, match=r"refusing to load (__builtin__|builtins)\.print"):
        load_cifar(get_task("cifar10"), folder)


def test_cifar10_bad_shape(tmp_path):
    folder = F.write_cifar10(tmp_path)
    (folder / "test_batch").write_bytes(
        pickle.dumps({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}, protocol=2)
    )
    with pytest.raises(OriginalDataError, match=r"test_batch: b'data' has shape \(2, 100\), expected \(\*, 3072\)"):
        load_cifar(get_task("cifar10"), folder)


def test_cifar100_pickles(tmp_path):
    F.write_cifar100(tmp_path, list(cls.CIFAR100_CLASSES), [0, 5, 99, 50, 3, 12, 40, 41, 7, 8], [1, 98])
    data = load_cifar(get_task("cifar100"), tmp_path)
    check_data(data, "cifar100")
    assert data.train.y.argmax(axis=1).tolist() == [0, 5, 99, 50, 3, 12, 40, 41, 7]
    assert data.val.y.argmax(axis=1).tolist() == [8]
    assert (data.test.y[1] == row("cifar100", ["woman"])).all()
    with pytest.raises(OriginalDataError, match=r"missing file test"):
        (tmp_path / "cifar-100-python" / "test").unlink()
        load_cifar(get_task("cifar100"), tmp_path)


# -------------------------------------------------------------------------------------------- SUSHI


def test_sushi_rankings_restricted_to_our_four_items(tmp_path):
    y = sushi_orders_to_rankings(SUSHI, np.array(F.SUSHI_ORDERS))
    # fatty tuna, tuna, salmon roe, sea urchin
    assert (y[0] == row("sushi", ["fatty_tuna_rank_1", "tuna_rank_2", "salmon_roe_rank_3", "sea_urchin_rank_4"])).all()
    # sea urchin, salmon roe, tuna, fatty tuna
    assert (y[1] == row("sushi", ["sea_urchin_rank_1", "salmon_roe_rank_2", "tuna_rank_3", "fatty_tuna_rank_4"])).all()
    # salmon roe, fatty tuna, tuna, sea urchin
    assert (y[2] == row("sushi", ["salmon_roe_rank_1", "fatty_tuna_rank_2", "tuna_rank_3", "sea_urchin_rank_4"])).all()


def test_sushi_files(tmp_path):
    F.write_sushi(tmp_path)
    data = load_sushi(SUSHI, tmp_path, holdout=0.1)
    check_data(data, "sushi")
    assert [data.sizes[s] for s in ("train", "val", "test")] == [10, 1, 1]
    assert data.train.x.shape == (10, 10) and data.modality == "features"
    assert data.train.extras["orders"][0].tolist() == F.SUSHI_ORDERS[0]
    assert data.train.x[3].tolist() == [1, 3, 303, 3, 3, 1, 4, 4, 0, 1]  # user 3, ID column dropped
    assert (data.test.y[0] == sushi_orders_to_rankings(SUSHI, np.array([F.SUSHI_ORDERS[11 % 3]]))[0]).all()


def test_sushi_bad_lines(tmp_path):
    folder = F.write_sushi(tmp_path, orders=F.SUSHI_ORDERS * 4)
    lines = (folder / "sushi3a.5000.10.order").read_text().splitlines()
    lines[3] = "0 10 1 2 3 4 5 6 7 8 9"
    (folder / "sushi3a.5000.10.order").write_text("\n".join(lines))
    with pytest.raises(OriginalDataError, match=r"sushi3a\.5000\.10\.order:4: expected '0 10'"):
        load_sushi(SUSHI, tmp_path)
    F.write_sushi(tmp_path / "b", users=5)
    with pytest.raises(OriginalDataError, match=r"12 rankings but 5 user rows"):
        load_sushi(SUSHI, tmp_path / "b")
    (tmp_path / "empty").mkdir()
    with pytest.raises(OriginalDataError, match=r"empty: missing file sushi3a\.5000\.10\.order"):
        load_sushi(SUSHI, tmp_path / "empty")


# ------------------------------------------------------------------------------------ rsbench MNIST

MNIST_DIGITS = {"train": [(3, 4), (9, 9)], "val": [(0, 7)], "test": [(2, 5)]}


@pytest.mark.parametrize(
    "task_name, expected",
    [
        ("mn-add", ["first_digit_3", "second_digit_4", "sum_7"]),
        # 3 = bits 1,1,0,0; 4 = 0,0,1,0; 7 = 1,1,1,0,0; 12 = 0,0,1,1,0,0,0 (least significant first)
        (
            "mn-add-bin",
            ["first_digit_bit0", "first_digit_bit1", "second_digit_bit2", "sum_bit0", "sum_bit1", "sum_bit2"],
        ),
        ("mn-mul-bin", ["first_digit_bit0", "first_digit_bit1", "second_digit_bit2", "product_bit2", "product_bit3"]),
    ],
)
def test_rsbench_mnist_pt(tmp_path, task_name, expected):
    F.write_mnist_pt(tmp_path / "2mnist_10digits" / "2mnist_10digits.pt", MNIST_DIGITS)
    data = rsbench.load_rsbench_mnist(get_task(task_name), tmp_path)
    check_data(data, task_name)
    assert (data.train.y[0] == row(task_name, expected)).all()
    assert data.train.x.shape == (2, 1, 28, 56) and 0.0 <= data.train.x.min() <= data.train.x.max() <= 1.0
    assert data.train.extras["digits"].tolist() == [[3, 4], [9, 9]]


def test_digits_to_labels_one_hot_product():
    # mn-mul's SDD takes a second to compile, so its mapping is checked here against the oracle
    y = rsbench.digits_to_labels(get_task("mn-mul"), np.array([3, 9, 0]), np.array([4, 9, 7]))
    assert (y[0] == row("mn-mul", ["first_digit_3", "second_digit_4", "product_12"])).all()
    assert (y[1] == row("mn-mul", ["first_digit_9", "second_digit_9", "product_81"])).all()
    assert (y[2] == row("mn-mul", ["first_digit_0", "second_digit_7", "product_0"])).all()
    assert get_task("mn-mul").oracle_batch(y).all()


def test_rsbench_mnist_pt_bad_sum_column(tmp_path):
    path = F.write_mnist_pt(tmp_path / "2mnist_10digits.pt", MNIST_DIGITS, bad_sum=True)
    with pytest.raises(OriginalDataError, match="not the sum of the two digits"):
        rsbench.load_rsbench_mnist(get_task("mn-add"), path)


def test_rsbench_mnist_rssgen_folders(tmp_path):
    F.write_rssgen_mnist(tmp_path, {"train": [(3, 4), (1, 2)], "val": [(0, 0)], "test": [(6, 6)]})
    data = rsbench.load_rsbench_mnist(get_task("mn-add"), tmp_path)
    check_data(data, "mn-add")
    assert (data.test.y[0] == row("mn-add", ["first_digit_6", "second_digit_6", "sum_12"])).all()
    assert data.train.x.shape == (2, 1, 28, 56)
    assert data.train.x[1, 0, 0, 0] == pytest.approx(10 / 255.0, abs=1e-6)  # grey level of sample 1


def test_rsbench_mnist_layout_errors(tmp_path):
    with pytest.raises(OriginalDataError, match=r"missing file 2mnist_10digits\.pt or folder train/"):
        rsbench.load_rsbench_mnist(get_task("mn-add"), tmp_path)
    F.write_rssgen_mnist(tmp_path, {"train": [(3, 4)], "val": [(0, 0)], "test": [(6, 6)]})
    (tmp_path / "val" / "0.png").unlink()
    with pytest.raises(OriginalDataError, match=r"missing file 0\.png"):
        rsbench.load_rsbench_mnist(get_task("mn-add"), tmp_path)
    F.write_rssgen_mnist(tmp_path / "three", {s: [(1, 2, 3)] for s in F.SPLITS})
    with pytest.raises(OriginalDataError, match="3 digits; only two-digit samples"):
        rsbench.load_rsbench_mnist(get_task("mn-add"), tmp_path / "three")


# -------------------------------------------------------------------------------- rsbench Kandinsky

# figures as (shapes per object, colours per object); shapes 0-2 square/circle/triangle, colours red/yellow/blue
VALID_3 = [([0, 0, 0], [0, 1, 2]), ([1, 1, 1], [2, 2, 2]), ([0, 1, 2], [0, 0, 0])]  # both 'same' shapes
INVALID_3 = [
    ([0, 0, 0], [0, 0, 0]),
    ([0, 1, 2], [0, 0, 1]),
    ([0, 0, 0], [0, 0, 0]),
]  # shapes same/different, colours same/pair


def test_rsbench_kandinsky_3k(tmp_path):
    F.write_kandinsky_3k(
        tmp_path, {"train": [VALID_3, INVALID_3, VALID_3], "val": [VALID_3], "test": [INVALID_3, VALID_3]}
    )
    data = rsbench.load_rsbench_kandinsky(get_task("kand-logic"), tmp_path)
    check_data(data, "kand-logic")
    assert data.manifest["dropped"] == {"train": 1, "val": 0, "test": 1}
    expected = [f"img1_obj{k}_square" for k in (1, 2, 3)] + ["img1_obj1_red", "img1_obj2_yellow", "img1_obj3_blue"]
    expected += [f"img2_obj{k}_circle" for k in (1, 2, 3)] + [f"img2_obj{k}_blue" for k in (1, 2, 3)]
    assert (data.train.y[0] == row("kand-logic", expected)).all()
    # three figures of 8 px side by side: x keeps the left two
    assert data.train.x.shape == (2, 3, 8, 16)
    assert data.train.x[0, 0, 0, 0] == pytest.approx(40 / 255) and data.train.x[0, 0, 0, 15] == pytest.approx(80 / 255)
    with pytest.raises(OriginalDataError, match=r"1 of 3 train label rows violate the kand-logic constraint"):
        rsbench.load_rsbench_kandinsky(get_task("kand-logic"), tmp_path, invalid="raise")


def test_rsbench_kandinsky_rssgen_two_objects(tmp_path):
    # codes: shapes 4 square, 5 circle, 6 triangle; colours 1 red, 2 yellow, 3 blue; [shape, colour] per object
    F.write_kandinsky_rssgen(tmp_path, {s: [[[4, 1, 4, 2], [5, 3, 5, 1]]] for s in F.SPLITS})
    data = rsbench.load_rsbench_kandinsky(get_task("kand-logic-2"), tmp_path)
    check_data(data, "kand-logic-2")
    expected = [
        "img1_obj1_square",
        "img1_obj1_red",
        "img1_obj2_square",
        "img1_obj2_yellow",
        "img2_obj1_circle",
        "img2_obj1_blue",
        "img2_obj2_circle",
        "img2_obj2_red",
    ]
    assert (data.val.y[0] == row("kand-logic-2", expected)).all()
    assert data.val.x.shape == (1, 3, 6, 12)


def test_rsbench_kandinsky_object_count_must_match(tmp_path):
    F.write_kandinsky_3k(tmp_path, {s: [VALID_3] for s in F.SPLITS})
    with pytest.raises(OriginalDataError, match="figures with 3 objects; this task needs exactly 2"):
        rsbench.load_rsbench_kandinsky(get_task("kand-logic-2"), tmp_path)
    with pytest.raises(OriginalDataError, match=r"missing folder train/"):
        rsbench.load_rsbench_kandinsky(get_task("kand-logic"), tmp_path / "val")


# ---------------------------------------------------------------------------------- rsbench BDD-OIA

# red light and a car: stop, not forward; a left-turn lane and nothing forbidding: turn left
SCENE = ({"red_light", "car", "left_lane"}, [0, 1, 1, 0])
BAD_SCENE = ({"red_light"}, [1, 0, 0, 0])  # moves forward through a red light


def test_rsbench_bdd_oia_concepts_mapped_by_name(tmp_path):
    F.write_bdd2048(tmp_path / "bdd2048", {s: [SCENE, SCENE] for s in F.SPLITS})
    data = rsbench.load_rsbench_bdd_oia(get_task("bdd-oia"), tmp_path)
    check_data(data, "bdd-oia")
    assert (data.train.y[0] == row("bdd-oia", ["red_light", "car", "left_lane", "stop", "turn_left"])).all()
    assert data.train.x.shape == (2, 8) and data.train.x[1].tolist() == [1.0] * 8
    small = rsbench.load_rsbench_bdd_oia(get_task("bdd-oia-2"), tmp_path / "bdd2048")
    assert (small.test.y[0] == row("bdd-oia-2", ["red_light", "car", "stop"])).all()


def test_rsbench_bdd_oia_violations_and_layout(tmp_path):
    F.write_bdd2048(tmp_path, {"train": [SCENE, BAD_SCENE], "val": [SCENE], "test": [SCENE]})
    with pytest.raises(OriginalDataError, match=r"1 of 2 train label rows violate the bdd-oia-2 constraint"):
        rsbench.load_rsbench_bdd_oia(get_task("bdd-oia-2"), tmp_path)
    assert (
        rsbench.load_rsbench_bdd_oia(get_task("bdd-oia-2"), tmp_path, invalid="drop").manifest["dropped"]["train"] == 1
    )
    (tmp_path / "test" / "concepts" / "frame000.pt").unlink()
    with pytest.raises(OriginalDataError, match=r"missing file frame000\.pt \(paired with inputs/frame000\.pt\)"):
        rsbench.load_rsbench_bdd_oia(get_task("bdd-oia-2"), tmp_path, invalid="drop")


# --------------------------------------------------------------------------------------- dispatcher


def test_one_data_directory_holds_every_original(tmp_path):
    """Each original sits in its own folder under one data directory (next to generated/)."""
    F.write_warcraft(tmp_path / "warcraft_shortest_path_oneskin" / "4x4")
    F.write_cifar10(tmp_path)
    F.write_sushi(tmp_path)
    F.write_mnist_pt(tmp_path / "2mnist_10digits" / "2mnist_10digits.pt", MNIST_DIGITS)
    F.write_kandinsky_3k(tmp_path / "kandinsky-3k-original", {s: [VALID_3] for s in F.SPLITS})
    F.write_bdd2048(tmp_path / "bdd2048", {s: [SCENE] for s in F.SPLITS})
    for task_name in ("warcraft", "cifar10", "sushi", "mn-add-bin", "kand-logic", "bdd-oia-2"):
        check_data(load_original(get_task(task_name), tmp_path), task_name)


def test_load_original_dispatch(tmp_path):
    F.write_sushi(tmp_path)
    assert load_original(get_task("sushi"), tmp_path).task == "sushi"
    with pytest.raises(OriginalDataError, match="no original-format loader for task 'chx'"):
        load_original(get_task("chx"), tmp_path)
    assert set(ORIGINAL_SOURCES) <= set(TASK_NAMES)


@pytest.mark.parametrize("task_name", ["cifar10", "sushi", "mn-add", "kand-logic", "bdd-oia", "warcraft"])
def test_each_loader_refuses_another_task(tmp_path, task_name):
    """A loader reads one source: handed another source's Task it says which tasks it reads."""
    other = "sushi" if task_name != "sushi" else "warcraft"
    loader = ORIGINAL_SOURCES[task_name][0]
    with pytest.raises(ValueError, match=f"reads .*{task_name}.*, not '{other}'"):
        loader(get_task(other), tmp_path)


# ----------------------------------------------------------------------------------------------- CLI


def test_cli_data_load(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    runner = CliRunner()
    paths = {"train": np.stack([F.STAIR_PATH, F.DIAGONAL_PATH]), "val": F.RIM_PATH[None], "test": F.RIM_PATH[None]}
    F.write_warcraft(tmp_path / "4x4", paths=paths)
    result = runner.invoke(app, ["data", "load", "warcraft", "--source", str(tmp_path)])
    assert result.exit_code == 1
    assert (
        result.output.count("\n") == 1
        and result.output.startswith("error: ")
        and "1 of 2 train label rows" in result.output
    )
    monkeypatch.setenv("AUTONESY_DATA_DIR", str(tmp_path))  # the data directory, where originals sit too
    result = runner.invoke(app, ["data", "load", "warcraft", "--drop-invalid", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["sizes"] == {"train": 1, "val": 1, "test": 1} and record["dropped"]["train"] == 1
    assert record["provenance"] == "real" and record["splits"]["train"]["all_valid"]
    result = runner.invoke(app, ["data", "load", "chx", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1 and "no original-format loader for task 'chx'" in result.output
