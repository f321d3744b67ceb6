"""Exact projected count of a CNF whose auxiliaries compute reachability along its edge literals (simple paths,
connected selections of edges), by a dynamic programme over a frontier of the graph's vertices.

A path or a connected selection reaches a CNF as reachability unrolled in layers,
``r[k+1][v] ↔ r[k][v] ∨ ⋁_u (r[k][u] ∧ e_uv)``, the first layer fixed by unit clauses (the roots), and clauses on
the last (an edge in use has its ends reached). Each ``r[K][v]`` is a function of every edge: on the simple paths
of a 6 × 6 grid structure recovery passed 2,000,000 SDD nodes and Ganak and the clause frontier ran out of 60 s.
Read as a graph (:mod:`autonesy.tools.reachability`: the gates and layers, proved), it is connectivity, which a
frontier over the vertices counts with a partition of the frontier into components as its state (as Knuth's
simpath does for paths).

Vertices enter in an order of small frontier, each edge decided once both its ends are in; a state is the
clauses still open, each left with its undecided literals (so prefixes that leave the same constraint share a
state), and the partition of the frontier into components, each with whether it holds a root and its ``c`` (0, 1
or not yet known: a clause it is all that is left of sets it; a leaving vertex's c in a clause becomes a staying
vertex's of its component, or "holds a root" once the component leaves). Other auxiliaries are read as ordinary
variables when gates define them (forced, so counting them counts the task variables' models); a block of those
no gate defines (a degree constraint written as a sequential counter) is first replaced by its projection on the
few variables it reads, one SAT call per assignment of them.
"""

from __future__ import annotations

import itertools
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from pysat.solvers import Solver

from autonesy.tools.cnf import CNF
from autonesy.tools.onehot_count import DICT_ENTRY_BYTES, Footprint, StateBudgetExceeded, state_memory_budget
from autonesy.tools.reachability import Gate, NotConnectivity, Reachability, read_gates, read_reachability

UNKNOWN = 2  # a component's c before any clause needed it
MAX_BLOCK_VARS = 12  # a block of auxiliaries no gate defines is projected on at most this many other variables
ORDER_STARTS = 8  # vertex orders tried: the greedy frontier from this many starting vertices, and the given order


def count_by_connectivity(
    cnf: CNF, time_limit_s: float | None = None, on_structure: Callable[[], None] | None = None
) -> int:
    """The number of models of ``cnf`` projected on its task variables (exact); :class:`NotConnectivity` when its
    auxiliaries are not layers of reachability (and gates), :class:`StateBudgetExceeded` past the memory budget
    of :func:`~autonesy.tools.onehot_count.state_memory_budget` or ``time_limit_s``."""
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    gates = read_gates(cnf)
    reach = read_reachability(cnf, gates)
    c_var = {v: cnf.num_vars + 1 + i for i, v in enumerate(reach.vertices)}
    final = {var: c_var[v] for v in reach.vertices for var in reach.last[v]}
    forced = {abs(c[0]) for c in cnf.clauses if len(set(c)) == 1}
    defined = (set(gates) | forced) - reach.layered
    clauses: list[tuple[int, ...]] = []
    for index, clause in enumerate(cnf.clauses):
        if index in reach.used:
            continue
        literals = {final.get(abs(lit), abs(lit)) * (1 if lit > 0 else -1) for lit in clause}
        if any(-lit in literals for lit in literals):
            continue
        if not literals:
            return 0
        clauses.append(tuple(sorted(literals, key=abs)))
    projected = _projected(clauses, _existential(cnf, gates, defined, clauses))
    if projected is None:
        return 0
    clauses = projected
    variables = {abs(lit) for clause in clauses for lit in clause} | {abs(lit) for _, _, lit in reach.edges}
    if on_structure is not None:
        on_structure()
    plan = _plan(reach, c_var, clauses)
    free = sum(1 for var in cnf.task_vars if var not in variables)
    return _run(plan, deadline) << free


def _existential(cnf: CNF, gates: dict[int, Gate], defined: set[int], clauses: list[tuple[int, ...]]) -> set[int]:
    """The auxiliaries of ``clauses`` that are no function of the task variables: neither a layer, a gate's output
    nor fixed by a unit clause (a sequential counter's registers), and the gates that read them."""
    found = {
        abs(lit)
        for clause in clauses
        for lit in clause
        if cnf.num_task_vars < abs(lit) <= cnf.num_vars and abs(lit) not in defined
    }
    while True:
        reading = {
            var for var in defined - found if var in gates and any(abs(lit) in found for lit in gates[var].inputs)
        }
        if not reading:
            return found
        found |= reading


