"""The connectivity count against counts made without it: breadth-first search over every edge assignment, a SAT
call per task assignment (the projection, whatever the clauses say), and the published counts of grid paths."""

import itertools
import random
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pysat.card import CardEnc, EncType
from pysat.solvers import Solver

from autonesy.tools.cnf import CNF
from autonesy.tools.connectivity_count import NotConnectivity, count_by_connectivity
from autonesy.tools.counting import count_models

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from held_out_counts import SIMPLE_CORNER_PATHS, grid_paths  # noqa: E402
from scaling import grid_path  # noqa: E402


class Layers:
    """Reachability unrolled in layers over a graph whose edges are task variables 1..len(edges)."""

    def __init__(self, vertices, edges, extra_task_vars=0):
        self.vertices, self.edges = vertices, edges
        self.n = len(edges) + extra_task_vars
        self.top, self.clauses = self.n, []

    def var(self):
        self.top += 1
        return self.top

    def iff_or(self, out, ins):
        self.clauses.append([-out, *ins])
        self.clauses.extend([out, -lit] for lit in ins)

    def iff_and(self, out, ins):
        self.clauses.append([out, *(-lit for lit in ins)])
        self.clauses.extend([-out, lit] for lit in ins)

    def unroll(self, roots, depth, sparse=False, omit=None):
        """Each vertex's variable per layer; ``sparse`` leaves out a layer's variable until a neighbour can reach it
        (and layer 0 but for the roots), as ``benchmarks/scaling.py``'s grid path does; ``omit`` (layer, vertex,
        edge) leaves that step out of that layer (no longer reachability)."""
        current = {}
        for v in range(self.vertices):
            if not sparse or v in roots:
                current[v] = self.var()
                self.clauses.append([current[v]] if v in roots else [-current[v]])
        for k in range(1, depth + 1):
            following = {}
            for v in range(self.vertices):
                ways = [current[v]] if v in current else []
                for index, (a, b) in enumerate(self.edges, start=1):
                    other = b if a == v else a if b == v else None
                    if other is not None and other in current and (k, v, index) != omit:
                        both = self.var()
                        self.iff_and(both, [current[other], index])
                        ways.append(both)
                if ways:
                    following[v] = self.var()
                    self.iff_or(following[v], ways)
            current = following
        return current

    def cnf(self, extra_clauses=()):
        return CNF(self.n, tuple(map(tuple, self.clauses + list(extra_clauses))), self.top)


def connected(edges, values, roots):
    """The vertices a breadth-first search from the roots reaches over the edges whose value is 1."""
    seen, frontier = set(roots), list(roots)
    while frontier:
        v = frontier.pop()
        for (a, b), value in zip(edges, values):
            if value and v in (a, b):
                other = b if v == a else a
                if other not in seen:
                    seen.add(other)
                    frontier.append(other)
    return seen


def projected_count(cnf):
    """Task assignments that some auxiliary assignment extends to a model: one SAT call each."""
    with Solver(name="cadical153", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        return sum(
            solver.solve(assumptions=[v if bit else -v for v, bit in zip(cnf.task_vars, bits)])
            for bits in itertools.product((0, 1), repeat=cnf.num_task_vars)
        )


@st.composite
def graphs(draw):
    vertices = draw(st.integers(2, 5))
    pairs = list(itertools.combinations(range(vertices), 2))
    edges = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=6, unique=True))
    roots = draw(st.sets(st.integers(0, vertices - 1), max_size=2))
    extra = draw(st.integers(0, 1))
    return vertices, edges, roots, extra


