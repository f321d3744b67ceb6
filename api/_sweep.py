"""A grid of attempts from Python: the same sweep directory, cache and results table as ``autonesy-agent sweep``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from typing_extensions import Unpack

from autonesy.tools.config import LLM_TIMEOUT_S, MAX_REPAIRS

if TYPE_CHECKING:
    from autonesy.graph.sweep.grid import SweepSpec
    from autonesy.graph.sweep.run import SweepResult

Choices = str | Sequence[str]  # one comma list, or several


class GridOptions(TypedDict, total=False):
    """The grid's options as ``sweep`` takes them (each one optional; defaults in ``sweep_spec``)."""

    tasks: Choices
    formats: Choices
    prompts: Choices
    details: Choices
    llms: Choices
    policy: str | None
    repeats: int
    max_repairs: int
    max_tokens: int | None
    llm_timeout: float
    decoding: str | None
    attempt_time_limit: float | None
    data: bool
    limit: int | None
    sample_seed: int
    cache: bool


def _listed(choices: Choices) -> tuple[str, ...]:
    return (choices,) if isinstance(choices, str) else tuple(choices)


def sweep_spec(**grid: Unpack[GridOptions]) -> SweepSpec:
    """The grid ``sweep`` runs (and ``sweep --dry-run`` plans) from its options."""
    from autonesy.graph.sweep.grid import SweepSpec

    unknown = sorted(set(grid) - set(GridOptions.__annotations__))
    if unknown:  # a misspelt option would otherwise be dropped silently
        raise TypeError(
            f"unknown sweep option(s) {', '.join(unknown)}; known: {', '.join(GridOptions.__annotations__)}"
        )
    return SweepSpec(
        tasks=_listed(grid.get("tasks", "all")),
        formats=_listed(grid.get("formats", "all")),
        prompts=_listed(grid.get("prompts", "all")),
        details=_listed(grid.get("details", "both")),
        llms=_listed(grid.get("llms", ())),
        policy=grid.get("policy"),
        repeats=grid.get("repeats", 1),
        max_repairs=grid.get("max_repairs", MAX_REPAIRS),
        max_tokens=grid.get("max_tokens"),
        llm_timeout_s=grid.get("llm_timeout", LLM_TIMEOUT_S),
        decoding=grid.get("decoding"),
        attempt_time_limit_s=grid.get("attempt_time_limit"),
        data=grid.get("data", True),
        limit=grid.get("limit"),
        sample_seed=grid.get("sample_seed", 0),
        cache=grid.get("cache", True),
    )


def sweep(
    out: str | os.PathLike[str],
    *,
    executor: str = "local",
    concurrency: int = 4,
    workers: int | None = None,
    ray_address: str | None = None,
    progress: bool = False,
    console: Any = None,
    **grid: Unpack[GridOptions],
) -> SweepResult:
    """Run (or resume) a grid of attempts as ``autonesy-agent sweep`` does: one run directory per
    attempt in ``out``, and ``results.jsonl`` / ``results.csv`` rebuilt at the end. Running it again
    with the same ``out`` reuses finished attempts and retries the rest.

    The grid is LLMs × tasks × formats × prompts × details, ``repeats`` attempts each. Each choice
    is a comma list or a list of them.

    Args:
        out: the sweep directory.
        executor: ``local`` (threads), ``process`` (``workers`` processes) or ``ray``.
        concurrency: attempts running at once per LLM endpoint.
        workers: worker processes (``process`` executor; default min(concurrency, CPUs)).
        ray_address: a Ray cluster (``ray`` executor; default a local Ray instance).
        progress: show a progress bar.
        console: the ``rich.console.Console`` the progress bar and notes go to (default: standard error).
        **grid: ``tasks`` (default ``"all"``: the catalogue; names, ``mypkg/name``, task files,
            ``satbench:PATH``, ``dcpbench:PATH``), ``formats`` (``"all"``), ``prompts`` (``"all"``),
            ``details`` (``"both"``), ``llms`` (LLM specs; default ``$AUTONESY_LLM``, else the embedded
            model), ``policy`` (default: each prompt style's own), ``repeats``, ``max_repairs``,
            ``max_tokens``, ``llm_timeout`` (seconds per call), ``decoding``, ``attempt_time_limit``
            (seconds per attempt), ``data`` (oracle tests check annotated labels), ``limit`` and
            ``sample_seed`` (a fixed sample of the grid), ``cache`` (the shared response cache).

    Returns:
        What ran: ``rows`` (the results table; ``read_results`` reads it typed), ``counts`` per status,
        ``seconds``, and the benchmark records left out.

    Examples:
        >>> import autonesy, tempfile
        >>> done = autonesy.sweep(tempfile.mkdtemp(), tasks="fashion,chx", formats="dimacs", prompts="zs",
        ...                       details="detailed", policy="expert", data=False)
        >>> sorted((row["task"], row["status"], row["f1"]) for row in done.rows)
        [('chx', 'accepted', 1.0), ('fashion', 'accepted', 1.0)]
    """
    from autonesy.graph.sweep.run import run_sweep

    return run_sweep(
        sweep_spec(**grid),
        Path(out),
        executor=executor,
        concurrency=concurrency,
        workers=workers,
        ray_address=ray_address,
        progress=progress,
        console=console,
    )
