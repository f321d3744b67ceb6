"""Each node of the verifier graph alone: called with a state and a VerifyRuntime (what LangGraph hands
it as the runtime context), on the scripted roles of tests/scripted_llm.py."""

import pytest
from scripted_llm import CODES, CRASH, FORMULA, INSTRUCTION, KINDS, NO_LANTERN, SAT, SUMMARIES, ScriptedRoles

from autonesy.agents.verify import CheckingAgent, FormulationAgent, JudgeAgent, WriterAgent
from autonesy.graph.trace import read_trace
from autonesy.graph.tracer import Tracer
from autonesy.graph.verify import nodes
from autonesy.graph.verify.graph import verify_graph
from autonesy.graph.verify.state import VerifierMemory, VerifyAgents, VerifyRuntime, VerifyState, initial_state
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.verify.results import CheckerFailure

QUICK = SandboxLimits(cpu_seconds=2, wall_seconds=4)
CONSTRAINTS = [{"id": cid, "summary": text, "kind": KINDS[cid]} for cid, text in SUMMARIES.items()]


def runtime(tmp_path, roles, **options) -> VerifyRuntime:
    backend = roles.backend()
    agents = VerifyAgents(FormulationAgent(backend), CheckingAgent(backend), JudgeAgent(backend), WriterAgent(backend))
    return VerifyRuntime(agents, Tracer(tmp_path), checker_limits=QUICK, **options)


def formulated(output=SAT, **extra) -> VerifyState:
    return VerifyState(instruction=INSTRUCTION, output=output, constraints=CONSTRAINTS, formula=FORMULA, **extra)


def events(tmp_path, name):
    return [e for e in read_trace(tmp_path) if e["event"] == name]


def test_formulate_reads_the_constraints_and_remembers_them(tmp_path):
    roles, memory = ScriptedRoles(), VerifierMemory()
    update = nodes.formulate(initial_state(INSTRUCTION, SAT), runtime(tmp_path, roles, memory=memory))
    assert [c["id"] for c in update["constraints"]] == ["C1", "C2", "C3", "C4"] and update["llm_calls"] == 1
    assert memory.formulation(INSTRUCTION)["formula"] == update["formula"]
    again = nodes.formulate(initial_state(INSTRUCTION, SAT), runtime(tmp_path, roles, memory=memory))
    assert again["constraints"] == update["constraints"] and roles.roles() == ["formulation"]  # reused


def test_formulate_stops_a_contradictory_instruction(tmp_path):
    roles = ScriptedRoles(
        formulation=[
            "<constraints>\nC1 [logic]: The response has a title.\n</constraints>\n<formula>\nC1\nNOT C1\n</formula>"
        ]
    )
    update = nodes.formulate(initial_state("Have a title and no title."), runtime(tmp_path, roles))
    assert update["status"] == "contradictory" and update["decision"].conflict


def test_formulate_asks_again_after_an_unreadable_answer(tmp_path):
    roles = ScriptedRoles(formulation=["no tags at all"])
    update = nodes.formulate(initial_state(INSTRUCTION, SAT), runtime(tmp_path, roles, max_formulation_repairs=2))
    assert update["formulation_round"] == 1 and update["formulation_error"] and update.get("status") != "error"


@pytest.mark.parametrize("verifier, logic", [("nsvif", ["C1", "C2", "C4"]), ("nsvif-neu", [])])
def test_prepare_routes_logic_constraints_to_code(tmp_path, verifier, logic):
    update = nodes.prepare(formulated(), runtime(tmp_path, ScriptedRoles(), verifier=verifier))
    assert update["logic"] == logic and update["queue"] == [c for c in SUMMARIES if c not in logic]


def test_write_checkers_asks_once_for_every_missing_checker(tmp_path):
    roles = ScriptedRoles()
    state = formulated(logic=["C1", "C2", "C4"])
    update = nodes.write_checkers(state, runtime(tmp_path, roles))
    assert sorted(update["codes"]) == ["C1", "C2", "C4"] and roles.roles() == ["checker"]
    assert update["drafts"]["C1"]["accept"] == ["A lantern."]


def _checking(code="C1", **extra) -> VerifyState:
    drafts = {cid: {"code": CODES[cid], "accept": [], "reject": []} for cid in ("C1", "C2", "C4")}
    return formulated(NO_LANTERN, logic=[code], drafts=drafts, codes=dict(CODES), **extra)


def test_check_runs_the_program_on_the_response(tmp_path):
    update = nodes.check(_checking(), runtime(tmp_path, ScriptedRoles()))
    assert update["results"]["C1"].value is False and update["results"]["C1"].method == "checker"
    assert update["checker_runs"] == 1 and events(tmp_path, "constraint_result")[0]["constraint"] == "C1"


