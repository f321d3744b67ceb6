"""The instruction-following verifier's graph layer: the verification state machine (:mod:`.graph`), and VifBench's
data and evaluation (:mod:`.vifbench`). Imports from ``autonesy.graph.verify`` keep working: it re-exports the graph."""

from autonesy.graph.verify.graph import (
    FEEDBACK_MODES,
    RECURSION_LIMIT,
    VERIFIERS,
    WHOLE_INSTRUCTION_JUDGES,
    VerifierMemory,
    VerifyAgents,
    VerifyRuntime,
    VerifyState,
    initial_state,
)

__all__ = [
    "FEEDBACK_MODES",
    "RECURSION_LIMIT",
    "VERIFIERS",
    "WHOLE_INSTRUCTION_JUDGES",
    "VerifierMemory",
    "VerifyAgents",
    "VerifyRuntime",
    "VerifyState",
    "initial_state",
]
