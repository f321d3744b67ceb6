"""The paper's tables and plots from sweep results (``autonesy-agent report DIR…``).

Input: sweep directories (their ``results.jsonl``, or rebuilt from ``attempts/`` when a sweep was
interrupted before writing it), results files, or plain ``run`` directories (``summary.json``).
Only finished attempts (status ``accepted`` or ``rejected``) are counted; the report says how many
others (error, unfinished, pending) it left out.

Definitions (docs/architecture.md §6, as in auto-nesy-bench):
- **F1** of an attempt is the F1 of its accepted formula against the ground truth; a rejected
  attempt (no usable formula after repair, or an empty answer) counts as **F1 = 0**.
  Attempts on tasks without a ground truth are left out of F1. Attempts that ended ``infra_failed``
  (the endpoint failed past its retries) or ``error`` are no model's outcome: they are left out of
  every rate and listed with their counts.
- **syntax-error rate**: the share of attempts rejected because no parseable formula was reached
  (after autofix and repair, or the repair agent answered [[OK]] on an error). Empty answers
  are reported separately ("empty answers") and are not syntax errors.
- **mean ± std**: over the attempts of the group (population standard deviation, so a group of
  one attempt shows ± 0.000).
- relation shares: equal / permissive / strict / incomparable among all attempts, rejected ones
  as their own category.

Tables (each written as Markdown, LaTeX and CSV; CSV holds numbers, mean and std in their own
columns):
- ``by_setting``: F1 (and, second table, syntax-error rate) by output format × description level ×
  prompting — the paper's first table;
- ``by_llm``: per LLM: F1, syntax errors, empty answers, relation shares, repair rounds, autofixes,
  tokens, latency — the paper's second table;
- ``marginals``: F1 per format, per description level, per prompt style and per benchmark; with
  ``compare_published`` the published figures of docs/tasks.md next to ours (computed on the same slice:
  formats and prompts over detailed descriptions, as published; satbench/dcpbench as the best
  configuration's mean);
- ``downstream`` (when NeSy results exist): SPL and SL trained on the generated vs the expert
  formula — F1, accuracy, consistency, ΔF1 — overall and by the generated formula's relation.
  Read from ``downstream.jsonl`` files anywhere under the given directories, one JSON object per
  trained model: ``task, llm, format, prompt, detail, method (spl|sl), formula (generated|expert),
  relation (of the generated formula), seed, f1, accuracy, consistency``; and from
  ``downstream.json`` files holding a ``nesy.evaluate.train_and_evaluate`` result (its settings
  from the ``summary.json`` beside it). Ground-truth runs repeated in several attempt directories
  are counted once per (task, method, seed).

Plots (PNG): ``f1_by_format_model``, ``syntax_error_rate``, ``repair_rounds`` (histogram),
``relations`` (relation breakdown per LLM).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autonesy.graph import results
from autonesy.graph.rundir import CONFIG_FILE, read_json
from autonesy.graph.summary import RunSummary, SummaryError
from autonesy.tasks.task import DETAIL_LEVELS
from autonesy.tools.errors import AutonesyError
from autonesy.tools.formats.base import FORMATS
from autonesy.tools.terminal_text import terminal_line

REPORT_FORMATS = ("md", "latex", "csv")
FINISHED = ("accepted", "rejected")
RELATION_ORDER = ("equal", "permissive", "strict", "incomparable", "rejected")
DOWNSTREAM_FILE = "downstream.jsonl"  # flat rows, one per trained model
TRAINING_FILE = "downstream.json"  # one nesy.evaluate.train_and_evaluate result (per attempt directory)

PUBLISHED_SOURCE = "auto-nesy-bench (Bortolotti et al., 2026), figures as listed in docs/tasks.md"
PUBLISHED: dict[str, dict[str, Any]] = {
    "format": {"cpmpy": 0.575, "sympy": 0.549, "pysat": 0.453, "dimacs": 0.364, "nat": 0.331},
    "detail": {"detailed": 0.455, "not-detailed": 0.330},
    "prompt": {"zs": 0.437, "zs-cot": 0.472},
    # model: (F1, syntax-error rate or None)
    "model": {
        "gpt-oss-120b": (0.786, 0.078),
        "gemma4-31b": (0.706, 0.039),
        "qwen3-32b": (0.655, None),
        "olmo3-32b-think": (0.569, None),
        "gpt-oss-20b": (0.505, None),
        "qwen3-8b": (0.372, None),
        "mistral-nemo": (0.053, 0.628),
        "gemma3-27b": (0.040, 0.556),
    },
    "benchmark": {"satbench": 0.963, "dcpbench": 0.324},
}


class ReportError(AutonesyError, ValueError):
    """Nothing to report on (no results found), or an unusable option."""


# ------------------------------------------------------------------------------------ input
def _row_from_run_dir(run_dir: Path) -> dict[str, Any] | None:
    """A results row for a plain `run` directory (summary.json + config.json); None for a directory
    whose summary or configuration cannot be read (a damaged one is skipped, as in a sweep)."""
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError:
        return None
    config = read_json(run_dir / CONFIG_FILE)
    if summary is None or not isinstance(config, dict):
        return None
    task_spec = config.get("task_spec")
    max_repairs = config.get("max_repairs")
    job = {
        "attempt_id": f"run:{run_dir}",
        "config": {
            "task": task_spec if isinstance(task_spec, str) else summary.task,
            "format": summary.format,
            "prompt": summary.prompt,
            "detail": summary.detail,
            "policy": summary.policy,
            "decoding": summary.decoding,
            "max_repairs": max_repairs if type(max_repairs) is int else None,
        },
        "llm": summary.llm or results.EXPERT,
        "task": summary.task,
        "repeat": 0,
    }
    row = results.attempt_row(run_dir.parent, job, run_dir)
    row["run_dir"] = str(run_dir)
    return row


def load_results(paths: Iterable[str | Path]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(attempt rows, downstream rows) from sweep directories, results files or run directories."""
    rows: dict[str, dict[str, Any]] = {}
    downstream: list[dict[str, Any]] = []
    for path in map(Path, paths):
        if not path.exists():
            raise ReportError(f"{path}: no such file or directory")
        try:  # results a user received: anything malformed is one error line naming the path
            found, more = _results_in(path)
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as error:
            raise ReportError(
                f"{path}: cannot be read as results ({type(error).__name__}: {str(error)[:100]}); "
                "is it damaged or from another program?"
            ) from None
        for row in filter(None, map(_checked_row, found)):
            rows.setdefault(row["attempt_id"], row)
        downstream.extend(row for row in more if isinstance(row, dict))
    if not rows and not downstream:
        raise ReportError("no results found (expected sweep directories, results.jsonl files or run directories)")
    return sorted(rows.values(), key=results.order_key), downstream


