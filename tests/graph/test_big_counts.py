"""Counts past the 4,300 decimal digits Python's ``str``/``int`` accept (issue 50): a task of 60,000 variables is scored
and shown by the command line, exact, in text and JSON."""

import decimal
import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app

N = 60_000  # 2^60,000 assignments: 18,062 decimal digits


@pytest.fixture(scope="module")
def wide_task(tmp_path_factory):
    """A task file of N variables whose ground truth is (x1 ∨ x2), and an answer x1."""
    folder = tmp_path_factory.mktemp("wide")
    variables = "".join(f'[[variables]]\nname = "v{i}"\nmeaning = "m"\n' for i in range(1, N + 1))
    (folder / "wide.toml").write_text(
        f'name = "wide"\n{variables}[descriptions]\ndetailed = "x1 or x2"\nnot_detailed = "x1 or x2"\n'
        '[ground_truth]\ndimacs = "wide.cnf"\n[metadata]\nsource_dataset = "none"\nlicence = "MIT"\n'
    )
    (folder / "wide.cnf").write_text(f"p cnf {N} 1\n1 2 0\n")
    (folder / "answer.cnf").write_text(f"p cnf {N} 1\n1 0\n")
    return folder


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))


def number(value) -> int:
    """A JSON count: a number, or decimal text past 2^53 (read without Python's digit limit)."""
    return value if isinstance(value, int) else int(decimal.Decimal(value))


def test_score_of_a_60000_variable_task_is_exact_in_json_and_text(wide_task, cache):
    args = ["score", str(wide_task / "answer.cnf"), "--task", str(wide_task / "wide.toml"), "--format", "dimacs"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output[-2000:]
    data = json.loads(result.output)
    quarter = 2 ** (N - 2)  # (x1, x2) fixed, the other N - 2 free
    expected = {"tp": 2 * quarter, "fp": 0, "fn": quarter, "tn": quarter, "truth_count": 3 * quarter}
    assert {key: number(data[key]) for key in expected} == expected and data["exact"]
    assert data["relation"] == "strict" and data["f1"] == pytest.approx(0.8)
    text = CliRunner().invoke(app, args)  # the second run reads the ground truth's count back from the cache
    assert text.exit_code == 0, text.output[-2000:]
    assert "F1 0.8000" in text.output and "TP about 10^18061" in text.output  # 2^59,999 ≈ 3.3 · 10^18,061


def test_task_show_and_export_of_a_60000_variable_task(wide_task, cache, tmp_path):
    result = CliRunner().invoke(app, ["task", "show", str(wide_task / "wide.toml"), "--json"])
    assert result.exit_code == 0, result.output[-2000:]
    record = json.loads(result.output)
    assert number(record["model_count"]) == 3 * 2 ** (N - 2) and len(record["variables"]) == N
    result = CliRunner().invoke(app, ["task", "export", str(wide_task / "wide.toml"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output[-2000:]
    assert number(json.loads((tmp_path / "out" / "wide.json").read_text())["model_count"]) == 3 * 2 ** (N - 2)


@pytest.mark.parametrize("method", ["ganak", "sdd", "auto"])
def test_each_exact_counter_counts_past_4300_digits(method):
    """(x1 ∨ x2) over 15,000 variables: 3 · 2^14,998 models, 4,516 decimal digits (Ganak hands its count over as
    decimal text, which Python refuses past 4,300 digits by default)."""
    from autonesy.tools.cnf import CNF
    from autonesy.tools.counting import count_models

    assert count_models(CNF(15_000, ((1, 2),)), method, time_limit_s=120).value == 3 * 2**14_998
