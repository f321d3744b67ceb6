"""Every task's data: valid labels, shapes, provenance, byte-identical by seed, cached and self-repairing."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from autonesy.tasks.data.dataset import build_dataset, generate, load_dataset, resolve_sizes
from autonesy.tasks.data.generators import GENERATORS
from autonesy.tasks.data.sampling import ground_truth_sdd
from autonesy.tasks.data.store import SPLITS, DataError, read_npz
from autonesy.tasks.registry import TASK_NAMES, get_task

SMALL = {"train": 24, "val": 8, "test": 16}


def _files(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("name", TASK_NAMES)
def test_every_split_is_valid_shaped_and_reproducible(name, tmp_path):
    task = get_task(name)
    data = load_dataset(task, tmp_path / "a", seed=3, sizes=SMALL, progress=False)
    assert data.built and data.sizes == SMALL
    assert data.provenance == task.metadata.data_provenance == GENERATORS[name].provenance
    sdd = ground_truth_sdd(task)
    for split in SPLITS:
        s = data.splits[split]
        assert len(s) == SMALL[split] == len(s.x)
        assert s.y.dtype == np.uint8 and s.y.shape == (SMALL[split], task.num_vars)
        assert s.x.dtype == np.float32
        assert sdd.evaluate(s.y).all(), f"{name}/{split}: a label violates the ground truth"
        assert task.oracle_batch(s.y.astype(bool)).all(), f"{name}/{split}: a label fails the oracle"
        if data.modality == "image":
            assert s.x.ndim == 4 and s.x.shape[1] in (1, 3)
            assert 0.0 <= s.x.min() and s.x.max() <= 1.0
        else:
            assert s.x.ndim == 2 and np.isfinite(s.x).all()
        for key, value in s.extras.items():
            assert len(value) == len(s), key

    again = build_dataset(get_task(name), tmp_path / "b", seed=3, sizes=SMALL, progress=False)
    assert again.built
    assert _files(again.directory) == _files(data.directory)  # same seed: byte-identical files

    other = generate(get_task(name), seed=4, sizes=SMALL)  # another seed: other data
    stored = read_npz(data.directory / "train.npz")
    assert not np.array_equal(other["train"]["x"], stored["x"])


def test_same_seed_is_byte_identical_across_processes(tmp_path):
    """A fresh interpreter (another hash seed) writes the same bytes as this one."""
    names = ["mn-add-bin", "warcraft", "kand-logic-2", "bdd-oia"]
    local = {
        n: build_dataset(get_task(n), tmp_path / "here", seed=1, sizes=SMALL, progress=False).manifest["files"]
        for n in names
    }
    script = (
        "import json, sys\n"
        "from autonesy.tasks.data.dataset import build_dataset\n"
        "from autonesy.tasks.registry import get_task\n"
        f"out = {{n: build_dataset(get_task(n), sys.argv[1], seed=1, sizes={SMALL!r}, progress=False).manifest['files'] for n in {names!r}}}\n"
        "print(json.dumps(out))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "there")], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == local


def test_test_split_does_not_depend_on_the_train_size(tmp_path):
    small = generate(get_task("cebab"), seed=0, sizes={"train": 10, "val": 5, "test": 12})
    large = generate(get_task("cebab"), seed=0, sizes={"train": 30, "val": 5, "test": 12})
    np.testing.assert_array_equal(small["test"]["x"], large["test"]["x"])
    np.testing.assert_array_equal(small["test"]["y"], large["test"]["y"])


def test_cache_is_reused_not_regenerated(tmp_path, monkeypatch):
    first = load_dataset(get_task("chx"), tmp_path, sizes=SMALL, progress=False)
    stamps = {p.name: p.stat().st_mtime_ns for p in first.directory.iterdir()}
    import autonesy.tasks.data.dataset as dataset_module

    def fail(*args, **kwargs):
        raise AssertionError("regenerated although an intact cache entry exists")

    monkeypatch.setattr(dataset_module, "generate", fail)
    second = load_dataset(get_task("chx"), tmp_path, sizes=SMALL, progress=False)
    assert not second.built
    assert {p.name: p.stat().st_mtime_ns for p in second.directory.iterdir()} == stamps
    np.testing.assert_array_equal(first.train.x, second.train.x)


def test_corrupted_or_incomplete_cache_is_rebuilt(tmp_path):
    first = load_dataset(get_task("sushi"), tmp_path, sizes=SMALL, progress=False)
    reference = _files(first.directory)
    path = first.directory / "train.npz"
    path.write_bytes(path.read_bytes()[:-20])  # truncated
    again = load_dataset(get_task("sushi"), tmp_path, sizes=SMALL, progress=False)
    assert again.built and _files(again.directory) == reference
    (again.directory / "manifest.json").unlink()  # incomplete entry
    third = load_dataset(get_task("sushi"), tmp_path, sizes=SMALL, progress=False)
    assert third.built and _files(third.directory) == reference


def test_environment_variable_picks_the_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_DATA_DIR", str(tmp_path / "env"))
    data = load_dataset(get_task("fashion"), sizes=SMALL, progress=False)
    assert data.directory.is_relative_to(tmp_path / "env")
    assert data.directory.name == "seed-0_n24-8-16"


def test_sizes_are_validated():
    assert resolve_sizes(get_task("fashion")) == {"train": 3000, "val": 500, "test": 1000}
    assert resolve_sizes(get_task("warcraft")) == {"train": 10000, "val": 1000, "test": 1000}
    assert resolve_sizes(get_task("fashion"), (5, 6, 7)) == {"train": 5, "val": 6, "test": 7}
    assert resolve_sizes(get_task("fashion"), {"test": 9})["test"] == 9
    for bad in [(1, 2), (0, 1, 1), {"dev": 3}, (1.5, 2, 3)]:
        with pytest.raises(DataError):
            resolve_sizes(get_task("fashion"), bad)
    for seed in (-1, 1.5, True):
        with pytest.raises(DataError, match="seed"):
            build_dataset(get_task("fashion"), "/nonexistent", seed=seed, sizes=SMALL)


def test_every_task_has_a_generator_with_sensible_defaults():
    assert set(GENERATORS) == set(TASK_NAMES)
    for name, generator in GENERATORS.items():
        sizes = generator.default_sizes
        assert sizes["train"] >= 1000 and sizes["test"] >= 500, name
        assert generator.provenance == get_task(name).metadata.data_provenance


def test_features_blend_a_share_of_inputs():
    from autonesy.tasks.data.features import SPECS

    arrays = generate(get_task("fashion"), seed=0, sizes={"train": 2000, "val": 1, "test": 1})
    blended = (arrays["train"]["mix_weight"] < 1).mean()
    assert abs(blended - SPECS["fashion"].mix_prob) < 0.05
    assert arrays["train"]["x"].shape == (2000, SPECS["fashion"].dim)
