"""bdd-oia-2, bdd-oia and road-r: variables, hand-checked assignments, counts, proofs, mutations."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.solvers import Solver

from autonesy.tasks.catalogue import road_r_requirements as road_r_data
from autonesy.tasks.catalogue.driving import (
    ROAD_R_VARIABLES,
    bdd_oia,
    bdd_oia_2,
    parse_requirement,
    road_r,
    road_r_requirements,
    road_r_rule_list,
)
from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tools.compile import compile_to_sdd
from autonesy.tools.counting import count_by_ganak


@pytest.fixture(scope="module")
def oia2():
    return bdd_oia_2()


@pytest.fixture(scope="module")
def oia():
    return bdd_oia()


@pytest.fixture(scope="module")
def roadr():
    return road_r()


def row(task, true_names) -> np.ndarray:
    true_names = set(true_names)
    unknown = true_names - set(task.names)
    assert not unknown, f"test names unknown variables {unknown}"
    return np.array([name in true_names for name in task.names], dtype=bool)


def ground_truth_accepts(task, assignment) -> bool:
    """Whether the ground truth CNF has a model extending the assignment (SAT call, no SDD)."""
    assumptions = [i + 1 if v else -(i + 1) for i, v in enumerate(assignment)]
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in task.ground_truth.clauses]) as solver:
        return solver.solve(assumptions=assumptions)


def check(task, true_names, expected: bool) -> None:
    x = row(task, true_names)
    assert task.oracle(x) is expected, f"oracle on {sorted(true_names)}"
    assert ground_truth_accepts(task, x) is expected, f"ground truth on {sorted(true_names)}"


def without_clause(task, index):
    cnf = task.ground_truth
    mutated = cnf.with_clauses(cnf.clauses[:index] + cnf.clauses[index + 1 :])
    return dataclasses.replace(task, encode=lambda: mutated)


# --------------------------------------------------------------------------------------------------
# bdd-oia-2
# --------------------------------------------------------------------------------------------------

BDD_CONCEPTS = [
    "green_light",
    "follow",
    "clear",
    "red_light",
    "stop_sign",
    "car",
    "person",
    "rider",
    "other_obstacle",
]


def test_bdd_oia_2_variables_are_rsbench_concepts_then_actions(oia2):
    assert oia2.name == "bdd-oia-2"
    assert oia2.names == BDD_CONCEPTS + ["move_forward", "stop"]
    assert oia2.num_vars == 11


def test_bdd_oia_2_ground_truth_size_matches_published(oia2):
    gt = oia2.ground_truth
    assert len(gt.clauses) == 17 == oia2.metadata.published_clauses
    assert gt.num_aux_vars == 0


@pytest.mark.parametrize(
    "true_names, expected",
    [
        ({"green_light", "clear", "move_forward"}, True),
        ({"red_light", "clear", "stop"}, True),
        ({"red_light", "clear", "move_forward"}, False),  # red light: must stop, may not go
        ({"red_light", "clear"}, False),  # red light but no stop
        ({"green_light", "car", "stop"}, True),  # an obstacle beats the green light
        ({"green_light", "car", "move_forward"}, False),
        ({"green_light", "car", "move_forward", "stop"}, False),  # never both actions
        ({"clear", "car", "stop"}, False),  # clear road with a car in the way
        ({"stop"}, False),  # nothing seen: no obstacle, so the road must be clear
        ({"clear", "move_forward"}, True),
        ({"clear", "stop"}, False),  # no reason to stop
        ({"clear"}, False),  # a reason to go and none to stop: must move forward
        ({"green_light", "red_light", "clear", "stop"}, False),  # both light colours
        ({"stop_sign", "follow", "clear", "stop"}, True),
        ({"person", "rider", "other_obstacle", "stop"}, True),
    ],
)
def test_bdd_oia_2_hand_checked_assignments(oia2, true_names, expected):
    check(oia2, true_names, expected)


def test_bdd_oia_2_model_count_by_combinatorics(oia2):
    # light ∈ {off, green, red} × follow × stop sign × obstacle subset; clear and both actions follow.
    expected = 3 * 2 * 2 * 2**4
    report = prove_equivalence(oia2)
    assert report.method == "exhaustive"
    assert report.model_count == expected == 192
    assert report.assignments_checked == 2**11


def test_bdd_oia_2_dropping_any_essential_clause_breaks_the_proof(oia2):
    gt = oia2.ground_truth
    # green → stop ∨ forward and follow → stop ∨ forward are implied by clear → stop ∨ forward together
    # with clear ↔ no obstacle (documented in the design notes); every other clause is needed.
    implied = {(-1, 11, 10), (-2, 11, 10)}
    for i, clause in enumerate(gt.clauses):
        mutated = without_clause(oia2, i)
        if clause in implied:
            assert prove_equivalence(mutated).model_count == 192
        else:
            with pytest.raises(EquivalenceError):
                prove_equivalence(mutated)


# --------------------------------------------------------------------------------------------------
# bdd-oia
# --------------------------------------------------------------------------------------------------


def side(s):
    return [f"{s}_lane", f"{s}_green_light", f"{s}_follow", f"no_{s}_lane", f"{s}_obstacle", f"{s}_solid_line"]


def test_bdd_oia_variables_follow_rsbench_order(oia):
    assert oia.num_vars == 25
    actions = ["move_forward", "stop", "turn_left", "turn_right"]
    assert oia.names == BDD_CONCEPTS + side("left") + side("right") + actions


def test_bdd_oia_ground_truth_size_matches_published(oia):
    assert len(oia.ground_truth.clauses) == 31 == oia.metadata.published_clauses
    assert oia.ground_truth.num_aux_vars == 0


@pytest.mark.parametrize(
    "true_names, expected",
    [
        ({"clear", "move_forward"}, True),
        ({"clear", "move_forward", "left_lane", "turn_left"}, True),  # turning and going forward together
        ({"clear", "move_forward", "left_lane"}, False),  # may turn left and nothing forbids it: must
        ({"clear", "move_forward", "left_lane", "left_solid_line"}, True),
        ({"clear", "move_forward", "left_lane", "left_solid_line", "turn_left"}, False),
        ({"clear", "move_forward", "turn_right"}, False),  # no reason to turn right
        ({"clear", "move_forward", "right_follow", "right_obstacle", "turn_right"}, False),
        ({"clear", "move_forward", "right_green_light", "turn_right", "left_follow", "turn_left"}, True),
        ({"clear", "move_forward", "left_lane", "no_left_lane"}, True),  # contradictory-looking, not forbidden
        ({"red_light", "clear", "stop", "right_lane", "turn_right"}, True),
        ({"red_light", "clear", "move_forward", "right_lane", "turn_right"}, False),
    ],
)
def test_bdd_oia_hand_checked_assignments(oia, true_names, expected):
    check(oia, true_names, expected)


def test_bdd_oia_model_count_by_combinatorics(oia):
    # The 192 forward/stop worlds times 2^6 free turning concepts per side (each turn is then determined).
    expected = 192 * 2**6 * 2**6
    assert compile_to_sdd(oia.ground_truth).model_count() == expected == 786_432
    assert count_by_ganak(oia.ground_truth).value == expected


def test_bdd_oia_oracle_agrees_with_ground_truth_on_random_rows(oia):
    rng = np.random.default_rng(0)
    x = rng.random((4000, 25)) < 0.3
    # also rows built to be valid in the forward/stop block, so the turning rules are what is tested
    x[:2000, :11] = row(oia, {"clear", "move_forward"})[:11]
    sdd = compile_to_sdd(oia.ground_truth)
    by_oracle = oia.oracle_batch(x)
    assert by_oracle.any() and not by_oracle.all()
    assert np.array_equal(by_oracle, sdd.evaluate(x))


@pytest.mark.slow
def test_bdd_oia_exhaustive_proof(oia):
    report = prove_equivalence(oia)
    assert report.model_count == 786_432 and report.assignments_checked == 2**25


def test_bdd_oia_dropping_a_turn_clause_breaks_it(oia):
    gt = oia.ground_truth
    turn_left = oia.index_of("turn_left")
    solid = oia.index_of("left_solid_line")
    index = gt.clauses.index((-turn_left, -solid))
    mutated = without_clause(oia, index)
    x = row(oia, {"clear", "move_forward", "left_lane", "left_solid_line", "turn_left"})
    assert ground_truth_accepts(mutated, x) and not oia.oracle(x)


# --------------------------------------------------------------------------------------------------
# road-r
# --------------------------------------------------------------------------------------------------


def test_road_r_labels_are_road_r_41_in_order(roadr):
    assert roadr.num_vars == 41
    assert len(road_r_data.AGENT_LABELS) == 10
    assert len(road_r_data.ACTION_LABELS) == 19
    assert len(road_r_data.LOCATION_LABELS) == 12
    assert roadr.names[:10] == [
        "pedestrian",
        "car",
        "cyclist",
        "motorbike",
        "medium_vehicle",
        "large_vehicle",
        "bus",
        "emergency_vehicle",
        "traffic_light",
        "other_traffic_light",
    ]
    assert roadr.names == [ROAD_R_VARIABLES[label][0] for label in road_r_data.LABELS]
    assert all(v.meaning.endswith(f"; ROAD-R label {label}") for label, v in zip(road_r_data.LABELS, roadr.variables))


def test_road_r_requirements_are_the_published_243(roadr):
    reqs = road_r_requirements()
    assert len(reqs) == 243 == roadr.metadata.published_clauses
    assert len({r.text for r in reqs}) == 243
    rules = road_r_rule_list()
    assert rules.num_task_vars == 41 and rules.num_aux_vars == 0 and len(rules.clauses) == 243
    assert "f45828e89bfa9b6c8f18f3fba7f3f5c8b36d4aab" in roadr.metadata.design_notes
    assert roadr.metadata.licence == "CC BY-NC-SA 4.0"
    # Spot checks against the published file (line 1: "0 :- 28"; line 14: "9 :- 12 n8").
    assert reqs[0].text == "PushObj -> Ped"
    assert reqs[13].text == "Green & ~TL -> OthTL"


def test_parse_requirement_reads_our_notation():
    req = parse_requirement("Green & ~TL -> OthTL")
    labels = road_r_data.LABELS
    assert req.body == ((labels.index("Green"), True), (labels.index("TL"), False))
    assert req.head == (labels.index("OthTL"), True)
    assert parse_requirement("Cyc -> ~Car").head == (labels.index("Car"), False)
    with pytest.raises(ValueError, match="unknown label"):
        parse_requirement("Truck -> ~Car")


def test_road_r_ground_truth_uses_cardinality_encodings(roadr):
    gt = roadr.ground_truth
    assert gt.num_aux_vars > 0
    assert set(gt.clauses) != set(road_r_rule_list().clauses)


@pytest.mark.parametrize(
    "true_names, expected",
    [
        ({"pedestrian", "crossing", "at_crossing"}, True),
        ({"pedestrian", "at_crossing"}, False),  # a pedestrian must be doing something
        ({"pedestrian", "car", "crossing", "at_crossing"}, False),  # two agent types
        ({"crossing", "at_crossing"}, False),  # no agent type
        ({"car", "moving_towards", "in_incoming_lane"}, True),
        ({"car", "in_incoming_lane"}, False),  # a car must have an action
        ({"car", "red", "moving_towards", "in_incoming_lane"}, False),  # only traffic lights show colours
        ({"traffic_light", "red"}, True),  # traffic lights need no location
        ({"traffic_light", "red", "green"}, False),
        ({"other_traffic_light", "amber"}, True),
        ({"traffic_light", "moving_away"}, False),
        ({"cyclist", "braking", "in_ego_lane"}, False),
        ({"cyclist", "moving_away", "in_ego_lane"}, True),
        ({"car", "moving_away"}, False),  # a non-traffic-light needs a location
        ({"car", "moving_away", "at_parking", "at_junction"}, False),
        ({"car", "moving_away", "on_pavement", "at_crossing"}, True),
        ({"pedestrian", "indicating_left", "moving", "on_pavement"}, False),
        ({"bus", "stopped", "at_bus_stop"}, True),
        ({"emergency_vehicle", "hazard_lights", "stopped", "in_ego_lane"}, True),
        ({"pedestrian", "pushing_object", "on_left_pavement"}, True),
        ({"car", "pushing_object", "in_ego_lane"}, False),
    ],
)
def test_road_r_hand_checked_assignments(roadr, true_names, expected):
    check(roadr, true_names, expected)


def test_road_r_model_count_by_two_exact_counters(roadr):
    rules = road_r_rule_list()
    by_ganak = count_by_ganak(rules).value
    assert by_ganak == compile_to_sdd(rules).model_count() == 4_985_734
    assert count_by_ganak(roadr.ground_truth).value == by_ganak


def test_road_r_clausal_proof(roadr):
    report = prove_equivalence(roadr)
    assert report.method == "clausal"
    assert report.model_count == 4_985_734 and report.assignments_checked == 243


def test_road_r_dropping_a_requirement_breaks_the_proof(roadr):
    # "a car must have an action" is not implied by the other requirements (many others are, e.g.
    # "PushObj -> Ped" follows from the exclusions and "at least one agent type").
    gt = roadr.ground_truth
    rules = road_r_rule_list()
    k = next(i for i, r in enumerate(road_r_requirements()) if r.text.startswith("Car & ~MovAway"))
    with pytest.raises(EquivalenceError, match="violating rule"):
        prove_equivalence(without_clause(roadr, gt.clauses.index(rules.clauses[k])))
    # and the other way round: a rule list missing that requirement has more models than the ground truth
    fewer = rules.with_clauses(rules.clauses[:k] + rules.clauses[k + 1 :])
    with pytest.raises(EquivalenceError, match="models"):
        prove_equivalence(dataclasses.replace(roadr, rule_list=lambda: fewer))


def satisfies_rule_list(clauses, x) -> bool:
    return all(any(x[abs(lit) - 1] == (lit > 0) for lit in clause) for clause in clauses)


# Random label vectors: dense ones, and sparse ones that often are valid (one agent, few labels).
label_vectors = st.one_of(
    st.lists(st.booleans(), min_size=41, max_size=41),
    st.tuples(st.integers(0, 9), st.sets(st.integers(10, 40), max_size=5)).map(
        lambda t: [i == t[0] or i in t[1] for i in range(41)]
    ),
)


@settings(max_examples=300, deadline=None)
@given(label_vectors)
def test_road_r_oracle_agrees_with_rule_list(roadr_x):
    task = _ROAD_R
    x = np.array(roadr_x, dtype=bool)
    assert task.oracle(x) == satisfies_rule_list(_RULES, x)


def test_road_r_oracle_accepts_models_of_the_rule_list_and_rejects_their_flips(roadr):
    rules = road_r_rule_list()
    models = []
    with Solver(name="cadical195", bootstrap_with=[list(c) for c in rules.clauses]) as solver:
        for model in itertools.islice(solver.enum_models(), 300):
            models.append([lit > 0 for lit in model[:41]])
    x = np.array(models, dtype=bool)
    assert len(x) == 300 and roadr.oracle_batch(x).all()
    flipped = x.copy()
    flipped[:, 0:10] = False  # no agent type: violates "at least one agent type"
    assert not roadr.oracle_batch(flipped).any()


def test_road_r_descriptions_state_the_structure(roadr):
    detailed = roadr.descriptions.detailed
    assert "exactly one agent type" in detailed
    assert "243" in detailed
    assert "must NOT be encoded" in detailed
    # every one of the 41 labels is mentioned by its phrase
    for label in road_r_data.LABELS:
        assert ROAD_R_VARIABLES[label][1] in detailed, label
    assert len(roadr.descriptions.not_detailed) < 400


_ROAD_R = road_r()
_RULES = road_r_rule_list().clauses
