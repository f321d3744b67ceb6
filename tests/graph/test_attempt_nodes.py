"""Attempt-graph nodes called alone, with a hand-made runtime context (no graph, no LLM)."""

import autonesy.graph.attempt as attempt
from autonesy.agents.policies import AttemptSpec, make_policy
from autonesy.graph.attempt import AttemptRuntime, AttemptState, CheckError
from autonesy.graph.summary import Compilation
from autonesy.graph.trace import read_trace
from autonesy.graph.tracer import Tracer
from autonesy.tasks.registry import get_task
from autonesy.tools.cnf import to_dimacs

ONE_HOT = (
    "p cnf 10 46\n"
    + "1 2 3 4 5 6 7 8 9 10 0\n"
    + "".join(f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11))
)


def runtime(tmp_path, fmt="dimacs", policy="zs-cot"):
    spec = AttemptSpec(get_task("fashion"), fmt, "full")
    return AttemptRuntime(spec, make_policy(policy, None), Tracer(tmp_path), tmp_path)


def counting_converts(monkeypatch):
    calls = []
    real = attempt.convert
    monkeypatch.setattr(attempt, "convert", lambda *a, **k: calls.append(k.get("autofix")) or real(*a, **k))
    return calls


def test_check_syntax_converts_once_with_the_autofix(tmp_path, monkeypatch):
    calls = counting_converts(monkeypatch)
    headerless = "<cnf>\n" + ONE_HOT.split("\n", 1)[1] + "</cnf>"
    update = attempt.check_syntax(AttemptState(answer=headerless), runtime(tmp_path))
    assert calls == [True]
    assert update["error"] is None and update["dimacs"].count("\n") > 46
    assert "dimacs_header_added" in update["autofixes"]
    assert [e["event"] for e in read_trace(tmp_path)] == ["autofix"]


def test_check_syntax_reports_an_error_without_a_second_conversion(tmp_path, monkeypatch):
    calls = counting_converts(monkeypatch)
    update = attempt.check_syntax(AttemptState(answer="<cnf>\np cnf 10 1\n1 2 banana 0\n</cnf>"), runtime(tmp_path))
    assert calls == [True] and update["dimacs"] is None and "banana" in update["error"].message
    assert [e["event"] for e in read_trace(tmp_path)] == ["syntax_error"]


def test_the_repair_diff_does_not_run_the_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(attempt, "convert", lambda *a, **k: (_ for _ in ()).throw(AssertionError("converted")))

    class FixingPolicy:
        autofix, max_repairs, semantic_rounds = True, 5, 0

        def take_calls(self):
            return []

        def repair(self, spec, source, error, round_number):
            from autonesy.agents.policies import AgentTurn
            from autonesy.agents.repair import RepairVerdict

            return AgentTurn(
                role="repair", messages=[], text="", verdict=RepairVerdict("fixed", "<cnf>\nx = 1\n</cnf>", "")
            )

    rt = runtime(tmp_path, fmt="pysat")
    rt.policy = FixingPolicy()
    update = attempt.repair(AttemptState(source="x = 0\ny = 2", error=CheckError(kind="runtime", message="boom")), rt)
    assert update["answer"].startswith("<cnf>") and update["repair_round"] == 1
    assert read_trace(tmp_path)[-1]["changed"] == "+1 −2 lines"


def test_evaluate_uses_the_compiled_count(tmp_path, monkeypatch):
    import autonesy.tools.metrics as metrics

    task = get_task("fashion")
    dimacs = to_dimacs(task.ground_truth, task.names)
    counted = []
    real = metrics.count_models
    monkeypatch.setattr(metrics, "count_models", lambda cnf, *a, **k: counted.append(cnf) or real(cnf, *a, **k))
    state = AttemptState(dimacs=dimacs, compiled=Compilation(ok=True, model_count="10", seconds=0.01))
    update = attempt.evaluate(state, runtime(tmp_path))
    assert update["metrics"].relation == "equal" and update["metrics"].counts["candidate"]["method"] == "sdd"
    assert counted == []  # the candidate is the ground truth: its compiled count serves as both
    assert isinstance(attempt.accepted_cnf(dimacs), type(task.ground_truth))


def test_evaluate_records_a_count_that_timed_out(tmp_path, monkeypatch):
    from autonesy.tools.counting import CountTimedOut

    def timed_out(*args, **kwargs):
        raise CountTimedOut("auto", 60.0)

    monkeypatch.setattr(attempt, "score_formula", timed_out)
    task = get_task("fashion")
    update = attempt.evaluate(AttemptState(dimacs=to_dimacs(task.ground_truth, task.names)), runtime(tmp_path))
    assert update["status"] == "accepted" and update["metrics"].count_method == "timed out"
    assert "timed out after 60 s" in update["metrics"].note
