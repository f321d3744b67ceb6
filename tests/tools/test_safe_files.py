"""tools/safe_files.py against random trees of files, folders, links and FIFOs: any path through a link
(or ending on one, on a FIFO, on a folder) is refused and leaves everything as it was; any regular file
reached without a link is read exactly; writes replace, never write through. Both ways of opening are
tested: ``openat2`` and the ``O_NOFOLLOW`` walk used where the kernel lacks it."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools import safe_files
from autonesy.tools.safe_files import UnsafeFileError

NAMES = ("a", "b", "c")
OUTSIDE = b"outside: must never be read or written\n"


@pytest.fixture(params=["openat2", "walk"])
def opening(request, monkeypatch):
    """Each test runs with openat2 (where the kernel has it) and with the component walk."""
    if request.param == "walk":
        monkeypatch.setattr(safe_files, "_have_openat2", False)
    elif not safe_files._have_openat2:
        pytest.skip("this kernel has no openat2")
    return request.param


# a tree: path (tuple of names) -> ("file", bytes) | ("dir",) | ("link", target) | ("fifo",)
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(tuple)
entries = st.one_of(
    st.tuples(st.just("file"), st.binary(max_size=64)),
    st.tuples(st.just("dir")),
    st.tuples(st.just("fifo")),
    st.tuples(st.just("link"), st.sampled_from(["outside", "outside-dir", "a", "a/b", "../escape", "missing"])),
)
trees = st.dictionaries(paths, entries, max_size=12)


def build(root: Path, outside: Path, tree: dict) -> dict:
    """Make the tree under ``root`` (entries whose parent is not a folder are dropped); returns what was made."""
    made: dict = {}
    for path in sorted(tree, key=len):
        parent = path[:-1]
        if parent and made.get(parent, ("none",))[0] != "dir":
            continue
        if path in made:
            continue
        where = root.joinpath(*path)
        entry = tree[path]
        if entry[0] == "file":
            where.write_bytes(entry[1])
        elif entry[0] == "dir":
            where.mkdir()
        elif entry[0] == "fifo":
            os.mkfifo(where)
        else:
            target = {"outside": outside / "secret", "outside-dir": outside}.get(entry[1], entry[1])
            os.symlink(target, where)
        made[path] = entry
    return made


def expected(made: dict, path: tuple) -> str:
    """'file' (read exactly), 'refused' (a link, FIFO or folder on the way or at the end), 'missing'."""
    for depth in range(1, len(path)):
        kind = made.get(path[:depth], ("missing",))[0]
        if kind == "missing":
            return "missing"
        if kind != "dir":
            return "refused"
    kind = made.get(path, ("missing",))[0]
    return {"file": "file", "missing": "missing"}.get(kind, "refused")


def snapshot(folder: Path) -> dict:
    return {p: (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


@settings(max_examples=60, deadline=None)
@given(tree=trees, probe=paths)
def test_reads_follow_no_link_and_read_regular_files_exactly(tree, probe):
    for mode in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            root, outside = Path(tmp) / "root", Path(tmp) / "outside"
            root.mkdir()
            outside.mkdir()
            (outside / "secret").write_bytes(OUTSIDE)
            made = build(root, outside, tree)
            saved = safe_files._have_openat2
            safe_files._have_openat2 = mode and saved
            try:
                for path in [*made, probe]:
                    want = expected(made, path)
                    target = root.joinpath(*path)
                    if want == "file":
                        assert safe_files.read_bytes(target, root=root) == made[path][1]
                        assert b"\n".join(safe_files.read_lines(target, root=root)) == made[path][1].rstrip(b"\n")
                    elif want == "refused":
                        with pytest.raises(UnsafeFileError) as caught:
                            safe_files.read_bytes(target, root=root)
                        assert "\n" not in str(caught.value) and str(root) in str(caught.value)
                        with pytest.raises(UnsafeFileError):
                            next(safe_files.read_lines(target, root=root))
                    else:
                        with pytest.raises(FileNotFoundError):
                            safe_files.read_bytes(target, root=root)
            finally:
                safe_files._have_openat2 = saved


@settings(max_examples=60, deadline=None)
@given(tree=trees, probe=paths, data=st.binary(max_size=64))
def test_writes_replace_regular_files_and_never_write_through_a_link(tree, probe, data):
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "root", Path(tmp) / "outside"
        root.mkdir()
        outside.mkdir()
        (outside / "secret").write_bytes(OUTSIDE)
        made = build(root, outside, tree)
        before = snapshot(outside)
        want = expected(made, probe)
        target = root.joinpath(*probe)
        if want == "refused":
            with pytest.raises(UnsafeFileError):
                safe_files.write_bytes(target, data, root=root)
        else:  # a missing file (or missing folders on the way) is made; a regular file is replaced
            safe_files.write_bytes(target, data, root=root)
            assert target.read_bytes() == data and not target.is_symlink()
        assert snapshot(outside) == before
        assert not [p for p in root.rglob("*.tmp")], "no temporary file is left behind"


def test_a_fifo_is_refused_at_once_for_reading_writing_and_appending(tmp_path, opening):
    os.mkfifo(tmp_path / "pipe")
    for action in (
        lambda: safe_files.read_text(tmp_path / "pipe"),
        lambda: next(safe_files.read_lines(tmp_path / "pipe")),
        lambda: safe_files.append_text(tmp_path / "pipe", "x"),
        lambda: safe_files.write_text(tmp_path / "pipe", "x"),
    ):
        with pytest.raises(UnsafeFileError, match="pipe: a FIFO; refused"):
            action()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


def test_reads_are_capped_with_the_file_and_the_cap_named(tmp_path, opening):
    (tmp_path / "big").write_bytes(b"x" * 1001)
    assert safe_files.read_bytes(tmp_path / "big", limit=1001) == b"x" * 1001
    with pytest.raises(UnsafeFileError, match=r"big: larger than 1,000 bytes"):
        safe_files.read_bytes(tmp_path / "big", limit=1000)
    assert list(safe_files.read_lines(tmp_path / "big", limit=1001)) == [b"x" * 1001]
    with pytest.raises(UnsafeFileError, match=r"big: larger than 1,000 bytes"):
        list(safe_files.read_lines(tmp_path / "big", limit=1000))


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=60) | st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"\n\n"])).map(b"".join))
def test_lines_are_read_whole_whatever_the_chunks_cut(data):
    """A line across any number of chunks (chunks of 1, 3 and 7 bytes here) reads as one line: the lines are those
    of the whole file, the empty piece after a final newline left out."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines"
        path.write_bytes(data)
        expected = data.split(b"\n")
        if expected[-1] == b"":
            expected.pop()
        for chunk in (1, 3, 7):
            saved = safe_files.READ_CHUNK
            safe_files.READ_CHUNK = chunk
            try:
                assert list(safe_files.read_lines(path)) == expected
            finally:
                safe_files.READ_CHUNK = saved


