"""A block of adders read as a weighted sum of its task literals, and the totals its comparator allows.

A pseudo-Boolean constraint encoded with adders (PySAT's ``adder``, after Eén and Sörensson) is a network of
full adders (``a + b + c = s + 2c'``) and half adders (``a + b = s + 2c``) over the bits of the weights, then a
comparator on the output bits. Evaluated as a circuit it needs each sum bit as a function of every item (past
two million SDD nodes at 60 items) and it has no cardinality structure, so it is read by the adder identity:

1. *Gates, proved row by row.* An auxiliary ``o`` is defined over inputs ``I`` (two or three variables) when
   the clauses within ``I ∪ {o}`` that mention ``o`` allow exactly one value of it on each row of ``I``.
   Definitions over the same inputs make a gate when some polarity of its literals meets the identity on
   every row; a sum or a carry may be absent (an encoder leaves out the bits its comparator never reads).
2. *Weights, from the identity.* Gates are taken in an order where each reads task literals or outputs of
   gates already taken, each output read once and as the literal it was made as. All the inputs of a gate
   have one weight ``2**level``, its sum that weight, its carry twice it. Then the weighted sum of the task
   literals the gates read, ``T``, equals the weighted sum of the outputs no gate reads; when those have
   distinct levels, each is a binary digit of ``T``.
3. *The rest reads only T.* Every other clause mentions such digits, task variables (kept beside ``T`` in the
   state, as ``y``), auxiliaries no gate defines (left free), or the variables of one gate through a function
   of its unread outputs (a comparator's "no carry out of the top bit"). Whether the block has a model with an
   assignment of its task variables then depends on the assignment's state ``(T, y)`` alone, so one SAT call
   on one assignment per reachable state decides it.

The projection is "the state is allowed", built as an SDD layer by layer in the manager's variable order.
Nothing is taken from the clauses' shape: each gate is a truth table checked row by row, and a block where a
step fails is not read (None), for the other readings to try.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pysat.solvers import Solver
from pysdd.sdd import SddManager, SddNode

from autonesy.tools.cnf import Clause

MAX_STATES = 100_000  # reachable (T, y) states in a layer of the dynamic programme; past it, not read
MAX_DIRECT = 10  # task variables the comparator reads directly (y), kept in the state beside T
MAX_ITEMS_BESIDE = 3  # task variables a gate's clauses may read besides its own, every value tried
MAX_HIGH_DIGITS = 16  # digits from the first level two share up (and items beside them), every assignment tried
MAX_OCCURRENCES = 64  # clauses an adder's output is in, at most (a dozen or two: its definition, its readers')
MAX_INPUT_SETS = 16  # sets of inputs an auxiliary is tried as a function of
MAX_SHARING_INPUTS = 4  # definitions over the same inputs paired into gates (an adder has two: sum and carry)

State = tuple[int, int]  # (T so far, the bits of y so far)
Digit = tuple[int, int]  # an output no gate reads: (gate, 0 for its sum or 1 for its carry)
Table = tuple[tuple[Digit | int, ...], dict[tuple[int, ...], bool]]  # a function of digits (and task variables)


@dataclass(frozen=True)
class _Definition:
    """``output`` as a function of ``inputs`` (variables): its value on row r, where input i is bit i of r."""

    output: int
    inputs: tuple[int, ...]
    table: tuple[bool, ...]
    clauses: tuple[Clause, ...]


@dataclass(frozen=True)
class _Gate:
    """Literals meeting ``Σ inputs = sum + 2·carry`` on every row; an absent output (None) is implied by it."""

    inputs: tuple[int, ...]
    sum: int | None
    carry: int | None
    definitions: tuple[_Definition, ...]

    def outputs(self) -> list[tuple[int | None, int]]:
        """Each output literal (None when absent) and its level above the inputs' (0 for the sum, 1 for the carry)."""
        return [(self.sum, 0), (self.carry, 1)]

    def values(self, row: int) -> tuple[dict[int, bool], list[int]]:
        """On a row of the inputs' variables: every variable's value, and each output's value as a number
        (the sum's, then the carry's, absent ones implied by the identity)."""
        value = {abs(lit): bool(row >> i & 1) for i, lit in enumerate(self.inputs)}
        for definition in self.definitions:
            value[definition.output] = definition.table[row]
        total = sum(value[abs(lit)] == (lit > 0) for lit in self.inputs)
        s = None if self.sum is None else int(value[abs(self.sum)] == (self.sum > 0))
        c = None if self.carry is None else int(value[abs(self.carry)] == (self.carry > 0))
        if s is None:
            s = total - 2 * (c or 0)
        if c is None:
            c = (total - s) // 2
        return value, [s, c]


