"""What layers of reachability a CNF's gates compute, read exactly and checked (for :mod:`autonesy.tools.connectivity_count`).

1. *Gates.* A clause ``(o ∨ k1 ∨ … ∨ km)`` with every ``(¬o ∨ ¬ki)`` present is, with them, equivalent to
   ``o ↔ ¬k1 ∧ … ∧ ¬km``. Each auxiliary is defined by at most one such gate and the gates are acyclic, so every
   model has each defined auxiliary at its gate's value. Nothing is assumed of the encoding; those clauses say
   exactly that.
2. *Layers.* A vertex is a chain: an auxiliary fixed by a unit clause (layer 0) or an or-gate of steps, then
   or-gates each reading the layer before as itself and and-gates (steps) of (a variable of that layer, one task
   literal). Each literal is the edge of one pair of vertices; every layer of a vertex must read itself and each
   neighbour (at either end of an edge) through its literal, from the layer before — a variable an encoder left
   out being false, which the same rule must then say — and no clause may read a layer but the last outside
   its gates. By induction ``r[k][v]`` is "v within k steps of a root along the edges in use", so with as many
   layers as a component has vertices, less one, the last layer is "v is connected to a root". A second
   reachability over the same literals (two encodings conjoined: scoring's overlap) must be the same graph with
   the same roots, and is read as a copy. A CNF read otherwise gets :class:`NotConnectivity` at once.
"""

from __future__ import annotations

import graphlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from autonesy.tools.cnf import CNF
from autonesy.tools.errors import AutonesyError


class NotConnectivity(AutonesyError, RuntimeError):
    """The auxiliaries do not compute reachability along edge literals in the layered form this route reads."""


@dataclass(frozen=True)
class Gate:
    """``output ↔ AND(inputs)`` (``conjunction``) or ``output ↔ OR(inputs)``, equivalent to ``clauses`` (indices)."""

    output: int
    inputs: tuple[int, ...]
    conjunction: bool
    clauses: tuple[int, ...]


@dataclass(frozen=True)
class Reachability:
    """What the layers say: vertices (their first variables), edges ``(u, v, literal)``, the roots, and the
    variables of each vertex's last layer (``c(v)``: one per reachability over the same graph); ``used`` is every clause index the layers account for and
    ``layered`` every auxiliary they hold."""

    vertices: tuple[int, ...]
    edges: tuple[tuple[int, int, int], ...]
    roots: frozenset[int]
    last: dict[int, tuple[int, ...]]
    used: frozenset[int]
    layered: frozenset[int]


def read_gates(cnf: CNF) -> dict[int, Gate]:
    """The auxiliaries defined by gates, at most one each, acyclic (preferring a gate over earlier variables, as
    an encoder makes them, then the widest; a cycle loses a gate over later variables first)."""
    binary: dict[frozenset[int], int] = {}
    for index, clause in enumerate(cnf.clauses):
        if len(set(clause)) == 2:
            binary.setdefault(frozenset(clause), index)
    candidates: dict[int, list[Gate]] = defaultdict(list)
    for index, clause in enumerate(cnf.clauses):
        literals = set(clause)
        if len(literals) < 2 or any(-lit in literals for lit in literals):
            continue
        for out in literals:
            if abs(out) <= cnf.num_task_vars:
                continue
            others = sorted(literals - {out}, key=abs)
            pairs = [binary.get(frozenset((-out, -lit))) for lit in others]
            if any(pair is None for pair in pairs):
                continue
            inputs = tuple(-lit for lit in others) if out > 0 else tuple(others)  # ¬y ↔ AND(¬k) is y ↔ OR(k)
            used = tuple(sorted({index, *(pair for pair in pairs if pair is not None)}))
            candidates[abs(out)].append(Gate(abs(out), inputs, out > 0, used))

    def forwards(gate: Gate) -> bool:
        return all(abs(lit) < gate.output for lit in gate.inputs)

    gates = {
        var: max(options, key=lambda g: (forwards(g), len(g.inputs), -g.clauses[0]))
        for var, options in candidates.items()
    }
    while True:
        sorter = graphlib.TopologicalSorter({var: [abs(lit) for lit in g.inputs] for var, g in gates.items()})
        try:
            sorter.prepare()
            return gates
        except graphlib.CycleError as error:
            cycle = [var for var in error.args[1] if var in gates]
            del gates[max(cycle, key=lambda var: (not forwards(gates[var]), var))]  # a gate reading later ones first