def test_a_write_goes_through_a_fresh_temporary_name_each_time(tmp_path, monkeypatch, opening):
    planted = tmp_path / "outside"
    planted.write_text("keep")
    os.symlink(planted, tmp_path / "summary.json.tmp")  # the fixed name an older writer used
    names = []
    real_open = os.open

    def spy(name, flags, *args, **kwargs):
        if flags & os.O_EXCL:
            names.append(name)
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    safe_files.write_text(tmp_path / "summary.json", "one")
    safe_files.write_text(tmp_path / "summary.json", "two")
    assert (tmp_path / "summary.json").read_text() == "two" and planted.read_text() == "keep"
    assert len(names) == 2 and len(set(names)) == 2 and "summary.json.tmp" not in names


def test_appends_are_whole_lines_and_refuse_a_planted_link(tmp_path, opening):
    safe_files.append_text(tmp_path / "run" / "trace.jsonl", "one\n", root=tmp_path)
    safe_files.append_text(tmp_path / "run" / "trace.jsonl", "two\n", root=tmp_path)
    assert (tmp_path / "run" / "trace.jsonl").read_text() == "one\ntwo\n"
    (tmp_path / "keys").write_text("mine\n")
    os.symlink(tmp_path / "keys", tmp_path / "run" / "other.jsonl")
    with pytest.raises(UnsafeFileError, match="other.jsonl: a symbolic link"):
        safe_files.append_text(tmp_path / "run" / "other.jsonl", "theirs\n", root=tmp_path)
    assert (tmp_path / "keys").read_text() == "mine\n"