def _satisfied(clause: Clause, value: dict[int, bool]) -> bool:
    return any(value[abs(lit)] == (lit > 0) for lit in clause)


def _definition(output: int, inputs: tuple[int, ...], clauses: list[Clause]) -> list[_Definition]:
    """``output`` as a function of ``inputs`` by ``clauses`` (those within them that mention it and an
    input); when they forbid a row, also by each set of them less one clause (a comparator's clause over a
    gate's variables, such as "not both this item and the top carry", left to be read with the rest)."""
    found = _function(output, inputs, clauses)
    if found is not None:
        return [found]
    return [
        found
        for left_out in range(len(clauses))
        if (found := _function(output, inputs, clauses[:left_out] + clauses[left_out + 1 :])) is not None
    ]


def _function(output: int, inputs: tuple[int, ...], clauses: Sequence[Clause]) -> _Definition | None:
    table = []
    for row in range(1 << len(inputs)):
        value = {var: bool(row >> i & 1) for i, var in enumerate(inputs)}
        allowed = [o for o in (False, True) if all(_satisfied(c, {**value, output: o}) for c in clauses)]
        if len(allowed) != 1:
            return None
        table.append(allowed[0])
    return _Definition(output, inputs, tuple(table), tuple(clauses))


def _definitions(clauses: Sequence[Clause], n: int) -> dict[tuple[int, ...], list[_Definition]]:
    """Every auxiliary's definitions over two or three inputs, grouped by their inputs; none unless some
    parity is written out (2**k clauses over the same k + 1 variables, k = 2 or 3: an adder's sum bit), which
    spares the blocks of other encodings the search (a totalizer of 60 items: 2.5 s)."""
    small = [(clause, frozenset(abs(lit) for lit in clause)) for clause in clauses if len(clause) <= 4]
    over = Counter(variables for _, variables in small if len(variables) in (3, 4))
    if not any(count >= 1 << (len(variables) - 1) for variables, count in over.items()):
        return {}
    occurs: dict[int, list[tuple[Clause, frozenset[int]]]] = defaultdict(list)
    for clause, variables in small:
        for var in variables:
            if var > n:
                occurs[var].append((clause, variables))
    grouped: dict[tuple[int, ...], list[_Definition]] = defaultdict(list)
    for output, occurring in occurs.items():
        if len(occurring) > MAX_OCCURRENCES:
            continue  # no adder's output is in so many clauses
        others = [variables - {output} for _, variables in occurring]
        candidates = {inputs for inputs in others if len(inputs) in (2, 3)}
        pairs = {inputs for inputs in others if len(inputs) == 2}  # a majority's three pairs make its inputs
        candidates |= {a | b for a, b in itertools.combinations(pairs, 2) if len(a | b) == 3 and a ^ b in pairs}
        for inputs in sorted(candidates, key=sorted)[:MAX_INPUT_SETS]:
            scope = inputs | {output}
            within = [clause for clause, variables in occurring if len(variables) > 1 and variables <= scope]
            grouped[tuple(sorted(inputs))] += _definition(output, tuple(sorted(inputs)), within)
    return grouped


def _polarities(s: _Definition | None, c: _Definition | None) -> list[_Gate]:
    """The gates the definitions (over the same inputs) make, one per polarity of their literals that meets
    the identity on every row: outputs as made first (an "at least" is an "at most" over negated items, its
    adders' outputs positive), then fewest negated inputs."""
    definitions = tuple(d for d in (s, c) if d is not None)
    inputs = definitions[0].inputs
    gates = []
    for flips in sorted(itertools.product((False, True), repeat=len(inputs)), key=sum):
        for s_flip, c_flip in itertools.product((False, True) if s else (False,), (False, True) if c else (False,)):
            ok = True
            for row in range(1 << len(inputs)):
                total = sum((row >> i & 1) ^ flip for i, flip in enumerate(flips))
                sv = None if s is None else s.table[row] ^ s_flip
                cv = None if c is None else c.table[row] ^ c_flip
                if sv is not None and cv is not None:
                    ok = total == sv + 2 * cv
                elif sv is not None:
                    ok = total - sv in (0, 2)  # the carry left out is (total - sum) / 2
                else:
                    ok = total - 2 * (cv or 0) in (0, 1)  # the sum left out is total - 2 carry
                if not ok:
                    break
            if ok:
                gates.append(
                    _Gate(
                        tuple(-var if flip else var for var, flip in zip(inputs, flips)),
                        None if s is None else (-s.output if s_flip else s.output),
                        None if c is None else (-c.output if c_flip else c.output),
                        definitions,
                    )
                )
    return sorted(
        gates,
        key=lambda g: (sum(lit is not None and lit < 0 for lit in (g.sum, g.carry)), sum(lit < 0 for lit in g.inputs)),
    )


