"""The formalization graph with scripted LLMs: each repair-loop scenario, its trace, resume after a kill."""

import json

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from autonesy.agents.llm import LangChainChatBackend, ResponseCache
from autonesy.graph.run import RunConfig, RunError, run_attempt
from autonesy.graph.trace import attempt_report, read_trace
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM a ready backend stands for

ONE_HOT = (
    "p cnf 10 46\n"
    + "1 2 3 4 5 6 7 8 9 10 0\n"
    + "".join(f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11))
)
GOOD = f"<cnf>\n{ONE_HOT}</cnf>"
BROKEN = "<cnf>\np cnf 10 1\n1 2 banana 0\n</cnf>"
AT_LEAST_ONE = "<cnf>\np cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0\n</cnf>"


def broken(i):
    """A different unparseable answer for each ``i`` (a repeated one would end the loop)."""
    return f"<cnf>\np cnf 10 1\n1 2 banana{i} 0\n</cnf>"


def scripted(answers, run_dir=None):
    cache = ResponseCache(run_dir / "llm_cache.sqlite") if run_dir else None
    return LangChainChatBackend(
        FakeListChatModel(responses=list(answers)), "scripted", "fake-model", cache=cache, retries=1
    )


def run(tmp_path, answers, **options):
    backend = scripted(answers)
    config = RunConfig(task="fashion", format="dimacs", llm=SCRIPTED, **options)
    summary = run_attempt(config, tmp_path / "run", backend=backend)
    return summary, backend, attempt_report(tmp_path / "run")


def test_syntax_error_then_fixed_is_accepted_and_scored(tmp_path):
    summary, backend, report = run(tmp_path, [BROKEN, f"[[FIXED]]\n{GOOD}"])
    assert summary.status == "accepted" and summary.repair_rounds == 1
    assert summary.metrics.f1 == 1.0 and summary.metrics.relation == "equal"
    assert backend.calls == 2 and summary.llm_calls == 2
    assert [r["verdict"] for r in report["rounds"]] == ["fixed"]
    assert report["rounds"][0]["error_kind"] == "syntax" and "banana" in report["rounds"][0]["error"]
    for name in (
        "formula.cnf",
        "formula.txt",
        "formula.sdd",
        "formula.vtree",
        "metrics.json",
        "summary.json",
        "config.json",
    ):
        assert (tmp_path / "run" / name).is_file(), name


def test_ok_on_a_broken_formula_is_rejected(tmp_path):
    summary, _, report = run(tmp_path, [BROKEN, "[[OK]] the formula is fine"])
    assert summary.status == "rejected" and "[[OK]]" in summary.reason
    assert [r["verdict"] for r in report["rounds"]] == ["ok"]
    assert not (tmp_path / "run" / "formula.cnf").exists()


def test_five_failed_rounds_are_a_syntax_error(tmp_path):
    summary, backend, report = run(tmp_path, [broken(0)] + [f"[[FIXED]]\n{broken(i)}" for i in range(1, 6)])
    assert summary.status == "rejected" and summary.reason.startswith("syntax error after 5 repair rounds")
    assert summary.failure == "syntax" and summary.syntax_error
    assert summary.repair_rounds == 5 and backend.calls == 6
    assert len(report["rounds"]) == 5 and report["status"] == "rejected"


def test_repair_budget_is_configurable(tmp_path):
    summary, backend, _ = run(tmp_path, [broken(0)] + [f"[[FIXED]]\n{broken(i)}" for i in range(1, 6)], max_repairs=2)
    assert summary.repair_rounds == 2 and backend.calls == 3


def test_autofix_repairs_without_an_llm_round(tmp_path):
    headerless = "<cnf>\n" + ONE_HOT.split("\n", 1)[1] + "</cnf>"
    summary, backend, report = run(tmp_path, [headerless])
    assert summary.status == "accepted" and summary.repair_rounds == 0 and backend.calls == 1
    assert "dimacs_header_added" in summary.autofixes and "dimacs_header_added" in report["autofixes"]


