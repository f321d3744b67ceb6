"""One formalization attempt from Python: the same graph and run directory as ``autonesy-agent run``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from autonesy.tools.config import LLM_TIMEOUT_S, MAX_REPAIRS

if TYPE_CHECKING:
    from autonesy.graph.summary import RunSummary
    from autonesy.tools.llm_spec import LLMSpec


def formalize(
    task: str | os.PathLike[str],
    *,
    llm: str | LLMSpec | None = None,
    policy: str | None = None,
    format: str = "cpmpy",
    prompt: str = "zs-cot",
    detail: str = "detailed",
    out: str | os.PathLike[str] | None = None,
    max_repairs: int = MAX_REPAIRS,
    decoding: str | None = None,
    cache: bool = True,
    llm_timeout: float = LLM_TIMEOUT_S,
    max_tokens: int | None = None,
    data: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
    train: str = "auto",
    seeds: int | None = None,
    epochs: int | None = None,
    progress: bool = False,
    notify: Callable[[str], None] | None = None,
) -> RunSummary:
    """Formalize one task end to end — ask the LLM, check the syntax, repair, oracle-test, compile, score
    (and train with ``train``) — in the run directory ``out`` (default ``runs/<task>/...``); running it
    again with the same ``out`` resumes. Returns the summary also written to ``summary.json``.

    ``task``: a catalogue name, a task file or a benchmark record (as :func:`autonesy.load_task`);
    ``llm``: an LLM spec (``openai:MODEL``, ``http://HOST:PORT/v1@MODEL``, ``local``, ``replay:TRACE``,
    a TOML file; default ``$AUTONESY_LLM``, else the embedded model); ``policy``: the agent policy
    (default: the prompt style's); ``data``: check the task's annotated labels in the oracle test;
    ``train``: ``spl,sl`` | ``spl`` | ``sl`` | ``none`` | ``auto``; ``progress``: training progress
    bars; ``notify``: a callable that hears progress lines. An attempt whose endpoint failed past its
    retries ends with status ``infra_failed`` (nothing scored; formalizing again retries it).

    The expert policy needs no LLM: it answers with the task's reference formula.

    >>> import autonesy, tempfile
    >>> run = autonesy.formalize("fashion", policy="expert", format="dimacs", out=tempfile.mkdtemp(), data=False)
    >>> run.status, run.metrics.relation, run.metrics.f1
    (<Outcome.ACCEPTED: 'accepted'>, 'equal', 1.0)
    """
    from autonesy.graph.run import RunConfig, run_attempt
    from autonesy.tools.llm_spec import LLMSpec

    config = RunConfig(
        task=os.fspath(task),
        format=format,
        prompt=prompt,
        detail=detail,
        policy=policy,
        llm=LLMSpec.parse(llm) if isinstance(llm, str) else llm,
        max_repairs=max_repairs,
        llm_timeout_s=llm_timeout,
        max_tokens=max_tokens,
        cache=cache,
        decoding=decoding,
        data=data,
        data_dir=os.fspath(data_dir) if data_dir is not None else None,
        train=train,
        seeds=seeds,
        epochs=epochs,
    )
    return run_attempt(config, Path(out) if out is not None else None, progress=progress, notify=notify)
