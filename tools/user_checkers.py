"""Compatibility shim: this module moved to :mod:`autonesy.tools.verify.user_checkers` (the verifier in one place per layer)."""

from autonesy.tools.verify.user_checkers import (
    ENTRY_POINT_GROUP,
    UserChecker,
    UserCheckerError,
    load_spec,
    load_user_checkers,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "UserChecker",
    "UserCheckerError",
    "load_spec",
    "load_user_checkers",
]
