"""Run a test file again as an unprivileged user (tests that must hold for root and for a user alike).

As root: a system user is created (``useradd``, else ``nobody``), a private mount namespace makes the
interpreter and the repository reachable when their parents are not (e.g. a Python under /root), and
``setpriv`` drops to the user with a clean environment before pytest runs the file.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

NESTED_RUN = "AUTONESY_UNPRIVILEGED_RUN"
USER = "autonesy-sbx"


def unprivileged_uid() -> int:
    """The uid of the test user (created when missing), or nobody's."""
    try:
        return pwd.getpwnam(USER).pw_uid
    except KeyError:
        pass
    if shutil.which("useradd"):
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=False,
            capture_output=True,
        )
        try:
            return pwd.getpwnam(USER).pw_uid
        except KeyError:
            pass
    return 65534


def blocked_binds(paths: list[str], stage: Path) -> str:
    """Shell lines (in a private mount namespace) that make ``paths`` reachable through parents the user
    may not traverse: a 0755 tmpfs over the blocked parent, with the paths bound back into it."""
    lines, blocked = [], {}
    for path in paths:
        parts = Path(path).parts
        for depth in range(2, len(parts)):
            parent = str(Path(*parts[:depth]))
            if not os.stat(parent).st_mode & 0o001:
                blocked.setdefault(parent, []).append(path)
                break
    for index, (parent, inner) in enumerate(sorted(blocked.items())):
        for number, path in enumerate(inner):
            lines.append(f"mkdir -p {stage}/{index}-{number} && mount --bind {path} {stage}/{index}-{number}")
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {parent}")
        for number, path in enumerate(inner):
            lines.append(f"mkdir -p {path} && mount --bind {stage}/{index}-{number} {path}")
    return "\n".join(lines)


def run_file_as_user(test_file: str, stage: Path, deselect: str) -> subprocess.CompletedProcess:
    """pytest on ``test_file`` as the unprivileged user (``-k 'not (deselect)'``); skips where it cannot."""
    if os.geteuid() != 0:
        pytest.skip("already unprivileged: the tests above ran as this user")
    if not (shutil.which("unshare") and shutil.which("setpriv")):
        pytest.skip("needs util-linux unshare and setpriv")
    uid = unprivileged_uid()
    repo = Path(__file__).resolve().parents[1]
    pythonpath = os.environ.get("PYTHONPATH", "")
    needed = sorted(
        {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, str(repo))}
        | {p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)}
        | {os.path.realpath(p) for p in pythonpath.split(os.pathsep) if p and os.path.isdir(p)}
    )
    home = Path(tempfile.mkdtemp(prefix="autonesy-user-home-"))  # commands keep a cache in the user's home
    os.chown(home, uid, uid)
    inner = (
        f"{blocked_binds(needed, stage)}\n"
        f"exec setpriv --reuid={uid} --regid={uid} --clear-groups env -i PATH=/usr/bin:/bin "
        f"HOME={home} PYTHONDONTWRITEBYTECODE=1 PYTHONPATH={pythonpath} {NESTED_RUN}=1 "
        f"{sys.executable} -m pytest -q -x -n 0 -p no:cacheprovider {test_file} -k 'not ({deselect})'"
    )
    try:
        return subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-ec", inner],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)
