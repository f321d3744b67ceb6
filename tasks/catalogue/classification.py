"""Single-label image classification tasks: the constraint is that exactly one class holds."""

from __future__ import annotations

import numpy as np

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

FASHION_CLASSES = (
    ("tshirt_top", "T-shirt/top"),
    ("trouser", "trouser"),
    ("pullover", "pullover"),
    ("dress", "dress"),
    ("coat", "coat"),
    ("sandal", "sandal"),
    ("shirt", "shirt"),
    ("sneaker", "sneaker"),
    ("bag", "bag"),
    ("ankle_boot", "ankle boot"),
)


def _exactly_one_row(x: np.ndarray) -> np.ndarray:
    return x.sum(axis=1) == 1


def _one_hot_assignments(n: int):
    for i in range(n):
        row = [0] * n
        row[i] = 1
        yield row


def fashion() -> Task:
    """Fashion-MNIST: exactly one of ten classes."""
    variables = tuple(Variable(name, f"the image shows a {label}") for name, label in FASHION_CLASSES)
    n = len(variables)

    def encode():
        builder = ClauseBuilder(n)
        builder.exactly_one(list(range(1, n + 1)))  # pairwise: 1 + 45 clauses, as published
        return builder.cnf()

    return Task(
        name="fashion",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Each image of the Fashion-MNIST dataset shows a single clothing item, and the predictor "
                "outputs one Boolean variable per class (T-shirt/top, trouser, pullover, dress, coat, "
                "sandal, shirt, sneaker, bag, ankle boot).\n"
                "- At least one of the ten class variables must be true.\n"
                "- At most one of the ten class variables may be true: no two classes can hold at once.\n"
                "- There is no other rule: any one of the ten classes is allowed.\n"
                "Background facts that must NOT be encoded: how often each class occurs, which classes "
                "look alike (e.g. shirt vs T-shirt), and any grouping of classes into footwear or tops."
            ),
            not_detailed="Every image shows exactly one type of clothing item, out of the ten Fashion-MNIST classes.",
        ),
        metadata=TaskMetadata(
            source_dataset="Fashion-MNIST",
            citation="Xiao, Rasul, Vollgraf. Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine Learning Algorithms. arXiv:1708.07747, 2017.",
            licence="MIT",
            published_clauses=46,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes="One-hot over the 10 classes; exactly-one with the pairwise encoding (no auxiliaries).",
        ),
        encode=encode,
        oracle_batch=_exactly_one_row,
        enumerate_valid=lambda: _one_hot_assignments(n),
    )


# --- CIFAR-10: ten classes whose semantic attributes determine the class -------------------------

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
CIFAR10_ATTRIBUTES = (
    ("is_animal", "the object is a living animal"),
    ("flies", "the object flies through the air"),
    ("on_water", "the object lives in water or travels on water"),
    ("has_hooves", "the object has hooves"),
    (
        "does_work",
        "the object is used by people for physical work: a working animal (trained to herd, guard, pull or "
        "carry loads) or a road vehicle built to haul goods",
    ),
)
# Each class's attribute profile: the attributes it has; every other attribute is false.
CIFAR10_PROFILES = {
    "airplane": frozenset({"flies"}),
    "automobile": frozenset(),
    "bird": frozenset({"is_animal", "flies"}),
    "cat": frozenset({"is_animal"}),
    "deer": frozenset({"is_animal", "has_hooves"}),
    "dog": frozenset({"is_animal", "does_work"}),
    "frog": frozenset({"is_animal", "on_water"}),
    "horse": frozenset({"is_animal", "has_hooves", "does_work"}),
    "ship": frozenset({"on_water"}),
    "truck": frozenset({"does_work"}),
}
_ATTRIBUTE_PHRASES = {
    "is_animal": "is an animal",
    "flies": "flies",
    "on_water": "lives in or travels on water",
    "has_hooves": "has hooves",
    "does_work": "is used for work",
}


def _cifar10_profile_matrix() -> np.ndarray:
    """(10, 5) 0/1 table: row c is the attribute profile of class c."""
    attributes = [name for name, _ in CIFAR10_ATTRIBUTES]
    table = np.array([[a in CIFAR10_PROFILES[c] for a in attributes] for c in CIFAR10_CLASSES], dtype=bool)
    if len({tuple(row) for row in table}) != len(CIFAR10_CLASSES):
        raise AssertionError("two CIFAR-10 classes share an attribute profile")
    return table


def _cifar10_oracle(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=bool)
    n_classes = len(CIFAR10_CLASSES)
    classes, attributes = x[:, :n_classes], x[:, n_classes:]
    one_class = _exactly_one_row(classes)
    profiles = _cifar10_profile_matrix()
    # Profile of the (first) true class; only meaningful where exactly one class is true.
    expected = profiles[classes.argmax(axis=1)]
    return one_class & (attributes == expected).all(axis=1)