def _projected(clauses: list[tuple[int, ...]], existential: set[int]) -> list[tuple[int, ...]] | None:
    """``clauses`` with each block that reads ``existential`` auxiliaries (joined through them) replaced by its
    projection on its other variables, as the clauses that forbid each assignment no model of the block extends
    (one SAT call per assignment; a degree constraint written as a counter reads a few edges); None when a block
    has no model. :class:`NotConnectivity` past ``MAX_BLOCK_VARS`` other variables."""
    if not existential:
        return clauses
    parent = {var: var for var in existential}

    def find(var: int) -> int:
        while parent[var] != var:
            parent[var] = parent[parent[var]]
            var = parent[var]
        return var

    kept: list[tuple[int, ...]] = []
    hiding: list[tuple[int, tuple[int, ...]]] = []
    for clause in clauses:
        hidden = [abs(lit) for lit in clause if abs(lit) in existential]
        for var in hidden[1:]:
            parent[find(var)] = find(hidden[0])
        if hidden:
            hiding.append((hidden[0], clause))
        else:
            kept.append(clause)
    by_block: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for var, clause in hiding:
        by_block[find(var)].append(clause)
    for block in by_block.values():
        visible = sorted({abs(lit) for clause in block for lit in clause} - existential)
        if len(visible) > MAX_BLOCK_VARS:
            raise NotConnectivity(
                f"a block of auxiliaries no gate defines reads {len(visible)} other variables, more than {MAX_BLOCK_VARS}"
            )
        with Solver(name="cadical153", bootstrap_with=[list(clause) for clause in block]) as solver:
            forbidden = [
                tuple(-lit for lit in assumption)
                for bits in itertools.product((False, True), repeat=len(visible))
                if not solver.solve(assumptions=(assumption := [v if bit else -v for v, bit in zip(visible, bits)]))
            ]
        if forbidden == [()]:
            return None
        kept.extend(forbidden)
    return kept


def _vertex_order(vertices: Sequence[int], adjacent: dict[int, set[int]]) -> list[int]:
    """The order of smallest greatest frontier (entered vertices with a neighbour yet to enter) among the given
    one and greedy ones from a few starts (next: the vertex leaving the frontier smallest, nearest the oldest)."""

    def widest(order: list[int]) -> int:
        position = {v: i for i, v in enumerate(order)}
        last = {v: max([position[v], *(position[u] for u in adjacent[v])]) for v in order}
        leaving: dict[int, int] = defaultdict(int)
        for v in order:
            leaving[last[v]] += 1
        width = best = 0
        for i in range(len(order)):
            width += 1
            best = max(best, width)
            width -= leaving[i]
        return best

    def greedy(start: int) -> list[int]:
        order, entered = [start], {start}
        since = {start: 0}
        while len(order) < len(vertices):
            near = {u for v in order for u in adjacent[v]} - entered
            pool = near or set(vertices) - entered
            order_now = len(order)

            def cost(u: int) -> tuple[int, int, int]:
                unseen = len(adjacent[u] - entered - {u})
                closing = sum(1 for w in adjacent[u] & entered if adjacent[w] - entered <= {u})
                oldest = min((since[w] for w in adjacent[u] & entered), default=order_now)
                return (unseen - closing, oldest, u)

            chosen = min(pool, key=cost)
            order.append(chosen)
            entered.add(chosen)
            since[chosen] = order_now
        return order

    starts = sorted(vertices, key=lambda v: (len(adjacent[v]), v))[:ORDER_STARTS]
    orders = [list(vertices)] + [greedy(start) for start in starts]
    return min(orders, key=widest)


