"""Run, sweep and report directories received from elsewhere, with links, FIFOs and crafted SQLite files
planted in them: each attack ends in its precise outcome (the file outside untouched and one error line,
the private file not shown, the viewer answering, one line naming the file). Resume trusts only what it
wrote: a formula rewritten under its recorded score, a sweep sealed by someone else or a forged checkpoint
is scored again, never reused. The whole file runs again
as an unprivileged user (the last test)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from bruteforce import projected_models
from markupsafe import escape
from starlette.testclient import TestClient
from typer.testing import CliRunner
from unprivileged import NESTED_RUN, run_file_as_user
from view_dirs import GRID, make_sweep

from autonesy.graph.checkpoint_store import data_checkpointer
from autonesy.graph.cli import app
from autonesy.graph.results import read_results
from autonesy.graph.rundir import RunDir
from autonesy.graph.sweep.run import run_sweep
from autonesy.graph.tracer import Tracer
from autonesy.graph.view.server import bind, create_app
from autonesy.tasks.registry import get_task
from autonesy.tools.safe_files import UnsafeFileError

runner = CliRunner()
KEEP = "ssh-ed25519 AAAA-the-users-own-key user@host\n"
PRIVATE = "PRIVATE-FILE-CONTENT-7f3a"


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory) -> Path:
    return make_sweep(tmp_path_factory.mktemp("received") / "sweep")


@pytest.fixture
def received(finished_sweep, tmp_path) -> Path:
    """A copy of a finished sweep, as a colleague would send it."""
    copy = tmp_path / "sweep"
    shutil.copytree(finished_sweep, copy, symlinks=True)
    return copy


@pytest.fixture
def private(tmp_path) -> Path:
    """A file of the user's outside every received directory (an authorized_keys, a private note)."""
    path = tmp_path / "outside" / "authorized_keys"
    path.parent.mkdir()
    path.write_text(KEEP + PRIVATE + "\n")
    return path


def accepted_attempt(sweep: Path) -> Path:
    for summary in sorted(sweep.glob("attempts/*/summary.json")):
        if json.loads(summary.read_text())["status"] == "accepted":
            return summary.parent
    raise AssertionError("the scripted sweep has accepted attempts")


def error_lines(result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("error:")]