@settings(max_examples=150, deadline=None)
@given(graphs(), st.booleans(), st.integers(0, 1), st.data())
def test_the_count_is_the_breadth_first_searches_count(graph, sparse, more_layers, data):
    vertices, edges, roots, extra = graph
    layers = Layers(vertices, edges, extra)
    last = layers.unroll(roots, vertices - 1 + more_layers, sparse)
    task = list(range(1, layers.n + 1))
    literal_of = st.sampled_from(task + [("c", v) for v in last]).flatmap(
        lambda x: st.sampled_from([(x, True), (x, False)])
    )
    constraints = data.draw(st.lists(st.lists(literal_of, min_size=1, max_size=3), max_size=4))
    if data.draw(st.booleans()):  # a path's: an edge in use has its ends reached
        constraints += [
            [(index, False), (("c", end), True)] for index, ends in enumerate(edges, 1) for end in ends if end in last
        ]

    def lit(x, positive):
        var = last[x[1]] if isinstance(x, tuple) else x
        return var if positive else -var

    cnf = layers.cnf([[lit(x, positive) for x, positive in clause] for clause in constraints])
    if not last:  # no root and layers left out until reached: no auxiliary at all
        with pytest.raises(NotConnectivity, match="no layers"):
            count_by_connectivity(cnf)
        return
    expected = 0
    for bits in itertools.product((0, 1), repeat=layers.n):
        reached = connected(edges, bits[: len(edges)], roots)
        value = {x: bits[x - 1] for x in task} | {("c", v): int(v in reached) for v in last}
        expected += all(any(value[x] == positive for x, positive in clause) for clause in constraints)
    assert count_by_connectivity(cnf) == expected


@settings(max_examples=100, deadline=None)
@given(graphs(), st.booleans(), st.randoms(use_true_random=False))
def test_an_altered_encoding_is_refused_or_counted_right(graph, sparse, chooser):
    """A clause of the layers dropped, a literal flipped, or the auxiliaries renumbered: whatever the route reads
    from what is left, a count it gives is the projection's."""
    vertices, edges, roots, extra = graph
    layers = Layers(vertices, edges, extra)
    last = layers.unroll(roots, vertices - 1, sparse)
    paths = [[-index, last[end]] for index, ends in enumerate(edges, 1) for end in ends if end in last]
    clauses = layers.clauses + paths
    assume(layers.top > layers.n)
    what = chooser.choice(["drop", "flip", "renumber"])
    if what == "drop":
        clauses.pop(chooser.randrange(len(clauses)))
    elif what == "flip":
        clause = list(clauses.pop(chooser.randrange(len(clauses))))
        clause[chooser.randrange(len(clause))] *= -1
        clauses.append(clause)
    else:
        aux = list(range(layers.n + 1, layers.top + 1))
        moved = dict(zip(aux, chooser.sample(aux, len(aux))))
        clauses = [[moved.get(abs(x), abs(x)) * (1 if x > 0 else -1) for x in c] for c in clauses]
    cnf = CNF(layers.n, tuple(map(tuple, clauses)), layers.top)
    try:
        got = count_by_connectivity(cnf)
    except NotConnectivity:
        return
    assert got == projected_count(cnf)


@settings(max_examples=100, deadline=None)
@given(graphs(), st.booleans(), st.data())
def test_a_layer_that_leaves_out_a_neighbour_is_refused_or_counted_right(graph, sparse, data):
    """Its layers are then not reachability (a step missing): counting them as connectivity would be wrong
    wherever that step mattered."""
    vertices, edges, roots, extra = graph
    index = data.draw(st.integers(1, len(edges)))
    omit = (data.draw(st.integers(1, vertices - 1)), data.draw(st.sampled_from(edges[index - 1])), index)
    layers = Layers(vertices, edges, extra)
    last = layers.unroll(roots, vertices - 1, sparse, omit)
    assume(last)
    cnf = layers.cnf([[-i, last[end]] for i, ends in enumerate(edges, 1) for end in ends if end in last])
    try:
        got = count_by_connectivity(cnf)
    except NotConnectivity:
        return
    assert got == projected_count(cnf)


