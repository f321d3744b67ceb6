"""What each page shows, read from a directory: the sweep's rows, tables and plots; an attempt's repair
loop as a timeline; a verification; the error taxonomy of a sweep. Plain data for the templates —
the numbers come from the modules that define them (sweep rows, report tables, trace reports)."""

from __future__ import annotations

import difflib
import functools
import html
import json
import math
import re
import stat
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from autonesy.graph import report, report_rows, results
from autonesy.graph.trace import (
    TRACE_FILE,
    attempt_report,
    error_text,
    find_run_dirs,
    formula_text,
    next_check,
    node_outcome,
    semantic_rounds,
    shorten,
)
from autonesy.graph.view.files import Roots
from autonesy.tools import safe_files
from autonesy.tools.trace_events import LLM_CALL_EVENT
from autonesy.tools.verify.results import CheckerResult, ConstraintResult, JudgeResult

TABLE_COLUMNS = (
    "attempt_id",
    "task",
    "benchmark",
    "model",
    "llm",
    "format",
    "prompt",
    "detail",
    "policy",
    "repeat",
    "status",
    "relation",
    "f1",
    "repair_rounds",
    "n_autofixes",
    "llm_calls",
    "syntax_error",
    "reason",
)
FILTERS = ("task", "model", "format", "prompt", "detail", "status", "relation")
PREVIEW_CHARS = 160
_VAR_COMMENT = re.compile(r"^c var (\d+) (\S+)\s*$", re.MULTILINE)


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else {}: the files are untrusted, their shapes too."""
    return value if isinstance(value, dict) else {}


def objs(value: Any) -> list[dict[str, Any]]:
    """The dicts in a list read from a run directory (anything else dropped), so templates never see a malformed entry."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------ kinds
def directory_kind(path: Path) -> str:
    """sweep | verification | attempt | folder (anything else: run directories are found below it)."""
    if (path / results.ATTEMPTS_DIR).is_dir() or (path / results.RESULTS_JSONL).is_file():
        return "sweep"
    if (path / "instruction.txt").is_file() and (path / TRACE_FILE).is_file():
        return "verification"
    if (path / TRACE_FILE).is_file():
        return "attempt"
    return "folder"


def folder_entries(path: Path) -> list[Path]:
    """Sweeps and run directories below a folder (a sweep's own attempts are not listed twice)."""
    sweeps = sorted({p.parent for p in path.rglob(results.ATTEMPTS_DIR) if p.is_dir()})
    runs = [p for p in find_run_dirs([path]) if not any(s in p.parents for s in sweeps)]
    return sweeps + runs


def entry_metrics(roots: Roots, path: Path, kind: str) -> dict[str, Any]:
    """The key numbers of a folder entry: a sweep's attempts by status, mean F1 and accepted share over its finished
    attempts; a run's task, settings, status, relation and F1."""
    if kind == "sweep":
        rows = sweep_rows(path)
        counts: dict[str, int] = defaultdict(int)
        for row in rows:
            counts[str(row.get("status") or "?")] += 1
        finished = [r for r in rows if r.get("status") in report.FINISHED]
        return {
            "attempts": len(rows),
            "counted": len(finished),
            "counts": dict(sorted(counts.items())),
            "cells": _entry_cells(rows),
            "accepted": counts.get("accepted", 0) / len(finished) if finished else None,
            "llms": sorted({str(r.get("model") or r.get("llm")) for r in rows}),
        }
    summary = obj(roots.read_json(path / "summary.json", {}))
    metrics = obj(summary.get("metrics"))
    return {
        "task": summary.get("task"),
        "setting": " · ".join(str(summary[k]) for k in ("format", "prompt", "detail", "policy") if summary.get(k)),
        "llm": summary.get("llm"),
        "status": summary.get("status", "unfinished"),
        "relation": metrics.get("relation"),
        "f1": metrics.get("f1") if isinstance(metrics.get("f1"), (int, float)) else None,
    }


