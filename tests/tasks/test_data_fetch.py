"""Fetching CIFAR / SUSHI: offline failure and a real download, both on loopback only (no network)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import io
import socket
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import original_fixtures as F
import pytest

from autonesy.tasks.data import fetch
from autonesy.tasks.data.fetch import EXTERNAL_DATASETS, FetchError, OfflineError, fetch_dataset, offline_message
from autonesy.tasks.data.loaders import load_cifar, load_sushi
from autonesy.tasks.registry import get_task


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """A stdlib HTTP server on 127.0.0.1 serving ``directory`` from a thread; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def make_tarball(source: Path, folder: str, archive: Path) -> str:
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(source / folder, arcname=folder)
    return hashlib.md5(archive.read_bytes()).hexdigest()


def make_zip(source: Path, folder: str, archive: Path) -> str:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted((source / folder).rglob("*")):
            zf.write(path, path.relative_to(source).as_posix())
    return hashlib.md5(archive.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------- offline


def test_offline_fails_fast_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/cifar-10-python.tar.gz"
    lines: list[str] = []
    start = time.monotonic()
    with pytest.raises(OfflineError) as info:
        fetch_dataset("cifar10", tmp_path / "out", url=url, echo=lines.append)
    assert time.monotonic() - start < 2.0
    message = str(info.value)
    assert message == (
        f"cannot reach 127.0.0.1: this machine appears to be offline; download {url} elsewhere and pass "
        "its directory with --data-dir"
    )
    assert "\n" not in message
    assert lines[0].startswith("Terms of use") and "Krizhevsky" in lines[0]  # terms come before any download
    assert not any((tmp_path / "out").glob("*.part")) and not (tmp_path / "out" / "cifar-10-python.tar.gz").exists()


def test_unresolvable_host_is_offline(tmp_path, monkeypatch):
    def no_dns(*args, **kwargs):
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(
        OfflineError,
        match=r"^cannot reach www\.cs\.toronto\.edu: this machine appears to be offline; "
        r"download https://www\.cs\.toronto\.edu/~kriz/cifar-100-python\.tar\.gz elsewhere",
    ):
        fetch_dataset("cifar100", tmp_path, echo=lambda line: None)


def test_hanging_resolver_is_cut_off(tmp_path, monkeypatch):
    release = threading.Event()

    def slow_dns(*args, **kwargs):
        release.wait(5)
        raise socket.gaierror(-3, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", slow_dns)
    start = time.monotonic()
    try:
        with pytest.raises(OfflineError, match="cannot reach www.kamishima.net"):
            fetch_dataset("sushi", tmp_path, timeout=0.3, echo=lambda line: None)
        assert time.monotonic() - start < 2.0
    finally:
        release.set()


def test_offline_message_names_host_and_url():
    assert offline_message("https://example.org/a/b.zip").startswith("cannot reach example.org: ")


# ------------------------------------------------------------------------------------------- success


def test_fetch_cifar10_from_loopback_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    F.write_cifar10(tmp_path / "src")
    digest = make_tarball(tmp_path / "src", "cifar-10-batches-py", served / "cifar-10-python.tar.gz")
    lines: list[str] = []
    with serve(served) as base:
        folder = fetch_dataset(
            "cifar10", tmp_path / "out", url=f"{base}/cifar-10-python.tar.gz", md5=digest, echo=lines.append
        )
    assert folder == tmp_path / "out" / "cifar-10-batches-py"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch", "batches.meta"]
    )
    assert not (tmp_path / "out" / "cifar-10-python.tar.gz").exists()  # the archive is removed once unpacked
    assert lines[0].startswith("Terms of use")
    data = load_cifar(get_task("cifar10"), tmp_path / "out")  # the loader finds cifar-10-batches-py below out/
    assert data.test.x.shape == (3, 3, 32, 32)
    # a second call reuses the unpacked folder without any network access
    again = fetch_dataset(
        "cifar10", tmp_path / "out", url=f"http://127.0.0.1:{closed_port()}/x.tar.gz", echo=lines.append
    )
    assert again == folder and "already exists" in lines[-1]


def test_fetch_sushi_zip_from_loopback_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    F.write_sushi(tmp_path / "src")
    make_zip(tmp_path / "src", "sushi3-2016", served / "sushi3-2016.zip")
    assert EXTERNAL_DATASETS["sushi"].md5 is None
    with serve(served) as base:
        folder = fetch_dataset("sushi", tmp_path / "out", url=f"{base}/sushi3-2016.zip", echo=lambda line: None)
    assert (folder / "sushi3a.5000.10.order").exists()
    assert load_sushi(get_task("sushi"), tmp_path / "out").sizes == {"train": 10, "val": 1, "test": 1}


def test_checksum_mismatch_deletes_the_download(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    F.write_cifar10(tmp_path / "src")
    make_tarball(tmp_path / "src", "cifar-10-batches-py", served / "cifar-10-python.tar.gz")
    with serve(served) as base, pytest.raises(FetchError, match="does not match the published c58f3010"):
        fetch_dataset("cifar10", tmp_path / "out", url=f"{base}/cifar-10-python.tar.gz", echo=lambda line: None)
    assert not any((tmp_path / "out").iterdir())


def test_http_error_is_not_called_offline(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    with serve(served) as base, pytest.raises(FetchError, match="answered HTTP 404") as info:
        fetch_dataset("cifar100", tmp_path / "out", url=f"{base}/missing.tar.gz", echo=lambda line: None)
    assert not isinstance(info.value, OfflineError)


def test_archive_escaping_the_folder_is_refused(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    with tarfile.open(served / "evil.tar.gz", "w:gz") as tf:
        payload = b"owned"
        info = tarfile.TarInfo("../escaped.txt")
        info.size = len(payload)
        tf.addfile(info, io.BytesIO(payload))
    with serve(served) as base, pytest.raises(FetchError, match=r"'\.\./escaped\.txt' is not a plain file inside"):
        fetch_dataset("cifar10", tmp_path / "out", url=f"{base}/evil.tar.gz", md5=None, echo=lambda line: None)
    assert not (tmp_path / "escaped.txt").exists()


def test_archive_without_the_expected_folder(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (tmp_path / "src" / "other").mkdir(parents=True)
    (tmp_path / "src" / "other" / "file.txt").write_text("x")
    make_zip(tmp_path / "src", "other", served / "sushi3-2016.zip")
    with serve(served) as base, pytest.raises(FetchError, match="holds no sushi3-2016/ folder"):
        fetch_dataset("sushi", tmp_path / "out", url=f"{base}/sushi3-2016.zip", echo=lambda line: None)


def test_unknown_dataset_and_official_urls():
    with pytest.raises(ValueError, match="choose one of cifar10, cifar100, sushi"):
        fetch_dataset("mnist", "/nonexistent", echo=lambda line: None)
    assert EXTERNAL_DATASETS["cifar10"].url == "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    assert EXTERNAL_DATASETS["cifar100"].url == "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    assert EXTERNAL_DATASETS["sushi"].url.endswith("/sushi3-2016.zip")
    assert all(spec.terms for spec in EXTERNAL_DATASETS.values())
    assert fetch.CONNECT_TIMEOUT_S <= 10


# ----------------------------------------------------------------------------------------------- CLI


def test_cli_fetch_offline_exits_1_with_one_line(tmp_path, monkeypatch):
    import dataclasses

    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    url = f"http://127.0.0.1:{closed_port()}/cifar-10-python.tar.gz"
    monkeypatch.setitem(EXTERNAL_DATASETS, "cifar10", dataclasses.replace(EXTERNAL_DATASETS["cifar10"], url=url))
    start = time.monotonic()
    monkeypatch.setenv("AUTONESY_DATA_DIR", str(tmp_path))  # --out defaults to the data directory
    result = CliRunner().invoke(app, ["data", "fetch", "cifar10"])
    assert time.monotonic() - start < 2.0
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {offline_message(url)}"]
    assert result.output.startswith("Terms of use")


def test_cli_fetch_unknown_dataset(tmp_path):
    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    result = CliRunner().invoke(app, ["data", "fetch", "imagenet", "--out", str(tmp_path)])
    assert result.exit_code == 1 and "choose one of cifar10, cifar100, sushi" in result.output
