"""A wall-clock deadline for a whole LLM call, enforced on the socket.

httpx's timeouts bound each network operation, not the call: a server that sends one byte every
1.5 s never trips a 3 s read timeout, and the call never ends. :func:`call_deadline` marks the calls
made inside it with a deadline (a context variable, so concurrent calls in other threads keep theirs);
:class:`DeadlineTransport`, the transport under every ``ChatOpenAI`` we build, bounds each operation
by the time left and, when the deadline passes, shuts the request's socket down from a timer thread:
the blocked read returns at once and the caller's own thread is free (no thread is left behind).
Connections are not kept alive, so each request's socket is known from its own connect.
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


class _GuardedStream(httpx.SyncByteStream):
    """The response body, read under the request's timer; closing it disarms the timer."""

    def __init__(self, stream: httpx.SyncByteStream, timer: threading.Timer) -> None:
        self._stream = stream
        self._timer = timer

    def __iter__(self) -> Iterator[bytes]:
        yield from self._stream

    def close(self) -> None:
        self._timer.cancel()
        self._stream.close()


class DeadlineTransport(httpx.BaseTransport):
    """``httpx.HTTPTransport`` without kept-alive connections, holding each request to the deadline of
    :func:`call_deadline` (requests outside one are sent as they are)."""

    def __init__(self) -> None:
        self._transport = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = _DEADLINE.get()
        if deadline is None:
            return self._transport.handle_request(request)
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
        assert isinstance(response.stream, httpx.SyncByteStream)
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_GuardedStream(response.stream, timer),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._transport.close()
