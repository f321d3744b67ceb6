"""Every counting route against brute-force enumeration of all assignments (KLay-style differential tests)."""

import itertools
import os
import sys
from pathlib import Path

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.card import CardEnc, EncType

import autonesy.tools.counting as counting
from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tools.cnf import CNF
from autonesy.tools.compile import CompilationBudgetExceeded, compile_to_sdd
from autonesy.tools.counting import (
    ApproxMCSettings,
    CountTimedOut,
    EnumerationCapReached,
    count_from_candidates,
    count_models,
    enumerate_models,
)
from autonesy.tools.quiet_clock import SLOWEST

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from held_out_counts import all_different  # noqa: E402
from scaling import latin_squares  # noqa: E402

EXACT = ("enumeration", "sdd", "ganak", "auto")


@settings(max_examples=60, deadline=None)
@given(cnfs())
def test_exact_counts_match_brute_force(cnf):
    expected = len(projected_models(cnf))
    for method in EXACT:
        result = count_models(cnf, method)
        assert result.value == expected, method
        assert result.exact


@settings(max_examples=40, deadline=None)
@given(cnfs())
def test_enumerated_models_are_the_projection(cnf):
    assert set(enumerate_models(cnf)) == projected_models(cnf)


@settings(max_examples=40, deadline=None)
@given(cnfs(max_task_vars=5))
def test_approxmc_is_exact_on_tiny_formulas_and_says_it_is_approximate(cnf):
    # Below its threshold ApproxMC counts exactly; this pins the projection/anchoring workaround.
    result = count_models(cnf, "approxmc", approxmc=ApproxMCSettings(seed=3))
    assert result.value == len(projected_models(cnf))
    assert not result.exact and result.params["seed"] == 3


def test_approxmc_xor_pitfall_is_worked_around():
    # pyapproxmc alone counts x1 XOR x2 as 1 model.
    assert count_models(CNF(3, ((1, 2), (-1, -2))), "approxmc").value == 4


def _without_tables():
    """auto with variable elimination's budget at zero: every formula with a clause goes on to the race."""
    from unittest import mock

    import autonesy.tools.counting as counting

    return mock.patch.object(counting, "AUTO_TABLES_MAX_S", 0.0)


@settings(max_examples=80, deadline=None)
@given(cnfs(max_aux=5, max_clauses=12))
def test_auto_past_enumeration_matches_brute_force(cnf):
    # A cap of 0 sends every satisfiable formula past enumeration: variable elimination, or (its budget
    # at zero) resolution and the race.
    expected = len(projected_models(cnf))
    result = count_models(cnf, "auto", enumeration_cap=0)
    assert result.value == expected and result.exact
    assert result.method in ("variable-elimination", "preprocessing") or not cnf.clauses or expected == 0
    with _without_tables():
        result = count_models(cnf, "auto", enumeration_cap=0)
    assert result.value == expected and result.exact


@settings(max_examples=60, deadline=None)
@given(cnfs(max_aux=4, max_clauses=10))
def test_auto_enumerates_on_after_the_tables_with_the_models_of_the_projection(cnf):
    # One model in the first enumeration, then the tables; a count within the cap is enumerated on, on the
    # preprocessed CNF, with the first enumeration's models blocked.
    from unittest import mock

    import autonesy.tools.counting as counting

    expected = projected_models(cnf)
    with mock.patch.object(counting, "AUTO_FIRST_MODELS", 1):
        result = count_models(cnf, "auto", enumeration_cap=8)
    assert result.value == len(expected) and result.exact
    if len(expected) <= 8:
        assert result.method in ("enumeration", "preprocessing") and set(result.models or ()) == expected


def test_auto_counts_past_the_cap_by_variable_elimination():
    result = count_models(CNF(16, ((1, 2), (3, -17), (17, 4)), 17), "auto", enumeration_cap=10)
    assert result.method == "variable-elimination" and result.value == 3 * 3 * 2**12 and result.exact
    assert result.models is None


