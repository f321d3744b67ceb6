"""Names of trace events that more than one layer reads: the writer (``graph/tracer.py``), the
``replay:`` backend (``agents/llm/replay.py``) and the readers (``graph/trace.py``, the viewer)."""

LLM_CALL_EVENT = "llm_call"  # one LLM request: messages, prompt hash, response or error
TOOL_CALL_EVENT = "tool_call"  # a project tool a policy called itself during a step: which, what it said, how long
