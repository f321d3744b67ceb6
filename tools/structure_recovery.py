"""What each block of auxiliary clauses says about its task variables, recovered whatever the encoding and proved.

A cardinality or pseudo-Boolean constraint reaches a CNF through some encoder (a sequential counter,
a totalizer, a sorting network, a ladder or binary at-most-one, an adder): clauses over auxiliaries
attached to a few task variables. Scoring counts the overlap of two such formulas, and each route
that reads clauses fails on it (the counters' auxiliaries cross). Here the clauses that mention
auxiliaries split into *blocks* (connected through shared auxiliaries), and each block is replaced by
its projection on its visible (task) variables, as an SDD over the task variables:

1. *An extension, built.* The auxiliaries are read in numeric order (the encoder's order of creation),
   forwards and backwards, each clause *headed* by its last auxiliary in that order (or, when every
   clause has at most one auxiliary of a sign, headed by it, in an order of their dependencies), and each
   auxiliary is defined by the clauses it heads with one polarity: ``a = OR(bodies)`` (the least value
   its positive clauses allow) or ``a = AND(rests)`` (the greatest its negative ones allow). That is a
   circuit over the task variables; the clauses it does not satisfy by construction are conjoined into
   ``G``, the task assignments whose circuit value satisfies the whole block. So ``G`` is contained in
   the projection, whatever the encoding (six such circuits, united). The circuit is evaluated exactly,
   as tables over the counts of groups of task literals (:mod:`autonesy.tools.count_functions`: a
   counter's auxiliaries in a few cells each, where SDDs took minutes on exactly-100 of 200), or as SDDs
   when a table outgrows its budget (a weighted sum). Auxiliaries whose definitions read each other (a PB
   BDD's merged nodes) are solved together as the least (or greatest) fixpoint of their definitions.
2. *The other direction, proved.* One SAT call (CaDiCaL) shows the block has no model outside ``G``:
   the block's clauses, a Tseitin encoding of ``G``'s SDD and "not G" are unsatisfiable — unless a circuit is
   all Horn (its value is the least model), or the clauses each auxiliary heads force it to its value (an
   adder's bits, defined both ways: no model has another). Only then is the projection ``G``. A block
   whose call is satisfiable (a modulo totalizer, whose auxiliaries are not functions of the counted
   literals in one pass) is decided row by row when it reads at most
   ``MAX_CASE_SPLIT_VARS`` task variables (one SAT call per assignment of them), else not recovered.
3. *Or an adder network, read as a weighted sum.* Before the circuits, a block of full and half adders
   (PySAT's ``adder``) is read by the adder identity as "its weighted sum of items is among the totals its
   comparator allows" (:mod:`autonesy.tools.adder_network`, one SAT call per total): as a circuit each sum
   bit of 60 items is a function of all of them, past the node budget.
4. *Its shape, read.* A projection that is a symmetric function of its variables (one group of literals
   left in its table, or ``G`` equal, as an SDD, to "the number of true variables is in A") is also given as a
   :class:`~autonesy.tools.literal_count.LiteralCount`; an at-most-one or exactly-one as clauses
   without auxiliaries (pairwise exclusions and the positive clause), which the one-hot route reads.

Nothing in the comments or the shape of the clauses is trusted: a block that looks like a counter but
is not either yields a ``G`` that the SAT call refutes or is recovered as what it is.
"""

from __future__ import annotations

import graphlib
import itertools
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pysat.solvers import Solver
from pysdd.sdd import SddManager, SddNode, Vtree

from autonesy.tools.adder_network import AdderReading, allowed_projection, read_adders
from autonesy.tools.cnf import CNF, Clause
from autonesy.tools.compile import global_model_count, sdd_postorder
from autonesy.tools.count_functions import CountFunction, TooLarge, or_of_ands
from autonesy.tools.errors import AutonesyError
from autonesy.tools.literal_count import LiteralCount
from autonesy.tools.onehot_count import StateBudgetExceeded, count_one_hot

MAX_SDD_NODES = 2_000_000  # live SDD nodes in the manager: past this the recovery gives up
MAX_SYMMETRIC_VARS = 64  # a block's projection is tested for being a count of its variables up to this width


DEEP_STACK_BYTES = 1 << 30  # the recovery thread's stack (reserved, touched only as deep as it goes)
GARBAGE_NODES = 200_000  # unreferenced SDD nodes collected past this many
MAX_SAT_CHECK_CLAUSES = 2_000  # a block with no Horn proof is checked by one SAT call up to this size
EARLY_ANNOUNCE_CLAUSES = 1_000  # blocks this large make building projections the work worth a core (see recover_blocks)
MAX_CASE_SPLIT_VARS = 16  # a block still not recovered is decided row by row up to this many visible variables