def _candidate_gates(clauses: Sequence[Clause], n: int) -> list[list[_Gate]]:
    """Each candidate gate's polarities, full adders first. An auxiliary may be the output of several (the
    four variables of a parity each read as a function of the other three); the network takes the first
    whose inputs are ready, and a reading backwards waits on its own output."""
    grouped = {inputs: found[:MAX_SHARING_INPUTS] for inputs, found in _definitions(clauses, n).items()}
    full = [
        _polarities(s, c)
        for definitions in grouped.values()
        for s, c in itertools.permutations(definitions, 2)
        if s.output != c.output  # one auxiliary may have two definitions (a clause left out or not)
    ]
    carries = [_polarities(None, d) for definitions in grouped.values() for d in definitions]
    sums = [_polarities(d, None) for definitions in grouped.values() for d in definitions]
    return [gates for gates in full + carries + sums if gates]


class _Levels:
    """Each taken gate's level relative to its component's first gate (union-find with offsets)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.shift: dict[int, int] = {}  # level(gate) - level(parent)

    def find(self, gate: int) -> tuple[int, int]:
        """The component's root and the gate's level relative to it."""
        path = []
        while self.parent[gate] != gate:
            path.append(gate)
            gate = self.parent[gate]
        above = 0
        for node in reversed(path):
            above += self.shift[node]
            self.parent[node], self.shift[node] = gate, above
        return gate, self.shift[path[0]] if path else 0

    def place(self, gate: int, reads: Sequence[tuple[int, int]]) -> bool:
        """Add ``gate`` at level(producer) + difference for each (producer, difference) it ``reads`` (none: a
        component of its own); False, changing nothing, when those levels disagree."""
        wanted: dict[int, int] = {}  # root -> the gate's level relative to it
        for producer, difference in reads:
            root, level = self.find(producer)
            if wanted.setdefault(root, level + difference) != level + difference:
                return False
        self.parent[gate], self.shift[gate] = gate, 0
        for root, level in wanted.items():  # every component read joins the gate's
            self.parent[root], self.shift[root] = gate, -level
        return True


@dataclass
class _Network:
    """The gates taken, their levels, and who reads each output."""

    gates: list[_Gate]
    levels: list[int]
    producer: dict[int, tuple[int, int]]  # output variable -> (gate, 0 for a sum, 1 for a carry)
    reader: dict[int, int]  # output variable -> the gate reading it

    def digits(self) -> dict[Digit, int]:
        """The outputs no gate reads, (gate, 0 for its sum or 1 for its carry) -> level."""
        unread = {}
        for index, gate in enumerate(self.gates):
            for position, (lit, up) in enumerate(gate.outputs()):
                if lit is None or abs(lit) not in self.reader:
                    unread[index, position] = self.levels[index] + up
        return unread


def _network(candidates: list[list[_Gate]], n: int) -> _Network | None:
    """The gates taken in an order where each reads task literals or unread outputs of gates taken, as made,
    with consistent levels; None unless they form one network. The first ready candidate is taken, so a
    gate without a carry (a parity read as a sum: an encoder folds a sum bit it fixes into one) only when
    no other is ready: it may be a parity over a carry made later."""
    waiting: dict[int, list[int]] = defaultdict(list)  # auxiliary -> candidates reading it
    missing = []
    for index, gates in enumerate(candidates):
        read = {abs(lit) for lit in gates[0].inputs if abs(lit) > n}
        missing.append(len(read))
        for var in read:
            waiting[var].append(index)
    ready = [index for index, count in enumerate(missing) if count == 0]  # a heap: candidates come full first
    network = _Network([], [], {}, {})
    levels = _Levels()
    while ready:
        index = heapq.heappop(ready)
        gate = next((g for g in candidates[index] if _reads_as_made(g, network, n)), None)
        if gate is None or any(lit is not None and abs(lit) in network.producer for lit, _ in gate.outputs()):
            continue  # an output is made once
        number = len(network.gates)
        if not levels.place(number, [network.producer[abs(lit)] for lit in gate.inputs if abs(lit) > n]):
            continue  # a gate reads a sum at its producer's level, a carry one above
        network.gates.append(gate)
        for lit in gate.inputs:
            if abs(lit) > n:
                network.reader[abs(lit)] = number
        for position, (output, _) in enumerate(gate.outputs()):
            if output is None:
                continue
            network.producer[abs(output)] = (number, position)
            for waiter in waiting.get(abs(output), ()):
                missing[waiter] -= 1
                if missing[waiter] == 0:
                    heapq.heappush(ready, waiter)
    if not network.gates or len({levels.find(g)[0] for g in range(len(network.gates))}) != 1:
        return None
    relative = [levels.find(g)[1] for g in range(len(network.gates))]
    network.levels = [level - min(relative) for level in relative]
    return network


def _reads_as_made(gate: _Gate, network: _Network, n: int) -> bool:
    """Whether each auxiliary the gate reads is an output not yet read, as the literal it was made as."""
    for lit in gate.inputs:
        if abs(lit) <= n:
            continue
        if abs(lit) in network.reader:
            return False
        made, position = network.producer[abs(lit)]
        if network.gates[made].outputs()[position][0] != lit:
            return False
    return True


@dataclass(frozen=True)
class AdderReading:
    """``clauses`` (a block and clauses beside it) whose satisfiability depends on the task variables only
    through ``(T, y)``: ``T`` adds, for each variable, ``weights[var][value]``; ``direct`` lists the variables
    ``y`` read outside the network."""

    weights: dict[int, tuple[int, int]]
    direct: tuple[int, ...]
    clauses: tuple[Clause, ...]

    def step(self, state: State, var: int, value: bool) -> State:
        total, bits = state
        if var in self.direct:
            bits |= value << self.direct.index(var)
        return total + self.weights.get(var, (0, 0))[value], bits


def _rest_reads_only_t(
    rest: Sequence[Clause], beside: Sequence[Clause], network: _Network, digits: dict[Digit, int], n: int
) -> tuple[tuple[int, ...], list[Clause]] | None:
    """The task variables the clauses outside the gates read (``y``), and the clauses ``beside`` the block
    read with it; None unless those clauses read the network only through ``T``.

    A clause over one gate's variables is read with the others over that gate, as one function of one of its
    digits; clauses ``beside`` (over task variables alone) join a gate's when its inputs hold them (a
    comparator's "no carry" over two items, which leaves the block for the clauses over task variables).

    ``T`` is the sum of the digits, each times ``2**level``. Below the first level two digits share, each
    digit is a bit of ``T``; from there up they make ``H = T // 2**that level``. What the clauses say of
    those high digits (read alone, not beside anything else) is checked to be a function of ``H`` on every
    assignment of them: a comparator's "no carry out of the top bit" and "at most one of these" are."""
    crowded = [level for level in set(digits.values()) if list(digits.values()).count(level) > 1]
    floor = min(crowded, default=max(digits.values(), default=0) + 1)
    high = {digit for digit, level in digits.items() if level >= floor}
    direct: set[int] = set()
    on_high: list[Table] = []  # what the clauses say of high digits
    by_gate: dict[int, list[Clause]] = defaultdict(list)  # clauses over one gate's variables alone

    def reads_t(function: Table, others: bool) -> bool:
        if set(function[0]) & high:
            if others:
                return False
            on_high.append(function)
        return True

    for clause in rest:
        read = [lit for lit in clause if abs(lit) in network.reader]  # literals over outputs some gate reads
        owner = next((g for g in _gates_of(read, network) if _within(clause, g, network, n)), None)
        if owner is not None:
            by_gate[owner].append(clause)  # a gate's clauses are read together ("no carry": three clauses)
            direct.update(abs(lit) for lit in clause if abs(lit) <= n)
            continue
        made = [lit for lit in clause if abs(lit) in network.producer and abs(lit) not in network.reader]
        direct.update(abs(lit) for lit in clause if abs(lit) <= n)
        if {network.producer[abs(lit)] for lit in made} & high:
            if any(abs(lit) > n for lit in clause if lit not in made):
                return None  # high digits read beside an auxiliary
            on_high.append(_clause_on_digits(clause, network, n))
            continue
        if read:
            found = next(
                (
                    f
                    for g in _gates_of(read, network)
                    if (f := _digit_function([tuple(read)], g, network, digits, n)) is not None
                ),
                None,
            )
            if found is None or not reads_t(found, True):
                return None
    readers: dict[int, list[int]] = defaultdict(list)  # task variable -> gates with clauses that read it
    for owner in by_gate:
        for lit in network.gates[owner].inputs:
            readers[abs(lit)].append(owner)
    attached = []
    for clause in beside:
        owner = (
            next((g for g in readers.get(abs(clause[0]), ()) if _within(clause, g, network)), None) if clause else None
        )
        if owner is not None:
            by_gate[owner].append(clause)
            attached.append(clause)
    for owner, clauses in by_gate.items():
        found = _digit_function(clauses, owner, network, digits, n)
        if found is None or not reads_t(found, False):
            return None
    if not _function_of_high_sum(on_high, {digit: digits[digit] - floor for digit in high}):
        return None
    return tuple(sorted(direct)), attached


