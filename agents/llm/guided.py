"""Grammar-constrained decoding: how each kind of server is asked to follow an answer grammar.

A backend names its ``grammar_dialect``; :func:`guided_params` turns a grammar (from
:mod:`autonesy.tools.grammar`) into the extra request fields that dialect reads, and
:func:`answer_text` turns what came back into a plain answer (only the JSON-schema fallback wraps it).

============  ===================================================================================
dialect       request
============  ===================================================================================
llama.cpp     ``grammar``: GBNF (llama.cpp's server and llama-cpp-python's, the embedded model)
vllm          ``structured_outputs: {grammar}``: the GBNF text, read by vLLM's xgrammar backend
              (vLLM ≥ 0.12; older servers read ``guided_grammar``: use ``vllm-legacy``)
vllm-legacy   ``guided_grammar``: the GBNF text (vLLM < 0.12)
sglang        ``ebnf``: the GBNF text (SGLang's xgrammar backend)
json_schema   ``response_format`` with a JSON schema ``{reasoning?, formula}`` whose ``formula``
              carries a bounded regular ``pattern`` of the block (OpenAI, Ollama, any server that
              only offers structured outputs); the answer is rebuilt as text with a ``<cnf>`` block
none          no constrained decoding: asking for grammar decoding is a one-line configuration error
============  ===================================================================================

Where the field names come from (read in the servers' sources, December 2026):

- llama-cpp-python ``llama_cpp/server/types.py``: ``CreateChatCompletionRequest.grammar: str``
  (GBNF, parsed by ``LlamaGrammar.from_string`` in ``server/app.py``); llama.cpp's own server reads
  the same ``grammar`` field. The integration test sends it to the real embedded server.
- vLLM ``vllm/sampling_params.py``: ``StructuredOutputsParams(json, regex, choice, grammar,
  json_object, structural_tag, ...)``, read from the request's ``structured_outputs`` object
  (``vllm/entrypoints/openai/chat_completion/protocol.py``); ``docs/features/structured_outputs.md``
  says ``guided_grammar`` and the other ``guided_*`` fields were removed in v0.12.0. The xgrammar
  backend (``vllm/v1/structured_output/backend_xgrammar.py``) compiles ``grammar`` with
  ``compile_grammar`` (GBNF-style EBNF, start rule ``root``) unless ``grammar_is_likely_lark`` finds
  no line with ``::=`` (then it is read as Lark): every rendered rule is one ``name ::= …`` line.
- SGLang ``python/sglang/srt/entrypoints/openai/protocol.py``: ``ChatCompletionRequest`` has
  top-level ``regex`` and ``ebnf`` strings ("extra parameters for SRT backend"), passed to the
  sampling parameters as ``ebnf``; a ``response_format`` of type ``json_schema`` takes
  ``{name, schema, strict}``. The xgrammar and llguidance grammar backends read EBNF; the outlines
  backend reads none (the server then refuses the request).
- OpenAI-style structured outputs (also vLLM and SGLang): ``response_format: {type: "json_schema",
  json_schema: {name, schema, strict}}``.
"""

from __future__ import annotations

import json
from typing import Any

from autonesy.agents.llm.errors import LLMError
from autonesy.agents.options import DECODING_MODES
from autonesy.tools.grammar import Grammar, to_gbnf, to_regex

DIALECTS = ("llama.cpp", "vllm", "vllm-legacy", "sglang", "json_schema", "none")
SCHEMA_DEPTH = 2  # nesting unrolled into a JSON-schema pattern (deeper formulas cannot be written there)
MAX_PATTERN_CHARS = 200_000


def check_decoding(mode: str, dialect: str, label: str) -> None:
    """``LLMError("config")`` when ``mode`` is unknown, or is ``grammar`` on a backend without a dialect."""
    if mode not in DECODING_MODES:
        raise LLMError("config", f"unknown decoding {mode!r}; choose one of {', '.join(DECODING_MODES)}")
    if dialect not in DIALECTS:
        raise LLMError("config", f"unknown grammar dialect {dialect!r}; choose one of {', '.join(DIALECTS)}")
    if mode == "grammar" and dialect == "none":
        raise LLMError(
            "config",
            f"{label or 'this LLM backend'} supports no grammar- or schema-constrained decoding known to autonesy; "
            f"use --decoding free, or name the server's dialect (grammar = {' | '.join(DIALECTS[:-1])}) "
            "in an [llm] TOML config",
        )


def _schema(grammar: Grammar) -> dict[str, Any]:
    for depth in range(SCHEMA_DEPTH, 0, -1):  # shallower nesting when the pattern gets too large
        pattern = to_regex(grammar, "body", depth=depth)
        if len(pattern) <= MAX_PATTERN_CHARS:
            break
    else:
        raise LLMError(
            "config",
            f"the answer grammar is too large for a JSON-schema pattern ({len(pattern):,} "
            "characters); use a server with grammar support, or --decoding free",
        )
    properties: dict[str, Any] = {"formula": {"type": "string", "pattern": f"^{pattern}$"}}
    if "reasoning" in grammar.rules:
        properties = {"reasoning": {"type": "string", "pattern": "^[^<]*$"}, **properties}
    if grammar.start == "repair":  # the repair agent: keep the formula, or a fixed one
        properties = {"verdict": {"type": "string", "enum": ["OK", "FIXED"]}, **properties}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def guided_params(dialect: str, grammar: Grammar) -> dict[str, Any]:
    """The request fields (``complete`` keyword arguments) that make ``dialect`` follow ``grammar``."""
    if dialect == "json_schema":
        schema = {"name": "formula_answer", "strict": True, "schema": _schema(grammar)}
        return {"response_format": {"type": "json_schema", "json_schema": schema}}
    gbnf = to_gbnf(grammar)
    field = {
        "llama.cpp": {"grammar": gbnf},
        "vllm": {"structured_outputs": {"grammar": gbnf}},
        "vllm-legacy": {"guided_grammar": gbnf},
        "sglang": {"ebnf": gbnf},
    }.get(dialect)
    if field is None:
        raise LLMError("config", f"grammar dialect {dialect!r} cannot carry a grammar")
    return {"extra_body": field}


def answer_text(dialect: str, text: str) -> str:
    """The answer as text: a JSON-schema answer ``{reasoning?, formula}`` becomes reasoning + block;
    anything else (and JSON that does not have that shape) is returned unchanged."""
    if dialect != "json_schema":
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get("formula"), str):
        return text
    if data.get("verdict") == "OK":
        return "[[OK]]"
    reasoning = data.get("reasoning")
    head = f"{reasoning.strip()}\n" if isinstance(reasoning, str) and reasoning.strip() else ""
    marker = "[[FIXED]]\n" if data.get("verdict") == "FIXED" else ""
    return f"{marker}{head}<cnf>\n{data['formula'].rstrip()}\n</cnf>"
