"""The command line starts light: building it imports typer and rich only, and the commands that
need no LLM, no training and no plots (`--help`, `tasks`, `task show`, `score`) never load those
libraries. Each check runs in a fresh interpreter, where ``sys.modules`` is what the command loaded."""

import functools
import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.tools.errors import AutonesyError, one_line

HEAVY = (
    "torch",
    "langchain",
    "langchain_core",
    "langchain_openai",
    "langgraph",
    "matplotlib",
    "pandas",
    "openai",
    "cirkit",
    "klay",
    "sklearn",
    "PIL",
    "z3",
    "cpmpy",
    "sympy",
)

PROBE = """
import json, sys
from autonesy.graph.cli import app
try:
    code = app(sys.argv[1:], standalone_mode=False) or 0  # click returns the exit code of typer.Exit
except SystemExit as exit:
    code = exit.code
print("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded(*args: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def roots(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_building_the_command_line_imports_typer_and_rich_only():
    code = "import json, sys; import autonesy.graph.cli; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    modules = set(json.loads(done.stdout))
    assert not roots(modules) & set(HEAVY + ("numpy", "pysdd", "pysat", "pydantic"))
    ours = {m for m in modules if m.startswith("autonesy.")}
    allowed = (  # the option choices and the LLM spec parser are defined in light modules, for the CLI
        "autonesy.agents",
        "autonesy.agents.options",
        "autonesy.graph",
        "autonesy.graph.cli",
        "autonesy.graph.options",
        "autonesy.tasks",
        "autonesy.tasks.options",
        "autonesy.tools",
        "autonesy.tools.config",
        "autonesy.tools.errors",
        "autonesy.tools.llm_spec",
        "autonesy.tools.options",
        "autonesy.tools.pyast",  # loaded by autonesy.tools: serialises ast.parse (the stdlib ast only)
        "autonesy.tools.registry",  # the LLM spec parser asks it for providers a script registered (stdlib only)
        "autonesy.tools.terminal_text",  # what the CLI prints from elsewhere (the stdlib re only)
    )
    assert {m for m in ours if not m.startswith("autonesy.graph.cli.")} <= set(allowed)


def test_the_fashion_ground_truth_exports(tmp_path):
    result = CliRunner().invoke(app, ["task", "export", "fashion", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "fashion.cnf").read_text().count(" 0\n") > 0


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["tasks", "--json"],
        ["task", "show", "warcraft", "--json"],
        ["score", "{cnf}", "--task", "fashion", "--format", "dimacs", "--json"],
        ["vifbench", "check", "start_end_same_word", "--output", "{text}", "--json"],
    ],
    ids=["help", "tasks", "task-show", "score", "vifbench-check"],
)
def test_light_commands_load_no_heavy_library(args, tmp_path):
    if "{text}" in args:
        (tmp_path / "out.txt").write_text("# Title\nAgile work stays agile.\n")
        args = [str(tmp_path / "out.txt") if a == "{text}" else a for a in args]
    if "{cnf}" in args:
        assert CliRunner().invoke(app, ["task", "export", "fashion", "--out", str(tmp_path)]).exit_code == 0
        args = [str(tmp_path / "fashion.cnf") if a == "{cnf}" else a for a in args]
    code, modules = loaded(*args)
    assert code == 0
    assert not roots(modules) & set(HEAVY), sorted(roots(modules) & set(HEAVY))
    option_names = {"autonesy.agents", "autonesy.agents.options"}  # the prompt styles --help lists, no agent code
    allowed = option_names | plugins_own_modules()  # `tasks` loads the installed plugins, whose imports are theirs
    assert not {m for m in modules if m.startswith(("autonesy.agents", "autonesy.nesy"))} - allowed


@functools.cache
def plugins_own_modules() -> frozenset[str]:
    """What importing the installed plugins' entry points alone loads (in a fresh interpreter)."""
    code = (
        "import importlib.metadata, json, sys\n"
        "for point in importlib.metadata.entry_points(group='autonesy'):\n"
        "    try:\n        point.load()\n    except Exception:\n        pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    return frozenset(json.loads(done.stdout))


def test_a_heavy_command_still_finds_its_libraries(tmp_path):
    """The other side of laziness: `report` imports pandas when it runs (and fails on an empty folder)."""
    code, modules = loaded("report", str(tmp_path))
    assert code == 1 and "pandas" in modules


def test_user_facing_errors_share_one_base():
    from autonesy.agents.llm import LLMError
    from autonesy.graph.cli import UserError
    from autonesy.graph.report import ReportError
    from autonesy.graph.run import RunError
    from autonesy.graph.sweep.grid import SweepError
    from autonesy.graph.verify.run import VerifyError
    from autonesy.nesy.constraint import UnsatisfiableConstraint
    from autonesy.tasks.data.fetch import FetchError
    from autonesy.tasks.data.store import DataError
    from autonesy.tasks.registry import UnknownTaskError
    from autonesy.tasks.task import TaskError
    from autonesy.tasks.vifbench.ifeval import IFEvalDataError
    from autonesy.tools.cnf import DimacsError
    from autonesy.tools.compile import CompilationBudgetExceeded
    from autonesy.tools.verify.user_checkers import UserCheckerError

    for error in (
        LLMError,
        UserError,
        ReportError,
        RunError,
        SweepError,
        VerifyError,
        FetchError,
        DataError,
        UnknownTaskError,
        TaskError,
        CompilationBudgetExceeded,
        UserCheckerError,
        DimacsError,
        UnsatisfiableConstraint,
        IFEvalDataError,
    ):
        assert issubclass(error, AutonesyError), error
    assert issubclass(TaskError, ValueError) and issubclass(LLMError, RuntimeError)  # old catch sites still work


@given(st.text())
def test_one_line_is_one_line(text):
    line = one_line(AutonesyError(text))
    assert "\n" not in line and "\r" not in line and line
    for part in text.splitlines():
        assert part.strip() in line