class NotRecoverable(AutonesyError, RuntimeError):
    """A block's projection could not be built or proved within the budgets; the message says which."""


@dataclass(frozen=True)
class Block:
    """Clauses connected through their auxiliaries, and the task variables they mention."""

    clauses: tuple[Clause, ...]
    visible: tuple[int, ...]


@dataclass(frozen=True)
class Recovered:
    """A block with its proved projection ``sdd`` (over the manager's task variables) and, when that
    projection is symmetric, the count of its visible variables it allows."""

    block: Block
    sdd: SddNode
    count: LiteralCount | None

    def clauses_without_auxiliaries(self) -> list[Clause] | None:
        """The projection as clauses over its visible variables alone, when it is at most one or exactly one
        (of the variables or of their negations); None otherwise."""
        if self.count is None:
            return None
        literals, allowed = self.count.literals, set(self.count.allowed)
        if not allowed <= {0, 1}:
            literals, allowed = tuple(-lit for lit in literals), {len(literals) - a for a in allowed}
            if not allowed <= {0, 1}:
                return None
        if allowed == {0}:
            return [(-lit,) for lit in literals]
        clauses: list[Clause] = [(-a, -b) for i, a in enumerate(literals) for b in literals[i + 1 :]]
        if 0 not in allowed:
            clauses.append(tuple(literals))
        return clauses


def auxiliary_blocks(cnf: CNF) -> tuple[list[Clause], list[Block]]:
    """The clauses over task variables only, and the blocks of the others (connected through auxiliaries);
    tautologies are left out."""
    n = cnf.num_task_vars
    parent: dict[int, int] = {}

    def root(var: int) -> int:
        while parent.setdefault(var, var) != var:
            parent[var] = parent[parent[var]]
            var = parent[var]
        return var

    plain: list[Clause] = []
    headed: list[tuple[int, Clause]] = []
    for clause in cnf.clauses:
        if any(-lit in clause for lit in clause):
            continue  # a tautology constrains nothing (and would break the least-model reading)
        auxiliaries = [abs(lit) for lit in clause if abs(lit) > n]
        if not auxiliaries:
            plain.append(clause)
            continue
        first = root(auxiliaries[0])
        for var in auxiliaries[1:]:
            other = root(var)
            if other != first:
                parent[other] = first
        headed.append((auxiliaries[0], clause))
    grouped: dict[int, list[Clause]] = defaultdict(list)
    for var, clause in headed:
        grouped[root(var)].append(clause)
    blocks = []
    for clauses in grouped.values():
        visible = sorted({abs(lit) for clause in clauses for lit in clause if abs(lit) <= n})
        blocks.append(Block(tuple(clauses), tuple(visible)))
    return plain, blocks


class _Budget:
    """The recovery's deadline and the manager's size, checked between SDD operations."""

    def __init__(self, manager: SddManager, time_limit_s: float | None):
        self.manager = manager
        self.deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None

    def check(self, doing: str, collect: bool = False) -> None:
        """Stop past the deadline or the node budget; with ``collect``, free unreferenced nodes once they
        are many (only where every node still in use is referenced)."""
        if collect and self.manager.dead_count() > GARBAGE_NODES:
            self.manager.garbage_collect()
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise NotRecoverable(f"structure recovery ran out of time ({doing})")
        if self.manager.live_size() > MAX_SDD_NODES:
            raise NotRecoverable(f"structure recovery: more than {MAX_SDD_NODES} SDD nodes ({doing})")


