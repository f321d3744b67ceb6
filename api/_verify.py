"""Instruction-following verification from Python: the same graph and run directory as ``autonesy-agent verify``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from autonesy.tools.config import CHECKER_TIMEOUT_S, LLM_TIMEOUT_S, MAX_REFLECTIONS

if TYPE_CHECKING:
    from autonesy.graph.verify.summary import VerificationSummary
    from autonesy.tools.llm_spec import LLMSpec


def _spec(llm: str | LLMSpec | None) -> LLMSpec | None:
    from autonesy.tools.llm_spec import LLMSpec

    return LLMSpec.parse(llm) if isinstance(llm, str) else llm


def verify(
    instruction: str,
    output: str,
    *,
    verifier: str = "nsvif",
    llm: str | LLMSpec | None = None,
    formulation_llm: str | LLMSpec | None = None,
    checker_llm: str | LLMSpec | None = None,
    judge_llm: str | LLMSpec | None = None,
    checkers: Sequence[str] = (),
    max_reflections: int = MAX_REFLECTIONS,
    llm_timeout: float = LLM_TIMEOUT_S,
    checker_timeout: float = CHECKER_TIMEOUT_S,
    out: str | os.PathLike[str] | None = None,
) -> VerificationSummary:
    """Verify that ``output`` follows ``instruction``: the verifier (``nsvif``: formulate the instruction
    as constraints, write and run a checker for each logic constraint in the sandbox, judge the rest;
    or ``nsvif-neu``, ``judge``, ``gepa-cot``, ``conv-cot``) runs in the run directory ``out``
    (default ``runs/verify/...``; the same ``out`` resumes). ``llm`` serves every agent unless a role
    has its own (``formulation_llm``, ``checker_llm``, ``judge_llm``); ``checkers`` are your own checker
    modules (paths, modules, ``module:function``). Returns the summary also written to ``summary.json``:
    its ``status`` is the verdict.

    >>> import autonesy
    >>> autonesy.verify("", "any response", llm="http://127.0.0.1:9/v1@m")
    Traceback (most recent call last):
    ...
    autonesy.graph.verify.run.VerifyError: the instruction is empty
    """
    from autonesy.graph.verify.run import VerifyConfig, verify_output

    config = VerifyConfig(
        verifier=verifier,
        llm=_spec(llm),
        formulation_llm=_spec(formulation_llm),
        checker_llm=_spec(checker_llm),
        judge_llm=_spec(judge_llm),
        checkers=list(checkers),
        max_reflections=max_reflections,
        llm_timeout_s=llm_timeout,
        checker_wall_s=checker_timeout,
    )
    return verify_output(instruction, output, config, Path(out) if out is not None else None)
