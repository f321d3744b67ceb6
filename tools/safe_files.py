"""Files in directories that may come from elsewhere: run, sweep, verification and report directories.

A colleague's sweep or a cluster's run directory is data. A symbolic link inside it
(``report/by_llm.md`` → ``~/.ssh/authorized_keys``, ``formula.txt`` → a private file) must not make
us write or show a file outside it, and a FIFO must not make us wait forever. So every file below
such a directory is reached through this module, by the rule:

- **The root is trusted as a path.** Each function takes the file's ``path`` and the ``root`` it
  lies below (default: the file's own folder). The root's own components are resolved as the system
  does (``/tmp`` or a home directory may legitimately be reached through a link).
- **Below the root nothing is followed.** The path below the root is opened relative to the root's
  descriptor with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`` where the kernel has it (Linux
  5.6+), else component by component with ``O_NOFOLLOW``. A link anywhere below the root is refused,
  so is a name that leaves the root (``..`` is read lexically).
- **Regular files only.** Files are opened ``O_NONBLOCK`` and checked with ``fstat``: a FIFO, socket,
  device or directory is refused at once, never waited on. Reads are capped (``limit`` bytes).
- **Writes replace, never write through.** A file is written to a temporary file with a random name,
  created ``O_EXCL`` in the same folder, flushed (``fsync``) and renamed over the target; a target
  that exists as anything but a regular file is refused. Appends (``trace.jsonl``) open the file the
  same safe way with ``O_APPEND``.
- **Folders we create are ours.** ``make_dirs`` makes each missing folder with ``mkdir`` relative to
  its parent's descriptor and opens it ``O_NOFOLLOW|O_DIRECTORY``; ``output_dir`` does the same for a
  folder the user names (``--out D``) from its first ancestor that does not exist yet, so a link
  planted there while we create it is refused too.

Every refusal is an :class:`UnsafeFileError`: one line naming the path (an ``OSError`` too, so code
that treats an unreadable file as absent keeps doing so).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import secrets
import stat
import struct
from collections.abc import Iterator
from pathlib import Path

from autonesy.tools.errors import AutonesyError

READ_CHUNK = 1 << 20  # bytes read at a time
READ_LIMIT = 256 * 2**20  # bytes read from one file unless the caller says less (a 10,000-attempt trace is ~50 MB)
SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite opens these next to a database, by name

_RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x04, 0x08
_OPENAT2 = 437  # the same number on x86_64 and aarch64 (new system calls share one table)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FILE_FLAGS = os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK


class UnsafeFileError(AutonesyError, OSError):
    """A file or folder below a received directory that is refused: a link, not a regular file, too large, outside."""


def _libc_syscall():
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    call = libc.syscall
    call.restype = ctypes.c_long
    return call


_syscall = _libc_syscall()
_have_openat2 = _syscall is not None


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """``openat2`` below ``dir_fd`` following no link; None where the kernel lacks it (then the caller walks)."""
    global _have_openat2
    if not _have_openat2:
        return None
    how = struct.pack("QQQ", flags, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
    fd = _syscall(ctypes.c_long(_OPENAT2), ctypes.c_int(dir_fd), rel.encode(), how, ctypes.c_size_t(len(how)))
    if fd >= 0:
        return int(fd)
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):  # an old kernel, or a seccomp filter that hides the call
        _have_openat2 = False
        return None
    raise OSError(code, os.strerror(code), rel)


def _parts(path: str | Path, root: str | Path | None) -> tuple[Path, list[str]]:
    """(root, names below it) for ``path`` (``..`` taken lexically); refuses a path that leaves the root."""
    root = Path(root) if root is not None else Path(path).parent
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        raise UnsafeFileError(f"{path}: not inside {root}; refused") from None
    return root, [part for part in rel.as_posix().split("/") if part not in ("", ".")]


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return name
    return "a regular file"


def _refusal(path: str | Path, what: str) -> UnsafeFileError:
    return UnsafeFileError(f"{path}: {what}; refused (a received directory holds plain files and folders only)")


def _open_root(root: Path) -> int:
    return os.open(root, _DIR_FLAGS)


def _descend(root_fd: int, root: Path, names: list[str], *, create: bool) -> int:
    """A descriptor of the folder ``names`` below ``root_fd``, each step ``O_NOFOLLOW`` (made first with ``create``)."""
    fd = os.dup(root_fd)
    for depth, name in enumerate(names):
        try:
            if create:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                child = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                    raise _refusal(
                        root.joinpath(*names[: depth + 1]), f"{_kind(mode)} where a folder was expected"
                    ) from None
                raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        fd = child
    return fd


def _open_parent(root: Path, names: list[str], *, create: bool) -> int:
    """A descriptor of the folder that holds ``names[-1]`` below ``root`` (missing folders made when ``create``)."""
    root_fd = _open_root(root)
    try:
        return _descend(root_fd, root, names[:-1], create=create)
    finally:
        os.close(root_fd)


def _first_refused(root_fd: int, root: Path, names: list[str]) -> UnsafeFileError | None:
    """Why ``names`` below the root cannot be opened safely (for a precise message), if a component is to blame."""
    try:
        parent = _descend(root_fd, root, names[:-1], create=False)
    except UnsafeFileError as error:
        return error
    except OSError:
        return None
    try:
        mode = os.stat(names[-1], dir_fd=parent, follow_symlinks=False).st_mode
    except OSError:
        return None
    finally:
        os.close(parent)
    return None if stat.S_ISREG(mode) else _refusal(root.joinpath(*names), _kind(mode))


def _open(path: str | Path, root: str | Path | None, flags: int, *, create_parents: bool = False) -> int:
    """A descriptor of the regular file ``path`` below ``root``, no link followed, checked with ``fstat``."""
    root, names = _parts(path, root)
    if not names:
        raise _refusal(Path(path), "a directory")
    root_fd = _open_root(root)
    try:
        if create_parents and len(names) > 1:
            os.close(_descend(root_fd, root, names[:-1], create=True))
        try:
            fd = _openat2(root_fd, "/".join(names), flags | _FILE_FLAGS, 0o666)
            if fd is None:
                parent = _descend(root_fd, root, names[:-1], create=False)
                try:
                    fd = os.open(names[-1], flags | _FILE_FLAGS | os.O_NOFOLLOW, 0o666, dir_fd=parent)
                finally:
                    os.close(parent)
        except UnsafeFileError:
            raise
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.EXDEV, errno.EISDIR):
                raise _first_refused(root_fd, root, names) or _refusal(
                    root.joinpath(*names), "not a plain file"
                ) from None
            raise OSError(error.errno, error.strerror, str(root.joinpath(*names))) from None
    finally:
        os.close(root_fd)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _refusal(root.joinpath(*names), _kind(mode))
    return fd


def read_bytes(path: str | Path, *, root: str | Path | None = None, limit: int = READ_LIMIT) -> bytes:
    """The bytes of the regular file ``path`` below ``root``; more than ``limit`` bytes is refused."""
    fd = _open(path, root, os.O_RDONLY)
    chunks, size = [], 0
    try:
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise UnsafeFileError(f"{path}: larger than {limit:,} bytes, the cap for this file; refused")
    return b"".join(chunks)


def read_lines(path: str | Path, *, root: str | Path | None = None, limit: int = READ_LIMIT) -> Iterator[bytes]:
    """The lines of the regular file ``path`` below ``root`` (without their ``\\n``), read a chunk at a time so that
    a reader of a large file never holds all of it; past ``limit`` bytes the file is refused (the lines before have
    been read)."""
    fd = _open(path, root, os.O_RDONLY)
    try:
        pieces: list[bytes] = []  # of the line being read (one line can span many chunks)
        size = 0
        while chunk := os.read(fd, READ_CHUNK):
            size += len(chunk)
            if size > limit:
                raise UnsafeFileError(f"{path}: larger than {limit:,} bytes, the cap for this file; refused")
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                pieces.append(chunk[start:end])
                yield b"".join(pieces)
                pieces, start = [], end + 1
            pieces.append(chunk[start:])
        if any(pieces):
            yield b"".join(pieces)
    finally:
        os.close(fd)


def read_text(path: str | Path, *, root: str | Path | None = None, limit: int = READ_LIMIT) -> str:
    """The text (UTF-8, undecodable bytes replaced) of the regular file ``path`` below ``root``."""
    return read_bytes(path, root=root, limit=limit).decode("utf-8", errors="replace")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_bytes(path: str | Path, data: bytes, *, root: str | Path | None = None) -> None:
    """Replace ``path`` below ``root`` by ``data`` atomically (missing folders made); readers see the old file or the
    new one. A target that is a link, a folder or a FIFO is refused and left as it is."""
    root, names = _parts(path, root)
    if not names:
        raise _refusal(Path(path), "a directory")
    parent = _open_parent(root, names, create=True)
    target = root.joinpath(*names)
    try:
        try:
            mode = os.stat(names[-1], dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISREG(mode):
            raise _refusal(target, _kind(mode))
        tmp = f".{names[-1][:180]}.{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=parent)
        try:
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, names[-1], src_dir_fd=parent, dst_dir_fd=parent)  # replaces a link planted meanwhile
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
    except UnsafeFileError:
        raise
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(target)) from None
    finally:
        os.close(parent)


def write_text(path: str | Path, text: str, *, root: str | Path | None = None) -> None:
    """Replace ``path`` below ``root`` by ``text`` (UTF-8; a lone surrogate written as '?') atomically."""
    write_bytes(path, text.encode("utf-8", errors="replace"), root=root)


def open_append(path: str | Path, *, root: str | Path | None = None) -> int:
    """A descriptor for appending to the regular file ``path`` below ``root`` (created with its folders)."""
    return _open(path, root, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create_parents=True)


def append_text(path: str | Path, text: str, *, root: str | Path | None = None) -> None:
    """Append ``text`` (UTF-8) to ``path`` below ``root`` in one write, closed at once."""
    fd = open_append(path, root=root)
    try:
        _write_all(fd, text.encode("utf-8", errors="replace"))
    finally:
        os.close(fd)


def make_dirs(path: str | Path, *, root: str | Path | None = None) -> None:
    """Make the folder ``path`` below ``root`` and its missing parents; an existing link on the way is refused."""
    root, names = _parts(path, root)
    root_fd = _open_root(root)
    try:
        os.close(_descend(root_fd, root, names, create=True))
    finally:
        os.close(root_fd)


def output_dir(path: str | Path) -> Path:
    """Make the folder the user named (``--out D``) and return it. Its existing ancestors are the user's (followed);
    from the first one that does not exist down, each folder is made by us and opened ``O_NOFOLLOW``, so a link
    planted meanwhile is refused. An existing ``path`` is used as it is (what lies below it is checked on use)."""
    path = Path(path)
    anchor = path
    while not os.path.lexists(anchor) and anchor != anchor.parent:
        anchor = anchor.parent
    if anchor != path:
        make_dirs(path, root=anchor)
    elif not path.is_dir():
        raise UnsafeFileError(f"{path}: not a directory")
    return path


def entry_stat(path: str | Path, *, root: str | Path | None = None) -> os.stat_result | None:
    """The entry's own status (a link is not followed; no link may lead to it); None when it does not exist."""
    root, names = _parts(path, root)
    try:
        if not names:
            return os.stat(root)
        parent = _open_parent(root, names, create=False)
        try:
            return os.stat(names[-1], dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)
    except (FileNotFoundError, NotADirectoryError):
        return None


