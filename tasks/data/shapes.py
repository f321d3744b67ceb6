"""Rendered coloured primitives for kand-logic, kand-logic-2 (Kandinsky patterns) and cle4evr (CLEVR-style).

Labels. Each example's label row is drawn uniformly from the task's models with the exact SDD
sampler (:mod:`sampling`); the image is then drawn to show exactly those concepts. Shapes and
colours are decoded from the variable names (``img{i}_obj{k}_{shape|colour}``, ``obj{k}_…``).

Rendering (Pillow, drawn at 4× and downsampled with a box filter, i.e. anti-aliased):

* Kandinsky (``kand-logic-2``: 2 primitives per image, ``kand-logic``: 3). Each image is 32 px high
  and 16 px wide per primitive (32 × 32, or 32 × 48), on a light grey background, cut into
  16-px vertical bands: primitive k (1-based, the variable's ``obj{k}``) sits in the k-th band from
  the left, at a random height and with a little horizontal jitter, so "object k" is well defined.
  Shapes: square, circle, upright triangle, random size (radius 4.5–6.5 px). Colours: red, yellow,
  blue with per-object jitter. The two images are placed side by side: x has shape (B, 3, 32, 64)
  for kand-logic-2 and (B, 3, 32, 96) for kand-logic, image 1 on the left.
* CLEVR-style (``cle4evr``). A 48 × 32 scene (CLEVR's 3:2 aspect) with a floor gradient and two
  objects: object 1 in the left half, object 2 in the right half. Each object gets a random depth —
  further objects sit higher and are drawn smaller (radius 3.2–5.6 px) — a soft shadow, and a random material (matte,
  or metal with a specular highlight) as a distractor attribute, as in CLEVR. Shapes: cube (front,
  top and side faces shaded), sphere (radial shading), cylinder (body with elliptic top). Colours:
  red, green, blue with jitter, times a per-object lighting factor in [0.7, 1.2]. x has shape (B, 3, 32, 48).

Both add Gaussian pixel noise (s.d. ``NOISE``) after downsampling. Stored as uint8 (scaled to
[0, 1] on load). Nothing else is stored: the label row holds every concept.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from autonesy.tasks.catalogue.visual import CLEVR_COLOURS, CLEVR_SHAPES, KANDINSKY_COLOURS, KANDINSKY_SHAPES
from autonesy.tasks.data.context import SPLITS, GenerationContext
from autonesy.tasks.data.sampling import sample_valid
from autonesy.tasks.task import Task

VERSION = "shapes-3"
X_SCALE = 1.0 / 255.0
SS = 4  # supersampling factor
NOISE = 8.0
BAND = 16  # Kandinsky: pixels of image width per primitive
KANDINSKY_HEIGHT = 32
CHUNK = 250

KANDINSKY_RGB = {"red": (220, 45, 40), "yellow": (232, 198, 36), "blue": (42, 78, 214)}
CLEVR_RGB = {"red": (196, 52, 46), "green": (44, 156, 62), "blue": (48, 72, 200)}
COLOUR_JITTER = 22.0


def decode_objects(task: Task, y: np.ndarray, prefixes: list[str], shapes, colours) -> np.ndarray:
    """(B, objects, 2) array of (shape index, colour index) per object from label rows."""
    out = np.zeros((len(y), len(prefixes), 2), dtype=np.int64)
    for k, prefix in enumerate(prefixes):
        s_cols = [task.index_of(f"{prefix}_{s}") - 1 for s in shapes]
        c_cols = [task.index_of(f"{prefix}_{c}") - 1 for c in colours]
        out[:, k, 0] = y[:, s_cols].argmax(axis=1)
        out[:, k, 1] = y[:, c_cols].argmax(axis=1)
    return out


def _jitter(rgb, rng: np.random.Generator, scale: float = COLOUR_JITTER) -> np.ndarray:
    return np.clip(np.asarray(rgb, dtype=np.float64) + scale * rng.standard_normal(3), 0, 255)


def _fill(rgb: np.ndarray, factor: float = 1.0) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in np.clip(np.rint(rgb * factor), 0, 255))
    return r, g, b


def _finish(canvas: Image.Image, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    small = canvas.resize(size, Image.Resampling.BOX)
    pixels = np.asarray(small, dtype=np.float64)
    pixels = pixels + NOISE * rng.standard_normal(pixels.shape)
    return np.clip(np.rint(pixels), 0, 255).astype(np.uint8).transpose(2, 0, 1)  # (3, H, W)


# ------------------------------------------------------------------------------------- Kandinsky


def _kandinsky_prefixes(task: Task) -> tuple[int, list[str]]:
    prims = 3 if "img1_obj3_square" in task.names else 2
    return prims, [f"img{i}_obj{k}" for i in (1, 2) for k in range(1, prims + 1)]


def draw_kandinsky(objects: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One Kandinsky image (3, 32, 16·prims) uint8 for (prims, 2) shape/colour indices."""
    prims = len(objects)
    width, height = BAND * prims, KANDINSKY_HEIGHT
    grey = int(rng.integers(196, 216))
    canvas = Image.new("RGB", (width * SS, height * SS), (grey, grey, grey))
    draw = ImageDraw.Draw(canvas)
    band = BAND
    low, high = 4.5, 6.5
    for k, (shape, colour) in enumerate(objects):
        r = rng.uniform(low, high)
        cx = band * (k + 0.5) + rng.uniform(-1, 1) * max(0.0, band / 2 - r - 1)
        cy = rng.uniform(r + 1.5, height - r - 1.5)
        rgb = _fill(_jitter(KANDINSKY_RGB[KANDINSKY_COLOURS[colour]], rng))
        cx, cy, r = cx * SS, cy * SS, r * SS
        name = KANDINSKY_SHAPES[shape]
        if name == "circle":
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=rgb)
        elif name == "square":
            h = 0.85 * r
            draw.rectangle([cx - h, cy - h, cx + h, cy + h], fill=rgb)
        else:  # upright equilateral triangle, circumradius r * 1.1
            R = 1.1 * r
            pts = [
                (cx + R * np.cos(a), cy - R * np.sin(a))
                for a in (np.pi / 2, np.pi / 2 + 2 * np.pi / 3, np.pi / 2 + 4 * np.pi / 3)
            ]
            shift = 0.25 * R  # centre the triangle's bounding box vertically
            draw.polygon([(px, py + shift) for px, py in pts], fill=rgb)
    return _finish(canvas, (width, height), rng)


