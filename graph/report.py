"""The paper's tables and plots from sweep results (``autonesy-agent report DIR…``).

Input: sweep directories (their ``results.jsonl``, or rebuilt from ``attempts/`` when a sweep was
interrupted before writing it), results files, or plain ``run`` directories (``summary.json``). An
attempt read in several of them keeps its most complete outcome (``merge_copies``: the same in every
order; two different finished outcomes are refused). Only finished attempts (status ``accepted`` or
``rejected``) are counted, but every planned attempt keeps its place: each row says **n of planned**,
and an LLM whose attempts all failed on infrastructure keeps its rows (n = 0). Attempts that ended
``infra_failed`` also get a table of their own; the report says how many others it left out.

**Cells never pool silently.** A cell is keyed by every setting that varies across the attempts
read (``SETTINGS``: LLM, format, prompt, detail, policy, decoding, max repairs, max tokens,
benchmark); each is a key column of every table. A condition that the other keys decide (a
plain sweep's policy is its prompt style, the decoding follows the LLM) adds no column. ``pool``
averages over settings on request, and every table's caption says which and over what values.

Definitions (docs/architecture.md §6, as in auto-nesy-bench):
- **F1** of an attempt is the F1 of its accepted formula against the ground truth; a rejected
  attempt (no usable formula after repair, or an empty answer) counts as **F1 = 0**.
  Attempts on tasks without a ground truth are left out of F1. Attempts that ended ``infra_failed``
  (the endpoint failed past its retries) or ``error`` are no model's outcome: they are left out of
  every rate and listed with their counts.
- **syntax-error rate** (the paper's, "after self-verification"): the share of attempts whose answer still
  does not parse after repair (failure ``syntax``, ``repeated_answer``, or [[OK]] answered on an error).
  Answers cut by the token budget and empty answers are their own columns, not syntax errors.
  **Before repair**: the share whose first answer did not parse (read from the attempt's trace: the
  repair loop's value is the difference).
- **mean ± std**: over the attempts of the group (population standard deviation, so a group of
  one attempt shows ± 0.000); **[low, high]**: the 95 % percentile bootstrap interval of the mean
  (``BOOTSTRAP_RESAMPLES`` resamples, NumPy seed ``BOOTSTRAP_SEED``: the same report twice is the
  same).
- relation shares: equal / permissive / strict / incomparable among all attempts, rejected ones
  as their own category.

Tables (each written as Markdown, LaTeX and CSV, every cell escaped for its reader by
``tools/table_cells.py``; CSV holds numbers, mean, std and interval in their own columns):
- ``by_setting``: F1 (and, second table, syntax-error rate) by output format × description level ×
  prompting — the paper's first table;
- ``by_llm``: per LLM: F1 with its interval, syntax errors before and after repair, empty answers,
  relation shares, repair rounds, autofixes, tokens, latency — the paper's second table;
- ``per_task``: per task: F1, accepted share, syntax errors before and after repair, equal share;
- ``rejections_by_kind``: per LLM, the share of attempts rejected for each ``failure`` kind;
- ``cost_by_llm``: tokens per LLM and their cost at the prices of the LLM's TOML config, spent now and what
  the study would cost (the response cache's answers at what they cost when they were made);
- ``marginals``: F1 per format, per description level, per prompt style and per benchmark; with
  ``compare_published`` the published figures of docs/tasks.md next to ours (computed on the same slice:
  formats and prompts over detailed descriptions, as published, and on our catalogue tasks only —
  the published figures average all 18, and the caption says how many we cover; satbench/dcpbench
  as the best configuration's mean);
- ``infra_failed``: the attempts an infrastructure failure stopped, one line each;
- ``downstream`` (when NeSy results exist): SPL and SL trained on the generated vs the expert
  formula — F1, accuracy, consistency, ΔF1 — overall and by the generated formula's relation.
  Read from ``downstream.jsonl`` files anywhere under the given directories, one JSON object per
  trained model: ``task, llm, format, prompt, detail, method (spl|sl), formula (generated|expert),
  relation (of the generated formula), seed, f1, accuracy, consistency``; and from
  ``downstream.json`` files holding a ``nesy.evaluate.train_and_evaluate`` result (its settings
  from the ``summary.json`` beside it). Ground-truth runs repeated in several attempt directories
  are counted once per (task, method, seed).

Plots (PNG): ``f1_by_format_model``, ``syntax_error_rate``, ``repair_rounds`` (histogram),
``relations`` (relation breakdown per LLM), one series per LLM and condition.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autonesy.graph import results
from autonesy.graph.report_rows import (
    FIRST_ANSWER_FIELD,
    FLAG_FIELDS,
    NUMBER_FIELDS,
    ReportError,
    RowColumns,
    load_results,
    typed_row,
)
from autonesy.graph.results import CACHED_USAGE
from autonesy.graph.trace import shorten
from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tasks.registry import TASK_NAMES
from autonesy.tools import safe_files
from autonesy.tools.llm_spec import LLMPrices, llm_prices
from autonesy.tools.options import FORMATS
from autonesy.tools.table_cells import csv_cell, latex_text, markdown_text
from autonesy.tools.terminal_text import terminal_line

FINISHED = ("accepted", "rejected")
INFRA_FAILED = "infra_failed"  # an infrastructure failure that outlived its retries: never scored
RELATION_ORDER = ("equal", "permissive", "strict", "incomparable", "rejected")

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


# ----------------------------------------------------------------------------------- tables
class Records(Sequence[dict[str, Any]]):
    """A table's CSV records: their values held column by column (``RowColumns``), and per record its own column
    names (a shared tuple), so that each reads back with exactly its keys, in its order. A report over thousands of
    LLMs holds tens of thousands of records; a tuple of Python values each took three times the memory (and a dict
    each, nine). Reading one gives a fresh dict."""

    def __init__(self, records: Iterable[Mapping[str, Any]] = ()) -> None:
        self._columns: dict[tuple[str, ...], tuple[str, ...]] = {}  # each distinct column tuple, stored once
        self._keys: list[tuple[str, ...]] = []
        self._values = RowColumns()
        for record in records:
            self.append(record)

    def append(self, record: Mapping[str, Any]) -> None:
        columns = tuple(record)
        self._keys.append(self._columns.setdefault(columns, columns))
        self._values.append(record)

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        values = self._values[index]
        return {name: values[name] for name in self._keys[index]}

    def values(self, name: str, rows: np.ndarray | None = None) -> list[Any]:
        """Column ``name`` of the records at ``rows`` (every record by default; None where a record lacks it)."""
        return self._values.values(name, rows)

    def columns(self) -> list[str]:
        """Every column name, in order of first appearance."""
        return list(dict.fromkeys(name for columns in self._columns for name in columns))


@dataclass
class Table:
    """One report table, rendered as Markdown, LaTeX or CSV; ``data`` keeps the numbers for CSV (mean and std in their
    own columns)."""

    name: str
    title: str
    header: list[str]
    rows: list[list[str]]
    data: Sequence[Mapping[str, Any]] = field(default_factory=Records)  # numbers, for CSV
    notes: list[str] = field(default_factory=list)
    lead: int = 1  # the leading key columns (text, left-aligned); the others hold numbers
    pooled: str = ""  # the settings averaged over on request ("policy: oracle-feedback, zs"), a column of the CSV

    def __post_init__(self) -> None:
        if not isinstance(self.data, Records):
            self.data = Records(self.data)
        # one object per distinct cell text: a table over thousands of LLMs repeats a few thousand texts in
        # hundreds of thousands of cells (formatted anew for each)
        shared: dict[str, str] = {}
        self.rows = [[shared.setdefault(cell, cell) for cell in row] for row in self.rows]

    def markdown(self) -> str:
        """The table as a Markdown section with its title."""
        cell = _once_per_text(markdown_text)
        lines = [
            f"### {markdown_text(self.title)}",
            "",
            "| " + " | ".join(map(cell, self.header)) + " |",
            "|" + "|".join("---" if i < self.lead else "---:" for i in range(len(self.header))) + "|",
        ]
        lines += ["| " + " | ".join(map(cell, row)) + " |" for row in self.rows]
        lines += [""] + [f"_{markdown_text(note)}_" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"

    def latex(self) -> str:
        """The table as a LaTeX tabular (text escaped), for the paper."""
        cell = _once_per_text(latex_text)
        spec = "l" * self.lead + "r" * (len(self.header) - self.lead)
        lines = [
            f"% {latex_text(self.title)}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(map(cell, self.header)) + " \\\\",
            "\\midrule",
        ]
        lines += [" & ".join(map(cell, row)) + " \\\\" for row in self.rows]
        lines += ["\\bottomrule", "\\end{tabular}"] + [f"% {latex_text(note)}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """The table's numbers as CSV (from ``data`` when present, else the shown cells)."""
        records = self.data if len(self.data) else Records(dict(zip(self.header, row)) for row in self.rows)
        if not len(records):
            return ""
        assert isinstance(records, Records)
        columns = records.columns()
        pooled = ["pooled_over"] if self.pooled else []  # a pooled table read on its own still says it was pooled
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([csv_cell(k) for k in columns + pooled])
        pooled_cells = [csv_cell(self.pooled)] * len(pooled)
        for start in range(0, len(records), _CSV_CHUNK):
            # a column at a time (a record lacking a column reads None there, an empty cell), not a dict a record
            rows = np.arange(start, min(start + _CSV_CHUNK, len(records)))
            cells = [_csv_column(records.values(name, rows)) for name in columns]
            writer.writerows(row + pooled_cells for row in map(list, zip(*cells)))
        return buffer.getvalue()

    def render(self, fmt: str) -> str:
        """The table in one of ``REPORT_FORMATS``."""
        return {"md": self.markdown, "latex": self.latex, "csv": self.csv}[fmt]()


