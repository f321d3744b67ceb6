"""`autonesy-agent data build|show` as a user drives it: exit codes, JSON, the picture grid."""

import json

from PIL import Image
from typer.testing import CliRunner

from autonesy.graph.cli import app

runner = CliRunner()
SIZES = "12,4,8"


def invoke(*args):
    return runner.invoke(app, list(args))


def test_build_json_then_cached(tmp_path):
    args = ["data", "build", "chx", "sudoku", "--data-dir", str(tmp_path), "--sizes", SIZES, "--no-progress", "--json"]
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    rows = json.loads(first.output)
    assert [r["task"] for r in rows] == ["chx", "sudoku"]
    assert [r["status"] for r in rows] == ["built", "built"]
    assert rows[1]["provenance"] == "real" and rows[1]["sizes"] == {"train": 12, "val": 4, "test": 8}
    assert rows[1]["x_shape"] == [1, 32, 32]
    second = json.loads(invoke(*args).output)
    assert [r["status"] for r in second] == ["cached", "cached"]
    forced = json.loads(invoke(*args, "--force").output)
    assert [r["status"] for r in forced] == ["built", "built"]


def test_build_table_output(tmp_path):
    result = invoke("data", "build", "fashion", "--data-dir", str(tmp_path), "--sizes", SIZES)
    assert result.exit_code == 0, result.output
    assert "fashion: built" in result.output and "synthetic-features" in result.output


def test_build_errors_are_one_line(tmp_path):
    for args, fragment in [
        (["data", "build", "--data-dir", str(tmp_path)], "task names or --all"),
        (["data", "build", "chx", "--all", "--data-dir", str(tmp_path)], "task names or --all"),
        (["data", "build", "nope", "--data-dir", str(tmp_path)], "unknown task"),
        (["data", "build", "chx", "--sizes", "1,2", "--data-dir", str(tmp_path)], "--sizes"),
        (["data", "show", "fashion", "--grid", str(tmp_path / "g.png"), "--data-dir", str(tmp_path)], "not images"),
    ]:
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.output)
        assert fragment in result.output
        assert result.output.strip().count("\n") == 0
    assert not (tmp_path / "generated" / "fashion").exists()  # the --grid error comes before any build


def test_show_json_reports_sizes_provenance_and_statistics(tmp_path):
    result = invoke("data", "show", "mn-add", "--data-dir", str(tmp_path), "--sizes", SIZES, "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["task"] == "mn-add" and record["provenance"] == "real"
    assert record["sizes"] == {"train": 12, "val": 4, "test": 8}
    for split in ("train", "val", "test"):
        stats = record["splits"][split]
        assert stats["all_valid"] is True
        assert stats["mean_true_per_row"] == 3.0  # two digits and one sum
        assert len(stats["true_rate"]) == 39
    assert record["grid"] is None


def test_show_table_and_grid_picture(tmp_path):
    grid = tmp_path / "pics" / "warcraft.png"
    result = invoke(
        "data", "show", "warcraft", "--data-dir", str(tmp_path), "--sizes", SIZES, "--grid", str(grid), "--count", "6"
    )
    assert result.exit_code == 0, result.output
    assert "procedural" in result.output and "wrote" in result.output
    with Image.open(grid) as picture:
        assert picture.format == "PNG" and picture.width > 300 and picture.height > 200


def test_grid_for_every_image_family(tmp_path):
    for name in ("mn-mul-bin", "sudoku", "kand-logic", "cle4evr"):
        path = tmp_path / f"{name}.png"
        result = invoke(
            "data", "show", name, "--data-dir", str(tmp_path), "--sizes", SIZES, "--grid", str(path), "--json"
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["grid"] == str(path)
        assert path.stat().st_size > 1000