class _Sdds:
    """Circuit values as SDDs over the manager's task variables: any function, at a cost that grows with the
    product of the operands' sizes. Values are referenced while kept and garbage is collected between
    auxiliaries (a sequential counter's exactly-100 of 200 builds millions of nodes, a few ten thousand
    alive at once)."""

    def __init__(self, manager: SddManager, budget: _Budget):
        self.manager, self.budget = manager, budget

    def constant(self, value: bool) -> SddNode:
        return self.manager.true() if value else self.manager.false()

    def literal(self, lit: int) -> SddNode:
        node = self.manager.literal(abs(lit))
        return node if lit > 0 else ~node

    def or_of_ands(self, terms: Sequence[Sequence[tuple[SddNode, bool]]]) -> SddNode:
        """The OR over ``terms`` of the AND of each term's values (negated where paired with False)."""
        result = self.manager.false()
        for term in terms:
            conjunction = self.manager.true()
            for node, positive in term:
                conjunction = conjunction & (node if positive else ~node)
            result = result | conjunction
        return result

    def and_of_ors(self, terms: Sequence[Sequence[tuple[SddNode, bool]]]) -> SddNode:
        result = self.manager.true()
        for term in terms:
            disjunction = self.manager.false()
            for node, positive in term:
                disjunction = disjunction | (node if positive else ~node)
            result = result & disjunction
        return result

    def keep(self, node: SddNode) -> SddNode:
        node.ref()
        return node

    def drop(self, node: SddNode) -> None:
        node.deref()

    def equal(self, one: SddNode, other: SddNode) -> bool:
        return one == other

    def check(self, doing: str, collect: bool = False) -> None:
        self.budget.check(doing, collect)


class _Tables:
    """Circuit values as :class:`~autonesy.tools.count_functions.CountFunction` tables over the counts of a
    few groups of task literals: a counter's auxiliaries in a few cells each; :class:`TooLarge` past that."""

    constant = staticmethod(CountFunction.constant)
    or_of_ands = staticmethod(or_of_ands)

    def __init__(self, budget: _Budget):
        self.budget = budget
        self.literals: dict[int, CountFunction] = {}

    def literal(self, lit: int) -> CountFunction:
        if lit not in self.literals:
            self.literals[lit] = CountFunction.literal(lit)
        return self.literals[lit]

    def and_of_ors(self, terms: Sequence[Sequence[tuple[CountFunction, bool]]]) -> CountFunction:
        return ~or_of_ands([[(f, not positive) for f, positive in term] for term in terms])

    def keep(self, value: CountFunction) -> CountFunction:
        return value

    def drop(self, value: CountFunction) -> None:
        pass

    def equal(self, one: CountFunction, other: CountFunction) -> bool:
        return one.equals(other)

    def check(self, doing: str, collect: bool = False) -> None:
        self.budget.check(doing)


