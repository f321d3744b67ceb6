"""The HTTP transport under every ``ChatOpenAI`` we build: a wall-clock deadline for the whole call,
enforced on the socket, and a cap on the size of an answer.

httpx's timeouts bound each network operation, not the call: a server that sends one byte every
1.5 s never trips a 3 s read timeout, and the call never ends. :func:`call_deadline` marks the calls
made inside it with a deadline (a context variable, so concurrent calls in other threads keep theirs);
:class:`BoundedTransport` bounds each operation by the time left and, when the deadline passes, shuts
the request's socket down from a timer thread: the blocked read returns at once and the caller's own
thread is free (no thread is left behind). Connections are not kept alive, so each request's socket
is known from its own connect. A response body past ``MAX_RESPONSE_BYTES`` is refused as it arrives
(the client would otherwise hold all of it in memory before any answer is cut to size).
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

from autonesy.agents.llm.errors import LLMError

MAX_RESPONSE_BYTES = 32 << 20  # an answer is cut at 400,000 characters; its JSON, reasoning included, is far less
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("llm_call_deadline", default=None)
_STREAM_EVENTS = {"connection.connect_tcp.complete", "connection.start_tls.complete"}


@contextlib.contextmanager
def call_deadline(deadline: float | None) -> Iterator[None]:
    """Requests made inside (in this thread or context) are abandoned at ``deadline`` (``time.monotonic``)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def past(deadline: float | None) -> bool:
    """Whether ``deadline`` has passed (never, for no deadline)."""
    return deadline is not None and time.monotonic() >= deadline


class _Abort:
    """The sockets one request opened, shut down together when its deadline passes."""

    def __init__(self) -> None:
        self.streams: list[Any] = []
        self.lock = threading.Lock()
        self.fired = False

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event in _STREAM_EVENTS and info.get("return_value") is not None:
            with self.lock:
                self.streams.append(info["return_value"])
                if self.fired:  # connected just as the deadline passed
                    self._shut(info["return_value"])

    def fire(self) -> None:
        with self.lock:
            self.fired = True
            for stream in self.streams:
                self._shut(stream)

    @staticmethod
    def _shut(stream: Any) -> None:
        sock = stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):  # closed already, or detached by TLS (its TLS socket is shut)
                socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain shutdown, also under an SSLSocket


class _BoundedStream(httpx.SyncByteStream):
    """The response body, refused past ``MAX_RESPONSE_BYTES`` and read under the request's timer (if any);
    closing it disarms the timer."""

    def __init__(self, stream: httpx.SyncByteStream, timer: threading.Timer | None) -> None:
        self._stream = stream
        self._timer = timer

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._stream:
            received += len(chunk)
            if received > MAX_RESPONSE_BYTES:
                raise LLMError(
                    "http_error", f"the LLM endpoint sent more than {MAX_RESPONSE_BYTES >> 20} MiB for one answer"
                )
            yield chunk

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._stream.close()


def _bounded(response: httpx.Response, timer: threading.Timer | None) -> httpx.Response:
    assert isinstance(response.stream, httpx.SyncByteStream)  # what a sync transport returns
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers,
        stream=_BoundedStream(response.stream, timer),
        extensions=response.extensions,
    )


class BoundedTransport(httpx.BaseTransport):
    """``httpx.HTTPTransport`` without kept-alive connections, holding each request to the deadline of
    :func:`call_deadline` (when there is one) and each response body to ``MAX_RESPONSE_BYTES``."""

    def __init__(self) -> None:
        self._transport = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _DEADLINE.get()
        if deadline is None:
            return _bounded(self._transport.handle_request(request), None)
        left = deadline - time.monotonic()
        if left <= 0:
            raise httpx.ConnectTimeout("the call's deadline passed before the request was sent", request=request)
        abort = _Abort()
        timeouts = {k: left if v is None else min(v, left) for k, v in request.extensions.get("timeout", {}).items()}
        request.extensions = {
            **request.extensions,
            "timeout": timeouts or dict.fromkeys(("connect", "read", "write", "pool"), left),
            "trace": abort.trace,
        }
        timer = threading.Timer(left, abort.fire)
        timer.daemon = True
        timer.start()
        try:
            response = self._transport.handle_request(request)
        except BaseException:
            timer.cancel()
            raise
        return _bounded(response, timer)

    def close(self) -> None:
        self._transport.close()
