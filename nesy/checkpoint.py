"""Training saved as it goes, so a run killed during training continues where it stopped.

Two kinds of file in one folder (the run directory's ``training/``): ``KEY.pt``, the state of an
unfinished training run after its last complete epoch, and ``KEY.json``, the result row of a finished
one. Both carry a fingerprint of what was being trained (method, constraint, seed, configuration,
data); a file whose fingerprint differs, or that does not load, is ignored and the run starts afresh.

A run directory may come from elsewhere, so what is read back is data only: ``torch.load`` with
``weights_only=True`` (tensors and plain values, never pickled code), a JSON row only when it is an
object, and nothing is read or written through a symbolic link (``tools/safe_files.py``). Files are
replaced atomically (a temporary file with a random name in the same folder, then a rename), so a kill
mid-write leaves the previous epoch's state.
"""

from __future__ import annotations

import hashlib
import io
import json
import stat
from pathlib import Path
from typing import Any

import numpy as np
import torch

from autonesy.tools import safe_files

MAX_CHECKPOINT_BYTES = 1 << 30  # a state file larger than this is not ours: ignored


def fingerprint(*parts: Any) -> str:
    """A stable digest of ``parts``: JSON values, NumPy arrays (shape, dtype and bytes) or strings."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            array = np.ascontiguousarray(part)
            digest.update(f"array{array.shape}{array.dtype}".encode())
            digest.update(array.tobytes())
        else:
            digest.update(json.dumps(part, sort_keys=True, default=str).encode())
        digest.update(b"\0")
    return digest.hexdigest()


class TrainingStore:
    """The ``training/`` folder of one run: epoch states and finished rows, keyed by run name."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _path(self, key: str, suffix: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in key)
        return self.folder / f"{safe}{suffix}"

    def _read(self, path: Path) -> bytes | None:
        """The file's bytes, or None when it is missing, behind a link, not a regular file, or too large."""
        try:
            return safe_files.read_bytes(path, root=self.folder.parent, limit=MAX_CHECKPOINT_BYTES)
        except OSError:
            return None

    def _write(self, path: Path, data: bytes) -> None:
        root = self.folder.parent  # training/ itself may not be a link either
        found = safe_files.entry_stat(path, root=root)
        if found is not None and stat.S_ISLNK(found.st_mode):  # a planted link is ignored like a foreign state
            safe_files.remove(path, root=root)
        safe_files.write_bytes(path, data, root=root)

    def load_state(self, key: str, expected: str) -> dict[str, Any] | None:
        """The saved epoch state of run ``key`` if it was saved for the same fingerprint."""
        data = self._read(self._path(key, ".pt"))
        if data is None:
            return None
        try:
            state = torch.load(io.BytesIO(data), weights_only=True)
        except Exception:  # damaged or foreign: start afresh
            return None
        if not isinstance(state, dict) or state.get("fingerprint") != expected:
            return None
        return state

    def save_state(self, key: str, state: dict[str, Any]) -> None:
        """Replace run ``key``'s epoch state (``state`` holds its fingerprint)."""
        buffer = io.BytesIO()
        torch.save(state, buffer)
        self._write(self._path(key, ".pt"), buffer.getvalue())

    def load_row(self, key: str, expected: str) -> dict[str, Any] | None:
        """The finished result row of run ``key`` if it was recorded for the same fingerprint."""
        data = self._read(self._path(key, ".json"))
        if data is None:
            return None
        try:
            record = json.loads(data)
        except ValueError:
            return None
        if (
            not isinstance(record, dict)
            or record.get("fingerprint") != expected
            or not isinstance(record.get("row"), dict)
        ):
            return None
        return record["row"]

    def discard(self, key: str) -> None:
        """Drop run ``key``'s epoch state (it could not be used)."""
        state = self._path(key, ".pt")
        if state.is_file() and not state.is_symlink():
            state.unlink()

    def save_row(self, key: str, expected: str, row: dict[str, Any]) -> None:
        """Record run ``key`` as finished with ``row``, and drop its epoch state."""
        self._write(self._path(key, ".json"), json.dumps({"fingerprint": expected, "row": row}).encode())
        self.discard(key)


__all__ = ["TrainingStore", "fingerprint"]
