"""Compatibility shim: this module moved to :mod:`autonesy.tools.verify.checker_run` (the verifier in one place per layer)."""

from autonesy.tools.verify.checker_run import (
    CHECKER_LIMITS,
    CheckerRun,
    run_checker_code,
    run_user_function,
    scrub,
    text_hash,
)

__all__ = [
    "CHECKER_LIMITS",
    "CheckerRun",
    "run_checker_code",
    "run_user_function",
    "scrub",
    "text_hash",
]
