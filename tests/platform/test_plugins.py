"""Installed plugins end to end: the example package (examples/plugin, installed in the test
environment) runs in a sweep under its namespaced names, and broken plugins (fake distributions on
PYTHONPATH) are one line each and never break a command that does not use them.

The sweep's LLM is the loopback server answering from a script that knows the right formulas: it
proves the plumbing (names in records, trace, report, viewer; every sampled call traced and counted)
and the vote's choice among the scripted samples, not the quality of any model."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from loopback_llm import LoopbackLLM
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.results import read_results
from autonesy.graph.trace import read_trace

runner = CliRunner()

# example/shifts' ground truth (examples/plugin/autonesy_example/shifts.cnf), read from its rules
SHIFTS = ["1 2", "-1 -2", "3 4", "-3 -4", "5 6", "-5 -6", "-1 -3", "-2 -4", "1 3", "1 5", "3 5"]
PAIRS = [f"-{i} -{j}" for i in range(1, 11) for j in range(i + 1, 11)]
ONE_OF_TEN = " ".join(str(i) for i in range(1, 11))


def block(clauses: list[str], num_vars: int) -> str:
    return f"<cnf>\np cnf {num_vars} {len(clauses)}\n" + "".join(f"{c} 0\n" for c in clauses) + "</cnf>"


# per task, the three samples in the order asked: a wrong formula first (the morning rule, or
# at-most-one, left out), then the right one, then the right one reordered with a redundant clause
SAMPLES = {
    "shifts": [block(SHIFTS[:8], 6), block(SHIFTS, 6), block([*reversed(SHIFTS), "1 2 5"], 6)],
    "fashion": [block([ONE_OF_TEN], 10), block([ONE_OF_TEN, *PAIRS], 10), block([*reversed(PAIRS), ONE_OF_TEN], 10)],
}


@pytest.fixture(scope="module")
def example_sweep(tmp_path_factory):
    pytest.importorskip("autonesy_example", reason="examples/plugin is not installed (pip install -e examples/plugin)")
    asked = {task: itertools.count() for task in SAMPLES}

    def answer(request):
        text = request["messages"][-1]["content"]
        task = "shifts" if "Alice" in text else "fashion"
        return SAMPLES[task][next(asked[task]) % 3]

    out = tmp_path_factory.mktemp("plugin") / "sweep"
    with LoopbackLLM([answer]) as server:
        args = ["sweep", "--policy", "example/vote", "--tasks", "example/shifts,fashion", "--formats", "dimacs"]
        args += ["--prompts", "zs", "--details", "detailed", "--llm", server.spec(), "--out", str(out), "--json"]
        result = runner.invoke(app, [*args, "--no-cache"])
        requests = list(server.requests)
    assert result.exit_code == 0, result.output
    return out, requests


def test_the_example_policy_and_task_run_in_a_sweep_under_their_namespaced_names(example_sweep):
    out, requests = example_sweep
    rows = {row["task"]: row for row in read_results(out)}
    assert set(rows) == {"example/shifts", "fashion"}
    assert {row["policy"] for row in rows.values()} == {"example/vote"}
    assert rows["example/shifts"]["benchmark"] == "plugin" and rows["fashion"]["benchmark"] == "catalogue"
    config = json.loads((out / rows["example/shifts"]["run_dir"] / "config.json").read_text())
    assert config["policy"] == "example/vote" and config["task"] == "example/shifts"
    # the first sample is wrong (F1 2/3 on shifts: 4 models for 2); two of three agree on the right formula
    assert all(row["status"] == "accepted" and row["f1"] == 1.0 for row in rows.values())
    # three samples per attempt, at the policy's temperature, each traced and counted (the loopback
    # server reports 11 prompt and 7 completion tokens per answer)
    assert len(requests) == 6 and {r["json"]["temperature"] for r in requests} == {0.7}
    assert all(
        (row["llm_calls"], row["prompt_tokens"], row["completion_tokens"]) == (3, 33, 21) for row in rows.values()
    )


def test_every_sample_and_tool_use_of_the_vote_is_in_the_trace(example_sweep):
    out, _ = example_sweep
    row = next(row for row in read_results(out) if row["task"] == "example/shifts")
    events = read_trace(out / row["run_dir"])
    calls = [e for e in events if e["event"] == "llm_call"]
    assert [c.get("sample", 0) for c in calls] == [0, 1, 2] and {c["role"] for c in calls} == {"formalizer"}
    tools = [(e["tool"], e["result"]) for e in events if e["event"] == "tool_call"]
    # each sample checked; the wrong one starts a group, the right one another (not equal to the wrong),
    # the reordered one is compared with both groups' first formulas and joins the right one
    assert [t for t, _ in tools] == ["check"] * 3 + ["compare"] * 3
    relations = [result["relation"] for tool, result in tools if tool == "compare"]
    assert relations[-1] == "equal" and "equal" not in relations[:-1]


def test_trace_report_and_viewer_show_the_namespaced_names(example_sweep, tmp_path):
    out, _ = example_sweep
    traced = runner.invoke(app, ["trace", str(out), "--json"])
    assert traced.exit_code == 0, traced.output
    attempts = json.loads(traced.output)["attempts"]
    assert {(a["task"], a["policy"]) for a in attempts} == {
        ("example/shifts", "example/vote"),
        ("fashion", "example/vote"),
    }
    report = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "report"), "--no-plots", "--html"])
    assert report.exit_code == 0, report.output
    assert "example/shifts" in (tmp_path / "report" / "per_task.md").read_text()
    index = (tmp_path / "report" / "html" / "index.html").read_text()
    assert "example/shifts" in index and "example/vote" in index


def test_plugins_json_lists_the_example_with_its_package_and_version():
    pytest.importorskip("autonesy_example", reason="examples/plugin is not installed")
    result = runner.invoke(app, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    mine = {(e["kind"], e["name"]): e for e in listed["entries"]}
    assert mine[("policy", "example/vote")]["package"] == "autonesy-example"
    assert mine[("task", "example/shifts")]["version"] == "0.1.0" and not mine[("task", "example/shifts")]["builtin"]
    assert mine[("policy", "zs")]["builtin"] and mine[("task", "fashion")]["package"] == "autonesy-agent"


# ---------------------------------------------------------------------------------- broken plugins
def fake_distribution(root: Path, package: str, namespace: str, module: str, source: str) -> None:
    """An installed distribution as importlib.metadata sees it: a dist-info folder with an entry point."""
    info = root / f"{package.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[autonesy]\n{namespace} = {module}\n")
    (root / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def broken_plugins(tmp_path):
    fake_distribution(
        tmp_path, "broken-plugin", "broken", "broken_plugin", "raise ImportError('no module named numpyy')\n"
    )
    fake_distribution(
        tmp_path,
        "clashy-plugin",
        "clashy",
        "clashy_plugin",
        """
        import autonesy

        @autonesy.task("twice")
        def one():
            raise AssertionError("never built")

        @autonesy.task("twice")
        def other():
            raise AssertionError("never built")
        """,
    )
    return tmp_path


def cli(*args: str, path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])}
    code = "from autonesy.graph.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env)


def test_broken_plugins_are_one_line_each_and_tasks_still_lists_everything_else(broken_plugins):
    done = cli("tasks", "--json", path=broken_plugins)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and "Traceback" not in done.stderr, done.stderr
    broken = next(line for line in lines if "broken-plugin" in line)
    clashy = next(line for line in lines if "clashy-plugin" in line)
    assert broken.startswith("warning: plugin 'broken-plugin' 1.0 (namespace 'broken') cannot be used: ImportError")
    assert "registers task 'clashy/twice' twice" in clashy
    names = [row["name"] for row in json.loads(done.stdout)]
    assert "fashion" in names and not any(name.startswith(("broken/", "clashy/")) for name in names)


def test_plugins_lists_the_broken_ones_and_a_command_naming_one_fails_in_one_line(broken_plugins):
    listed = cli("plugins", "--json", path=broken_plugins)
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)["broken"]) == 2 and not listed.stderr
    run = cli(
        "run", "--task", "broken/x", "--policy", "expert", "--out", str(broken_plugins / "r"), path=broken_plugins
    )
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("error: plugin 'broken-plugin' 1.0 (namespace 'broken') cannot be used")


def test_a_command_that_uses_no_plugin_never_loads_one(broken_plugins):
    done = cli("task", "show", "fashion", "--json", path=broken_plugins)
    assert done.returncode == 0 and not done.stderr, done.stderr


def test_two_packages_claiming_one_namespace_are_one_line_naming_both(tmp_path):
    fake_distribution(tmp_path, "first-pkg", "same", "first_mod", "")
    fake_distribution(tmp_path, "second-pkg", "same", "second_mod", "")
    done = cli("tasks", "--json", path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "warning: plugins 'first-pkg' and 'second-pkg' both declare the namespace 'same'; uninstall one of them"
    ]


def test_a_plugins_tasks_are_a_pack_in_a_sweep_grid():
    pytest.importorskip("autonesy_example", reason="examples/plugin is not installed")
    from autonesy.graph.sweep.grid import SweepError, expand_tasks

    assert expand_tasks(["example/*", "fashion"]) == ["example/shifts", "fashion"]
    with pytest.raises(SweepError, match="no installed plugin has the namespace 'nosuchpkg'"):
        expand_tasks(["nosuchpkg/*"])


def test_sweep_worker_processes_load_the_installed_plugin_by_its_entry_point(tmp_path):
    pytest.importorskip("autonesy_example", reason="examples/plugin is not installed")
    from autonesy.graph.sweep.grid import SweepSpec
    from autonesy.graph.sweep.run import run_sweep

    asked = itertools.count()
    with LoopbackLLM([lambda request: SAMPLES["shifts"][next(asked) % 3]]) as server:
        spec = SweepSpec(
            tasks=("example/shifts",),
            formats=("dimacs",),
            prompts=("zs",),
            details=("detailed",),
            policy="example/vote",
            llms=(server.spec(),),
            cache=False,
        )
        done = run_sweep(spec, tmp_path / "sweep", executor="process", workers=1, progress=False)
    (row,) = done.rows
    assert (row["task"], row["policy"], row["status"], row["f1"], row["llm_calls"]) == (
        "example/shifts",
        "example/vote",
        "accepted",
        1.0,
        3,
    )


def test_run_names_its_default_directory_with_one_folder_per_plugin_name(tmp_path, monkeypatch):
    pytest.importorskip("autonesy_example", reason="examples/plugin is not installed")
    monkeypatch.chdir(tmp_path)
    asked = itertools.count()
    with LoopbackLLM([lambda request: SAMPLES["shifts"][next(asked) % 3]]) as server:
        args = ["run", "--task", "example/shifts", "--policy", "example/vote", "--format", "dimacs", "--prompt", "zs"]
        result = runner.invoke(app, [*args, "--llm", server.spec(), "--no-cache", "--json"])
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name == "example+shifts"
    (attempt_dir,) = run_dir.iterdir()
    assert attempt_dir.name.startswith("dimacs-example+vote-detailed-")
    summary = json.loads((attempt_dir / "summary.json").read_text())
    assert (summary["task"], summary["policy"], summary["metrics"]["f1"]) == ("example/shifts", "example/vote", 1.0)
