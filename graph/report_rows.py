"""The attempt rows a report reads: checked as they are read, merged across the places given, held column by column.

A received sweep can hold 100,000 attempts. Rows are checked one at a time as their file is read (never the file
whole) and their values kept in typed columns (``RowColumns``) with a one-byte tag a row: numbers in an array of
ints (four bytes) or floats, text that repeats (settings, statuses, failure kinds) as a code of one, two or four
bytes into its distinct values, other text (ids, paths) as UTF-8 one after the other. No object is kept per row:
a row of the fields a report reads costs about 100 bytes (a dict took about 2.5 KB), and ``floats``, ``flags``
and ``texts`` give a column to a frame without making one either.
"""

from __future__ import annotations

import json
import math
import os
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from autonesy.graph import results
from autonesy.graph.results import CACHED_USAGE
from autonesy.graph.rundir import CONFIG_FILE, read_json
from autonesy.graph.summary import RunSummary, SummaryError
from autonesy.graph.trace import first_answer_syntax_error
from autonesy.tools import safe_files
from autonesy.tools.errors import AutonesyError
from autonesy.tools.terminal_text import terminal_line

FIRST_ANSWER_FIELD = "first_answer_syntax_error"
DOWNSTREAM_FILE = "downstream.jsonl"  # flat rows, one per trained model
TRAINING_FILE = "downstream.json"  # one nesy.evaluate.train_and_evaluate result (per attempt directory)


class ReportError(AutonesyError, ValueError):
    """Nothing to report on (no results found), or an unusable option."""


# ----------------------------------------------------------------------------------- columns
_MISSING, _INT, _FLOAT, _CODED, _CODED_LIST, _OBJECT, _TEXT = range(7)  # how a column holds one row's value
_EXACT_INTS = 2**53  # larger ints (model counts) are kept as they are, never rounded through a float
_INT32 = 2**31
_CODED_AT_MOST = 4096  # distinct values coded before a column stops coding values it has not seen (ids, paths)
_WIDER = {"B": "H", "H": "i"}  # a column's codes widened when its distinct values outgrow them
_CODE_LIMITS = {"B": 256, "H": 65536}


def _codable(value: Any) -> bool:
    """Text and flags, and tuples of text (a row's autofixes): values equal only to themselves when hashed
    (True == 1 and (1,) == (True,), so numbers inside are left out)."""
    kind = type(value)
    return kind is str or kind is bool or (kind is tuple and all(type(item) is str for item in value))


def _pad(part: array[Any], rows: int) -> None:
    """``part`` extended with zeros to ``rows`` items."""
    if len(part) < rows:
        part.frombytes(bytes(part.itemsize * (rows - len(part))))


