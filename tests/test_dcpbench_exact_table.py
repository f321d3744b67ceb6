"""benchmarks/results keeps one current DCP-Bench-Open table: an ``--only`` run replaces the rows of the
problems it names, the others keep the run that decided them, and every row names a listed run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import dcpbench_exact  # noqa: E402


def exact_row(count: int) -> dict:
    return {"N": 3, "vars": 5, "clauses": 7, "count": count, "method": "enumeration", "seconds": 0.5,
            "from_cache": False, "wall_s": 2.0, "load": "1.0", "encoding": "one-hot", "outcome": "exact"}  # fmt: skip


def test_an_only_run_replaces_its_problems_and_keeps_the_others(tmp_path):
    earlier = {
        "runs": {
            "r1": {"source": "s1", "command": "c1", "summary": "m1"},
            "r2": {"source": "s2", "command": "c2", "summary": "m2"},
        },
        "problems": {
            "alpha": {**exact_row(4), "run": "r1"},
            "beta": {
                "from_cache": False,
                "wall_s": 1.0,
                "load": "1.0",
                "N": 3,
                "vars": 5,
                "clauses": 7,
                "outcome": "unscorable",
                "unscorable": "ran out of time",
                "run": "r2",
            },  # fmt: skip
        },
    }
    out = tmp_path / "table.md"
    dcpbench_exact.write_table(
        out, earlier, "r3", {"source": "s3", "command": "c3", "summary": "m3"}, {"beta": exact_row(9)}
    )
    table = json.loads(out.with_suffix(".json").read_text())
    assert table["problems"]["alpha"]["run"] == "r1" and table["problems"]["alpha"]["count"] == 4
    assert table["problems"]["beta"]["run"] == "r3" and table["problems"]["beta"]["count"] == 9
    assert list(table["runs"]) == ["r1", "r3"]  # r2 decides nothing any more
    text = out.read_text()
    assert "**Exact: 2 of 2 loaded (100 %)**; unscorable: 0" in text
    assert "| beta | 3 | 5 | 7 | 9 | enumeration | 0.50 | 2.0 | 1.0 | one-hot | r3 |" in text


def test_the_committed_table_is_one_current_verdict_per_problem_naming_its_run():
    results = ROOT / "benchmarks" / "results"
    assert not list(results.glob("dcpbench_exact_*")), "one current table: history lives in git"
    table = json.loads((results / "dcpbench_exact.json").read_text())
    assert {row["run"] for row in table["problems"].values()} == set(table["runs"])
    assert (results / "dcpbench_exact.md").read_text() == dcpbench_exact.render(table)
