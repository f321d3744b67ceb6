"""One formalization attempt from Python: the same graph and run directory as ``autonesy-agent run``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from autonesy.tools.config import LLM_TIMEOUT_S, MAX_REPAIRS

if TYPE_CHECKING:
    from autonesy.graph.summary import RunSummary
    from autonesy.tasks.task import Task
    from autonesy.tools.llm_spec import LLMSpec


def _spec_of(task: Task | str | os.PathLike[str]) -> str:
    """The task spec a run records: the name or path given, or a loaded task's name when that name loads it."""
    from autonesy.graph.run import RunError
    from autonesy.tasks.registry import load_task
    from autonesy.tasks.task import Task, TaskError

    if not isinstance(task, Task):
        return os.fspath(task)
    try:
        named = load_task(task.name)
    except (TaskError, OSError):
        named = None
    if named is None or named.names != task.names or named.ground_truth != task.ground_truth:
        raise RunError(
            f"task {task.name!r} was not loaded by its name (a task file?): give formalize its path, "
            "which the run directory records"
        )
    return task.name


def formalize(
    task: Task | str | os.PathLike[str],
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
    """Formalize one task end to end through the same graph as ``autonesy-agent run``: ask the LLM,
    check the syntax, repair, oracle-test, compile, score, and train when asked.

    The attempt runs in the run directory ``out``; formalizing again with the same ``out`` resumes it,
    and the shared response cache means no finished LLM call is paid twice.

    Args:
        task: a catalogue name, a plugin's task (``mypkg/name``), a task file or a benchmark record
            (what the run directory records), or a task loaded by its name.
        llm: an LLM spec (``openai:MODEL``, ``http://HOST:PORT/v1@MODEL``, ``local``, ``replay:TRACE``,
            a TOML file; default ``$AUTONESY_LLM``, else the embedded model). The expert policy needs none.
        policy: a registered agent policy, a plugin's as ``mypkg/name`` (default: the prompt style's).
        format: the output format asked for: ``dimacs``, ``nat``, ``pysat``, ``cpmpy`` or ``sympy``.
        prompt: the prompt style, ``zs`` or ``zs-cot``.
        detail: the task description shown, ``detailed`` or ``not-detailed``.
        out: the run directory (default ``runs/<task>/<format>-<policy>-<detail>-<time>``).
        max_repairs: syntax-repair rounds at most.
        decoding: ``free`` or ``grammar`` (decode under the format's answer grammar; default: grammar
            for the embedded model, else free).
        cache: answer from (and into) the shared response cache.
        llm_timeout: seconds per LLM call, retries included.
        max_tokens: completion tokens per call (default: the backend's).
        data: the oracle test also checks the task's annotated labels (catalogue tasks).
        data_dir: where annotated data is kept (default ``$AUTONESY_DATA_DIR``, else the user cache).
        train: NeSy predictors to train on an accepted formula: ``spl,sl``, ``spl``, ``sl``, ``none``,
            or ``auto`` (``spl,sl`` on a short schedule with the embedded model, else none).
        seeds: training seeds (default 5; 1 under ``auto``).
        epochs: training epochs (default: the trainer's; 3 under ``auto``).
        progress: show training progress bars.
        notify: a callable that hears progress lines.

    Returns:
        The attempt's summary (also in ``summary.json``): ``status`` ``accepted``, ``rejected``,
        ``infra_failed`` (the endpoint failed past its retries: nothing scored, formalizing again
        retries) or ``error``; ``metrics`` holds the score against the ground truth.

    Examples:
        The expert policy answers with the task's reference formula, without an LLM:

        >>> import autonesy, tempfile
        >>> run = autonesy.formalize("fashion", policy="expert", format="dimacs", out=tempfile.mkdtemp(), data=False)
        >>> run.status, run.metrics.relation, run.metrics.f1
        (<Outcome.ACCEPTED: 'accepted'>, 'equal', 1.0)
    """
    from autonesy.graph.run import RunConfig, run_attempt
    from autonesy.tools.llm_spec import LLMSpec

    config = RunConfig(
        task=_spec_of(task),
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
