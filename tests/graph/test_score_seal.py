"""Resume trusts only what it wrote (issue 50): a received sweep whose accepted formula was rewritten to a wrong one
keeps no recorded F1 — resuming it scores the formula on disk again; untouched attempts are reused as they are;
a sweep sealed by someone else is scored again whole, on resume or with ``report --rescore``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from bruteforce import projected_models
from typer.testing import CliRunner
from view_dirs import GRID, make_sweep

from autonesy.graph.cli import app
from autonesy.graph.results import read_results
from autonesy.graph.sweep.run import run_sweep
from autonesy.tasks.registry import get_task


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("sealed") / "sweep")


@pytest.fixture
def received(finished_sweep, tmp_path) -> Path:
    copy = tmp_path / "sweep"
    shutil.copytree(finished_sweep, copy, symlinks=True)
    return copy


def summaries(sweep: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted(sweep.glob("attempts/*/summary.json"))}


def perfect_sushi_attempt(sweep: Path) -> str:
    for attempt, summary in summaries(sweep).items():
        if summary["task"] == "sushi" and summary["status"] == "accepted" and summary["metrics"]["f1"] == 1.0:
            return attempt
    raise AssertionError("the scripted sweep has a perfect sushi attempt")


def forge_all_false(sweep: Path, attempt: str) -> None:
    """Rewrite the accepted formula to one whose only model sets every sushi variable false."""
    units = "".join(f"-{i} 0\n" for i in range(1, 17))
    (sweep / "attempts" / attempt / "formula.cnf").write_text(f"c task_vars 16\np cnf 16 16\n{units}")


def test_a_rewritten_formula_is_scored_again_on_resume_never_reused(received):
    truth_models = projected_models(get_task("sushi").ground_truth)
    assert (0,) * 16 not in truth_models  # a ranking puts every item somewhere: the forged model is no ranking
    attempt = perfect_sushi_attempt(received)
    before = summaries(received)
    forge_all_false(received, attempt)
    rows = {row["attempt_id"]: row for row in run_sweep(GRID, received, progress=False).rows}
    forged = rows[attempt]
    # TP = 0, FP = 1 (the all-false assignment), FN = every ranking: precision and recall 0
    assert (forged["tp"], forged["fp"], forged["fn"]) == (0, 1, len(truth_models))
    assert forged["f1"] == 0.0 and forged["relation"] == "incomparable"
    after = summaries(received)
    assert {a for a in before if before[a] != after[a]} == {attempt}  # the others were reused as written
    assert {row["attempt_id"]: row["f1"] for row in read_results(received / "results.jsonl")}[attempt] == 0.0


def test_a_sweep_sealed_by_someone_else_is_scored_again_whole(received):
    """Another user's seals (or none) vouch for nothing here: every accepted score is made again (and, the sweep
    being honest, comes out the same)."""
    before = summaries(received)
    for attempt, summary in before.items():
        (received / "attempts" / attempt / "summary.json").write_text(json.dumps({**summary, "score_seal": "0" * 64}))
    result = CliRunner().invoke(app, ["report", str(received), "--rescore", "--no-plots"])
    assert result.exit_code == 0, result.output
    accepted = [a for a, s in before.items() if s["status"] == "accepted"]
    assert f"rescored {len(accepted)} attempts" in " ".join(result.output.split())
    after = summaries(received)
    for attempt in accepted:
        made_again, recorded = (dict(s[attempt]["metrics"]) for s in (after, before))
        made_again.pop("count_method"), recorded.pop("count_method")  # the run had its circuit's count at hand
        assert made_again == recorded
        assert after[attempt]["score_seal"] != "0" * 64
    forge_all_false(received, perfect_sushi_attempt(received))
    result = CliRunner().invoke(app, ["report", str(received), "--rescore", "--no-plots"])
    assert "rescored 1 attempts" in " ".join(result.output.split())


def test_a_run_read_back_from_a_forged_checkpoint_is_scored_again(tmp_path):
    """A received run whose checkpoint keeps F1 = 1.0 beside a rewritten formula, its summary removed: running it again
    reads the whole attempt back from the checkpoint, and its score is made again, not believed."""
    import sqlite3

    from autonesy.graph.checkpoint_store import data_checkpointer
    from autonesy.tools.cnf import CNF, to_dimacs

    out = tmp_path / "run"
    args = [
        "run",
        "--task",
        "fashion",
        "--policy",
        "expert",
        "--format",
        "dimacs",
        "--train",
        "none",
        "--out",
        str(out),
    ]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert json.loads((out / "summary.json").read_text())["metrics"]["f1"] == 1.0
    all_false = to_dimacs(CNF(10, tuple((-i,) for i in range(1, 11))))
    connection = sqlite3.connect(out / "checkpoints.sqlite", check_same_thread=False)
    saver = data_checkpointer(connection)
    for saved in list(saver.list(None)):
        if saved.checkpoint["channel_values"].get("dimacs"):
            saved.checkpoint["channel_values"]["dimacs"] = all_false
            saver.put(saved.config, saved.checkpoint, saved.metadata, {})
    connection.commit()
    connection.close()
    (out / "summary.json").unlink()
    assert CliRunner().invoke(app, args).exit_code == 0
    truth = projected_models(get_task("fashion").ground_truth)
    expected_tp = int((0,) * 10 in truth)  # the forged formula's one model: every variable false
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    assert (metrics["tp"], metrics["fp"], metrics["fn"]) == (expected_tp, 1 - expected_tp, len(truth) - expected_tp)
    assert metrics["f1"] < 1.0 and (out / "formula.cnf").read_text() == all_false