def make_kandinsky(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Generate Kandinsky figures (coloured shapes) whose attributes are the task's labels."""
    task = ctx.task
    prims, prefixes = _kandinsky_prefixes(task)
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        y = sample_valid(task, n, rng)
        objects = decode_objects(task, y, prefixes, KANDINSKY_SHAPES, KANDINSKY_COLOURS).reshape(n, 2, prims, 2)
        w = BAND * prims
        x = np.zeros((n, 3, KANDINSKY_HEIGHT, 2 * w), dtype=np.uint8)
        for i in range(n):
            x[i, :, :, :w] = draw_kandinsky(objects[i, 0], rng)
            x[i, :, :, w:] = draw_kandinsky(objects[i, 1], rng)
            if (i + 1) % CHUNK == 0 or i + 1 == n:
                ctx.advance((i % CHUNK) + 1)
        out[split] = {"x": x, "y": y}
    return out


def describe_kandinsky(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """An example's caption: the objects of each figure, colour and shape abbreviated."""
    prims, prefixes = _kandinsky_prefixes(task)
    objects = decode_objects(task, y[None], prefixes, KANDINSKY_SHAPES, KANDINSKY_COLOURS)[0]
    words = [f"{KANDINSKY_COLOURS[c][:3]} {KANDINSKY_SHAPES[s][:3]}" for s, c in objects]
    return "\n".join(", ".join(words[i * prims : (i + 1) * prims]) for i in range(2))


# ------------------------------------------------------------------------------------ CLEVR-style


def draw_clevr(objects: np.ndarray, rng: np.random.Generator, width: int = 48, height: int = 32) -> np.ndarray:
    """One CLEVR-style scene (3, H, W) uint8 for (2, 2) shape/colour indices (object 1 on the left)."""
    W, H = width * SS, height * SS
    top, bottom = rng.uniform(96, 116), rng.uniform(140, 160)
    column = np.linspace(top, bottom, H)[:, None, None] * np.ones((1, W, 3))
    canvas = Image.fromarray(np.clip(column, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(canvas)
    placed = []
    for k, (shape, colour) in enumerate(objects):
        depth = rng.uniform(0, 1)  # 0 far (high, small), 1 near (low, big)
        r = (3.2 + 2.4 * depth) * SS
        cy = (11 + 11 * depth) * SS
        half = W / 2
        cx = half * k + rng.uniform(r + SS, half - r - SS)
        placed.append((cy, k, shape, colour, cx, r))
    for cy, _k, shape, colour, cx, r in sorted(placed):  # far objects first
        rgb = _jitter(CLEVR_RGB[CLEVR_COLOURS[colour]], rng) * rng.uniform(0.7, 1.2)  # colour and lighting
        metal = rng.random() < 0.5
        draw.ellipse([cx - 1.1 * r, cy + 0.55 * r, cx + 1.3 * r, cy + 1.05 * r], fill=(70, 70, 70))  # shadow
        name = CLEVR_SHAPES[shape]
        if name == "cube":
            s, d = 0.85 * r, 0.45 * r
            draw.polygon(
                [(cx - s, cy - s), (cx - s + d, cy - s - d), (cx + s + d, cy - s - d), (cx + s, cy - s)],
                fill=_fill(rgb, 1.15),
            )
            draw.polygon(
                [(cx + s, cy - s), (cx + s + d, cy - s - d), (cx + s + d, cy + s - d), (cx + s, cy + s)],
                fill=_fill(rgb, 0.6),
            )
            draw.rectangle([cx - s, cy - s, cx + s, cy + s], fill=_fill(rgb, 0.9))
        elif name == "sphere":
            for step, factor in enumerate((0.65, 0.8, 0.95, 1.1)):
                shrink = 1 - 0.22 * step
                off = 0.18 * r * step
                draw.ellipse(
                    [cx - off - r * shrink, cy - off - r * shrink, cx - off + r * shrink, cy - off + r * shrink],
                    fill=_fill(rgb, factor),
                )
        else:  # cylinder
            w, h, e = 0.8 * r, 0.95 * r, 0.32 * r
            draw.ellipse([cx - w, cy + h - e, cx + w, cy + h + e], fill=_fill(rgb, 0.7))
            draw.rectangle([cx - w, cy - h, cx + w, cy + h], fill=_fill(rgb, 0.85))
            draw.rectangle([cx - w, cy - h, cx - 0.4 * w, cy + h], fill=_fill(rgb, 0.75))
            draw.ellipse([cx - w, cy - h - e, cx + w, cy - h + e], fill=_fill(rgb, 1.15))
        if metal:
            hr = 0.18 * r
            hx, hy = cx - 0.3 * r, cy - 0.45 * r
            draw.ellipse([hx - hr, hy - hr, hx + hr, hy + hr], fill=(245, 245, 245))
    return _finish(canvas, (width, height), rng)


def make_clevr(ctx: GenerationContext) -> dict[str, dict[str, np.ndarray]]:
    """Generate CLEVR-like scenes of two objects whose shapes and colours are the labels."""
    task = ctx.task
    out = {}
    for split in SPLITS:
        rng = ctx.rng(split)
        n = ctx.sizes[split]
        y = sample_valid(task, n, rng)
        objects = decode_objects(task, y, ["obj1", "obj2"], CLEVR_SHAPES, CLEVR_COLOURS)
        x = np.zeros((n, 3, 32, 48), dtype=np.uint8)
        for i in range(n):
            x[i] = draw_clevr(objects[i], rng)
            if (i + 1) % CHUNK == 0 or i + 1 == n:
                ctx.advance((i % CHUNK) + 1)
        out[split] = {"x": x, "y": y}
    return out


def describe_clevr(task: Task, extras: dict[str, np.ndarray], index: int, y: np.ndarray) -> str:
    """An example's caption: each object's colour and shape."""
    objects = decode_objects(task, y[None], ["obj1", "obj2"], CLEVR_SHAPES, CLEVR_COLOURS)[0]
    return "\n".join(f"{CLEVR_COLOURS[c]} {CLEVR_SHAPES[s]}" for s, c in objects)
