"""The per-attempt JSONL trace, read: by ``autonesy-agent trace``, the viewer and the report
(``graph/tracer.py`` writes it; the ``replay:`` LLM backend reads its LLM calls).

Events: ``node`` (each node visit with its duration), ``llm_call`` (request messages, prompt hash,
response, or the LLM error), ``repair_round`` (round, the error it answered, verdict, what
changed), ``autofix`` (fix names), ``resumed``, ``outcome``. Secrets found in the environment
(variables named like keys, tokens, secrets, passwords) are redacted from every line.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from autonesy.graph.rundir import CONFIG_FILE, read_json
from autonesy.graph.summary import RunSummary, SummaryError
from autonesy.tools import safe_files
from autonesy.tools.formats import FormatError
from autonesy.tools.formats.extract import extract
from autonesy.tools.trace_events import LLM_CALL_EVENT

TRACE_FILE = "trace.jsonl"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def environment_secrets() -> list[str]:
    """Values of secret-looking environment variables (keys, tokens, passwords), so every trace line can be scrubbed of
    them before it is written."""
    return [value for name, value in os.environ.items() if _SECRET_NAME.search(name) and len(value) >= 8]


def read_trace(run_dir: str | Path) -> list[dict[str, Any]]:
    """The events of a run's trace; lines that are not events (a crafted or cut file) are skipped, a missing trace is
    ``FileNotFoundError``."""
    path = Path(run_dir) / TRACE_FILE
    if not safe_files.is_file(path):
        raise FileNotFoundError(f"{run_dir}: no {TRACE_FILE} (not a run directory?)")
    events = []  # a run directory may come from someone else: any line that is not an event is skipped
    for line in safe_files.read_text(path).splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # a line cut by a crash, or crafted (nested a million deep)
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            events.append(event)
    return events


def first_answer_syntax_error(run_dir: Path, root: Path | None = None) -> bool | None:
    """Whether the attempt's first answer failed the syntax check (before any repair or autofix round
    could help): a ``syntax_error`` event before the first ``check_syntax`` node finished. None when the
    trace never got there (no trace, or the first LLM call failed). The trace is read below ``root``
    (default: the run directory), no link followed."""
    try:
        text = safe_files.read_text(Path(run_dir) / TRACE_FILE, root=root or run_dir)
    except (OSError, UnicodeError):  # a received row's run_dir may hold what no path can (a lone surrogate)
        return None
    for line in text.splitlines():
        if line.startswith('{"event": "syntax_error"'):
            return True
        if line.startswith('{"event": "node"') and '"node": "check_syntax"' in line:
            return False
    return None


def _read_config(run_dir: Path) -> dict[str, Any]:
    config = read_json(Path(run_dir) / CONFIG_FILE)
    return config if isinstance(config, dict) else {}


def _label(value: Any) -> str | None:
    return value if isinstance(value, str) or value is None else str(value)[:200]


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories named directly or found below the given paths."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / TRACE_FILE).is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(p.parent for p in path.rglob(TRACE_FILE)))
        else:
            raise FileNotFoundError(f"{path}: not a run directory")
    return found


def change_summary(before: str, after: str) -> str:
    """'+a −b lines' between two formula texts."""
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
    return f"+{added} −{removed} lines"


def shorten(text: Any, limit: int = 120) -> str:
    """``text`` on one line, cut at a word boundary (with '…') when longer than ``limit``."""
    flat = " ".join(str("" if text is None else text).split())
    if len(flat) <= limit:
        return flat
    head = flat[:limit]
    return (head.rsplit(" ", 1)[0] if " " in head else head) + " …"


def error_text(kind: str | None, message: str) -> str:
    """An error message without the ``[kind]`` its checker put in front (shown once, as the kind)."""
    prefix = f"[{kind}]"
    return message[len(prefix) :].lstrip() if kind and message.startswith(prefix) else message


def formula_text(answer: str) -> str:
    """The formula an answer holds (its ``<cnf>`` block), '' when it holds none: what rounds compare, not the chain
    of thought around it."""
    try:
        return extract(answer).source
    except FormatError:
        return ""


def _answer_text(event: dict[str, Any]) -> str:
    response = event.get("response")
    text = event.get("text") or (response.get("text") if isinstance(response, dict) else "")
    return text if isinstance(text, str) else ""


def semantic_rounds(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle-feedback rounds: per round the counterexamples the model was shown, and how its formula changed
    (``unchanged formula`` when it answered the same one again), in trace order. Read from the round's own record
    where it has one (counterexamples as a list, the formulas before and after, ``repeated``), else from the LLM
    call of the round."""
    rounds: dict[int, dict[str, Any]] = {}
    formula = ""
    for index, event in enumerate(events):
        kind = event["event"]
        number = event.get("semantic_round") if kind == LLM_CALL_EVENT else event.get("round")
        if kind == LLM_CALL_EVENT and type(number) is not int:
            found = formula_text(_answer_text(event))
            formula = found or formula  # an [[OK]] or an error keeps the formula as it was
            continue
        if kind not in (LLM_CALL_EVENT, "semantic_round") or type(number) is not int:
            continue
        item = rounds.setdefault(number, {"round": number, "index": index, "counterexamples": None, "changed": ""})
        if kind == "semantic_round":
            shown = event.get("counterexamples")
            item["counterexamples"] = len(shown) if isinstance(shown, list) else shown if type(shown) is int else None
            if isinstance(shown, list):
                item["examples"] = [example for example in shown if isinstance(example, dict)]
            before, after = event.get("formula_before"), event.get("formula_after")
            if isinstance(before, str) and isinstance(after, str):  # recorded by the round itself: it decides
                item["changed"] = "unchanged formula" if before == after else change_summary(before, after)
            if event.get("repeated") is True:
                item["changed"] += " · a formula already tested: the rounds stop"
            continue
        if event.get("error"):
            item["changed"] = f"LLM error: {shorten(event['error'], 80)}"
            continue
        after = formula_text(_answer_text(event))
        item["changed"] = (
            "no formula in the answer"
            if not after
            else "unchanged formula"
            if after == formula
            else change_summary(formula, after)
        )
        formula = after or formula
    return sorted(rounds.values(), key=lambda item: item["index"])