def test_too_few_layers_is_refused():
    """A path of five vertices and three layers: the far end is four steps away, so the last layer is "within
    three steps", not "connected" — counting it as connectivity would be wrong."""
    layers = Layers(5, [(0, 1), (1, 2), (2, 3), (3, 4)])
    last = layers.unroll({0}, 3)
    with pytest.raises(NotConnectivity, match="fewer than a component of 5"):
        count_by_connectivity(layers.cnf([[last[4]]]))


def test_an_edge_read_one_way_is_refused():
    layers = Layers(3, [(0, 1), (1, 2)])
    last = layers.unroll({0}, 2)
    cnf = layers.cnf([[last[2]]])
    one_way = next(c for c in cnf.clauses if len(c) == 3 and -2 in c and c[0] > 0)  # an and-gate over edge 2
    broken = tuple(c for c in cnf.clauses if c != one_way and not (len(c) == 2 and one_way[0] in map(abs, c)))
    with pytest.raises(NotConnectivity):
        count_by_connectivity(CNF(cnf.num_task_vars, broken, cnf.num_vars))


def test_a_middle_layer_read_by_a_constraint_is_refused():
    layers = Layers(3, [(0, 1), (1, 2)])
    layers.unroll({0}, 2)
    middle = 3 + 2  # vertex 2's layer-0 variable is the third auxiliary; its layer 1 comes later
    with pytest.raises(NotConnectivity, match="but the last"):
        count_by_connectivity(layers.cnf([[middle + 1]]))


def test_other_auxiliaries_defined_by_gates_are_counted():
    layers = Layers(3, [(0, 1), (1, 2), (0, 2)])
    last = layers.unroll({0}, 2)
    both = layers.var()
    layers.iff_and(both, [1, 2])  # both ↔ e1 ∧ e2, then "not both" and "vertex 2 reached"
    cnf = layers.cnf([[-both], [last[2]]])
    expected = sum(
        1
        for bits in itertools.product((0, 1), repeat=3)
        if not (bits[0] and bits[1]) and 2 in connected(layers.edges, bits, {0})
    )
    assert count_by_connectivity(cnf) == expected == 3  # e3, with at most one of e1 and e2


