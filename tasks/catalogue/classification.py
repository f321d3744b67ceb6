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
