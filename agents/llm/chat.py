"""``ChatBackend`` (what the agents call) and ``LangChainChatBackend`` (the one real implementation).

``LangChainChatBackend`` wraps any LangChain chat model — ``ChatOpenAI`` against an
OpenAI-compatible endpoint in production, langchain-core's fake chat models in tests — and adds
what every call needs: retries with exponential backoff on transient failures (tenacity), one-line
``LLMError``s instead of tracebacks, token usage and latency, reasoning text for reasoning models
whose ``content`` is empty, optional system-prompt folding, the response cache, a wall-clock deadline
for the whole call (``timeout_s``, retries included), and the API key removed from whatever the server
sends back (a server may echo the request's ``Authorization`` header into its answer).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from tenacity import RetryError, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from autonesy.agents.llm.cache import ResponseCache
from autonesy.agents.llm.errors import LLMError, classify, redact
from autonesy.agents.llm.response import LLMResponse, bounded_text, normalize_messages, prompt_hash
from autonesy.agents.llm.transport import call_deadline, past
from autonesy.tools.terminal_text import terminal_line

logger = logging.getLogger(__name__)


class ChatBackend:
    """What agents call: ``complete(messages, **params) -> LLMResponse``.

    ``label`` names the endpoint and model for traces and reports (never a key), ``model`` the
    model name, ``notice`` an optional sentence the CLI shows to the user (e.g. that the embedded
    model is a smoke-test model).  ``close()`` frees resources (a local server); backends are
    context managers.  ``grammar_dialect`` says how the server takes a grammar for constrained
    decoding (see :mod:`.guided`; ``none``: it takes none).
    """

    label: str = ""
    model: str = ""
    endpoint: str = ""
    notice: str | None = None
    grammar_dialect: str = "none"

    def complete(self, messages: Sequence[Mapping[str, str]], *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """Answer ``messages``. ``cache_salt`` (never sent) tells apart calls whose prompts are
        identical but which must not share a cached answer, e.g. two repair rounds of one attempt."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the backend holds; the default holds nothing."""

    def __enter__(self) -> ChatBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r})"


