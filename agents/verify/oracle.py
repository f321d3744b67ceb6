"""Deprecated name of :mod:`autonesy.agents.verify.scripted_llm` (the scripted chat models)."""

from autonesy.agents.verify.scripted_llm import (
    HandlerChatModel,
    VifBenchOracle,
    estimate_tokens,
    oracle_chat_model,
    quoted_response,
)

__all__ = ["HandlerChatModel", "VifBenchOracle", "estimate_tokens", "oracle_chat_model", "quoted_response"]
