"""Compatibility shim: this module moved to :mod:`autonesy.tools.verify.ifeval_checkers` (the verifier in one place per layer)."""

from autonesy.tools.verify.ifeval_checkers import (
    IFEVAL_CHECKERS,
    count_sentences,
    detect_language,
    ifeval_check,
    ifeval_kind,
)

__all__ = [
    "IFEVAL_CHECKERS",
    "count_sentences",
    "detect_language",
    "ifeval_check",
    "ifeval_kind",
]