def fold_system_prompt(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """Merge system messages into the first user turn (for chat templates without a system role).

    The system text comes first, separated from the user text by a blank line.  Without any user
    message the system text becomes one.
    """
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if not system:
        return rest
    prefix = "\n\n".join(s for s in system if s)
    for m in rest:
        if m["role"] == "user":
            m["content"] = f"{prefix}\n\n{m['content']}" if prefix else m["content"]
            return rest
    return [{"role": "user", "content": prefix}, *rest]


def to_langchain_messages(messages: list[dict[str, str]]) -> list[BaseMessage]:
    """Role/content dicts as LangChain message objects."""
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def _text_of(content: Any) -> str:
    """Plain text of a message content: a string, or the text blocks of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return "" if content is None else str(content)


def _reasoning_text(value: Any) -> str:
    """Reasoning as text from the shapes servers use: a string, ``{"summary": [...]}``, blocks."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "reasoning", "reasoning_content", "thinking", "content", "summary"):
            if key in value:
                return _reasoning_text(value[key])
        return ""
    if isinstance(value, list):
        return "\n".join(t for t in (_reasoning_text(v) for v in value) if t)
    return str(value)


def extract_reasoning(message: BaseMessage) -> str:
    """A reasoning model's thoughts from wherever its server put them (kept in the trace, never parsed as the answer)."""
    kwargs = message.additional_kwargs or {}
    for key in ("reasoning_content", "reasoning", "thinking"):
        text = _reasoning_text(kwargs.get(key))
        if text.strip():
            return text
    if isinstance(message.content, list):  # content blocks of type reasoning / thinking
        blocks = [b for b in message.content if isinstance(b, dict) and b.get("type") in ("reasoning", "thinking")]
        return _reasoning_text(blocks)
    return ""


MAX_REPORTED_TOKENS = 1 << 40  # a count past this (or negative, or not an integer) is a server's junk, not usage


def extract_usage(message: BaseMessage) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens from the response metadata, in either of LangChain's shapes; None when the server
    reports none, or a count that is not a plausible integer (a server's JSON is untrusted: the counts are summed,
    stored and shown)."""
    usage = getattr(message, "usage_metadata", None)
    if usage:
        return _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
    meta = getattr(message, "response_metadata", None) or {}
    raw = meta.get("token_usage") or meta.get("usage") or {}
    if isinstance(raw, Mapping) and raw:
        return _count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens"))
    return None, None


def _count(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value < MAX_REPORTED_TOKENS else None


class LangChainChatBackend(ChatBackend):
    """A ``ChatBackend`` over any LangChain chat model.

    - ``retries``: attempts in all (1 = no retry); transient failures (connection refused,
      timeout, HTTP 5xx, HTTP 429) are retried with exponential backoff starting at
      ``backoff_s`` and capped at ``max_backoff_s``.
    - ``default_params``: generation parameters sent with every call (temperature, max_tokens,
      ...); the call's own ``params`` override them.  Both are part of the cache key.
    - ``max_tokens_in_extra_body``: send ``max_tokens`` as a raw body field (``extra_body``)
      instead of the client's own parameter — what llama.cpp, Ollama, LM Studio and vLLM all
      read (ChatOpenAI itself sends ``max_completion_tokens``).
    - ``fold_system``: merge system messages into the first user turn.
    - ``timeout_s``: a wall-clock deadline for the whole call, retries and backoff included; an
      OpenAI-compatible client (``openai_chat_model``) abandons its request at that moment.
    - ``secrets``: strings (API keys) scrubbed from every error message and every answer.

    ``chat_model`` may be a zero-argument factory: it is then called once, on the first call the
    cache cannot answer (building a ``ChatOpenAI`` sets up HTTP clients, ~0.25 s).
    """

    def __init__(
        self,
        chat_model: BaseChatModel | Callable[[], BaseChatModel] | None,
        endpoint: str,
        model: str,
        *,
        retries: int = 3,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        fold_system: bool = False,
        cache: ResponseCache | None = None,
        default_params: Mapping[str, Any] | None = None,
        max_tokens_in_extra_body: bool = False,
        timeout_s: float | None = None,
        secrets: Iterable[str] = (),
        notice: str | None = None,
        grammar_dialect: str = "none",
    ) -> None:
        self._chat_model: BaseChatModel | None = chat_model if isinstance(chat_model, BaseChatModel) else None
        self._factory = None if isinstance(chat_model, BaseChatModel) else chat_model
        self._model_lock = threading.Lock()
        self.endpoint = endpoint
        self.model = model
        self.label = f"{endpoint}@{model}" if model else endpoint
        self.retries = max(1, int(retries))
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.fold_system = fold_system
        self.cache = cache
        self.default_params = {k: v for k, v in dict(default_params or {}).items() if v is not None}
        self.max_tokens_in_extra_body = max_tokens_in_extra_body
        self.timeout_s = timeout_s
        self.notice = notice
        self.grammar_dialect = grammar_dialect
        self._secrets = tuple(s for s in secrets if s)
        self.calls = 0  # requests sent to the model (retries included), for tests and stats
        self._count_lock = threading.Lock()

    # -- hooks for subclasses (the local backend creates its model lazily) -------------------
    def _get_chat_model(self) -> BaseChatModel:
        with self._model_lock:
            if self._chat_model is None:
                if self._factory is None:
                    raise LLMError("config", f"no chat model configured for {self.label}")
                try:
                    self._chat_model = self._factory()
                except LLMError:
                    raise
                except Exception as exc:  # e.g. pydantic validation of the client settings
                    raise LLMError(
                        "config", f"cannot set up the LLM client for {self.label}: {type(exc).__name__}"
                    ) from None
            return self._chat_model

    # -- the call --------------------------------------------------------------------------
    def _invoke_kwargs(self, effective: dict[str, Any]) -> dict[str, Any]:
        kwargs = dict(effective)
        if self.max_tokens_in_extra_body and "max_tokens" in kwargs:
            extra = dict(kwargs.pop("extra_body", None) or {})
            extra["max_tokens"] = kwargs.pop("max_tokens")
            kwargs["extra_body"] = extra
        return kwargs

    def _request(self, msgs: list[dict[str, str]], params: Mapping[str, Any]) -> tuple[list[dict[str, str]], dict]:
        """The messages and client arguments as they are sent (defaults merged, system folded)."""
        effective = {**self.default_params, **{k: v for k, v in params.items() if v is not None}}
        return (fold_system_prompt(msgs) if self.fold_system else msgs), self._invoke_kwargs(effective)

    def request_key(self, messages: Sequence[Mapping[str, str]], *, cache_salt: str = "", **params: Any) -> str:
        """The response cache's key of a call: the request as sent (messages, every decoding and
        sampling setting, a grammar included) and the salt; never the key, which is not part of it."""
        sent, kwargs = self._request(normalize_messages(messages), params)
        return prompt_hash(sent, {**kwargs, "_cache_salt": cache_salt} if cache_salt else kwargs)

    def _error(self, err: LLMError, attempts: int) -> LLMError:
        return LLMError(
            err.kind,
            redact(err.message, self._secrets),
            transient=err.transient,
            status=err.status,
            attempts=attempts,
            endpoint=self.endpoint,
            model=self.model,
            finish_reason=err.finish_reason,
        )

    def _deadline_error(self) -> LLMError:
        return LLMError(
            "deadline",
            f"the LLM endpoint at {self.endpoint} gave no answer within {self.timeout_s:g} s "
            "(--llm-timeout: a deadline for the whole call, retries included)",
        )

    def _redacted(self, response: LLMResponse) -> LLMResponse:
        """The response without any secret: it is cached, traced, checkpointed and shown."""
        if not self._secrets:
            return response
        return replace(
            response,
            text=redact(response.text, self._secrets),
            content=redact(response.content, self._secrets),
            reasoning=redact(response.reasoning, self._secrets),
            finish_reason=redact(response.finish_reason, self._secrets) if response.finish_reason else None,
        )

    def _log_retry(self, state: Any) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        message = redact(str(exc), self._secrets) if exc else "?"  # a server's words, printed on stderr
        logger.warning(
            "%s: attempt %d failed (%s); retrying in %.1f s",
            terminal_line(self.label),
            state.attempt_number,
            terminal_line(message),
            wait,
        )

    def complete(self, messages: Sequence[Mapping[str, str]], *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """One chat completion: answered from the cache when the same prompt was asked before, else sent with retries,
        recorded, and cached."""
        msgs = normalize_messages(messages)
        call_hash = prompt_hash(msgs, params)
        sent, kwargs = self._request(msgs, params)
        cache_key = self.request_key(messages, cache_salt=cache_salt, **params)
        if self.cache is not None:
            hit = self.cache.get(self.endpoint, self.model, cache_key)
            if hit is not None:  # redacted again: the cache may be shared, or older than the redaction
                return self._redacted(replace(hit, prompt_hash=call_hash, cached=True))

        lc_messages = to_langchain_messages(sent)
        attempts = 0
        deadline: float | None = None  # set once the model is ready (starting a local server is not the call)
        failed: LLMError | None = None  # the last attempt's error

        def attempt() -> tuple[BaseMessage, float]:
            nonlocal attempts, deadline, failed
            chat_model = self._get_chat_model()  # may start a local server; its errors are final
            if deadline is None and self.timeout_s is not None:
                deadline = time.monotonic() + self.timeout_s
            if past(deadline):  # it passed while waiting to retry: the failure that made us wait, final
                raise LLMError(failed.kind, failed.message, status=failed.status) if failed else self._deadline_error()
            attempts += 1
            with self._count_lock:
                self.calls += 1
            start = time.perf_counter()
            try:
                with call_deadline(deadline):
                    message = chat_model.invoke(lc_messages, **kwargs)
            except LLMError:
                raise
            except Exception as exc:  # every client failure becomes one LLMError
                if past(deadline):  # the request was abandoned at the deadline (or failed just then)
                    raise self._deadline_error() from None
                failed = classify(exc, endpoint=self.endpoint, timeout_s=self.timeout_s)
                raise failed from None
            return message, time.perf_counter() - start

        backoff = wait_exponential(multiplier=self.backoff_s, min=self.backoff_s, max=self.max_backoff_s)

        def wait(state: Any) -> float:  # never past the deadline: the attempt after it fails at once
            return backoff(state) if deadline is None else max(0.0, min(backoff(state), deadline - time.monotonic()))

        retrying = Retrying(
            stop=stop_after_attempt(self.retries),
            wait=wait,
            retry=retry_if_exception(lambda e: isinstance(e, LLMError) and e.transient),
            reraise=True,
            before_sleep=self._log_retry,
        )
        try:
            message, latency = retrying(attempt)
        except LLMError as err:
            raise self._error(err, attempts) from None
        except RetryError as err:  # not expected with reraise=True; kept for safety
            raise self._error(LLMError("other", str(err)), attempts) from None

        content, cut_content = bounded_text(_text_of(message.content))
        reasoning, cut_reasoning = bounded_text(extract_reasoning(message))
        text = content if content.strip() else reasoning
        finish = (getattr(message, "response_metadata", None) or {}).get("finish_reason")
        finish = finish if isinstance(finish, str) and len(finish) <= 64 else None  # a server's word: bounded
        if not text.strip():
            why = f" (finish_reason {finish})" if finish else ""
            raise self._error(
                LLMError(
                    "empty",
                    f"the model {self.model} at {self.endpoint} gave an empty answer{why}",
                    finish_reason=finish,
                ),
                attempts,
            )
        prompt_tokens, completion_tokens = extract_usage(message)
        response = LLMResponse(
            text=text,
            content=content,
            reasoning=reasoning,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=round(latency, 6),
            model=self.model,
            endpoint=self.endpoint,
            cached=False,
            prompt_hash=call_hash,
            attempts=attempts,
            finish_reason=finish,
            truncated_chars=cut_content if content.strip() else cut_reasoning,
        )
        response = self._redacted(response)
        if self.cache is not None:
            self.cache.put(self.endpoint, self.model, cache_key, response)
        return response


__all__ = [
    "ChatBackend",
    "LangChainChatBackend",
    "extract_reasoning",
    "extract_usage",
    "fold_system_prompt",
]