def _clause_on_digits(clause: Clause, network: _Network, n: int) -> Table:
    """A clause over made digits and task variables as a table over them."""
    reads: dict[Digit | int, list[bool]] = defaultdict(list)  # digit or task variable -> true at 1 for each literal
    for lit in clause:
        if abs(lit) <= n:
            reads[abs(lit)].append(lit > 0)
            continue
        digit = network.producer[abs(lit)]
        reads[digit].append(lit == network.gates[digit[0]].outputs()[digit[1]][0])
    order = tuple(reads)
    return order, {
        values: any(value == (1 if when else 0) for digit, value in zip(order, values) for when in reads[digit])
        for values in itertools.product((0, 1), repeat=len(order))
    }


def _function_of_high_sum(on_high: Sequence[Table], levels: dict[Digit, int]) -> bool:
    """Whether the conjunction of ``on_high`` is the same on every two assignments of the high digits with the
    same ``H = Σ digit · 2**level`` and the same values of what else the tables read (items, which the state
    holds, and lower digits, bits of ``T``)."""
    if not on_high:
        return True
    order = sorted(levels)
    others = sorted({var for variables, _ in on_high for var in variables if var not in levels}, key=repr)
    if len(order) + len(others) > MAX_HIGH_DIGITS:
        return False
    seen: dict[tuple[int, ...], bool] = {}
    for values in itertools.product((0, 1), repeat=len(order) + len(others)):
        value: dict[Digit | int, int] = dict(zip([*order, *others], values))
        truth = all(table[tuple(value[var] for var in variables)] for variables, table in on_high)
        key = (sum(value[d] << levels[d] for d in order), *values[len(order) :])
        if seen.setdefault(key, truth) != truth:
            return False
    return True


