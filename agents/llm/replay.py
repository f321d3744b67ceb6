"""``ReplayBackend``: answers recorded in a trace, replayed by prompt hash.

A trace is JSONL.  Every line that is an object with ``"event": "llm_call"``, a string
``"prompt_hash"`` and a ``"response"`` (an ``LLMResponse`` dict) is a recorded answer; other lines
are ignored (so a whole run trace can be passed).  A prompt recorded several times is answered
with its recorded answers in order.  Exact re-runs and deterministic tests build on this.
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

LLM_CALL_EVENT = "llm_call"


def read_recorded_calls(path: str | Path) -> list[tuple[str, LLMResponse]]:
    """The (prompt_hash, response) pairs of a trace, in file order."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise LLMError("config", f"cannot read the replay trace {path}: {exc.strerror or exc}") from None
    calls = []
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
        key, data = record.get("prompt_hash"), record.get("response")
        if not isinstance(key, str) or not isinstance(data, Mapping):
            continue
        try:
            calls.append((key, LLMResponse.from_dict(data)))
        except (LLMError, TypeError):
            continue
    return calls


class ReplayBackend(ChatBackend):
    """Answers from a recorded trace; a prompt with no (or no more) recorded answer is an
    ``LLMError`` of kind ``config``.  Replayed answers come back with ``cached=True``."""

    def __init__(self, trace_path: str | Path) -> None:
        self.trace_path = Path(trace_path)
        self.endpoint = f"replay:{self.trace_path}"
        calls = read_recorded_calls(self.trace_path)
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