def test_output_dir_follows_the_users_existing_path_and_makes_the_rest_itself(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "home")  # e.g. a home folder reached through a link: the user's path
    made = safe_files.output_dir(tmp_path / "home" / "runs" / "one")
    assert made == tmp_path / "home" / "runs" / "one" and (real / "runs" / "one").is_dir()
    assert safe_files.output_dir(tmp_path / "home") == tmp_path / "home"  # an existing folder: used as named
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafeFileError, match="not a directory"):
        safe_files.output_dir(tmp_path / "file")


def test_make_dirs_refuses_a_link_below_the_root(tmp_path, opening):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "root-link")
    root = tmp_path / "sweep"
    root.mkdir()
    os.symlink(tmp_path / "elsewhere", root / "attempts")
    with pytest.raises(UnsafeFileError, match="attempts: a symbolic link where a folder was expected"):
        safe_files.make_dirs(root / "attempts" / "x", root=root)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_names_that_leave_the_root_are_refused(tmp_path):
    with pytest.raises(UnsafeFileError, match="not inside"):
        safe_files.read_text(tmp_path / "a" / ".." / ".." / "etc" / "passwd", root=tmp_path / "a")
    with pytest.raises(UnsafeFileError, match="not inside"):
        safe_files.read_text(Path("/etc/passwd"), root=tmp_path)


@pytest.mark.parametrize("content", ["random", "fifo", "dir", "link", "wal-link", "sqlite", "empty"])
def test_check_sqlite_refuses_what_sqlite_would_choke_or_block_on(tmp_path, content):
    import sqlite3

    path = tmp_path / "checkpoints.sqlite"
    if content == "random":
        path.write_bytes(os.urandom(3000))
    elif content == "fifo":
        os.mkfifo(path)
    elif content == "dir":
        path.mkdir()
    elif content == "link":
        os.symlink("/etc/passwd", path)
    elif content == "wal-link":
        (tmp_path / "keys").write_text("mine")
        os.symlink(tmp_path / "keys", tmp_path / "checkpoints.sqlite-wal")
    elif content == "sqlite":
        sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    else:
        path.write_bytes(b"")
    if content in ("sqlite", "empty"):
        safe_files.check_sqlite(path)
        return
    with pytest.raises(UnsafeFileError) as caught:
        safe_files.check_sqlite(path)
    assert "\n" not in str(caught.value) and "checkpoints.sqlite" in str(caught.value)


def test_predicates_and_removal_follow_no_link(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    os.symlink(tmp_path / "d", tmp_path / "l")
    assert safe_files.is_file(tmp_path / "d" / "f", root=tmp_path)
    assert not safe_files.is_file(tmp_path / "l" / "f", root=tmp_path)
    assert stat.S_ISLNK(safe_files.entry_stat(tmp_path / "l").st_mode)
    assert safe_files.entry_stat(tmp_path / "missing" / "f", root=tmp_path) is None
    with pytest.raises(UnsafeFileError):
        safe_files.remove(tmp_path / "l" / "f", root=tmp_path)
    safe_files.remove(tmp_path / "l")  # removes the link itself, not what it leads to
    assert (tmp_path / "d" / "f").exists() and not os.path.lexists(tmp_path / "l")