_CSV_CHUNK = 2048  # records written at once: their cells, not a whole table's (all at once added 7 MB to the peak)


def _once_per_text(escape: Callable[[Any], str]) -> Callable[[str], str]:
    """``escape``, computed once per distinct text: a table over thousands of LLMs repeats a few thousand texts in
    hundreds of thousands of cells."""
    done: dict[str, str] = {}

    def escaped(text: str) -> str:
        found = done.get(text)
        if found is None:
            found = done[text] = escape(text)
        return found

    return escaped


def _csv_column(values: Iterable[Any]) -> list[Any]:
    """A column's CSV cells (``_csv_number`` of each; a text made safe once per distinct value)."""
    text = _once_per_text(csv_cell)
    return [text(value) if type(value) is str else _csv_number(value) for value in values]


def _csv_number(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return round(value, 6)
    return csv_cell(value)


def _numbers(values: Any) -> np.ndarray:
    """``values`` as floats with the missing ones (None, NaN, text) left out."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        data = values.astype(float, copy=False)
    else:
        data = np.asarray(pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce"), dtype=float)
    return data[~np.isnan(data)]


def _stats(values: Any) -> tuple[float, float, int]:
    data = _numbers(values)
    if data.size == 0:
        return math.nan, math.nan, 0
    return float(data.mean()), float(data.std()), int(data.size)


def _pm(mean: float, std: float) -> str:
    return "—" if math.isnan(mean) else f"{mean:.3f} ± {std:.3f}"


def _pct(value: float) -> str:
    return "—" if math.isnan(value) else f"{100 * value:.1f}%"


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    """The distinct ``values``: those named in ``order`` first, in its order, then the others sorted."""
    present = list(values.unique() if isinstance(values, pd.Series) else dict.fromkeys(values))
    return [v for v in order if v in present] + sorted(v for v in present if v not in order)


# ------------------------------------------------------------------------------- cells
# The settings that can tell two attempts apart. A report never averages over one of them silently: when it varies
# across the attempts read, it is a key column of every table (or the table's caption says it averages over it).
GRID_SETTINGS = ("llm", "format", "prompt", "detail")
CONDITION_SETTINGS = ("policy", "decoding", "max_repairs", "max_tokens", "benchmark")
SETTINGS = GRID_SETTINGS + CONDITION_SETTINGS
BOOTSTRAP_SEED = 2026
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_CONFIDENCE = 0.95
CATALOGUE_SIZE = len(TASK_NAMES)  # the published figures average the whole catalogue


@dataclass(frozen=True)
class Cells:
    """How the attempts read are split into cells: the settings that vary (each a key column), the
    ones pooled on request (with the values pooled), and conditions that follow from the keys."""

    keys: tuple[str, ...]
    pooled: dict[str, list[str]]
    conditions: tuple[str, ...]  # the keys among CONDITION_SETTINGS

    def notes(self) -> list[str]:
        """The caption lines every table carries: what was pooled on request."""
        return [f"pooled on request over {name}: {', '.join(values)}." for name, values in self.pooled.items()]


def cells_of(df: pd.DataFrame, pool: Sequence[str] = ()) -> Cells:
    """The key settings of ``df``: every setting with more than one value, except those pooled on request
    and conditions (policy, decoding, …) that the other keys already decide (the policy of a plain sweep
    is its prompt style; the decoding follows the LLM)."""
    unknown = sorted(set(pool) - set(SETTINGS))
    if unknown:
        raise ReportError(f"cannot pool over {', '.join(unknown)}; choose from {', '.join(SETTINGS)}")
    varies = [s for s in SETTINGS if df[s].nunique() > 1]
    pooled = {s: sorted(df[s].unique()) for s in varies if s in pool}
    keys = [s for s in GRID_SETTINGS if s in varies and s not in pool]
    for setting in CONDITION_SETTINGS:
        if setting not in varies or setting in pool:
            continue
        if not keys or df.groupby(keys, observed=True)[setting].nunique().max() > 1:
            keys.append(setting)
    return Cells(tuple(keys), pooled, tuple(k for k in keys if k in CONDITION_SETTINGS))


PAPER_SYNTAX_FAILURES = ("syntax", "repeated_answer", "ok_on_error")  # the answer still does not parse
USAGE_COLUMNS = (
    "repair_rounds",
    "n_autofixes",
    "prompt_tokens",
    "completion_tokens",
    "llm_seconds",
    "llm_calls",
    "cached_calls",
    *CACHED_USAGE,
)


# the fields of a results row that frame() and the tables read (a report over 100,000 rows frames no others)
TABLE_FIELDS = frozenset(
    {"status", "f1", "failure", "syntax_error", FIRST_ANSWER_FIELD, "relation", "model", "llm", "task"}
    | {*SETTINGS, *USAGE_COLUMNS}
)


def _held(rows: Iterable[Mapping[str, Any]], fields: Collection[str] | None = None) -> RowColumns:
    """``rows`` column by column, each field of the type ``attempt_row`` writes (``typed_row``: the viewer hands over a
    received file's rows as they are; a value of another type is emptied), text fields of other names (the viewer's
    ``sweep``) kept as they are. Only ``fields`` are held, when given (a received row may carry keys of its own)."""
    if isinstance(rows, RowColumns):
        return rows
    held = RowColumns()
    for row in rows:
        typed = typed_row(row)
        typed.update((name, value) for name, value in row.items() if name not in typed and isinstance(value, str))
        held.append(typed if fields is None else {name: value for name, value in typed.items() if name in fields})
    return held


def frame(
    rows: Iterable[Mapping[str, Any]],
    *,
    planned: bool = False,
    fields: Collection[str] | None = None,
    consume: bool = False,
) -> pd.DataFrame:
    """Finished attempts as a DataFrame with the report's derived columns (settings as text, missing ones '—');
    with ``planned`` every attempt, its ``counted`` column saying which are finished (the tables' n of planned).
    ``fields``: only these fields of the rows (``TABLE_FIELDS``: what the tables read), not every field. With
    ``consume``, a ``RowColumns`` given lets go of each field once it is framed (a report over 100,000 rows never
    holds its rows and their frame whole at once).

    Built from the held columns without an object per row: text is categorical (a code a row), numbers and flags
    are floats; a row of the frame costs about 150 bytes."""
    held = _held(rows, fields)
    status = held.texts("status")
    finished = np.asarray(status.isin(FINISHED))
    kept = np.arange(len(held)) if planned else np.flatnonzero(finished)
    if not len(kept):
        return pd.DataFrame(columns=[name for name in held.fields if fields is None or name in fields])
    n = len(kept)
    df = pd.DataFrame(index=pd.RangeIndex(n))
    for name in held.fields:  # a column at a time (a frame made from all of them at once copied them together)
        if fields is not None and name not in fields:
            continue
        if name in _TEXT_COLUMNS:
            df[name] = held.texts(name, kept, "—")
        elif name in _NUMBER_COLUMNS:
            df[name] = held.floats(name, kept)
        elif name in _FLAG_COLUMNS:
            df[name] = held.flags(name, kept)
        else:
            df[name] = held.texts(name, kept)
        if consume and held is rows:
            held.drop(name)

    def column(name: str) -> Any:
        return df.pop(name) if name in df else pd.Series(np.full(n, np.nan))

    status, failure = status[kept], column("failure")
    df["status"] = status
    df["counted"] = finished[kept]
    df["infra_failed"] = np.asarray(status == INFRA_FAILED)
    df["f1"] = column("f1").where(df["counted"])
    df["rejected"] = np.asarray(status == "rejected")
    flagged = column("syntax_error").to_numpy() == 1.0  # missing (NaN): not flagged
    # the paper's rate: answers that do not parse after self-verification (a row without a kind: its own flag)
    kinds = failure.astype(object)
    df["syntax_error"] = df["rejected"] & (kinds.isin(PAPER_SYNTAX_FAILURES) | (kinds.isna() & flagged)).to_numpy()
    df["token_budget"] = df["rejected"] & (kinds == "token_budget").to_numpy()
    df["first_syntax_error"] = column(FIRST_ANSWER_FIELD).to_numpy()
    df["empty_answer"] = df["rejected"] & (kinds == "empty_answer").to_numpy()
    df["failure"] = failure
    df["accepted_share"] = (~df["rejected"]).astype(float)
    relations = column("relation").astype(object).tolist()
    df["relation_or_rejected"] = pd.Categorical(
        [
            ("rejected" if rej else (rel if isinstance(rel, str) and rel else "unscored"))
            for rej, rel in zip(df["rejected"].tolist(), relations)
        ]
    )
    del relations, kinds, failure
    for name in USAGE_COLUMNS:
        df[name] = df[name].fillna(0) if name in df else 0.0
    df["tokens"] = df["prompt_tokens"] + df["completion_tokens"]
    # what the answers cost when they were made, the cached ones included
    df["tokens_made"] = df["tokens"] + df["cached_prompt_tokens"] + df["cached_completion_tokens"]
    df["llm_seconds_made"] = df["llm_seconds"] + df["cached_llm_seconds"]
    for setting in (*SETTINGS, "task"):  # rows from elsewhere may lack one: one value '—'
        if setting not in df:
            df[setting] = pd.Categorical(["—"] * n)
    llms = df["llm"].astype(object).tolist()
    models = column("model").astype(object).tolist()
    # a row without a model name: the LLM's
    df["model"] = pd.Categorical([model if isinstance(model, str) else llm for model, llm in zip(models, llms)])
    shared = df.groupby("model", observed=True)["llm"].nunique()
    labels = [llm if shared[model] > 1 else model for model, llm in zip(df["model"].tolist(), llms)]
    df["label"] = pd.Categorical(labels)
    return df


# how frame() holds each field: settings and task as text ('—' when missing), then numbers and flags as floats, the
# others as text
_NUMBER_COLUMNS = frozenset({*NUMBER_FIELDS, *USAGE_COLUMNS})
_FLAG_COLUMNS = frozenset({*FLAG_FIELDS, FIRST_ANSWER_FIELD})
_TEXT_COLUMNS = frozenset({*SETTINGS, "task"})


def label_cells(df: pd.DataFrame, cells: Cells) -> pd.DataFrame:
    """``df`` with ``label`` naming the LLM and every condition key (the plots' series never pool either)."""
    if not cells.conditions:
        return df
    out = df.copy()
    parts = [out["label"].tolist()] + [[f"{setting} {value}" for value in out[setting]] for setting in cells.conditions]
    out["label"] = pd.Categorical([" · ".join(values) for values in zip(*parts)])
    return out


# ------------------------------------------------------------------------------ statistics
def bootstrap_ci(values: Iterable[float]) -> tuple[float, float]:
    """The 95 % percentile bootstrap interval of the mean (seed ``BOOTSTRAP_SEED``, so a report is reproducible);
    NaN for no values, [x, x] for one value or a constant column."""
    data = _numbers(values if isinstance(values, np.ndarray) else list(values))
    if data.size == 0:
        return math.nan, math.nan
    if data.size == 1 or np.all(data == data[0]):
        return float(data[0]), float(data[0])
    return _percentile_interval(data.tobytes())


_RESAMPLE_CELLS = 1 << 17  # resampled values held at once (1 MB): memory stays flat whatever the group's size
# Samples up to _CACHED_SAMPLE values repeat (a rate over n attempts has n + 1 possible samples, and thousands of
# LLMs give tens of thousands of small cells): their intervals are cached. Up to _COUNTED_SAMPLE values, how often
# each value is drawn fits a byte: those counts are cached per size (a balanced grid's cells share one), every size
# up to _CACHED_SAMPLE (1 MB in all) and 8 larger ones (4 MB at most); a larger sample is drawn in chunks.
_CACHED_SAMPLE = 32
_COUNTED_SAMPLE = 255


def _resample_counts(n: int) -> np.ndarray:
    """Row r: how often each of ``n`` values is drawn in the seeded generator's resample r (the same for every
    sample of that size), so the resamples' means are one matrix product."""
    return _small_counts(n) if n <= _CACHED_SAMPLE else _large_counts(n)


@lru_cache(maxsize=_CACHED_SAMPLE)
def _small_counts(n: int) -> np.ndarray:
    return _drawn_counts(n)


@lru_cache(maxsize=8)
def _large_counts(n: int) -> np.ndarray:
    return _drawn_counts(n)


def _drawn_counts(n: int) -> np.ndarray:
    rng = np.random.default_rng(BOOTSTRAP_SEED)  # drawn a block at a time: the generator's stream is the same
    counts = np.empty((BOOTSTRAP_RESAMPLES, n), dtype=np.uint8)  # at most n <= 255
    for start in range(0, BOOTSTRAP_RESAMPLES, _COUNTED_ROWS):
        block = rng.integers(0, n, (min(_COUNTED_ROWS, BOOTSTRAP_RESAMPLES - start), n))
        offsets = np.arange(len(block))[:, None] * n
        counts[start : start + len(block)] = np.bincount((offsets + block).ravel(), minlength=block.size).reshape(
            len(block), n
        )
    counts.flags.writeable = False
    return counts


_COUNTED_ROWS = 250  # resamples counted (or weighed) at once: a few hundred KB, not a whole draw's 4 MB


def _resample_means(n: int, sample: np.ndarray) -> np.ndarray:
    """The means of the seeded resamples of ``sample`` (``n`` values, at most ``_COUNTED_SAMPLE``), a block of
    resamples at a time."""
    counts = _resample_counts(n)
    return np.concatenate(
        [counts[start : start + _COUNTED_ROWS] / n @ sample for start in range(0, BOOTSTRAP_RESAMPLES, _COUNTED_ROWS)]
    )


def _percentiles(values: np.ndarray, fractions: Sequence[float]) -> list[float]:
    """NumPy's linear percentiles of ``values`` at ``fractions`` (0–1), from one partition around the ranks needed:
    np.percentile's own overhead was most of a report's intervals."""
    last = values.size - 1
    ranks = [(int(math.floor(f * last)), f * last - math.floor(f * last)) for f in fractions]
    needed = sorted({k for rank, _ in ranks for k in (rank, min(rank + 1, last))})
    ordered = np.partition(values, needed)
    return [float(ordered[k] + (ordered[min(k + 1, last)] - ordered[k]) * t) for k, t in ranks]


def _percentile_interval(data: bytes) -> tuple[float, float]:
    """``scipy.stats.bootstrap(method="percentile")`` computed the same way (one draw of indices from the seeded
    generator, the resamples' means, NumPy's linear percentiles), in chunks and without its per-call overhead: a
    report computes tens of thousands of intervals (a test checks that both agree)."""
    if len(data) <= 8 * _CACHED_SAMPLE:
        return _small_sample_measure(data)[2:]
    sample = np.frombuffer(data)
    n = sample.size
    if n <= _COUNTED_SAMPLE:
        return _interval_of(_resample_means(n, sample))
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = np.empty(BOOTSTRAP_RESAMPLES)
    step = max(1, _RESAMPLE_CELLS // n)
    for start in range(0, BOOTSTRAP_RESAMPLES, step):
        stop = min(start + step, BOOTSTRAP_RESAMPLES)
        means[start:stop] = sample[rng.integers(0, n, (stop - start, n))].mean(axis=-1)
    return _interval_of(means)


@lru_cache(maxsize=8192)
def _small_sample_measure(data: bytes) -> tuple[float, float, float, float]:
    """Mean, population std and interval of a small sample (float64 ``data``): small samples repeat (flags, rates)."""
    sample = np.frombuffer(data)
    low, high = _interval_of(_small_sample_weights(sample.size) @ sample)
    return float(sample.mean()), float(sample.std()), low, high


@lru_cache(maxsize=8)
def _small_sample_weights(n: int) -> np.ndarray:
    """``_resample_counts(n) / n``, kept for the last sizes used: the small samples' intervals are most of a
    report's (4 MB at most)."""
    weights = _resample_counts(n) / n
    weights.flags.writeable = False
    return weights


def _interval_of(means: np.ndarray) -> tuple[float, float]:
    alpha = (1 - BOOTSTRAP_CONFIDENCE) / 2
    low, high = _percentiles(means, (alpha, 1 - alpha))
    return low, high


def bootstrap_delta_ci(first: Any, second: Any) -> tuple[float, float]:
    """The 95 % percentile bootstrap interval of mean(second) − mean(first), each sample resampled on its own
    (``scipy.stats.bootstrap``, seed ``BOOTSTRAP_SEED``); NaN when either has no values."""
    a, b = _numbers(first), _numbers(second)
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan
    if np.all(a == a[0]) and np.all(b == b[0]):
        return float(b[0] - a[0]), float(b[0] - a[0])
    from scipy import stats  # 50 MB: only the comparison view needs it

    result = stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        n_resamples=BOOTSTRAP_RESAMPLES,
        confidence_level=BOOTSTRAP_CONFIDENCE,
        method="percentile",
        paired=False,
        random_state=np.random.default_rng(BOOTSTRAP_SEED),
        vectorized=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


BOOTSTRAP_NOTE = (
    f"[low, high]: 95 % percentile bootstrap interval of the mean over attempts ({BOOTSTRAP_RESAMPLES} resamples, "
    f"NumPy seed {BOOTSTRAP_SEED})."
)


def measure(values: Any) -> dict[str, Any]:
    """Mean, population std, n and bootstrap interval of a column (NaNs left out): mean, std, n, low, high. The
    values are read once (a report over thousands of LLMs measures hundreds of thousands of cells)."""
    data = _numbers(values)
    if data.size == 0:
        return {"mean": math.nan, "std": math.nan, "n": 0, "low": math.nan, "high": math.nan}
    first = float(data[0])
    if data.size == 1 or (data == first).all():
        return {"mean": first, "std": 0.0, "n": int(data.size), "low": first, "high": first}
    if data.size <= _CACHED_SAMPLE:
        mean, std, low, high = _small_sample_measure(data.tobytes())
    else:
        mean, std = float(data.mean()), float(data.std())
        low, high = _percentile_interval(data.tobytes())
    return {"mean": mean, "std": std, "n": int(data.size), "low": low, "high": high}


def _with_ci(m: Mapping[str, Any], percent: bool = False) -> str:
    if math.isnan(m["mean"]):
        return "—"
    show = _pct if percent else (lambda v: f"{v:.3f}")
    return f"{show(m['mean'])} [{show(m['low'])}, {show(m['high'])}]"


def _record(prefix: str, m: Mapping[str, Any]) -> dict[str, Any]:
    """CSV columns of a measure: PREFIX_mean, _std, _n, _ci_low, _ci_high."""
    return {
        f"{prefix}_mean": m["mean"],
        f"{prefix}_std": m["std"],
        f"{prefix}_n": m["n"],
        f"{prefix}_ci_low": m["low"],
        f"{prefix}_ci_high": m["high"],
    }


def grouped(
    df: pd.DataFrame, keys: Sequence[str], orders: Mapping[str, Sequence[str]] | None = None
) -> Iterator[tuple[tuple[str, ...], np.ndarray]]:
    """(key values, row positions in ``df``) for each combination of ``keys`` present, in a stable readable order;
    positions, not sub-frames: a report over thousands of LLMs reads tens of thousands of groups."""
    if not keys:
        yield (), np.arange(len(df))
        return
    orders = orders or {}
    found = df.groupby(list(keys), sort=False, observed=True).indices
    combos = {(combo if isinstance(combo, tuple) else (combo,)): positions for combo, positions in found.items()}
    rank = {k: {v: i for i, v in enumerate(_ordered(df[k], orders.get(k, ())))} for k in keys}
    for combo in sorted(combos, key=lambda c: tuple(rank[k][v] for k, v in zip(keys, c))):
        yield combo, combos[combo]


class Columns:
    """The frame's columns as NumPy arrays, each taken once: a table indexes them with a group's positions. A text
    column (categorical) is compared and counted by its codes, never turned into one object a row."""

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df
        self._arrays: dict[str, np.ndarray] = {}
        self._codes: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._arrays:
            self._arrays[name] = self._df[name].to_numpy()
        return self._arrays[name]

    def _coded(self, name: str) -> tuple[np.ndarray, dict[Any, int]] | None:
        """A categorical column's codes and the code of each of its values; None for another column."""
        if name not in self._codes:
            column = self._df[name]
            if not isinstance(column.dtype, pd.CategoricalDtype):
                return None
            categories = column.cat.categories
            self._codes[name] = (column.cat.codes.to_numpy(), {value: code for code, value in enumerate(categories)})
        return self._codes[name]

    def equal(self, name: str, positions: np.ndarray, value: Any) -> np.ndarray:
        """Whether each of ``positions`` holds ``value`` in column ``name``."""
        coded = self._coded(name)
        if coded is None:
            return self[name][positions] == value
        codes, code_of = coded
        return codes[positions] == code_of.get(value, -2)  # -1 is a missing value's code

    def distinct(self, name: str, positions: np.ndarray) -> int:
        """How many distinct values ``positions`` hold in column ``name``."""
        coded = self._coded(name)
        if coded is None:
            return len(set(self[name][positions]))
        return int(np.unique(coded[0][positions]).size)

    def value(self, name: str, position: int) -> Any:
        """Column ``name`` at one position."""
        return self._df[name].iat[position]

    def counted(self, positions: np.ndarray) -> np.ndarray:
        """The positions among ``positions`` of attempts that count (accepted or rejected)."""
        return positions[self["counted"][positions]]


def _rate(flags: np.ndarray) -> float:
    return float(flags.mean()) if flags.size else math.nan


def _of_planned(n: int, planned: int) -> str:
    return f"{n} of {planned}"


def _short_of_plan(n: int, planned: int) -> str:
    """A cell's mark when some of its planned attempts are not counted."""
    return "" if n == planned else f" ({n}/{planned})"


ORDERS: dict[str, Sequence[str]] = {
    "llm": (results.EXPERT,),
    "format": FORMATS,
    "detail": DETAIL_LEVELS,
    "prompt": ("zs", "zs-cot"),
    "task": TASK_NAMES,
    "benchmark": ("catalogue", "taskfile", "satbench", "dcpbench"),
}


def display_names(df: pd.DataFrame) -> dict[str, str]:
    """How each LLM spec is shown: its model name, with the spec when the two differ."""
    first = df.drop_duplicates("llm")
    return {
        llm: model if model == llm or llm == results.EXPERT else f"{model} ({llm})"
        for llm, model in zip(first["llm"], first["model"].astype(str))
    }


def _key_cells(keys: Sequence[str], values: Sequence[str], names: Mapping[str, str]) -> list[str]:
    return [names.get(v, v) if k == "llm" else v for k, v in zip(keys, values)]


PLANNED_NOTE = (
    "n of planned: attempts counted (accepted or rejected) of the attempts the sweep planned for the row; the others "
    "(infrastructure failures, errors, unfinished, pending, not applicable) count in no mean."
)


def setting_tables(df: pd.DataFrame, cells: Cells) -> list[Table]:
    """F1 and syntax-error rate by format (rows) × description level × prompting (columns), one block of rows per
    combination of the other key settings (LLM, policy, …)."""
    pooled = set(cells.pooled)
    col = Columns(df)
    lead = [k for k in cells.keys if k not in ("format", "prompt", "detail")]
    split = [d for d in ("detail", "prompt") if d not in pooled]
    combos = list(df[split].drop_duplicates().itertuples(index=False, name=None)) if split else []
    rank = {d: {v: i for i, v in enumerate(_ordered(df[d], ORDERS[d]))} for d in split}
    combos.sort(key=lambda c: tuple(rank[d][v] for d, v in zip(split, c)))
    formats = [] if "format" in pooled else _ordered(df["format"], FORMATS)
    header = lead + ["format"] + [" · ".join(c) for c in combos] + ["all"]
    names = display_names(df)
    f1_rows, err_rows, data = [], [], Records()
    for values, group in grouped(df, lead, ORDERS):
        shown = _key_cells(lead, values, names)
        for fmt in formats + ["all"]:
            planned = group if fmt == "all" else group[col.equal("format", group, fmt)]
            if not len(planned):
                continue
            f1_cells, err_cells = shown + [fmt], shown + [fmt]
            for combo in combos + [None]:
                cell = planned
                if combo is not None:
                    cell = planned[np.logical_and.reduce([col.equal(d, planned, v) for d, v in zip(split, combo)])]
                counted = col.counted(cell)
                f1 = measure(col["f1"][counted])
                err = measure(col["syntax_error"][counted].astype(float))
                mark = _short_of_plan(len(counted), len(cell)) if len(cell) else ""
                f1_cells.append(_pm(f1["mean"], f1["std"]) + mark)
                err_cells.append(_pct(err["mean"]) + mark)
                if not len(cell):  # nothing planned there: a "—" in the table, no CSV record
                    continue
                where = dict(zip(split, combo)) if combo is not None else dict.fromkeys(split, "all")
                data.append(
                    {
                        **dict(zip(lead, values)),
                        "format": fmt,
                        "detail": where.get("detail", "all"),
                        "prompt": where.get("prompt", "all"),
                        "n": len(counted),
                        "planned": len(cell),
                        **_record("f1", f1),
                        "syntax_error_rate": err["mean"],
                        "syntax_error_rate_ci_low": err["low"],
                        "syntax_error_rate_ci_high": err["high"],
                    }
                )
            f1_rows.append(f1_cells)
            err_rows.append(err_cells)
    plan = "(n/planned): a cell where some planned attempts are not counted; unmarked: all counted."
    notes = ["F1 mean ± std over attempts; a rejected attempt counts F1 = 0; CIs in the CSV.", plan, *cells.notes()]
    return [
        Table(
            "by_setting",
            "F1 by output format, description level and prompting",
            header,
            f1_rows,
            data,
            notes,
            lead=len(lead) + 1,
        ),
        Table(
            "syntax_errors_by_setting",
            "Syntax-error rate by output format, description level and prompting",
            header,
            err_rows,
            [],
            [SYNTAX_NOTE, plan, *cells.notes()],
            lead=len(lead) + 1,
        ),
    ]


SYNTAX_NOTE = (
    "syntax errors after repair: answers that still do not parse after self-verification (the paper's rate); "
    "answers cut by the token budget and infrastructure failures are their own columns, not syntax errors."
)


def _match_published_model(model: str) -> str | None:
    norm = re.sub(r"[^a-z0-9]", "", model.lower())
    hits = [key for key in PUBLISHED["model"] if re.sub(r"[^a-z0-9]", "", key) in norm]
    return max(hits, key=len) if hits else None


def _task_note(df: pd.DataFrame) -> str:
    """How the published figures' task set differs from ours (they average the whole catalogue)."""
    ours = sorted(set(df.loc[df["benchmark"] == "catalogue", "task"]))
    others = sorted(set(df.loc[df["benchmark"] != "catalogue", "task"]))
    note = (
        f"published figures average all {CATALOGUE_SIZE} catalogue tasks; compared slices use our "
        f"{len(ours)} catalogue task(s) only"
    )
    if len(ours) < CATALOGUE_SIZE:
        note += f" ({', '.join(ours) or 'none'}): not the same task set, read the difference with care"
    if others:
        note += f"; {len(others)} other task(s) left out of the comparison"
    return note + "."


def llm_table(df: pd.DataFrame, cells: Cells, compare_published: bool = False) -> Table:
    """The paper's second table: per LLM (and condition), F1 with its interval, syntax errors before and after repair,
    token-budget cuts, empty answers, infrastructure failures, relation shares, repair rounds, autofixes, tokens and
    latency (optionally next to the published figures, computed on the catalogue tasks only). An LLM whose attempts
    all failed on infrastructure keeps its row (n = 0)."""
    keys = ["llm", *cells.conditions]
    col = Columns(df)
    names = display_names(df)
    header = (
        ["LLM", *cells.conditions, "n of planned", "infra failures", "tasks", "F1", "F1 95% CI"]
        + ["syntax errors before repair", "syntax errors after repair", "token-budget cuts", "empty answers"]
        + [*RELATION_ORDER, "repair rounds", "autofixes", "tokens", "LLM s"]
    )
    if compare_published:
        header += ["F1 (catalogue tasks)", "published F1", "published syntax errors"]
    rows, data = [], Records()
    for values, planned in grouped(df, keys, ORDERS):
        part = col.counted(planned)
        f1 = measure(col["f1"][part])
        before = measure(col["first_syntax_error"][part])
        after = measure(col["syntax_error"][part].astype(float))
        record: dict[str, Any] = {
            "llm": values[0],
            "model": str(col.value("model", planned[0])),
            **dict(zip(cells.conditions, values[1:])),
            "attempts": len(part),
            "planned": len(planned),
            "infra_failed": int(col["infra_failed"][planned].sum()),
            "tasks": col.distinct("task", part),
            **_record("f1", f1),
            "first_answer_syntax_error_rate": before["mean"],
            "first_answer_syntax_error_rate_n": before["n"],
            "first_answer_syntax_error_rate_ci_low": before["low"],
            "first_answer_syntax_error_rate_ci_high": before["high"],
            "syntax_error_rate": after["mean"],
            "syntax_error_rate_ci_low": after["low"],
            "syntax_error_rate_ci_high": after["high"],
            "token_budget_rate": _rate(col["token_budget"][part]),
            "empty_answer_rate": _rate(col["empty_answer"][part]),
            **{f"share_{r}": _rate(col.equal("relation_or_rejected", part, r)) for r in RELATION_ORDER},
            "repair_rounds_mean": _rate(col["repair_rounds"][part]),
            "autofixes_mean": _rate(col["n_autofixes"][part]),
            "tokens_mean": _rate(col["tokens_made"][part]),
            "llm_seconds_mean": _rate(col["llm_seconds_made"][part]),
        }
        cells_shown = [names[values[0]], *values[1:], _of_planned(len(part), len(planned))]
        cells_shown += [str(record["infra_failed"]), str(record["tasks"])]
        cells_shown += [_pm(f1["mean"], f1["std"]), _ci(f1), _with_ci(before, True), _with_ci(after, True)]
        cells_shown += [_pct(record["token_budget_rate"]), _pct(record["empty_answer_rate"])]
        cells_shown += [_pct(record[f"share_{r}"]) for r in RELATION_ORDER]
        cells_shown += [
            _fixed(record["repair_rounds_mean"], 2),
            _fixed(record["autofixes_mean"], 2),
            _fixed(record["tokens_mean"], 0),
            _fixed(record["llm_seconds_mean"], 2),
        ]
        if compare_published:
            key = _match_published_model(record["model"])
            published, err = PUBLISHED["model"][key] if key else (None, None)
            ours = _stats(col["f1"][part][col.equal("benchmark", part, "catalogue")])[0]
            record.update(
                published_model=key, published_f1=published, published_syntax_error_rate=err, f1_catalogue_mean=ours
            )
            cells_shown += [
                "—" if math.isnan(ours) else f"{ours:.3f}",
                "—" if published is None else f"{published:.3f}",
                "—" if err is None else _pct(err),
            ]
        rows.append(cells_shown)
        data.append(record)
    notes = [
        "averaged over formats, prompts, descriptions and tasks; F1 mean ± std over attempts (rejected = 0); "
        "relation shares over the attempts counted.",
        PLANNED_NOTE,
        "syntax errors before repair: the first answer did not parse (read from the trace; — without one). "
        + SYNTAX_NOTE
        + " Empty answers: rejected because the model answered nothing.",
        "tokens and LLM s: per attempt, what its answers cost when they were made (cached answers included).",
        BOOTSTRAP_NOTE,
        *cells.notes(),
    ]
    if compare_published:
        notes += [f"published: {PUBLISHED_SOURCE}; averaged over formats and prompts.", _task_note(df[df["counted"]])]
    return Table("by_llm", "Results per LLM", header, rows, data, notes, lead=len(keys))


def _fixed(value: float, digits: int) -> str:
    return "—" if math.isnan(value) else f"{value:.{digits}f}"


def _ci(m: Mapping[str, Any], percent: bool = False) -> str:
    if math.isnan(m["low"]):
        return "—"
    show = _pct if percent else (lambda v: f"{v:.3f}")
    return f"[{show(m['low'])}, {show(m['high'])}]"


def per_task_table(df: pd.DataFrame, cells: Cells) -> Table:
    """Per task (and LLM, condition): F1 with its interval, accepted share, syntax errors before and after repair and
    the share of formulas equal to the ground truth."""
    keys = ["task", *[k for k in cells.keys if k not in ("format", "prompt", "detail")]]
    col = Columns(df)
    names = display_names(df)
    header = [*keys, "n of planned", "F1", "accepted", "syntax errors before repair", "syntax errors after repair"]
    header += ["equal"]
    rows, data = [], Records()
    for values, planned in grouped(df, keys, ORDERS):
        part = col.counted(planned)
        f1 = measure(col["f1"][part])
        accepted = measure(col["accepted_share"][part])
        before = measure(col["first_syntax_error"][part])
        after = measure(col["syntax_error"][part].astype(float))
        equal = measure(col.equal("relation_or_rejected", part, "equal").astype(float))
        rows.append(
            _key_cells(keys, values, names)
            + [_of_planned(len(part), len(planned)), _with_ci(f1), _with_ci(accepted, True)]
            + [_with_ci(before, True), _with_ci(after, True), _with_ci(equal, True)]
        )
        data.append(
            {
                **dict(zip(keys, values)),
                "attempts": len(part),
                "planned": len(planned),
                **_record("f1", f1),
                **_record("accepted_rate", accepted),
                **_record("first_answer_syntax_error_rate", before),
                **_record("syntax_error_rate", after),
                **_record("equal_rate", equal),
            }
        )
    notes = ["averaged over formats, prompts and descriptions; rejected = F1 0.", PLANNED_NOTE, SYNTAX_NOTE]
    return Table(
        "per_task", "Results per task", header, rows, data, [*notes, BOOTSTRAP_NOTE, *cells.notes()], lead=len(keys)
    )


def cost_table(df: pd.DataFrame, cells: Cells, prices: Mapping[str, LLMPrices]) -> Table:
    """Tokens and cost per LLM (and condition), twice: **spent now** (the requests this study sent) and **would
    cost** (also the answers the response cache gave, at the usage they cost when they were made), so a study run
    from the cache still says what it costs to run."""
    keys = ["llm", *cells.conditions]
    col = Columns(df)
    names = display_names(df)
    header = ["LLM", *cells.conditions, "n of planned", "LLM calls", "cached answers", "prompt tokens"]
    header += ["completion tokens", "would cost: prompt tokens", "would cost: completion tokens"]
    header += ["$/M prompt", "$/M completion", "cost now", "would cost", "would cost per attempt"]
    rows, data = [], Records()
    for values, planned in grouped(df, keys, ORDERS):
        n = len(col.counted(planned))
        prompt, completion = _total(col["prompt_tokens"][planned]), _total(col["completion_tokens"][planned])
        made_prompt = prompt + _total(col["cached_prompt_tokens"][planned])
        made_completion = completion + _total(col["cached_completion_tokens"][planned])
        price = prices.get(values[0])
        cost = None if price is None else price.cost(prompt, completion)
        would = None if price is None else price.cost(made_prompt, made_completion)
        record = {
            "llm": values[0],
            **dict(zip(cells.conditions, values[1:])),
            "attempts": n,
            "planned": len(planned),
            "llm_calls": _total(col["llm_calls"][planned]),
            "cached_calls": _total(col["cached_calls"][planned]),
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "would_cost_prompt_tokens": made_prompt,
            "would_cost_completion_tokens": made_completion,
            "prompt_price_per_mtok": None if price is None else price.prompt,
            "completion_price_per_mtok": None if price is None else price.completion,
            "cost": cost,
            "would_cost": would,
            "would_cost_per_attempt": None if would is None or not n else would / n,
        }
        rows.append(
            [names[values[0]], *values[1:], _of_planned(n, len(planned)), str(record["llm_calls"])]
            + [
                str(record["cached_calls"]),
                f"{prompt:,}",
                f"{completion:,}",
                f"{made_prompt:,}",
                f"{made_completion:,}",
            ]
            + (["—"] * 5 if price is None else [f"{price.prompt:g}", f"{price.completion:g}"])
            + ([] if cost is None or would is None else [f"{cost:.4f}", f"{would:.4f}", _money_per(would, n)])
        )
        data.append(record)
    notes = [
        "spent now: the requests this study sent (every planned attempt's, an infrastructure failure's too); would "
        "cost: also the answers the response cache gave, at the usage each cost when it was made (rows written before "
        "cached usage was recorded count those answers as 0).",
        "cost = prompt tokens × prompt price / 10⁶ + completion tokens × completion price / 10⁶; prices from the "
        "LLM's TOML config (prompt_price_per_mtok, completion_price_per_mtok), — where it names none; per attempt: "
        "over the attempts counted.",
        *cells.notes(),
    ]
    return Table("cost_by_llm", "Tokens and cost per LLM", header, rows, data, notes, lead=len(keys))


def _total(counts: np.ndarray) -> int | float:
    """The sum of a column of counts (tokens, calls): an int, or the float it overflowed to (a received row can claim
    1e308 tokens)."""
    total = float(counts.sum())
    return int(total) if math.isfinite(total) else total


def _money_per(total: float, n: int) -> str:
    return "—" if not n else f"{total / n:.4f}"


REJECTION_ORDER = ("syntax", "token_budget", "empty_answer", "repeated_answer", "ok_on_error")


def rejection_table(df: pd.DataFrame, cells: Cells) -> Table | None:
    """Per LLM (and condition): the share of attempts rejected for each kind of failure the rows name (rows written
    before the kinds existed count as 'not recorded'); None without rejections."""
    col = Columns(df)
    rejected = col["rejected"] & col["counted"]
    if not rejected.any():
        return None
    kinds = np.array(["—" if not isinstance(k, str) else k for k in col["failure"]], dtype=object)
    order = [k for k in _ordered(kinds[rejected], REJECTION_ORDER) if k != "—"]
    order += ["—"] if (kinds[rejected] == "—").any() else []
    keys = ["llm", *cells.conditions]
    names = display_names(df)
    header = ["LLM", *cells.conditions, "n of planned", "rejected"] + [k if k != "—" else "not recorded" for k in order]
    rows, data = [], Records()
    for values, planned in grouped(df, keys, ORDERS):
        part = col.counted(planned)
        mine = kinds[part][col["rejected"][part]]
        shares = {k: (float((mine == k).sum()) / len(part)) if len(part) else math.nan for k in order}
        rate = _rate(col["rejected"][part])
        rows.append(
            [names[values[0]], *values[1:], _of_planned(len(part), len(planned)), _pct(rate)]
            + [_pct(shares[k]) for k in order]
        )
        data.append(
            {
                "llm": values[0],
                **dict(zip(cells.conditions, values[1:])),
                "attempts": len(part),
                "planned": len(planned),
                "rejected_rate": rate,
                **{f"rejected_{k if k != '—' else 'not_recorded'}_rate": shares[k] for k in order},
            }
        )
    notes = [
        "shares of the attempts counted in the row; each rejected attempt counts under the kind its row names.",
        PLANNED_NOTE,
        *cells.notes(),
    ]
    return Table("rejections_by_kind", "Rejections by kind", header, rows, data, notes, lead=len(keys))


INFRA_COLUMNS = ("llm", "task", "format", "prompt", "detail", "policy", "failure", "reason")
INFRA_FIELDS = frozenset({"attempt_id", "status", *INFRA_COLUMNS})


def infra_table(rows: Iterable[Mapping[str, Any]]) -> Table | None:
    """Attempts that an infrastructure failure stopped (never scored), one line each; None when there are none."""
    held = _held(rows, INFRA_FIELDS)
    failed = np.flatnonzero(np.asarray(held.texts("status") == INFRA_FAILED))
    if not len(failed):
        return None
    columns = list(INFRA_COLUMNS)
    values = {c: held.values(c, failed) for c in ["attempt_id", *columns]}  # the failed rows' fields only
    shown = [list(map(shorten, cells)) for cells in zip(*(values[c] for c in columns))]
    data = Records(dict(zip(values, cells)) for cells in zip(*values.values()))
    kinds = pd.Series([kind or "?" for kind in values["failure"]]).value_counts()
    del values
    return Table(
        "infra_failed",
        f"Infrastructure failures (never scored): {len(failed)}",
        columns,
        shown,
        data,
        [
            "by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.items()) + ".",
            "these attempts count in no rate and no F1; the same command retries them.",
        ],
        lead=len(columns),
    )


MARGINAL_SLICES = ("format", "detail", "prompt", "benchmark")


def marginals_table(df: pd.DataFrame, cells: Cells, compare_published: bool = False) -> Table:
    """F1 per format, description level, prompt style and benchmark, on the slices the paper publishes, one block per
    condition (policy, …); averaged over LLMs as published. Next to the published figures only our catalogue tasks
    count (the published ones average the whole catalogue)."""
    lead = list(cells.conditions)
    header = [*lead, "slice", "n of planned", "tasks", "F1", "syntax errors"]
    header += ["published F1"] if compare_published else []
    rows, data = [], Records()

    def add(values, kind: str, value: str, part: pd.DataFrame, label: str, published: float | None = None) -> None:
        counted = part[part["counted"]]
        mean, std, _ = _stats(counted["f1"])
        err = float(counted["syntax_error"].mean()) if len(counted) else math.nan
        tasks = int(counted["task"].nunique())
        cells_shown = [*values, label, _of_planned(len(counted), len(part)), str(tasks), _pm(mean, std), _pct(err)]
        record = {
            **dict(zip(lead, values)),
            "slice": kind,
            "value": value,
            "attempts": len(counted),
            "planned": len(part),
            "tasks": tasks,
            "f1_mean": mean,
            "f1_std": std,
            "syntax_error_rate": err,
        }
        if compare_published:
            cells_shown.append("—" if published is None else f"{published:.3f}")
            record["published_f1"] = published
        rows.append(cells_shown)
        data.append(record)

    # the columns read here only: a slice of the whole frame would copy every column of every attempt
    df = df[list(dict.fromkeys([*lead, "counted", "f1", "syntax_error", "task", "llm", *MARGINAL_SLICES]))]
    for values, positions in grouped(df, lead, ORDERS):
        group = df.iloc[positions]
        compared = group[group["benchmark"] == "catalogue"] if compare_published else group
        detailed = compared[compared["detail"] == "detailed"]
        for fmt in _ordered(group["format"], FORMATS):
            part = detailed[detailed["format"] == fmt]
            if len(part):
                add(values, "format", fmt, part, f"format {fmt} (detailed)", PUBLISHED["format"].get(fmt))
        for level in _ordered(group["detail"], DETAIL_LEVELS):
            part = compared[compared["detail"] == level]
            if len(part):
                add(values, "detail", level, part, f"description {level}", PUBLISHED["detail"].get(level))
        for prompt in _ordered(group["prompt"], ("zs", "zs-cot")):
            part = detailed[detailed["prompt"] == prompt]
            if len(part):
                add(values, "prompt", prompt, part, f"prompt {prompt} (detailed)", PUBLISHED["prompt"].get(prompt))
        for bench in _ordered(group["benchmark"], ORDERS["benchmark"]):
            part = group[group["benchmark"] == bench]
            add(values, "benchmark", bench, part, f"benchmark {bench}")
            if bench in PUBLISHED["benchmark"]:
                counted = part[part["counted"]]
                best = float(counted.groupby(["llm", "format", "prompt", "detail"], observed=True)["f1"].mean().max())
                shown = [*values, f"benchmark {bench}, best configuration", _of_planned(len(counted), len(part))]
                shown += [str(int(counted["task"].nunique())), "—" if math.isnan(best) else f"{best:.3f}", ""]
                record = {
                    **dict(zip(lead, values)),
                    "slice": "benchmark_best",
                    "value": bench,
                    "attempts": len(counted),
                    "planned": len(part),
                    "tasks": int(counted["task"].nunique()),
                    "f1_mean": best,
                }
                if compare_published:
                    shown.append(f"{PUBLISHED['benchmark'][bench]:.3f}")
                    record["published_f1"] = PUBLISHED["benchmark"][bench]
                rows.append(shown)
                data.append(record)
    notes = [
        "formats and prompt styles over detailed descriptions (as published); averaged over LLMs"
        + (" and tasks." if df["llm"].nunique() < 2 else f" ({df['llm'].nunique()}) and tasks."),
        PLANNED_NOTE,
        *cells.notes(),
    ]
    if compare_published:
        notes += [f"published: {PUBLISHED_SOURCE}.", _task_note(df[df["counted"]])]
    title = "F1 by format, description level, prompting and benchmark"
    return Table("marginals", title, header, rows, data, notes, lead=len(lead) + 1)


def report_tables(
    rows: Iterable[Mapping[str, Any]],
    *,
    compare_published: bool = False,
    pool: Sequence[str] = (),
    prices: Mapping[str, LLMPrices] | None = None,
) -> tuple[list[Table], pd.DataFrame, Cells | None]:
    """Every attempt table of a report (the viewer shows the same ones), the finished attempts' frame and their
    cells (None when nothing finished)."""
    held = _held(rows, TABLE_FIELDS | INFRA_FIELDS)
    return frame_tables(
        frame(held, planned=True, fields=TABLE_FIELDS),
        infra_table(held),
        compare_published=compare_published,
        pool=pool,
        prices=prices,
    )


def frame_tables(
    planned: pd.DataFrame,
    infra: Table | None,
    *,
    compare_published: bool = False,
    pool: Sequence[str] = (),
    prices: Mapping[str, LLMPrices] | None = None,
) -> tuple[list[Table], pd.DataFrame, Cells | None]:
    """``report_tables`` from the frame of every planned attempt (``frame(rows, planned=True)``) and the table of
    infrastructure failures: a caller holding many rows lets them go once they are framed. The finished attempts'
    frame holds the columns the plots read (``PLOTTED``)."""
    plotted = [name for name in (*PLOTTED, *CONDITION_SETTINGS) if name in planned]
    df = planned.loc[planned["counted"], plotted] if not planned.empty else planned
    tables: list[Table] = []
    cells = None
    if not df.empty:
        cells = cells_of(planned, pool)  # the settings the sweep planned, not those outcomes happened to reach
        if prices is None:
            prices = {llm: found for llm in planned["llm"].unique() if (found := llm_prices(llm)) is not None}
        tables += setting_tables(planned, cells)
        tables.append(llm_table(planned, cells, compare_published))
        tables.append(per_task_table(planned, cells))
        rejections = rejection_table(planned, cells)
        if rejections is not None:
            tables.append(rejections)
        tables.append(cost_table(planned, cells, prices))
        tables.append(marginals_table(planned, cells, compare_published))
        if cells.pooled:
            pooled = "; ".join(f"{name}: {', '.join(values)}" for name, values in cells.pooled.items())
            for table in tables:
                table.pooled = pooled
        df = label_cells(df, cells)
    if infra is not None:
        tables.append(infra)
    return tables, df, cells


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
    out_rows, data = [], Records()
    for method in _ordered(df["method"], ("spl", "sl")):
        part = df[df["method"] == method]
        expert = part[part["formula"] == "expert"]
        generated = part[part["formula"] == "generated"]
        expert_by_task = expert.groupby("task")["f1"].mean()

        def add(formula: str, relation: str, cell: pd.DataFrame, delta: float | None) -> None:
            found = {c: _stats(cell[c]) for c in ("f1", "accuracy", "consistency")}
            out_rows.append(
                [method.upper(), formula, relation, str(len(cell))]
                + [_pm(*found[c][:2]) for c in ("f1", "accuracy", "consistency")]
                + ["—" if delta is None or math.isnan(delta) else f"{delta:+.3f}"]
            )
            data.append(
                {
                    "method": method,
                    "formula": formula,
                    "relation": relation,
                    "n": len(cell),
                    **{f"{c}_mean": found[c][0] for c in found},
                    **{f"{c}_std": found[c][1] for c in found},
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


def _grouped_bars(ax, groups: list[str], series: dict[str, list[float]], errors: dict[str, Any] | None = None):
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


PLOTTED = ("label", "format", "f1", "syntax_error", "repair_rounds", "relation_or_rejected")  # what plot_data reads


def plot_data(df: pd.DataFrame) -> dict[str, Any]:
    """The numbers behind the four plots (drawn as PNG here and in the browser by the viewer)."""
    formats = _ordered(df["format"], FORMATS)
    models = _ordered(df["label"], [results.EXPERT])
    by_cell = df.groupby(["label", "format"], observed=True)
    f1 = by_cell["f1"].agg(["mean", lambda v: v.std(ddof=0)]).set_axis(["mean", "std"], axis=1)
    syntax = by_cell["syntax_error"].mean()
    top = int(df["repair_rounds"].max())
    rounds = df.groupby(["label", "repair_rounds"], observed=True).size()
    shares = pd.crosstab(  # the values present only (a categorical column also names those of other rows)
        df["label"].astype(object), df["relation_or_rejected"].astype(object), normalize="index"
    )

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
        # error bars of ± std, clipped to F1's range [0, 1]
        "f1_err_plus": {
            m: [min(value(f1["std"], (m, f)), 1 - value(f1["mean"], (m, f))) for f in formats] for m in models
        },
        "f1_err_minus": {
            m: [min(value(f1["std"], (m, f)), value(f1["mean"], (m, f))) for f in formats] for m in models
        },
        "syntax_error_rate": {m: [value(syntax, (m, f)) for f in formats] for m in models},
        "rounds": [str(r) for r in range(top + 1)],
        "round_counts": {m: [int(value(rounds, (m, r))) for r in range(top + 1)] for m in models},
        "relations": relations,
    }


def write_plots(df: pd.DataFrame, out: Path, root: Path | None = None) -> list[Path]:
    """Write the report's PNG plots into ``out`` (below ``root``, no link followed: each is drawn in memory, then
    written through ``safe_files``); returns the files written (none for an empty frame)."""
    root = out if root is None else root
    safe_files.make_dirs(out, root=root)
    written: list[Path] = []
    if df.empty:
        return written
    data = plot_data(df)

    def save(figure, name: str) -> None:
        figure.tight_layout()
        path = out / f"{name}.png"
        image = io.BytesIO()
        figure.savefig(image, format="png")
        safe_files.write_bytes(path, image.getvalue(), root=root)
        written.append(path)

    figure = _figure()
    ax = figure.add_subplot()
    errors = {m: [data["f1_err_minus"][m], data["f1_err_plus"][m]] for m in data["models"]}
    _grouped_bars(ax, data["formats"], data["f1_mean"], errors)
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
    merged: list[str] = field(default_factory=list)  # per attempt read more than once: which copy was kept

    def render(self, fmt: str) -> str:
        """The whole report in one format, with the count of infrastructure failures (always) and of the other
        attempts left out (Markdown)."""
        parts = [table.render(fmt) for table in self.tables]
        if fmt == "md":
            parts.append(f"_infrastructure failures (never scored): {self.left_out.get(INFRA_FAILED, 0)}_\n")
            others = {k: v for k, v in self.left_out.items() if k != INFRA_FAILED}
            if others:
                left = ", ".join(f"{markdown_text(k)} {v}" for k, v in others.items())
                parts.append(f"_left out (not finished): {left}_\n")
            if self.merged:
                kept = ", ".join(f"{markdown_text(line)}: {n}" for line, n in sorted(Counter(self.merged).items()))
                parts.append(f"_attempts read more than once, the most complete outcome kept: {kept}_\n")
        return "\n".join(parts)


def build_report(
    paths: Iterable[str | Path],
    out: str | Path | None = None,
    *,
    compare_published: bool = False,
    plots: bool = True,
    pool: Sequence[str] = (),
) -> Report:
    """Tables (and PNG plots) from the results under ``paths``; files go to ``out`` (default:
    ``report/`` in the first path, or next to it when it is a file). ``pool``: settings to average over
    even though they vary (each named in the tables' captions)."""
    given = [Path(p) for p in paths]
    if not given:
        raise ReportError("give at least one sweep or run directory")
    rows, downstream, merged = load_results(given, TABLE_FIELDS | INFRA_FIELDS)
    left_out = dict(Counter(status or "?" for status in rows.values("status") if status not in FINISHED))
    infra, planned = infra_table(rows), frame(rows, planned=True, fields=TABLE_FIELDS, consume=True)
    del rows  # the frame holds what the tables need, in a fraction of the memory
    tables, df, _ = frame_tables(planned, infra, compare_published=compare_published, pool=pool)
    extra = downstream_table(downstream)
    if extra is not None:
        tables.append(extra)
    if df.empty and not tables:
        raise ReportError("no finished attempts to report on")
    # --out is the user's folder (made by us where it does not exist); by default report/ inside a directory that may
    # come from elsewhere, where no link is followed (report/by_llm.md → ~/.ssh/authorized_keys is refused)
    if out:
        target = root = safe_files.output_dir(out)
    else:
        root = given[0] if given[0].is_dir() else given[0].parent
        target = root / "report"
    safe_files.make_dirs(target, root=root)
    for table in tables:
        for fmt, suffix in (("md", "md"), ("latex", "tex"), ("csv", "csv")):
            safe_files.write_text(target / f"{table.name}.{suffix}", table.render(fmt), root=root)
    written = write_plots(df, target, root) if plots and not df.empty else []
    return Report(tables, written, len(df), left_out, target, merged)