def _gates_of(literals: Sequence[int], network: _Network) -> list[int]:
    """The gates reading the literals' variables, then those making them: a clause over a gate's inputs
    (its "no carry") is read with that gate."""
    readers = [network.reader[abs(lit)] for lit in literals]
    makers = [network.producer[abs(lit)][0] for lit in literals]
    return list(dict.fromkeys(readers + makers))


def _within(literals: Sequence[int], index: int, network: _Network, n: int = 0) -> bool:
    """Whether the literals' variables are gate ``index``'s (its inputs and outputs), or task variables (of
    at most ``n``) beside them."""
    gate = network.gates[index]
    inside = {abs(lit) for lit in gate.inputs} | {d.output for d in gate.definitions}
    return all(abs(lit) in inside or abs(lit) <= n for lit in literals)


def _digit_function(
    clauses: Sequence[Clause], index: int, network: _Network, digits: dict[Digit, int], n: int
) -> Table | None:
    """The conjunction of ``clauses`` over gate ``index``'s rows (and every value of up to
    ``MAX_ITEMS_BESIDE`` task variables they read besides: an encoder folds a sum bit it fixes into a
    parity with the next item) as a table over the one digit of the gate it depends on and those task
    variables; None when it is no such function."""
    gate = network.gates[index]
    inside = {abs(lit) for lit in gate.inputs} | {d.output for d in gate.definitions}
    beside = sorted({abs(lit) for clause in clauses for lit in clause} - inside)
    if any(var > n for var in beside) or len(beside) > MAX_ITEMS_BESIDE:
        return None
    own = [position for position in (0, 1) if (index, position) in digits]
    table: dict[tuple[int, ...], bool] = {}
    for row in range(1 << len(gate.inputs)):
        value, outputs = gate.values(row)
        for bits in itertools.product((0, 1), repeat=len(beside)):
            value.update(zip(beside, map(bool, bits)))
            truth = all(_satisfied(clause, value) for clause in clauses)
            if table.setdefault((*(outputs[p] for p in own), *bits), truth) != truth:
                return None
    depends = [
        i
        for i in range(len(own))
        if any(table.get(key[:i] + (1 - key[i],) + key[i + 1 :], truth) != truth for key, truth in table.items())
    ]
    if len(depends) > 1:
        return None
    kept = depends + list(range(len(own), len(own) + len(beside)))
    projected: dict[tuple[int, ...], bool] = {}
    for key, truth in table.items():
        if projected.setdefault(tuple(key[i] for i in kept), truth) != truth:
            return None
    return (*((index, own[i]) for i in depends), *beside), projected