def node_visits(events: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per graph node: how often it ran and its summed seconds."""
    visits: dict[str, dict[str, float]] = {}
    for event in events:
        if event["event"] == "node" and isinstance(event.get("node"), str):
            entry = visits.setdefault(event["node"], {"visits": 0, "seconds": 0.0})
            entry["visits"] += 1
            seconds = event.get("seconds")
            entry["seconds"] += float(seconds) if isinstance(seconds, (int, float)) else 0.0
    return visits


CHECK_NODES = ("check_syntax",)  # the node whose visit without a syntax_error event means the answer parsed


def next_check(events: Sequence[Mapping[str, Any]], index: int) -> tuple[str, bool]:
    """What the check after the repair round at ``index`` found, as a short text, and whether it passed: the model's
    verdict ([[FIXED]]) is its claim, this is the checker's answer ("parses", "new error: lint", "same error:
    syntax", "rejected (token_budget)", "not checked": the trace ends first)."""
    asked = events[index].get("error_kind")
    for event in events[index + 1 :]:
        kind = event.get("event")
        if kind == "syntax_error":
            found = _label(event.get("kind")) or "?"
            return (f"same error: {found}" if found == asked else f"new error: {found}"), False
        if kind == "node" and event.get("node") in CHECK_NODES:
            return "parses", True
        if kind == "outcome":
            failure = _label(event.get("failure"))
            status = _label(event.get("status")) or "?"
            return status + (f" ({failure})" if failure else ""), status == "accepted"
    return "not checked", False


def node_outcome(events: Sequence[Mapping[str, Any]], index: int) -> str:
    """What the node visit at ``index`` did, from the events since the previous node (its ``status`` field is the
    attempt's, "running" until the end): the syntax error it found, the repair verdict, the autofixes, or done."""
    event = events[index]
    if event.get("status") not in (None, "running"):
        return f"ended {_label(event.get('status'))}"
    found = []
    for earlier in reversed(events[:index]):
        kind = earlier.get("event")
        if kind == "node":
            break
        if kind == "syntax_error":
            found.append(f"syntax error: {_label(earlier.get('kind'))}")
        elif kind == "repair_round":
            found.append(f"answered {_label(earlier.get('verdict'))}")
        elif kind == "autofix":
            found.append("autofixed")
        elif kind == "semantic_round":
            found.append("counterexamples sent")
    if not found and event.get("node") in CHECK_NODES:
        return "parses"
    return " · ".join(reversed(found)) or "done"


def attempt_report(run_dir: Path) -> dict[str, Any]:
    """One attempt's repair loop, readably: syntax rounds with their errors and verdicts, oracle-feedback rounds with
    their counterexamples, autofixes, node visits, the outcome with its relation and F1."""
    events = read_trace(run_dir)
    config = _read_config(run_dir)
    rounds = [
        {
            **e,
            "round": e.get("round") if type(e.get("round")) is int else None,
            "error": error_text(
                _label(e.get("error_kind")), str(e["error"]) if isinstance(e.get("error"), str) else ""
            ),
            "error_kind": _label(e.get("error_kind")),
            "verdict": _label(e.get("verdict")),
            "changed": _label(e.get("changed")),
            "next_check": next_check(events, index)[0],
            "index": index,
        }
        for index, e in enumerate(events)
        if e["event"] == "repair_round"
    ]
    outcome: dict[str, Any] = next((e for e in reversed(events) if e["event"] == "outcome"), {})
    try:
        summary = RunSummary.read(run_dir)
    except SummaryError:
        summary = None
    metrics = summary.metrics if summary is not None else None
    return {
        "run_dir": str(run_dir),
        "task": _label(config.get("task")),
        "format": _label(config.get("format")),
        "model": _label(config.get("llm")),
        "policy": _label(config.get("policy")),
        "syntax_errors": [e for e in events if e["event"] == "syntax_error"],
        "rounds": rounds,
        "semantic_rounds": semantic_rounds(events),
        "autofixes": [
            _label(fix)
            for e in events
            if e["event"] == "autofix" and isinstance(e.get("fixes"), list)
            for fix in e["fixes"]
        ],
        "nodes": node_visits(events),
        "llm_calls": sum(1 for e in events if e["event"] == LLM_CALL_EVENT),
        "status": _label(outcome.get("status", "unfinished")),
        "reason": _label(outcome.get("reason", "")),
        "relation": metrics.relation if metrics else None,
        "f1": metrics.f1 if metrics else None,
    }


def error_taxonomy(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Error kinds counted per (format, model): every syntax error met, before or after repair."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for report in reports:
        for error in report["syntax_errors"]:
            counts[(report["format"] or "?", report["model"] or "?", _label(error.get("kind", "?")) or "?")] += 1
    return [{"format": f, "model": m, "error_kind": k, "count": c} for (f, m, k), c in sorted(counts.items())]
