"""Driving tasks: BDD-OIA action rules (rsbench) and ROAD-R's published requirements.

``bdd-oia-2`` and ``bdd-oia`` follow rsbench's BDD-OIA knowledge (Bortolotti et al. 2024): the
concepts a scene is annotated with determine which actions are allowed. ``road-r`` holds ROAD-R's
243 requirements over its 41 labels (Giunchiglia et al. 2023); the requirements themselves are data,
in ``road_r_requirements.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pysat.card import EncType

from autonesy.tasks.catalogue import road_r_requirements as road_r_data
from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskError, TaskMetadata, Variable
from autonesy.tools.cnf import CNF

# --------------------------------------------------------------------------------------------------
# BDD-OIA (rsbench)
# --------------------------------------------------------------------------------------------------

BDD_OIA_SOURCE = "BDD-OIA (Xu et al. 2020), concepts and knowledge as in rsbench (Bortolotti et al. 2024)"
BDD_OIA_CITATION = (
    "Xu, Yang, Mao, Rutherford, Tabatabaei, Li, Vasconcelos. Explainable Object-Induced Action Decision "
    "for Autonomous Vehicles. CVPR 2020. Concepts and knowledge from: Bortolotti, Marconato, Carraro, "
    "Morettin, van Krieken, Vergari, Teso, Passerini. A Neuro-Symbolic Benchmark Suite for Concept Quality "
    "and Reasoning Shortcuts (rsbench). NeurIPS 2024 Datasets and Benchmarks."
)
BDD_OIA_LICENCE = "see rsbench (code BSD-3-Clause; BDD-OIA annotations as distributed with rsbench)"

# BDD-OIA's 21 concepts as rsbench names them, grouped here: the forward/stop concepts, then the six
# left-turn and six right-turn ones (rsbench stores the turn concepts in another order; its data
# loader, tasks/data/rsbench.py, maps them by name).
FORWARD_STOP_CONCEPTS = (
    ("green_light", "the traffic light ahead of the ego car is green"),
    ("follow", "the ego car can follow the traffic ahead of it (the vehicle in front is moving on)"),
    ("clear", "the road ahead of the ego car is clear"),
    ("red_light", "the traffic light ahead of the ego car is red"),
    ("stop_sign", "there is a stop sign (a traffic sign that orders the ego car to stop)"),
    ("car", "a car is an obstacle ahead of the ego car"),
    ("person", "a person (pedestrian) is an obstacle ahead of the ego car"),
    ("rider", "a rider (cyclist or motorcyclist) is an obstacle ahead of the ego car"),
    ("other_obstacle", "some other obstacle is ahead of the ego car"),
)
OBSTACLES = ("car", "person", "rider", "other_obstacle")


def _side_concepts(side: str) -> tuple[tuple[str, str], ...]:
    return (
        (f"{side}_lane", f"there is a {side}-turn lane the ego car can use"),
        (f"{side}_green_light", f"the traffic light allows a {side} turn (green {side}-turn light)"),
        (f"{side}_follow", f"the ego car can follow a vehicle ahead that is turning {side}"),
        (f"no_{side}_lane", f"there is no lane on the {side}"),
        (f"{side}_obstacle", f"there is an obstacle on the {side} side"),
        (f"{side}_solid_line", f"there is a solid line on the {side} (crossing it is not allowed)"),
    )


FORWARD_STOP_ACTIONS = (
    ("move_forward", "the ego car moves forward"),
    ("stop", "the ego car stops (or slows down to a stop)"),
)
TURN_ACTIONS = (
    ("turn_left", "the ego car turns left"),
    ("turn_right", "the ego car turns right"),
)

_BDD_RULES_FORWARD_STOP = (
    "- The traffic light ahead cannot be red and green at the same time.\n"
    "- The road is clear exactly when there is no obstacle: if a car, a person, a rider or another "
    "obstacle is ahead, the road is not clear; if none of these four is ahead, the road is clear.\n"
    "- The ego car stops exactly when it has a reason to stop: a red light, a stop sign, or any of the "
    "four obstacles (car, person, rider, other obstacle). If at least one reason holds it must stop; if "
    "none holds it must not stop.\n"
    "- The ego car moves forward exactly when it has a reason to go (a green light, traffic it can "
    "follow, or a clear road) and it does not stop. In particular it never moves forward and stops at "
    "the same time: a reason to stop overrides every reason to go.\n"
)


def _bdd_turn_rules(side: str) -> str:
    return (
        f"- The ego car turns {side} exactly when turning {side} is possible and not forbidden. It is "
        f"possible when there is a {side}-turn lane, a green {side}-turn light, or a vehicle ahead turning "
        f"{side} that it can follow (at least one of the three). It is forbidden when there is no lane on "
        f"the {side}, an obstacle on the {side}, or a solid line on the {side} (any one of the three). So: "
        f"if it turns {side}, at least one enabling reason holds and no forbidding reason holds; and if an "
        f"enabling reason holds and no forbidding reason holds, it must turn {side}.\n"
    )


def _bdd_encode(names: list[str], with_turns: bool) -> CNF:
    idx = {name: i + 1 for i, name in enumerate(names)}
    b = ClauseBuilder(len(names))
    obstacles = [idx[o] for o in OBSTACLES]
    b.add([-idx["red_light"], -idx["green_light"]])
    b.iff_or(-idx["clear"], obstacles)  # ¬clear ↔ some obstacle: 5 clauses
    b.iff_or(idx["stop"], [idx["red_light"], idx["stop_sign"], *obstacles])  # 7 clauses
    forward, stop = idx["move_forward"], idx["stop"]
    b.add([-forward, -stop])
    for concept in ("green_light", "follow", "clear"):
        b.implies([idx[concept]], [stop, forward])
    # "forward → green ∨ follow ∨ clear" is implied (forward → ¬stop → no obstacle → clear): not added.
    if with_turns:
        for side in ("left", "right"):
            turn = idx[f"turn_{side}"]
            can = [idx[f"{side}_lane"], idx[f"{side}_green_light"], idx[f"{side}_follow"]]
            cannot = [idx[f"no_{side}_lane"], idx[f"{side}_obstacle"], idx[f"{side}_solid_line"]]
            b.implies([turn], can)
            for c in cannot:
                b.add([-turn, -c])
            for reason in can:
                b.implies([reason], [*cannot, turn])
    return b.cnf()


def _bdd_oracle(names: list[str], with_turns: bool):
    col = {name: i for i, name in enumerate(names)}

    def oracle(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=bool)
        v = {name: x[:, i] for name, i in col.items()}
        obstacle = v["car"] | v["person"] | v["rider"] | v["other_obstacle"]
        consistent = ~(v["red_light"] & v["green_light"]) & (v["clear"] == ~obstacle)
        must_stop = v["red_light"] | v["stop_sign"] | obstacle
        may_go = v["green_light"] | v["follow"] | v["clear"]
        ok = consistent & (v["stop"] == must_stop) & (v["move_forward"] == (may_go & ~must_stop))
        if with_turns:
            for side in ("left", "right"):
                can = v[f"{side}_lane"] | v[f"{side}_green_light"] | v[f"{side}_follow"]
                cannot = v[f"no_{side}_lane"] | v[f"{side}_obstacle"] | v[f"{side}_solid_line"]
                ok &= v[f"turn_{side}"] == (can & ~cannot)
        return ok

    return oracle


def bdd_oia_2() -> Task:
    """BDD-OIA restricted to forward/stop: the concepts and actions of the simpler variant."""
    pairs = FORWARD_STOP_CONCEPTS + FORWARD_STOP_ACTIONS
    names = [name for name, _ in pairs]
    return Task(
        name="bdd-oia-2",
        variables=tuple(Variable(name, meaning) for name, meaning in pairs),
        descriptions=Descriptions(
            detailed=(
                "A driving scene from BDD-OIA is described by nine concepts seen from the ego car (the state "
                "of the traffic light ahead, whether it can follow the traffic ahead, whether the road is "
                "clear, a stop sign, and four kinds of obstacle: car, person, rider, other obstacle) and by "
                "two actions of the ego car: move forward and stop. Concepts and actions must obey these "
                "driving rules:\n"
                + _BDD_RULES_FORWARD_STOP
                + "Background facts that must NOT be encoded: which concepts tend to occur together in real "
                "traffic (e.g. a stop sign next to a green light, or several obstacles at once, are allowed); "
                "any link between 'follow' and the other concepts; that a green light alone forces moving "
                "forward (a reason to stop still wins); and turning, which is not part of this task."
            ),
            not_detailed=(
                "A self-driving car must stop when it sees a red light, a stop sign or an obstacle, and "
                "otherwise drive forward when the light is green, it can follow traffic or the road is clear; "
                "it can never move forward and stop at once."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset=BDD_OIA_SOURCE,
            citation=BDD_OIA_CITATION,
            licence=BDD_OIA_LICENCE,
            published_clauses=17,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "rsbench's BDD-OIA knowledge restricted to the forward/stop part (its `logic_forward`): "
                "¬(red ∧ green); clear ↔ ¬(car ∨ person ∨ rider ∨ other_obstacle); "
                "stop ↔ red ∨ stop_sign ∨ car ∨ person ∨ rider ∨ other_obstacle; "
                "move_forward ↔ (green ∨ follow ∨ clear) ∧ ¬stop. The actions are functions of the concepts: "
                "192 models (3 light states × 2 follow × 2 stop sign × 16 obstacle sets). Encoded with 17 "
                "clauses and no auxiliaries, the same count as published: "
                "move_forward → green ∨ follow ∨ clear is implied (forward → ¬stop → no obstacle → clear) "
                "and left out; green → stop ∨ move_forward and follow → stop ∨ move_forward are implied too (without an obstacle the road is clear) but "
                "kept, as they state rsbench's rule. So in the valid set move_forward ↔ ¬stop."
            ),
        ),
        encode=lambda: _bdd_encode(names, with_turns=False),
        oracle_batch=_bdd_oracle(names, with_turns=False),
    )


def bdd_oia() -> Task:
    """BDD-OIA: 21 driving concepts and four actions (forward, stop, left, right) with the rules that link them."""
    concepts = FORWARD_STOP_CONCEPTS + _side_concepts("left") + _side_concepts("right")
    pairs = concepts + FORWARD_STOP_ACTIONS + TURN_ACTIONS
    names = [name for name, _ in pairs]
    return Task(
        name="bdd-oia",
        variables=tuple(Variable(name, meaning) for name, meaning in pairs),
        descriptions=Descriptions(
            detailed=(
                "A driving scene from BDD-OIA is described by 21 concepts seen from the ego car and four "
                "actions of the ego car: move forward, stop, turn left, turn right. Nine concepts concern "
                "going forward or stopping (traffic light ahead green or red, traffic it can follow, a clear "
                "road, a stop sign, and four kinds of obstacle: car, person, rider, other obstacle); six "
                "concern turning left (a left-turn lane, a green left-turn light, a vehicle ahead turning "
                "left to follow, no lane on the left, an obstacle on the left, a solid line on the left) and "
                "the same six concern turning right. Concepts and actions must obey these driving rules:\n"
                + _BDD_RULES_FORWARD_STOP
                + _bdd_turn_rules("left")
                + _bdd_turn_rules("right")
                + "Background facts that must NOT be encoded: that a left-turn lane and 'no lane on the left' "
                "(or the right-hand pair) seem contradictory — no rule relates them; that the ego car cannot "
                "turn left and right, or turn and move forward or stop, at the same time — nothing forbids "
                "these combinations; which concepts tend to occur together in real traffic; and any link "
                "between the turning concepts and the forward/stop concepts."
            ),
            not_detailed=(
                "A self-driving car stops for red lights, stop signs and obstacles, and otherwise goes forward "
                "when the light is green, it can follow traffic or the road is clear; it never goes forward and "
                "stops at once. It turns left or right when a turn lane, a turn light or a turning car ahead "
                "allows it and there is no missing lane, obstacle or solid line on that side."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset=BDD_OIA_SOURCE,
            citation=BDD_OIA_CITATION,
            licence=BDD_OIA_LICENCE,
            published_clauses=31,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "rsbench's BDD-OIA knowledge (its `logic_forward` over 21 concepts, in rsbench's concept "
                "order): the bdd-oia-2 rules, plus for each side s ∈ {left, right}: "
                "turn_s ↔ (s_lane ∨ s_green_light ∨ s_follow) ∧ ¬(no_s_lane ∨ s_obstacle ∨ s_solid_line). "
                "Actions are functions of the concepts: 192 × 2^12 = 786,432 models. 17 + 2 × 7 = 31 "
                "clauses, no auxiliaries, the same count as published."
            ),
        ),
        encode=lambda: _bdd_encode(names, with_turns=True),
        oracle_batch=_bdd_oracle(names, with_turns=True),
    )


# --------------------------------------------------------------------------------------------------
# ROAD-R
# --------------------------------------------------------------------------------------------------

# ROAD-R label → (our variable name, phrase that completes "the agent is ...").
ROAD_R_VARIABLES: dict[str, tuple[str, str]] = {
    "Ped": ("pedestrian", "a pedestrian"),
    "Car": ("car", "a car"),
    "Cyc": ("cyclist", "a cyclist"),
    "Mobike": ("motorbike", "a motorbike"),
    "MedVeh": ("medium_vehicle", "a medium-sized vehicle (e.g. a van)"),
    "LarVeh": ("large_vehicle", "a large vehicle (e.g. a lorry)"),
    "Bus": ("bus", "a bus"),
    "EmVeh": ("emergency_vehicle", "an emergency vehicle"),
    "TL": ("traffic_light", "the traffic light that regulates the ego vehicle"),
    "OthTL": ("other_traffic_light", "another traffic light (one not regulating the ego vehicle)"),
    "Red": ("red", "showing red (a traffic light)"),
    "Amber": ("amber", "showing amber (a traffic light)"),
    "Green": ("green", "showing green (a traffic light)"),
    "MovAway": ("moving_away", "moving away from the ego vehicle"),
    "MovTow": ("moving_towards", "moving towards the ego vehicle"),
    "Mov": ("moving", "moving (neither towards nor away from the ego vehicle)"),
    "Brake": ("braking", "braking (brake lights on)"),
    "Stop": ("stopped", "stopped"),
    "IncatLft": ("indicating_left", "indicating left"),
    "IncatRht": ("indicating_right", "indicating right"),
    "HazLit": ("hazard_lights", "flashing its hazard lights"),
    "TurLft": ("turning_left", "turning left"),
    "TurRht": ("turning_right", "turning right"),
    "Ovtak": ("overtaking", "overtaking"),
    "Wait2X": ("waiting_to_cross", "waiting to cross the road"),
    "XingFmLft": ("crossing_from_left", "crossing the road from the left"),
    "XingFmRht": ("crossing_from_right", "crossing the road from the right"),
    "Xing": ("crossing", "crossing the road"),
    "PushObj": ("pushing_object", "pushing an object (e.g. a pram or a trolley)"),
    "VehLane": ("in_ego_lane", "in the ego vehicle's own lane"),
    "OutgoLane": ("in_outgoing_lane", "in an outgoing lane (traffic going the ego vehicle's way)"),
    "OutgoCycLane": ("in_outgoing_cycle_lane", "in an outgoing cycle lane"),
    "IncomLane": ("in_incoming_lane", "in an incoming lane (traffic coming towards the ego vehicle)"),
    "IncomCycLane": ("in_incoming_cycle_lane", "in an incoming cycle lane"),
    "Pav": ("on_pavement", "on a pavement"),
    "LftPav": ("on_left_pavement", "on the left pavement"),
    "RhtPav": ("on_right_pavement", "on the right pavement"),
    "Jun": ("at_junction", "at a junction"),
    "xing": ("at_crossing", "at a pedestrian crossing"),
    "BusStop": ("at_bus_stop", "at a bus stop"),
    "parking": ("at_parking", "in a parking area"),
}


@dataclass(frozen=True)
class Requirement:
    """``body -> head`` over label positions (0-based); a literal is (position, is_positive)."""

    body: tuple[tuple[int, bool], ...]
    head: tuple[int, bool]
    text: str


def parse_requirement(text: str, labels: tuple[str, ...] = road_r_data.LABELS) -> Requirement:
    """One ROAD-R requirement line as a clause over label positions; an unknown label is a ``TaskError``."""
    position = {label: i for i, label in enumerate(labels)}

    def literal(token: str) -> tuple[int, bool]:
        token = token.strip()
        positive = not token.startswith("~")
        name = token.lstrip("~").strip()
        if name not in position:
            raise TaskError(f"ROAD-R requirement {text!r}: unknown label {name!r}")
        return position[name], positive

    if text.count("->") != 1:
        raise TaskError(f"ROAD-R requirement {text!r}: expected 'BODY -> HEAD'")
    body_text, head_text = text.split("->")
    body = tuple(literal(t) for t in body_text.split("&")) if body_text.strip() else ()
    return Requirement(body, literal(head_text), text)


def road_r_requirements() -> tuple[Requirement, ...]:
    """The 243 published ROAD-R requirements, parsed."""
    return tuple(parse_requirement(line) for line in road_r_data.REQUIREMENTS)


def _requirement_clause(req: Requirement) -> tuple[int, ...]:
    """¬body ∨ head as DIMACS literals (positions + 1)."""
    body = tuple(-(i + 1) if positive else i + 1 for i, positive in req.body)
    i, positive = req.head
    return body + ((i + 1) if positive else -(i + 1),)


def road_r_rule_list() -> CNF:
    """The 243 requirements, one clause each, over the 41 labels (no auxiliaries)."""
    return CNF(len(road_r_data.LABELS), tuple(_requirement_clause(r) for r in road_r_requirements()))


def _road_r_oracle_from(requirements: tuple[Requirement, ...], n: int):
    """Evaluate every requirement "body → head" directly on a batch of label vectors."""
    r = len(requirements)
    body_pos = np.zeros((r, n), dtype=np.int32)
    body_neg = np.zeros((r, n), dtype=np.int32)
    head_col = np.zeros(r, dtype=np.int64)
    head_positive = np.zeros(r, dtype=bool)
    for k, req in enumerate(requirements):
        for i, positive in req.body:
            (body_pos if positive else body_neg)[k, i] = 1
        head_col[k], head_positive[k] = req.head
    needed = body_pos.sum(axis=1)

    def oracle(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=bool)
        xi = x.astype(np.int32)
        body_holds = (xi @ body_pos.T == needed) & (xi @ body_neg.T == 0)  # (B, R)
        head_holds = x[:, head_col] == head_positive  # (B, R)
        return ~(body_holds & ~head_holds).any(axis=1)

    return oracle


def _exclusion_pairs(requirements) -> tuple[set[frozenset[int]], list[Requirement]]:
    """Split off the requirements of the form "a -> ~b" (a and b never both true)."""
    pairs: set[frozenset[int]] = set()
    rest: list[Requirement] = []
    for req in requirements:
        if len(req.body) == 1 and req.body[0][1] and not req.head[1]:
            pairs.add(frozenset((req.body[0][0], req.head[0])))
        else:
            rest.append(req)
    return pairs, rest


def _greedy_cliques(pairs: set[frozenset[int]]) -> list[list[int]]:
    """Cover the exclusion graph's edges with cliques, largest first (deterministic greedy)."""
    edges = {tuple(sorted(p)) for p in pairs}
    cliques: list[list[int]] = []
    while edges:
        neighbours: dict[int, set[int]] = {}
        for a, b in edges:
            neighbours.setdefault(a, set()).add(b)
            neighbours.setdefault(b, set()).add(a)
        best: list[int] = []
        for start in sorted(neighbours, key=lambda v: (-len(neighbours[v]), v)):
            clique = [start]
            for v in sorted(neighbours[start], key=lambda u: (-len(neighbours[u]), u)):
                if all(v in neighbours[c] for c in clique):
                    clique.append(v)
            if len(clique) > len(best):
                best = clique
        clique = sorted(best)
        cliques.append(clique)
        edges -= {(a, b) for a in clique for b in clique if a < b}
    return cliques