def _plan(reach: Reachability, c_var: dict[int, int], clauses: list[tuple[int, ...]]) -> list[_Step]:
    """The steps: vertices in :func:`_vertex_order`, each edge right after its later end, other variables before
    the first step that shares a clause with them; each clause joins at its first variable's step."""
    adjacent: dict[int, set[int]] = {v: set() for v in reach.vertices}
    for u, v, _ in reach.edges:
        adjacent[u].add(v)
        adjacent[v].add(u)
    order = _vertex_order(reach.vertices, adjacent)
    rank = {v: i for i, v in enumerate(order)}
    incident: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for u, v, lit in reach.edges:
        incident[max(u, v, key=rank.__getitem__)].append((u, v, lit))
    events: list[tuple[str, int]] = []  # ("enter", vertex) or ("var", variable)
    edge_of: dict[int, tuple[int, int, int]] = {}
    for v in order:
        events.append(("enter", v))
        for u, w, lit in sorted(incident[v], key=lambda e: rank[min(e[0], e[1], key=rank.__getitem__)]):
            events.append(("var", abs(lit)))
            edge_of[abs(lit)] = (u, w, lit)
    at = {var: i for i, (kind, var) in enumerate(events) if kind == "var"}
    at.update({c_var[v]: i for i, (kind, v) in enumerate(events) if kind == "enter"})
    others = sorted({abs(lit) for clause in clauses for lit in clause} - set(at))
    when = {var: float("inf") for var in others}
    for _ in range(len(others) + 1):  # each variable at the earliest step any clause links it to
        changed = False
        for clause in clauses:
            placed = min((at.get(abs(lit), when.get(abs(lit), float("inf"))) for lit in clause), default=float("inf"))
            for lit in clause:
                if abs(lit) in when and placed < when[abs(lit)]:
                    when[abs(lit)], changed = placed, True
        if not changed:
            break
    before: dict[float, list[int]] = defaultdict(list)
    for var in others:
        before[when[var]].append(var)
    sequence: list[tuple[str, int]] = []
    for i, event in enumerate(events):
        sequence.extend(("var", var) for var in before.get(i, ()))
        sequence.append(event)
    sequence.extend(("var", var) for var in before.get(float("inf"), ()))
    position = {var: i for i, (kind, var) in enumerate(sequence) if kind == "var"}
    position.update({c_var[v]: i for i, (kind, v) in enumerate(sequence) if kind == "enter"})
    opening: dict[int, list[frozenset[int]]] = defaultdict(list)
    for clause in clauses:
        opening[min(position[abs(lit)] for lit in clause)].append(frozenset(clause))
    leaves_at: dict[int, list[int]] = defaultdict(list)
    for v in order:
        ends = [position[abs(lit)] for u, w, lit in reach.edges if v in (u, w)]
        leaves_at[max([position[c_var[v]], *ends])].append(v)
    steps: list[_Step] = []
    front: list[int] = []
    for i, (kind, item) in enumerate(sequence):
        step = _Step(opening=opening.get(i, []))
        if kind == "enter":
            front.append(item)
            step.enter_root = item in reach.roots
        else:
            step.var = item
            if item in edge_of:
                u, w, lit = edge_of[item]
                step.edge = (front.index(u), front.index(w), lit > 0)
        step.at = {c_var[v]: j for j, v in enumerate(front)}
        step.watched = frozenset(step.at) | frozenset(-var for var in step.at)
        step.leaving = [(front.index(v), c_var[v]) for v in leaves_at.get(i, ())]
        step.staying = [j for j, v in enumerate(front) if v not in leaves_at.get(i, ())]
        front = [front[j] for j in step.staying]
        steps.append(step)
    return steps


@dataclass
class _Step:
    """One step of the programme: enter a vertex (``enter_root``: whether it is a root), or decide ``var`` (an edge's
    when ``edge`` is given: its ends' frontier positions and the sign of its literal); clauses ``opening`` join;
    ``at`` is where each frontier vertex's c variable sits; ``leaving`` frontier positions go (with their c
    variables) and those ``staying`` remain."""

    opening: list[frozenset[int]]
    enter_root: bool | None = None
    var: int | None = None
    edge: tuple[int, int, bool] | None = None
    at: dict[int, int] = field(default_factory=dict)
    watched: frozenset[int] = frozenset()  # the literals of those c variables
    leaving: list[tuple[int, int]] = field(default_factory=list)
    staying: list[int] = field(default_factory=list)


State = tuple[frozenset[frozenset[int]], tuple[int, ...], tuple[int, ...]]  # open clauses, labels, components


class _Conflict(Exception):
    """A branch breaks a clause or a component."""


def _run(steps: list[_Step], deadline: float | None) -> int:
    """The programme's count: the states' sum once every clause is satisfied."""
    budget = state_memory_budget()
    states: dict[State, int] = {(frozenset(), (), ()): 1}
    held = 0
    for number, step in enumerate(steps):
        following: dict[State, int] = defaultdict(int)
        footprint = Footprint(_state_bytes)
        for visited, (state, count) in enumerate(states.items()):
            if deadline is not None and visited % 256 == 0 and time.monotonic() > deadline:
                raise StateBudgetExceeded(f"connectivity count ran out of time at step {number + 1} of {len(steps)}")
            for successor in _successors(state, step):
                following[successor] += count
            taking = held + footprint.bytes(following)
            if taking > budget:
                raise StateBudgetExceeded(
                    f"connectivity count: {len(following):,} states (about {taking >> 10:,} KiB with the step "
                    f"before) at step {number + 1} of {len(steps)}, more than its memory budget ({budget >> 10:,} KiB)"
                )
        states, held = following, footprint.bytes(following)
    return sum(count for (open_clauses, _, _), count in states.items() if not open_clauses)


def _state_bytes(state: State) -> int:
    """A state's bytes: its tuples and open clauses, its count (up to 32 bytes) and its dict entry."""
    open_clauses = state[0]
    size = sys.getsizeof(open_clauses) + sum(map(sys.getsizeof, open_clauses))
    return size + sys.getsizeof(state[1]) + sys.getsizeof(state[2]) + sys.getsizeof(state) + 32 + DICT_ENTRY_BYTES