def read_reachability(cnf: CNF, gates: dict[int, Gate]) -> Reachability:
    """The layers of reachability the gates compute, checked as the module says; :class:`NotConnectivity` if not.

    A vertex's chain may start after layer 0 (an or-gate of steps only: the layer before it is false, as an
    encoder that leaves out what cannot be reached yet writes it); then every layer it lacks must be false by
    the recurrence (no neighbour reached the layer before)."""
    n = cnf.num_task_vars
    in_gates = {index for g in gates.values() for index in g.clauses}
    fixed: dict[int, tuple[bool, int]] = {}  # layer-0 auxiliary: (its value, its unit clause)
    for index, clause in enumerate(cnf.clauses):
        if index not in in_gates and len(set(clause)) == 1 and abs(clause[0]) > n and abs(clause[0]) not in gates:
            fixed.setdefault(abs(clause[0]), (clause[0] > 0, index))
    layer = {var: 0 for var in fixed}
    vertex = {var: var for var in fixed}
    step: dict[int, tuple[int, int]] = {}  # and-gate: (its variable of a layer, its task literal)
    successor: dict[int, int] = {}
    reads: dict[int, tuple[bool, frozenset[tuple[int, int]]]] = {}  # or-gate: (reads itself, {(vertex, literal)})
    order = graphlib.TopologicalSorter({var: [abs(lit) for lit in g.inputs] for var, g in gates.items()})
    for var in order.static_order():
        gate = gates.get(var)
        if gate is None:
            continue
        if gate.conjunction and len(gate.inputs) == 2:
            reach = [lit for lit in gate.inputs if lit > 0 and lit in layer]
            edge = [lit for lit in gate.inputs if abs(lit) <= n]
            if len(reach) == 1 and len(edge) == 1:
                step[var] = (reach[0], edge[0])
        elif not gate.conjunction or len(gate.inputs) == 1:
            selves = [lit for lit in gate.inputs if lit > 0 and lit in layer]
            steps = [lit for lit in gate.inputs if lit not in selves]
            if len(selves) > 1 or not all(lit in step for lit in steps) or not gate.inputs:
                continue
            below = {layer[lit] for lit in selves} | {layer[step[lit][0]] for lit in steps}
            if len(below) != 1:
                continue
            layer[var] = below.pop() + 1
            if selves:
                if selves[0] in successor:
                    raise NotConnectivity(f"variable {selves[0]} is read as itself by two later layers")
                successor[selves[0]], vertex[var] = var, vertex[selves[0]]
            else:
                vertex[var] = var
            reads[var] = (bool(selves), frozenset((vertex[step[lit][0]], step[lit][1]) for lit in steps))
    read_by_steps = {vertex[reach] for reach, _ in step.values()}
    starts = [
        var for var in vertex if vertex[var] == var and (var in successor or var in reads or var in read_by_steps)
    ]
    if not any(var in reads for var in vertex if vertex[var] in starts):
        raise NotConnectivity("no layers of reachability")
    chains: dict[int, dict[int, int]] = {}  # vertex → {layer: its variable}
    for v in starts:
        chain = [v]
        while chain[-1] in successor:
            chain.append(successor[chain[-1]])
        chains[v] = {layer[var]: var for var in chain}
    neighbours: dict[int, set[tuple[int, int]]] = {v: set() for v in starts}  # undirected: read from either end
    for var, (_, read) in reads.items():
        v = vertex[var]
        for u, lit in read if v in neighbours else ():
            if u == v or u not in neighbours:
                raise NotConnectivity(f"literal {lit} leads from {u}, not a vertex with layers, to {v}")
            neighbours[v].add((u, lit))
            neighbours[u].add((v, lit))
    copy_of: dict[int, int] = {}  # a vertex of another reachability over the same literals → the one counted
    graphs = _Graphs()
    for component in _components(starts, neighbours):
        depth = max(max(chains[v]) for v in component)
        edges: dict[frozenset[int], int] = {}
        for v in component:
            if max(chains[v]) != depth:
                raise NotConnectivity(f"vertex {v}'s layers end at {max(chains[v])}, its neighbours' at {depth}")
            for u, lit in neighbours[v]:
                if edges.setdefault(frozenset((u, v)), lit) != lit:
                    raise NotConnectivity(f"vertices {u} and {v} are joined by two literals")
            for k in range(1, depth + 1):  # each layer reads what the recurrence does: itself, each neighbour
                expected = (k - 1 in chains[v], frozenset((u, lit) for u, lit in neighbours[v] if k - 1 in chains[u]))
                if k in chains[v]:
                    if reads[chains[v][k]] != expected:
                        raise NotConnectivity(f"vertex {v}'s layer {k} does not read its neighbours' layer {k - 1}")
                elif expected[0] or expected[1]:
                    raise NotConnectivity(f"vertex {v} has no layer {k}, which its neighbours' layer {k - 1} reaches")
        if len(component) > depth + 1:
            raise NotConnectivity(f"{depth} layers, fewer than a component of {len(component)} vertices needs")
        copy_of.update(graphs.copies(component, neighbours, {v for v in component if v in fixed and fixed[v][0]}))
    vertices = tuple(sorted(v for v in starts if v not in copy_of))
    last: dict[int, list[int]] = {v: [] for v in vertices}
    for v in starts:
        last[copy_of.get(v, v)].append(chains[v][max(chains[v])])
    edges_read = {frozenset((u, v)): lit for v in vertices for u, lit in neighbours[v]}
    layered = {var for var in vertex if vertex[var] in chains} | {var for var in step if vertex[step[var][0]] in chains}
    used = {fixed[v][1] for v in starts if v in fixed}
    for var in layered - set(fixed):
        used.update(gates[var].clauses)
    finals = {var for variables in last.values() for var in variables}
    for index, clause in enumerate(cnf.clauses):
        if index not in used and any(abs(lit) in layered and abs(lit) not in finals for lit in clause):
            raise NotConnectivity(f"clause {index + 1} reads a layer of reachability but the last")
    for var, gate in gates.items():
        if var not in layered and any(abs(lit) in layered and abs(lit) not in finals for lit in gate.inputs):
            raise NotConnectivity(f"the gate of variable {var} reads a layer of reachability but the last")
    return Reachability(
        vertices,
        tuple((min(pair), max(pair), lit) for pair, lit in edges_read.items()),
        frozenset(v for v in vertices if v in fixed and fixed[v][0]),
        {v: tuple(variables) for v, variables in last.items()},
        frozenset(used),
        frozenset(layered),
    )


