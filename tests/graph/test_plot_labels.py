"""Labels from a received results file (model and format names) reach the plots as plain text: Plotly's
pseudo-HTML is escaped in the viewer's figures, matplotlib's mathtext and control characters in the
report's PNGs (issue 27)."""

from __future__ import annotations

import json
import unicodedata
import warnings
from pathlib import Path

from autonesy.graph.report import build_report
from autonesy.graph.results import RESULTS_JSONL, ROW_FIELDS
from autonesy.graph.view import pages

LINK = '<a href="javascript:alert(1)">x</a>'
BOLD = "<b>cpmpy</b><br>&amp;"
MATH = "$\\frac{x$ and $^{9}$"


def results(folder: Path, models: list[str], formats: list[str]) -> Path:
    """A finished sweep's results.jsonl: one accepted attempt per model and format."""
    rows = []
    for model in models:
        for fmt in formats:
            row = dict.fromkeys(ROW_FIELDS)
            row.update(
                attempt_id=f"{model}-{fmt}",
                task="fashion",
                task_spec="fashion",
                llm=model,
                model=model,
                format=fmt,
                prompt="zs",
                detail="detailed",
                policy="zs",
                repeat=0,
                max_repairs=5,
                status="accepted",
                reason="",
                f1=1.0,
                relation="equal",
                repair_rounds=0,
                semantic_rounds=0,
                syntax_error=False,
                llm_error=False,
                autofixes=[],
                n_autofixes=0,
                llm_calls=1,
                prompt_tokens=0,
                completion_tokens=0,
                llm_seconds=0.0,
                wall_seconds=0.0,
            )
            rows.append(row)
    folder.mkdir()
    (folder / RESULTS_JSONL).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def labels(figure: dict) -> list[str]:
    """Every text Plotly draws from a figure's traces: legend names and category tick labels (hover text
    repeats them)."""
    found = []
    for trace in figure["data"]:
        found.append(trace["name"])
        found += [v for axis in ("x", "y") for v in trace.get(axis, []) if isinstance(v, str)]
    return found


def test_plotly_draws_model_and_format_names_as_text(tmp_path: Path):
    folder = results(tmp_path / "sweep", [LINK, "plain"], [BOLD, "dimacs"])
    figures = pages.sweep_summary(pages.sweep_rows(folder), compare_published=False)["plots"]
    drawn = [label for figure in figures for label in labels(figure)]
    assert not any("<" in label or ">" in label for label in drawn)
    assert '&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;' in drawn  # the name itself, shown as written
    assert "&lt;b&gt;cpmpy&lt;/b&gt;&lt;br&gt;&amp;amp;" in drawn
    assert "plain" in drawn and "dimacs" in drawn  # names without markup are unchanged
    relations = next(f for f in figures if f["id"] == "relations")
    assert relations["data"][0]["y"] == ['&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;', "plain"]


def test_the_report_plots_a_model_name_holding_mathtext(tmp_path: Path):
    folder = results(tmp_path / "sweep", [MATH, "plain"], ["dimacs"])
    report = build_report([folder], tmp_path / "report", plots=True)
    assert sorted(p.name for p in report.plots) == [
        "f1_by_format_model.png",
        "relations.png",
        "repair_rounds.png",
        "syntax_error_rate.png",
    ]


def test_the_report_plots_never_warn_a_control_character_onto_the_terminal(tmp_path: Path):
    """matplotlib warns of each glyph its font lacks, the character itself in the message (printed on stderr)."""
    folder = results(tmp_path / "sweep", ["\x1b]0;title\x07model", "plain"], ["\x1b[2Jdimacs"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = build_report([folder], tmp_path / "report", plots=True)
    assert len(report.plots) == 4
    assert not [str(w.message) for w in caught if any(unicodedata.category(c) == "Cc" for c in str(w.message))]