class _Column:
    """One field's values: a tag per row, and per kind of value the storage it needs, made when a first value of that
    kind arrives (a column of text holds no floats). A part holds a value at each row its tag points it to; it is
    padded with blanks only up to the rows it is written at (and before it is indexed), not at every row."""

    __slots__ = ("tags", "numbers", "codes", "distinct", "index", "objects", "coding", "text", "starts", "sizes")

    def __init__(self, rows: int) -> None:
        self.tags = bytearray(rows)  # earlier rows lacked the field
        # four bytes a row while every number is an int of 32 bits, then eight (floats)
        self.numbers: array[Any] = array("i")
        self.codes = array("B")  # one byte a row while there are at most 256 distinct values, then two, then four
        self.distinct: list[Any] = []
        self.index: dict[Any, int] = {}
        self.objects: list[Any] = []
        self.coding = True  # False once a value was refused a code: a field of ids or paths is never coded again
        # text not coded (ids, paths), as UTF-8 one after the other: no object a row (100,000 ids as str objects
        # took 7 MB and kept the parser's memory from being reused)
        self.text = bytearray()
        self.starts = array("q")
        self.sizes = array("i")

    def append(self, value: Any) -> None:
        tags = self.tags
        if value is None:
            tags.append(_MISSING)
            return
        kind = type(value)
        if kind is float or (kind is int and -_EXACT_INTS <= value <= _EXACT_INTS):
            if self.numbers.typecode == "i" and (kind is float or not -_INT32 <= value < _INT32):
                self.numbers = array("d", self.numbers)
            self._put(self.numbers, value, _FLOAT if kind is float else _INT)
            return
        key = tuple(value) if kind is list else value  # a list of text (a row's autofixes) is coded as a tuple
        code = self.index.get(key) if _codable(key) else -1
        if code is None:
            self.coding = self.coding and len(self.distinct) < max(_CODED_AT_MOST, len(tags) // 2)
            if self.coding:
                code = self.index[key] = len(self.distinct)
                self.distinct.append(key)
                if code == _CODE_LIMITS.get(self.codes.typecode):
                    self.codes = array(_WIDER[self.codes.typecode], self.codes)
        if code is not None and code >= 0:
            self._put(self.codes, code, _CODED_LIST if kind is list else _CODED)
            return
        if kind is str:
            encoded = value.encode("utf-8", "surrogatepass")  # JSON may hold a lone surrogate
            _pad(self.sizes, len(tags))
            self.sizes.append(len(encoded))
            self._put(self.starts, len(self.text), _TEXT)
            self.text += encoded
            return
        objects = self.objects
        objects.extend([None] * (len(tags) - len(objects)))
        objects.append(value)
        tags.append(_OBJECT)

    def _put(self, part: array[Any], value: Any, tag: int) -> None:
        """``value`` at the next row of ``part`` (zeros before it where earlier rows held none), tagged ``tag``."""
        _pad(part, len(self.tags))
        part.append(value)
        self.tags.append(tag)

    def _aligned(self) -> None:
        """Every part in use as long as the rows (a take indexes them)."""
        rows = len(self.tags)
        if self.numbers:
            _pad(self.numbers, rows)
        if self.codes:
            _pad(self.codes, rows)
        if self.starts:
            _pad(self.starts, rows)
            _pad(self.sizes, rows)
        if self.objects:
            self.objects.extend([None] * (rows - len(self.objects)))

    def get(self, row: int) -> Any:
        tag = self.tags[row]
        if tag == _MISSING:
            return None
        if tag == _CODED:
            return self.distinct[self.codes[row]]
        if tag == _CODED_LIST:
            return list(self.distinct[self.codes[row]])  # a fresh list: what a reader changes is its own
        if tag == _OBJECT:
            return self.objects[row]
        if tag == _TEXT:
            start = self.starts[row]
            return self.text[start : start + self.sizes[row]].decode("utf-8", "surrogatepass")
        number = self.numbers[row]
        return int(number) if tag == _INT else number

    def values(self, rows: np.ndarray | None = None) -> list[Any]:
        """The values of ``rows`` (every row by default), as Python values."""
        positions = range(len(self.tags)) if rows is None else rows.tolist()
        return [self.get(row) for row in positions]

    def floats(self, rows: np.ndarray) -> np.ndarray:
        """The values of ``rows`` as floats: numbers as they are, anything else NaN (no object made per row)."""
        self._aligned()
        tags = np.frombuffer(self.tags, dtype=np.uint8)[rows]
        out = np.full(len(rows), np.nan)
        if self.numbers:
            numeric = (tags == _INT) | (tags == _FLOAT)
            out[numeric] = np.frombuffer(self.numbers, dtype=self.numbers.typecode)[rows[numeric]]
        for at in np.flatnonzero(tags == _OBJECT).tolist():  # ints past 2^53
            value = self.objects[rows[at]]
            if type(value) is int:
                out[at] = _as_float(value)
        return out

    def flags(self, rows: np.ndarray) -> np.ndarray:
        """The values of ``rows`` as 1.0 (True), 0.0 (False) or NaN (anything else)."""
        self._aligned()
        tags = np.frombuffer(self.tags, dtype=np.uint8)[rows]
        out = np.full(len(rows), np.nan)
        if self.distinct:
            of_code = np.array([1.0 if v is True else 0.0 if v is False else np.nan for v in self.distinct])
            coded = tags == _CODED
            out[coded] = of_code[np.frombuffer(self.codes, dtype=self.codes.typecode)[rows[coded]]]
        for at in np.flatnonzero(tags == _OBJECT).tolist():  # a flag past the coded values
            value = self.objects[rows[at]]
            out[at] = 1.0 if value is True else 0.0 if value is False else np.nan
        return out

    def texts(self, rows: np.ndarray, missing: str | None) -> pd.Categorical:
        """The values of ``rows`` as text (``str`` of each; ``missing`` for a missing one, NaN when None), a code a
        row: a text is made once per distinct value, not once per row."""
        self._aligned()
        tags = np.frombuffer(self.tags, dtype=np.uint8)[rows]
        categories: dict[str, int] = {}
        codes = np.full(len(rows), -1, dtype=np.int64)

        def put(where: np.ndarray, of_value: np.ndarray, text_of: Any) -> None:
            if not where.any():
                return
            keys = of_value[where]
            found = np.unique(keys)
            mapped = np.array([categories.setdefault(text_of(key), len(categories)) for key in found.tolist()])
            codes[where] = mapped[np.searchsorted(found, keys)]

        if self.distinct:
            row_codes = np.frombuffer(self.codes, dtype=self.codes.typecode)[rows].astype(np.int64)
            put(tags == _CODED, row_codes, lambda code: str(self.distinct[code]))
            put(tags == _CODED_LIST, row_codes, lambda code: str(list(self.distinct[code])))
        if self.numbers:
            row_numbers = np.frombuffer(self.numbers, dtype=self.numbers.typecode)[rows]
            put(tags == _INT, row_numbers, lambda number: str(int(number)))
            put((tags == _FLOAT) & ~np.isnan(row_numbers), row_numbers, str)
        for at in np.flatnonzero((tags == _OBJECT) | (tags == _TEXT)).tolist():
            codes[at] = categories.setdefault(str(self.get(int(rows[at]))), len(categories))
        if missing is not None:
            codes[codes < 0] = categories.setdefault(missing, len(categories))
        return pd.Categorical.from_codes(codes, categories=list(categories))

    def take(self, rows: np.ndarray) -> _Column:
        """A column of ``rows`` only, in their order (the distinct values shared)."""
        self._aligned()
        out = _Column(0)
        out.tags = bytearray(np.frombuffer(self.tags, dtype=np.uint8)[rows].tobytes())
        out.distinct, out.index, out.coding = self.distinct, self.index, self.coding
        if self.numbers:
            typecode = self.numbers.typecode
            out.numbers = array(typecode, np.frombuffer(self.numbers, dtype=typecode)[rows].tobytes())
        if self.codes:
            typecode = self.codes.typecode
            out.codes = array(typecode, np.frombuffer(self.codes, dtype=typecode)[rows].tobytes())
        if self.starts:
            out.text = self.text
            out.starts = array("q", np.frombuffer(self.starts, dtype=np.int64)[rows].tobytes())
            out.sizes = array("i", np.frombuffer(self.sizes, dtype=np.intc)[rows].tobytes())
        if self.objects:
            out.objects = [self.objects[row] for row in rows.tolist()]
        return out


def _as_float(value: int) -> float:
    """An int as the nearest float (±inf past the float range)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


class RowColumns(Sequence[dict[str, Any]]):
    """Results rows held column by column (fields in order of first appearance). Reading one row gives a fresh dict
    holding every field (None where the row lacked it); ``values`` gives one field of many rows."""

    def __init__(self, rows: Iterable[Mapping[str, Any]] = ()) -> None:
        self._columns: dict[str, _Column] = {}
        self._rows = 0
        for row in rows:
            self.append(row)

    def append(self, row: Mapping[str, Any]) -> None:
        columns = self._columns
        for name, value in row.items():
            column = columns.get(name)
            if column is None:
                column = columns[name] = _Column(self._rows)
            column.append(value)
        self._rows += 1
        if len(row) < len(columns):  # fields this row lacks
            for column in columns.values():
                if len(column.tags) < self._rows:
                    column.tags.append(_MISSING)

    @property
    def fields(self) -> list[str]:
        return list(self._columns)

    def values(self, name: str, rows: np.ndarray | None = None) -> list[Any]:
        """Field ``name`` of ``rows`` (indices; every row by default); None for a field no row has."""
        column = self._columns.get(name)
        if column is None:
            return [None] * (self._rows if rows is None else len(rows))
        return column.values(rows)

    def floats(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Field ``name`` of ``rows`` as floats (``_Column.floats``; NaN for a field no row has)."""
        column = self._columns.get(name)
        return np.full(len(rows), np.nan) if column is None else column.floats(rows)

    def flags(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Field ``name`` of ``rows`` as 1.0, 0.0 or NaN (``_Column.flags``)."""
        column = self._columns.get(name)
        return np.full(len(rows), np.nan) if column is None else column.flags(rows)

    def texts(self, name: str, rows: np.ndarray | None = None, missing: str | None = None) -> pd.Categorical:
        """Field ``name`` of ``rows`` (every row by default) as categorical text (``_Column.texts``)."""
        rows = np.arange(self._rows) if rows is None else rows
        column = self._columns.get(name)
        if column is None:
            column = _Column(self._rows)
        return column.texts(rows, missing)

    def drop(self, name: str) -> None:
        """Let go of the field ``name`` (if held)."""
        self._columns.pop(name, None)

    def keep(self, rows: np.ndarray) -> None:
        """Keep only the rows at the indices ``rows``, in that order, one column at a time (never two copies of
        every column)."""
        for name in self._columns:
            self._columns[name] = self._columns[name].take(rows)
        self._rows = len(rows)

    def __len__(self) -> int:
        return self._rows

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._rows))]
        if not -self._rows <= index < self._rows:
            raise IndexError(index)
        index %= self._rows
        return {name: column.get(index) for name, column in self._columns.items()}


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
    max_tokens = config.get("max_tokens")
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
            "max_tokens": max_tokens if type(max_tokens) is int else None,
        },
        "llm": summary.llm or results.EXPERT,
        "task": summary.task,
        "repeat": 0,
    }
    row = results.attempt_row(run_dir.parent, job, run_dir)
    row["run_dir"] = str(run_dir)
    return row


class Loaded(NamedTuple):
    """What ``load_results`` read: attempt rows, downstream rows, and for each attempt found in several places which
    copy was kept."""

    rows: RowColumns
    downstream: list[dict[str, Any]]
    merged: list[str]


def load_results(paths: Iterable[str | Path], fields: Collection[str] | None = None) -> Loaded:
    """Attempt rows (in ``results.order_key`` order), downstream rows and what was merged, from sweep directories,
    results files or run directories. An attempt found in several of them is resolved by ``kept_copy`` (the same
    whatever the order given). ``fields``: only these fields of each row are kept (a report keeps what its tables
    read); its other fields are still compared when an attempt is read twice, through a digest."""
    kept = None if fields is None else {*fields, "attempt_id", "status", *_ORDER_FIELDS}
    rows = RowColumns()
    places: list[str] = []
    place_of = array("i")
    downstream: list[dict[str, Any]] = []
    for path in map(Path, paths):
        if not path.exists():
            raise ReportError(f"{path}: no such file or directory")
        places.append(str(path))
        try:  # results a user received: anything malformed is one error line naming the path
            found, more = _results_in(path)
            for row in with_first_answers(filter(None, map(checked_row, found)), path):  # each checked as read
                rows.append(row if kept is None else _narrowed(row, kept))
                place_of.append(len(places) - 1)
        except (KeyError, TypeError, AttributeError, ValueError, RecursionError) as error:
            raise ReportError(
                f"{path}: cannot be read as results ({type(error).__name__}: {str(error)[:100]}); "
                "is it damaged or from another program?"
            ) from None
        downstream.extend(row for row in more if isinstance(row, dict))
    if not rows and not downstream:
        raise ReportError("no results found (expected sweep directories, results.jsonl files or run directories)")
    ids = _codes(rows.values("attempt_id"), sort=True)  # equal ids, equal codes, in the ids' order
    keep, merged = _one_copy_each(rows, ids, [places[i] for i in place_of])
    rows.keep(_in_order(rows, keep, ids[keep]))
    del ids
    rows.drop(_OTHERS)
    return Loaded(rows, downstream, merged)


_OTHERS = "\0others"  # a narrowed row's digest of the fields left out (a name no results row can have)


def _narrowed(row: Mapping[str, Any], fields: Collection[str]) -> dict[str, Any]:
    """``row``'s ``fields``, and a digest of its other fields but timings (53 bits, in this process: two copies of
    one attempt that differ outside ``fields`` still differ)."""
    others = tuple(
        (name, type(value).__name__, tuple(value) if isinstance(value, list) else value)
        for name, value in row.items()
        if name not in fields and name not in _RUN_FIELDS
    )
    return {**{name: value for name, value in row.items() if name in fields}, _OTHERS: hash(others) & (2**53 - 1)}


def _one_copy_each(rows: RowColumns, ids: np.ndarray, places: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """The indices of the rows kept, one per attempt (``ids``: a code per row's attempt id; ``kept_copy`` for an
    attempt read more than once), and what was merged."""
    repeated = np.bincount(ids)[ids] > 1
    keep = np.flatnonzero(~repeated).tolist()
    copies: dict[int, list[int]] = {}
    for index in np.flatnonzero(repeated).tolist():
        copies.setdefault(int(ids[index]), []).append(index)
    merged: list[str] = []
    for found in copies.values():
        chosen, line = kept_copy(str(rows[found[0]]["attempt_id"]), [(places[i], rows[i]) for i in found])
        keep.append(found[chosen])
        merged.append(line)
    return np.array(keep, dtype=np.intp), merged


def _codes(values: list[Any], *, sort: bool = False) -> np.ndarray:
    """One integer per value, equal for equal values (in the values' order with ``sort``)."""
    return pd.factorize(np.fromiter(values, dtype=object, count=len(values)), sort=sort, use_na_sentinel=False)[0]


_ORDER_FIELDS = ("task_spec", "llm", "format", "prompt", "detail", "policy", "repeat")


def _in_order(rows: RowColumns, keep: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``keep`` sorted by ``results.order_key``: its settings keyed once per distinct combination (not once per row),
    then the attempt id (``ids``: their codes, in the ids' order)."""
    if not len(keep):
        return keep
    combo_of = np.zeros(len(keep), dtype=np.int64)  # one code per distinct combination of the settings
    for name in _ORDER_FIELDS:  # one field at a time (a row × field matrix of codes took 17 MB at 100,000 rows)
        codes = _codes(rows.values(name, keep))
        combo_of = pd.factorize(combo_of * (int(codes.max()) + 1) + codes)[0]  # stays below len(keep)
    _, first = np.unique(combo_of, return_index=True)
    keys = [results.order_key({**rows[int(keep[i])], "attempt_id": ""}) for i in first.tolist()]
    rank = np.empty(len(keys), dtype=np.intp)
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    return keep[np.lexsort((ids, rank[combo_of]))]


# How complete an outcome is (lower: more): a model outcome over a stop, a stop over a failure, a failure over nothing.
COMPLETENESS = {
    "accepted": 0,
    "rejected": 0,
    "not_applicable": 1,
    "timeout": 2,
    "infra_failed": 3,
    "error": 4,
    "unfinished": 5,
    "pending": 6,
}
_RUN_FIELDS = {*results.TIMING_FIELDS, "cached_llm_seconds", FIRST_ANSWER_FIELD}  # may differ between two copies


def kept_copy(attempt: str, found: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[int, str]:
    """Which of an attempt's copies (place, row) a report keeps, and a line saying so. **Rule**: the most complete
    outcome wins (``COMPLETENESS``: accepted or rejected over timeout over infra_failed over error over unfinished
    over pending), so a partial sweep and its complete rerun read the same in either order; copies equally complete
    must agree on everything but timings, else the report is refused with a line naming the attempt and the places
    (which one is right is the user's call, not the argument order's)."""
    completeness = [COMPLETENESS.get(str(row.get("status")), len(COMPLETENESS)) for _, row in found]
    best = min(completeness)
    kept = sorted((i for i, level in enumerate(completeness) if level == best), key=lambda i: found[i][0])
    outcomes = {
        json.dumps({k: v for k, v in found[i][1].items() if k not in _RUN_FIELDS}, sort_keys=True) for i in kept
    }
    if len(outcomes) > 1:
        places = ", ".join(dict.fromkeys(found[i][0] for i in kept))
        raise ReportError(
            f"attempt {terminal_line(attempt)} has different {terminal_line(str(found[kept[0]][1].get('status')))} "
            f"outcomes in {terminal_line(places)}; report one of them, or remove the copy you do not trust"
        )
    place, row = found[kept[0]]
    others = sorted(
        f"{other_place} ({other.get('status')})" for i, (other_place, other) in enumerate(found) if i != kept[0]
    )
    return kept[0], f"kept {row.get('status')} from {place} over {', '.join(others)}"


_KEY_FIELDS = ("attempt_id", "task_spec", "llm", "format", "prompt", "detail", "policy")
NUMBER_FIELDS = {
    "num_vars",
    "repeat",
    "max_repairs",
    "max_tokens",
    "repair_rounds",
    "semantic_rounds",
    "n_autofixes",
    "llm_calls",
    "cached_calls",
    *CACHED_USAGE,
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
RATE_FIELDS = {"f1", "precision", "recall"}
# Fields a report reads when a row has them: whether the first answer failed the syntax check (else read from the
# attempt's trace).
_OPTIONAL_FIELDS: dict[str, type] = {FIRST_ANSWER_FIELD: bool}
FLAG_FIELDS = {"syntax_error", "oracle_passed", "compiled", "exact"}


def checked_row(row: Any) -> dict[str, Any] | None:
    """A results row from disk with each field of the type ``attempt_row`` writes (others emptied);
    None without the fields that identify the attempt."""
    if not isinstance(row, dict) or not all(isinstance(row.get(key), str) for key in _KEY_FIELDS):
        return None
    return typed_row(row)


def typed_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Every results field of ``row`` of the type ``attempt_row`` writes: one of another type, or a number no attempt
    can have (below 0, a rate above 1), or missing, is emptied."""
    checked: dict[str, Any] = {}
    for key in results.ROW_FIELDS:
        value = row.get(key)
        if key in NUMBER_FIELDS:  # counts, seconds, tokens and ratios: none below 0, a rate not above 1
            fits = (type(value) is int or (type(value) is float and math.isfinite(value))) and (
                0 <= value <= (1 if key in RATE_FIELDS else math.inf)
            )
        elif key in FLAG_FIELDS:
            fits = type(value) is bool
        elif key == "autofixes":
            fits = isinstance(value, list) and all(isinstance(item, str) for item in value)
        else:
            fits = isinstance(value, str)
        checked[key] = value if fits else ([] if key == "autofixes" else None)
    for key, kind in _OPTIONAL_FIELDS.items():  # when a row records them (rows written before them do not)
        checked[key] = row[key] if type(row.get(key)) is kind else None
    return checked


def with_first_answers(rows: Iterable[dict[str, Any]], source: Path) -> Iterator[dict[str, Any]]:
    """``rows`` (of the sweep or results file ``source``), each with ``first_answer_syntax_error`` where it lacks it:
    read from the attempt's trace (None without one, or for a ``run_dir`` outside ``source``'s folder — rows
    travel, and a report never reads outside their own folder). One at a time, as they are read."""
    base = (source if source.is_dir() else source.parent).resolve()
    prefix = os.path.join(base, "")
    for row in rows:
        if type(row.get(FIRST_ANSWER_FIELD)) is not bool:
            run_dir = row.get("run_dir")
            # inside ``base`` as written (no syscall: 100,000 rows resolved took seconds); a link on the way is
            # refused when the trace is read, which follows none below ``base``
            found = os.path.normpath(os.path.join(base, run_dir)) if isinstance(run_dir, str) and run_dir else ""
            inside = found.startswith(prefix) or found == str(base)
            # one lstat first: a run_dir that is not there has no trace (20,000 received rows without their
            # attempts' folders took 2 s through the safe reads); one that is there is read without following links
            there = inside and os.path.lexists(found)  # False too for a name no path can hold
            row = {**row, FIRST_ANSWER_FIELD: first_answer_syntax_error(Path(found), base) if there else None}
        yield row


def _results_in(path: Path) -> tuple[Iterable[Any], list[Any]]:
    """(attempt rows, downstream rows) of one sweep directory, results file or folder of runs, unchecked (a results
    file's rows as they are read)."""
    downstream: list[Any] = []
    found: Iterable[Any] = []
    if path.is_file():
        found = results.iter_results(path)
    elif (path / results.RESULTS_JSONL).is_file():
        found = results.iter_results(path)
    elif (path / results.ATTEMPTS_DIR).is_dir():
        found = results.collect_rows(path)
    else:
        runs = (_row_from_run_dir(summary.parent) for summary in sorted(path.rglob("summary.json")))
        found = [row for row in runs if row is not None]
    if path.is_dir():
        for file in sorted(path.rglob(DOWNSTREAM_FILE)):
            text = safe_files.read_text(file, root=path)
            downstream.extend(json.loads(line) for line in text.splitlines() if line.strip())
        for file in sorted(path.rglob(TRAINING_FILE)):
            downstream.extend(rows_from_training(json.loads(safe_files.read_text(file, root=path)), file.parent))
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
