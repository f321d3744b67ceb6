"""A picture grid of image examples with their labels (Pillow only), for ``data show --grid``.

Each cell shows one example, upscaled with nearest-neighbour interpolation to about 128 px wide,
its index, and its label as text from the generator's ``describe`` (e.g. "3 + 4 = 7", the Sudoku's
digits, the objects' colours and shapes). Warcraft maps also get their labelled path drawn on the
map as a red line through the cell centres.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from autonesy.tasks.data.dataset import Dataset
from autonesy.tasks.data.generators import generator_for
from autonesy.tasks.data.store import DataError
from autonesy.tasks.data.warcraft_maps import path_overlay
from autonesy.tasks.task import Task

TARGET_WIDTH = 128
PAD = 6
BACKGROUND = (255, 255, 255)
INK = (20, 20, 20)


def _font():
    try:
        return ImageFont.load_default(size=11)
    except TypeError:  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def _to_rgb(x: np.ndarray) -> np.ndarray:
    """(C, H, W) float in [0, 1] → (H, W, 3) uint8."""
    pixels = np.clip(np.rint(np.asarray(x) * 255), 0, 255).astype(np.uint8)
    if pixels.shape[0] == 1:
        pixels = np.repeat(pixels, 3, axis=0)
    return pixels.transpose(1, 2, 0)


def render_grid(
    task: Task, dataset: Dataset, path: str | Path, split: str = "test", count: int = 16, columns: int = 4
) -> Path:
    """Write a PNG grid of the first ``count`` examples of ``split``; returns the path written."""
    if dataset.modality != "image":
        raise DataError(f"{dataset.task}: its data are feature vectors, not images; --grid is for image tasks")
    if split not in dataset.splits:
        raise DataError(f"unknown split {split!r}; choose one of {', '.join(dataset.splits)}")
    if count < 1 or columns < 1:
        raise DataError("the grid needs at least one example and one column")
    describe = generator_for(task.name).describe
    data = dataset.splits[split]
    count = min(count, len(data))
    font = _font()
    scratch = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    cells = []
    for i in range(count):
        image = Image.fromarray(_to_rgb(data.x[i]), "RGB")
        scale = max(1, math.ceil(TARGET_WIDTH / image.width))
        image = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
        if dataset.task == "warcraft":
            draw = ImageDraw.Draw(image)
            cell = image.width / 4
            for (x1, y1), (x2, y2) in path_overlay(task, data.y[i]):
                draw.line([(x1 * cell, y1 * cell), (x2 * cell, y2 * cell)], fill=(230, 30, 30), width=max(2, scale))
        text = f"#{i}\n" + describe(task, data.extras, i, data.y[i])
        box = scratch.multiline_textbbox((0, 0), text, font=font, spacing=2)
        cells.append((image, text, box[2] - box[0], box[3] - box[1]))
    cell_w = max(max(img.width, tw) for img, _, tw, _ in cells) + 2 * PAD
    cell_h = max(img.height + th for img, _, _, th in cells) + 3 * PAD
    title = f"{dataset.task}: {split} split, seed {dataset.seed}, {dataset.provenance} data"
    title_h = scratch.textbbox((0, 0), title, font=font)[3] + 2 * PAD
    columns = min(columns, count)
    rows = math.ceil(count / columns)
    sheet = Image.new(
        "RGB",
        (max(columns * cell_w, scratch.textbbox((0, 0), title, font=font)[2] + 2 * PAD), title_h + rows * cell_h),
        BACKGROUND,
    )
    draw = ImageDraw.Draw(sheet)
    draw.text((PAD, PAD), title, fill=INK, font=font)
    for k, (image, text, _, _) in enumerate(cells):
        left, top = (k % columns) * cell_w + PAD, title_h + (k // columns) * cell_h + PAD
        sheet.paste(image, (left, top))
        draw.multiline_text((left, top + image.height + PAD // 2), text, fill=INK, font=font, spacing=2)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path, format="PNG")
    return path