@dataclass(frozen=True)
class _Circuit:
    """How a block's auxiliaries are read as a circuit: in numeric order or ``backwards``, each clause headed
    by its last auxiliary, each auxiliary defined as the least value its positive clauses allow (in ``least``)
    or the greatest its negative ones allow."""

    heads: dict[Clause, int]
    order: list[int]
    least: frozenset[int]
    loops: tuple[tuple[int, ...], ...] = ()  # auxiliaries whose definitions read each other, contiguous in order

    @classmethod
    def of(cls, block: Block, n: int, backwards: bool, polarity: str) -> _Circuit:
        pick = min if backwards else max
        heads = {clause: pick((lit for lit in clause if abs(lit) > n), key=abs) for clause in block.clauses}
        tally: dict[int, int] = defaultdict(int)
        for head in heads.values():
            tally[abs(head)] += 1 if head > 0 else -1
        order = sorted({abs(lit) for clause in block.clauses for lit in clause if abs(lit) > n}, reverse=backwards)
        if polarity == "majority":
            least = frozenset(var for var in order if tally[var] >= 0)
        else:
            least = frozenset(order) if polarity == "positive" else frozenset()
        return cls(heads, order, least)

    @classmethod
    def by_dependencies(cls, block: Block, n: int, positive: bool) -> _Circuit | None:
        """Every auxiliary least-defined (``positive``) or greatest-defined, each clause headed by its one
        auxiliary of that sign, read in an order where each comes after those its definitions read (a
        weighted totalizer's "sum ≥ 12 implies sum ≥ 9" links a later auxiliary to an earlier one); auxiliaries
        whose definitions read each other (a PB BDD's merged nodes: ``a → b`` and ``b ∧ x → a``) are a loop,
        solved as a fixpoint. None when a clause has several such auxiliaries and no other to head it."""
        heads: dict[Clause, int] = {}
        reads: dict[int, set[int]] = {}
        for clause in block.clauses:
            auxiliaries = [lit for lit in clause if abs(lit) > n]
            raised = [lit for lit in auxiliaries if (lit > 0) == positive]
            if len(raised) == 1:
                heads[clause] = raised[0]
                reads.setdefault(abs(raised[0]), set()).update(abs(lit) for lit in auxiliaries if lit != raised[0])
            elif len(raised) < len(auxiliaries):
                heads[clause] = next(lit for lit in auxiliaries if (lit > 0) != positive)  # a constraint
            else:
                return None
        for lit in {abs(lit) for clause in block.clauses for lit in clause if abs(lit) > n}:
            reads.setdefault(lit, set())
        loops: tuple[tuple[int, ...], ...] = ()
        try:
            order = list(graphlib.TopologicalSorter(reads).static_order())
        except graphlib.CycleError:
            order, loops = _loops_in_order(reads)
        return cls(heads, order, frozenset(order) if positive else frozenset(), loops)

    def horn(self, clauses: Iterable[Clause], n: int) -> list[Clause]:
        """The clauses that are Horn in the auxiliaries once each greatest-defined one is negated, with their
        one positive auxiliary (if any) as head: on them the circuit's value is the least model."""

        def raised(lit: int) -> bool:
            return (lit > 0) == (abs(lit) in self.least)

        kept = []
        for clause in clauses:
            positive = [lit for lit in clause if abs(lit) > n and raised(lit)]
            if not positive or (len(positive) == 1 and positive[0] == self.heads[clause]):
                kept.append(clause)
        return kept

    def projection(self, clauses: Sequence[Clause], n: int, values: _Sdds | _Tables, determined: bool = False) -> Any:
        """The task assignments whose circuit value (over ``clauses``' definitions) satisfies all of ``clauses``,
        kept (the caller drops it); each auxiliary's value is dropped after its last use.

        With ``determined``: None unless ``clauses`` force each auxiliary to its circuit value. The clauses an
        auxiliary heads bound it from below (``lo``, the bodies that force it true) and above (``hi``, the rests
        that let it be false); where ``hi`` implies ``lo`` every model of the clauses has the circuit's value
        (an adder's sum and carry bits, defined both ways), so their projection is exactly the result, with no
        SAT call (which on a PB adder of 30 items ran past 100 s). The other bound is read when the auxiliary
        is, so no value is kept to the end for it."""
        defining: dict[int, list[Clause]] = defaultdict(list)
        bounding: dict[int, list[Clause]] = defaultdict(list)  # with ``determined``: headed by the other sign
        unmet: list[Clause] = []
        for clause in clauses:
            head = self.heads[clause]
            if (head > 0) == (abs(head) in self.least):
                defining[abs(head)].append(clause)
            else:
                (bounding[abs(head)] if determined else unmet).append(clause)
        if determined:
            position = {var: i for i, var in enumerate(self.order)}
            if self.loops or any(
                position[abs(lit)] > position[head]
                for head, bounds in bounding.items()
                for clause in bounds
                for lit in clause
                if abs(lit) > n
            ):
                return None  # a bound over an auxiliary not yet computed when its head is
        uses: dict[int, int] = defaultdict(int)  # definitions and bounds still to read each auxiliary
        for head in set(defining) | set(bounding):
            for clause in defining.get(head, []) + bounding.get(head, []):
                for var in {abs(lit) for lit in clause if abs(lit) > n} - {head}:
                    uses[var] += 1
        kept_to_end = {abs(lit) for clause in unmet for lit in clause if abs(lit) > n}
        value: dict[int, Any] = {}
        consistent = values.keep(values.constant(True))  # with ``determined``: each auxiliary's bounds met

        def operand(lit: int) -> tuple[Any, bool]:
            return (value[abs(lit)], lit > 0) if abs(lit) > n else (values.literal(lit), True)

        def defined(var: int) -> Any:
            definition = defining.get(var, ())
            if var in self.least:  # var = OR of the bodies that force it true
                node = values.or_of_ands(
                    [[operand(-lit) for lit in clause if abs(lit) != var] for clause in definition]
                )
            else:  # var = AND of the rests that let it be false
                node = values.and_of_ors([[operand(lit) for lit in clause if abs(lit) != var] for clause in definition])
            return values.keep(node)

        def release() -> None:
            values.drop(consistent)
            for node in value.values():
                values.drop(node)

        loop_of = {var: loop for loop in self.loops for var in loop}
        for var in self.order:
            loop = loop_of.get(var, (var,))
            if var != loop[0]:
                continue  # solved with its loop (contiguous in the order, its first member first)
            if len(loop) == 1:
                value[var] = defined(var)
            else:
                members = set(loop)
                readers: dict[int, list[int]] = defaultdict(list)  # in the loop, whose definitions read each one
                for member in loop:
                    for read in {abs(lit) for clause in defining.get(member, ()) for lit in clause} & members:
                        if read != member:
                            readers[read].append(member)
                self._solve_loop(loop, readers, defined, value, values)
            if determined:
                met = self._bounds_met(var, bounding[var], value[var], operand, values)
                if met is None:
                    release()
                    return None
                joined = values.keep(values.and_of_ors([[(consistent, True)], [(met, True)]]))
                values.drop(consistent)
                consistent = joined
            for member in loop:
                for clause in defining.get(member, []) + bounding.get(member, []):
                    for read in {abs(lit) for lit in clause if abs(lit) > n} - {member}:
                        uses[read] -= 1
                        if uses[read] == 0 and read not in kept_to_end:
                            values.drop(value.pop(read))
            values.check("building a block's circuit", collect=True)
        projection = consistent
        for clause in unmet:
            projection = values.and_of_ors([[(projection, True)], [operand(lit) for lit in clause]])
            values.check("conjoining a block's remaining clauses")
        projection = values.keep(projection)
        release()
        return projection

    def _bounds_met(
        self,
        var: int,
        bounding: Sequence[Clause],
        circuit_value: Any,
        operand: Callable[[int], tuple[Any, bool]],
        values: _Sdds | _Tables,
    ) -> Any:
        """Where the circuit value of ``var`` meets its other bound (from the clauses in ``bounding``); None
        unless the bounds force it: no task assignment where the upper bound holds and the lower one not."""
        if var in self.least:
            lower = circuit_value
            upper = values.and_of_ors([[operand(lit) for lit in clause if abs(lit) != var] for clause in bounding])
        else:
            upper = circuit_value
            lower = values.or_of_ands([[operand(-lit) for lit in clause if abs(lit) != var] for clause in bounding])
        if not values.equal(values.or_of_ands([[(upper, True), (lower, False)]]), values.constant(False)):
            return None
        return values.or_of_ands([[(lower, False)], [(upper, True)]])

    def _solve_loop(
        self,
        loop: Sequence[int],
        readers: dict[int, list[int]],
        defined: Callable[[int], Any],
        value: dict[int, Any],
        values: _Sdds | _Tables,
    ) -> None:
        """The loop's auxiliaries as the least (or greatest) fixpoint of their definitions: each starts false
        (true when greatest-defined), and an auxiliary is defined again whenever one it reads (``readers``)
        changed, until none changes. The definitions are monotone in the loop's values, so this is the least
        (greatest) model, as the circuit reads it; a chain of k auxiliaries closed into a loop takes O(k)
        definitions, where passes over the whole loop took O(k²) (1,000 of them: past 30 s)."""
        for var in loop:
            value[var] = values.keep(values.constant(var not in self.least))
        pending, queued = deque(loop), set(loop)
        while pending:
            var = pending.popleft()
            queued.discard(var)
            node = defined(var)
            if values.equal(node, value[var]):
                values.drop(node)
                continue
            values.drop(value[var])
            value[var] = node
            for reader in readers.get(var, ()):
                if reader not in queued:
                    queued.add(reader)
                    pending.append(reader)
            values.check("solving a loop of a block's circuit", collect=True)


