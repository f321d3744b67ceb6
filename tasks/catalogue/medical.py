"""Medical imaging tasks: a chest X-ray's severity code follows from the findings it shows."""

from __future__ import annotations

import itertools

import numpy as np

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable

# Four findings of the NIH ChestX-ray14 label set (as exposed by torchxrayvision).
CHX_FINDINGS = (
    ("cardiomegaly", "the chest X-ray shows cardiomegaly (an enlarged heart)"),
    ("effusion", "the chest X-ray shows a pleural effusion (fluid around the lungs)"),
    ("consolidation", "the chest X-ray shows a consolidation (a region of lung filled with fluid or tissue)"),
    ("pneumothorax", "the chest X-ray shows a pneumothorax (air between the lung and the chest wall)"),
)
# Severity codes in increasing order; code k is the one for exactly k findings.
CHX_CODES = ("healthy", "green", "yellow", "orange", "red")


def _chx_oracle(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=bool)
    n_findings = len(CHX_FINDINGS)
    findings_present = x[:, :n_findings].sum(axis=1)
    codes = x[:, n_findings:]
    # The code vector must be exactly the indicator of "number of findings present".
    expected = np.arange(len(CHX_CODES))[None, :] == findings_present[:, None]
    return (codes == expected).all(axis=1)


def _chx_valid():
    n_findings = len(CHX_FINDINGS)
    for findings in itertools.product((0, 1), repeat=n_findings):
        count = sum(findings)
        yield list(findings) + [int(k == count) for k in range(len(CHX_CODES))]


def chx() -> Task:
    """Chest X-ray: findings and the severity code they determine."""
    variables = tuple(Variable(name, meaning) for name, meaning in CHX_FINDINGS) + tuple(
        Variable(f"code_{code}", f"the X-ray is given the severity code {code}") for code in CHX_CODES
    )
    n_findings, n = len(CHX_FINDINGS), len(variables)
    findings = list(range(1, n_findings + 1))
    codes = list(range(n_findings + 1, n + 1))

    def encode():
        builder = ClauseBuilder(n)
        builder.exactly_one(codes)  # pairwise: 1 + 10 clauses
        # One clause per pattern of findings: that pattern forces the code of its size (16 clauses).
        for pattern in itertools.product((False, True), repeat=n_findings):
            antecedent = [f if present else -f for f, present in zip(findings, pattern)]
            builder.implies(antecedent, [codes[sum(pattern)]])
        return builder.cnf()

    return Task(
        name="chx",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "A chest X-ray is checked for four findings (cardiomegaly, pleural effusion, consolidation, "
                "pneumothorax) and is given a severity code out of five, in increasing order of severity: "
                "healthy, green, yellow, orange, red.\n"
                "- Exactly one severity code is assigned to the X-ray: at least one, and no two codes at once.\n"
                "- The code depends only on how many of the four findings are present, whichever they are:\n"
                "  - no finding present: healthy;\n"
                "  - exactly one finding present: green;\n"
                "  - exactly two findings present: yellow;\n"
                "  - exactly three findings present: orange;\n"
                "  - all four findings present: red.\n"
                "- Any combination of findings may occur; only the code is constrained by them.\n"
                "Background facts that must NOT be encoded: how serious a particular finding is on its own "
                "(e.g. a pneumothorax can be an emergency by itself) — every finding counts the same; which "
                "findings tend to occur together (e.g. effusion with cardiomegaly); and any other pathology "
                "the X-ray may show."
            ),
            not_detailed=(
                "The severity code of a chest X-ray goes up with the number of findings it shows: healthy "
                "with no finding, then green, yellow and orange, and red when all four findings are present."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="ChestX-Rays (NIH ChestX-ray14, via torchxrayvision)",
            citation=(
                "Wang, Peng, Lu, Lu, Bagheri, Summers. ChestX-ray8: Hospital-scale Chest X-ray Database and "
                "Benchmarks on Weakly-Supervised Classification and Localization of Common Thorax Diseases. "
                "CVPR 2017. Cohen, Viviano, Bertin, Morrison, Torabian, Guarrera, Lungren, Chaudhari, Brooks, "
                "Hashir, Bertrand. TorchXRayVision: A library of chest X-ray datasets and models. MIDL 2022."
            ),
            licence="unrestricted use (NIH Clinical Center); attribution requested",
            published_clauses=27,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "4 findings (cardiomegaly, effusion, consolidation, pneumothorax, chosen from the NIH "
                "ChestX-ray14 labels) + 5 severity codes named after the published healthy..red scale; code k "
                "holds iff exactly k findings are present, so the 16 finding patterns are the 16 models. "
                "Encoding without auxiliaries: exactly-one over the codes (pairwise, 11 clauses) and one "
                "clause per finding pattern forcing the code of its size (16 clauses) = 27 clauses, the "
                "published count. The at-least-one clause is implied by the pattern clauses and kept for "
                "readability."
            ),
        ),
        encode=encode,
        oracle_batch=_chx_oracle,
        enumerate_valid=_chx_valid,
    )
