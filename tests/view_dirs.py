"""Directories for the viewer's tests: a sweep by the scripted "known mistakes" LLM whose answers also
carry an XSS payload and (as a leaking LLM would) a secret from the environment, and a verification
run answered by the VifBench oracle (one violated constraint)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scripted_llm import MISTAKE_TASKS, ScriptedChatModel, mistakes_answer
from typer.testing import CliRunner

from autonesy.agents.llm import LangChainChatBackend, ResponseCache
from autonesy.graph.cli import app
from autonesy.graph.sweep.grid import SweepSpec
from autonesy.graph.sweep.run import run_sweep

SPEC = "http://scripted.test/v1@mistakes"
GRID = SweepSpec(tasks=MISTAKE_TASKS, formats=("dimacs", "nat"), llms=(SPEC,))
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
SECRET_NAME = "VIEWER_TEST_API_KEY"
SECRET = "sk-viewer-test-5ecret-0123456789"


def make_sweep(out: Path) -> Path:
    """The 16-attempt sweep of tests/graph/test_sweep.py (14 accepted, 2 rejected), answers + payload.
    Run with ``SECRET_NAME`` set to ``SECRET`` in the environment."""

    def answer(prompt: str) -> str:
        return f"{mistakes_answer(prompt)}\n{XSS} {SECRET}"

    model = ScriptedChatModel(answer=answer)
    backend = LangChainChatBackend(
        model, "http://scripted.test/v1", "mistakes", retries=1, cache=ResponseCache(out / "llm_cache.sqlite")
    )
    run_sweep(GRID, out, backends={SPEC: backend}, concurrency=2, progress=False)
    return out


def make_verification(tmp: Path) -> Path:
    """``verify`` of an unsat VifBench pair with the oracle LLM (its run directory is returned), and
    ``follow`` on the same instruction into ``tmp/follow``."""
    runner = CliRunner()
    data = tmp / "vifbench"
    result = runner.invoke(app, ["vifbench", "generate", "--out", str(data), "--count", "2", "--seed", "5"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (data / "vifbench.jsonl").read_text().splitlines()]
    record = next(r for r in records if r["verdict"] == "unsat")
    (tmp / "instruction.txt").write_text(record["instruction"])
    (tmp / "output.txt").write_text(record["output"])
    out = tmp / "verification"
    result = runner.invoke(
        app,
        [
            "verify",
            "--instruction",
            str(tmp / "instruction.txt"),
            "--output",
            str(tmp / "output.txt"),
            "--llm",
            f"oracle:{data / 'vifbench.jsonl'}",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    follow = tmp / "follow"
    result = runner.invoke(
        app,
        [
            "follow",
            "--instruction",
            str(tmp / "instruction.txt"),
            "--llm",
            f"oracle:{data / 'vifbench.jsonl'}",
            "--budget",
            "3",
            "--out",
            str(follow),
        ],
    )
    # exit 0 when the scripted writer satisfied the instruction within the budget, 1 when it did not:
    # either way a finished follow directory for the viewer
    assert result.exit_code in (0, 1), result.output
    assert json.loads((follow / "summary.json").read_text())["verdict"] in ("sat", "unsat")
    return out


@contextmanager
def serving(dirs, **options) -> Iterator[str]:
    """The viewer on a free loopback port in a thread; yields its URL."""
    import uvicorn

    from autonesy.graph.view.server import bind, create_app, url_of

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(dirs, **options), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.02)
            assert thread.is_alive(), "the viewer did not start"
        yield url_of(sock, "127.0.0.1")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
