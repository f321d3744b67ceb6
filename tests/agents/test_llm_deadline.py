"""Hostile endpoints (issue 27): ``--llm-timeout`` is a wall-clock deadline for the whole call, held
against a real server on 127.0.0.1 that trickles one byte every 1.5 s; an endless answer is refused at
the size cap; and the API key a server echoes back never reaches a file of the run directory, whatever
the key's variable is called."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from loopback_llm import Reply as LoopbackReply
from loopback_llm import completion_body
from typer.testing import CliRunner

from autonesy.agents.llm import LLMError, backend_from_spec
from autonesy.graph.cli import app

MESSAGES = [{"role": "user", "content": "hi"}]
BODY = json.dumps(completion_body(LoopbackReply(content="late answer"), "m", 0)).encode()


class Trickler:
    """A raw HTTP server that reads a request, then sends its reply one byte every ``gap_s`` seconds:
    from the first header byte (``phase="headers"``), or after whole headers (``phase="body"``)."""

    def __init__(self, phase: str, gap_s: float = 1.5) -> None:
        self.phase, self.gap_s = phase, gap_s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.requests = 0
        self.abandoned: list[float] = []  # when the client closed each connection
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
            )
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            headers = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)
            if self.phase == "body":
                conn.sendall(headers)
            reply = (headers if self.phase == "headers" else b"") + BODY
            if not self.gap_s:
                conn.sendall(reply)
                return
            conn.settimeout(self.gap_s)  # each recv below waits a gap (the client sends nothing more)
            for byte in reply:
                try:
                    conn.sendall(bytes([byte]))
                    if conn.recv(1) == b"":  # the client closed (a recv that times out: still there)
                        break
                except TimeoutError:
                    continue
                except OSError:
                    break
            self.abandoned.append(time.monotonic())

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.fixture(params=["headers", "body"])
def trickler(request) -> Iterator[Trickler]:
    server = Trickler(request.param)
    yield server
    server.close()


def test_a_trickling_server_is_abandoned_at_the_deadline(trickler: Trickler):
    backend = backend_from_spec(f"http://127.0.0.1:{trickler.port}/v1@m", timeout_s=3, retries=3, backoff_s=0.1)
    backend._get_chat_model()  # built before the clock starts, as a local server is started (~0.3 s, more under load)
    start = time.monotonic()
    with pytest.raises(LLMError) as caught:
        backend.complete(MESSAGES)
    took = time.monotonic() - start
    assert caught.value.kind == "deadline" and "within 3 s" in caught.value.message
    assert 2.9 <= took <= 4.0, took  # one request, abandoned at 3 s; no retry past the deadline
    assert trickler.requests == 1
    deadline = start + 3
    for _ in range(40):  # the server sees the connection closed within a gap of the deadline
        if trickler.abandoned:
            break
        time.sleep(0.1)
    assert trickler.abandoned and trickler.abandoned[0] - deadline < trickler.gap_s + 0.5


def test_abandoned_calls_leave_no_thread_behind():
    server = Trickler("body", gap_s=0.5)
    try:
        backend = backend_from_spec(f"http://127.0.0.1:{server.port}/v1@m", timeout_s=1, retries=1)
        before = threading.active_count()
        for _ in range(4):
            with pytest.raises(LLMError, match="within 1 s"):
                backend.complete(MESSAGES, cache_salt=str(time.monotonic()))
        time.sleep(1.0)  # the server's threads notice the closed connections
        assert threading.active_count() <= before + 1  # (the server's accept thread may be mid-loop)
    finally:
        server.close()


def test_a_slow_answer_inside_the_deadline_is_kept():
    server = Trickler("body", gap_s=0.0)  # the whole reply at once
    try:
        backend = backend_from_spec(f"http://127.0.0.1:{server.port}/v1@m", timeout_s=3, retries=1)
        assert backend.complete(MESSAGES).text == "late answer"
    finally:
        server.close()


def test_an_endless_answer_is_refused_past_the_size_cap():
    """A server that sends 1 GiB as fast as it can: refused at 32 MiB, long before the deadline."""
    listener = socket.create_server(("127.0.0.1", 0))
    sent: list[int] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (1 << 30))
            total, block = 0, b'{"x": "' + b"a" * (1 << 20)
            try:
                while total < 1 << 30:
                    conn.sendall(block)
                    total += len(block)
            except OSError:
                pass
            sent.append(total)

    threading.Thread(target=serve, daemon=True).start()
    backend = backend_from_spec(f"http://127.0.0.1:{listener.getsockname()[1]}/v1@m", timeout_s=60, retries=1)
    with pytest.raises(LLMError) as caught:
        backend.complete(MESSAGES)
    listener.close()
    assert caught.value.kind == "http_error" and "more than 32 MiB for one answer" in caught.value.message
    for _ in range(50):
        if sent:
            break
        time.sleep(0.1)
    assert sent and sent[0] < 64 << 20  # the client stopped reading (and closed) soon after the cap


# ---------------------------------------------------------------------------------- key echo
SECRET = "qz-endpoint-cred-5b1f7e93a0c4"  # a value no file would hold by chance


class EchoHandler(BaseHTTPRequestHandler):
    """Answers with the request's Authorization header in the content, the reasoning and the finish reason."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        reply = LoopbackReply(
            content=f"<cnf>\np cnf 10 1\n1 2 0\n</cnf>\nyour header: {auth}",
            reasoning=f"I saw {auth}",
            finish_reason=auth[-40:],
        )
        data = json.dumps(completion_body(reply, "m", 0)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_an_echoed_key_reaches_no_file_and_no_output(tmp_path: Path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("MY_ENDPOINT_CRED", SECRET)  # a name without KEY/TOKEN/SECRET/PASSWORD in it
        monkeypatch.setenv("HOME", str(tmp_path / "home"))  # every cache and data file it writes is searched too
        monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "cache"))
        config = tmp_path / "llm.toml"
        config.write_text(
            f'[llm]\nbase_url = "http://127.0.0.1:{server.server_address[1]}/v1"\nmodel = "m"\n'
            'api_key_env = "MY_ENDPOINT_CRED"\nretries = 1\n'
        )
        out = tmp_path / "run"
        args = ["run", "--task", "fashion", "--format", "dimacs", "--llm", str(config), "--out", str(out)]
        done = CliRunner().invoke(app, [*args, "--train", "none", "--max-repairs", "1"])
    finally:
        server.shutdown()
        server.server_close()
    assert done.exception is None or isinstance(done.exception, SystemExit), done.output
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"answer.txt", "trace.jsonl", "summary.json"} <= {p.name for p in files}, done.output
    assert any(p.suffix == ".sqlite" for p in files)
    answer = (out / "answer.txt").read_text()
    assert "your header: Bearer ***" in answer  # the echo arrived, without the key
    leaks = [p.name for p in files if SECRET.encode() in p.read_bytes()]
    assert leaks == [] and SECRET not in done.output
