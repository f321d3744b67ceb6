"""Where annotated data lives on disk, and how it is written so that a cache is never half-written.

Data directory, first match wins:

1. an explicit ``data_dir`` (the CLI's ``--data-dir``);
2. the environment variable ``AUTONESY_DATA_DIR``;
3. ``platformdirs.user_cache_dir("autonesy-agent") / "data"`` (e.g. ``~/.cache/autonesy-agent/data``).

Generated data sits under ``DIR/generated/<task>/seed-<seed>_n<train>-<val>-<test>/``:

    train.npz  val.npz  test.npz   arrays x, y and any extras (e.g. image_ids, costs)
    manifest.json                   task, seed, sizes, provenance, generator version, shapes,
                                    and the sha256 and byte size of each .npz

(``generated/`` keeps it apart from original datasets that loaders read from the same directory.)
The sizes are part of the key, so a small test build never shadows the default one.

Determinism: ``np.savez`` stamps every zip member with the current time, so two builds of the same
data would differ byte-wise. :func:`write_npz` writes the same zip format (``np.load`` reads it)
with fixed member metadata: a fixed date (1980-01-01), a fixed creating system and permission bits,
members in sorted order, DEFLATE at level 6. Equal arrays give byte-identical files with a given
zlib; the manifest holds no timestamp either.

Atomicity: a cache entry is built in a temporary sibling directory (``.tmp-…``) and renamed into
place only once every file and, last, the manifest are written and flushed. A crash leaves at most a
stray temporary directory (swept on the next build), never a half-written entry. An entry whose
manifest is missing or unreadable, names another generator version, or whose files are missing or
fail their sha256 check is treated as absent and rebuilt.

Trust: the data folder may be shared or copied, and its labels are what the oracle test and training
believe. The manifest is signed with this user's cache key (:mod:`autonesy.tools.cache_entries`) over
its fields, the splits' hashes included, and every file is read through :mod:`autonesy.tools.safe_files`
(a regular file, no link, capped): an entry another user wrote, or edited with its hashes made to match,
is rebuilt with one warning line.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.tasks.task import TaskError
from autonesy.tools import safe_files
from autonesy.tools.cache_entries import distrust, signature, signed_by_this_user
from autonesy.tools.config import DATA_DIR_ENV, user_cache_dir

ENV_VAR = DATA_DIR_ENV
GENERATED = "generated"
SPLITS = ("train", "val", "test")
MANIFEST = "manifest.json"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
MANIFEST_LIMIT = 1 << 20  # bytes of a manifest read back
DATA_FILE_LIMIT = 4 << 30  # bytes of one split read back (a FIFO or /dev/zero in its place never fills the memory)
_STALE_TMP_S = 3600.0  # temporary build directories older than this are leftovers of a crash


class DataError(TaskError):
    """Data that cannot be built, read or trusted; the message says which task and why."""


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir`` if given, else $AUTONESY_DATA_DIR, else the user cache dir."""
    if data_dir is not None and str(data_dir) != "":
        return Path(data_dir).expanduser()
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    return user_cache_dir() / "data"


def entry_name(seed: int, sizes: Mapping[str, int]) -> str:
    """The cache entry's directory name: seed and split sizes, so different builds never share files."""
    return f"seed-{int(seed)}_n{sizes['train']}-{sizes['val']}-{sizes['test']}"


def entry_dir(root: Path, task_name: str, seed: int, sizes: Mapping[str, int]) -> Path:
    """Where a task's generated splits for (seed, sizes) live under the data root."""
    return root / GENERATED / task_name / entry_name(seed, sizes)


# ------------------------------------------------------------------------------------- npz files


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """A .npz archive of ``arrays`` whose bytes depend on the arrays only (no timestamps)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever the host
            info.external_attr = 0o644 << 16
            archive.writestr(info, member.getvalue(), compresslevel=6)
    return buffer.getvalue()


def write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Write arrays as one .npz atomically (a crash never leaves half a split)."""
    atomic_write_bytes(Path(path), npz_bytes(arrays))


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """Read an .npz without pickles (cached files may have been tampered with), as a regular file reached without a
    link (never a FIFO or a device)."""
    data = safe_files.read_bytes(path, root=Path(path).parent, limit=DATA_FILE_LIMIT)
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def read_splits(directory: Path) -> dict[str, dict[str, np.ndarray]]:
    """The arrays of every split of an entry (``<split>.npz``), by split."""
    return {split: read_npz(directory / f"{split}.npz") for split in SPLITS}