def _entry_cells(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A sweep's mean F1 per LLM and policy, each with its n of planned: one pooled mean over LLMs and policies would
    rank a sweep that scored 5 of 16 attempts of its best LLM above a complete one."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (str(row.get("model") or row.get("llm")), str(row.get("policy")))
        cell = cells.setdefault(key, {"llm": key[0], "policy": key[1], "planned": 0, "scores": []})
        cell["planned"] += 1
        if row.get("status") in report.FINISHED and isinstance(row.get("f1"), (int, float)):
            cell["scores"].append(float(row["f1"]))
    return [
        {**{k: v for k, v in c.items() if k != "scores"}, "n": len(c["scores"]), "f1": _mean_or_none(c["scores"])}
        for _, c in sorted(cells.items())
    ]


def _mean_or_none(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# ------------------------------------------------------------------------------------ sweep
def sweep_is_running(path: Path) -> bool:
    """True while results.jsonl is missing or older than the grid or the attempts folder: the rows are
    then rebuilt from the attempt directories, and the page polls for new ones."""
    table = path / results.RESULTS_JSONL
    if not table.is_file():
        return True
    written = table.stat().st_mtime
    return any(
        p.exists() and p.stat().st_mtime > written for p in (path / results.SWEEP_FILE, path / results.ATTEMPTS_DIR)
    )


def sweep_rows(path: Path, *, first_answers: bool = False) -> list[dict[str, Any]]:
    """Every attempt's results row, as on disk now (``first_answers``: with whether each first answer failed the
    syntax check, read from the traces, for the summary tables)."""
    if sweep_is_running(path):
        rows = results.collect_rows(path) if (path / results.ATTEMPTS_DIR).is_dir() else []
    else:
        rows = _results_file(path / results.RESULTS_JSONL, (path / results.RESULTS_JSONL).stat().st_mtime_ns)
    return list(report_rows.with_first_answers(rows, path)) if first_answers else rows


@functools.lru_cache(maxsize=4)
def _results_file(path: Path, mtime_ns: int) -> list[dict[str, Any]]:
    return results.read_results(path)


def table_rows(rows: list[dict[str, Any]], link: Callable[[str], str]) -> dict[str, Any]:
    """The results table's columns plus the link into each attempt, column names once (a 10,000-row
    table is a third of the size of a list of objects)."""
    values = []
    for row in rows:
        item = [row.get(k) for k in TABLE_COLUMNS]
        f1 = row.get("f1")
        item[TABLE_COLUMNS.index("f1")] = round(f1, 4) if isinstance(f1, float) else f1
        item.append(link(row.get("run_dir") or f"{results.ATTEMPTS_DIR}/{row.get('attempt_id')}"))
        values.append(item)
    return {"columns": [*TABLE_COLUMNS, "href"], "rows": values}


def sweep_summary(rows: list[dict[str, Any]], compare_published: bool) -> dict[str, Any]:
    """The report's tables and plot data over the finished rows."""
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row.get("status") or "?"] += 1
    tables, df, _ = report.report_tables(rows, compare_published=compare_published)
    plots = plotly_figures(report.plot_data(df)) if not df.empty else []
    return {"tables": tables, "plots": plots, "counts": dict(counts)}


def compare_sweeps(rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]]) -> dict[str, Any]:
    """Two sweeps side by side. What differs is read from the grids (the settings each sweep planned, its rows in
    any state), never from outcomes: a setting whose planned values differ is **the varied setting**, put side by
    side; cells are aligned on the settings both share that vary (as in the report). Per cell, each sweep's attempts
    (n of planned), F1 with its bootstrap interval and syntax-error rate, and ΔF1 (B − A) with the bootstrap
    interval of the difference; the attempts each left out (infrastructure failures among them)."""
    tagged = [{**r, "sweep": "A"} for r in rows_a] + [{**r, "sweep": "B"} for r in rows_b]
    left_out = {
        side: dict(sorted(Counter(str(r.get("status")) for r in rows).items()))
        for side, rows in (("A", rows_a), ("B", rows_b))
    }
    df = report.frame(tagged, planned=True, fields=report.TABLE_FIELDS | {"sweep"})
    if df.empty or not df["counted"].any():
        return {"keys": [], "rows": [], "settings": [], "varied": [], "counts": left_out}
    planned = {side: df[df["sweep"] == side] for side in ("A", "B")}
    settings = [
        {"name": name, "a": sorted(planned["A"][name].unique()), "b": sorted(planned["B"][name].unique())}
        for name in report.SETTINGS
    ]
    # one value on each side, and not the same one: the setting the comparison is about
    varied = [s for s in settings if s["a"] != s["b"] and len(s["a"]) == 1 and len(s["b"]) == 1]
    shared = df.drop(columns=[s["name"] for s in varied]).assign(**{str(s["name"]): "—" for s in varied})
    cells = report.cells_of(shared)
    columns = report.Columns(df)
    out = []
    for values, positions in report.grouped(shared, cells.keys, report.ORDERS):
        sides: dict[str, dict[str, Any]] = {}
        scores: dict[str, Any] = {}
        for side in ("A", "B"):
            cell = positions[columns["sweep"][positions] == side]
            counted = columns.counted(cell)
            scores[side] = columns["f1"][counted]
            sides[side] = {
                "n": len(counted),
                "planned": len(cell),
                "f1": report.measure(scores[side]),
                "syntax": float(columns["syntax_error"][counted].mean()) if len(counted) else math.nan,
            }
        low, high = report.bootstrap_delta_ci(scores["A"], scores["B"])
        delta = sides["B"]["f1"]["mean"] - sides["A"]["f1"]["mean"]
        out.append({"key": list(values), "a": sides["A"], "b": sides["B"], "delta": delta, "delta_ci": [low, high]})
    return {"keys": list(cells.keys), "rows": out, "settings": settings, "varied": varied, "counts": left_out}


