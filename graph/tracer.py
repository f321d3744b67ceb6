"""The per-attempt JSONL trace, written event by event (each line handed to the OS at once, so a
killed process loses nothing); ``graph/trace.py`` reads it back.

Events: ``node`` (each node visit with its duration), ``llm_call`` (request messages, prompt hash,
response, or the LLM error: every call a policy made in the step), ``tool_call`` (a project tool a
policy called itself: check, oracle test, compare), ``repair_round`` (round, the error it answered, verdict, what
changed), ``autofix`` (fix names), ``resumed``, ``outcome``. Secrets found in the environment
(variables named like keys, tokens, secrets, passwords) are redacted from every line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from autonesy.agents.llm import prompt_hash
from autonesy.agents.policies import AgentTurn, ToolUse
from autonesy.graph.trace import TRACE_FILE, environment_secrets
from autonesy.tools import safe_files
from autonesy.tools.trace_events import LLM_CALL_EVENT, TOOL_CALL_EVENT

NODE_STEPS = {
    "formalize": "formalizing the description (an LLM call)",
    "check_syntax": "checking the answer",
    "repair": "asking the LLM to repair its answer",
    "reject_syntax": "rejecting: no parseable formula",
    "oracle_test": "testing the formula on the annotated labels",
    "semantic_repair": "asking the LLM to fix the counterexamples",
    "compile": "compiling the formula to an SDD",
    "evaluate": "scoring it against the expert formula (model counting)",
    "train": "training NeSy predictors on it",
}


class Tracer:
    """Appends one JSON line per event to ``trace.jsonl`` as it happens (a crash keeps what was written), secrets
    replaced by ``***``."""

    def __init__(self, run_dir: Path, progress: Callable[[str], None] | None = None) -> None:
        self.path = Path(run_dir) / TRACE_FILE
        safe_files.output_dir(run_dir)
        self.secrets = environment_secrets()
        self.progress = progress

    def starting(self, node: str) -> None:
        """Say which step begins (a progress line, not a trace event), so a long LLM call or count
        shows a sign of life."""
        if self.progress is not None:
            self.progress(f"… {NODE_STEPS.get(node, node)}")

    def event(self, event: str, **fields: Any) -> None:
        """Append one event; the line is scrubbed of secrets and written whole."""
        line = json.dumps({"event": event, "time": time.time(), **fields}, default=str, ensure_ascii=False)
        for secret in self.secrets:
            line = line.replace(secret, "***")
        # one write, closed at once: a killed process loses no event; a link planted as trace.jsonl is refused
        safe_files.append_text(self.path, line + "\n")

    def tool_use(self, use: ToolUse, **fields: Any) -> None:
        """Record a project tool a policy called itself (check, oracle test, compare)."""
        self.event(TOOL_CALL_EVENT, **use.to_dict(), **fields)

    def agent_turn(self, turn: AgentTurn, **fields: Any) -> None:
        """Record an LLM turn (request, response, usage, verdict); turns without an LLM are not traced."""
        if not turn.messages:  # no LLM involved (e.g. the expert policy's repair)
            return
        record = turn.to_dict()
        self.event(
            LLM_CALL_EVENT,
            prompt_hash=turn.response.prompt_hash if turn.response else prompt_hash(turn.messages),
            **record,
            **fields,
        )


class UnknownStateKey(RuntimeError):
    """A node returned a key its graph's state does not have: a bug LangGraph would silently drop."""


def traced_node(emit: Callable[..., None], name: str, node: Callable[[Any], dict[str, Any]]):
    """Wrap a graph node so each visit is recorded as a ``node`` event with its duration and status; an
    update with a key the (pydantic) state does not declare raises :class:`UnknownStateKey` (LangGraph
    drops such keys without a word)."""

    def run(state: Any) -> dict[str, Any]:
        start = time.perf_counter()
        update = node(state)
        if isinstance(state, BaseModel):
            unknown = sorted(set(update) - set(type(state).model_fields))
            if unknown:
                raise UnknownStateKey(f"node {name!r} returned {', '.join(unknown)}, not in {type(state).__name__}")
        before = state.get("status") if isinstance(state, Mapping) else getattr(state, "status", None)
        emit("node", node=name, seconds=time.perf_counter() - start, status=update.get("status", before))
        return update

    return run
