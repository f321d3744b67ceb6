"""``ReplayBackend``: answers recorded in a trace, replayed by prompt hash.

A trace is JSONL.  Every line that is an object with ``"event": "llm_call"``, a string
``"prompt_hash"`` and a ``"response"`` (an ``LLMResponse`` dict) is a recorded answer; other lines
are ignored (so a whole run trace can be passed).  A prompt recorded several times is answered
with its recorded answers in order.  Exact re-runs and deterministic tests build on this.

Grammar decoding: a call's prompt hash covers its request parameters, so the grammar a call was
decoded under (the dialect's field, e.g. llama.cpp's ``grammar``) is part of its identity.  The
backend takes the ``grammar_dialect`` and the token budget (``default_params["max_tokens"]``,
which bounds a grammar's lines) recorded with the trace's grammar-decoded calls (their
``decoding``), so a policy replaying with ``--decoding grammar`` builds the same grammar, sends the
same parameters and meets the same hashes; :func:`recorded_decoding` is the decoding a trace was recorded with
(``run --llm replay:…`` defaults to it).
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from autonesy.agents.llm.chat import ChatBackend
from autonesy.agents.llm.errors import LLMError
from autonesy.agents.llm.response import LLMResponse, normalize_messages, prompt_hash
from autonesy.tools import safe_files
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.registry import provider
from autonesy.tools.trace_events import LLM_CALL_EVENT


def _recorded_events(path: Path) -> list[dict[str, Any]]:
    """The trace's ``llm_call`` records that carry a prompt hash and a response, in file order."""
    try:
        # the file named is followed where it leads; a FIFO or device is refused, never waited on; size capped
        lines = safe_files.read_text(Path(path).resolve()).splitlines()
    except OSError as exc:
        raise LLMError("config", f"cannot read the replay trace {path}: {exc.strerror or exc}") from None
    events = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue  # e.g. a last line cut short by a crash, or a crafted one nested a million deep
        if not isinstance(record, dict) or record.get("event") != LLM_CALL_EVENT:
            continue
        if isinstance(record.get("prompt_hash"), str) and isinstance(record.get("response"), Mapping):
            events.append(record)
    return events


def read_recorded_calls(path: str | Path) -> list[tuple[str, LLMResponse]]:
    """The (prompt_hash, response) pairs of a trace, in file order."""
    return _calls(_recorded_events(Path(path)))


def _calls(events: list[dict[str, Any]]) -> list[tuple[str, LLMResponse]]:
    calls = []
    for record in events:
        try:
            calls.append((record["prompt_hash"], LLMResponse.from_dict(record["response"])))
        except (LLMError, TypeError):
            continue
    return calls


def _grammar_decodings(events: list[dict[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        record["decoding"]
        for record in events
        if isinstance(record.get("decoding"), Mapping) and record["decoding"].get("mode") == "grammar"
    ]


def _only(values: set[Any]) -> Any:
    """The one value recorded (one run talks to one server with one budget), else ``None``."""
    return values.pop() if len(values) == 1 else None


def recorded_decoding(path: str | Path) -> str:
    """``grammar`` when the trace holds grammar-decoded calls, else ``free`` (also for a trace
    that cannot be read: building the backend reports that)."""
    try:
        return "grammar" if _grammar_decodings(_recorded_events(Path(path))) else "free"
    except LLMError:
        return "free"


class ReplayBackend(ChatBackend):
    """Answers from a recorded trace; a prompt with no (or no more) recorded answer is an
    ``LLMError`` of kind ``config``.  Replayed answers come back with ``cached=True``."""

    def __init__(self, trace_path: str | Path) -> None:
        self.trace_path = Path(trace_path)
        self.endpoint = f"replay:{self.trace_path}"
        events = _recorded_events(self.trace_path)
        calls = _calls(events)
        decodings = _grammar_decodings(events)
        self.grammar_dialect = _only({str(d.get("dialect")) for d in decodings}) or "none"
        budget = _only({d.get("token_budget") for d in decodings})
        self.default_params = {"max_tokens": budget} if isinstance(budget, int) else {}
        self._answers: dict[str, deque[LLMResponse]] = defaultdict(deque)
        self._recorded: dict[str, int] = defaultdict(int)
        for key, response in calls:
            self._answers[key].append(response)
            self._recorded[key] += 1
        models = sorted({r.model for _, r in calls if r.model})
        self.model = models[0] if len(models) == 1 else ("+".join(models) if models else "replay")
        self.label = self.endpoint
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return sum(self._recorded.values())

    def complete(self, messages: Sequence[Mapping[str, str]], *, cache_salt: str = "", **params: Any) -> LLMResponse:
        """The recorded answer to this exact prompt (in recorded order when it is asked again); a prompt never
        recorded, or asked more often than recorded, is an ``LLMError``."""
        key = prompt_hash(normalize_messages(messages), params)
        with self._lock:
            queue = self._answers.get(key)
            if queue:
                return replace(queue.popleft(), cached=True)
        recorded = self._recorded.get(key, 0)
        if recorded:
            raise LLMError(
                "config",
                f"all {recorded} recorded answer(s) for this prompt (hash {key[:12]}) in {self.trace_path} were already used",
                endpoint=self.endpoint,
            )
        raise LLMError(
            "config",
            f"no recorded answer for this prompt (hash {key[:12]}) in {self.trace_path} ({len(self)} recorded call(s))",
            endpoint=self.endpoint,
        )


@provider("replay")
def replay_backend(spec: LLMSpec, settings: dict[str, Any]) -> ReplayBackend:  # noqa: ARG001 - nothing to set
    """``replay:TRACE.jsonl``: the answers recorded in a trace."""
    return ReplayBackend(spec.path)
