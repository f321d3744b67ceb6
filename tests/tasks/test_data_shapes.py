"""Rendered primitives: object k is drawn where the layout says, in the labelled colour."""

import numpy as np
import pytest

from autonesy.tasks.catalogue.visual import CLEVR_COLOURS, KANDINSKY_COLOURS
from autonesy.tasks.data.dataset import generate
from autonesy.tasks.data.shapes import CLEVR_RGB, KANDINSKY_RGB, decode_objects
from autonesy.tasks.registry import get_task


def _dominant_colour(region: np.ndarray, palette: dict, names) -> int:
    """Index (in ``names``) of the palette colour nearest to the region's saturated pixels."""
    pixels = region.reshape(3, -1).T.astype(float)
    saturation = pixels.max(axis=1) - pixels.min(axis=1)
    top = np.argsort(-saturation)[:20]  # the most colourful pixels: the object's (the background is grey)
    assert saturation[top].min() > 40, "no coloured object in this region"
    mean = pixels[top].mean(axis=0)
    return int(np.argmin([np.linalg.norm(mean - np.array(palette[n])) for n in names]))


@pytest.mark.parametrize("name, prims", [("kand-logic-2", 2), ("kand-logic", 3)])
def test_kandinsky_object_k_sits_in_band_k_with_its_colour(name, prims):
    task = get_task(name)
    data = generate(get_task(name), seed=0, sizes={"train": 60, "val": 1, "test": 1})["train"]
    prefixes = [f"img{i}_obj{k}" for i in (1, 2) for k in range(1, prims + 1)]
    objects = decode_objects(task, data["y"], prefixes, ("square", "circle", "triangle"), KANDINSKY_COLOURS)
    band, width = 16, 16 * prims
    for i in range(len(data["y"])):
        for image in range(2):
            for k in range(prims):
                lo, hi = image * width + k * band, image * width + (k + 1) * band
                colour = _dominant_colour(data["x"][i, :, :, lo:hi], KANDINSKY_RGB, KANDINSKY_COLOURS)
                assert colour == objects[i, image * prims + k, 1]


def test_clevr_objects_are_left_and_right_and_identical_in_label():
    task = get_task("cle4evr")
    data = generate(get_task("cle4evr"), seed=0, sizes={"train": 60, "val": 1, "test": 1})["train"]
    objects = decode_objects(task, data["y"], ["obj1", "obj2"], ("cube", "sphere", "cylinder"), CLEVR_COLOURS)
    assert (objects[:, 0] == objects[:, 1]).all()  # the constraint: same shape and colour
    agree = [
        _dominant_colour(data["x"][i, :, :, 24 * k : 24 * (k + 1)], CLEVR_RGB, CLEVR_COLOURS) == objects[i, k, 1]
        for i in range(len(objects))
        for k in range(2)
    ]
    assert np.mean(agree) >= 0.95  # colour jitter and shading make a few objects ambiguous on purpose


def test_labels_cover_many_concept_combinations():
    data = generate(get_task("kand-logic"), seed=0, sizes={"train": 400, "val": 1, "test": 1})["train"]
    assert len(np.unique(data["y"], axis=0)) > 350
    assert data["x"].shape == (400, 3, 32, 96)
