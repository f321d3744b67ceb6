"""What the command line prints from elsewhere (a program's error, a received run or sweep directory,
a task file, an LLM's constraint summary) reaches the terminal as text: escape sequences, control
characters and bidi overrides shown escaped, rich markup printed as written (issue 27)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.results import ROW_FIELDS
from autonesy.graph.summary import RunSummary
from autonesy.graph.verify.summary import VerificationSummary

runner = CliRunner()
# a clipboard write, a link drawn over "click", a window title ended by C1 ST, a cursor move, a bidi
# override, a carriage return and rich markup that would draw a link
HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07 \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\ \x1b]0;title\x9c "
    "\x1b[2J \u202egnp \rover [link=https://evil.example]x[/link]"
)
MARKUP = "[link=https://evil.example]x[/link]"


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # rich folds at 80 columns otherwise, splitting what is asserted


def assert_shown_as_text(output: str, times: int = 1) -> None:
    bad = [c for c in output if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs") or c in "\u202e\u2066")]
    assert bad == []
    assert output.count("\\x1b]52;c;cHduZWQ=\\x07") >= times and output.count(MARKUP) >= times
    assert "\\x9c" in output and "\\u202egnp" in output and "\rover" not in output


def test_a_programs_error_text_is_one_escaped_error_line(tmp_path: Path):
    formula = tmp_path / "f.py"
    formula.write_text(f"raise ValueError({HOSTILE!r})\n")
    done = runner.invoke(app, ["score", str(formula), "--task", "warcraft", "--format", "pysat"])
    assert done.exit_code == 1
    assert_shown_as_text(done.output)
    assert len(done.output.splitlines()) == 1 and done.output.startswith("error: ")


def test_trace_of_a_received_run_directory(tmp_path: Path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    events = [
        {"event": "repair_round", "round": 1, "error": HOSTILE, "error_kind": HOSTILE, "verdict": HOSTILE},
        {"event": "syntax_error", "kind": HOSTILE},
        {"event": "autofix", "fixes": [HOSTILE]},
        {"event": "outcome", "status": HOSTILE, "reason": HOSTILE},
    ]
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (run_dir / "config.json").write_text(json.dumps({"task": HOSTILE, "format": HOSTILE, "llm": HOSTILE}))
    done = runner.invoke(app, ["trace", str(run_dir)])
    assert done.exit_code == 0, done.output
    # the header's five fields, the autofix, the round's kind and verdict, the table's three labels (the
    # round's error is shown by its first line, cut at the carriage return, so without the markup)
    assert_shown_as_text(done.output, times=11)


def test_the_run_summary(capsys):
    from autonesy.graph.cli.run import print_summary

    fields = {"task": HOSTILE, "llm": HOSTILE, "reason": HOSTILE, "autofixes": [HOSTILE], "run_dir": HOSTILE}
    print_summary(RunSummary.model_validate(fields))
    assert_shown_as_text(capsys.readouterr().out, times=5)


def test_the_verification_summary(capsys):
    from autonesy.graph.cli.verify import _print_verification

    constraint = {"id": HOSTILE, "kind": HOSTILE, "method": HOSTILE, "value": True, "summary": HOSTILE}
    summary = {
        "verdict": "unsat",
        "status": HOSTILE,
        "verifier": "nsvif",
        "llms": {"judge": HOSTILE},
        "constraints": [constraint],
        "formula": HOSTILE,
        "explanation": HOSTILE,
        "reason": "",
        "llm_calls": 1,
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "llm_seconds": 0.0,
        "cached_calls": 0,
        "checker_runs": 0,
        "checker_seconds": 0.0,
        "wall_seconds": 0.0,
        "run_dir": HOSTILE,
    }
    _print_verification(VerificationSummary.model_validate(summary))
    assert_shown_as_text(capsys.readouterr().out, times=9)


def test_a_task_files_texts(tmp_path: Path):
    task_file = tmp_path / "task.toml"
    task_file.write_text(
        'name = "rain"\n'
        f'[[variables]]\nname = "rain"\nmeaning = {json.dumps(HOSTILE)}\n'
        '[[variables]]\nname = "wet"\nmeaning = "the street is wet"\n'
        f"[descriptions]\ndetailed = {json.dumps(HOSTILE)}\nnot_detailed = {json.dumps(HOSTILE)}\n"
    )
    done = runner.invoke(app, ["task", "show", str(task_file)])
    assert done.exit_code == 0, done.output
    assert_shown_as_text(done.output, times=2)


def test_report_tables_of_a_received_sweep(tmp_path: Path):
    row = dict.fromkeys(ROW_FIELDS)
    row.update(
        attempt_id="a",
        task="fashion",
        task_spec="fashion",
        benchmark="catalogue",
        num_vars=10,
        llm=HOSTILE,
        model=HOSTILE,
        format="dimacs",
        prompt="zs",
        detail="detailed",
        policy="zs",
        repeat=0,
        max_repairs=5,
        status="accepted",
        syntax_error=False,
        llm_error=False,
        reason="",
        repair_rounds=0,
        semantic_rounds=0,
        autofixes=[],
        n_autofixes=0,
        llm_calls=1,
        prompt_tokens=1,
        completion_tokens=1,
        llm_seconds=1.0,
        wall_seconds=1.0,
        f1=1.0,
        relation="equal",
        run_dir="attempts/a",
    )
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "results.jsonl").write_text(json.dumps(row) + "\n")
    for fmt in ("md", "csv", "latex"):
        done = runner.invoke(app, ["report", str(sweep), "--no-plots", "--format", fmt, "--out", str(tmp_path / fmt)])
        assert done.exit_code == 0, done.output
        assert not any(unicodedata.category(c) == "Cc" and c != "\n" for c in done.output)
        assert "\\x1b]52;c;" in done.output


def test_library_warnings_and_log_lines_are_escaped_too(monkeypatch):
    import logging
    import warnings

    from autonesy.graph.cli.common import escape_library_output

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after the test
    monkeypatch.setattr(logging.lastResort, "formatter", logging.lastResort.formatter)
    done = runner.invoke(app, ["tasks", "--json"])  # any command installs them
    assert done.exit_code == 0
    assert warnings.formatwarning.__name__ == "_escaped_warning"
    shown = warnings.formatwarning(f"Glyph 27 ({HOSTILE}) missing", UserWarning, "font.py", 1, "")
    assert_shown_as_text(shown)
    record = logging.LogRecord("x", logging.WARNING, "f.py", 1, "retrying: %s", (HOSTILE,), None)
    assert_shown_as_text(logging.lastResort.format(record) + "\n")
    escape_library_output()  # twice is once
    assert_shown_as_text(warnings.formatwarning(HOSTILE, UserWarning, "f.py", 1, ""))
