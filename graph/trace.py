"""The per-attempt JSONL trace, read: by ``autonesy-agent trace``, the viewer and the report
(``graph/tracer.py`` writes it; the ``replay:`` LLM backend reads its LLM calls).

Events: ``node`` (each node visit with its duration), ``llm_call`` (request messages, prompt hash,
response, or the LLM error), ``repair_round`` (round, the error it answered, verdict, what
changed), ``autofix`` (fix names), ``resumed``, ``outcome``. Secrets found in the environment
(variables named like keys, tokens, secrets, passwords) are redacted from every line.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: no {TRACE_FILE} (not a run directory?)")
    events = []  # a run directory may come from someone else: any line that is not an event is skipped
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # a line cut by a crash, or crafted (nested a million deep)
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            events.append(event)
    return events


def _read_config(run_dir: Path) -> dict[str, Any]:
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
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


def attempt_report(run_dir: Path) -> dict[str, Any]:
    """One attempt's repair loop, readably: rounds with their errors and verdicts, autofixes, outcome."""
    events = read_trace(run_dir)
    config = _read_config(run_dir)
    rounds = [
        {
            **e,
            "round": e.get("round") if type(e.get("round")) is int else None,
            "error": e.get("error") if isinstance(e.get("error"), str) else "",
            "error_kind": _label(e.get("error_kind")),
            "verdict": _label(e.get("verdict")),
            "changed": _label(e.get("changed")),
        }
        for e in events
        if e["event"] == "repair_round"
    ]
    outcome: dict[str, Any] = next((e for e in reversed(events) if e["event"] == "outcome"), {})
    return {
        "run_dir": str(run_dir),
        "task": _label(config.get("task")),
        "format": _label(config.get("format")),
        "model": _label(config.get("llm")),
        "policy": _label(config.get("policy")),
        "syntax_errors": [e for e in events if e["event"] == "syntax_error"],
        "rounds": rounds,
        "autofixes": [
            _label(fix)
            for e in events
            if e["event"] == "autofix" and isinstance(e.get("fixes"), list)
            for fix in e["fixes"]
        ],
        "llm_calls": sum(1 for e in events if e["event"] == LLM_CALL_EVENT),
        "status": _label(outcome.get("status", "unfinished")),
        "reason": _label(outcome.get("reason", "")),
    }


def error_taxonomy(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Error kinds counted per (format, model): every syntax error met, before or after repair."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for report in reports:
        for error in report["syntax_errors"]:
            counts[(report["format"] or "?", report["model"] or "?", _label(error.get("kind", "?")) or "?")] += 1
    return [{"format": f, "model": m, "error_kind": k, "count": c} for (f, m, k), c in sorted(counts.items())]