def _road_r_encode() -> CNF:
    """Ground truth from the requirement data, with cardinality encodings where the data has cliques.

    The 10 agent types are pairwise exclusive and at least one must hold (46 requirements), encoded as
    one exactly-one constraint (sequential counter). The other pairwise exclusions are covered by
    cliques; a clique of three or more labels becomes an at-most-one constraint (sequential counter),
    a lone pair stays a binary clause. Every other requirement is one clause.
    """
    labels = road_r_data.LABELS
    n = len(labels)
    agents = [labels.index(a) for a in road_r_data.AGENT_LABELS]
    b = ClauseBuilder(n)
    b.exactly([a + 1 for a in agents], 1, EncType.seqcounter)
    pairs, rest = _exclusion_pairs(road_r_requirements())
    agent_pairs = {frozenset((a, c)) for a in agents for c in agents if a < c}
    pairs -= agent_pairs
    for req in rest:
        head, head_positive = req.head
        only_negated = not any(positive for _, positive in req.body)
        if head_positive and only_negated and {i for i, _ in req.body} | {head} == set(agents):
            continue  # "no other agent type → this one": the at-least-one half of the exactly-one constraint
        # (∧ body) → head, with the builder doing the negation (the rule list builds its clauses itself)
        body = [i + 1 if positive else -(i + 1) for i, positive in req.body]
        b.implies(body, [head + 1 if head_positive else -(head + 1)])
    for clique in _greedy_cliques(pairs):
        lits = [i + 1 for i in clique]
        if len(lits) >= 3:
            b.at_most(lits, 1, EncType.seqcounter)
        else:
            b.add([-lits[0], -lits[1]])
    return b.cnf()