def test_oracle_feedback_repairs_a_semantically_wrong_formula(tmp_path):
    summary, backend, _ = run(tmp_path, [AT_LEAST_ONE, GOOD], policy="oracle-feedback")
    assert summary.status == "accepted" and summary.semantic_rounds == 1
    assert summary.metrics.relation == "equal" and summary.oracle_test.passed
    events = read_trace(tmp_path / "run")
    semantic = [e for e in events if e["event"] == "llm_call" and e["role"] == "semantic_repair"]
    assert len(semantic) == 1 and "but it is invalid" in semantic[0]["messages"][-1]["content"]
    [round_] = [e for e in events if e["event"] == "semantic_round"]
    # at-least-one allows two items at once: every counterexample is an assignment the formula wrongly accepts
    assert round_["round"] == 1 and round_["repeated"] is False and round_["too_permissive"] >= 1
    assert round_["counterexamples"] and all(
        c["formula_says"] and not c["oracle_says"] for c in round_["counterexamples"]
    )
    assert round_["formula_before"].strip() == "p cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0"
    assert round_["formula_after"].strip() == ONE_HOT.strip()


def test_a_formula_tested_before_that_the_repair_loop_brings_back_ends_the_semantic_rounds(tmp_path):
    # round 1 answers a broken formula; its repair brings back the first formula, which failed the oracle test:
    # a second round would send round 1's prompt again
    answers = [AT_LEAST_ONE, BROKEN, f"[[FIXED]]\n{AT_LEAST_ONE}", GOOD]
    summary, backend, _ = run(tmp_path, answers, policy="oracle-feedback")
    assert summary.status == "accepted" and backend.calls == 3 and summary.semantic_rounds == 1
    assert summary.repair_rounds == 1 and summary.metrics.relation == "permissive"
    prompts = [e["prompt_hash"] for e in read_trace(tmp_path / "run") if e["event"] == "llm_call"]
    assert len(set(prompts)) == len(prompts) == 3


def test_a_semantic_round_that_gives_the_same_formula_back_ends_the_rounds(tmp_path):
    summary, backend, _ = run(tmp_path, [AT_LEAST_ONE, AT_LEAST_ONE, GOOD], policy="oracle-feedback")
    # two rounds allowed, but the second would resend the first's prompt: the formula goes on as it is
    assert summary.status == "accepted" and backend.calls == 2 and summary.semantic_rounds == 1
    assert summary.metrics.relation == "permissive" and summary.oracle_test.passed is False
    [round_] = [e for e in read_trace(tmp_path / "run") if e["event"] == "semantic_round"]
    assert round_["repeated"] is True and round_["formula_before"] == round_["formula_after"]


def test_benchmark_policy_records_the_oracle_test_without_repairing(tmp_path):
    summary, backend, _ = run(tmp_path, [AT_LEAST_ONE])
    assert summary.status == "accepted" and summary.oracle_test.passed is False
    assert summary.metrics.relation == "permissive" and backend.calls == 1


class Killed(BaseException):
    """Stands for the process dying mid-run (not an Exception, so nothing catches it)."""


def test_killed_run_resumes_without_repeating_finished_llm_calls(tmp_path):
    run_dir = tmp_path / "run"
    config = RunConfig(task="fashion", format="dimacs", llm=SCRIPTED)
    first = scripted([BROKEN], run_dir)
    original = first.complete

    def die_on_second_call(messages, **params):
        if first.calls >= 1:
            raise Killed()
        return original(messages, **params)

    first.complete = die_on_second_call
    with pytest.raises(Killed):
        run_attempt(config, run_dir, backend=first)
    assert first.calls == 1
    second = scripted([f"[[FIXED]]\n{GOOD}"], run_dir)
    summary = run_attempt(config, run_dir, backend=second)
    assert summary.status == "accepted" and second.calls == 1  # only the repair call
    assert any(e["event"] == "resumed" for e in read_trace(run_dir))
    third = scripted([], run_dir)
    again = run_attempt(config, run_dir, backend=third)
    assert again.status == "accepted" and third.calls == 0  # finished: nothing is redone


def test_an_empty_answer_is_the_model_s_rejection(tmp_path):
    summary, _, report = run(tmp_path, [""])
    assert summary.status == "rejected" and summary.failure == "empty_answer"
    assert "empty answer" in summary.reason and not summary.syntax_error
    assert report["status"] == "rejected"