@pytest.mark.parametrize("encoding", [EncType.seqcounter, EncType.totalizer, EncType.sortnetwrk, EncType.cardnetwrk])
def test_degrees_written_with_counters_are_projected_and_counted(encoding):
    """Auxiliaries no gate defines (a counter's registers): each vertex's block projected on its edges."""
    n = 4
    cells = [(r, c) for r in range(n) for c in range(n)]
    edges = [((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
    edges += [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)]
    index = {v: i for i, v in enumerate(cells)}
    layers = Layers(len(cells), [(index[a], index[b]) for a, b in edges])
    last = layers.unroll({index[(0, 0)]}, len(cells) - 1)
    reach_top = layers.top
    clauses = [[-i, last[end]] for i, e in enumerate(layers.edges, 1) for end in e]
    for v in range(len(cells)):
        lits = [i for i, e in enumerate(layers.edges, 1) if v in e]
        ends = v in (index[(0, 0)], index[(n - 1, n - 1)])
        written = CardEnc.equals(lits, 1, top_id=layers.top, encoding=encoding) if ends else None
        if not ends:
            written = CardEnc.atmost(lits, 2, top_id=layers.top, encoding=encoding)
            clauses.extend([-lit, *(x for x in lits if x != lit)] for lit in lits)  # not exactly one
        layers.top = max(layers.top, written.nv)
        clauses.extend(written.clauses)
    cnf = layers.cnf(clauses)
    assert cnf.num_vars > reach_top  # the counters' registers are there
    assert count_by_connectivity(cnf) == SIMPLE_CORNER_PATHS[n]


def test_a_block_that_reads_too_many_variables_is_refused():
    layers = Layers(3, [(0, 1), (1, 2)])
    last = layers.unroll({0}, 2)
    wide = CardEnc.atmost(list(range(1, 3)) + [last[2]], 1, top_id=layers.top, encoding=EncType.seqcounter)
    layers.top = wide.nv
    assert count_by_connectivity(layers.cnf(wide.clauses)) == projected_count(layers.cnf(wide.clauses))
    many = Layers(14, [(i, i + 1) for i in range(13)])
    many.unroll({0}, 13)
    counter = CardEnc.atmost(list(range(1, 14)), 2, top_id=many.top, encoding=EncType.seqcounter)
    many.top = counter.nv
    with pytest.raises(NotConnectivity, match="reads 13 other variables"):
        count_by_connectivity(many.cnf(counter.clauses))


def test_no_layers_is_refused_at_once():
    with pytest.raises(NotConnectivity, match="no layers"):
        count_by_connectivity(CNF(2, ((1, 3), (-3, 2), (3,)), 3))


@pytest.mark.parametrize("encode", [grid_paths, grid_path], ids=["every-layer", "sparse"])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_grid_corner_paths_are_the_published_counts(encode, n):
    assert count_by_connectivity(encode(n)) == SIMPLE_CORNER_PATHS[n]  # OEIS A007764


def test_auto_counts_six_by_six_grid_paths_exactly_by_connectivity():
    """Every other route ran out of 60 s on it (benchmarks/results/held_out_counts.md before this route)."""
    result = count_models(grid_paths(6), "auto", time_limit_s=60)
    assert (result.value, result.exact, result.method) == (SIMPLE_CORNER_PATHS[6], True, "connectivity")


def test_shuffled_vertex_names_change_nothing():
    chooser = random.Random(7)
    edges = [((r, c), (r, c + 1)) for r in range(3) for c in range(2)] + [
        ((r, c), (r + 1, c)) for r in range(2) for c in range(3)
    ]
    names = list({v for e in edges for v in e})
    chooser.shuffle(names)
    index = {v: i for i, v in enumerate(names)}
    layers = Layers(9, [(index[a], index[b]) for a, b in edges])
    last = layers.unroll({index[(0, 0)]}, 8)
    degree = {v: [i for i, e in enumerate(layers.edges, 1) if v in e] for v in range(9)}
    clauses = [[-i, last[end]] for i, e in enumerate(layers.edges, 1) for end in e]
    for v, lits in degree.items():  # corners: one edge; the rest none or two
        if v in (index[(0, 0)], index[(2, 2)]):
            clauses.append(lits)
            clauses.extend([-a, -b] for a, b in itertools.combinations(lits, 2))
        else:
            clauses.extend([-a, -b, -c] for a, b, c in itertools.combinations(lits, 3))
            clauses.extend([-lit, *(x for x in lits if x != lit)] for lit in lits)
    assert count_by_connectivity(layers.cnf(clauses)) == SIMPLE_CORNER_PATHS[3]


def _broken(*args, **kwargs):
    raise RuntimeError("broken on purpose")


def test_the_race_runs_it_when_a_unit_clause_fixes_an_auxiliary(monkeypatch):
    import autonesy.tools.counting as counting

    for route in ("_ganak_count", "_sdd_routes", "count_by_recovery", "count_one_hot", "count_by_orbits"):
        monkeypatch.setattr(counting, route, _broken)
    monkeypatch.setattr(counting, "count_by_frontier", _broken)
    monkeypatch.setattr(counting, "AUTO_FIRST_MODELS", 5)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    result = count_models(grid_path(4), "auto", time_limit_s=30, enumeration_cap=3)
    assert (result.value, result.method, result.exact) == (SIMPLE_CORNER_PATHS[4], "connectivity", True)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_two_encodings_of_grid_paths_overlapped_count_the_paths(n):
    """What scoring counts: the truth (every layer) conjoined with an answer (layers only once reachable)."""
    assert count_by_connectivity(grid_paths(n).conjoin(grid_path(n))) == SIMPLE_CORNER_PATHS[n]


@settings(max_examples=100, deadline=None)
@given(graphs(), st.sets(st.integers(0, 4), max_size=2), st.data())
def test_two_reachabilities_over_one_graph_are_refused_or_counted_right(graph, other_roots, data):
    """Each with its own roots (the same or not): its last layers read by clauses of both."""
    vertices, edges, roots, extra = graph
    other_roots = {v for v in other_roots if v < vertices}
    layers = Layers(vertices, edges, extra)
    first = layers.unroll(roots, vertices - 1)
    second = layers.unroll(other_roots, vertices - 1 + data.draw(st.integers(0, 1)), data.draw(st.booleans()))
    finals = list(first.values()) + list(second.values())
    literal = st.sampled_from(list(range(1, layers.n + 1)) + finals).flatmap(lambda v: st.sampled_from([v, -v]))
    cnf = layers.cnf(data.draw(st.lists(st.lists(literal, min_size=1, max_size=3), max_size=4)))
    try:
        got = count_by_connectivity(cnf)
    except NotConnectivity:
        assert roots != other_roots  # the same graph and roots is read as one
        return
    assert got == projected_count(cnf)


@settings(max_examples=100, deadline=None)
@given(graphs(), st.booleans(), st.data())
def test_auxiliaries_no_gate_defines_are_projected_exactly(graph, sparse, data):
    """Random clauses over edges, last layers and two auxiliaries nothing defines: the count is the projection's."""
    vertices, edges, roots, extra = graph
    layers = Layers(vertices, edges, extra)
    last = layers.unroll(roots, vertices - 1, sparse)
    hidden = [layers.var(), layers.var()]
    pool = list(range(1, layers.n + 1)) + list(last.values()) + hidden
    literal = st.sampled_from(pool).flatmap(lambda v: st.sampled_from([v, -v]))
    extra_clauses = data.draw(st.lists(st.lists(literal, min_size=1, max_size=3), max_size=6))
    cnf = layers.cnf(extra_clauses)
    try:
        got = count_by_connectivity(cnf)
    except NotConnectivity as error:
        assert not last or "more than" in str(error)
        return
    assert got == projected_count(cnf)


def test_a_vertex_both_reached_and_not_has_no_model():
    """Two unit clauses on one vertex's last layer: the first forces its c, the second must then find it known."""
    layers = Layers(3, [(0, 1), (1, 2)])
    last = layers.unroll({0}, 2)
    assert count_by_connectivity(layers.cnf([[last[2]], [-last[2]]])) == 0
    assert count_by_connectivity(layers.cnf([[last[2]], [last[1]]])) == 1  # both edges


def _sleeps(*args, **kwargs):
    import time

    time.sleep(60)


def _children_of(pid):
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_the_early_racer_is_stopped_when_another_route_answers_first(monkeypatch):
    """It starts before preprocessing; a count that the tables answer must not leave it running."""
    import os
    import time

    import autonesy.tools.counting as counting

    monkeypatch.setattr(counting, "count_by_connectivity", _sleeps)
    monkeypatch.setattr(counting, "AUTO_FIRST_MODELS", 1)  # past the first enumeration: the racer is forked
    cnf = CNF(12, ((1, 2), (3, -4, 13), (13,), (-13, 5, 6)), 13)  # a unit clause fixes auxiliary 13
    before = set(_children_of(os.getpid()))
    start = time.perf_counter()
    result = count_models(cnf, "auto", time_limit_s=30)
    assert result.exact and time.perf_counter() - start < 10
    expected = sum(
        1
        for bits in itertools.product((0, 1), repeat=12)
        if (bits[0] or bits[1]) and (bits[4] or bits[5])  # the auxiliary is true: its other clause holds
    )
    assert result.value == expected
    assert set(_children_of(os.getpid())) <= before  # no sleeping racer left behind
