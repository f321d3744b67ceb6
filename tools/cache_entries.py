"""Entries of a cache directory read back as claims, believed only when this user made them for this key.

A cache directory (``$AUTONESY_CACHE_DIR``) may be shared, copied from a colleague or writable by
others, and its file names are digests anyone can compute. So an entry read back is untrusted until
it passes every check, in this order:

- **Read safely** (:mod:`.safe_files`): a regular file directly below the cache folder, no link, never
  a FIFO or a device, at most ``limit`` bytes.
- **Self-describing**: the entry names its kind, its format version and the SHA-256 of the key material it
  was made for; any difference from what the caller asks is a different question, not an answer.
- **Made by this user**: an HMAC-SHA256 over all of that, under a secret key kept outside every cache
  directory (:func:`cache_key`: ``cache.key`` in the user config directory, created 0600). An entry
  written by anyone else — a shared or copied cache, an edited file — fails the check.

An entry that exists but fails is ignored (the caller recomputes and overwrites it) with one warning
line naming it, once per file and process: never believed, never fatal. A missing entry is silent.
The same signature (:func:`signature`) seals generated data's manifests and the scores in run summaries
(``graph/score_seal.py``). The threat model is in ``docs/caches.md``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Any

from autonesy.tools import safe_files
from autonesy.tools.config import APP_NAME

KEY_FILE = "cache.key"
KEY_BYTES = 32
ENTRY_LIMIT = 4 << 20  # bytes of one entry (a count of 2^1,000,000 is 250,000 hex digits)

logger = logging.getLogger(__name__)
_key_lock = threading.Lock()
_key: bytes | None = None
_warned: set[str] = set()


def key_path() -> Path:
    """Where this user's cache key lives: the user config directory, never inside a cache directory."""
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME)) / KEY_FILE


def cache_key() -> bytes:
    """This user's secret key for cache entries: read from :func:`key_path`, created there when missing.

    A key file that is not a private regular file of this user (a link, group- or world-accessible,
    another owner) is not used; neither is one that cannot be created (a read-only home). Then this
    process uses a key of its own: its entries are believed by itself only, nothing on disk is."""
    global _key
    with _key_lock:
        if _key is None:
            _key = _read_or_make_key(key_path())
        return _key


def _read_or_make_key(path: Path) -> bytes:
    try:
        safe_files.output_dir(path.parent)
        if safe_files.entry_stat(path, root=path.parent) is None:
            _publish_key(path)
        found = safe_files.entry_stat(path, root=path.parent)
        if found is None or found.st_uid != os.geteuid() or stat.S_IMODE(found.st_mode) & 0o077:
            raise safe_files.UnsafeFileError(f"{path}: not a private file of this user")
        key = safe_files.read_bytes(path, root=path.parent, limit=4 * KEY_BYTES)
        if len(key) < KEY_BYTES:
            raise safe_files.UnsafeFileError(f"{path}: shorter than {KEY_BYTES} bytes")
        return key
    except OSError as error:
        logger.warning("cache key unusable (%s): cached counts are believed in this process only", error)
        return secrets.token_bytes(KEY_BYTES)


def _publish_key(path: Path) -> None:
    """A new key, written whole to a private temporary file, then linked in: a process racing this one
    reads either no key or the whole key (the first link wins, the other process reads it)."""
    temporary = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            if os.write(fd, secrets.token_bytes(KEY_BYTES)) != KEY_BYTES:
                raise OSError(f"{temporary}: short write")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path, follow_symlinks=False)
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)


def key_digest(material: str) -> str:
    """The SHA-256 (hex) of an entry's key material: its file name and what it says it answers."""
    return hashlib.sha256(material.encode()).hexdigest()


def entry_path(folder: Path, material: str) -> Path:
    """The file that holds (or would hold) the entry for ``material``."""
    return folder / f"{key_digest(material)}.json"


def signature(data: Any) -> str:
    """This user's HMAC-SHA256 (hex) of ``data`` (JSON; key order does not matter)."""
    body = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hmac.new(cache_key(), body.encode(), hashlib.sha256).hexdigest()


def signed_by_this_user(data: Any, mac: Any) -> bool:
    """Whether ``mac`` is this user's :func:`signature` of ``data``."""
    return isinstance(mac, str) and hmac.compare_digest(mac, signature(data))


def _mac(kind: str, version: int, digest: str, data: Any) -> str:
    return signature([kind, version, digest, data])


def write_entry(folder: Path, kind: str, version: int, material: str, data: dict[str, Any]) -> None:
    """Store ``data`` (JSON; big integers as text) as the answer to ``material``, signed; a read-only or
    unsafe cache folder only costs the next call a recomputation."""
    digest = key_digest(material)
    entry = {"kind": kind, "version": version, "key": digest, "data": data, "mac": _mac(kind, version, digest, data)}
    try:
        safe_files.output_dir(folder)
        safe_files.write_text(entry_path(folder, material), json.dumps(entry), root=folder)
    except OSError:
        pass


def read_entry(folder: Path, kind: str, version: int, material: str, *, limit: int = ENTRY_LIMIT) -> dict | None:
    """The data stored for ``material``, or None: absent (silently) or untrusted (one warning line, see above)."""
    path = entry_path(folder, material)
    try:
        text = safe_files.read_text(path, root=folder, limit=limit)
    except FileNotFoundError:
        return None
    except OSError as error:
        distrust(path, str(error))
        return None
    why = _untrusted(text, kind, version, key_digest(material))
    if why:
        distrust(path, why)
        return None
    return json.loads(text)["data"]


def _untrusted(text: str, kind: str, version: int, digest: str) -> str:
    """Why the entry ``text`` is not to be believed as the answer to ``digest`` ("" when it is)."""
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
        return "not a cache entry"
    if (entry.get("kind"), entry.get("version"), entry.get("key")) != (kind, version, digest):
        return f"made for another question (not a {kind} entry of version {version} for this key)"
    if not signed_by_this_user([kind, version, digest, entry["data"]], entry.get("mac")):
        return "not written by this user: its signature does not match this user's cache key"
    return ""


def distrust(path: Path, why: str) -> None:
    """Say once per file and process that the entry at ``path`` is ignored, and why."""
    with _key_lock:
        if str(path) in _warned:
            return
        _warned.add(str(path))
    logger.warning("ignored untrusted cache entry %s (%s); recomputing", path, why)


__all__ = [
    "ENTRY_LIMIT",
    "KEY_FILE",
    "cache_key",
    "distrust",
    "entry_path",
    "key_digest",
    "key_path",
    "read_entry",
    "write_entry",
]
