"""Compatibility shim: this module moved to :mod:`autonesy.graph.verify.vifbench` (the verifier in one place per layer)."""

from autonesy.graph.verify.vifbench import (
    DATA_FILE,
    evaluate,
    generate_data,
    import_ifeval,
    optimize_judge,
    read_data,
    report_markdown,
)

__all__ = [
    "DATA_FILE",
    "evaluate",
    "generate_data",
    "import_ifeval",
    "optimize_judge",
    "read_data",
    "report_markdown",
]