def _phrase(position: int) -> str:
    return ROAD_R_VARIABLES[road_r_data.LABELS[position]][1]


def _join(phrases: list[str], word: str = "or") -> str:
    if len(phrases) == 1:
        return phrases[0]
    return ", ".join(phrases[:-1]) + f" {word} " + phrases[-1]


def _road_r_detailed() -> str:
    labels = road_r_data.LABELS
    agents = [labels.index(a) for a in road_r_data.AGENT_LABELS]
    pairs, rest = _exclusion_pairs(road_r_requirements())
    agent_pairs = {frozenset((a, c)) for a in agents for c in agents if a < c}
    at_least_one_agent = tuple(sorted(a + 1 for a in agents))
    if not agent_pairs <= pairs or not any(tuple(sorted(_requirement_clause(r))) == at_least_one_agent for r in rest):
        raise TaskError("road-r: the requirement data no longer says 'exactly one agent type'; rewrite the description")
    lines = [
        "Every agent seen from the ego vehicle in a frame of the ROAD-R driving videos is labelled with 41 "
        "Boolean labels: its agent type (10 labels), what it is doing (19 action labels) and where it is (12 "
        "location labels). The labels of one agent must satisfy ROAD-R's 243 hand-written requirements, "
        "grouped below. The requirements concern one agent at a time.",
        "",
        "Agent type:",
        "- The agent has exactly one agent type: it is at least one and at most one of "
        + _join([_phrase(a) for a in agents])
        + ".",
        "",
        "Labels that require other labels:",
    ]
    for req in rest:
        clause = _requirement_clause(req)
        if tuple(sorted(clause)) == at_least_one_agent:
            continue
        conditions = [_phrase(i) for i, positive in req.body if positive]
        options = sorted([i for i, positive in req.body if not positive] + ([req.head[0]] if req.head[1] else []))
        if any(not positive for i, positive in req.body if i == req.head[0]) or not req.head[1]:
            raise TaskError(f"road-r: no description template for requirement {req.text!r}")
        choices = [_phrase(i) for i in options]
        target = choices[0] if len(choices) == 1 else "at least one of: " + _join(choices)
        if conditions:
            lines.append(f"- If the agent is {_join(conditions, 'and')}, it must also be {target}.")
        else:
            lines.append(f"- Every agent must be {target}.")
    lines += ["", "Labels that exclude each other (never both true for the same agent):"]
    remaining = {tuple(sorted(p)) for p in pairs - agent_pairs}
    for hub in range(len(labels)):  # agent types first, then actions, then locations
        others = sorted(c if a == hub else a for a, c in remaining if hub in (a, c))
        if others:
            phrases = [_phrase(o) for o in others]
            excluded = phrases[0] if len(phrases) == 1 else "none of: " + ", ".join(phrases)
            lines.append(f"- If the agent is {_phrase(hub)}, it is {'not ' if len(phrases) == 1 else ''}{excluded}.")
            remaining = {p for p in remaining if hub not in p}
    lines += [
        "",
        "Nothing else is required: apart from the rules above, any number of actions and locations may hold "
        "together (an agent may, for example, be on a pavement and at a crossing at once, or be both moving "
        "towards the ego vehicle and turning), and an agent may have no action or no location unless a rule "
        "demands one. Background facts that must NOT be encoded: how an agent's labels change from one frame "
        "to the next (each frame is judged alone); which labels are rare or common in the videos; and "
        "plausible but unlisted road knowledge (e.g. that buses stop at bus stops, that pedestrians walk on "
        "pavements, that left and right pavements are both pavements).",
    ]
    return "\n".join(lines)