def test_check_records_a_crash_for_reflection_then_hands_it_to_the_judge(tmp_path):
    state = _checking()
    state.codes["C1"] = CRASH
    first = nodes.check(state, runtime(tmp_path, ScriptedRoles()))
    assert first["failure"].error_kind == "runtime" and "C1" not in first.get("queue", [])
    last = nodes.check(
        state.model_copy(update={"reflection_round": 3}), runtime(tmp_path, ScriptedRoles(), max_reflections=3)
    )
    assert last["queue"] == ["C1"]


def test_reflect_replaces_the_failed_program(tmp_path):
    state = _checking(failure=CheckerFailure(error_kind="runtime", message="IndexError"))
    state.codes["C1"] = CRASH
    roles = ScriptedRoles()
    update = nodes.reflect(state, runtime(tmp_path, roles))
    assert update["codes"]["C1"] == CODES["C1"] and update["reflection_round"] == 1 and roles.roles() == ["reflection"]


def test_next_constraint_moves_the_cursor(tmp_path):
    update = nodes.next_constraint(_checking(reflection_round=2), runtime(tmp_path, ScriptedRoles()))
    assert update["cursor"] == 1 and update["reflection_round"] == 0


def test_judge_decides_the_queue_in_one_request(tmp_path):
    roles = ScriptedRoles()
    state = formulated(SAT, queue=["C3"])
    update = nodes.judge(state, runtime(tmp_path, roles))
    assert update["results"]["C3"].value is True and roles.roles() == ["judge"]
    assert "## Instruction" not in roles.calls[0][1]  # a semantic constraint is judged on its own


def test_solve_decides_the_verdict_and_keeps_tested_checkers(tmp_path):
    memory = VerifierMemory()
    results = {
        cid: {"id": cid, "summary": SUMMARIES[cid], "kind": KINDS[cid], "value": value, "method": "checker", "code": ""}
        for cid, value in {"C1": True, "C2": False, "C3": True, "C4": False}.items()
    }
    drafts = {cid: {"code": CODES[cid]} for cid in ("C1", "C2", "C4")}
    state = formulated(SAT, results=results, tested=["C1"], drafts=drafts, codes=dict(CODES))
    update = nodes.solve(state, runtime(tmp_path, ScriptedRoles(), memory=memory))
    assert update["status"] == "sat" and update["history"][-1]["verdict"] == "sat"
    assert memory.checkers(INSTRUCTION, FORMULA)["tested"] == ["C1"]


def test_judge_all_asks_the_whole_instruction_judge(tmp_path):
    roles = ScriptedRoles()
    update = nodes.judge_all(initial_state(INSTRUCTION, SAT), runtime(tmp_path, roles, verifier="judge"))
    assert update["status"] in ("sat", "unsat") and roles.roles() == ["holistic_judge"]


def test_generate_writes_a_response(tmp_path):
    roles = ScriptedRoles(writer=[SAT])
    update = nodes.generate(initial_state(INSTRUCTION), runtime(tmp_path, roles, budget=2))
    assert update["output"] == SAT and update["follow_round"] == 1 and roles.roles() == ["writer"]


def test_the_graph_runs_the_nodes_with_the_runtime_as_its_context(tmp_path):
    roles = ScriptedRoles()
    final = verify_graph().invoke(
        initial_state(INSTRUCTION, SAT), {"recursion_limit": 1000}, context=runtime(tmp_path, roles)
    )
    assert final["status"] == "sat" and roles.roles() == ["formulation", "checker", "judge"]


def test_generate_without_a_writer_is_an_error_not_a_crash(tmp_path):
    rt = runtime(tmp_path, ScriptedRoles(), budget=2)
    rt.agents.writer = None
    assert nodes.generate(initial_state(INSTRUCTION), rt)["status"] == "error"


def test_usage_counts_sent_cached_and_failed_requests_apart():
    from autonesy.agents.llm import LLMError, LLMResponse
    from autonesy.agents.policies import AgentTurn
    from autonesy.graph.verify.state import usage

    turns = [
        AgentTurn("judge", [], response=LLMResponse(text="a", prompt_tokens=10, completion_tokens=3, attempts=3)),
        AgentTurn("judge", [], response=LLMResponse(text="b", prompt_tokens=5, completion_tokens=2, cached=True)),
        AgentTurn("judge", [], response=LLMResponse(text="c")),  # a server that reports no usage
        AgentTurn("judge", [], error=LLMError("timeout", "no answer", transient=True, attempts=2)),
    ]
    counted = usage(initial_state("i", "o"), turns)
    assert (counted["llm_calls"], counted["prompt_tokens"], counted["completion_tokens"]) == (2, 10, 3)
    assert (counted["cached_calls"], counted["cached_tokens"]) == (1, 7)
    assert counted["calls_without_usage"] == 1
    assert counted["failed_requests"] == 2 + 2  # two retried attempts, two attempts of the call that failed
