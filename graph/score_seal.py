"""An attempt's recorded score, tied to the formula it was made for and to the user who made it.

A sweep directory may come from elsewhere, and its files are plain text: a ``formula.cnf`` rewritten to a
wrong formula next to a ``summary.json`` that still says F1 = 1.0 must not be reused as a result. So the
summary carries a seal: this user's signature (:func:`autonesy.tools.cache_entries.signature`) over the
SHA-256 of the scored ``formula.cnf`` and the score itself. A resumed sweep reuses an accepted attempt's
score only when its seal checks against the formula on disk (:func:`score_is_trusted`); otherwise the
formula on disk is scored again (:func:`rescore`) against the task's ground truth. A run read back whole
from its checkpoint (``graph/run.py``) keeps the checkpoint's score only when the summary beside it seals
that score for that formula (:func:`seal_holds`); a checkpoint may come from elsewhere too. A received sweep is
signed by its author, not by you: all its scores are made again, on request (``report --rescore``) or
when you resume it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from autonesy.graph.results import ATTEMPTS_DIR, SWEEP_FILE, recorded_jobs, write_results
from autonesy.graph.rundir import SUMMARY_FILE, write_json
from autonesy.graph.summary import (
    FormulaMetrics,
    FormulaScore,
    Outcome,
    RunSummary,
    SummaryError,
    UnscoredFormula,
    json_safe,
)
from autonesy.tasks.task import Task
from autonesy.tools import safe_files
from autonesy.tools.cache_entries import signature, signed_by_this_user
from autonesy.tools.cnf import CNF, MAX_AUX_VARS, DimacsError, parse_dimacs
from autonesy.tools.counting import CountTimedOut
from autonesy.tools.metrics import score_formula

FORMULA_FILE = "formula.cnf"
FORMULA_LIMIT = 256 << 20  # bytes of an accepted formula read back (the task files' DIMACS cap)


def formula_digest(dimacs: str) -> str:
    """SHA-256 of the formula's file as written (UTF-8)."""
    return hashlib.sha256(dimacs.encode("utf-8", errors="replace")).hexdigest()


def score_seal(dimacs: str, score: FormulaScore | None) -> str:
    """This user's seal on ``score`` as the score of the formula ``dimacs``."""
    return signature([formula_digest(dimacs), score.model_dump(mode="json") if score else None])


def seal_holds(dimacs: str, score: FormulaScore | None, seal: str | None) -> bool:
    """Whether ``seal`` is this user's seal on ``score`` as the score of the formula ``dimacs``."""
    return signed_by_this_user([formula_digest(dimacs), score.model_dump(mode="json") if score else None], seal)


def score_of(cnf: CNF, task: Task) -> FormulaMetrics | UnscoredFormula:
    """The score of ``cnf`` against ``task``'s ground truth made now, as the attempt records it."""
    try:
        return FormulaMetrics.model_validate(json_safe(score_formula(cnf, task.ground_truth).to_dict()))
    except CountTimedOut as error:
        return UnscoredFormula(note=str(error))


def score_is_trusted(run_dir: Path, summary: RunSummary, *, root: Path | None = None) -> bool:
    """Whether the summary's score may be reused: nothing was scored (no formula accepted), or its seal is this
    user's for the ``formula.cnf`` in ``run_dir`` (below ``root``) as it is now."""
    if not summary.accepted:
        return True
    try:
        dimacs = safe_files.read_text(run_dir / FORMULA_FILE, root=root or run_dir, limit=FORMULA_LIMIT)
    except OSError:
        return False
    return seal_holds(dimacs, summary.metrics, summary.score_seal)


def rescore(run_dir: Path, summary: RunSummary, task: Task, *, root: Path | None = None) -> RunSummary:
    """The summary with the score of the ``formula.cnf`` in ``run_dir`` made again against ``task``'s ground truth
    (and sealed); an unreadable formula ends the attempt as an error naming it."""
    path = run_dir / FORMULA_FILE
    try:
        dimacs = safe_files.read_text(path, root=root or run_dir, limit=FORMULA_LIMIT)
        cnf = parse_dimacs(dimacs, max_vars=task.num_vars + MAX_AUX_VARS)
        if cnf.num_task_vars != task.num_vars:
            raise DimacsError(f"{cnf.num_task_vars} task variables, the task has {task.num_vars}")
    except (OSError, DimacsError) as error:
        reason = f"{path}: cannot be scored again ({str(error)[:200]})"
        return summary.model_copy(
            update={"status": Outcome.ERROR, "accepted": False, "metrics": None, "reason": reason}
        )
    if not task.has_ground_truth:
        return summary.model_copy(update={"metrics": None, "score_seal": score_seal(dimacs, None)})
    score = FormulaScore.part_of(score_of(cnf, task))
    return summary.model_copy(update={"metrics": score, "score_seal": score_seal(dimacs, score)})


def rescore_untrusted(out: Path, jobs: Iterable[Mapping[str, Any]], load_task: Callable[[str], Task]) -> int:
    """Score again, in the sweep directory ``out``, the finished attempts of ``jobs`` whose recorded score is not
    sealed by this user for the formula in their directory (a received sweep, an edited formula), and write their
    summaries; ``load_task`` gives the task of a job's task spec. Returns how many were scored again."""
    tasks: dict[str, Task] = {}
    count = 0
    for job in jobs:
        run_dir = out / ATTEMPTS_DIR / str(job["attempt_id"])
        try:
            summary = RunSummary.read(run_dir)
        except SummaryError:
            continue
        if summary is None or score_is_trusted(run_dir, summary, root=out):
            continue
        spec = str(job["config"]["task"])
        if spec not in tasks:
            tasks[spec] = load_task(spec)
        write_json(run_dir / SUMMARY_FILE, rescore(run_dir, summary, tasks[spec], root=out).model_dump(), root=out)
        count += 1
    return count


def rescore_sweep(out: Path) -> int:
    """:func:`rescore_untrusted` over every attempt recorded in the sweep directory ``out`` (none in a run
    directory or a results file), then its results files written again; returns how many were scored again."""
    from autonesy.tasks.registry import load_task

    out = Path(out)
    if not safe_files.is_file(out / SWEEP_FILE, root=out):
        return 0
    count = rescore_untrusted(out, recorded_jobs(out), load_task)
    if count:
        write_results(out)
    return count


__all__ = [
    "FORMULA_FILE",
    "formula_digest",
    "rescore",
    "rescore_sweep",
    "rescore_untrusted",
    "score_is_trusted",
    "score_seal",
]