def sha256_file(path: Path) -> str:
    """SHA-256 of a regular file (no link, never a FIFO); the manifest records it to detect corrupted splits."""
    return hashlib.sha256(safe_files.read_bytes(path, root=Path(path).parent, limit=DATA_FILE_LIMIT)).hexdigest()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def dump_json(data: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, fixed indentation, trailing newline)."""
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


# ---------------------------------------------------------------------------------- cache entries


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """A cache entry's manifest, or None when it is missing, not JSON or not signed by this user (the entry is then
    rebuilt; an untrusted one with one warning line): a data folder may be shared or copied, and its labels are what
    the oracle test and training believe."""
    path = directory / MANIFEST
    try:
        data = json.loads(safe_files.read_text(path, root=directory, limit=MANIFEST_LIMIT))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as error:
        distrust(path, str(error)[:200])
        return None
    if not isinstance(data, dict):
        return None
    if not signed_by_this_user({k: v for k, v in data.items() if k != "signature"}, data.get("signature")):
        distrust(path, "not written by this user: its signature does not match this user's cache key")
        return None
    return data


def verify_entry(directory: Path, *, version: str | None = None, check_hashes: bool = True) -> dict[str, Any] | None:
    """The manifest of a complete, intact entry, or None (missing, stale version, corrupted file)."""
    manifest = read_manifest(directory)
    if manifest is None:
        return None
    if version is not None and manifest.get("generator_version") != version:
        return None
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(SPLITS):
        return None
    for split, record in files.items():
        path = directory / f"{split}.npz"
        try:
            found = safe_files.entry_stat(path, root=directory)
            if not isinstance(record, dict) or found is None or found.st_size != record.get("bytes"):
                return None
            if check_hashes and sha256_file(path) != record.get("sha256"):
                return None
        except OSError:
            return None
    return manifest


def publish_entry(
    directory: Path, split_arrays: Mapping[str, Mapping[str, np.ndarray]], manifest: dict[str, Any]
) -> dict[str, Any]:
    """Write the splits and the manifest (with file hashes added) to ``directory``, atomically.

    Everything goes to a temporary sibling directory first; the finished directory replaces any
    previous (invalid) entry by a rename. Returns the manifest as written.
    """
    parent = directory.parent
    parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale(parent)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".tmp-{directory.name}-"))
    try:
        files = {}
        for split in SPLITS:
            data = npz_bytes(split_arrays[split])
            path = tmp / f"{split}.npz"
            with open(path, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            files[split] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        manifest = {**manifest, "files": files}
        manifest["signature"] = signature(manifest)  # this user's (tools/cache_entries.py)
        with open(tmp / MANIFEST, "wb") as handle:
            handle.write(dump_json(manifest))
            handle.flush()
            os.fsync(handle.fileno())
        if directory.exists():
            existing = verify_entry(directory, version=manifest.get("generator_version"))
            if existing is not None:  # another process finished the same entry meanwhile: keep it
                _remove(tmp)
                return existing
            _remove(directory)
        try:
            os.replace(tmp, directory)
        except OSError:
            # Another process published the same entry meanwhile: keep theirs if it is intact.
            if verify_entry(directory, version=manifest.get("generator_version")) is None:
                raise
            _remove(tmp)
    except BaseException:
        if tmp.exists():
            _remove(tmp)
        raise
    return manifest


def _remove(path: Path) -> None:
    """Delete a directory by first renaming it aside, so a reader never sees it half-deleted."""
    aside = path.with_name(f".tmp-removing-{path.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.replace(path, aside)
    except OSError:
        aside = path
    shutil.rmtree(aside, ignore_errors=True)


def _sweep_stale(parent: Path) -> None:
    now = time.time()
    for child in parent.glob(".tmp-*"):
        try:
            if now - child.stat().st_mtime > _STALE_TMP_S:
                shutil.rmtree(child, ignore_errors=True)
        except OSError:
            continue
