"""``LLMError``: every way an LLM call can fail, as one kind and one line.

Callers (graph nodes, the CLI) record ``kind`` and ``message`` in the trace instead of a
traceback.  ``classify`` maps the exceptions of openai / langchain / httpx / the stdlib to a kind
and says whether the failure is transient (worth a retry).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

from autonesy.tools.errors import AutonesyError

KINDS = ("refused", "dns", "timeout", "deadline", "http_error", "empty", "auth", "bad_request", "config", "other")


class LLMError(AutonesyError, RuntimeError):
    """An LLM call that gave no usable answer.

    ``kind`` is one of ``KINDS``; ``message`` is a single line.  ``transient`` says whether a
    retry could help; ``attempts`` how many requests were made; ``status`` the HTTP status
    when there was one; ``finish_reason`` the server's, for an empty answer (``length``: the
    token budget was spent before any answer).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        transient: bool = False,
        status: int | None = None,
        attempts: int | None = None,
        endpoint: str | None = None,
        model: str | None = None,
        finish_reason: str | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown LLMError kind {kind!r}")
        self.kind = kind
        self.message = one_line(message)
        self.transient = transient
        self.status = status
        self.attempts = attempts
        self.endpoint = endpoint
        self.model = model
        self.finish_reason = finish_reason
        super().__init__(self.message)

    def to_dict(self) -> dict:
        """The error as JSON data for traces (kind, message, HTTP status, attempts, endpoint, model)."""
        return {
            "kind": self.kind,
            "message": self.message,
            "status": self.status,
            "attempts": self.attempts,
            "endpoint": self.endpoint,
            "model": self.model,
        }


def one_line(text: str, limit: int = 500) -> str:
    """A text on one line and at most ``limit`` characters, for error messages."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace each secret (four characters or more) with ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 20:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _server_message(exc: BaseException) -> str:
    """The error text a server sent, if any (OpenAI-style ``{"error": {"message": ...}}``)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    message = getattr(exc, "message", None)
    return str(message) if message else str(exc)


def classify(exc: BaseException, *, endpoint: str = "", timeout_s: float | None = None) -> LLMError:
    """Turn any exception raised by a chat-model call into an ``LLMError``."""
    chain = _chain(exc)
    carried = next((e for e in chain if isinstance(e, LLMError)), None)  # raised under the client (the transport)
    if carried is not None:
        return carried
    where = f" at {endpoint}" if endpoint else ""
    names = {type(e).__name__ for e in chain}
    # 1) timeouts (openai.APITimeoutError, httpx.TimeoutException, socket.timeout, langchain ModelTimeoutError)
    if any(isinstance(e, (TimeoutError, socket.timeout)) for e in chain) or any(
        n.endswith("TimeoutError") or n.endswith("TimeoutException") or "Timeout" in n for n in names
    ):
        limit = f" after {timeout_s:g} s" if timeout_s else ""
        return LLMError("timeout", f"the LLM endpoint{where} did not answer{limit} (timeout)", transient=True)
    # 2) HTTP status errors
    status = next((s for s in map(_status_of, chain) if s is not None), None)
    if status is not None:
        detail = one_line(_server_message(exc), 200)
        if status in (401, 403):
            return LLMError(
                "auth", f"the LLM endpoint{where} rejected the API key (HTTP {status}): {detail}", status=status
            )
        if status == 429:
            return LLMError(
                "http_error",
                f"rate limited by the LLM endpoint{where} (HTTP 429): {detail}",
                status=status,
                transient=True,
            )
        if status >= 500:
            return LLMError(
                "http_error",
                f"the LLM endpoint{where} failed with HTTP {status}: {detail}",
                status=status,
                transient=True,
            )
        if status in (400, 404, 413, 422):
            return LLMError(
                "bad_request", f"the LLM endpoint{where} rejected the request (HTTP {status}): {detail}", status=status
            )
        return LLMError("http_error", f"the LLM endpoint{where} answered HTTP {status}: {detail}", status=status)
    # 3) connection failures (openai.APIConnectionError, httpx.ConnectError, ConnectionRefusedError, ...)
    unresolved = next((e for e in chain if isinstance(e, socket.gaierror)), None)
    if unresolved is not None:
        return LLMError(
            "dns", f"cannot resolve the LLM endpoint's host{where} ({one_line(str(unresolved), 120)})", transient=True
        )
    if any(isinstance(e, ConnectionError) for e in chain) or any(
        "Connect" in n or n in ("APIConnectionError", "RemoteProtocolError", "ReadError") for n in names
    ):
        reason = next((str(e) for e in chain if isinstance(e, OSError) and str(e)), "")
        reason = f" ({one_line(reason, 120)})" if reason else ""
        return LLMError(
            "refused", f"cannot connect to the LLM endpoint{where}: connection refused or lost{reason}", transient=True
        )
    # 4) malformed answers from the server (non-JSON body, missing choices, ...)
    malformed = "JSONDecodeError" in names or "'choices'" in str(exc) or "null value for 'choices'" in str(exc)
    if isinstance(exc, (ValueError, KeyError, TypeError)) and malformed:
        return LLMError("http_error", f"the LLM endpoint{where} sent a malformed answer: {one_line(str(exc), 200)}")
    return LLMError("other", f"LLM call{where} failed: {type(exc).__name__}: {one_line(str(exc), 200)}")