def test_a_count_within_the_cap_is_enumerated_on_for_its_models(monkeypatch):
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "AUTO_FIRST_MODELS", 5)  # the first enumeration stops early
    cnf = CNF(6, ((1, 2), (-3, 7), (-7, 4)), 7)  # x1 or x2, x3 implies x4, x5 and x6 free
    result = count_models(cnf, "auto", enumeration_cap=100)
    assert result.method == "enumeration" and set(result.models) == projected_models(cnf)
    assert result.value == 3 * 3 * 4 and result.params["fallbacks"][0].startswith("enumeration (more than 5")


@settings(max_examples=40, deadline=None)
@given(cnfs(max_aux=5, max_clauses=12))
def test_ganak_after_elimination_matches_brute_force(cnf):
    from autonesy.tools.counting import count_by_ganak
    from autonesy.tools.elimination import eliminate_auxiliaries

    assert count_by_ganak(eliminate_auxiliaries(cnf)).value == len(projected_models(cnf))


def test_auto_races_past_the_enumeration_cap():
    cnf = CNF(16, ((1, 2),))
    with _without_tables():
        result = count_models(cnf, "auto", enumeration_cap=10)
    assert result.value == 3 * 2**14 and result.exact and result.method in ("enumeration", "ganak", "sdd")
    assert result.params["fallbacks"][0].startswith("enumeration (more than 10 models")


def _slow(*args, **kwargs):
    import time

    time.sleep(60)


def _broken(*args, **kwargs):
    raise RuntimeError("broken on purpose")


def test_the_first_exact_answer_wins_and_the_others_are_stopped(monkeypatch):
    import time

    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "count_by_orbits", _broken)  # symmetric: orbits could win
    monkeypatch.setattr(counting, "_ganak_count", _slow)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)  # it reads the one auxiliary block too
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    start = time.perf_counter()
    result = count_models(CNF(12, ((1, 2), (3, -4, 14)), 14), "auto", enumeration_cap=3, time_limit_s=50)
    assert result.value == 3 * 2**10 and result.method == "sdd"
    assert time.perf_counter() - start < 10  # not the 60 s the Ganak child sleeps


def test_ganak_and_enumeration_join_a_slow_sdd_route_after_its_head_start(monkeypatch):
    import time

    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "count_by_orbits", _broken)  # symmetric: orbits could win
    monkeypatch.setattr(counting, "_sdd_routes", _slow)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    start = time.perf_counter()
    result = count_models(CNF(12, ((1, 2),)), "auto", enumeration_cap=3, time_limit_s=50)
    assert result.value == 3 * 2**10 and result.method in ("ganak", "enumeration", "one-hot")
    assert time.perf_counter() - start < 10  # not the 60 s the SDD child sleeps


def test_a_failing_route_is_reported_and_another_answers(monkeypatch):
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "_ganak_count", _broken)
    monkeypatch.setattr(counting, "_sdd_routes", _broken)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)
    monkeypatch.setattr(counting, "count_by_orbits", _broken)  # symmetric: orbits could win
    monkeypatch.setattr(counting, "count_one_hot", _broken)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    result = count_models(CNF(12, ((1, 2),)), "auto", enumeration_cap=3)
    assert result.value == 3 * 2**10 and result.method == "enumeration" and result.exact
    assert any("broken on purpose" in entry for entry in result.params["fallbacks"])


def test_approxmc_answers_only_when_every_exact_route_failed(monkeypatch):
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "_ganak_count", _broken)
    monkeypatch.setattr(counting, "_sdd_routes", _broken)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)
    monkeypatch.setattr(counting, "count_one_hot", _broken)
    monkeypatch.setattr(counting, "count_by_orbits", _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    result = count_models(CNF(12, ((1, 2),)), "auto", enumeration_cap=3)
    assert result.method == "approxmc" and not result.exact
    tried = sorted(entry.split(" ")[0] for entry in result.params["fallbacks"])
    assert tried == [
        "enumeration",
        "enumeration",
        "ganak",
        "one-hot",
        "orbits",
        "sdd",
        "variable",
    ]  # the first try, tables, the race


def test_a_formula_without_auxiliaries_is_counted_as_a_one_hot_csp_in_the_race(monkeypatch):
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "count_by_orbits", _broken)  # symmetric: orbits could win
    monkeypatch.setattr(counting, "_ganak_count", _broken)
    monkeypatch.setattr(counting, "_sdd_routes", _broken)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    one_hot = (1, 2, 3), (-1, -2), (-1, -3), (-2, -3)  # exactly one of 1, 2, 3; 4..12 free
    result = count_models(CNF(12, one_hot), "auto", enumeration_cap=3)
    assert result.value == 3 * 2**9 and result.method == "one-hot" and result.exact