def read_adders(clauses: Sequence[Clause], n: int, beside: Sequence[Clause] = ()) -> AdderReading | None:
    """The block's ``clauses``, with some of the clauses ``beside`` it (over task variables alone), as a
    function of its state ``(T, y)`` (module docstring); None when it is not read so."""
    network = _network(_candidate_gates(clauses, n), n)
    if network is None:
        return None
    digits = network.digits()
    in_gates = {clause for gate in network.gates for d in gate.definitions for clause in d.clauses}
    rest = _rest_reads_only_t([c for c in clauses if c not in in_gates], beside, network, digits, n)
    if rest is None or len(rest[0]) > MAX_DIRECT:
        return None
    weights: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for gate, level in zip(network.gates, network.levels):
        for lit in gate.inputs:
            if abs(lit) <= n:
                weights[abs(lit)][lit > 0] += 1 << level
    return AdderReading({var: (w[0], w[1]) for var, w in weights.items()}, rest[0], (*clauses, *rest[1]))


def allowed_projection(
    reading: AdderReading,
    visible: Sequence[int],
    manager: SddManager,
    order: Sequence[int],
    check: Callable[[str], None],
) -> SddNode | None:
    """The projection of the reading's clauses on ``visible`` (their task variables) as an SDD (referenced): the states reached along ``order`` (the
    manager's variables from the top), one SAT call per final state on an assignment reaching it, then a node
    per state, bottom up. None past ``MAX_STATES`` states in a layer."""
    shown = set(visible)
    sequence = [var for var in order if var in shown]
    layers: list[dict[State, tuple[State, bool] | None]] = [{(0, 0): None}]
    for var in sequence:
        following: dict[State, tuple[State, bool] | None] = {}
        for state in layers[-1]:
            for value in (False, True):
                following.setdefault(reading.step(state, var, value), (state, value))
        if len(following) > MAX_STATES:
            return None
        layers.append(following)
        check("listing an adder network's totals")
    allowed: dict[State, SddNode] = {}
    with Solver(name="cadical195", bootstrap_with=[list(clause) for clause in reading.clauses]) as solver:
        for final in layers[-1]:
            assumptions, state = [], final
            for depth in range(len(sequence), 0, -1):
                state, value = layers[depth][state] or ((0, 0), False)  # only the first layer holds None
                assumptions.append(sequence[depth - 1] if value else -sequence[depth - 1])
            allowed[final] = manager.true() if solver.solve(assumptions=assumptions) else manager.false()
            check("deciding an adder network's totals")
    below = allowed
    for depth in range(len(sequence) - 1, -1, -1):
        x = manager.literal(sequence[depth])
        above = {}
        for state in layers[depth]:
            high, low = (
                below[reading.step(state, sequence[depth], True)],
                below[reading.step(state, sequence[depth], False)],
            )
            above[state] = (x & high) | (~x & low)
        below = above
        check("building an adder network's projection")
    root = below[0, 0]
    root.ref()
    return root
