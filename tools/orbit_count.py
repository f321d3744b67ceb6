"""Exact projected model count by orbits of the formula's own symmetries.

A permutation of the literals that maps the clause set onto itself (task variables onto task
variables, negation kept) maps models to models, so it permutes the projected models. Under the group
G of such symmetries the projected models fall into orbits, and their number is the sum over orbits
of |G| / |G_x| (orbit–stabiliser). Combinatorial designs are the case: Steiner triple systems on 7
points are one orbit of the 7!·7! row and column permutations (stabiliser 168: 151,200 models), the
social golfers' 9 golfers in 3 groups for 4 weeks one orbit of 9!·4!·6⁴ relabellings (stabiliser
432: 26,127,360), where Ganak, the SDD routes and enumeration all run out of time.

The formula is a coloured graph: a vertex per literal and per clause, x–¬x edges, a clause joined to
its literals, task literals, auxiliary literals and clauses in three colours, so its automorphisms are
exactly its syntactic symmetries (nothing is assumed that the clauses do not state). Two refinements
keep symmetries that an encoding hides: task variables that two binary clauses make equal are merged
first (an adjacency matrix and its transpose: the vertices' permutations become syntactic), and a
literal count the formula declares and holds (:mod:`autonesy.tools.literal_count`, recognised only when
its clauses are there) is one vertex joined to its literals, its counter's clauses and states left out
— what the count says is symmetric in its literals, the order its counter reads them in is not
(BIBD's scalar products, a sum of all entries modulo 12). bliss, through
python-igraph, gives |Aut| and generators. Each orbit holds its least member in the task variables'
order (a lex-leader), which satisfies x ≤ σ(x) for every σ in G: those constraints, for the
generators and for random products of them (golfers: 23 representatives with the generators alone, 3
with a thousand products), are added and the projected models of the result enumerated. Two
representatives share an orbit exactly when bliss's canonical labellings of the graph coloured by
each give the same colouring and map one onto the other by an automorphism; |G_x| is the number of
automorphisms that keep x's colouring. When every symmetry fixes the task variables (interchangeable
couples behind one person's answer: handshaking), a projected model's extensions are closed under the
group, so lex-leader constraints over the auxiliaries keep one extension per orbit and the projected
models are enumerated on that: the solver no longer refutes each symmetric image of a non-answer. Gives
up (:class:`NoUsefulSymmetry`) when the clauses have no symmetry, or more than ``max_representatives``
representatives remain or they are not found within
:data:`REPRESENTATIVES_MAX_S` (or as long as the symmetries took): orbit counting pays only when orbits
are few, and it races routes that need the CPU.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from autonesy.tools.cnf import CNF
from autonesy.tools.enumeration import CountTimedOut, Enumeration, EnumerationCapReached, Model
from autonesy.tools.literal_count import LiteralCount, recognised

MAX_REPRESENTATIVES = 1_000  # past this many lex-leader models, orbits are too many (Latin squares, order 5: 272)
RANDOM_ELEMENTS = 1_000  # products of generators whose lex-leader constraints are added ...
MAX_BREAKING_CLAUSES = 200_000  # ... while their clauses (three per moved task variable) stay within this
# The representatives are enumerated within this (seconds), or within as long as finding the symmetries
# took when that was longer (both grow with the CNF): the designs that pay need a fraction of it (golfers'
# 3 on a CNF of 268,056 clauses, whose symmetries take bliss about 10 s); a 6 x 6 Sudoku's thousand took
# 38 s of CPU that the race's other routes needed; a Latin square of order 5's 272 took 6.5 s here
# (2026-12-06, python-sat 1.9.dev24: past the 5 s this was, on the machine CI runs on).
REPRESENTATIVES_MAX_S = 10.0
SEED = 0  # the random products are the same on every run: the count's route is reproducible
_SPLITTING = "fl"  # bliss's splitting heuristic: first largest cell (the fastest on golfers' graph here)
_TASK, _AUX, _CLAUSE, _TRUE = 0, 1, 2, 3  # vertex colours; a task literal true in a representative is _TRUE


class NoUsefulSymmetry(RuntimeError):
    """The formula has no symmetry on its task variables, or too many orbits to count one by one."""


def count_by_orbits(cnf: CNF, max_representatives: int = MAX_REPRESENTATIVES) -> tuple[int, dict[str, Any]]:
    """The projected model count of ``cnf`` and how it was found (group order, representatives, orbits)."""
    with _long_integers():  # bliss reports group orders as decimal text: 2,000 free variables' has 6,328 digits
        return _count_by_orbits(cnf, max_representatives)


@contextmanager
def _long_integers() -> Iterator[None]:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(limit)


def _count_by_orbits(cnf: CNF, max_representatives: int) -> tuple[int, dict[str, Any]]:
    start = time.perf_counter()
    counts = recognised(cnf)
    counted = frozenset().union(*(clauses for _, clauses in counts))
    clauses = sorted({tuple(sorted(set(c))) for c in cnf.clauses if not any(-lit in c for lit in c)})
    if any(not c for c in clauses):
        return 0, {"group_order": "1", "representatives": 0, "orbits": 0}
    # Equal task variables merged first (their symmetries become syntactic); the formula as it is when
    # that leaves no symmetry (one that only swapped equal variables).
    passes = []  # (group order, formula, its graph, the generators on all its variables) of each pass
    for quotient in (_Quotient(cnf), None):
        if quotient is None:
            reduced = CNF(cnf.num_task_vars, tuple(clauses), cnf.num_vars)
            stated, declared = [c for c in clauses if c not in counted], counts
        else:
            reduced = CNF(quotient.num_task_vars, tuple(quotient.clauses(clauses)), quotient.num_vars)
            stated = quotient.clauses(c for c in clauses if c not in counted)
            declared = [(count.substituted(quotient.literal), c) for count, c in counts]
        shift = 0 if quotient is None else quotient.shift  # the counters' states, renumbered with the auxiliaries
        listed = {abs(lit) for count, _ in counts for lit in count.literals + tuple(g for g, _ in count.guards)}
        states = frozenset(abs(lit) - shift for c in counted for lit in c if abs(lit) not in listed)
        formula = _Graph(reduced, stated, [count for count, _ in declared], states)
        order = formula.automorphisms()
        every = formula.generators()
        passes.append((order, reduced, every))
        generators = [{v: p[v] for v in reduced.task_vars} for p in every if any(p[v] != v for v in reduced.task_vars)]
        if generators or quotient is None or quotient.num_task_vars == cnf.num_task_vars:
            break
    if not generators:
        order, reduced, every = max(passes, key=lambda p: p[0])
        if order == 1:
            raise NoUsefulSymmetry("the clauses have no symmetry")
        return _count_with_auxiliaries_broken(reduced, every, order, max_representatives, start)
    breaking = _lex_leader_clauses(reduced, generators)
    with_breaking = CNF(reduced.num_task_vars, reduced.clauses + breaking[0], breaking[1])
    seconds = max(REPRESENTATIVES_MAX_S, time.perf_counter() - start)
    representatives = _enumerate(with_breaking, max_representatives, seconds)
    count, orbits = 0, 0
    seen: dict[bytes, list[np.ndarray]] = {}
    for model in representatives:
        colours = formula.coloured(model)
        # bliss's canonical order: the vertex at each canonical position (python-igraph 1.0)
        order_of = np.asarray(formula.graph.canonical_permutation(sh=_SPLITTING, color=colours))
        key = np.asarray(colours)[order_of].tobytes()  # the colours in canonical order
        known = seen.setdefault(key, [])
        position = np.argsort(order_of)  # each vertex's canonical position
        if any(formula.is_automorphism(other[position]) for other in known):
            continue  # another representative's orbit: a vertex goes where its canonical twin is there
        known.append(order_of)
        stabiliser = formula.graph.count_automorphisms(sh=_SPLITTING, color=colours)
        if order % stabiliser:
            raise RuntimeError(f"orbit counting: a stabiliser of order {stabiliser} does not divide {order}")
        count += order // stabiliser
        orbits += 1
    found = {"group_order": str(order), "representatives": len(representatives), "orbits": orbits}
    if counts:
        found["literal_counts"] = len(counts)
    if reduced.num_task_vars < cnf.num_task_vars:
        found["task_variables"] = f"{reduced.num_task_vars} of {cnf.num_task_vars} (the others equal to one of them)"
    return count, found


class _Quotient:
    """The formula with each task variable that a pair of binary clauses makes equal to an earlier one (or
    to its negation) replaced by it: the projected models correspond one to one (the replaced variables
    are functions of the others), and symmetries that a formula states through equal copies (an
    adjacency matrix and its transpose) become syntactic."""

    def __init__(self, cnf: CNF):
        n = cnf.num_task_vars
        parent = list(range(n + 1))  # union-find over task variables, with parity to the parent
        parity = [False] * (n + 1)

        def find(v: int) -> tuple[int, bool]:
            flip = False
            while parent[v] != v:
                flip ^= parity[v]
                v = parent[v]
            return v, flip

        binary = {tuple(sorted(c)) for c in cnf.clauses if len(set(c)) == 2 and all(abs(x) <= n for x in c)}
        for a, b in sorted(binary):  # with the converse clause: a = -b (a or b) or a = b (-a or b)
            if (-b, -a) in binary or (-a, -b) in binary:
                ra, fa = find(abs(a))
                rb, fb = find(abs(b))
                if ra != rb:  # a contradiction (x = -x) is left to the clauses, which say it too
                    low, high = min(ra, rb), max(ra, rb)
                    parent[high], parity[high] = low, fa ^ fb ^ ((a > 0) == (b > 0))
        self.find = find
        kept = [v for v in range(1, n + 1) if find(v)[0] == v]
        self.index = {v: i for i, v in enumerate(kept, start=1)}
        self.num_task_vars = len(kept)
        self.shift = n - len(kept)
        self.n = n
        self.num_vars = cnf.num_vars - self.shift

    def literal(self, lit: int) -> int:
        """The literal's image: a task literal of the quotient, or the auxiliary shifted down."""
        var = abs(lit)
        if var > self.n:
            return lit - self.shift if lit > 0 else lit + self.shift
        root, flip = self.find(var)
        return self.index[root] if (lit > 0) ^ flip else -self.index[root]

    def clauses(self, clauses: Iterable[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """The clauses' images, sorted, without repeats; tautologies (an equality's own clauses) dropped."""
        out = {tuple(sorted({self.literal(lit) for lit in clause})) for clause in clauses}
        return sorted(c for c in out if not any(-x in c for x in c))


class _Graph:
    """The coloured literal–clause graph of a CNF (literal l is vertex 2(|l|-1) + (l < 0)), with a vertex
    for each literal count joined to its literals through ports coloured by how often it lists them."""

    def __init__(
        self,
        cnf: CNF,
        clauses: list[tuple[int, ...]],
        counts: Sequence[LiteralCount] = (),
        hidden: frozenset[int] = frozenset(),
    ):
        import igraph

        self.cnf = cnf
        n = cnf.num_vars
        self.colours = [_TASK if v < 2 * cnf.num_task_vars else _AUX for v in range(2 * n)] + [_CLAUSE] * len(clauses)
        edges = [(2 * v, 2 * v + 1) for v in range(n) if v + 1 not in hidden]
        for index, clause in enumerate(clauses, start=2 * n):
            edges.extend((index, _vertex(lit)) for lit in clause)
        kinds: dict[tuple, int] = {}  # a colour for each kind of count and each multiplicity of a port
        for var in hidden:  # a counter's states: out of the graph (each literal its own colour: fixed)
            for vertex in (_vertex(var), _vertex(-var)):
                self.colours[vertex] = kinds.setdefault(("hidden", vertex), len(kinds) + 4)
        for count in counts:
            vertex = len(self.colours)
            self.colours.append(
                kinds.setdefault(("count", count.modulus, count.allowed, len(count.literals)), len(kinds) + 4)
            )
            ports: list[tuple[tuple[object, ...], int]] = [
                (("port", times), lit) for lit, times in sorted(Counter(count.literals).items())
            ]
            ports += [(("guard", allowed), g) for g, allowed in count.guards]
            for kind, lit in ports:
                port = len(self.colours)
                self.colours.append(kinds.setdefault(kind, len(kinds) + 4))
                edges.extend([(vertex, port), (port, _vertex(lit))])
        self.edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        self.sorted_edges = np.sort(self._keys(self.edges))
        self.graph = igraph.Graph(n=len(self.colours), edges=edges)

    def _keys(self, edges: np.ndarray) -> np.ndarray:
        low, high = edges.min(axis=1), edges.max(axis=1)
        return low * len(self.colours) + high

    def automorphisms(self) -> int:
        return int(self.graph.count_automorphisms(sh=_SPLITTING, color=self.colours))

    def generators(self) -> list[dict[int, int]]:
        """The automorphism group's generators as maps of the variables to (signed) literals (task
        variables to task literals; a counter's states, fixed by their colours, to themselves)."""
        return [
            {v: _literal(p[_vertex(v)]) for v in range(1, self.cnf.num_vars + 1)}
            for p in self.graph.automorphism_group(sh=_SPLITTING, color=self.colours)
        ]

    def coloured(self, model: Model) -> list[int]:
        colours = list(self.colours)
        for v, value in zip(self.cnf.task_vars, model):
            colours[_vertex(v if value else -v)] = _TRUE
        return colours

    def is_automorphism(self, permutation: np.ndarray) -> bool:
        return bool(np.array_equal(np.sort(self._keys(permutation[self.edges])), self.sorted_edges))


def _vertex(literal: int) -> int:
    return 2 * (abs(literal) - 1) + (literal < 0)


def _literal(vertex: int) -> int:
    return -(vertex // 2 + 1) if vertex % 2 else vertex // 2 + 1


def _count_with_auxiliaries_broken(
    cnf: CNF, generators: list[dict[int, int]], order: int, max_models: int, start: float
) -> tuple[int, dict[str, Any]]:
    """The projected count when every symmetry fixes each task variable: each projected model's
    extensions are closed under the group, so one extension per orbit of them (the least in the
    auxiliaries' order: lex-leader constraints over them) keeps every projected model, and the search
    no longer visits each of a model's |orbit| symmetric images to refute it (handshakes among
    interchangeable couples: no other answer is found by every couple in turn)."""
    breaking = _lex_leader_clauses(cnf, generators, range(cnf.num_task_vars + 1, cnf.num_vars + 1))
    broken = CNF(cnf.num_task_vars, cnf.clauses + breaking[0], breaking[1])
    models = _enumerate(broken, max_models, max(REPRESENTATIVES_MAX_S, time.perf_counter() - start))
    return len(models), {"group_order": str(order), "fixing_task_variables": True, "representatives": len(models)}


def _lex_leader_clauses(
    cnf: CNF, generators: list[dict[int, int]], positions: Iterable[int] | None = None
) -> tuple[tuple[tuple[int, ...], ...], int]:
    """Clauses saying x ≤ σ(x) in the order of ``positions`` (the task variables by default), for each
    generator and random products of them (while within :data:`MAX_BREAKING_CLAUSES`), over fresh
    auxiliaries; and the new variable count.

    Position by position: x_v ≤ x_σ(v) while the earlier positions are equal (e_i: "equal so far",
    implied, never forced false, so each orbit's least member keeps a model)."""
    order = list(cnf.task_vars if positions is None else positions)
    rng = random.Random(SEED)
    elements = list(generators)
    current = dict(generators[0])
    for _ in range(RANDOM_ELEMENTS):
        step = generators[rng.randrange(len(generators))]
        current = {v: _signed(step, lit) for v, lit in current.items()}
        elements.append(current)
    clauses: list[tuple[int, ...]] = []
    top = cnf.num_vars
    for sigma in elements:
        equal = None  # the literal "positions so far are equal"; None before the first moved position
        mapped = [(v, sigma[v]) for v in order if sigma[v] != v]
        if len(clauses) + 3 * len(mapped) > MAX_BREAKING_CLAUSES:
            break
        for v, image in mapped:
            clauses.append((-v, image) if equal is None else (-equal, -v, image))
            if image == -v:
                break  # never equal: the positions after it are unconstrained
            top += 1
            guard = () if equal is None else (-equal,)
            clauses.extend([(top, *guard, v, image), (top, *guard, -v, -image)])
            equal = top
    return tuple(clauses), top


def _signed(mapping: dict[int, int], literal: int) -> int:
    image = mapping[abs(literal)]
    return image if literal > 0 else -image


def _enumerate(cnf: CNF, cap: int, seconds: float) -> list[Model]:
    """The projected models within ``seconds`` of this thread's CPU time (the SAT solver runs in it; a
    watcher stops it), and at most four times that on the wall clock."""
    enumeration, done = Enumeration(), threading.Event()
    clock = time.pthread_getcpuclockid(threading.get_ident())
    start = time.clock_gettime(clock)

    def watch() -> None:
        while not done.wait(0.05):
            if time.clock_gettime(clock) - start >= seconds:
                enumeration.stop()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        return enumeration.run(cnf, cap, 4 * seconds)
    except EnumerationCapReached as error:
        raise NoUsefulSymmetry(f"more than {cap} lex-leader representatives: too many orbits") from error
    except CountTimedOut as error:
        raise NoUsefulSymmetry(f"lex-leader representatives not all found in {seconds:.1f} s of CPU") from error
    finally:
        done.set()
        watcher.join()
