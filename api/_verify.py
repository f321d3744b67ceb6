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
    """Verify that a response follows an instruction, as ``autonesy-agent verify`` does, in a run
    directory (the same ``out`` resumes).

    Args:
        instruction: the instruction, verbatim.
        output: the response to verify.
        verifier: ``nsvif`` (formulate the instruction as constraints, write and run a checker for each
            logic constraint in the sandbox, judge the rest), ``nsvif-neu``, ``judge``, ``gepa-cot`` or
            ``conv-cot``.
        llm: the LLM spec of every agent (default ``$AUTONESY_LLM``, else the embedded model).
        formulation_llm: the formulation agent's own LLM (default: ``llm``).
        checker_llm: the LLM that writes checker code (default: ``llm``).
        judge_llm: the judge's LLM (default: ``llm``).
        checkers: your own checker modules (paths, modules, ``module:function``).
        max_reflections: reflection rounds on a checker at most.
        llm_timeout: seconds per LLM call, retries included.
        checker_timeout: seconds (CPU and wall) per checker run in the sandbox.
        out: the run directory (default ``runs/verify/<verifier>-<time>``).

    Returns:
        The verification's summary (also in ``summary.json``): the verdict is its ``status``, the
        reasons its ``explanation``.

    Raises:
        VerifyError: a bad option, an empty instruction, or a run directory holding another run.

    Examples:
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
