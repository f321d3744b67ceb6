"""The embedded llama.cpp server under a grammar: llama.cpp's own GBNF parser reads every format's
grammar, and a real request with the grammar returns an answer the front-end parses.
Skipped, with the reason, when the ``[local]`` extra (llama-cpp-python's server and the GGUF
package) is not installed."""

from __future__ import annotations

import pytest

from autonesy.agents.llm import LLMError
from autonesy.agents.llm.local import find_local_gguf, require_local_extra
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.tasks.registry import load_task
from autonesy.tools.formats import convert
from autonesy.tools.grammar import FORMATS, answer_grammar, repair_grammar, to_gbnf
from autonesy.tools.grammar.recognize import Recognizer


def _local_extra_missing() -> str | None:
    try:
        require_local_extra()
        find_local_gguf()
    except LLMError as error:
        return str(error)
    return None


MISSING = _local_extra_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"the [local] extra is not installed: {MISSING}")


@pytest.mark.parametrize("fmt", FORMATS)
def test_llama_cpp_parses_every_grammar(fmt):
    from llama_cpp import LlamaGrammar

    names = load_task("warcraft").names
    for grammar in (answer_grammar(fmt, names, reasoning_chars=1200), repair_grammar(fmt, names)):
        LlamaGrammar.from_string(to_gbnf(grammar), verbose=False)  # raises on a grammar llama.cpp rejects


@pytest.mark.slow  # grammar sampling scans Gemma's 262k-token vocabulary each step: minutes on a busy 2-core machine
@pytest.mark.parametrize("fmt", ["nat", "dimacs"])
def test_a_real_request_under_the_grammar_returns_a_parsable_answer(fmt):
    from autonesy.agents.llm.local import LocalChatBackend

    task = load_task("bdd-oia-2")
    with LocalChatBackend(max_tokens=400, timeout_s=300) as backend:
        turn = make_policy("zs", backend, decoding="grammar").formalize(AttemptSpec(task, fmt, "detailed", "zs"))
    assert turn.error is None, turn.error
    assert turn.decoding["dialect"] == "llama.cpp"
    if turn.response.finish_reason == "stop":  # complete: inside the grammar, and it parses
        assert Recognizer(answer_grammar(fmt, task.names)).accepts(turn.text), turn.text
        conversion = convert(turn.text, fmt, task.names, autofix=True)
        assert conversion.ok, (conversion.error, turn.text)
    else:  # cut off by max_tokens: still a prefix of the grammar's language (no stray name or line)
        assert turn.text.startswith("<cnf>\n"), turn.text