def test_a_run_directory_holding_another_run_is_refused(tmp_path):
    run(tmp_path, [GOOD])
    with pytest.raises(RunError, match="holds a different run"):
        run_attempt(RunConfig(task="sushi", format="dimacs", llm=SCRIPTED), tmp_path / "run", backend=scripted([GOOD]))


def test_config_records_versions_and_no_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789")
    run(tmp_path, [BROKEN, f"[[FIXED]]\n{GOOD}"])
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["versions"]["langgraph"] and config["llm"] == "scripted@fake-model"
    for path in (tmp_path / "run").iterdir():
        assert b"sk-test-SECRET-0123456789" not in path.read_bytes(), path.name


@pytest.mark.parametrize(
    "answers, calls",
    [
        ([BROKEN, f"[[FIXED]]\n{BROKEN}"], 2),  # the same formula straight back
        ([broken(1), f"[[FIXED]]\n{broken(2)}", f"[[FIXED]]\n  {broken(1)}\n"], 3),  # an earlier one, re-spaced
    ],
)
def test_an_answer_already_rejected_ends_the_attempt_before_a_prompt_repeats(tmp_path, answers, calls):
    summary, backend, report = run(tmp_path, answers + [GOOD])
    assert summary.status == "rejected" and summary.failure == "repeated_answer"
    assert backend.calls == calls and summary.repair_rounds == calls - 1
    assert report["rounds"][-1]["verdict"] == "repeated"
    sent = [e["prompt_hash"] for e in read_trace(tmp_path / "run") if e["event"] == "llm_call"]
    assert len(sent) == calls and len(set(sent)) == calls  # no prompt was sent twice


