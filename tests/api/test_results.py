"""Reading results back: a sweep directory and its results.jsonl give the same typed rows; anything else
is one ResultsError line naming the file (and the line)."""

from __future__ import annotations

import json

import pytest

import autonesy


@pytest.fixture(scope="module")
def expert_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    autonesy.sweep(
        out, tasks="fashion", formats="dimacs,nat", prompts="zs", details="detailed", policy="expert", data=False
    )
    return out


def test_a_sweep_directory_and_its_results_file_read_the_same(expert_sweep, tmp_path):
    from_dir = autonesy.read_results(expert_sweep)
    from_file = autonesy.read_results(expert_sweep / "results.jsonl")
    assert [row.model_dump() for row in from_dir] == [row.model_dump() for row in from_file]
    table_only = tmp_path / "received"
    table_only.mkdir()
    (table_only / "results.jsonl").write_text((expert_sweep / "results.jsonl").read_text())
    assert [row.model_dump() for row in autonesy.read_results(table_only)] == [row.model_dump() for row in from_dir]
    assert sorted((row.format, row.relation, row.f1) for row in from_dir) == [
        ("dimacs", "equal", 1.0),
        ("nat", "equal", 1.0),
    ]
    run_dir = expert_sweep / from_dir[0].run_dir
    assert autonesy.read_run(run_dir).metrics.f1 == 1.0


def test_a_row_of_another_version_is_one_line_naming_it(expert_sweep, tmp_path):
    lines = (expert_sweep / "results.jsonl").read_text().splitlines()
    changed = json.loads(lines[1]) | {"new_column": 1}
    damaged = tmp_path / "results.jsonl"
    damaged.write_text("\n".join([lines[0], json.dumps(changed), "not json"]) + "\n")
    with pytest.raises(autonesy.ResultsError, match=r"results.jsonl:2 is not a results row of this version") as error:
        autonesy.read_results(damaged)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("make", ["missing", "empty-folder", "unfinished-run"])
def test_what_holds_no_results_is_a_results_error(make, tmp_path):
    if make == "empty-folder":
        (tmp_path / "x").mkdir()
    with pytest.raises(autonesy.ResultsError):
        if make == "unfinished-run":
            autonesy.read_run(tmp_path)
        else:
            autonesy.read_results(tmp_path / "x")