def test_a_formula_all_in_one_hot_groups_gives_the_one_hot_csp_the_start(monkeypatch):
    """Every variable in an exactly-one group (a 3 x 3 Latin square: 12 models): the one-hot CSP count
    starts beside the SDD routes; Ganak and enumeration, joining only after a head start that never
    ends here, are not needed."""
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "_ganak_count", _broken)
    monkeypatch.setattr(counting, "_sdd_routes", _slow)
    monkeypatch.setattr(counting, "AUTO_HEAD_START_S", 1e9)
    monkeypatch.setattr(counting, "AUTO_HEAD_START_MAX_S", 1e9)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)

    def var(r: int, c: int, d: int) -> int:
        return 9 * r + 3 * c + d + 1

    cells = [[var(r, c, d) for d in range(3)] for r in range(3) for c in range(3)]
    rows = [[var(r, c, d) for c in range(3)] for r in range(3) for d in range(3)]
    columns = [[var(r, c, d) for r in range(3)] for c in range(3) for d in range(3)]
    clauses = [
        clause
        for group in cells + rows + columns
        for clause in [tuple(group), *((-a, -b) for a, b in itertools.combinations(group, 2))]
    ]
    result = count_models(CNF(27, clauses), "auto", enumeration_cap=3, time_limit_s=30)
    assert result.value == 12 and result.method == "one-hot" and result.exact


def _keep_auxiliaries(monkeypatch):
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "simplify_projected", lambda cnf: cnf)
    monkeypatch.setattr(counting, "_eliminate", lambda cnf, _seconds: cnf)