_KEY_FIELDS = ("attempt_id", "task_spec", "llm", "format", "prompt", "detail", "policy")
_NUMBER_FIELDS = {
    "num_vars",
    "repeat",
    "max_repairs",
    "repair_rounds",
    "semantic_rounds",
    "n_autofixes",
    "llm_calls",
    "cached_calls",
    "prompt_tokens",
    "completion_tokens",
    "llm_seconds",
    "wall_seconds",
    "sdd_size",
    "f1",
    "precision",
    "recall",
    "mc_ratio",
    "tp",
    "fp",
    "fn",
    "tn",
}
_FLAG_FIELDS = {"syntax_error", "oracle_passed", "compiled", "exact"}


def _checked_row(row: Any) -> dict[str, Any] | None:
    """A results row from disk with each field of the type ``attempt_row`` writes (others emptied);
    None without the fields that identify the attempt."""
    if not isinstance(row, dict) or not all(isinstance(row.get(key), str) for key in _KEY_FIELDS):
        return None
    checked: dict[str, Any] = {}
    for key in results.ROW_FIELDS:
        value = row.get(key)
        if key in _NUMBER_FIELDS:
            fits = type(value) is int or (type(value) is float and math.isfinite(value))
        elif key in _FLAG_FIELDS:
            fits = type(value) is bool
        elif key == "autofixes":
            fits = isinstance(value, list) and all(isinstance(item, str) for item in value)
        else:
            fits = isinstance(value, str)
        checked[key] = value if fits else ([] if key == "autofixes" else None)
    return checked


