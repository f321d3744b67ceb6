"""Download the datasets we may not redistribute (CIFAR-10, CIFAR-100, SUSHI3) for a user with internet.

``fetch_dataset(name, out_dir)`` prints the dataset's terms first (downloading means accepting
them), downloads the official archive with a short connect timeout, checks its MD5 where the
publisher's checksum is known, and unpacks it safely into ``out_dir`` (no member may land outside
it; links and device files are refused). The unpacked folder is what the loaders in
:mod:`.loaders` read: ``load_original(get_task("cifar10"), out_dir)``, or on the command line
``autonesy-agent data fetch cifar10 --out DIR`` then ``autonesy-agent data load cifar10 --data-dir DIR``
(``--out`` defaults to the data directory).

Offline, it fails fast with one line: "cannot reach <host>: this machine appears to be offline;
download <url> elsewhere and pass its directory with --data-dir". The host name is resolved in a
helper thread bounded by the timeout, so a resolver that hangs cannot hang the command.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import ssl
import tarfile
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from autonesy.tools.errors import AutonesyError

CONNECT_TIMEOUT_S = 10.0
CHUNK = 1 << 20
USER_AGENT = "autonesy-agent (dataset fetch)"


class FetchError(AutonesyError, RuntimeError):
    """A download or unpacking that failed; the message is one line saying why."""


class OfflineError(FetchError):
    """The dataset's host cannot be reached (no network, no DNS, connection refused or timed out)."""


@dataclass(frozen=True)
class ExternalDataset:
    """A dataset downloaded on first use: where from, its archive and checksum, and its terms of use."""

    name: str
    url: str
    archive: str
    md5: str | None
    folder: str  # the top-level folder the archive unpacks to
    homepage: str
    terms: str


EXTERNAL_DATASETS: dict[str, ExternalDataset] = {
    "cifar10": ExternalDataset(
        name="cifar10",
        url="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
        archive="cifar-10-python.tar.gz",
        md5="c58f30108f718f92721af3b95e74349a",
        folder="cifar-10-batches-py",
        homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
        terms=(
            "CIFAR-10 (Krizhevsky, 2009) is published without an explicit licence, so autonesy-agent does not "
            "redistribute it. If you use it, cite: Alex Krizhevsky, Learning Multiple Layers of Features from "
            "Tiny Images, Technical report, University of Toronto, 2009. See https://www.cs.toronto.edu/~kriz/cifar.html."
        ),
    ),
    "cifar100": ExternalDataset(
        name="cifar100",
        url="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
        archive="cifar-100-python.tar.gz",
        md5="eb9058c3a382ffc7106e4002c42a8d85",
        folder="cifar-100-python",
        homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
        terms=(
            "CIFAR-100 (Krizhevsky, 2009) is published without an explicit licence, so autonesy-agent does not "
            "redistribute it. If you use it, cite: Alex Krizhevsky, Learning Multiple Layers of Features from "
            "Tiny Images, Technical report, University of Toronto, 2009. See https://www.cs.toronto.edu/~kriz/cifar.html."
        ),
    ),
    "sushi": ExternalDataset(
        name="sushi",
        url="https://www.kamishima.net/asset/sushi3-2016.zip",
        archive="sushi3-2016.zip",
        md5=None,  # the publisher gives no checksum
        folder="sushi3-2016",
        homepage="https://www.kamishima.net/sushi/",
        terms=(
            "SUSHI Preference Data Sets (Toshihiro Kamishima): for research use only, and redistribution is "
            "forbidden; read README-en.txt in the archive and https://www.kamishima.net/sushi/ before use. Cite: "
            "T. Kamishima, Nantonac Collaborative Filtering: Recommendation Based on Order Responses, KDD 2003."
        ),
    ),
}

_FROM_SPEC = object()  # md5 default: the dataset's published checksum


def offline_message(url: str) -> str:
    """What to do when the download host cannot be reached: fetch the file elsewhere and point the loader at it."""
    host = urlsplit(url).hostname or url
    return (
        f"cannot reach {host}: this machine appears to be offline; download {url} elsewhere and pass its "
        "directory with --data-dir"
    )


