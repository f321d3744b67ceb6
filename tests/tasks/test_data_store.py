"""The data directory, the deterministic .npz format, and atomic, self-checking cache entries."""

import zipfile

import numpy as np
import pytest

from autonesy.tasks.data import store
from autonesy.tasks.data.store import DataError, npz_bytes, publish_entry, read_npz, resolve_data_dir, verify_entry


def test_data_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path / "from-env"))
    assert resolve_data_dir(tmp_path / "explicit") == tmp_path / "explicit"
    assert resolve_data_dir() == tmp_path / "from-env"
    monkeypatch.delenv(store.ENV_VAR)
    default = resolve_data_dir()
    assert default.name == "data" and "autonesy-agent" in str(default)


def test_data_error_is_a_task_error():
    from autonesy.tasks.task import TaskError

    assert issubclass(DataError, TaskError)  # so the CLI prints it as a one-line user error


def test_npz_bytes_are_deterministic_and_loadable(tmp_path, monkeypatch):
    arrays = {"y": np.arange(12, dtype=np.uint8).reshape(3, 4), "x": np.linspace(0, 1, 6, dtype=np.float32)}
    first = npz_bytes(arrays)
    monkeypatch.setattr("time.time", lambda: 2_000_000_000.0)  # a different "now" changes nothing
    assert npz_bytes(dict(reversed(list(arrays.items())))) == first
    path = tmp_path / "a.npz"
    path.write_bytes(first)
    loaded = read_npz(path)
    assert set(loaded) == {"x", "y"}
    for name in arrays:
        np.testing.assert_array_equal(loaded[name], arrays[name])
        assert loaded[name].dtype == arrays[name].dtype
    with zipfile.ZipFile(path) as archive:
        assert [i.filename for i in archive.infolist()] == ["x.npy", "y.npy"]
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in archive.infolist())


def _splits():
    return {
        s: {"x": np.full((2, 3), i, dtype=np.float32), "y": np.eye(2, dtype=np.uint8)}
        for i, s in enumerate(store.SPLITS)
    }


def test_publish_then_verify_and_detect_damage(tmp_path):
    entry = tmp_path / "generated" / "t" / "seed-0_n2-2-2"
    manifest = publish_entry(entry, _splits(), {"generator_version": "v1"})
    assert sorted(p.name for p in entry.iterdir()) == ["manifest.json", "test.npz", "train.npz", "val.npz"]
    assert verify_entry(entry, version="v1") == manifest
    assert verify_entry(entry, version="v2") is None  # stale generator version
    assert not list(entry.parent.glob(".tmp-*"))  # nothing left behind

    data = bytearray((entry / "val.npz").read_bytes())
    data[-10] ^= 0xFF
    (entry / "val.npz").write_bytes(bytes(data))
    assert verify_entry(entry, version="v1") is None  # same size, wrong hash

    publish_entry(entry, _splits(), {"generator_version": "v1"})  # replaces the damaged entry
    assert verify_entry(entry, version="v1") is not None
    (entry / "test.npz").unlink()
    assert verify_entry(entry) is None
    (entry / "manifest.json").write_text("{not json")
    assert verify_entry(entry) is None


def test_failed_publish_leaves_no_entry(tmp_path, monkeypatch):
    entry = tmp_path / "generated" / "t" / "seed-0_n2-2-2"

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(store, "dump_json", boom)
    with pytest.raises(OSError):
        publish_entry(entry, _splits(), {"generator_version": "v1"})
    assert not entry.exists()
    assert not list(entry.parent.glob(".tmp-*"))


def test_publishing_over_an_intact_entry_keeps_it(tmp_path):
    """Two builders racing for one entry: the second keeps the first's files instead of swapping them."""
    entry = tmp_path / "generated" / "t" / "seed-0_n2-2-2"
    first = publish_entry(entry, _splits(), {"generator_version": "v1"})
    stamps = {p.name: p.stat().st_mtime_ns for p in entry.iterdir()}
    assert publish_entry(entry, _splits(), {"generator_version": "v1"}) == first
    assert {p.name: p.stat().st_mtime_ns for p in entry.iterdir()} == stamps
    assert not list(entry.parent.glob(".tmp-*"))


def test_an_entry_with_poisoned_labels_and_recomputed_hashes_is_not_believed(tmp_path, caplog):
    """A shared or copied data folder (issue 50): labels swapped and the manifest's hashes made to match again, as an
    attacker who can write the folder would; the manifest no longer carries this user's signature."""
    import hashlib
    import json

    entry = tmp_path / "generated" / "t" / "seed-0_n2-2-2"
    publish_entry(entry, _splits(), {"generator_version": "v1"})
    poisoned = {**_splits()["train"], "y": 1 - np.eye(2, dtype=np.uint8)}
    data = npz_bytes(poisoned)
    (entry / "train.npz").write_bytes(data)
    manifest = json.loads((entry / "manifest.json").read_text())
    manifest["files"]["train"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    (entry / "manifest.json").write_text(json.dumps(manifest))
    assert verify_entry(entry, version="v1") is None
    assert sum("untrusted cache entry" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.parametrize("kind", ["manifest-fifo", "split-fifo", "split-dev-zero"])
def test_an_entry_holding_a_fifo_or_a_device_link_is_refused_at_once(tmp_path, kind):
    import os

    entry = tmp_path / "generated" / "t" / "seed-0_n2-2-2"
    publish_entry(entry, _splits(), {"generator_version": "v1"})
    name = "manifest.json" if kind == "manifest-fifo" else "val.npz"
    (entry / name).unlink()
    if kind.endswith("fifo"):
        os.mkfifo(entry / name)
    else:
        (entry / name).symlink_to("/dev/zero")
    assert verify_entry(entry, version="v1") is None  # would block (FIFO) or read forever (/dev/zero)
    if name.endswith(".npz"):
        with pytest.raises(OSError):  # nor does reading the split wait on it
            read_npz(entry / name)