def _tiny_fashion_data(seed=0, n=64):
    import numpy as np

    rng = np.random.default_rng(seed)
    splits = []
    for size in (n, n // 2, n // 2):
        y = np.eye(10, dtype=np.uint8)[rng.integers(0, 10, size)]
        x = (y + rng.normal(0, 0.5, y.shape)).astype(np.float32)
        splits += [x, y]
    return tuple(splits)


def test_accepted_formula_is_trained_next_to_the_ground_truth(tmp_path):
    from autonesy.graph.attempt import TrainingRequest

    training = TrainingRequest(("spl", "sl"), _tiny_fashion_data(), seeds=1, epochs=1, progress=False)
    summary = run_attempt(
        RunConfig(task="fashion", format="dimacs", llm=SCRIPTED),
        tmp_path / "run",
        backend=scripted([AT_LEAST_ONE]),
        training=training,
    )
    results = summary.training["results"]
    assert set(results) == {"spl", "sl"} and {"formula", "ground_truth"} <= set(results["spl"])
    # SPL predicts only assignments its formula allows: exactly-one holds for every ground-truth prediction
    assert results["spl"]["ground_truth"]["summary"]["consistency"]["mean"] == 1.0
    assert (tmp_path / "run" / "downstream.json").is_file()


def test_rejected_formula_skips_training_with_a_note(tmp_path):
    from autonesy.graph.attempt import TrainingRequest

    training = TrainingRequest(("spl",), _tiny_fashion_data(), seeds=1, epochs=1, progress=False)
    summary = run_attempt(
        RunConfig(task="fashion", format="dimacs", llm=SCRIPTED),
        tmp_path / "run",
        backend=scripted([BROKEN, "[[OK]]"]),
        training=training,
    )
    assert summary.status == "rejected" and "rejected" in summary.training["skipped"]
    assert not (tmp_path / "run" / "downstream.json").exists()


def test_lint_warnings_reach_the_repair_agent_and_the_trace(tmp_path):
    # Clauses over auxiliaries only (11, 12): it parses, but constrains no task variable.
    aux_only = "<cnf>\np cnf 12 2\n11 12 0\n-11 -12 0\n</cnf>"
    summary, backend, report = run(tmp_path, [aux_only, f"[[FIXED]]\n{GOOD}"])
    assert summary.status == "accepted" and summary.repair_rounds == 1 and summary.metrics.f1 == 1.0
    [round_] = report["rounds"]
    assert round_["error_kind"] == "lint" and "no_task_variable" in round_["error"]
    events = [e for e in read_trace(tmp_path / "run") if e.get("event") == "lint"]
    assert events and "no_task_variable" in events[0]["warnings"][0]


def test_ok_on_lint_warnings_keeps_the_formula(tmp_path):
    aux_only = "<cnf>\np cnf 12 2\n11 12 0\n-11 -12 0\n</cnf>"
    summary, backend, _ = run(tmp_path, [aux_only, "[[OK]] the auxiliaries are intended"])
    assert summary.status == "accepted" and summary.repair_rounds == 1 and backend.calls == 2
    assert summary.metrics.relation == "permissive"  # the task is not constrained at all


def test_ok_on_an_oversized_answer_says_what_the_checker_said(tmp_path):
    summary, _, _ = run(tmp_path, ["<cnf>\n" + "c " + "x" * 1_000_001 + "\n</cnf>", "[[OK]]"])
    assert summary.status == "rejected" and "too_large" in summary.reason
    assert "1,000,0" in summary.reason  # the size of what the LLM wrote, not of what was kept


def test_config_records_the_max_tokens_the_backend_sent(tmp_path):
    backend = LangChainChatBackend(
        FakeListChatModel(responses=[GOOD]), "scripted", "fake-model", retries=1, default_params={"max_tokens": 4096}
    )
    run_attempt(RunConfig(task="fashion", format="dimacs", llm=SCRIPTED), tmp_path / "a", backend=backend)
    assert json.loads((tmp_path / "a" / "config.json").read_text())["max_tokens"] == 4096
    backend = scripted([GOOD])
    run_attempt(
        RunConfig(task="fashion", format="dimacs", llm=SCRIPTED, max_tokens=300), tmp_path / "b", backend=backend
    )
    assert json.loads((tmp_path / "b" / "config.json").read_text())["max_tokens"] == 300


def test_an_outage_in_a_repair_round_is_retried_from_there_by_the_next_run(tmp_path):
    from autonesy.agents.llm import LLMError

    run_dir = tmp_path / "run"
    config = RunConfig(task="fashion", format="dimacs", llm=SCRIPTED)
    first = scripted([BROKEN])
    answer = first.complete

    def refuse_the_repair(messages, **params):
        if first.calls >= 1:
            raise LLMError("refused", "cannot connect to the LLM endpoint", transient=True)
        return answer(messages, **params)

    first.complete = refuse_the_repair
    down = run_attempt(config, run_dir, backend=first)
    assert down.status == "infra_failed" and down.failure == "connection" and first.calls == 1
    assert down.metrics is None and down.repair_rounds == 0 and down.llm_calls == 1
    assert json.loads((run_dir / "summary.json").read_text())["status"] == "infra_failed"
    second = scripted([f"[[FIXED]]\n{GOOD}"])
    up = run_attempt(config, run_dir, backend=second)
    assert up.status == "accepted" and up.failure is None and second.calls == 1  # only the repair, retried
    assert up.repair_rounds == 1 and up.llm_calls == 2 and up.metrics.f1 == 1.0


def test_at_most_one_attempt_per_core_runs_a_node_that_does_not_wait_on_an_llm(monkeypatch):
    # Eight attempts at once, each in a node: the LLM nodes all run together, the others one per core.
    import threading
    import time
    from types import SimpleNamespace

    from autonesy.graph import attempt

    monkeypatch.setattr(attempt, "_CORES", threading.BoundedSemaphore(2))
    tracer = SimpleNamespace(starting=lambda name: None, event=lambda *args, **fields: None)
    runtime = SimpleNamespace(context=SimpleNamespace(tracer=tracer))

    def most_at_once(name: str) -> int:
        lock, running, most = threading.Lock(), [0], [0]

        def node(state, rt):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1
            return {}

        run = attempt._traced(name, node)
        threads = [threading.Thread(target=run, args=({}, runtime)) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return most[0]

    assert most_at_once("compile") == 2
    assert most_at_once("oracle_test") == 2
    assert most_at_once("formalize") == 8
    assert most_at_once("semantic_repair") == 8