def _cifar10_valid():
    profiles = _cifar10_profile_matrix()
    for c, one_hot in enumerate(_one_hot_assignments(len(CIFAR10_CLASSES))):
        yield one_hot + [int(v) for v in profiles[c]]


def _profile_text(c: str) -> str:
    has = [_ATTRIBUTE_PHRASES[name] for name, _ in CIFAR10_ATTRIBUTES if name in CIFAR10_PROFILES[c]]
    return ", ".join(has) if has else "none of the five attributes (all five are false)"


def cifar10() -> Task:
    """CIFAR-10 with attributes: one class and the attributes each class implies."""
    class_vars = tuple(Variable(c, f"the image shows a{'n' if c[0] in 'aeiou' else ''} {c}") for c in CIFAR10_CLASSES)
    attribute_vars = tuple(Variable(name, meaning) for name, meaning in CIFAR10_ATTRIBUTES)
    variables = class_vars + attribute_vars
    n_classes, n = len(class_vars), len(variables)
    profiles = _cifar10_profile_matrix()

    def encode():
        builder = ClauseBuilder(n)
        classes = list(range(1, n_classes + 1))
        attributes = list(range(n_classes + 1, n + 1))
        builder.exactly_one(classes)  # pairwise: 1 + 45 clauses
        for c, class_var in enumerate(classes):
            profile = [a if has else -a for a, has in zip(attributes, profiles[c])]
            for literal in profile:  # the class fixes every attribute (5 clauses per class)
                builder.implies([class_var], [literal])
            builder.implies(profile, [class_var])  # the profile yields the class (1 clause per class)
        return builder.cnf()

    profile_lines = "".join(f"  - {c}: {_profile_text(c)}.\n" for c in CIFAR10_CLASSES)
    return Task(
        name="cifar10",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Each CIFAR-10 image shows one object from ten classes (airplane, automobile, bird, cat, deer, "
                "dog, frog, horse, ship, truck). Besides the class, the predictor outputs five semantic "
                "attributes of the object: it is an animal; it flies; it lives in or travels on water; it has "
                "hooves; it is used by people for physical work (a working animal that herds, guards, pulls or "
                "carries loads, or a road vehicle built to haul goods).\n"
                "- Exactly one of the ten class variables is true: at least one, and no two at once.\n"
                "- Each class fixes all five attributes: the attributes listed for it are true and the other "
                "attributes are false.\n"
                f"{profile_lines}"
                "- Conversely, when the five attributes match the profile of a class, that class is true; a "
                "combination of attributes that matches no class's profile is not allowed.\n"
                "Background facts that must NOT be encoded: exceptions among real individuals (ducks swim, "
                "cats may be kept as mousers, seaplanes land on water, cargo ships and planes carry goods), "
                "how often each class occurs, and which classes look alike in small images."
            ),
            not_detailed=(
                "Each image shows exactly one of the ten CIFAR-10 classes, and the five attributes must be the "
                "ones that class really has: for example birds and airplanes fly, deer and horses have hooves, "
                "and trucks, dogs and horses are used for work."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="CIFAR-10",
            citation="Krizhevsky. Learning Multiple Layers of Features from Tiny Images. Technical report, University of Toronto, 2009.",
            licence="no explicit licence",
            published_clauses=157,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "The published figures do not add up (7 attributes + 10 classes != 15 variables), so we keep "
                "15 variables as 10 one-hot classes + 5 binary attributes (is_animal, flies, on_water, "
                "has_hooves, does_work) chosen so that every class has a distinct, common-sense profile and "
                "the attributes determine the class: animal separates airplane/bird and ship/frog, flies and "
                "on_water pick out the air and water classes, has_hooves deer/horse, and does_work splits the "
                "three remaining pairs truck/automobile, dog/cat and horse/deer. A search over candidate "
                "attributes found no 5-attribute set of plain physical facts that separates all ten classes "
                "(cat/dog, deer/horse and automobile/truck need a shared splitter); does_work is defined "
                "precisely (working animal or goods road vehicle) to stay unambiguous. Constraint: exactly one "
                "class, and class <-> its profile; the 22 attribute vectors that are nobody's profile are "
                "invalid; 10 models. Encoding without auxiliaries: exactly-one pairwise (46), class -> each "
                "attribute literal (50), profile -> class (10) = 106 clauses. At-most-one and profile -> class "
                "are implied by the others (profiles are distinct) and kept so that each rule of the detailed "
                "description is visible."
            ),
            redistributable=False,
        ),
        encode=encode,
        oracle_batch=_cifar10_oracle,
        enumerate_valid=_cifar10_valid,
    )


# --- CIFAR-100: one-hot over the 100 fine labels --------------------------------------------------