def road_r() -> Task:
    """ROAD-R: the 41 agent, action and location labels and their published requirements as the ground truth."""
    labels = road_r_data.LABELS
    if sorted(labels) != sorted(ROAD_R_VARIABLES):
        raise TaskError("road-r: the label table and the requirement data name different labels")
    variables = tuple(
        Variable(ROAD_R_VARIABLES[label][0], f"the agent is {ROAD_R_VARIABLES[label][1]}; ROAD-R label {label}")
        for label in labels
    )
    requirements = road_r_requirements()
    return Task(
        name="road-r",
        variables=variables,
        descriptions=Descriptions(
            detailed=_road_r_detailed(),
            not_detailed=(
                "Each road user or traffic light seen by a self-driving car gets one agent type plus the "
                "actions it performs and the places it is in, and these labels must make sense together: "
                "for example only traffic lights show red, amber or green, pedestrians do not indicate or "
                "brake, and an agent cannot be in places that exclude each other."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="ROAD-R (ROAD road-event videos with logical requirements)",
            citation=(
                "Giunchiglia, Stoian, Khan, Cuzzolin, Lukasiewicz. ROAD-R: the autonomous driving dataset "
                "with logical requirements. Machine Learning 112, 2023."
            ),
            licence="CC BY-NC-SA 4.0",
            published_clauses=243,
            data_provenance="synthetic-features",
            equivalence_method="clausal",
            design_notes=(
                "Variables: ROAD-R's 41 labels in its order (10 agent types, 19 actions, 12 locations), renamed "
                "to snake_case. Rule set: ROAD-R's published requirements, all 243, transcribed as data in "
                "road_r_requirements.py from constraints/constraints.txt of "
                "github.com/mihaela-stoian/ROAD-R-2023-Challenge (commit "
                "f45828e89bfa9b6c8f18f3fba7f3f5c8b36d4aab; CC BY-NC-SA 4.0), same order, label indices "
                "replaced by label names. The oracle evaluates those requirements directly; rule_list is the "
                "same requirements as 243 clauses. The ground truth encodes the agent type as one exactly-one "
                "constraint and covers the other pairwise exclusions by cliques (at-most-one, sequential "
                "counter), so the clausal proof compares two different encodings. 4,985,734 models."
            ),
        ),
        encode=_road_r_encode,
        oracle_batch=_road_r_oracle_from(requirements, len(labels)),
        rule_list=road_r_rule_list,
    )