def tree(folder: Path) -> dict:
    return {p.relative_to(folder): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


# ------------------------------------------------------------------------ writes through links
@pytest.mark.parametrize("planted", ["report/by_llm.md", "report/relations.png", "report"])
def test_report_writes_no_file_through_a_link_in_the_received_directory(received, private, planted):
    if planted == "report":
        os.symlink(private.parent, received / "report")
    else:
        (received / "report").mkdir()
        os.symlink(private, received / planted)
    before = tree(private.parent)
    result = runner.invoke(app, ["report", str(received)])
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert f"{received / planted}" in line and "symbolic link" in line and len(result.output.splitlines()) == 1
    assert tree(private.parent) == before and private.read_text() == KEEP + PRIVATE + "\n"


def test_report_to_a_fresh_out_still_works(received, tmp_path):
    result = runner.invoke(app, ["report", str(received), "--out", str(tmp_path / "new" / "report")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new" / "report" / "by_llm.md").read_text().startswith("### Results per LLM")
    assert (tmp_path / "new" / "report" / "relations.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_resuming_a_received_sweep_ignores_a_planted_fixed_temporary_name(received, private):
    os.symlink(private, received / "sweep.json.tmp")
    os.symlink(private, received / "results.jsonl.tmp")
    result = run_sweep(GRID, received, progress=False)
    assert result.counts == {"accepted": 14, "rejected": 2}
    assert private.read_text() == KEEP + PRIVATE + "\n"
    assert json.loads((received / "sweep.json").read_text())["grids"]  # written as a file of its own


@pytest.mark.parametrize("planted", ["attempts", "sweep.json", "results.jsonl"])
def test_resuming_a_received_sweep_with_a_link_is_one_line_and_writes_nothing_outside(received, tmp_path, planted):
    elsewhere = tmp_path / "elsewhere"
    if planted == "attempts":
        shutil.move(received / "attempts", elsewhere)
        os.symlink(elsewhere, received / "attempts")
    else:
        elsewhere.mkdir()
        (elsewhere / "target").write_text(KEEP)
        (received / planted).unlink()
        os.symlink(elsewhere / "target", received / planted)
    before = tree(elsewhere)
    with pytest.raises(UnsafeFileError) as refused:
        run_sweep(GRID, received, progress=False)
    assert "\n" not in str(refused.value) and f"{received / planted}: a symbolic link" in str(refused.value)
    assert tree(elsewhere) == before


def test_links_planted_in_a_run_directory_after_its_check_are_not_written_through(tmp_path, private):
    rundir = RunDir.open(tmp_path / "run")  # the check at the start passes: nothing is planted yet
    tracer = Tracer(rundir.path)
    tracer.event("resumed", next=[])
    os.symlink(private, rundir.path / "summary.json.tmp")  # a concurrent writer plants links now
    rundir.write_json("summary.json", {"status": "accepted"})
    assert json.loads((rundir.path / "summary.json").read_text()) == {"status": "accepted"}
    os.symlink(private, rundir.path / "metrics.json")
    with pytest.raises(UnsafeFileError, match="metrics.json: a symbolic link; refused"):
        rundir.write_json("metrics.json", {})
    (rundir.path / "trace.jsonl").unlink()
    os.symlink(private, rundir.path / "trace.jsonl")
    with pytest.raises(UnsafeFileError, match="trace.jsonl: a symbolic link; refused"):
        tracer.event("outcome", status="accepted")
    assert private.read_text() == KEEP + PRIVATE + "\n"


# ------------------------------------------------------------------------------- disclosure
def test_view_and_report_html_do_not_show_a_file_a_link_leads_to(received, private):
    attempt = accepted_attempt(received)
    rel = f"attempts/{attempt.name}"
    client = TestClient(create_app([received]), base_url="http://127.0.0.1")
    formula_line = (attempt / "formula.txt").read_text().splitlines()[0]
    assert str(escape(formula_line)) in client.get(f"/r/0/{rel}").text  # shown while it is a file
    for name in ("formula.txt", "answer.txt"):
        (attempt / name).unlink()
        os.symlink(private, attempt / name)
    page = client.get(f"/r/0/{rel}")
    assert page.status_code == 200 and PRIVATE not in page.text and "ssh-ed25519" not in page.text
    result = runner.invoke(app, ["report", str(received), "--html", "--no-plots"])
    assert result.exit_code == 0, result.output
    pages = list((received / "report" / "html").rglob("*.html"))
    assert len(pages) > 16 and not [p for p in pages if PRIVATE in p.read_text()]


def test_the_viewer_keeps_answering_with_fifos_in_place_of_files(received):
    attempt = accepted_attempt(received)
    for name in ("formula.txt", "answer.txt", "metrics.json", "summary.json", "formula.cnf"):
        (attempt / name).unlink()
        os.mkfifo(attempt / name)
    import uvicorn

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app([received]), log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/r/0/attempts/{attempt.name}"

    def fetch(_: int) -> int:
        with urllib.request.urlopen(url, timeout=60) as response:  # a hang would end in a timeout error
            return response.status

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(fetch, range(48)))  # more than the 40 that stopped the viewer
        with urllib.request.urlopen(url.rsplit("/r/", 1)[0] + "/", timeout=60) as home:
            assert home.status == 200
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    assert statuses == [200] * 48


# ----------------------------------------------------------------------------- crafted SQLite
def _sqlite_with(path: Path, schema: str) -> None:
    connection = sqlite3.connect(path)
    connection.executescript(schema)
    connection.commit()
    connection.close()


def craft(path: Path, kind: str, elsewhere: Path) -> None:
    if kind == "random bytes":
        path.write_bytes(bytes(range(256)) * 20)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "link":
        elsewhere.write_text(KEEP)
        os.symlink(elsewhere, path)
    elif kind == "foreign table":
        _sqlite_with(path, "CREATE TABLE accounts (name TEXT, balance REAL);")
    else:  # the right table name with other columns
        _sqlite_with(path, f"CREATE TABLE {kind.split()[0]} (x INTEGER);")


KINDS = ["random bytes", "fifo", "directory", "link", "foreign table"]


@pytest.mark.parametrize("kind", [*KINDS, "checkpoints columns"])
def test_a_crafted_checkpoints_file_is_one_line_naming_it(tmp_path, kind):
    out = tmp_path / "run"
    out.mkdir()
    craft(out / "checkpoints.sqlite", kind, tmp_path / "elsewhere")
    result = runner.invoke(app, ["run", "--task", "fashion", "--policy", "expert", "--out", str(out)])
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)  # a clean exit
    assert f"{out}/checkpoints.sqlite" in line or f"{out}: checkpoints.sqlite" in line, line
    assert "fresh --out" in line
    if kind == "link":
        assert (tmp_path / "elsewhere").read_text() == KEEP


def test_a_checkpoint_with_a_crafted_state_is_one_line_naming_it(tmp_path):
    """A well-formed checkpoints file whose saved state does not fit the attempt's state model (a string
    where a count goes, a dict where the answer goes, an escape sequence inside): resuming from it is one
    line, before any node runs on it."""
    out = tmp_path / "run"
    args = ["run", "--task", "fashion", "--policy", "expert", "--format", "dimacs", "--train", "none"]
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 0
    connection = sqlite3.connect(out / "checkpoints.sqlite", check_same_thread=False)
    saver = data_checkpointer(connection)
    for saved in list(saver.list(None)):
        values = saved.checkpoint["channel_values"]
        values["repair_round"] = "many"
        values["answer"] = {"evil": "\x1b]52;c;aGk=\x07"}
        saver.put(saved.config, saved.checkpoint, saved.metadata, {})
    connection.commit()
    connection.close()
    (out / "summary.json").unlink()
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 1, result.output
    [line] = error_lines(result)
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert "checkpoints.sqlite" in line and "fresh --out" in line and "\x1b" not in result.output, line
    assert not (out / "summary.json").exists()


@pytest.mark.parametrize("kind", [*KINDS, "responses columns"])
def test_a_crafted_response_cache_in_a_verification_is_one_line_naming_it(tmp_path, kind):
    out = tmp_path / "verification"
    out.mkdir()
    craft(out / "llm_cache.sqlite", kind, tmp_path / "elsewhere")
    (tmp_path / "instruction.txt").write_text("Answer in one word.")
    (tmp_path / "output.txt").write_text("Yes")
    spec = "http://127.0.0.1:9/v1@unreachable"  # never asked: the cache is refused first
    files = ["--instruction", str(tmp_path / "instruction.txt"), "--output", str(tmp_path / "output.txt")]
    result = runner.invoke(app, ["verify", *files, "--llm", spec, "--out", str(out)])
    assert result.exit_code == 2, result.output  # verify's exit status for an error
    [line] = error_lines(result)
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)  # a clean exit
    assert "llm_cache.sqlite" in line and "fresh --out" in line, line


# ------------------------------------------------------- resume trusts only what it wrote (score seals)
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
    result = runner.invoke(app, ["report", str(received), "--rescore", "--no-plots"])
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
    result = runner.invoke(app, ["report", str(received), "--rescore", "--no-plots"])
    assert "rescored 1 attempts" in " ".join(result.output.split())


def test_a_run_read_back_from_a_forged_checkpoint_is_scored_again(tmp_path):
    """A received run whose checkpoint keeps F1 = 1.0 beside a rewritten formula, its summary removed: running it again
    reads the whole attempt back from the checkpoint, and its score is made again, not believed."""
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
    assert runner.invoke(app, args).exit_code == 0
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
    assert runner.invoke(app, args).exit_code == 0
    truth = projected_models(get_task("fashion").ground_truth)
    expected_tp = int((0,) * 10 in truth)  # the forged formula's one model: every variable false
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    assert (metrics["tp"], metrics["fp"], metrics["fn"]) == (expected_tp, 1 - expected_tp, len(truth) - expected_tp)
    assert metrics["f1"] < 1.0 and (out / "formula.cnf").read_text() == all_false


# ------------------------------------------------------------------------- as a plain user
@pytest.mark.skipif(bool(os.environ.get(NESTED_RUN)), reason="the nested run itself")
def test_the_attacks_hold_for_an_unprivileged_user(tmp_path):
    done = run_file_as_user(__file__, tmp_path, "unprivileged_user")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
