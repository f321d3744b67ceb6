"""Exact projected model count over classes of interchangeable blocks, one declared count at a time.

A roster is counted this way: 20 people, each with a few flights' Booleans tied by their own clauses
(two flights off after one worked), and per flight a declared literal count across the people ("4
crew, at least one French speaker"). No route that reads the clauses can hold that: a counter per flight
crosses every person, the people's clauses cross every flight. Here the clauses not in a declared
counter (:mod:`autonesy.tools.literal_count`) split into *blocks* (their connected components: a person),
each small enough to list its models projected on its task variables and counted literals. Blocks whose
variables, in a canonical order, have the same models and are counted alike (the same counts, as often
and with the same signs) form a *class*: permuting them is a symmetry of the formula, so the count
only needs how many of a class's blocks are in each state, never which (lifted counting).

The counts are visited in order of their lowest variable; a variable is revealed at the first count
that lists it, a count checked at the count whose visit revealed its last variable. A block's state is
what it can still do (its models' unrevealed parts, given what it revealed) and the revealed values a
later check needs; a class's state is how many of its blocks are in each. Revealing the next count's
variables sends ``n`` blocks of a state into its options (``n!/∏ a_i!`` ways to choose which go where),
one class after another with the checked counts' partial sums (capped where only "at least" matters)
carried between them (classes smallest first: DCP-Bench's crew, 2.07e20 schedules, in about 6 s of CPU).
Before that, a guarded count's guards (the one-hot literals of an integer equal to the count) are
eliminated exactly when they are auxiliaries constrained only among themselves, and a count over
auxiliaries that the rest of the formula implies is dropped (a SAT check per value it forbids): "at
least one person works" beside "4 crew on flight 1".

    >>> from autonesy.tools.cnf import CNF
    >>> from autonesy.tools.literal_count import LiteralCount, with_literal_counts
    >>> people = CNF(4, ((-1, -3), (-2, -4)))  # person i works flight 1 (var i) or 2 (var i + 2), not both
    >>> flights = [LiteralCount((1, 2), (1,)), LiteralCount((3, 4), (1,))]  # one crew per flight
    >>> count_by_lifting(with_literal_counts(people, flights))
    2
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pysat.solvers import Solver

from autonesy.tools.cnf import CNF, Clause
from autonesy.tools.errors import AutonesyError
from autonesy.tools.literal_count import LiteralCount, recognised
from autonesy.tools.onehot_count import StateBudgetExceeded

MAX_BLOCK_VARS = 24  # a block's task variables and counted literals, whose models are listed
MAX_BLOCK_MODELS = 20_000
MAX_STATES = 1_000_000  # states of one step (classes' histograms and the checked counts' partial sums)
MAX_FORBIDDEN_VALUES = 64  # a count over auxiliaries forbidding more values is not checked for being implied
MAX_IMPLIED_CHECKS = 16  # counts over auxiliaries checked so (each check encodes all the other counts)
IMPLIED_CONFLICTS = 20_000  # the SAT check's budget (one call: "the count takes a forbidden value")
MAX_MODELS = 200_000  # models listed over all blocks
_BITS = 24  # a state is one integer: a field this wide per class (its histogram's number) and the partial sums'
_FIELD = (1 << _BITS) - 1


class NotLiftable(AutonesyError, RuntimeError):
    """The formula has no declared counts, or its blocks are too large or not counted by task variables."""


def count_by_lifting(cnf: CNF, time_limit_s: float | None = None, max_states: int = MAX_STATES) -> int:
    """The number of models of ``cnf`` projected on its task variables (exact).

    Raises :class:`NotLiftable` when the formula lacks the structure, :class:`StateBudgetExceeded` past
    ``max_states`` states in one step or ``time_limit_s``."""
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    found = recognised(cnf)
    if not found:
        raise NotLiftable("no declared literal counts")
    in_counters = frozenset().union(*(own for _, own in found))
    ordinary: list[Clause] = []
    for clause in cnf.clauses:
        literals = tuple(sorted(set(clause)))
        if not literals:
            return 0
        if literals in in_counters or any(-lit in literals for lit in literals):
            continue
        ordinary.append(literals)
    widest = max((sum(v <= cnf.num_task_vars for v in variables) for variables, _ in _blocks(ordinary, ())), default=0)
    if widest > MAX_BLOCK_VARS:  # known before the SAT checks below
        raise NotLiftable(f"a block has {widest} task variables, more than {MAX_BLOCK_VARS}")
    counts, ordinary = _guards_eliminated([count for count, _ in found], ordinary, cnf.num_task_vars)
    counts = _implied_dropped(counts, ordinary, cnf)
    if not counts:
        raise NotLiftable("every declared count is implied by the clauses")
    return _Lifted(cnf, counts, ordinary, deadline, max_states).count()


def _guards_eliminated(
    counts: list[LiteralCount], ordinary: list[Clause], num_task_vars: int
) -> tuple[list[LiteralCount], list[Clause]]:
    """Each guarded count with its guards' auxiliaries (in no other count, their clauses over them alone)
    existentially eliminated: the count may take a value when some assignment of them satisfies their
    clauses and every true guard allows it."""
    counted: dict[int, int] = defaultdict(int)
    for count in counts:
        for var in {abs(lit) for lit in count.literals} | {abs(g) for g, _ in count.guards}:
            counted[var] += 1
    touching: dict[int, list[int]] = defaultdict(list)  # a variable -> the ordinary clauses (indices) on it
    for index, clause in enumerate(ordinary):
        for lit in clause:
            touching[abs(lit)].append(index)
    out, eliminated = [], set()
    for count in counts:
        if not count.guards:
            out.append(count)
            continue
        guard_vars = {abs(g) for g, _ in count.guards}
        if any(var <= num_task_vars or counted[var] > 1 for var in guard_vars) or guard_vars & {
            abs(lit) for lit in count.literals
        }:
            raise NotLiftable("a guard is a task variable or is counted too")
        theirs = sorted({index for var in guard_vars for index in touching[var]})
        if any(abs(lit) not in guard_vars for index in theirs for lit in ordinary[index]):
            raise NotLiftable("a guard's clauses reach other variables")
        values = range(count.modulus) if count.modulus is not None else range(len(count.literals) + 1)
        allowed = []
        with Solver(name="g4", bootstrap_with=[ordinary[index] for index in theirs]) as solver:
            for value in (v for v in values if v in count.allowed):
                refused = [-g for g, guarded in count.guards if value not in guarded]  # a true guard refusing it
                if solver.solve(assumptions=refused):
                    allowed.append(value)
        out.append(LiteralCount(count.literals, tuple(allowed), count.modulus))
        eliminated.update(theirs)
    return out, [clause for index, clause in enumerate(ordinary) if index not in eliminated]


def _implied_dropped(counts: list[LiteralCount], ordinary: list[Clause], cnf: CNF) -> list[LiteralCount]:
    """The counts without those over an auxiliary that the rest implies: for every value one forbids,
    the ordinary clauses, the other counts and "the count takes that value" are unsatisfiable."""
    kept = list(counts)
    over_auxiliaries = [c for c in counts if any(abs(lit) > cnf.num_task_vars for lit in c.literals)]
    for count in over_auxiliaries[:MAX_IMPLIED_CHECKS]:
        values = range(count.modulus) if count.modulus is not None else range(len(count.literals) + 1)
        forbidden = tuple(v for v in values if v not in count.allowed)
        others = [c for c in kept if c is not count]
        if not forbidden:
            kept = others
            continue
        if len(forbidden) > MAX_FORBIDDEN_VALUES:
            continue
        clauses, top = list(ordinary), cnf.num_vars
        for other in [*others, LiteralCount(count.literals, forbidden, count.modulus)]:
            encoded, top = other.clauses(top + 1)
            clauses.extend(encoded)
        with Solver(name="g4", bootstrap_with=clauses) as solver:
            solver.conf_budget(IMPLIED_CONFLICTS)
            if solver.solve_limited() is False:
                kept = others
    return kept


@dataclass(frozen=True)
class _Check:
    """A count checked at a step: its range, and per class listing some of its literals, those as (bit, when true,
    when false)."""

    allowed: frozenset[int]
    modulus: int | None
    low: int  # a total's smallest allowed value; every total from ``cap`` on is allowed (and one state)
    high: int
    cap: int | None
    terms: dict[int, list[tuple[int, int, int]]]


class _Lifted:
    """The blocks, their classes and the steps; :meth:`count` runs the dynamic programme."""

    def __init__(
        self, cnf: CNF, counts: list[LiteralCount], ordinary: list[Clause], deadline: float | None, max_states: int
    ):
        self.deadline, self.max_states = deadline, max_states
        counts = sorted(counts, key=lambda c: min(abs(lit) for lit in c.literals) if c.literals else 0)
        self.counts = counts
        counted_vars = {abs(lit) for count in counts for lit in count.literals}
        blocks = _blocks(ordinary, counted_vars)
        placed = {var for variables, _ in blocks for var in variables}
        self.free_task_vars = sum(1 for var in cnf.task_vars if var not in placed)
        self.reveal: dict[int, int] = {}
        for step, count in enumerate(counts):
            for lit in count.literals:
                self.reveal.setdefault(abs(lit), step)
        times: dict[int, dict[int, list[int]]] = defaultdict(dict)  # var -> count index -> [positive, negative]
        for index, count in enumerate(counts):
            for lit in count.literals:
                times[abs(lit)].setdefault(index, [0, 0])[lit < 0] += 1
        signature = {var: tuple((index, p, n) for index, (p, n) in sorted(seen.items())) for var, seen in times.items()}
        self.unsatisfiable = False
        classes: dict[tuple, int] = defaultdict(int)
        listed = 0
        for variables, clauses in blocks:
            relevant = sorted(
                (v for v in variables if v <= cnf.num_task_vars or v in counted_vars),
                key=lambda v: (self.reveal.get(v, len(counts)), signature.get(v, ()), v),
            )
            models = _projected_models(clauses, relevant, cnf.num_task_vars)
            listed += len(models)
            if listed > MAX_MODELS:
                raise NotLiftable(f"the blocks have more than {MAX_MODELS} models together")
            if not models:
                self.unsatisfiable = True
                return
            if not relevant:
                continue  # only auxiliaries, satisfiable: no bearing on the count
            key = (tuple((signature.get(v, ()), v <= cnf.num_task_vars) for v in relevant), frozenset(models))
            classes[key] += 1
        self.classes = sorted(classes.items(), key=lambda kc: kc[1])  # smallest first: fewer states between

    def count(self) -> int:
        if self.unsatisfiable:
            return 0
        steps = len(self.counts)
        checked_at = [
            max(self.reveal[abs(lit)] for lit in count.literals) if count.literals else 0 for count in self.counts
        ]
        checked_by: dict[int, list[int]] = defaultdict(list)
        for index, step in enumerate(checked_at):
            checked_by[step].append(index)
        terms: list[dict[int, list[tuple[int, int, int]]]] = [defaultdict(list) for _ in self.counts]
        for c, (key, _) in enumerate(self.classes):
            for b, (sig, _) in enumerate(key[0]):
                for index, pos, neg in sig:
                    terms[index][c].append((b, pos, neg))  # per count and class that it lists
        # per class and bit (canonical variable): the step revealing it and the last step whose check reads it
        revealed = [[sig[0][0] if sig else steps for sig, _ in key[0]] for key, _ in self.classes]
        read_until = [
            [max((checked_at[i] for i, _, _ in sig), default=-1) for sig, _ in key[0]] for key, _ in self.classes
        ]
        interned: list[dict[tuple[frozenset[int], int], int]] = [{} for _ in self.classes]
        states_of: list[list[tuple[frozenset[int], int]]] = [[] for _ in self.classes]

        def local(c: int, state: tuple[frozenset[int], int]) -> int:
            table = interned[c]
            if state not in table:
                table[state] = len(states_of[c])
                states_of[c].append(state)
            return table[state]

        hist_ids: list[dict[tuple[tuple[int, int], ...], int]] = [{} for _ in self.classes]
        hists_of: list[list[tuple[tuple[int, int], ...]]] = [[] for _ in self.classes]

        def hist_id(c: int, hist: tuple[tuple[int, int], ...]) -> int:
            table = hist_ids[c]
            if hist not in table:
                if len(hists_of[c]) > _FIELD:
                    raise StateBudgetExceeded(f"lifted count: a class has more than {_FIELD} histograms")
                table[hist] = len(hists_of[c])
                hists_of[c].append(hist)
            return table[hist]

        code = 0
        for c, (key, size) in enumerate(self.classes):
            code |= hist_id(c, ((local(c, (key[1], 0)), size),)) << (_BITS * c)
        states: dict[int, int] = {code: 1}
        touched: dict[int, set[int]] = defaultdict(set)  # a step -> the classes revealing or checked at it
        for c, bits in enumerate(revealed):
            for s in bits:
                touched[s].add(c)
        for index, step in enumerate(checked_at):
            touched[step].update(terms[index])
        for step in sorted(s for s in touched if s < steps):
            checks = [self._check(index, terms[index]) for index in checked_by[step]]
            masks = {}
            for c in sorted(touched[step]):
                bits, until = revealed[c], read_until[c]
                now = sum(1 << b for b, s in enumerate(bits) if s == step)
                later = sum(1 << b for b, s in enumerate(bits) if s > step)
                keep = sum(1 << b for b, (s, u) in enumerate(zip(bits, until)) if s <= step < u)
                masks[c] = (now, later, keep)
            states = self._step(states, checks, masks, local, states_of, hist_id, hists_of)
            if not states:
                return 0
        completions: dict[tuple[int, int], int] = {}  # the unrevealed task variables' completions of a class
        total = 0
        for code, weight in states.items():
            for c in range(len(self.classes)):
                h = code >> (_BITS * c) & _FIELD
                if (c, h) not in completions:
                    completions[(c, h)] = math.prod(len(states_of[c][i][0]) ** n for i, n in hists_of[c][h])
                weight *= completions[(c, h)]
            total += weight
        return total << self.free_task_vars

    def _check(self, index: int, terms: dict[int, list[tuple[int, int, int]]]) -> _Check:
        count = self.counts[index]
        allowed = frozenset(count.allowed)
        if not allowed:
            return _Check(allowed, count.modulus, 1, 0, None, terms)
        if count.modulus is not None:
            return _Check(allowed, count.modulus, 0, count.modulus - 1, None, terms)
        top = len(count.literals)
        cap = top + 1
        while cap - 1 >= 0 and cap - 1 in allowed:
            cap -= 1
        return _Check(allowed, None, min(allowed), max(allowed), cap if cap <= top else None, terms)

    def _step(
        self,
        states: dict[int, int],
        checks: list[_Check],
        masks: dict[int, tuple[int, int, int]],
        local: Callable[[int, tuple[frozenset[int], int]], int],
        states_of: list[list[tuple[frozenset[int], int]]],
        hist_id: Callable[[int, tuple[tuple[int, int], ...]], int],
        hists_of: list[list[tuple[tuple[int, int], ...]]],
    ) -> dict[int, int]:
        """The states after revealing one step's variables, class by class, the checked counts' partial
        sums carried between classes and tested at the end. A state is one integer, a field of
        :data:`_BITS` per class holding its histogram's number, below them the partial sums' number."""
        options: dict[tuple[int, int], list[tuple[int, tuple[int, ...]]]] = {}
        spread: dict[tuple[int, int], list[tuple[tuple[int, ...], list[tuple[int, int]]]]] = {}

        def options_of(c: int, state_id: int) -> list[tuple[int, tuple[int, ...]]]:
            """A block's choices: (its next state, what it adds to each check)."""
            if (c, state_id) not in options:
                suffixes, kept = states_of[c][state_id]
                now, later, keep = masks[c]
                grouped: dict[int, set[int]] = defaultdict(set)
                for suffix in suffixes:
                    grouped[suffix & now].add(suffix & later)
                out = []
                for values, rest in sorted(grouped.items()):
                    known = kept | values
                    adds = tuple(
                        sum(pos if known >> b & 1 else neg for b, pos, neg in check.terms.get(c, ()))
                        for check in checks
                    )
                    out.append((local(c, (frozenset(rest), known & keep)), adds))
                options[(c, state_id)] = out
            return options[(c, state_id)]

        def spread_of(c: int, h: int) -> list[tuple[tuple[int, ...], list[tuple[int, int]]]]:
            """A class's histogram sent through its blocks' options: per sum they add, (the change to a
            state's number, ways)."""
            if (c, h) not in spread:
                partial: dict[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], int] = {((), (0,) * len(checks)): 1}
                for state_id, n in hists_of[c][h]:
                    choices = options_of(c, state_id)
                    following: dict[tuple[tuple[tuple[int, int], ...], tuple[int, ...]], int] = defaultdict(int)
                    for split in _compositions(n, len(choices)):
                        ways = _multinomial(n, split)
                        moved = tuple((choices[i][0], a) for i, a in enumerate(split) if a)
                        adds = tuple(sum(a * choices[i][1][k] for i, a in enumerate(split)) for k in range(len(checks)))
                        for (placed, sums), weight in partial.items():
                            following[(placed + moved, tuple(x + y for x, y in zip(sums, adds)))] += weight * ways
                    partial = following
                by_adds: dict[tuple[int, ...], list[tuple[int, int]]] = defaultdict(list)
                for (placed, sums), weight in partial.items():
                    counted: dict[int, int] = defaultdict(int)
                    for state_id, n in placed:
                        counted[state_id] += n
                    change = (hist_id(c, tuple(sorted(counted.items()))) - h) << (_BITS * c + _BITS)
                    by_adds[sums].append((change, weight))
                spread[(c, h)] = list(by_adds.items())
            return spread[(c, h)]

        # the most a class can still add to each check, for pruning a total that can no longer reach its range
        # only the classes that reveal or are read here: another keeps its state (its kept bits may outlive
        # their last check, which costs merging, not exactness)
        active = sorted(masks)
        # the most the classes after each can still add to each check, for pruning a total that can no longer
        # reach its range
        still: dict[int, list[int]] = {}
        rest = [0] * len(checks)
        for c in reversed(active):
            still[c] = list(rest)
            size = self.classes[c][1]
            for k, check in enumerate(checks):
                rest[k] += size * sum(max(pos, neg) for _, pos, neg in check.terms.get(c, ()))
        sums_ids: dict[tuple[int, ...], int] = {(0,) * len(checks): 0}
        sums_of: list[tuple[int, ...]] = [(0,) * len(checks)]
        current = {code << _BITS: weight for code, weight in states.items()}  # partial sums number 0: all zero
        for c in active:
            added: dict[tuple[int, tuple[int, ...]], int] = {}

            def plus(sums_id: int, adds: tuple[int, ...], c: int = c) -> int:
                """The partial sums' number after a class adds ``adds``; -1 when a check can no longer hold."""
                if (sums_id, adds) not in added:
                    sums = sums_of[sums_id]
                    new_sums: list[int] = []
                    for k, check in enumerate(checks):
                        value = sums[k] + adds[k]
                        if check.modulus is not None:
                            value %= check.modulus
                        elif check.cap is not None:
                            value = min(value, check.cap)
                        elif value > check.high:
                            break
                        if check.modulus is None and value + still[c][k] < check.low:
                            break
                        new_sums.append(value)
                    else:
                        key = tuple(new_sums)
                        if key not in sums_ids:
                            if len(sums_of) > _FIELD:
                                raise StateBudgetExceeded(f"lifted count: more than {_FIELD} partial sums")
                            sums_ids[key] = len(sums_of)
                            sums_of.append(key)
                        added[(sums_id, adds)] = sums_ids[key]
                        return sums_ids[key]
                    added[(sums_id, adds)] = -1
                return added[(sums_id, adds)]

            following: dict[int, int] = defaultdict(int)
            shift = _BITS * c + _BITS
            for visited, (state, weight) in enumerate(current.items()):
                if self.deadline is not None and visited % 4096 == 0 and time.monotonic() > self.deadline:
                    raise StateBudgetExceeded("lifted count ran out of time")
                sums_id = state & _FIELD
                for adds, moves in spread_of(c, state >> shift & _FIELD):
                    new_id = plus(sums_id, adds)
                    if new_id >= 0:
                        base = state - sums_id + new_id
                        for change, ways in moves:
                            following[base + change] += weight * ways
            if len(following) > self.max_states:
                raise StateBudgetExceeded(f"lifted count: {len(following)} states, more than {self.max_states}")
            current = following
        holds = [all(value in check.allowed for value, check in zip(sums, checks)) for sums in sums_of]
        out: dict[int, int] = defaultdict(int)
        for state, weight in current.items():
            if holds[state & _FIELD]:
                out[state >> _BITS] += weight
        return out