def _successors(state: State, step: _Step) -> list[State]:
    """The states after ``step`` from ``state``: each open clause left with the literals still undecided (a clause
    a decided literal satisfies gone), a frontier vertex's c read from its component once known (forced when it
    is all a clause has left), a leaving vertex's c replaced by a staying one's of its component, or by "holds a
    root" when the component leaves with it; none when a clause is left empty or a component breaks."""
    open_clauses, labels, comps = state
    if step.enter_root is not None:
        labels = (*labels, len(comps))
        comps = (*comps, int(step.enter_root) * 4 + UNKNOWN)  # root flag · 4 + c
    found: list[State] = []
    for true in (step.var, -step.var) if step.var is not None else (None,):
        try:
            labelled, components = list(labels), list(comps)
            if step.edge is not None and (true == step.var) == step.edge[2]:
                a, b = labelled[step.edge[0]], labelled[step.edge[1]]
                if a != b:
                    ca, cb = components[a] & 3, components[b] & 3
                    if UNKNOWN not in (ca, cb) and ca != cb:
                        continue
                    components[a] = ((components[a] | components[b]) & 4) | (cb if ca == UNKNOWN else ca)
                    labelled = [a if label == b else label for label in labelled]
            clauses = set(_assigned(open_clauses, true)) | set(_assigned(step.opening, true))
            _settle(clauses, labelled, components, step)
            found.append(_left(clauses, labelled, components, step))
        except _Conflict:
            continue
    return found


def _assigned(clauses: Iterable[frozenset[int]], true: int | None) -> Iterator[frozenset[int]]:
    """``clauses`` once the literal ``true`` holds: those it satisfies gone, its negation taken out."""
    for clause in clauses:
        if true is None or (true not in clause and -true not in clause):
            yield clause
        elif true not in clause:
            rest = clause - {-true}
            if not rest:
                raise _Conflict
            yield rest


def _settle(clauses: set[frozenset[int]], labels: list[int], comps: list[int], step: _Step) -> None:
    """Read each frontier vertex's known c into ``clauses``, forcing an unknown c that is all a clause has left,
    until nothing changes; :class:`_Conflict` on an empty clause. Only clauses with a frontier c are looked at."""
    at = step.at
    while True:
        known = {var: c for var, where in at.items() if (c := comps[labels[where]] & 3) != UNKNOWN}
        forced = False
        for clause in [clause for clause in clauses if not clause.isdisjoint(step.watched)]:
            if any(known.get(abs(lit)) == (lit > 0) for lit in clause):
                clauses.discard(clause)
                continue
            rest = [lit for lit in clause if abs(lit) not in known]
            if len(rest) == 1 and abs(rest[0]) in at:  # an unknown c, all the clause has left: forced
                label = labels[at[abs(rest[0])]]
                comps[label] = (comps[label] & 4) | int(rest[0] > 0)
                clauses.discard(clause)
                forced = True
                break  # what is known changed: read again
            elif len(rest) < len(clause):
                if not rest:
                    raise _Conflict
                clauses.discard(clause)
                clauses.add(frozenset(rest))
        if not forced:
            return


def _left(clauses: set[frozenset[int]], labels: list[int], comps: list[int], step: _Step) -> State:
    """``step``'s leaving vertices gone: a c still in a clause becomes a staying vertex's of its component, or the
    component's "holds a root" when it leaves with its last vertex (which its c, if known, must equal); the state
    made canonical."""
    staying = {labels[j]: j for j in step.staying}
    for where, c_variable in step.leaving:
        label = labels[where]
        root, c = comps[label] >> 2, comps[label] & 3
        if label in staying:
            other = next(var for var, j in step.at.items() if j == staying[label])
            swap = {c_variable: other, -c_variable: -other}
            for clause in [clause for clause in clauses if c_variable in clause or -c_variable in clause]:
                clauses.discard(clause)
                clauses.add(frozenset(swap.get(lit, lit) for lit in clause))
            continue
        if c not in (UNKNOWN, root):
            raise _Conflict
        comps[label] = (root << 2) | root
        true = c_variable if root else -c_variable
        for clause in [clause for clause in clauses if c_variable in clause or -c_variable in clause]:
            clauses.discard(clause)
            if true not in clause:
                if len(clause) == 1:
                    raise _Conflict
                clauses.add(clause - {-true})
    renumber: dict[int, int] = {}
    front = tuple([renumber.setdefault(labels[j], len(renumber)) for j in step.staying])
    return frozenset(clauses), front, tuple([comps[old] for old in renumber])