# The 100 fine labels in CIFAR-100's label-index order.
CIFAR100_CLASSES = (
    "apple",
    "aquarium_fish",
    "baby",
    "bear",
    "beaver",
    "bed",
    "bee",
    "beetle",
    "bicycle",
    "bottle",
    "bowl",
    "boy",
    "bridge",
    "bus",
    "butterfly",
    "camel",
    "can",
    "castle",
    "caterpillar",
    "cattle",
    "chair",
    "chimpanzee",
    "clock",
    "cloud",
    "cockroach",
    "couch",
    "crab",
    "crocodile",
    "cup",
    "dinosaur",
    "dolphin",
    "elephant",
    "flatfish",
    "forest",
    "fox",
    "girl",
    "hamster",
    "house",
    "kangaroo",
    "keyboard",
    "lamp",
    "lawn_mower",
    "leopard",
    "lion",
    "lizard",
    "lobster",
    "man",
    "maple_tree",
    "motorcycle",
    "mountain",
    "mouse",
    "mushroom",
    "oak_tree",
    "orange",
    "orchid",
    "otter",
    "palm_tree",
    "pear",
    "pickup_truck",
    "pine_tree",
    "plain",
    "plate",
    "poppy",
    "porcupine",
    "possum",
    "rabbit",
    "raccoon",
    "ray",
    "road",
    "rocket",
    "rose",
    "sea",
    "seal",
    "shark",
    "shrew",
    "skunk",
    "skyscraper",
    "snail",
    "snake",
    "spider",
    "squirrel",
    "streetcar",
    "sunflower",
    "sweet_pepper",
    "table",
    "tank",
    "telephone",
    "television",
    "tiger",
    "tractor",
    "train",
    "trout",
    "tulip",
    "turtle",
    "wardrobe",
    "whale",
    "willow_tree",
    "wolf",
    "woman",
    "worm",
)
# Phrases for labels whose plain "a <label>" reading would be wrong or ambiguous.
_CIFAR100_PHRASES = {
    "cattle": "cattle",
    "sea": "the sea",
    "plain": "a plain (a wide, flat stretch of open land)",
    "ray": "a ray (the flat fish)",
    "can": "a can (a metal food or drink container)",
    "mouse": "a mouse (the animal)",
    "seal": "a seal (the marine animal)",
    "tank": "a tank (the armoured military vehicle)",
    "orange": "an orange (the fruit)",
    "television": "a television set",
}


def _cifar100_phrase(name: str) -> str:
    if name in _CIFAR100_PHRASES:
        return _CIFAR100_PHRASES[name]
    words = name.replace("_", " ")
    return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"


def cifar100() -> Task:
    """CIFAR-100: exactly one of 100 classes."""
    variables = tuple(Variable(name, f"the image shows {_cifar100_phrase(name)}") for name in CIFAR100_CLASSES)
    n = len(variables)

    def encode():
        builder = ClauseBuilder(n)
        builder.exactly_one(list(range(1, n + 1)))  # pairwise: 1 + 4,950 clauses, as published
        return builder.cnf()

    return Task(
        name="cifar100",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Each CIFAR-100 image shows a single object or scene from one of 100 fine-grained classes "
                "(animals, plants, people, vehicles, household objects and outdoor scenes), and the predictor "
                "outputs one Boolean variable per class.\n"
                "- At least one of the 100 class variables must be true.\n"
                "- At most one of the 100 class variables may be true: no two classes can hold at once.\n"
                "- There is no other rule: any one of the 100 classes is allowed.\n"
                "Background facts that must NOT be encoded: the 20 CIFAR-100 superclasses that group the "
                "classes (e.g. 'trees' for maple, oak, palm, pine and willow), how often each class occurs, "
                "and which classes look alike (e.g. boy and man, leopard and tiger)."
            ),
            not_detailed="Every image shows exactly one thing, out of the 100 CIFAR-100 classes.",
        ),
        metadata=TaskMetadata(
            source_dataset="CIFAR-100",
            citation="Krizhevsky. Learning Multiple Layers of Features from Tiny Images. Technical report, University of Toronto, 2009.",
            licence="no explicit licence",
            published_clauses=4951,
            data_provenance="synthetic-features",
            equivalence_method="construction",
            design_notes=(
                "One-hot over the 100 fine labels (CIFAR-100's label order, snake_case); exactly-one with the "
                "pairwise encoding (1 + 4,950 = 4,951 clauses, as published, no auxiliaries). 2^100 "
                "assignments cannot be enumerated, so equivalence is proved by construction (100 one-hot rows)."
            ),
            redistributable=False,
        ),
        encode=encode,
        oracle_batch=_exactly_one_row,
        enumerate_valid=lambda: _one_hot_assignments(n),
    )
