"""Compatibility shim: reference formalizations moved to :mod:`autonesy.tasks.reference`."""

from autonesy.tasks.reference import (
    AUX_FREE_FORMATS,
    NoReference,
    reference_formalization,
    reference_origin,
    reference_source,
)

__all__ = ["AUX_FREE_FORMATS", "NoReference", "reference_formalization", "reference_origin", "reference_source"]
