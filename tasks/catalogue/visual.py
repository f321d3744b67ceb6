"""Visual reasoning over rendered objects: CLEVR-style scenes and Kandinsky patterns (rsbench).

Every object (a CLEVR object, or a primitive of a Kandinsky image) has one shape out of three and one
colour out of three, each one-hot. Variables are grouped per object as its three shapes then its
three colours; objects are numbered within an image, images one after the other.

Kandinsky patterns follow rsbench's Kandinsky task (Bortolotti et al. 2024; its LTN knowledge and
data generator): within one image, the shapes of the primitives form a *pattern* — all the same,
exactly one pair equal (three primitives only), or all different — and so do the colours. rsbench's
label is true when all images share the shape pattern or all share the colour pattern. Our tasks
use two images and make that label the constraint: the two images share their shape pattern, or
they share their colour pattern (or both). The patterns are computed from the one-hot concepts;
there are no pattern or label variables.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.cnf import CNF
from autonesy.tools.formats.expr import Expr, Var, conj, disj, exactly_one, iff

RSBENCH_CITATION = (
    "Bortolotti, Marconato, Carraro, Morettin, van Krieken, Vergari, Teso, Passerini. A Neuro-Symbolic "
    "Benchmark Suite for Concept Quality and Reasoning Shortcuts (rsbench). NeurIPS 2024 Datasets and Benchmarks."
)

CLEVR_SHAPES = ("cube", "sphere", "cylinder")
CLEVR_COLOURS = ("red", "green", "blue")
KANDINSKY_SHAPES = ("square", "circle", "triangle")
KANDINSKY_COLOURS = ("red", "yellow", "blue")
PER_OBJECT = 6  # 3 shapes + 3 colours


def _object_variables(prefix: str, what: str, shapes, colours) -> list[Variable]:
    return [Variable(f"{prefix}_{s}", f"{what} is a {s}") for s in shapes] + [
        Variable(f"{prefix}_{c}", f"{what} is {c}") for c in colours
    ]


def _one_hot_groups(num_objects: int) -> list[list[int]]:
    """DIMACS indices of each object's shape group and colour group."""
    groups = []
    for o in range(num_objects):
        base = o * PER_OBJECT
        groups.append([base + 1, base + 2, base + 3])
        groups.append([base + 4, base + 5, base + 6])
    return groups