def _loops_in_order(reads: dict[int, set[int]]) -> tuple[list[int], tuple[tuple[int, ...], ...]]:
    """The auxiliaries in an order where each comes after those its definition reads, outside its own loop (a
    strongly connected set of definitions, kept contiguous), and the loops of more than one auxiliary."""
    import igraph

    names = list(reads)
    index = {var: i for i, var in enumerate(names)}
    graph = igraph.Graph(
        n=len(names),
        edges=[(index[read], index[var]) for var, read_by in reads.items() for read in read_by],
        directed=True,
    )
    components = graph.connected_components(mode="strong")
    condensed = components.cluster_graph()
    condensed.simplify(multiple=True, loops=True)
    order: list[int] = []
    loops = []
    for component in condensed.topological_sorting():
        members = tuple(names[i] for i in components[component])
        order.extend(members)
        if len(members) > 1:
            loops.append(members)
    return order, tuple(loops)


def _outside_is_empty(block: Block, projection: SddNode, first_free: int) -> bool:
    """Whether the block has no model outside ``projection``: its clauses, the SDD's nodes as Tseitin
    variables (each implied by its elements, so a false root makes the SDD false) and the root false."""
    clauses = [list(clause) for clause in block.clauses]
    if projection.is_true():
        return True
    if not projection.is_false():
        names: dict[int, int] = {}
        top = first_free - 1

        def name(node: SddNode) -> int | None:  # a literal for the node; None for true, 0 for false
            if node.is_true():
                return None
            if node.is_false():
                return 0
            if node.is_literal():
                return node.literal
            return names[node.id]

        for node in sdd_postorder(projection):
            if not node.is_decision():
                continue
            top += 1
            names[node.id] = top
            for prime, sub in node.elements():
                p, s = name(prime), name(sub)
                if p == 0 or s == 0:
                    continue
                clauses.append([-lit for lit in (p, s) if lit is not None] + [top])
        root = name(projection)
        if root is None:
            return True
        clauses.append([-root])
    with Solver(name="cadical195", bootstrap_with=clauses) as solver:
        return not solver.solve()