def _blocks(clauses: Sequence[Clause], variables: Iterable[int]) -> list[tuple[list[int], list[Clause]]]:
    """The connected components of ``clauses`` (variables sharing a clause), with ``variables`` in no
    clause as components of their own: each one's variables and clauses."""
    parent: dict[int, int] = {}

    def root(var: int) -> int:
        parent.setdefault(var, var)
        while parent[var] != var:
            parent[var] = parent[parent[var]]
            var = parent[var]
        return var

    for clause in clauses:
        first = root(abs(clause[0]))
        for lit in clause[1:]:
            parent[root(abs(lit))] = first
    for var in variables:
        root(var)
    members: dict[int, list[int]] = defaultdict(list)
    for var in list(parent):
        members[root(var)].append(var)
    clauses_of: dict[int, list[Clause]] = defaultdict(list)
    for clause in clauses:
        clauses_of[root(abs(clause[0]))].append(clause)
    return [(members[head], clauses_of[head]) for head in members]


def _projected_models(clauses: Sequence[Clause], relevant: Sequence[int], num_task_vars: int) -> list[int]:
    """The block's models projected on ``relevant`` (bit i: ``relevant[i]`` true); :class:`NotLiftable`
    when there are too many, too many variables, or a counted auxiliary not fixed by the task variables."""
    if len(relevant) > MAX_BLOCK_VARS:
        raise NotLiftable(
            f"a block has {len(relevant)} task variables and counted literals, more than {MAX_BLOCK_VARS}"
        )
    position = {var: i for i, var in enumerate(relevant)}
    models: list[int] = []
    with Solver(name="g4", bootstrap_with=list(clauses)) as solver:
        for var in relevant:  # a variable in no clause of the block is known to the solver all the same
            solver.add_clause([var, -var])
        while solver.solve():
            values = set(solver.get_model() or ())
            mask = sum(1 << position[var] for var in relevant if var in values)
            models.append(mask)
            if len(models) > MAX_BLOCK_MODELS:
                raise NotLiftable(f"a block has more than {MAX_BLOCK_MODELS} models")
            if not relevant:
                break
            solver.add_clause([-var if var in values else var for var in relevant])
    task_bits = sum(1 << i for i, var in enumerate(relevant) if var <= num_task_vars)
    if len({mask & task_bits for mask in models}) != len(models):
        raise NotLiftable("a counted auxiliary is not fixed by its block's task variables")
    return models


def _compositions(n: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to write ``n`` as an ordered sum of ``parts`` non-negative integers."""
    if parts == 1:
        yield (n,)
        return
    for first in range(n + 1):
        for rest in _compositions(n - first, parts - 1):
            yield (first, *rest)


def _multinomial(n: int, split: Sequence[int]) -> int:
    ways = math.factorial(n)
    for a in split:
        ways //= math.factorial(a)
    return ways