def _decode(x: np.ndarray, num_objects: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(one-hot ok per row, shape index per object, colour index per object) for a (B, 6·objects) batch.

    Indices are meaningful only where the row is one-hot (integer arithmetic instead of argmax: the
    exhaustive proof pushes millions of rows through here).
    """
    objects = np.asarray(x, dtype=bool).reshape(-1, num_objects, PER_OBJECT).view(np.uint8)
    s0, s1, s2, c0, c1, c2 = (objects[:, :, k] for k in range(PER_OBJECT))
    ok = ((s0 + s1 + s2) == 1).all(axis=1) & ((c0 + c1 + c2) == 1).all(axis=1)
    return ok, s1 + 2 * s2, c1 + 2 * c2


def _one_hot_row(values: list[int]) -> list[int]:
    """Categorical (shape, colour, shape, colour, …) values → the 0/1 variable row."""
    row = []
    for v in values:
        bits = [0, 0, 0]
        bits[v] = 1
        row += bits
    return row


# --------------------------------------------------------------------------------------------------
# cle4evr
# --------------------------------------------------------------------------------------------------


def _cle4evr_encode() -> CNF:
    b = ClauseBuilder(2 * PER_OBJECT)
    for group in _one_hot_groups(2):
        b.exactly_one(group)  # pairwise: 1 + 3 clauses per attribute
    for k in range(1, PER_OBJECT + 1):  # same shape and same colour: object 1 bit ↔ object 2 bit
        b.add([-k, k + PER_OBJECT], [k, -(k + PER_OBJECT)])
    return b.cnf()


def _cle4evr_oracle(x: np.ndarray) -> np.ndarray:
    ok, shapes, colours = _decode(x, 2)
    return ok & (shapes[:, 0] == shapes[:, 1]) & (colours[:, 0] == colours[:, 1])


def _cle4evr_valid():
    for shape, colour in itertools.product(range(3), range(3)):
        yield _one_hot_row([shape, colour, shape, colour])


def cle4evr() -> Task:
    """CLE4EVR: two objects of the CLEVR vocabulary; the rule relates their shapes and colours."""
    variables = _object_variables("obj1", "object 1", CLEVR_SHAPES, CLEVR_COLOURS) + _object_variables(
        "obj2", "object 2", CLEVR_SHAPES, CLEVR_COLOURS
    )
    return Task(
        name="cle4evr",
        variables=tuple(variables),
        descriptions=Descriptions(
            detailed=(
                "A CLEVR-style scene shows two objects. Each object has a shape (cube, sphere or cylinder) "
                "and a colour (red, green or blue), one variable per shape and per colour.\n"
                "- Each object has exactly one shape: at least one of its three shape variables is true, and "
                "no two of them are true together.\n"
                "- Each object has exactly one colour: at least one of its three colour variables is true, and "
                "no two of them are true together.\n"
                "- The two objects have the same shape: for each shape, object 1 has it if and only if object 2 "
                "has it.\n"
                "- The two objects have the same colour: for each colour, object 1 has it if and only if object "
                "2 has it.\n"
                "Background facts that must NOT be encoded: CLEVR's other attributes (size, material, "
                "position), its other shapes and colours, and any preference for particular shape–colour "
                "combinations: every one of the nine shape–colour combinations is allowed."
            ),
            not_detailed="The scene shows two objects that look identical: same shape and same colour.",
        ),
        metadata=TaskMetadata(
            source_dataset="CLEVR (rendered as in rsbench's CLEVR-style generator)",
            citation=(
                "Johnson, Hariharan, van der Maaten, Fei-Fei, Zitnick, Girshick. CLEVR: A Diagnostic Dataset for "
                "Compositional Language and Elementary Visual Reasoning. CVPR 2017. Via rsbench: " + RSBENCH_CITATION
            ),
            licence="BSD-3-Clause",
            published_clauses=28,
            data_provenance="procedural",
            equivalence_method="exhaustive",
            design_notes=(
                "2 objects × (cube, sphere, cylinder + red, green, blue), one-hot per attribute (pairwise: "
                "4 × 4 clauses) and bit-wise equality of the two objects (6 × 2 clauses): 28 clauses, no "
                "auxiliaries, as published. 9 models."
            ),
        ),
        encode=_cle4evr_encode,
        oracle_batch=_cle4evr_oracle,
        enumerate_valid=_cle4evr_valid,
    )


# --------------------------------------------------------------------------------------------------
# Kandinsky patterns
# --------------------------------------------------------------------------------------------------

PATTERNS = {2: ("same", "different"), 3: ("same", "pair", "different")}


def _values_with_pattern(num_prims: int, pattern: str) -> list[tuple[int, ...]]:
    """Every tuple of categorical values (0-2) of ``num_prims`` primitives showing ``pattern``, built directly."""
    if pattern == "same":
        return [(v,) * num_prims for v in range(3)]
    if pattern == "different":
        return list(itertools.permutations(range(3), num_prims))
    # "pair" (three primitives): the odd one out sits at position k, the other two share value a.
    tuples = []
    for k in range(num_prims):
        for a, b in itertools.permutations(range(3), 2):
            t = [a] * num_prims
            t[k] = b
            tuples.append(tuple(t))
    return tuples


@functools.cache
def _kandinsky_valid(num_prims: int) -> np.ndarray:
    """The valid set by construction: pick the four patterns first, then every image showing them.

    One (rows, variables) 0/1 array, built once: kand-logic has 401,841 rows, too many for lists.
    """
    names = PATTERNS[num_prims]
    blocks = []
    for shape1, shape2, colour1, colour2 in itertools.product(names, repeat=4):
        if shape1 != shape2 and colour1 != colour2:
            continue
        parts = [np.array(_values_with_pattern(num_prims, p)) for p in (shape1, shape2, colour1, colour2)]
        grids = np.meshgrid(*[np.arange(len(p)) for p in parts], indexing="ij")
        s1, s2, c1, c2 = (part[grid.ravel()] for part, grid in zip(parts, grids))
        # Interleave per object: image 1 objects (shape, colour), then image 2 objects.
        values = np.empty((len(s1), 4 * num_prims), dtype=np.int64)
        values[:, 0 : 2 * num_prims : 2] = s1
        values[:, 1 : 2 * num_prims : 2] = c1
        values[:, 2 * num_prims :: 2] = s2
        values[:, 2 * num_prims + 1 :: 2] = c2
        blocks.append(np.eye(3, dtype=np.int8)[values].reshape(len(values), -1))
    valid = np.concatenate(blocks)
    valid.flags.writeable = False  # shared by every caller
    return valid


def _kandinsky_oracle(num_prims: int):
    def pattern(values: np.ndarray) -> np.ndarray:
        """Number of distinct values among an image's primitives: 1 same, 2 pair, num_prims different."""
        distinct = np.ones(values.shape[:-1], dtype=np.int64)
        for j in range(1, num_prims):
            distinct += (values[..., j : j + 1] != values[..., :j]).all(axis=-1)
        return distinct

    def oracle(x: np.ndarray) -> np.ndarray:
        ok, shapes, colours = _decode(x, 2 * num_prims)
        shapes = shapes.reshape(-1, 2, num_prims)  # (B, image, primitive)
        colours = colours.reshape(-1, 2, num_prims)
        shape_pattern, colour_pattern = pattern(shapes), pattern(colours)  # (B, image)
        same_shape_pattern = shape_pattern[:, 0] == shape_pattern[:, 1]
        same_colour_pattern = colour_pattern[:, 0] == colour_pattern[:, 1]
        return ok & (same_shape_pattern | same_colour_pattern)

    return oracle


def _xnor(b: ClauseBuilder, out: int, a: int, c: int) -> None:
    """out ↔ (a ↔ c)."""
    b.add([-out, -a, c], [-out, a, -c], [out, a, c], [out, -a, -c])


def _kandinsky_encode(num_prims: int) -> CNF:
    n = 2 * num_prims * PER_OBJECT
    b = ClauseBuilder(n)
    for group in _one_hot_groups(2 * num_prims):
        b.exactly_one(group)

    def bits(image: int, prim: int, attribute: int) -> list[int]:
        base = (image * num_prims + prim) * PER_OBJECT + 3 * attribute
        return [base + 1, base + 2, base + 3]

    def equal(image: int, j: int, k: int, attribute: int) -> int:
        """Aux ↔ primitives j and k of the image share the attribute's value (determined under one-hot)."""
        e = b.new_var()
        for u, v in zip(bits(image, j, attribute), bits(image, k, attribute)):
            b.add([-e, -u, v], [-u, -v, e])
        return e

    matches = []
    for attribute in (0, 1):  # 0 shape, 1 colour
        # Pattern of each image as indicator auxiliaries: "same" and, for 3 primitives, "different"
        # ("pair" is neither). Two images share the pattern iff both indicators agree.
        indicators: list[tuple[int, ...]] = []
        for image in (0, 1):
            eq = {(j, k): equal(image, j, k, attribute) for j, k in itertools.combinations(range(num_prims), 2)}
            if num_prims == 2:
                indicators.append((eq[0, 1],))  # "same" is "the two primitives are equal"
            else:
                same = b.new_var()
                b.iff_and(same, list(eq.values()))
                different = b.new_var()
                b.iff_and(different, [-e for e in eq.values()])
                indicators.append((same, different))
        agree = []
        for ind1, ind2 in zip(*indicators):
            t = b.new_var()
            _xnor(b, t, ind1, ind2)
            agree.append(t)
        if len(agree) == 1:
            matches.append(agree[0])
        else:
            m = b.new_var()
            b.iff_and(m, agree)
            matches.append(m)
    b.add(matches)  # same shape pattern or same colour pattern
    return b.cnf()


def _kandinsky_reference(num_prims: int) -> Expr:
    """The constraint without auxiliaries, written from its meaning (the reference in NAT and SymPy).

    One-hot per attribute; an image's pattern for an attribute is 'same' when one value is held by
    all its primitives and, with three primitives, 'different' when every value appears (three
    primitives, three values, one-hot: all distinct); 'pair' is neither. The images share the
    pattern when both indicators agree, and they must share it for shapes or for colours.
    """

    def bit(image: int, prim: int, attribute: int, value: int) -> Var:
        return Var((image * num_prims + prim) * PER_OBJECT + 3 * attribute + value + 1)

    prims = range(num_prims)
    one_hot = [
        exactly_one([bit(image, prim, attribute, value) for value in range(3)])
        for image in (0, 1)
        for prim in prims
        for attribute in (0, 1)
    ]

    def same(image: int, attribute: int) -> Expr:
        return disj(*(conj(*(bit(image, prim, attribute, value) for prim in prims)) for value in range(3)))

    def different(image: int, attribute: int) -> Expr:
        return conj(*(disj(*(bit(image, prim, attribute, value) for prim in prims)) for value in range(3)))

    def shared(attribute: int) -> Expr:
        same_pattern = iff(same(0, attribute), same(1, attribute))
        if num_prims == 2:  # two primitives: 'different' is 'not same'
            return same_pattern
        return conj(same_pattern, iff(different(0, attribute), different(1, attribute)))

    return conj(*one_hot, disj(shared(0), shared(1)))


def _kandinsky_variables(num_prims: int) -> list[Variable]:
    variables = []
    for image in (1, 2):
        for prim in range(1, num_prims + 1):
            variables += _object_variables(
                f"img{image}_obj{prim}", f"object {prim} of image {image}", KANDINSKY_SHAPES, KANDINSKY_COLOURS
            )
    return variables


_KANDINSKY_BACKGROUND = (
    "Background facts that must NOT be encoded: the objects' sizes and positions; any link between an "
    "object's shape and its colour; any preference for particular shapes, colours or patterns; and "
    "rsbench's original setting with three images (here there are two)."
)

KANDINSKY_CITATION = (
    "Müller, Holzinger. Kandinsky Patterns. Artificial Intelligence 300, 2021. Task as in rsbench: " + RSBENCH_CITATION
)


def kand_logic_2() -> Task:
    """Kandinsky patterns with two objects per figure."""
    return Task(
        name="kand-logic-2",
        variables=tuple(_kandinsky_variables(2)),
        descriptions=Descriptions(
            detailed=(
                "Two Kandinsky images each contain two objects. Each object has a shape (square, circle or "
                "triangle) and a colour (red, yellow or blue), one variable per shape and per colour.\n"
                "- Each object has exactly one shape: at least one of its three shape variables is true, and no "
                "two of them are true together.\n"
                "- Each object has exactly one colour, in the same way.\n"
                "- The shape pattern of an image is 'same' when its two objects have the same shape and "
                "'different' when their shapes differ; its colour pattern is defined in the same way from the "
                "colours.\n"
                "- The two images must share their shape pattern (both 'same' or both 'different') or share their "
                "colour pattern (both 'same' or both 'different'); sharing both is allowed. The constraint is "
                "violated only when the shape patterns differ and the colour patterns differ too.\n"
                "- The patterns compare objects within one image; the actual shapes and colours of the two images "
                "need not match.\n" + _KANDINSKY_BACKGROUND
            ),
            not_detailed=(
                "There are two pictures with two coloured shapes each; the two pictures must follow the same rule "
                "for shapes (both matching or both mismatching) or the same rule for colours."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="Kandinsky patterns (rsbench's Kandinsky task)",
            citation=KANDINSKY_CITATION,
            licence="BSD-3-Clause",
            published_clauses=1328,
            data_provenance="procedural",
            equivalence_method="exhaustive",
            design_notes=(
                "2 images × 2 primitives × (square, circle, triangle + red, yellow, blue), one-hot per attribute. "
                "Reading of rsbench's Kandinsky knowledge (pattern per image = same/different, label = all images "
                "share the shape pattern or the colour pattern) with two images, the label made the constraint. "
                "Per attribute 45 of the 81 value combinations of the two images share the pattern (3·3 + 6·6), so "
                "45·81 + 81·45 − 45·45 = 5,265 models. Ground truth: pairwise exactly-one, then auxiliaries for "
                "'the two primitives are equal', pattern agreement (XNOR) and the final disjunction."
            ),
        ),
        encode=lambda: _kandinsky_encode(2),
        oracle_batch=_kandinsky_oracle(2),
        enumerate_valid=lambda: _kandinsky_valid(2),
        reference_expression=lambda: _kandinsky_reference(2),
    )


def kand_logic() -> Task:
    """Kandinsky patterns with three objects per figure."""
    return Task(
        name="kand-logic",
        variables=tuple(_kandinsky_variables(3)),
        descriptions=Descriptions(
            detailed=(
                "Two Kandinsky images each contain three objects. Each object has a shape (square, circle or "
                "triangle) and a colour (red, yellow or blue), one variable per shape and per colour.\n"
                "- Each object has exactly one shape: at least one of its three shape variables is true, and no "
                "two of them are true together.\n"
                "- Each object has exactly one colour, in the same way.\n"
                "- The shape pattern of an image is 'same' when its three objects all have the same shape, "
                "'pair' when exactly two of them share a shape and the third differs, and 'different' when all "
                "three shapes differ; its colour pattern is defined in the same way from the colours.\n"
                "- The two images must share their shape pattern (both 'same', both 'pair' or both 'different') "
                "or share their colour pattern; sharing both is allowed. The constraint is violated only when the "
                "shape patterns differ and the colour patterns differ too.\n"
                "- The patterns compare objects within one image; the actual shapes and colours of the two images "
                "need not match, and for 'pair' it does not matter which two objects form the pair.\n"
                + _KANDINSKY_BACKGROUND
            ),
            not_detailed=(
                "There are two pictures with three coloured shapes each; the two pictures must follow the same "
                "rule for their shapes (all alike, two alike, or all different) or the same rule for their colours."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="Kandinsky patterns (rsbench's Kandinsky task)",
            citation=KANDINSKY_CITATION,
            licence="BSD-3-Clause",
            published_clauses=129648,
            data_provenance="procedural",
            equivalence_method="construction",
            design_notes=(
                "2 images × 3 primitives × (square, circle, triangle + red, yellow, blue), one-hot per attribute. "
                "rsbench's Kandinsky knowledge (pattern per image = same/pair/different, as in its LTN loss; label "
                "= all images share the shape pattern or the colour pattern) with two images, the label made the "
                "constraint. Per image and attribute 3 'same', 18 'pair' and 6 'different' value triples, so "
                "369 = 3² + 18² + 6² of the 729 combinations share a pattern, and 369·729·2 − 369² = 401,841 "
                "models. Ground truth: pairwise exactly-one, auxiliaries for 'primitives j and k equal', for the "
                "'same' and 'different' indicators, their agreement (XNOR) and the final disjunction."
            ),
        ),
        encode=lambda: _kandinsky_encode(3),
        oracle_batch=_kandinsky_oracle(3),
        enumerate_valid=lambda: _kandinsky_valid(3),
        reference_expression=lambda: _kandinsky_reference(3),
    )