def _count_of_variables(projection: SddNode, visible: Sequence[int], manager: SddManager) -> LiteralCount | None:
    """``projection`` as "the number of true ``visible`` variables is in A", when it is that (an SDD equality)."""
    if len(visible) > MAX_SYMMETRIC_VARS:
        return None
    exactly = [manager.true()]  # exactly[k]: k of the variables read so far are true
    for var in visible:
        x = manager.literal(var)
        exactly = [
            (exactly[k] & ~x if k < len(exactly) else manager.false()) | (exactly[k - 1] & x if k else manager.false())
            for k in range(len(exactly) + 1)
        ]
    allowed = [k for k, node in enumerate(exactly) if not (projection & node).is_false()]
    if not allowed:  # an unsatisfiable block: no count is allowed, and clauses_without_auxiliaries would read
        return None  # an empty set as "exactly one"; its false projection is conjoined as it is
    symmetric = manager.false()
    for k in allowed:
        symmetric = symmetric | exactly[k]
    if symmetric != projection:
        return None
    return LiteralCount(tuple(visible), tuple(allowed))


def _top_down(n: int) -> list[int]:
    """The task variables from the root of the manager's right-linear vtree down."""
    return list(range(n, 0, -1))


_READINGS = [(backwards, polarity) for backwards in (False, True) for polarity in ("majority", "positive", "negative")]


def _readings(block: Block, n: int) -> Iterator[_Circuit]:
    """The block's circuits, built one at a time: the first is all Horn for most encodings."""
    for backwards, polarity in _READINGS:
        yield _Circuit.of(block, n, backwards, polarity)
    for positive in (True, False):
        circuit = _Circuit.by_dependencies(block, n, positive)
        if circuit is not None:
            yield circuit


def _all_horn_reading(block: Block, n: int) -> _Circuit | None:
    """The first of the block's circuits that reads all of it as Horn clauses: its value is the projection."""
    return next((c for c in _readings(block, n) if len(c.horn(block.clauses, n)) == len(block.clauses)), None)


def _projection(
    block: Block,
    n: int,
    values: _Sdds | _Tables,
    outside_is_empty: Callable[[Any], bool],
    all_horn: _Circuit | None = None,
) -> Any:
    """The block's projection on the task variables (kept), proved equal to it; None when no proof was found.

    A circuit's value that satisfies the block is a model, so each circuit's projection ``G`` is in the
    block's projection, and so is their union. The block implies its Horn part ``H`` (see
    :meth:`_Circuit.horn`), whose every model extends its least model, which the circuit computes:
    when ``H`` projects to the union, the block's projection lies between the two, equal to both. A
    block that is all Horn for one circuit (an at-most-k by a sequential counter, a totalizer or a
    sorting network) needs that circuit alone (``all_horn``, when the caller has found it). Else
    ``outside_is_empty`` (one SAT call) decides."""
    if all_horn is not None:
        return all_horn.projection(block.clauses, n, values)
    circuits, horn_parts = [], []
    for circuit in _readings(block, n):
        horn = circuit.horn(block.clauses, n)
        if len(horn) == len(block.clauses):
            return circuit.projection(block.clauses, n, values)
        circuits.append(circuit)
        horn_parts.append(horn)
    for circuit in circuits:  # a reading whose every auxiliary the block forces (it gives up at the first not)
        found = circuit.projection(block.clauses, n, values, determined=True)
        if found is not None:
            return found
    union = values.keep(values.constant(False))
    for circuit in circuits:
        value = circuit.projection(block.clauses, n, values)
        joined = values.keep(union | value)
        values.drop(union)
        values.drop(value)
        union = joined
    for index in sorted(range(len(circuits)), key=lambda i: -len(horn_parts[i])):
        value = circuits[index].projection(horn_parts[index], n, values)
        values.drop(value)
        if values.equal(value, union):
            return union
    if outside_is_empty(union):
        return union
    values.drop(union)
    return None


