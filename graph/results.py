"""The sweep directory as a store, and the results rows read from it: the read model of sweeps.

Report and viewer read sweeps through this module only, so reading results never loads the
executors, the agents or LangGraph. The directory (written by ``graph/sweep``)::

    sweep.json          the grids run into DIR (one entry per distinct grid, in the order first run)
    attempts/<id>/      one run directory per attempt (what ``run_attempt`` writes, see graph/run.py)
                        plus ``job.json`` (the attempt's grid point) and, after a failure, ``error.json``
    results.jsonl       one row per attempt (schema: ``ROW_FIELDS``), deterministic order
    results.csv         the same rows as CSV (lists joined with ';')

A row is always rebuilt from its attempt directory (:func:`attempt_row`), whatever state it is in.
LLM answers live in the response cache every run and sweep shares (``agents/llm/cache.py``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from autonesy.graph.rundir import CHECKPOINTS_FILE, read_json
from autonesy.graph.summary import MODEL_OUTCOMES, FormulaScore, Outcome, RunSummary, SummaryError
from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tasks.registry import TASK_NAMES, TaskSpec
from autonesy.tools import safe_files
from autonesy.tools.llm_spec import LLMSpec, LLMSpecError, redact_spec
from autonesy.tools.options import FORMATS
from autonesy.tools.table_cells import csv_cell

EXPERT = "expert"
ATTEMPTS_DIR = "attempts"
JOB_FILE = "job.json"
ERROR_FILE = "error.json"
NOT_APPLICABLE_FILE = "not_applicable.json"
TIMEOUT_FILE = "timeout.json"
TIMING_FILE = "timing.json"
SWEEP_FILE = "sweep.json"
RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"

# what the answers the response cache gave cost when they were made (a study's "would cost"; in no spent count)
CACHED_USAGE = ("cached_prompt_tokens", "cached_completion_tokens", "cached_llm_seconds")
ROW_STATUSES = (*(o.value for o in Outcome), "timeout", "not_applicable", "pending")  # also why there is no summary
SUMMARY_COLUMNS = (  # copied from the attempt's RunSummary, typed as it types them
    "status",
    "failure",
    "reason",
    "repair_rounds",
    "semantic_rounds",
    "autofixes",
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "llm_seconds",
    *CACHED_USAGE,
)
SCORE_COLUMNS = ("f1", *(name for name in FormulaScore.model_fields if name != "f1"))  # F1 first, as in the tables


def _columns() -> dict[str, Any]:
    """Each column's type and description, in column order: the job's settings, the outcome (the
    summary's fields and what the row derives from them), the formula's score (one column per
    :class:`FormulaScore` field), the run directory. An attempt without a summary leaves the
    outcome and score columns empty."""
    job: dict[str, tuple[Any, str]] = {
        "attempt_id": (str, "16 hex digits: SHA-256 of the attempt's identity (see attempt_identity)"),
        "task": (
            str,
            "task name (catalogue name, a plugin's mypkg/name, task-file name, satbench-<key>, dcpbench-<problem>)",
        ),
        "task_spec": (
            str,
            "what load_task reads: a catalogue name, a plugin's mypkg/name, a task file, satbench:PATH#KEY, dcpbench:PATH#ID",
        ),
        "benchmark": (
            Literal["catalogue", "plugin", "taskfile", "satbench", "dcpbench"],
            "catalogue | plugin | taskfile | satbench | dcpbench",
        ),
        "num_vars": (int | None, "number of task variables"),
        "llm": (str, "the LLM spec as given to --llm ('expert' for the expert policy)"),
        "model": (str, "the model name (the part after '@' or 'openai:'; 'expert')"),
        "format": (str, "output format: dimacs | nat | pysat | cpmpy | sympy"),
        "prompt": (str, "prompt style: zs | zs-cot"),
        "detail": (str, "description level: detailed | not-detailed"),
        "policy": (str, "agent policy: zs | zs-cot | oracle-feedback | few-shot | expert"),
        "decoding": (str, "free | grammar (constrained to the format's answer grammar for the task)"),
        "repeat": (int, "repeat index (0-based; --repeats draws independent answers: cache keys carry the attempt id)"),
        "max_repairs": (int | None, "syntax-repair budget"),
        "max_tokens": (int | None, "completion-token budget per LLM call (empty: the backend's default)"),
    }
    outcome: dict[str, tuple[Any, str]] = {
        "status": (
            Literal[ROW_STATUSES],
            "accepted (the formula parsed and passed the checks: see relation and f1 for how right it is) | rejected (the model gave no acceptable formula) | infra_failed (the LLM endpoint failed past its retries: not scored, in no rate, retried on the next run) | timeout (ran past the per-attempt time limit; retried only under a longer limit) | not_applicable (the format cannot express this task's reference, e.g. NAT/SymPy for a ground truth with auxiliaries; never retried) | error (raised; retried on the next run) | unfinished | pending",
        ),
        "failure": (
            RunSummary.model_fields["failure"].annotation,
            "why not accepted: syntax | token_budget | empty_answer | repeated_answer | ok_on_error (rejected); connection | dns | auth | server_error | rate_limit | deadline (infra_failed); bad_request | config | crash (error); empty otherwise",
        ),
        "syntax_error": (
            bool,
            "true when rejected because no parseable formula was reached (after repair, or [[OK]] on an error)",
        ),
        "reason": (
            RunSummary.model_fields["reason"].annotation,
            "why the attempt was not accepted (or the exception, for status error)",
        ),
        "repair_rounds": (RunSummary.model_fields["repair_rounds"].annotation, "[[OK]]/[[FIXED]] rounds used"),
        "semantic_rounds": (RunSummary.model_fields["semantic_rounds"].annotation, "oracle-feedback rounds used"),
        "autofixes": (
            RunSummary.model_fields["autofixes"].annotation,
            "autofixes applied (list in JSONL, ';'-joined in CSV)",
        ),
        "n_autofixes": (int, "number of autofixes"),
        "llm_calls": (
            RunSummary.model_fields["llm_calls"].annotation,
            "requests sent to the model (answers from the response cache not counted)",
        ),
        "cached_calls": (
            RunSummary.model_fields["cached_calls"].annotation,
            "answers the shared response cache gave instead of the model (not in the token counts)",
        ),
        "prompt_tokens": (RunSummary.model_fields["prompt_tokens"].annotation, "prompt tokens of those requests"),
        "completion_tokens": (
            RunSummary.model_fields["completion_tokens"].annotation,
            "completion tokens of those requests",
        ),
        "llm_seconds": (RunSummary.model_fields["llm_seconds"].annotation, "summed latency of those requests"),
        "cached_prompt_tokens": (
            RunSummary.model_fields["cached_prompt_tokens"].annotation,
            "prompt tokens the cached answers cost when they were made (not spent again)",
        ),
        "cached_completion_tokens": (
            RunSummary.model_fields["cached_completion_tokens"].annotation,
            "completion tokens the cached answers cost when they were made (not spent again)",
        ),
        "cached_llm_seconds": (
            RunSummary.model_fields["cached_llm_seconds"].annotation,
            "summed latency of the cached answers when they were made",
        ),
        "wall_seconds": (
            float,
            "wall time of the run that finished the attempt (a resumed attempt: the last run only)",
        ),
        "oracle_passed": (bool, "oracle test verdict on the accepted formula (empty when rejected)"),
        "compiled": (bool, "the SDD fit its budget (empty when rejected)"),
        "sdd_size": (int, "SDD size"),
    }
    score = {name: (FormulaScore.model_fields[name].annotation, _score_description(name)) for name in SCORE_COLUMNS}
    columns = {name: (kind, Field(description=text)) for name, (kind, text) in job.items()}
    columns |= {
        name: (kind | None, Field(None, description=text)) for name, (kind, text) in {**outcome, **score}.items()
    }
    return columns | {
        "run_dir": (str, Field(description="the attempt's run directory, relative to the sweep directory"))
    }


def _score_description(name: str) -> str:
    text = FormulaScore.model_fields[name].description or name
    if name == "f1":
        return f"{text}; 0 for a rejected attempt (as in the paper); empty without ground truth"
    return f"{text} (empty when rejected)"


ResultsRow: type[BaseModel] = create_model(
    "ResultsRow",
    __doc__="One attempt's row in results.jsonl and results.csv (strict: exactly what the row builder writes).",
    __config__=ConfigDict(strict=True, extra="forbid"),
    **_columns(),
)
# One row per attempt, in this column order (results.jsonl and results.csv): name → description.
ROW_FIELDS: dict[str, str] = {name: field.description or name for name, field in ResultsRow.model_fields.items()}
TIMING_FIELDS = ("wall_seconds", "llm_seconds")  # differ between two runs of the same sweep


def benchmark_of(task_spec: str) -> str:
    """Which benchmark a task spec comes from (the results table's ``benchmark`` column, which the report's marginals
    group by): catalogue | taskfile | satbench | dcpbench."""
    return TaskSpec.parse(task_spec).kind


def model_name(llm: str) -> str:
    """The model part of an LLM spec, so the report can group attempts by model whatever endpoint served it
    (a recorded spec that does not parse is shown as it is)."""
    if llm == EXPERT:
        return EXPERT
    try:
        return LLMSpec.parse(llm).model_name
    except LLMSpecError:
        return llm


def finished(run_dir: Path, limit_s: float | None) -> bool:
    """An attempt that needs no rerun: accepted or rejected (a model outcome), not applicable, or
    stopped by a limit at least as long as this run's. One that ended ``infra_failed`` or ``error``
    is rerun, and resumes from the checkpoint before its failed call."""
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError:  # damaged: rerun, which resumes from the checkpoint and writes it again
        return False
    if summary is not None:
        return summary.status in MODEL_OUTCOMES
    if safe_files.is_file(run_dir / NOT_APPLICABLE_FILE):
        return True
    stopped = read_json(run_dir / TIMEOUT_FILE)
    stopped_after = stopped.get("limit_s") if isinstance(stopped, dict) else None
    return isinstance(stopped_after, (int, float)) and limit_s is not None and stopped_after >= limit_s


RESUME_STATES = ("done", "infra_failed", "error", "unfinished", "new")


def resume_state(run_dir: Path, limit_s: float | None) -> str:
    """What a sweep run does with an attempt: reuse it (``done``), retry it after an outage
    (``infra_failed``) or a crash (``error``), resume it from its checkpoint (``unfinished``), or
    start it (``new``)."""
    if finished(run_dir, limit_s):
        return "done"
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError:
        return "error"
    if summary is not None and summary.status == Outcome.INFRA_FAILED:
        return "infra_failed"
    if (summary is not None and summary.status == Outcome.ERROR) or (run_dir / ERROR_FILE).is_file():
        return "error"
    if (run_dir / CHECKPOINTS_FILE).exists() or summary is not None:
        return "unfinished"
    return "new"


def attempt_row(out: str | Path, job: Mapping[str, Any], run_dir: str | Path | None = None) -> dict[str, Any]:
    """The results row of one attempt, from its directory (whatever state it is in); ``run_dir``
    defaults to the sweep's ``out/attempts/<id>``."""
    out = Path(out)
    run_dir = Path(run_dir) if run_dir is not None else out / ATTEMPTS_DIR / job["attempt_id"]
    config = job["config"]
    row: dict[str, Any] = dict.fromkeys(ROW_FIELDS)
    row.update(
        attempt_id=job["attempt_id"],
        task_spec=config["task"],
        benchmark=benchmark_of(config["task"]),
        llm=redact_spec(job["llm"]),
        model=model_name(job["llm"]),
        format=config["format"],
        prompt=config["prompt"],
        detail=config["detail"],
        policy=config["policy"],
        decoding=config.get("decoding") or "free",
        repeat=job.get("repeat", 0),
        max_repairs=config["max_repairs"],
        max_tokens=config.get("max_tokens") if type(config.get("max_tokens")) is int else None,
        run_dir=f"{ATTEMPTS_DIR}/{job['attempt_id']}",
        autofixes=[],
    )
    # until the summary names the task, the spec stands for it: loading the task file or benchmark copy a
    # received job.json names would read (and with --trust-task-code import) whatever it points at
    row["task"] = job.get("task") or config["task"]
    row["num_vars"] = job.get("num_vars")
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError as error:  # a damaged summary: the attempt is retried like one that raised
        row.update(status="error", reason=str(error))
        return row
    if summary is None:
        failure = read_json(run_dir / ERROR_FILE)
        not_applicable = read_json(run_dir / NOT_APPLICABLE_FILE)
        stopped = read_json(run_dir / TIMEOUT_FILE)
        if isinstance(not_applicable, dict):
            row.update(status="not_applicable", reason=str(not_applicable.get("reason", "")))
        elif isinstance(stopped, dict):
            row.update(
                status="timeout",
                reason=f"stopped after {stopped.get('limit_s')} s, the per-attempt time limit",
                wall_seconds=stopped.get("seconds"),
            )
        elif isinstance(failure, dict):
            row.update(status="error", reason=str(failure.get("error", "")))
        elif any(safe_files.entry_stat(run_dir / name) for name in (CHECKPOINTS_FILE, "trace.jsonl")):
            row["status"] = "unfinished"
        else:
            row["status"] = "pending"
        return row
    row.update(summary_fields(summary))
    row["task"] = summary.task or row["task"]
    timing = read_json(run_dir / TIMING_FILE)
    row["wall_seconds"] = timing.get("wall_seconds") if isinstance(timing, dict) else None
    return row


def summary_fields(summary: RunSummary) -> dict[str, Any]:
    """The results-row fields an attempt's summary decides (the rest come from its job)."""
    fields: dict[str, Any] = summary.model_dump(mode="json", include=set(SUMMARY_COLUMNS))
    fields.update(
        syntax_error=summary.syntax_error,
        n_autofixes=len(summary.autofixes),
        llm_seconds=round(summary.llm_seconds, 4),
        cached_llm_seconds=round(summary.cached_llm_seconds, 4),
    )
    if summary.accepted:
        oracle, compiled = summary.oracle_test, summary.compiled
        fields.update(
            oracle_passed=oracle.passed if oracle else None,
            compiled=compiled.ok if compiled else None,
            sdd_size=compiled.size if compiled else None,
        )
        if summary.metrics:
            fields.update(summary.metrics.model_dump(include=set(SCORE_COLUMNS)))
    elif summary.status == Outcome.REJECTED:
        fields["f1"] = 0.0
    return fields


def order_key(row: Mapping[str, Any]) -> tuple:
    """Sort key of a results row: expert first, then LLM, catalogue order of tasks, format, prompt, detail, policy and
    repeat, so results files are deterministic."""
    spec = row["task_spec"]
    if spec in TASK_NAMES:
        task_key: tuple = (0, TASK_NAMES.index(spec), "", 0, "")
    else:
        head, _, key = spec.rpartition("#")
        task_key = (1, 0, head or spec, int(key) if key.isdigit() else 0, "" if key.isdigit() else key)
    return (
        row["llm"] != EXPERT,
        row["llm"],
        task_key,
        FORMATS.index(row["format"]) if row["format"] in FORMATS else 9,
        row["prompt"],
        DETAIL_LEVELS.index(row["detail"]) if row["detail"] in DETAIL_LEVELS else 9,
        row["policy"],
        row.get("repeat") or 0,
        row["attempt_id"],
    )


def recorded_jobs(out: str | Path) -> list[dict[str, Any]]:
    """Every job ever written into the sweep directory. A sweep directory may come from someone else:
    a ``job.json`` without the fields a results row is built from is skipped, not a traceback."""
    jobs = []
    for path in sorted((Path(out) / ATTEMPTS_DIR).glob(f"*/{JOB_FILE}")):
        job = read_json(path, root=Path(out))
        if isinstance(job, dict) and job.get("attempt_id") == path.parent.name and _well_formed(job):
            jobs.append(job)
    return jobs


def _well_formed(job: Mapping[str, Any]) -> bool:
    config = job.get("config")
    return (
        isinstance(job.get("llm"), str)
        and type(job.get("repeat", 0)) is int
        and isinstance(config, dict)
        and all(isinstance(config.get(key), str) for key in ("task", "format", "prompt", "detail", "policy"))
        and type(config.get("max_repairs")) is int
        and isinstance(config.get("decoding"), (str, type(None)))
    )


def collect_rows(out: str | Path) -> list[dict[str, Any]]:
    """Every recorded attempt's row, rebuilt from its directory, in table order."""
    return sorted((attempt_row(out, job) for job in recorded_jobs(out)), key=order_key)


def write_results(out: str | Path, rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rebuild results.jsonl and results.csv from the attempt directories (atomically)."""
    out = Path(out)
    rows = collect_rows(out) if rows is None else rows
    safe_files.write_text(out / RESULTS_JSONL, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=list(ROW_FIELDS))
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(row.get(k)) for k in ROW_FIELDS})
    safe_files.write_text(out / RESULTS_CSV, table.getvalue())
    return rows


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return csv_cell(";".join(map(str, value)))
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_cell(value)


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a results.jsonl file (or of the sweep directory holding one)."""
    return list(iter_results(path))


def iter_results(path: str | Path) -> Iterator[Any]:
    """The JSON values of a results.jsonl file (or of the sweep directory holding one), one line at a time: a
    reader that checks each row as it comes never holds a large table twice."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_JSONL
    for line in safe_files.read_lines(path):  # a chunk at a time: never the whole file
        if line.strip():
            yield json.loads(line.decode("utf-8", errors="replace"))