def plotly_text(label: str) -> str:
    """A label from a results file as Plotly plain text: Plotly draws its pseudo-HTML (``<a href>``, ``<b>``,
    ``<br>``) in titles, tick labels, legends and hover text, so ``&``, ``<`` and ``>`` become entities."""
    return html.escape(str(label), quote=False)


def plotly_figures(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's four plots as Plotly figures (drawn by plotly.js in the page); every label that comes
    from the results (model and format names) is passed through :func:`plotly_text`."""
    formats = [plotly_text(f) for f in data["formats"]]
    models = {m: plotly_text(m) for m in data["models"]}
    layout = {  # Plotly's toolbar (shown on hover) in a strip above the title: it never covers it
        "barmode": "group",
        "margin": {"l": 50, "r": 10, "t": 64, "b": 40},
        "height": 340,
        "legend": {"font": {"size": 10}},
        "modebar": {"orientation": "h"},
        "xaxis": {"automargin": True},
        "yaxis": {"automargin": True},
    }

    def titled(text: str) -> dict[str, Any]:
        return {  # below the toolbar's strip (the top 28 px), left-aligned
            "text": text,
            "x": 0.01,
            "xanchor": "left",
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": 30},
            "font": {"size": 14},
        }

    f1 = [
        {
            "type": "bar",
            "name": models[m],
            "x": formats,
            "y": data["f1_mean"][m],
            "error_y": {
                "type": "data",
                "symmetric": False,
                "array": data["f1_err_plus"][m],
                "arrayminus": data["f1_err_minus"][m],
            },
        }
        for m in data["models"]
    ]
    syntax = [
        {"type": "bar", "name": models[m], "x": formats, "y": data["syntax_error_rate"][m]} for m in data["models"]
    ]
    rounds = [
        {"type": "bar", "name": models[m], "x": data["rounds"], "y": data["round_counts"][m]} for m in data["models"]
    ]
    relations = [
        {
            "type": "bar",
            "orientation": "h",
            "name": r,
            "y": list(models.values()),
            "x": shares,
            "marker": {"color": report.RELATION_COLOURS[r]},
        }
        for r, shares in data["relations"].items()
    ]
    return [
        {
            "id": "f1",
            "data": f1,
            "layout": {
                **layout,
                "title": titled("F1 by output format and model"),
                "yaxis": {"range": [0, 1.05], "title": {"text": "F1 (rejected = 0)"}, "automargin": True},
            },
        },
        {
            "id": "syntax",
            "data": syntax,
            "layout": {
                **layout,
                "title": titled("Syntax-error rate"),
                "yaxis": {"range": [0, 1.05], "automargin": True},
            },
        },
        {
            "id": "rounds",
            "data": rounds,
            "layout": {
                **layout,
                "title": titled("Repair rounds per attempt"),
                "xaxis": {"title": {"text": "repair rounds"}, "type": "category", "automargin": True},
            },
        },
        {
            "id": "relations",
            "data": relations,
            "layout": {
                **layout,
                "barmode": "stack",
                "title": titled("Relation to the ground truth"),
                "xaxis": {"range": [0, 1], "automargin": True},
                "yaxis": {"automargin": True, "type": "category"},
            },
        },
    ]


# ---------------------------------------------------------------------------------- traces
@functools.lru_cache(maxsize=4)
def _parsed_trace(path: Path, mtime_ns: int, size: int) -> tuple[dict[str, Any], ...]:
    events = []
    try:
        text = safe_files.read_text(path)
    except OSError:  # refused (a link, a FIFO, too large) or gone
        return ()
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue  # a line cut by a crash, or still being written
        if isinstance(event, dict):
            events.append(event)
    return tuple(events)


def trace_events(run_dir: Path) -> tuple[dict[str, Any], ...]:
    """The trace's events, parsed once per version of the file (a 50 MB trace is read once, not per click)."""
    path = run_dir / TRACE_FILE
    try:
        found = safe_files.entry_stat(path)
    except OSError:
        return ()
    if found is None or not stat.S_ISREG(found.st_mode):
        return ()
    return _parsed_trace(path, found.st_mtime_ns, found.st_size)


def _label(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _preview(text: Any) -> str:
    return shorten(text or "", PREVIEW_CHARS)


def _answer(event: dict[str, Any]) -> str:
    return str(event.get("text") or (event.get("response") or {}).get("text") or "")


def timeline(events: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """One light item per event (titles, times, previews); the bulky parts (prompts, answers, diffs) are
    fetched when their item is opened."""
    start = events[0].get("time", 0) if events else 0
    semantic = _semantic_by_event(events)
    items = []
    for index, event in enumerate(events):
        kind = str(event.get("event", "?"))
        item: dict[str, Any] = {"index": index, "event": kind, "at": _seconds(event.get("time"), start), "body": False}
        if kind == "node":
            item.update(
                title=f"node {event.get('node')}",
                note=f"{_seconds(event.get('seconds'), 0):.3f} s · {node_outcome(events, index)}",
            )
        elif kind == LLM_CALL_EVENT:
            verdict = event.get("verdict") or {}
            item.update(
                title=f"LLM call · {event.get('role', '?')}"
                + (f" · round {event['round']}" if "round" in event else "")
                + (f" · semantic round {event['semantic_round']}" if "semantic_round" in event else ""),
                note=("error: " + str(event["error"])) if event.get("error") else _preview(_answer(event)),
                verdict=verdict.get("verdict") if isinstance(verdict, dict) else verdict,
                body=True,
            )
        elif kind == "syntax_error":
            item.update(
                title=f"syntax error · {event.get('kind', '?')}",
                note=error_text(_label(event.get("kind")), str(event.get("message", ""))),
            )
        elif kind == "repair_round":
            found, passed = next_check(events, index)
            item.update(  # the model's verdict is its claim; the colour is what the next check found
                title=f"repair round {event.get('round')} · answered {event.get('verdict')} · next check: {found}",
                note=error_text(_label(event.get("error_kind")), str(event.get("error", ""))),
                verdict="parses" if passed else "still-error",
                changed=event.get("changed") or "",
                body=True,
            )
        elif kind == "semantic_round":
            semantic_found = semantic.get(index, {})
            shown = semantic_found.get("counterexamples")
            item.update(
                title=f"semantic round {event.get('round')} · "
                + ("counterexamples not recorded" if shown is None else f"{shown} counterexamples"),
                changed=semantic_found.get("changed", ""),
                body=True,
            )
        elif kind == "autofix":
            item.update(title="autofix", fixes=[str(f) for f in event.get("fixes", [])])
        elif kind == "outcome":
            item.update(title=f"outcome · {event.get('status')}", note=str(event.get("reason", "")))
        else:
            fields = {k: v for k, v in event.items() if k not in ("event", "time")}
            text = json.dumps(fields, default=str, ensure_ascii=False)
            item.update(title=kind, note=_preview(text), body=len(text) > PREVIEW_CHARS)
        items.append(item)
    return items


def _semantic_by_event(events: tuple[dict[str, Any], ...]) -> dict[int, dict[str, Any]]:
    """``trace.semantic_rounds`` keyed by the index of each round's ``semantic_round`` event."""
    usable = [e for e in events if isinstance(e.get("event"), str)]
    if len(usable) != len(events):  # indices must match the timeline's: skip the rare file with odd lines
        return {}
    rounds = {r["round"]: r for r in semantic_rounds(list(events))}
    return {
        i: rounds[e["round"]]
        for i, e in enumerate(events)
        if e.get("event") == "semantic_round" and type(e.get("round")) is int and e["round"] in rounds
    }


def _formulas_before(events: tuple[dict[str, Any], ...], index: int) -> list[str]:
    """The formulas of the LLM's answers before event ``index``, in order (answers without one left out)."""
    found = []
    for event in events[:index]:
        if event.get("event") == LLM_CALL_EVENT and not event.get("error"):
            formula = formula_text(_answer(event))
            if formula:
                found.append(formula)
    return found


def _with_verdict(items: list[dict[str, Any]], metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """The timeline with the relation and F1 beside an accepted outcome (accepted is not correct)."""
    f1 = metrics.get("f1")
    verdict = f"relation {metrics.get('relation') or '—'} · F1 " + (
        f"{f1:.3f}" if isinstance(f1, (int, float)) else "—"
    )
    for item in items:
        if item["event"] == "outcome" and item.get("title") == "outcome · accepted":
            item["note"] = verdict + (f" · {item['note']}" if item.get("note") else "")
    return items


def _seconds(value: Any, start: float) -> float:
    try:
        return float(value) - float(start)
    except (TypeError, ValueError):
        return 0.0


def event_body(events: tuple[dict[str, Any], ...], index: int, dimacs: str = "") -> dict[str, Any]:
    """The full content of one timeline item: an LLM call's messages and answer, a repair or oracle-feedback round's
    diff (the formula before the round against the one after it; a feedback round's counterexamples over the
    variables named in ``dimacs``), another event's fields."""
    event = events[index]
    kind = event.get("event")
    if kind == LLM_CALL_EVENT:
        messages = [
            {"role": str(m.get("role", "?")), "content": str(m.get("content", ""))}
            for m in event.get("messages") or []
            if isinstance(m, dict)
        ]
        return {
            "kind": "llm",
            "messages": messages,
            "answer": _answer(event),
            "reasoning": str((event.get("response") or {}).get("reasoning") or ""),
            "error": str(event.get("error") or ""),
        }
    if kind in ("repair_round", "semantic_round"):  # the formula before the round against the one after it
        formulas = _formulas_before(events, index)
        before, after = (formulas[-2], formulas[-1]) if len(formulas) >= 2 else ("", formulas[-1] if formulas else "")
        if event.get("verdict") == "ok":
            after = before  # [[OK]]: the formula stays as it was
        if isinstance(event.get("formula_before"), str) and isinstance(event.get("formula_after"), str):
            before, after = event["formula_before"], event["formula_after"]  # recorded by the round itself
        error = error_text(_label(event.get("error_kind")), str(event.get("error", "")))
        examples = counterexample_table(objs(event.get("counterexamples")), dimacs)
        return {"kind": "diff", "lines": diff_lines(before, after), "error": error, "examples": examples}
    return {
        "kind": "fields",
        "text": json.dumps({k: v for k, v in event.items() if k != "event"}, indent=2, default=str, ensure_ascii=False),
    }


def diff_lines(before: str, after: str) -> list[tuple[str, str]]:
    """A unified diff as (css class, line) pairs."""
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", lineterm="", n=3):
        cls = (
            "file"
            if line.startswith(("---", "+++"))
            else "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else "ctx"
        )
        lines.append((cls, line))
    return lines


# --------------------------------------------------------------------------------- attempt
def attempt_page(roots: Roots, run_dir: Path) -> dict[str, Any]:
    """The attempt page's data: trace, metrics, formula, oracle test and downstream results, read as data from the run
    directory."""
    events = trace_events(run_dir)
    metrics = roots.read_json(run_dir / "metrics.json", {})
    cnf = roots.read_text(run_dir / "formula.cnf")
    oracle = obj(metrics.get("oracle_test"))
    return {
        "config": roots.read_json(run_dir / "config.json", {}),
        "summary": roots.read_json(run_dir / "summary.json"),
        "error": roots.read_json(run_dir / results.ERROR_FILE),
        "timeline": _with_verdict(timeline(events), obj(metrics.get("formula"))),
        "finished": any(e.get("event") == "outcome" for e in events),
        "formula": roots.read_text(run_dir / "formula.txt"),
        "dimacs": cnf,
        "answer": roots.read_text(run_dir / "answer.txt"),
        "oracle": oracle,
        "counterexamples": counterexample_table(objs(oracle.get("counterexamples")), cnf or ""),
        "compiled": obj(metrics.get("compiled")),
        "metrics": obj(metrics.get("formula")),
        "circles": overlap_circles(obj(metrics.get("formula"))),
        "downstream": training_rows(roots.read_json(run_dir / "downstream.json"), run_dir),
    }


VENN_RADIUS = 65.0  # px, the larger circle


def _count(value: Any) -> float | None:
    """A model count as a number (counts past 2^53 are recorded as text)."""
    if type(value) is int and value >= 0:
        return float(value)
    if isinstance(value, str) and value.isdigit() and len(value) < 300:
        return float(int(value))
    return None


def _lens_area(r1: float, r2: float, d: float) -> float:
    if d >= r1 + r2:
        return 0.0
    if d <= abs(r1 - r2):
        return math.pi * min(r1, r2) ** 2

    def angle(a: float, b: float) -> float:  # clamped: rounding can put the cosine a hair past ±1
        return math.acos(max(-1.0, min(1.0, (d * d + a * a - b * b) / (2 * d * a))))

    kite = (-d + r1 + r2) * (d + r1 - r2) * (d - r1 + r2) * (d + r1 + r2)
    return r1 * r1 * angle(r1, r2) + r2 * r2 * angle(r2, r1) - 0.5 * math.sqrt(max(0.0, kite))


def overlap_circles(metrics: dict[str, Any], width: float = 360.0) -> dict[str, Any] | None:
    """The two circles of the models of the ground truth (FN + TP) and of the formula (TP + FP), areas and overlap in
    proportion to the counts (equal formulas are one circle); None without usable counts."""
    tp, fp, fn = (_count(metrics.get(k)) for k in ("tp", "fp", "fn"))
    if tp is None or fp is None or fn is None or max(tp + fn, tp + fp) <= 0:
        return None
    truth, formula = tp + fn, tp + fp
    scale = VENN_RADIUS / math.sqrt(max(truth, formula))
    r_truth, r_formula = scale * math.sqrt(truth), scale * math.sqrt(formula)
    target = math.pi * scale * scale * tp
    low, high = abs(r_truth - r_formula), r_truth + r_formula
    if tp <= 0:
        distance = high + 4  # apart, with a gap
    else:
        for _ in range(60):  # the lens area falls as the centres move apart: bisect for the one that fits TP
            middle = (low + high) / 2
            low, high = (middle, high) if _lens_area(r_truth, r_formula, middle) > target else (low, middle)
        distance = (low + high) / 2
    centre = width / 2
    truth_x, formula_x = centre - distance / 2, centre + distance / 2
    return {
        "truth": {"cx": round(truth_x, 2), "r": round(r_truth, 2)},
        "formula": {"cx": round(formula_x, 2), "r": round(r_formula, 2)},
        "one": fp == 0 and fn == 0,
        "fn_x": round(max(truth_x - r_truth + 14, 8), 2),
        "tp_x": round(
            (max(truth_x - r_truth, formula_x - r_formula) + min(truth_x + r_truth, formula_x + r_formula)) / 2, 2
        ),
        "fp_x": round(min(formula_x + r_formula - 14, width - 8), 2),
    }


def training_rows(result: dict[str, Any] | None, run_dir: Path) -> list[dict[str, Any]]:
    """SPL/SL per method × formula × seed, as the report counts them (``report_rows.rows_from_training``)."""
    if not result:
        return []
    try:
        return report_rows.rows_from_training(result, run_dir)
    except (AttributeError, TypeError, ValueError):  # not a training result
        return []


def counterexample_table(counterexamples: list[dict[str, Any]], dimacs: str) -> dict[str, Any]:
    """Counterexamples as rows over the task's named variables (named in formula.cnf's ``c var``
    lines; else the variables true in some counterexample)."""
    names = [name for _, name in sorted((int(i), n) for i, n in _VAR_COMMENT.findall(dimacs))]
    if not names:
        names = sorted(
            {str(v) for c in counterexamples if isinstance(c.get("true_variables"), list) for v in c["true_variables"]}
        )
    rows = []
    for example in counterexamples:
        listed = example.get("true_variables")
        true = {str(v) for v in listed} if isinstance(listed, list) else set()
        rows.append(
            {
                "values": [name in true for name in names],
                "formula": example.get("formula_says"),
                "oracle": example.get("oracle_says"),
                "source": example.get("source", ""),
            }
        )
    return {"names": names, "rows": rows}


# ----------------------------------------------------------------------------- verification
def verification_page(roots: Roots, run_dir: Path) -> dict[str, Any]:
    """The verification page's data: instruction, output with violated spans marked, constraints, checkers and the
    verdict's evidence."""
    summary = roots.read_json(run_dir / "summary.json", {})
    checked = obj(summary.get("results"))
    decision = obj(summary.get("decision"))
    violated = {str(v.get("id")) for v in objs(decision.get("violated"))}
    constraints = []
    for constraint in objs(summary.get("constraints")):
        cid = str(constraint.get("id"))
        result = constraint_result(checked.get(cid))
        checker = run_dir / "checkers" / f"{cid}.py"
        code = result.code if isinstance(result, CheckerResult | JudgeResult) else None
        constraints.append(
            {
                **constraint,
                "violated": cid in violated or constraint.get("value") is False,
                "code": code or (roots.read_text(checker) if checker.is_file() else None),
                "reasoning": result.reasoning if isinstance(result, JudgeResult) else None,
                "reflections": result.reflections if isinstance(result, CheckerResult) else None,
                "failures": [
                    f"[{f.error_kind}] {f.message}" + (f" (line {f.line})" if isinstance(f.line, int) else "")
                    for f in (result.failures if isinstance(result, CheckerResult | JudgeResult) else [])
                ],
                "spans": result.spans if isinstance(result, CheckerResult) else [],
            }
        )
    verdicts = {h.get("round"): h.get("verdict") for h in objs(summary.get("history"))}
    rounds = []
    outputs = run_dir / "outputs"
    if outputs.is_dir():
        for path in sorted(outputs.glob("round-*.txt"), key=lambda p: int(re.sub(r"\D", "", p.stem) or 0)):
            number = int(re.sub(r"\D", "", path.stem) or 0)
            rounds.append({"round": number, "verdict": verdicts.get(number), "text": roots.read_text(path, "")})
    output = roots.read_text(run_dir / "output.txt")
    return {
        "config": roots.read_json(run_dir / "config.json", {}),
        "summary": summary,
        "instruction": roots.read_text(run_dir / "instruction.txt", ""),
        "output": output,
        "output_segments": marked_segments(output or "", constraints),
        "constraints": constraints,
        "decision": decision,
        "explanation": roots.read_text(run_dir / "explanation.txt") or summary.get("explanation", ""),
        "rounds": rounds,
        "timeline": timeline(trace_events(run_dir)),
    }


MAX_MARKED_SPANS = 200  # marks drawn in one output; more would only hide the text


def marked_segments(output: str, constraints: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The output cut into plain and marked pieces: each occurrence of a span that a violated
    constraint's checker named is marked with that constraint's id (first mark wins on overlap)."""
    marks: list[tuple[int, int, str]] = []
    for constraint in constraints:
        if not constraint.get("violated"):
            continue
        for span in constraint.get("spans") or []:
            start = output.find(span) if span else -1
            while start >= 0 and len(marks) < MAX_MARKED_SPANS:
                marks.append((start, start + len(span), str(constraint.get("id"))))
                start = output.find(span, start + len(span))
    segments, position = [], 0
    for start, end, cid in sorted(marks):
        if start < position:
            continue
        if start > position:
            segments.append({"text": output[position:start], "mark": None})
        segments.append({"text": output[start:end], "mark": cid})
        position = end
    if position < len(output):
        segments.append({"text": output[position:], "mark": None})
    return segments


CONSTRAINT_RESULT: TypeAdapter[ConstraintResult] = TypeAdapter(ConstraintResult)


def constraint_result(value: Any) -> ConstraintResult | None:
    """One constraint's result as the verifier's record, or None when the entry is not one (untrusted files)."""
    try:
        return CONSTRAINT_RESULT.validate_python(value)
    except ValidationError:
        return None


# ---------------------------------------------------------------------------- error analysis
def error_analysis(path: Path) -> dict[str, Any]:
    """The ``trace`` taxonomy over a sweep (or any folder of runs), each count with its attempts."""
    reports, unreadable = [], []
    for run_dir in find_run_dirs([path]):
        try:
            reports.append(attempt_report(run_dir))
        except (ValueError, TypeError, KeyError, AttributeError, OSError):  # a damaged config.json or trace
            unreadable.append(run_dir)
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {
        "syntax error kinds": defaultdict(list),
        "repair rounds until accepted": defaultdict(list),
        "[[OK]] answered on a broken formula": defaultdict(list),
        "autofixes": defaultdict(list),
        "outcome": defaultdict(list),
    }
    for item in reports:
        run_dir = Path(item["run_dir"])
        ref = {
            "run_dir": run_dir,
            "label": f"{run_dir.name}: {item['task']} · {item['format']} · {item['policy']} · {item['model']}",
        }
        for kind in sorted({str(e.get("kind", "?")) for e in item["syntax_errors"]}):
            groups["syntax error kinds"][kind].append(ref)
        if item["syntax_errors"] and item["status"] == "accepted":
            groups["repair rounds until accepted"][str(len(item["rounds"]))].append(ref)
        if any(r.get("verdict") == "ok" and r.get("error") for r in item["rounds"]):
            groups["[[OK]] answered on a broken formula"][str(item["format"])].append(ref)
        for fix in sorted(set(item["autofixes"])):
            groups["autofixes"][fix].append(ref)
        groups["outcome"][str(item["status"])].append(ref)
    return {
        "attempts": len(reports),
        "unreadable": unreadable,
        "groups": {name: sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0])) for name, found in groups.items()},
    }