def _projection_by_cases(block: Block, budget: _Budget) -> CountFunction:
    """The block's projection as its truth table over its visible variables, one SAT call per row: for
    encodings whose auxiliaries are no function of the counted literals (a modulo totalizer's digits)."""
    table = np.zeros((2,) * len(block.visible), dtype=bool)
    with Solver(name="cadical195", bootstrap_with=[list(clause) for clause in block.clauses]) as solver:
        for row in itertools.product((0, 1), repeat=len(block.visible)):
            table[row] = solver.solve(assumptions=[var if bit else -var for var, bit in zip(block.visible, row)])
            budget.check("listing a block's projection")
    return CountFunction.of_truth_table(block.visible, table)


def _proved_projection(
    block: Block,
    n: int,
    first_free: int,
    manager: SddManager,
    budget: _Budget,
    reading: AdderReading | None = None,
    all_horn: _Circuit | None = None,
) -> tuple[SddNode, LiteralCount | None] | None:
    """The block's proved projection as an SDD (referenced) and, when symmetric, as a count; None when not
    proved. An adder network's ``reading`` (:mod:`autonesy.tools.adder_network`; with the clauses over task
    variables alone it needs, so the projection is of the block and those, which the count conjoins anyway)
    gives it as a weighted sum; else its circuit (``all_horn`` when one reads it all as Horn clauses) is
    evaluated as count tables, or as SDDs when a table outgrows its budget."""

    def sat_check(projection: SddNode) -> bool:
        return len(block.clauses) <= MAX_SAT_CHECK_CLAUSES and _outside_is_empty(block, projection, first_free)

    if reading is not None:
        read = allowed_projection(reading, block.visible, manager, _top_down(n), budget.check)
        if read is not None:
            return read, _count_of_variables(read, block.visible, manager)
    try:
        found = _projection(
            block, n, _Tables(budget), lambda value: sat_check(value.to_sdd(manager, _top_down(n))), all_horn
        )
    except TooLarge:
        found = _projection(block, n, _Sdds(manager, budget), sat_check, all_horn)
        if found is not None:
            return found, _count_of_variables(found, block.visible, manager)
    if found is None:
        if len(block.visible) > MAX_CASE_SPLIT_VARS:
            return None
        found = _projection_by_cases(block, budget)
    projection = found.to_sdd(manager, _top_down(n))
    projection.ref()
    return projection, found.literal_count(block.visible)


def recover_blocks(
    cnf: CNF,
    time_limit_s: float | None = None,
    all_or_none: bool = False,
    on_structure: Callable[[], None] | None = None,
) -> tuple[SddManager, list[Clause], list[Recovered], list[Block]]:
    """Each auxiliary block's projection on the task variables, proved; the blocks that could not be.

    Returns the SDD manager (a right-linear vtree over the task variables in numeric order: a
    symmetric function of m of them has O(m²) nodes), the clauses over task variables only, the
    recovered blocks and the others. Raises :class:`NotRecoverable` past ``time_limit_s`` or the node budget,
    and at the first block not recovered when ``all_or_none``. ``on_structure`` is called once: before any
    projection is built when every block has a reading that needs no search (an adder network, or a circuit
    the block is all Horn for) and ``EARLY_ANNOUNCE_CLAUSES`` clauses or more; building them is then most of
    the work (a weighted at-most of 60 items as a BDD: 6 s of CPU), which a racer that has said so gets a core
    for. Else once every block is recovered: 80 small blocks of an all-different are recovered in 0.2 s, and
    announcing at once paused the one-hot route that answers as fast (0.2 s became 25 s)."""
    n = cnf.num_task_vars
    if n == 0:
        raise NotRecoverable("no task variables")
    manager = SddManager.from_vtree(Vtree(var_count=n, var_order=_top_down(n), vtree_type="right"))
    manager.auto_gc_and_minimize_off()
    budget = _Budget(manager, time_limit_s)
    plain, blocks = auxiliary_blocks(cnf)
    readings = [read_adders(block.clauses, n, plain) for block in blocks]
    horn: list[_Circuit | None] = [None] * len(blocks)
    early = on_structure is not None and all(len(block.clauses) >= EARLY_ANNOUNCE_CLAUSES for block in blocks)
    for index, (block, reading) in enumerate(zip(blocks, readings)):
        if early and reading is None:  # looked for only while an announcement is still possible
            horn[index] = _all_horn_reading(block, n)
            early = horn[index] is not None
    if on_structure is not None and early:
        on_structure()
    recovered, refused = [], []
    for block, reading, all_horn in zip(blocks, readings, horn):
        proved = _proved_projection(block, n, cnf.num_vars + 1, manager, budget, reading, all_horn)
        if proved is None:
            if all_or_none:
                raise NotRecoverable(f"an auxiliary block of {len(block.clauses)} clauses was not recovered")
            refused.append(block)
            continue
        recovered.append(Recovered(block, *proved))
        budget.check("recovering blocks")
    if on_structure is not None and not early and not refused:
        on_structure()
    return manager, plain, recovered, refused


