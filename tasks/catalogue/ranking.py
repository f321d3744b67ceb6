"""Preference ranking tasks: a complete ranking of items is a permutation matrix (item × rank)."""

from __future__ import annotations

import itertools

import numpy as np

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

# Four items of the SUSHI3 item set A (variable-name stem, English name, Japanese name).
SUSHI_ITEMS = (
    ("tuna", "tuna", "maguro"),
    ("fatty_tuna", "fatty tuna", "toro"),
    ("salmon_roe", "salmon roe", "ikura"),
    ("sea_urchin", "sea urchin", "uni"),
)
SUSHI_RANKS = 4
_RANK_WORDS = {1: "1 (most preferred)", 2: "2", 3: "3", 4: "4 (least preferred)"}


def _permutation_matrix_oracle(x: np.ndarray, size: int) -> np.ndarray:
    grid = np.asarray(x, dtype=bool).reshape(-1, size, size)  # [batch, item, rank]
    one_rank_per_item = (grid.sum(axis=2) == 1).all(axis=1)
    one_item_per_rank = (grid.sum(axis=1) == 1).all(axis=1)
    return one_rank_per_item & one_item_per_rank


def _permutation_matrices(size: int):
    for ranks in itertools.permutations(range(size)):
        row = [0] * (size * size)
        for item, rank in enumerate(ranks):
            row[item * size + rank] = 1
        yield row


def sushi() -> Task:
    """Sushi preferences: a complete ranking of the items as a permutation matrix (item × rank)."""
    size = len(SUSHI_ITEMS)
    assert size == SUSHI_RANKS
    variables = tuple(
        Variable(f"{stem}_rank_{rank}", f"{english} ({japanese}) is placed at preference rank {_RANK_WORDS[rank]}")
        for stem, english, japanese in SUSHI_ITEMS
        for rank in range(1, SUSHI_RANKS + 1)
    )
    n = len(variables)

    def var(item: int, rank: int) -> int:
        return item * size + rank + 1

    def encode():
        builder = ClauseBuilder(n)
        for item in range(size):  # each item gets exactly one rank (pairwise, 7 clauses)
            builder.exactly_one([var(item, rank) for rank in range(size)])
        for rank in range(size):  # each rank gets exactly one item (pairwise, 7 clauses)
            builder.exactly_one([var(item, rank) for item in range(size)])
        return builder.cnf()

    labelled = [f"{english} ({japanese})" for _, english, japanese in SUSHI_ITEMS]
    names = ", ".join(labelled[:-1]) + " and " + labelled[-1]
    return Task(
        name="sushi",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                f"A person ranks four sushi items, {names}, by preference, using the ranks 1 (most "
                "preferred) to 4 (least preferred); the variables say which item is placed at which rank.\n"
                "- Each sushi item must be assigned to exactly one preference rank.\n"
                "- Every rank must be assigned to exactly one sushi item.\n"
                "- Each sushi item cannot be assigned to more than one rank.\n"
                "- No two sushi items can share the same rank.\n"
                "- There is no other rule: every order of the four items is allowed.\n"
                "Background facts that must NOT be encoded: which sushi people usually prefer (e.g. fatty "
                "tuna is often ranked first), similarities between items (tuna and fatty tuna come from the "
                "same fish), and the other items of the SUSHI survey."
            ),
            not_detailed=(
                "Encode a valid permutation matrix representing a complete ranking of the four sushi items, "
                "from favourite to least favourite, with no ties."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="SUSHI Preference Data Sets (SUSHI3, item set A)",
            citation=(
                "Kamishima. Nantonac Collaborative Filtering: Recommendation Based on Order Responses. "
                "KDD 2003, pp. 583-588."
            ),
            licence="research use only; redistribution forbidden",
            published_clauses=56,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "4 of the 10 SUSHI3 set-A items (tuna, fatty tuna, salmon roe, sea urchin) × ranks 1-4, "
                "item-major (variable 4·i + r for item i, rank r); the 24 permutation matrices are the models. "
                "Encoding: exactly-one per item row and per rank column, pairwise (8 × 7 = 56 clauses, the "
                "published count, no auxiliaries). The encoding is redundant: by counting, the constraints of "
                "any one row (or column) follow from the others."
            ),
            redistributable=False,
        ),
        encode=encode,
        oracle_batch=lambda x: _permutation_matrix_oracle(x, size),
        enumerate_valid=lambda: _permutation_matrices(size),
    )