def _components(vertices: Sequence[int], neighbours: dict[int, set[tuple[int, int]]]) -> list[list[int]]:
    """The vertices joined by edges read, component by component."""
    seen: set[int] = set()
    components = []
    for start in vertices:
        if start in seen:
            continue
        component, stack = [], [start]
        seen.add(start)
        while stack:
            v = stack.pop()
            component.append(v)
            for u, _ in neighbours[v]:
                if u not in seen:
                    seen.add(u)
                    stack.append(u)
        components.append(sorted(component))
    return components


_Name = tuple[frozenset[int], bool, int]  # the literals a vertex meets, whether it is a root, which of those alike


class _Graphs:
    """The components read so far, by the literals their edges are, so that another reachability over the same
    literals (two encodings of one path conjoined: scoring's overlap) is counted as the one read first."""

    def __init__(self) -> None:
        self.by_literals: dict[frozenset[int], tuple[dict[_Name, int], frozenset[_Name]]] = {}
        self.owner: dict[int, frozenset[int]] = {}  # a literal → the literals of its component

    def copies(
        self, component: list[int], neighbours: dict[int, set[tuple[int, int]]], roots: set[int]
    ) -> dict[int, int]:
        """``component``'s vertices → those of the component read before over the same literals (none when it is
        the first); :class:`NotConnectivity` when they share literals and are not one graph with the same roots.
        A vertex is named by the literals it meets and whether it is a root."""
        meets = {v: frozenset(lit for _, lit in neighbours[v]) for v in component}
        literals = frozenset().union(*meets.values())
        if not literals:
            return {}
        alike: dict[tuple[frozenset[int], bool], int] = defaultdict(int)
        named: dict[_Name, int] = {}
        for v in component:  # two ends named alike are one edge's, interchangeable but for being a root
            key = (meets[v], v in roots)
            named[(*key, alike[key])] = v
            alike[key] += 1
        rooted = frozenset(name for name, v in named.items() if v in roots)
        if literals not in self.by_literals:
            if any(lit in self.owner for lit in literals):
                raise NotConnectivity("two reachabilities read the same literals as different graphs")
            self.by_literals[literals] = (named, rooted)
            self.owner.update((lit, literals) for lit in literals)
            return {}
        first, first_rooted = self.by_literals[literals]
        if set(named) != set(first) or rooted != first_rooted:
            raise NotConnectivity("two reachabilities over the same literals differ in their graph or roots")
        return {v: first[name] for name, v in named.items()}