def conjoined(
    manager: SddManager, parts: Iterable[SddNode], clauses: Iterable[Clause], budget_s: float | None
) -> SddNode:
    """The conjunction of SDDs and clauses over the manager's variables, the smallest first."""
    budget = _Budget(manager, budget_s)
    result = manager.true()
    for part in sorted(parts, key=lambda node: node.size()):
        result = result & part
        budget.check("conjoining the blocks' projections")
    for clause in sorted(clauses, key=lambda c: min(abs(lit) for lit in c)):
        disjunction = manager.false()
        for lit in clause:
            disjunction = disjunction | (manager.literal(abs(lit)) if lit > 0 else ~manager.literal(abs(lit)))
        result = result & disjunction
        budget.check("conjoining the clauses over task variables")
    return result


def count_by_recovery(
    cnf: CNF, time_limit_s: float | None = None, on_structure: Callable[[], None] | None = None
) -> int:
    """:func:`counted_by_recovery` on a thread with a deep stack: the SDD library recurses along the vtree,
    and on exactly-100 of 200 that overflows the main thread's 8 MiB."""
    outcome: list[BaseException | int] = []

    def work() -> None:
        try:
            outcome.append(counted_by_recovery(cnf, time_limit_s, on_structure))
        except BaseException as error:  # noqa: BLE001 - raised again on the calling thread
            outcome.append(error)

    previous = threading.stack_size(DEEP_STACK_BYTES)
    try:
        thread = threading.Thread(target=work, name="structure-recovery")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def counted_by_recovery(
    cnf: CNF, time_limit_s: float | None = None, on_structure: Callable[[], None] | None = None
) -> int:
    """The number of models of ``cnf`` projected on its task variables (exact), through its recovered blocks.

    Every auxiliary block must be recovered (:func:`recover_blocks`). When each is an at-most-one or
    exactly-one, the formula without auxiliaries goes to the one-hot dynamic programme (a Sudoku whose
    cells' at-most-one is a ladder); else, or when that outgrows its budget, the conjunction of the
    projections and the other clauses is counted in one SDD (exactly-k of 200 stated twice).
    Blocks over the same visible variables are read together first: a binary at-most-one makes a block per
    bit, each a cut and only their conjunction the at-most-one (an all-different of 10 as bitwise at-most-ones:
    18 s of SDD conjunction, where the one-hot programme takes 0.2 s).
    ``on_structure`` is called as :func:`recover_blocks` says (a racer that will answer)."""
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    if any(len(clause) == 0 for clause in cnf.clauses):
        return 0
    manager, plain, recovered, _ = recover_blocks(cnf, time_limit_s, True, on_structure)
    recovered = _read_together(recovered, manager)
    rewritten = [r.clauses_without_auxiliaries() for r in recovered]
    if all(clauses is not None for clauses in rewritten):
        flat = CNF(cnf.num_task_vars, tuple(plain) + tuple(c for clauses in rewritten if clauses for c in clauses))
        try:
            return count_one_hot(flat, left())
        except StateBudgetExceeded:
            pass
    whole = conjoined(manager, (r.sdd for r in recovered), plain, left())
    return global_model_count(whole, cnf.num_task_vars)


def _read_together(recovered: list[Recovered], manager: SddManager) -> list[Recovered]:
    """The recovered blocks, those over the same visible variables (none of them a count alone) replaced by
    one block, their conjunction, where that is a count of the variables."""
    over: dict[tuple[int, ...], list[Recovered]] = defaultdict(list)
    for r in recovered:
        over[r.block.visible].append(r)
    kept: list[Recovered] = []
    for visible, parts in over.items():
        if len(parts) > 1 and all(r.count is None for r in parts) and len(visible) <= MAX_SYMMETRIC_VARS:
            together = manager.true()
            for r in parts:
                together = together & r.sdd
            count = _count_of_variables(together, visible, manager)
            if count is not None:
                together.ref()
                clauses = tuple(c for r in parts for c in r.block.clauses)
                kept.append(Recovered(Block(clauses, visible), together, count))
                continue
        kept.extend(parts)
    return kept
