"""Compatibility shim: this module moved to :mod:`autonesy.graph.verify.run` (the verifier in one place per layer)."""

from autonesy.graph.verify.run import (
    ROLES,
    Backends,
    VerifyConfig,
    VerifyError,
    config_record,
    load_checkers,
    make_runtime,
    run_graph,
    summarize,
    verify_output,
)

__all__ = [
    "Backends",
    "ROLES",
    "VerifyConfig",
    "VerifyError",
    "config_record",
    "load_checkers",
    "make_runtime",
    "run_graph",
    "summarize",
    "verify_output",
]
