"""Handwritten-digit tasks: disjoint image pools, images that match their labels, exact encodings."""

import numpy as np
import pytest

from autonesy.tasks.data.context import stream_rng
from autonesy.tasks.data.dataset import generate
from autonesy.tasks.data.digits import arithmetic_labels, digit_pools, load_digit_images, shift_images
from autonesy.tasks.registry import get_task

SIZES = {"train": 200, "val": 50, "test": 200}


def test_pools_are_disjoint_and_cover_every_image():
    images, labels = load_digit_images()
    pools = digit_pools(np.random.default_rng(0))
    seen = np.concatenate([ids for split in pools.values() for ids in split.values()])
    assert len(seen) == len(images) == len(np.unique(seen))
    for split in pools.values():
        for digit, ids in split.items():
            assert (labels[ids] == digit).all()
    assert 0.55 < sum(len(v) for v in pools["train"].values()) / len(images) < 0.65


@pytest.mark.parametrize("name", ["mn-add", "mn-add-bin", "mn-mul", "mn-mul-bin", "sudoku"])
def test_test_images_never_appear_in_train(name):
    arrays = generate(get_task(name), seed=0, sizes=SIZES)
    train, test = set(arrays["train"]["image_ids"].ravel()), set(arrays["test"]["image_ids"].ravel())
    assert train and test and not (train & test)


@pytest.mark.parametrize("name", ["mn-add", "mn-add-bin", "mn-mul", "mn-mul-bin"])
def test_arithmetic_inputs_show_the_labelled_digits(name):
    task = get_task(name)
    images, labels = load_digit_images()
    data = generate(get_task(name), seed=2, sizes=SIZES)["train"]
    ids, digits = data["image_ids"], data["digits"]
    np.testing.assert_array_equal(labels[ids], digits)
    np.testing.assert_array_equal(data["x"][:, 0, :, :8], images[ids[:, 0]])
    np.testing.assert_array_equal(data["x"][:, 0, :, 8:], images[ids[:, 1]])
    np.testing.assert_array_equal(
        data["y"], arithmetic_labels(task, digits[:, 0].astype(int), digits[:, 1].astype(int))
    )


@pytest.mark.parametrize("name", ["mn-add", "mn-add-bin", "mn-mul", "mn-mul-bin"])
def test_arithmetic_labels_are_exactly_the_tasks_models(name):
    task = get_task(name)
    a, b = np.divmod(np.arange(100), 10)
    y = arithmetic_labels(task, a, b)
    expected = np.array(list(task.enumerate_valid()), dtype=np.uint8)  # product order (a, b)
    np.testing.assert_array_equal(y, expected)


def test_sudoku_mosaic_places_each_cell():
    task = get_task("sudoku")
    images, labels = load_digit_images()
    data = generate(get_task("sudoku"), seed=0, sizes=SIZES)["val"]
    x, ids, grid, shifts = data["x"], data["image_ids"], data["grid"], data["shifts"]
    assert set(np.unique(shifts)) == {-1, 0, 1}
    for r in range(4):
        for c in range(4):
            k = 4 * r + c
            expected = shift_images(images[ids[:, k]], shifts[:, k])
            np.testing.assert_array_equal(x[:, 0, 8 * r : 8 * r + 8, 8 * c : 8 * c + 8], expected)
            np.testing.assert_array_equal(labels[ids[:, 4 * r + c]], grid[:, r, c])
            for d in range(1, 5):
                np.testing.assert_array_equal(
                    data["y"][:, task.index_of(f"r{r + 1}c{c + 1}_is_{d}") - 1], grid[:, r, c] == d
                )


def test_shift_images_moves_content_and_fills_with_background():
    image = np.arange(1, 65, dtype=np.uint8).reshape(1, 8, 8)
    down = shift_images(image, np.array([[1, 0]]))[0]
    assert (down[0] == 0).all() and (down[1:] == image[0, :-1]).all()
    left = shift_images(image, np.array([[0, -1]]))[0]
    assert (left[:, -1] == 0).all() and (left[:, :-1] == image[0, :, 1:]).all()
    np.testing.assert_array_equal(shift_images(image, np.array([[0, 0]])), image)


def test_pool_split_depends_on_the_seed():
    a = digit_pools(stream_rng("mn-add", 0, "digit-pools"))
    b = digit_pools(stream_rng("mn-add", 1, "digit-pools"))
    assert not np.array_equal(a["test"][3], b["test"][3])
