"""The embedded llama.cpp server under a grammar: llama.cpp's own GBNF parser reads every format's
grammar, and a real request with the grammar returns an answer the front-end parses.
Skipped, with the reason, when the ``[local]`` extra (llama-cpp-python's server and the GGUF
package) is not installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from local_extra import local_extra_missing

from autonesy.agents.llm.local import find_local_gguf
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.tasks.registry import load_task
from autonesy.tools.formats import convert
from autonesy.tools.grammar import FORMATS, answer_grammar, repair_grammar, to_gbnf
from autonesy.tools.grammar.recognize import Recognizer

MISSING = local_extra_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"the [local] extra is not installed: {MISSING}")


@pytest.mark.parametrize("fmt", FORMATS)
def test_llama_cpp_parses_every_grammar(fmt):
    from llama_cpp import LlamaGrammar

    names = load_task("warcraft").names
    for grammar in (answer_grammar(fmt, names, reasoning_chars=1200), repair_grammar(fmt, names)):
        LlamaGrammar.from_string(to_gbnf(grammar), verbose=False)  # raises on a grammar llama.cpp rejects


@pytest.mark.slow  # starts the server and evaluates a long prompt: a minute or more on a busy 2-core machine
@pytest.mark.parametrize("fmt", ["nat", "dimacs"])
def test_a_real_request_under_the_grammar_returns_a_parsable_answer(fmt):
    from autonesy.agents.llm.local import LocalChatBackend

    task = load_task("bdd-oia-2")
    with LocalChatBackend(max_tokens=400, timeout_s=300) as backend:
        turn = make_policy("zs", backend, decoding="grammar").formalize(AttemptSpec(task, fmt, "detailed", "zs"))
        # No logits kept per prompt token: that table alone is n_ctx x Gemma's 262,144-token vocabulary
        # of floats (8.6 GB at n_ctx 8192), and filling it nearly doubled prompt evaluation.
        status = (Path("/proc") / str(backend.server.process.pid) / "status").read_text()
        virtual_kib = int(re.search(r"VmSize:\s+(\d+) kB", status).group(1))
        assert virtual_kib * 1024 < backend.server.n_ctx * 262_144 * 4, status
    assert turn.error is None, turn.error
    assert turn.decoding["dialect"] == "llama.cpp"
    if turn.response.finish_reason == "stop":  # complete: inside the grammar, and it parses
        assert Recognizer(answer_grammar(fmt, task.names)).accepts(turn.text), turn.text
        conversion = convert(turn.text, fmt, task.names, autofix=True)
        assert conversion.ok, (conversion.error, turn.text)
    else:  # cut off by max_tokens: still a prefix of the grammar's language (no stray name or line)
        assert turn.text.startswith("<cnf>\n"), turn.text


@pytest.fixture(scope="module")
def gemma():
    import llama_cpp

    from autonesy.agents.llm.llama_server import without_extra_buffer_types

    without_extra_buffer_types()  # as the server does (AMX's buffers crash the first decode)
    return llama_cpp.Llama(str(find_local_gguf()), n_ctx=2048, verbose=False, chat_format="gemma")


def _complete(llm, task, fmt, gbnf, **params):
    from llama_cpp import LlamaGrammar

    messages = [{"role": "user", "content": f"Write the constraint over {', '.join(task.names[:6])} in {fmt}."}]
    grammar = LlamaGrammar.from_string(gbnf, verbose=False)
    reply = llm.create_chat_completion(messages, grammar=grammar, **params)
    return reply["choices"][0]["message"]["content"], reply["choices"][0]["finish_reason"]


UNLIKELY = 'root ::= "Zq" [0-9]{2} "\u2318" ([xyz] " "){1,4} "end"'  # tokens far down the model's ranking


@pytest.mark.parametrize("fmt", ["dimacs", "nat", "cpmpy", UNLIKELY])
def test_check_first_grammar_sampling_matches_llama_cpp_python_greedy(gemma, fmt, monkeypatch):
    """Differential: the patched server's sampler returns token for token what llama-cpp-python's
    own chain (grammar over the whole vocabulary) returns, greedy and with the default penalties.
    The answer grammars of three formats, and a grammar of unlikely tokens (the windows of best
    tokens are exhausted before an allowed one turns up)."""
    import llama_cpp

    from autonesy.agents.llm import llama_server

    task = load_task("warcraft")
    gbnf = (
        fmt if fmt == UNLIKELY else to_gbnf(answer_grammar(fmt, task.names, max_lines=4, max_depth=3, comments=False))
    )
    params = {"max_tokens": 24, "temperature": 0.0, "repeat_penalty": 1.1}
    expected = _complete(gemma, task, "cpmpy" if fmt == UNLIKELY else fmt, gbnf, **params)
    monkeypatch.setattr(llama_cpp.Llama, "_init_sampler", llama_cpp.Llama._init_sampler)  # undone after the test
    llama_server.install()
    assert _complete(gemma, task, "cpmpy" if fmt == UNLIKELY else fmt, gbnf, **params) == expected


def test_check_first_grammar_sampling_stays_in_the_grammar_when_sampling(gemma, monkeypatch):
    import llama_cpp

    from autonesy.agents.llm import llama_server

    monkeypatch.setattr(llama_cpp.Llama, "_init_sampler", llama_cpp.Llama._init_sampler)
    llama_server.install()
    task = load_task("warcraft")
    grammar = answer_grammar("nat", task.names, max_lines=2, max_depth=2, comments=False)
    for seed in range(3):
        gemma.set_seed(seed)
        text, finish = _complete(gemma, task, "nat", to_gbnf(grammar), max_tokens=60, temperature=1.5, top_k=0)
        if finish == "stop":
            assert Recognizer(grammar).accepts(text), text
        else:
            assert text.startswith("<cnf>\n"), text


def test_the_models_weights_stay_off_llama_cpps_extra_buffer_types():
    """On a CPU with AMX the extra (AMX) buffer type crashed the first decode; the server and the
    fixture above load the model with plain CPU buffers, whatever llama.cpp's default."""
    from llama_cpp import llama_cpp as C

    from autonesy.agents.llm.llama_server import without_extra_buffer_types

    without_extra_buffer_types()
    wrapper = C.llama_model_default_params
    without_extra_buffer_types()
    assert C.llama_model_default_params is wrapper  # idempotent: not wrapped twice
    assert C.llama_model_default_params().use_extra_bufts is False