def _results_in(path: Path) -> tuple[list[Any], list[Any]]:
    """(attempt rows, downstream rows) of one sweep directory, results file or folder of runs, unchecked."""
    downstream: list[Any] = []
    found: list[Any] = []
    if path.is_file():
        found = results.read_results(path)
    elif (path / results.RESULTS_JSONL).is_file():
        found = results.read_results(path)
    elif (path / results.ATTEMPTS_DIR).is_dir():
        found = results.collect_rows(path)
    else:
        for summary in sorted(path.rglob("summary.json")):
            row = _row_from_run_dir(summary.parent)
            if row is not None:
                found.append(row)
    if path.is_dir():
        for file in sorted(path.rglob(DOWNSTREAM_FILE)):
            downstream.extend(json.loads(line) for line in file.read_text().splitlines() if line.strip())
        for file in sorted(path.rglob(TRAINING_FILE)):
            downstream.extend(rows_from_training(json.loads(file.read_text()), file.parent))
    return found, downstream


def rows_from_training(result: Mapping[str, Any], run_dir: Path | None = None) -> list[dict[str, Any]]:
    """Flat downstream rows from a ``nesy.evaluate.train_and_evaluate`` result (``downstream.json``):
    one row per method × target × seed; the formula target is 'generated', the ground truth 'expert'.
    The attempt's settings come from a ``summary.json`` next to the file, when there is one."""
    context: dict[str, Any] = {}
    try:
        summary = RunSummary.read(run_dir) if run_dir is not None else None
    except SummaryError:
        summary = None
    if summary is not None:
        context = {"llm": summary.llm, "format": summary.format, "prompt": summary.prompt, "detail": summary.detail}
    relation = (result.get("formula") or {}).get("relation")
    seeds = list(result.get("seeds") or [])
    rows = []
    for method, entry in (result.get("results") or {}).items():
        for target, formula in (("formula", "generated"), ("ground_truth", "expert")):
            part = entry.get(target) or {}
            for index, metrics in enumerate(part.get("per_seed") or []):
                rows.append(
                    {
                        "task": result.get("task"),
                        **context,
                        "method": method,
                        "formula": formula,
                        "relation": relation if formula == "generated" else None,
                        "seed": seeds[index] if index < len(seeds) else index,
                        **{k: metrics.get(k) for k in ("f1", "precision", "recall", "accuracy", "consistency")},
                    }
                )
    return rows


def frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Finished attempts as a DataFrame with the report's derived columns."""
    df = pd.DataFrame([r for r in rows if r.get("status") in FINISHED])
    if df.empty:
        return df
    df["f1"] = pd.to_numeric(df["f1"], errors="coerce")
    df["syntax_error"] = df["syntax_error"].fillna(False).astype(bool)
    df["empty_answer"] = df["failure"] == "empty_answer" if "failure" in df else False
    df["rejected"] = df["status"] == "rejected"
    df["relation_or_rejected"] = [
        ("rejected" if rej else (rel if isinstance(rel, str) and rel else "unscored"))
        for rej, rel in zip(df["rejected"], df["relation"])
    ]
    for column in ("repair_rounds", "n_autofixes", "prompt_tokens", "completion_tokens", "llm_seconds", "llm_calls"):
        df[column] = pd.to_numeric(df[column], errors="coerce").fillna(0)
    df["tokens"] = df["prompt_tokens"] + df["completion_tokens"]
    df["model"] = df["model"].fillna(df["llm"])
    shared = df.groupby("model")["llm"].nunique()
    df["label"] = [llm if shared[model] > 1 else model for model, llm in zip(df["model"], df["llm"])]
    return df