def _resolve(host: str, port: int, timeout: float) -> None:
    """Resolve ``host`` within ``timeout`` seconds (getaddrinfo itself has no timeout).

    A daemon thread does the lookup, so a resolver that never answers cannot hold up the exit.
    """
    outcome: list[BaseException | None] = []

    def lookup() -> None:
        try:
            socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
            outcome.append(None)
        except BaseException as error:  # handed to the caller
            outcome.append(error)

    thread = threading.Thread(target=lookup, name="autonesy-dns", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        raise TimeoutError(f"resolving {host} took longer than {timeout:g} s")
    if outcome[0] is not None:
        raise outcome[0]


def _download(url: str, destination: Path, *, timeout: float, echo: Callable[[str], None]) -> str:
    """Stream ``url`` into ``destination``; returns the MD5 hex digest of the bytes written."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchError(f"{url}: only http and https downloads are supported")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        _resolve(parts.hostname or "", port, timeout)
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        raise FetchError(f"{url}: the server answered HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:  # TimeoutError is an OSError
        reason = getattr(error, "reason", error)
        if isinstance(reason, (ssl.SSLError, ssl.CertificateError)):
            raise FetchError(f"{url}: secure connection failed ({reason})") from None
        raise OfflineError(offline_message(url)) from None
    digest = hashlib.md5(usedforsecurity=False)
    total = int(response.headers.get("Content-Length") or 0)
    done = 0
    part = destination.with_name(destination.name + ".part")
    reported = 0  # last progress percentage printed (every 10 %, when the size is known)
    try:
        with response, open(part, "wb") as handle:
            for block in iter(lambda: response.read(CHUNK), b""):
                handle.write(block)
                digest.update(block)
                done += len(block)
                if total and (percent := min(100, done * 100 // total) // 10 * 10) > reported:
                    reported = percent
                    echo(f"  {percent}% of {total:,} bytes")
        if total and done != total:
            raise FetchError(f"{url}: the download stopped after {done} of {total} bytes; run the command again")
        os.replace(part, destination)
    except (OSError, TimeoutError) as error:
        raise FetchError(f"{url}: the download failed after {done} bytes ({error}); run the command again") from None
    finally:
        if part.exists():
            part.unlink()
    echo(f"downloaded {done:,} bytes to {destination}")
    return digest.hexdigest()


def _inside(root: Path, member: str) -> bool:
    pure = PurePosixPath(member)
    if pure.is_absolute() or ".." in pure.parts:
        return False
    return (root / pure).resolve().is_relative_to(root.resolve())


def extract_archive(archive: Path, out_dir: Path) -> None:
    """Unpack a .tar(.gz) or .zip into ``out_dir``; refuse members that would land outside it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    if not _inside(out_dir, info.filename):
                        raise FetchError(f"{archive}: member {info.filename!r} would land outside {out_dir}")
                    mode = (info.external_attr >> 16) & 0o170000
                    if mode and mode not in (0o100000, 0o040000):  # only regular files and folders
                        raise FetchError(f"{archive}: member {info.filename!r} is not a regular file")
                zf.extractall(out_dir)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                for member in tf.getmembers():
                    if not _inside(out_dir, member.name) or not (member.isfile() or member.isdir()):
                        raise FetchError(f"{archive}: member {member.name!r} is not a plain file inside {out_dir}")
                tf.extractall(out_dir, filter="data")
        else:
            raise FetchError(f"{archive}: neither a tar nor a zip archive")
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as error:
        raise FetchError(f"{archive}: a damaged archive ({error}); delete it and run the command again") from None


def fetch_dataset(
    name: str,
    out_dir: str | Path,
    *,
    url: str | None = None,
    md5: str | None | object = _FROM_SPEC,
    timeout: float = CONNECT_TIMEOUT_S,
    echo: Callable[[str], None] = print,
    force: bool = False,
) -> Path:
    """Download and unpack one of ``EXTERNAL_DATASETS`` into ``out_dir``; returns the unpacked folder.

    ``url`` and ``md5`` override the official ones (``md5=None`` skips the check). A folder already
    unpacked there is reused unless ``force``.
    """
    if name not in EXTERNAL_DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(EXTERNAL_DATASETS)}")
    spec = EXTERNAL_DATASETS[name]
    url = url or spec.url
    expected_md5 = spec.md5 if md5 is _FROM_SPEC else md5
    out_dir = Path(out_dir).expanduser()
    target = out_dir / spec.folder

    echo(f"Terms of use — {spec.terms}")
    echo("Downloading it means you accept these terms.")
    if target.is_dir() and any(target.iterdir()) and not force:
        echo(f"{target} already exists; pass --force to download it again")
        return target

    out_dir.mkdir(parents=True, exist_ok=True)
    archive = out_dir / spec.archive
    echo(f"fetching {url}")
    digest = _download(url, archive, timeout=timeout, echo=echo)
    if expected_md5 is not None and digest != expected_md5:
        archive.unlink(missing_ok=True)
        raise FetchError(f"{url}: MD5 {digest} does not match the published {expected_md5}; the file was deleted")
    if force and target.exists():
        shutil.rmtree(target)
    extract_archive(archive, out_dir)
    archive.unlink(missing_ok=True)
    if not target.is_dir():
        raise FetchError(f"{url}: the archive holds no {spec.folder}/ folder")
    echo(f"unpacked to {target}")
    return target
