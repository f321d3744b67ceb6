"""The Ray executor against a real cluster started as a user starts one (``ray start --head``, here
with token authentication on, as Ray recommends): without the token settings a sweep fails in one
line that names the fix; with them it gives the same table as the local executor. Skipped, with
the reason, where Ray is not installed or the cluster cannot start."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autonesy.graph.results import read_results
from autonesy.graph.sweep.executors import ray_available

pytestmark = pytest.mark.skipif(
    not ray_available(), reason="Ray is not installed (optional extra: pip install 'autonesy-agent[ray]')"
)
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """A one-node cluster with token authentication; its address and the environment that holds its token."""
    home = Path(tempfile.mkdtemp(prefix="rayhome"))
    temp = tempfile.mkdtemp(prefix="r", dir="/tmp")  # short: Ray's Unix sockets live under it
    env = {**os.environ, "HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_AUTH_MODE", None)
    ray = str(BIN / "ray")
    subprocess.run([ray, "get-auth-token", "--generate"], env=env, capture_output=True, timeout=120, check=True)
    port = free_port()
    head = subprocess.Popen(
        [ray, "start", "--head", "--block", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
        + ["--disable-usage-stats", f"--temp-dir={temp}"],
        env={**env, "RAY_AUTH_MODE": "token"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and head.poll() is None:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(1)
    else:
        head.kill()
        pytest.skip("a local Ray cluster did not start within 180 s")
    time.sleep(3)  # the raylet registers after the GCS listens
    try:
        yield f"127.0.0.1:{port}", env
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def sweep(out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    args = ["sweep", "--policy", "expert", "--tasks", "fashion", "--formats", "dimacs,nat", "--prompts", "zs"]
    return subprocess.run(
        [str(BIN / "autonesy-agent"), *args, "--details", "detailed", "--out", str(out), "--quiet", *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_cluster_with_token_auth_refuses_in_one_line_that_names_the_fix(cluster, tmp_path):
    address, env = cluster
    done = sweep(tmp_path / "s", env, "--executor", "ray", "--ray-address", address)
    assert done.returncode == 1
    assert "RAY_AUTH_MODE=token" in done.stderr and "InvalidAuthToken" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.strip()]) <= 3, done.stderr


def test_with_the_token_the_cluster_gives_the_local_table(cluster, tmp_path):
    address, env = cluster
    local = sweep(tmp_path / "local", env)
    assert local.returncode == 0, local.stderr
    remote = sweep(tmp_path / "ray", {**env, "RAY_AUTH_MODE": "token"}, "--executor", "ray", "--ray-address", address)
    assert remote.returncode == 0, remote.stderr

    def table(path: Path) -> list[str]:
        keep = ("task", "format", "prompt", "detail", "status", "f1", "relation")
        return sorted(json.dumps({k: row.get(k) for k in keep}, sort_keys=True) for row in read_results(path))

    assert len(table(tmp_path / "local")) == 2 and table(tmp_path / "ray") == table(tmp_path / "local")
