"""Reading what runs and sweeps wrote, as typed records (the read model: no LLM client, LangGraph or torch)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from autonesy.tools.errors import AutonesyError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from autonesy.graph.summary import RunSummary


class ResultsError(AutonesyError, ValueError):
    """A folder or file that holds no results of this version (the message says which line or why)."""


def read_results(path: str | os.PathLike[str]) -> list[BaseModel]:
    """A sweep's results table as typed rows, one per attempt.

    Args:
        path: a sweep directory (each row rebuilt from its attempt's directory, as the sweep does), or a
            ``results.jsonl`` file or a folder holding only one (each line checked against this version's
            columns).

    Returns:
        ``ResultsRow`` records: one field per column of ``results.csv`` (the job's settings, the
        outcome, the score against the ground truth; see the Sweeps page).

    Raises:
        ResultsError: no sweep there, or a line that is not a results row of this version.

    Examples:
        >>> import autonesy, tempfile
        >>> out = tempfile.mkdtemp()
        >>> _ = autonesy.sweep(out, tasks="fashion", formats="dimacs", prompts="zs", details="detailed",
        ...                    policy="expert", data=False)
        >>> [(row.task, row.status, row.relation, row.f1) for row in autonesy.read_results(out)]
        [('fashion', 'accepted', 'equal', 1.0)]
    """
    import json

    from pydantic import ValidationError

    from autonesy.graph.results import RESULTS_JSONL, ResultsRow, collect_rows
    from autonesy.tools import safe_files

    file = Path(path)
    if file.is_dir() and (file / "attempts").is_dir():
        return [ResultsRow.model_validate(row) for row in collect_rows(file)]
    if file.is_dir():  # a folder holding only the table (results.jsonl, as sent on)
        if not (file / RESULTS_JSONL).is_file():
            raise ResultsError(f"{file} holds no sweep (no attempts/ and no {RESULTS_JSONL} in it)")
        file = file / RESULTS_JSONL
    try:
        text = safe_files.read_text(file)
    except (OSError, UnicodeDecodeError) as error:
        raise ResultsError(f"{file}: cannot read it: {error}") from None
    typed = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            typed.append(ResultsRow.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as error:
            first = str(error).splitlines()[0]
            raise ResultsError(f"{file}:{number} is not a results row of this version ({first})") from None
    if file.name != RESULTS_JSONL and not typed:
        raise ResultsError(f"{file} holds no results rows")
    return typed


def read_run(run_dir: str | os.PathLike[str]) -> RunSummary:
    """The summary of a finished attempt (what ``formalize`` returned), read back from its run directory.

    Raises:
        ResultsError: no ``summary.json`` there (not a run directory, or the attempt has not finished).

    Examples:
        >>> import autonesy, tempfile
        >>> out = tempfile.mkdtemp()
        >>> _ = autonesy.formalize("chx", policy="expert", format="dimacs", out=out, data=False)
        >>> autonesy.read_run(out).metrics.relation
        'equal'
    """
    from autonesy.graph.summary import RunSummary

    summary = RunSummary.read(Path(run_dir))
    if summary is None:
        raise ResultsError(f"{run_dir} holds no summary.json: not a run directory, or its attempt has not finished")
    return summary