def is_file(path: str | Path, *, root: str | Path | None = None) -> bool:
    """Whether ``path`` is a regular file reached below ``root`` without any link."""
    try:
        found = entry_stat(path, root=root)
    except OSError:
        return False
    return found is not None and stat.S_ISREG(found.st_mode)


def remove(path: str | Path, *, root: str | Path | None = None) -> None:
    """Remove the file (or link) ``path`` below ``root`` if it exists; a link on the way is refused."""
    root, names = _parts(path, root)
    if not names:
        raise _refusal(Path(path), "a directory")
    try:
        parent = _open_parent(root, names, create=False)
    except FileNotFoundError:
        return
    try:
        os.unlink(names[-1], dir_fd=parent)
    except FileNotFoundError:
        pass
    finally:
        os.close(parent)


def check_sqlite(path: str | Path, *, root: str | Path | None = None) -> None:
    """Refuse an SQLite file below ``root`` before SQLite opens it by name: the database and its journal, WAL and
    shared-memory files must be absent or regular files, and a non-empty database must start with SQLite's header
    (random bytes, a FIFO that would block, a folder or a link are one line)."""
    for suffix in ("", *SQLITE_SIDE_FILES):
        name = Path(f"{path}{suffix}")
        found = entry_stat(name, root=root)
        if found is not None and not stat.S_ISREG(found.st_mode):
            raise _refusal(name, _kind(found.st_mode))
    found = entry_stat(path, root=root)
    if found is not None and found.st_size:
        fd = _open(path, root, os.O_RDONLY)
        try:
            head = os.read(fd, len(SQLITE_HEADER))
        finally:
            os.close(fd)
        if head != SQLITE_HEADER:
            raise UnsafeFileError(f"{path}: not an SQLite database (damaged, or from another program)")


__all__ = [
    "READ_LIMIT",
    "UnsafeFileError",
    "append_text",
    "check_sqlite",
    "entry_stat",
    "is_file",
    "make_dirs",
    "open_append",
    "output_dir",
    "read_bytes",
    "read_text",
    "remove",
    "write_bytes",
    "write_text",
]