# ----------------------------------------------------------------------------------- tables
@dataclass
class Table:
    """One report table, rendered as Markdown, LaTeX or CSV; ``data`` keeps the numbers for CSV (mean and std in their
    own columns)."""

    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    data: list[dict[str, Any]] = field(default_factory=list)  # numbers, for CSV
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        """The table as a Markdown section with its title."""
        lines = [
            f"### {self.title}",
            "",
            "| " + " | ".join(self.header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|",
        ]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in self.rows]
        lines += [""] + [f"_{note}_" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def latex(self) -> str:
        """The table as a LaTeX tabular (text escaped), for the paper."""
        spec = "l" + "r" * (len(self.header) - 1)
        lines = [
            f"% {self.title}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(_latex(h) for h in self.header) + " \\\\",
            "\\midrule",
        ]
        lines += [" & ".join(_latex(cell) for cell in row) + " \\\\" for row in self.rows]
        lines += ["\\bottomrule", "\\end{tabular}"] + [f"% {note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """The table's numbers as CSV (from ``data`` when present, else the shown cells)."""
        records = self.data or [dict(zip(self.header, row)) for row in self.rows]
        if not records:
            return ""
        columns = list(dict.fromkeys(k for record in records for k in record))
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for record in records:
            writer.writerow({k: _csv_number(record.get(k)) for k in columns})
        return buffer.getvalue()

    def render(self, fmt: str) -> str:
        """The table in one of ``REPORT_FORMATS``."""
        return {"md": self.markdown, "latex": self.latex, "csv": self.csv}[fmt]()


def _latex(text: str) -> str:
    text = str(text)
    for a, b in (
        ("\\", "\\textbackslash{}"),
        ("&", "\\&"),
        ("%", "\\%"),
        ("#", "\\#"),
        ("_", "\\_"),
        ("$", "\\$"),
        ("{", "\\{"),
        ("}", "\\}"),
    ):
        text = text.replace(a, b)
    return text.replace("±", "$\\pm$").replace("Δ", "$\\Delta$").replace("—", "--")


def _csv_number(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return round(value, 6)
    return value


def _stats(values: pd.Series) -> tuple[float, float, int]:
    values = pd.to_numeric(values, errors="coerce").dropna()
    if values.empty:
        return math.nan, math.nan, 0
    return float(values.mean()), float(values.std(ddof=0)), int(len(values))


def _pm(mean: float, std: float) -> str:
    return "—" if math.isnan(mean) else f"{mean:.3f} ± {std:.3f}"


def _pct(value: float) -> str:
    return "—" if math.isnan(value) else f"{100 * value:.1f}%"


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    present = list(dict.fromkeys(values))
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


def setting_tables(df: pd.DataFrame) -> list[Table]:
    """F1 and syntax-error rate by format (rows) × description level × prompting (columns)."""
    details = _ordered(df["detail"], DETAIL_LEVELS)
    prompts = _ordered(df["prompt"], ("zs", "zs-cot"))
    formats = _ordered(df["format"], FORMATS)
    combos = [(d, p) for d in details for p in prompts if ((df["detail"] == d) & (df["prompt"] == p)).any()]
    header = ["format"] + [f"{d} · {p}" for d, p in combos] + ["all"]
    f1_rows, err_rows, data = [], [], []
    for fmt in formats + ["all"]:
        part = df if fmt == "all" else df[df["format"] == fmt]
        f1_cells, err_cells = [fmt], [fmt]
        for d, p in combos + [("all", "all")]:
            cell = part if d == "all" else part[(part["detail"] == d) & (part["prompt"] == p)]
            mean, std, n = _stats(cell["f1"])
            err, _, n_all = _stats(cell["syntax_error"].astype(float)) if len(cell) else (math.nan, 0, 0)
            f1_cells.append(_pm(mean, std))
            err_cells.append(_pct(err))
            data.append(
                {
                    "format": fmt,
                    "detail": d,
                    "prompt": p,
                    "n": n_all,
                    "f1_mean": mean,
                    "f1_std": std,
                    "f1_n": n,
                    "syntax_error_rate": err,
                }
            )
        f1_rows.append(f1_cells)
        err_rows.append(err_cells)
    note = "F1 mean ± std over attempts; a rejected attempt counts F1 = 0."
    return [
        Table("by_setting", "F1 by output format, description level and prompting", header, f1_rows, data, [note]),
        Table(
            "syntax_errors_by_setting",
            "Syntax-error rate by output format, description level and prompting",
            header,
            err_rows,
            [],
            ["share of attempts left without a parseable formula after repair"],
        ),
    ]


def _match_published_model(model: str) -> str | None:
    norm = re.sub(r"[^a-z0-9]", "", model.lower())
    hits = [key for key in PUBLISHED["model"] if re.sub(r"[^a-z0-9]", "", key) in norm]
    return max(hits, key=len) if hits else None


def llm_table(df: pd.DataFrame, compare_published: bool = False) -> Table:
    """The paper's second table: per LLM, F1, syntax errors and empty answers, relation shares, repair rounds, autofixes, tokens
    and latency (optionally next to the published figures)."""
    header = (
        ["LLM", "attempts", "F1", "syntax errors", "empty answers"]
        + [r for r in RELATION_ORDER]
        + ["repair rounds", "autofixes", "tokens", "LLM s"]
    )
    if compare_published:
        header += ["published F1", "published syntax errors"]
    rows, data = [], []
    for llm in _ordered(df["llm"], [results.EXPERT]):
        part = df[df["llm"] == llm]
        model = str(part["model"].iloc[0])
        mean, std, n = _stats(part["f1"])
        record: dict[str, Any] = {
            "llm": llm,
            "model": model,
            "attempts": len(part),
            "f1_mean": mean,
            "f1_std": std,
            "f1_n": n,
            "syntax_error_rate": float(part["syntax_error"].mean()),
            "empty_answer_rate": float(part["empty_answer"].mean()),
            **{f"share_{r}": float((part["relation_or_rejected"] == r).mean()) for r in RELATION_ORDER},
            "repair_rounds_mean": float(part["repair_rounds"].mean()),
            "autofixes_mean": float(part["n_autofixes"].mean()),
            "tokens_mean": float(part["tokens"].mean()),
            "llm_seconds_mean": float(part["llm_seconds"].mean()),
        }
        cells = [
            model if model == llm or llm == results.EXPERT else f"{model} ({llm})",
            str(len(part)),
            _pm(mean, std),
            _pct(record["syntax_error_rate"]),
            _pct(record["empty_answer_rate"]),
        ]
        cells += [_pct(record[f"share_{r}"]) for r in RELATION_ORDER]
        cells += [
            f"{record['repair_rounds_mean']:.2f}",
            f"{record['autofixes_mean']:.2f}",
            f"{record['tokens_mean']:.0f}",
            f"{record['llm_seconds_mean']:.2f}",
        ]
        if compare_published:
            key = _match_published_model(model)
            f1, err = PUBLISHED["model"][key] if key else (None, None)
            record.update(published_model=key, published_f1=f1, published_syntax_error_rate=err)
            cells += ["—" if f1 is None else f"{f1:.3f}", "—" if err is None else _pct(err)]
        rows.append(cells)
        data.append(record)
    notes = ["F1 mean ± std over attempts (rejected = 0); relation shares over all attempts."]
    if compare_published:
        notes.append(f"published: {PUBLISHED_SOURCE}; averaged over formats and prompts.")
    return Table("by_llm", "Results per LLM", header, rows, data, notes)


def marginals_table(df: pd.DataFrame, compare_published: bool = False) -> Table:
    """F1 per format, description level, prompt style and benchmark, on the slices the paper publishes (optionally next
    to its figures)."""
    header = ["slice", "attempts", "F1", "syntax errors"] + (["published F1"] if compare_published else [])
    rows, data = [], []
    detailed = df[df["detail"] == "detailed"]

    def add(kind: str, value: str, part: pd.DataFrame, label: str, published: float | None = None) -> None:
        mean, std, n = _stats(part["f1"])
        err = float(part["syntax_error"].mean()) if len(part) else math.nan
        cells = [label, str(len(part)), _pm(mean, std), _pct(err)]
        record = {
            "slice": kind,
            "value": value,
            "attempts": len(part),
            "f1_mean": mean,
            "f1_std": std,
            "syntax_error_rate": err,
        }
        if compare_published:
            cells.append("—" if published is None else f"{published:.3f}")
            record["published_f1"] = published
        rows.append(cells)
        data.append(record)

    for fmt in _ordered(df["format"], FORMATS):
        part = detailed[detailed["format"] == fmt]
        if len(part):
            add("format", fmt, part, f"format {fmt} (detailed)", PUBLISHED["format"].get(fmt))
    for level in _ordered(df["detail"], DETAIL_LEVELS):
        add("detail", level, df[df["detail"] == level], f"description {level}", PUBLISHED["detail"].get(level))
    for prompt in _ordered(df["prompt"], ("zs", "zs-cot")):
        part = detailed[detailed["prompt"] == prompt]
        if len(part):
            add("prompt", prompt, part, f"prompt {prompt} (detailed)", PUBLISHED["prompt"].get(prompt))
    for bench in _ordered(df["benchmark"].fillna("catalogue"), ("catalogue", "taskfile", "satbench", "dcpbench")):
        part = df[df["benchmark"].fillna("catalogue") == bench]
        add("benchmark", bench, part, f"benchmark {bench}")
        if bench in PUBLISHED["benchmark"]:
            groups = part.groupby(["llm", "format", "prompt", "detail"])["f1"].mean()
            best = float(groups.max()) if len(groups) else math.nan
            cells = [
                f"benchmark {bench}, best configuration",
                str(len(part)),
                "—" if math.isnan(best) else f"{best:.3f}",
                "",
            ]
            record = {"slice": "benchmark_best", "value": bench, "attempts": len(part), "f1_mean": best}
            if compare_published:
                cells.append(f"{PUBLISHED['benchmark'][bench]:.3f}")
                record["published_f1"] = PUBLISHED["benchmark"][bench]
            rows.append(cells)
            data.append(record)
    notes = ["formats and prompt styles over detailed descriptions (as published)."]
    if compare_published:
        notes.append(f"published: {PUBLISHED_SOURCE}.")
    return Table("marginals", "F1 by format, description level, prompting and benchmark", header, rows, data, notes)


def downstream_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    """SPL and SL trained on generated vs expert formulas (F1, accuracy, consistency, ΔF1), overall and by the
    generated formula's relation; None without NeSy results."""
    if not rows:
        return None
    df = pd.DataFrame(rows)
    expert = df["formula"] == "expert"  # every attempt also trains on the ground truth: count each run once
    df = pd.concat([df[~expert], df[expert].drop_duplicates(subset=[c for c in ("task", "method", "seed") if c in df])])
    for column in ("f1", "accuracy", "consistency"):
        df[column] = pd.to_numeric(df.get(column), errors="coerce")
    df["relation"] = df.get("relation", pd.Series([None] * len(df))).fillna("all")
    header = ["method", "formula", "relation", "n", "F1", "accuracy", "consistency", "ΔF1 vs expert"]
    out_rows, data = [], []
    for method in _ordered(df["method"], ("spl", "sl")):
        part = df[df["method"] == method]
        expert = part[part["formula"] == "expert"]
        generated = part[part["formula"] == "generated"]
        expert_by_task = expert.groupby("task")["f1"].mean()

        def add(formula: str, relation: str, cell: pd.DataFrame, delta: float | None) -> None:
            stats = {c: _stats(cell[c]) for c in ("f1", "accuracy", "consistency")}
            out_rows.append(
                [method.upper(), formula, relation, str(len(cell))]
                + [_pm(*stats[c][:2]) for c in ("f1", "accuracy", "consistency")]
                + ["—" if delta is None or math.isnan(delta) else f"{delta:+.3f}"]
            )
            data.append(
                {
                    "method": method,
                    "formula": formula,
                    "relation": relation,
                    "n": len(cell),
                    **{f"{c}_mean": stats[c][0] for c in stats},
                    **{f"{c}_std": stats[c][1] for c in stats},
                    "delta_f1": delta,
                }
            )

        def delta(cell: pd.DataFrame) -> float:
            per_task = cell.groupby("task")["f1"].mean()
            shared = per_task.index.intersection(expert_by_task.index)
            return float((per_task[shared] - expert_by_task[shared]).mean()) if len(shared) else math.nan

        if len(expert):
            add("expert", "—", expert, None)
        if len(generated):
            add("generated", "all", generated, delta(generated))
            relations = [r for r in _ordered(generated["relation"], RELATION_ORDER) if r != "all"]
            for relation in relations:
                cell = generated[generated["relation"] == relation]
                add("generated", relation, cell, delta(cell))
    return Table(
        "downstream",
        "Downstream: SPL and SL on generated vs expert formulas",
        header,
        out_rows,
        data,
        ["ΔF1: mean over tasks of (generated − expert) F1, same method."],
    )


# ------------------------------------------------------------------------------------ plots
def _figure(width: float = 8.0, height: float = 4.5):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(figure)
    return figure


def matplotlib_text(label: str) -> str:
    """A label from a results file as matplotlib plain text: between two ``$`` it would be read as mathtext
    (a crafted model name like ``$\\frac{$`` stops the plot with a parse error), so each ``$`` is escaped;
    control characters are shown escaped (matplotlib's missing-glyph warning prints them on the terminal)."""
    return terminal_line(str(label)).replace("$", r"\$")


def _grouped_bars(ax, groups: list[str], series: dict[str, list[float]], errors: dict[str, list[float]] | None = None):
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, values, width, label=matplotlib_text(label), yerr=(errors or {}).get(label), capsize=2)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([matplotlib_text(group) for group in groups])
    if len(series) > 1:
        ax.legend(fontsize=7)


RELATION_COLOURS = {
    "equal": "#2a9d8f",
    "permissive": "#e9c46a",
    "strict": "#f4a261",
    "incomparable": "#e76f51",
    "rejected": "#6c757d",
    "unscored": "#adb5bd",
}


def plot_data(df: pd.DataFrame) -> dict[str, Any]:
    """The numbers behind the four plots (drawn as PNG here and in the browser by the viewer)."""
    formats = _ordered(df["format"], FORMATS)
    models = _ordered(df["label"], [results.EXPERT])
    by_cell = df.groupby(["label", "format"])
    f1 = by_cell["f1"].agg(["mean", lambda v: v.std(ddof=0)]).set_axis(["mean", "std"], axis=1)
    syntax = by_cell["syntax_error"].mean()
    top = int(df["repair_rounds"].max())
    rounds = df.groupby(["label", "repair_rounds"]).size()
    shares = pd.crosstab(df["label"], df["relation_or_rejected"], normalize="index")

    def value(series: pd.Series, key: tuple) -> float:
        found = series.get(key, math.nan)
        return 0.0 if pd.isna(found) else float(found)

    relations = {}
    for relation in list(RELATION_ORDER) + ["unscored"]:
        if relation in shares.columns:
            column = [float(shares[relation].get(m, 0.0)) for m in models]
            if any(column):
                relations[relation] = column
    return {
        "formats": formats,
        "models": models,
        "f1_mean": {m: [value(f1["mean"], (m, f)) for f in formats] for m in models},
        "f1_std": {m: [value(f1["std"], (m, f)) for f in formats] for m in models},
        "syntax_error_rate": {m: [value(syntax, (m, f)) for f in formats] for m in models},
        "rounds": [str(r) for r in range(top + 1)],
        "round_counts": {m: [int(value(rounds, (m, r))) for r in range(top + 1)] for m in models},
        "relations": relations,
    }


def write_plots(df: pd.DataFrame, out: Path) -> list[Path]:
    """Write the report's PNG plots into ``out``; returns the files written (none for an empty frame)."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    if df.empty:
        return written
    data = plot_data(df)

    def save(figure, name: str) -> None:
        figure.tight_layout()
        path = out / f"{name}.png"
        figure.savefig(path)
        written.append(path)

    figure = _figure()
    ax = figure.add_subplot()
    _grouped_bars(ax, data["formats"], data["f1_mean"], data["f1_std"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("F1 (rejected = 0)")
    ax.set_title("F1 by output format and model")
    save(figure, "f1_by_format_model")

    figure = _figure()
    ax = figure.add_subplot()
    _grouped_bars(ax, data["formats"], data["syntax_error_rate"])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("syntax-error rate")
    ax.set_title("Syntax-error rate by output format and model")
    save(figure, "syntax_error_rate")

    figure = _figure()
    ax = figure.add_subplot()
    _grouped_bars(ax, data["rounds"], data["round_counts"])
    ax.set_xlabel("repair rounds")
    ax.set_ylabel("attempts")
    ax.set_title("Repair rounds per attempt")
    save(figure, "repair_rounds")

    figure = _figure()
    ax = figure.add_subplot()
    left = [0.0] * len(data["models"])
    for relation, shares in data["relations"].items():
        ax.barh(
            [matplotlib_text(m) for m in data["models"]],
            shares,
            left=left,
            label=relation,
            color=RELATION_COLOURS[relation],
        )
        left = [a + b for a, b in zip(left, shares)]
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of attempts")
    ax.set_title("Relation of the formula to the ground truth")
    ax.legend(fontsize=7, loc="lower right")
    save(figure, "relations")
    return written


# ----------------------------------------------------------------------------------- report
@dataclass
class Report:
    """The tables and plots of one report, with how many attempts were counted and which were left out."""

    tables: list[Table]
    plots: list[Path]
    counted: int
    left_out: dict[str, int]
    folder: Path  # where the files were written

    def render(self, fmt: str) -> str:
        """The whole report in one format, with a note of the attempts left out (Markdown)."""
        parts = [table.render(fmt) for table in self.tables]
        if fmt == "md" and self.left_out:
            parts.append("_left out (not finished): " + ", ".join(f"{k} {v}" for k, v in self.left_out.items()) + "_\n")
        return ("\n" if fmt != "csv" else "\n").join(parts)


def build_report(
    paths: Iterable[str | Path], out: str | Path | None = None, *, compare_published: bool = False, plots: bool = True
) -> Report:
    """Tables (and PNG plots) from the results under ``paths``; files go to ``out`` (default:
    ``report/`` in the first path, or next to it when it is a file)."""
    given = [Path(p) for p in paths]
    if not given:
        raise ReportError("give at least one sweep or run directory")
    rows, downstream = load_results(given)
    df = frame(rows)
    left_out: dict[str, int] = {}
    for row in rows:
        if row.get("status") not in FINISHED:
            left_out[row.get("status") or "?"] = left_out.get(row.get("status") or "?", 0) + 1
    tables: list[Table] = []
    if not df.empty:
        tables += setting_tables(df)
        tables.append(llm_table(df, compare_published))
        tables.append(marginals_table(df, compare_published))
    extra = downstream_table(downstream)
    if extra is not None:
        tables.append(extra)
    if not tables:
        raise ReportError("no finished attempts to report on")
    target = Path(out) if out else (given[0] / "report" if given[0].is_dir() else given[0].parent / "report")
    target.mkdir(parents=True, exist_ok=True)
    for table in tables:
        for fmt, suffix in (("md", "md"), ("latex", "tex"), ("csv", "csv")):
            (target / f"{table.name}.{suffix}").write_text(table.render(fmt))
    written = write_plots(df, target) if plots and not df.empty else []
    return Report(tables, written, len(df), left_out, target)
