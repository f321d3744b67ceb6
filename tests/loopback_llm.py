"""A real OpenAI-compatible HTTP server on 127.0.0.1 for integration tests (stdlib only).

    with LoopbackLLM(["first answer", "second answer"]) as server:
        backend = backend_from_spec(f"{server.base_url}@test-model")
        backend.complete([{"role": "user", "content": "hi"}]).text   # "first answer"
        server.requests[0]["json"]["messages"]                        # what the client sent

Each canned answer is used for one request, in order (the last one repeats).  An answer is
- a ``str``: the assistant content, with usage counts;
- a ``Reply``: content, reasoning, usage, HTTP status, an error body, a delay before answering;
- a callable ``(request_json) -> str | Reply`` (a handler computing the answer).
``server.requests`` lists every request received (path, headers, parsed JSON body, and the ``usage``
the server reported when it answered) and
``server.count`` counts the chat-completion requests.  ``GET /v1/models`` answers too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = "ok"
    reasoning: str | None = None  # sent as message.reasoning_content (vLLM / llama.cpp style)
    prompt_tokens: int = 11
    completion_tokens: int = 7
    status: int = 200
    error: str | None = None  # error message for a non-200 status
    delay_s: float = 0.0
    finish_reason: str = "stop"
    extra: dict[str, Any] = field(default_factory=dict)  # more fields merged into the message


Answer = str | Reply | Callable[[dict], "str | Reply"]


def completion_body(reply: Reply, model: str, index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    message.update(reply.extra)
    return {
        "id": f"chatcmpl-loopback-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


class LoopbackLLM:
    """An OpenAI-compatible chat-completions server in a thread, on a free loopback port."""

    def __init__(
        self, answers: Sequence[Answer] | Answer = ("ok",), *, model: str = "test-model", port: int = 0
    ) -> None:
        if isinstance(answers, (str, Reply)) or callable(answers):
            answers = [answers]
        self.answers: list[Answer] = list(answers)
        self.model = model
        self._port = port  # 0: a free port; a given one lets a test bring an endpoint up where it was down
        self.requests: list[dict[str, Any]] = []
        self.count = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def reset(self, answers: Sequence[Answer] | Answer = ("ok",)) -> LoopbackLLM:
        """New canned answers and cleared counters (to reuse one server across tests: clients
        for the same URL are cached by langchain-openai, which saves ~0.25 s of TLS setup each)."""
        if isinstance(answers, (str, Reply)) or callable(answers):
            answers = [answers]
        with self._lock:
            self.answers = list(answers)
            self.requests = []
            self.count = 0
        return self

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, model: str | None = None) -> str:
        """The ``--llm`` spec for this server."""
        return f"{self.base_url}@{model or self.model}"

    def start(self) -> LoopbackLLM:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes: avoid a 40 ms stall

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                entry: dict[str, Any] = {"path": self.path, "headers": dict(self.headers), "json": body}
                with owner._lock:
                    index = owner.count
                    owner.requests.append(entry)
                    if self.path.rstrip("/").endswith("/chat/completions"):
                        owner.count += 1
                    answer = owner.answers[min(index, len(owner.answers) - 1)] if owner.answers else "ok"
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                if body is None:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                reply = answer(body) if callable(answer) else answer
                if isinstance(reply, str):
                    reply = Reply(content=reply)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    message = reply.error or f"canned HTTP {reply.status}"
                    self._send(
                        reply.status, {"error": {"message": message, "type": "server_error", "code": reply.status}}
                    )
                    return
                answered = completion_body(reply, body.get("model") or owner.model, index)
                entry["usage"] = answered["usage"]
                self._send(200, answered)

        self._server = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def unused_loopback_port() -> int:
    """A loopback port nobody listens on (bound, read, released)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