def test_a_formula_whose_auxiliary_block_is_no_at_most_one_is_refused_by_the_one_hot_csp(monkeypatch):
    import autonesy.tools.counting as counting

    for name in ("_ganak_count", "_sdd_routes", "count_by_recovery", "count_by_frontier", "count_by_orbits"):
        monkeypatch.setattr(counting, name, _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    _keep_auxiliaries(monkeypatch)
    result = count_models(CNF(12, ((1, 13), (2, -13, 14), (-14, 3))), "auto", enumeration_cap=3)
    assert result.method == "approxmc"
    assert any(entry.startswith("one-hot") and "together" in entry for entry in result.params["fallbacks"])


def test_all_different_with_ladder_at_most_ones_is_counted_by_the_one_hot_csp_in_the_race(monkeypatch):
    """All different over 6 written with ladders (auxiliaries kept through preprocessing): with every other route
    out of the race, the one-hot CSP answers through its proved blocks, 6! = 720."""
    import autonesy.tools.counting as counting

    for name in ("_ganak_count", "_sdd_routes", "count_by_recovery", "count_by_frontier", "count_by_orbits"):
        monkeypatch.setattr(counting, name, _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    _keep_auxiliaries(monkeypatch)
    cnf = all_different(6, EncType.ladder)
    assert cnf.num_aux_vars
    result = count_models(cnf, "auto", enumeration_cap=3, time_limit_s=30)
    assert (result.value, result.method, result.exact) == (720, "one-hot", True)


def _children(pid: int) -> set[int]:
    """The children of process ``pid`` (of all its threads), from /proc."""
    import glob

    found: set[int] = set()
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(path) as children:
            found |= {int(child) for child in children.read().split()}
    return found


_EARLIER_CHILDREN: set[int] = set()  # the test process's children before the race (a sandbox pool keeps some)


def _sibling_states() -> str:
    """The state letters of this racer's siblings (its parent's other children started by the race), from /proc."""
    states = []
    for pid in _children(os.getppid()) - _EARLIER_CHILDREN - {os.getpid()}:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                states.append(stat.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass  # ended meanwhile
    return "".join(states)


def _announce_then_look_around(*args, on_structure):
    import time

    on_structure()
    time.sleep(1.0)  # the race reads the byte within a quarter of a second and pauses the others
    raise RuntimeError(f"siblings {_sibling_states()}")


def _spin_then_answer_12(*args):
    """Answer after 1.5 s of this racer's CPU: time enough for a racer beside it to start and announce, however
    loaded the machine (with 0.3 s a loaded suite saw the SDD child answer before recovery had started)."""
    import time

    while time.thread_time() < 1.5:
        pass
    return 12, {}


@pytest.mark.parametrize(("racer", "label"), [("count_one_hot", "one-hot"), ("count_by_recovery", "recovery")])
def test_a_racer_that_found_its_structure_runs_alone_and_the_others_resume_after(monkeypatch, racer, label):
    """The one-hot route (its groups found) or structure recovery (every block recovered) says so and then looks
    at its siblings: the SDD routes' child (a CPU spinner) is stopped, none runs; once the announcing route
    fails, the SDD child resumes and answers (12 Latin squares of 3; an auxiliary in a clause that always holds,
    so recovery races too)."""
    import autonesy.tools.counting as counting

    for name in ("_ganak_count", "count_by_orbits", "count_by_frontier", "count_one_hot", "count_by_recovery"):
        monkeypatch.setattr(counting, name, _broken)
    monkeypatch.setattr(counting, racer, _announce_then_look_around)
    monkeypatch.setattr(counting, "_sdd_routes", _spin_then_answer_12)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    monkeypatch.setattr(counting, "available_cores", lambda: 1)  # no spare core: nothing runs beside it
    monkeypatch.setattr(sys.modules[__name__], "_EARLIER_CHILDREN", _children(os.getpid()))
    squares = latin_squares(3)
    aux = squares.num_vars + 1
    with_aux = CNF(squares.num_task_vars, squares.clauses + ((aux, -aux),), aux)
    result = count_models(with_aux, "auto", enumeration_cap=3, time_limit_s=30)
    assert (result.value, result.method) == (12, "sdd")
    (seen,) = [entry for entry in result.params["fallbacks"] if entry.startswith(label)]
    states = seen.split("siblings ")[1].split(")")[0]
    assert "T" in states and set(states) <= {"T", "Z"}, seen


class _Racer:
    """What ``_give_priority`` reads of a racer, and whether it was last told to pause."""

    def __init__(self, method: str, found_structure: bool = False, done: bool = False):
        self.method, self.found_structure, self.done = method, found_structure, done
        self.prioritised, self.paused = False, False

    def pause(self, paused: bool) -> None:
        self.paused = paused


@pytest.mark.parametrize("cores", [1, 2, 3, 8])
def test_a_racer_given_priority_leaves_each_spare_core_to_a_general_route(monkeypatch, cores):
    """On c cores the holder runs with c − 1 others, Ganak first, then the SDD routes, then in the race's order
    (a holder alone on two cores left one idle while Ganak, which would have answered, stayed paused)."""
    monkeypatch.setattr(counting, "available_cores", lambda: cores)
    racers = [_Racer("sdd"), _Racer("one-hot", found_structure=True), _Racer("frontier"), _Racer("orbits")]
    racers += [_Racer("ganak"), _Racer("recovery", done=True), _Racer("approxmc")]
    holder, _ = counting._give_priority(racers, None, 0.0, deadline=counting.quiet_clock().now() + 60)
    assert holder is racers[1]
    running = {r.method for r in racers if not r.paused and r is not holder and not r.done}
    assert running == set(["ganak", "sdd", "frontier", "orbits", "approxmc"][: cores - 1])
    assert not holder.paused


def test_a_paused_racer_is_killed_with_the_others(monkeypatch):
    """The winner answers while the others are stopped: they are killed all the same (no process left)."""
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "count_one_hot", lambda *args, on_structure: on_structure() or 12)
    monkeypatch.setattr(counting, "_sdd_routes", _slow)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    earlier = _children(os.getpid())  # a sandbox pool from earlier tests keeps its own
    result = count_models(latin_squares(3), "auto", enumeration_cap=3, time_limit_s=30)
    assert (result.value, result.method) == (12, "one-hot")
    assert _children(os.getpid()) - earlier == set()


def test_a_counter_with_auxiliaries_is_counted_by_the_frontier_route(monkeypatch):
    """Exactly 6 of 14 as pysat's sequential counter: with Ganak, the SDD routes and enumeration out of the
    race, the frontier route answers, exactly (C(14, 6) = 3003)."""
    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "_ganak_count", _broken)
    monkeypatch.setattr(counting, "_sdd_routes", _broken)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    cnf = ClauseBuilder(14).exactly(list(range(1, 15)), 6, EncType.seqcounter).cnf()
    result = count_models(cnf, "auto", enumeration_cap=3, time_limit_s=30)
    assert (result.value, result.method, result.exact) == (3003, "frontier", True)


def test_enumeration_cap_raises():
    with pytest.raises(EnumerationCapReached):
        enumerate_models(CNF(5, ()), cap=3)


def test_unknown_method_is_rejected():
    with pytest.raises(ValueError, match="choose one of"):
        count_models(CNF(1, ()), "magic")


def test_sdd_size_budget_overflow_is_reported():
    cnf = CNF(40, tuple(tuple(c) for c in CardEnc.equals(lits=list(range(1, 41)), bound=20, top_id=40).clauses))
    with pytest.raises(CompilationBudgetExceeded, match="size budget"):
        compile_to_sdd(cnf, size_limit=50)


def _pigeonhole(holes: int) -> CNF:
    from pysat.examples.genhard import PHP

    formula = PHP(holes)
    return CNF(formula.nv, tuple(tuple(c) for c in formula.clauses))


@pytest.mark.parametrize("method", ["enumeration", "ganak", "sdd", "approxmc", "auto"])
def test_every_method_stops_at_its_time_limit(method, monkeypatch):
    """The pigeonhole of 10 is unsatisfiable and hard for every route but the one-hot CSP's (its 0 within half a
    second, on a quiet machine), which is kept out of this one."""
    import time

    monkeypatch.setattr(counting, "count_one_hot", _slow)
    start = time.perf_counter()
    with pytest.raises(CountTimedOut) as raised:
        count_models(_pigeonhole(10), method, time_limit_s=0.5)
    assert time.perf_counter() - start < 0.5 / SLOWEST + 2.5  # on the quiet clock: slower while the machine is loaded
    assert raised.value.method == method and raised.value.time_limit_s == 0.5
    if method == "auto":
        assert any(entry.startswith("enumeration") for entry in raised.value.tried)


def test_a_count_within_its_limit_is_unaffected():
    assert count_models(CNF(20, ((1, 2),)), "ganak", time_limit_s=30).value == 3 * 2**18


def test_enumeration_keeps_its_models_for_reuse():
    result = count_models(CNF(3, ((1, 2),)))
    assert result.method == "enumeration" and set(result.models) == projected_models(CNF(3, ((1, 2),)))
    assert "models" not in result.to_dict()


def test_enumeration_stops_at_its_limit_even_between_solver_calls():
    import time

    start = time.perf_counter()
    with pytest.raises(CountTimedOut):
        enumerate_models(CNF(22, ()), time_limit_s=0.3)  # 4 million easy models: the time goes between calls
    assert time.perf_counter() - start < 2.0


@settings(max_examples=80, deadline=None)
@given(cnfs(max_task_vars=6, max_aux=3, max_clauses=10))
def test_a_models_free_variables_bound_the_count_from_below(cnf):
    from pysat.solvers import Solver

    from autonesy.tools.enumeration import free_task_vars

    with Solver(name="glucose4", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        for var in range(1, cnf.num_vars + 1):
            solver.add_clause([var, -var])
        if solver.solve():
            assert 2 ** free_task_vars(cnf, solver.get_model()) <= len(projected_models(cnf))


def test_enumeration_gives_up_at_its_first_model_when_it_shows_the_cap_passed():
    import time

    start = time.perf_counter()
    with pytest.raises(EnumerationCapReached, match="free variables") as raised:
        enumerate_models(CNF(40, ((1, 2),)), cap=1000)  # 3 * 2**38 models: one model frees 39 variables
    assert raised.value.at_least == 2**39
    assert time.perf_counter() - start < 1.0


def _spin_then_sleep(*args):
    import time

    start = time.process_time()
    while time.process_time() - start < 0.3:
        pass
    time.sleep(60)


def test_a_childs_cpu_time_is_what_it_used_not_the_clock():
    import time

    from autonesy.tools.counting import _Child

    spinning, sleeping = _Child("spin", _spin_then_sleep, ()), _Child("sleep", _slow, ())
    try:
        waited = time.monotonic() + 20
        while spinning.cpu_s() < 0.25 and time.monotonic() < waited:
            time.sleep(0.05)
        assert 0.25 <= spinning.cpu_s() < 1.0
        assert sleeping.cpu_s() < 0.1  # as long on the clock, next to no CPU
    finally:
        spinning.kill()
        sleeping.kill()


def test_ganak_also_races_on_the_cnf_as_encoded_when_preprocessing_changed_it(monkeypatch):
    """A totalizer's count is quick for Ganak as encoded and slow after preprocessing: with Ganak failing on
    the preprocessed CNF (and the other exact routes broken), the racer on the encoded one answers.
    Exactly 3 of 8: C(8, 3) = 56."""
    import autonesy.tools.counting as counting

    cnf = ClauseBuilder(8).exactly(list(range(1, 9)), 3, EncType.totalizer).cnf()
    ganak = counting._ganak_count

    def ganak_as_encoded_only(formula):
        if formula != cnf:
            raise RuntimeError("preprocessed: out of reach on purpose")
        return ganak(formula)

    monkeypatch.setattr(counting, "_ganak_count", ganak_as_encoded_only)
    monkeypatch.setattr(counting, "_sdd_routes", _broken)
    monkeypatch.setattr(counting, "count_by_recovery", _broken)
    monkeypatch.setattr(counting, "count_by_frontier", _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    result = count_models(cnf, "auto", enumeration_cap=3, time_limit_s=30)
    assert (result.value, result.method, result.exact) == (56, "ganak", True)
    assert result.params["racer"] == "ganak on the CNF as encoded"


@given(cnfs(max_task_vars=5, max_aux=2), st.data())
@settings(max_examples=60, deadline=None)
def test_a_count_from_candidates_is_exact_whatever_the_candidates(cnf, data):
    """Candidates from another solver are only a head start: some true models (others missing), some
    assignments that are not models, repeats; the count is still the brute-force projection."""
    expected = projected_models(cnf)
    n = cnf.num_task_vars
    given_models = data.draw(st.lists(st.sampled_from(sorted(expected)), max_size=6)) if expected else []
    wrong = data.draw(st.lists(st.tuples(*[st.integers(0, 1)] * n), max_size=4))
    limit = data.draw(st.sampled_from([None, 30.0]))  # in this process, or the proof in a killable child
    result = count_from_candidates(cnf, given_models + wrong, limit, "a test")
    assert result.exact and result.value == len(expected)
    assert set(result.models) == expected
    rejected = set(wrong) - expected
    assert result.params["rejected"] == len(rejected)
    assert result.params["seeds"] == len(set(given_models) | (set(wrong) & expected))
    assert result.params["found"] == len(expected) - result.params["seeds"]


@pytest.mark.parametrize("label", [label for label, _ in counting._COMPLETENESS_PROVERS])
@given(cnf=cnfs(max_task_vars=5, max_aux=2), data=st.data())
@settings(max_examples=40, deadline=None)
def test_each_completeness_prover_agrees_with_brute_force(label, cnf, data):
    """Each racer alone (a wrong one would hide behind a faster right one): blocking a subset of the
    projected models plus some other assignments leaves nothing exactly when they cover every model."""
    prove = dict(counting._COMPLETENESS_PROVERS)[label]
    expected = projected_models(cnf)
    n = cnf.num_task_vars
    listed = data.draw(st.lists(st.sampled_from(sorted(expected)), unique=True)) if expected else []
    wrong = data.draw(st.lists(st.tuples(*[st.integers(0, 1)] * n), max_size=3))
    assert prove(cnf, listed + wrong) == (expected <= set(listed) | set(wrong))


def test_a_failing_completeness_prover_leaves_the_proof_to_the_other(monkeypatch):
    def broken(cnf, models):
        raise RuntimeError("this prover is broken on purpose")

    cnf = CNF(2, ((1, 2),), 2)  # x1 or x2: 3 models
    originals = counting._COMPLETENESS_PROVERS
    for label, _ in originals:
        provers = tuple((name, broken if name == label else prove) for name, prove in originals)
        monkeypatch.setattr(counting, "_COMPLETENESS_PROVERS", provers)
        result = count_from_candidates(cnf, [(1, 0), (0, 1), (1, 1)], 30.0, "a test")
        assert (result.value, result.params["found"]) == (3, 0)
        assert result.params["completeness_by"] != label
    monkeypatch.setattr(counting, "_COMPLETENESS_PROVERS", originals)
    monkeypatch.setattr(counting, "CP_SAT_MAX_LITERALS", 3)  # too large for CP-SAT: CaDiCaL proves it
    assert count_from_candidates(cnf, [(1, 0), (0, 1), (1, 1)], 30.0, "a test").params["completeness_by"] == "cadical"
    monkeypatch.setattr(counting, "_COMPLETENESS_PROVERS", (("a", broken), ("b", broken)))
    with pytest.raises(counting.CounterFailed, match="broken on purpose"):
        count_from_candidates(cnf, [(1, 0)], 30.0, "a test")


def test_a_count_from_candidates_refuses_an_assignment_of_the_wrong_shape():
    cnf = CNF(2, ((1, 2),), 2)  # x1 or x2: 3 models
    assert count_from_candidates(cnf, [(1, 0), (0, 1), (1, 1)], 5.0, "a test").params["found"] == 0
    for bad in [(1,), (1, 0, 1), (2, 0)]:
        with pytest.raises(ValueError, match="not a 0/1 assignment"):
            count_from_candidates(cnf, [bad], 5.0, "a test")


@pytest.mark.parametrize("large_clauses", [None, 10])
def test_two_encodings_of_exactly_k_and_a_clause_are_counted_by_structure_recovery(monkeypatch, large_clauses):
    """Exactly 7 of 14 as a sequential counter and as a totalizer, and x1 ∨ x2: with Ganak, the SDD routes,
    frontier, orbits and enumeration out of the race, recovery answers, exactly (C(14, 7) - C(12, 7) = 2640).
    With ``large_clauses`` the CNF is past ``AUTO_LARGE_CLAUSES`` (as exactly-100 of 200 overlapped is with its
    82,891 clauses), and recovery still races."""
    from pysat.card import CardEnc, EncType

    import autonesy.tools.counting as counting

    for name in ("_ganak_count", "_sdd_routes", "count_by_frontier", "count_by_orbits"):
        monkeypatch.setattr(counting, name, _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    if large_clauses is not None:
        monkeypatch.setattr(counting, "AUTO_LARGE_CLAUSES", large_clauses)
    truth = CardEnc.equals(lits=list(range(1, 15)), bound=7, top_id=14, encoding=EncType.seqcounter)
    answer = CardEnc.equals(lits=list(range(1, 15)), bound=7, top_id=truth.nv, encoding=EncType.totalizer)
    cnf = CNF(14, tuple(map(tuple, truth.clauses + answer.clauses)) + ((1, 2),), answer.nv)
    result = count_models(cnf, "auto", enumeration_cap=3)
    assert (result.value, result.method, result.exact) == (3432 - 792, "recovery", True)
