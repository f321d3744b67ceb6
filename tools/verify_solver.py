"""Compatibility shim: this module moved to :mod:`autonesy.tools.verify.solver` (the verifier in one place per layer)."""

from autonesy.tools.verify.solver import (
    VERDICTS,
    Composition,
    CompositionError,
    Decision,
    contradiction,
    decide,
    evaluate3,
    parse_composition,
    render,
    to_z3,
)

__all__ = [
    "Composition",
    "CompositionError",
    "Decision",
    "VERDICTS",
    "contradiction",
    "decide",
    "evaluate3",
    "parse_composition",
    "render",
    "to_z3",
]
