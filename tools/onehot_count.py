"""Exact model count of a CNF as a CSP over its one-hot groups, by dynamic programming.

Component counters and SDDs fail on all-different grids: a 6 × 6 Sudoku (216 variables, 28,200,960
models) ran out of 60 s in Ganak, ApproxMC and every SDD shape. Read as a CSP, it is small: the
encoder's exactly-one groups (a positive clause whose literals are pairwise exclusive) are the CSP's
variables, every other variable a two-valued one, and every clause a constraint over the groups it
touches. The groups are assigned in the order the encoder wrote them (a grid row by row), layer
by layer, with forward checking: once a clause has one group left and is not yet satisfied, that
group's domain is cut to the values that satisfy it. Two partial assignments with the same future
domains and the same still-open clauses have the same completions, so a layer keeps one count per
such state (6 × 6 Sudoku: at most 291,600 states, about 10 s; a few thousand, well under 0.1 s, once its
values are read as interchangeable: :func:`interchangeable_values`). The layers' width is the budget, in
memory rather than a number of states: the states are measured as they are made (bytes per state,
sampled in each layer) and the two layers alive at once must fit in
:func:`state_memory_budget` (a share of what the machine, the cgroup and RLIMIT_AS leave, split among the
racers that hold tables at once, under a hard ceiling); past it, or the time limit, it gives up with
:class:`StateBudgetExceeded`.

A CNF with auxiliaries is counted through its blocks (clauses connected through auxiliaries): each
block's projection on its task variables is proved, by SAT calls, to be an at-most-one or exactly-one
of them (every pair excluded, every assignment with at most one true extended), and replaced by
pairwise clauses; a block that is anything else stops the route (:class:`NotOneHot`). So an answer
whose at-most-ones are ladders, sequential counters or binary encodings is read as the same CSP.
"""

from __future__ import annotations

import functools
import itertools
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable

from pysat.solvers import Solver

from autonesy.tools.cnf import CNF, Clause
from autonesy.tools.errors import AutonesyError

STATE_MEMORY_SHARE = 0.5  # of the memory available, for the states of all racers together,
RACERS_HOLDING_STATES = 4  # split among the racers that hold large tables at once (one-hot, frontier, SDDs, Ganak)
MAX_STATE_BYTES = 8 << 30  # and never more per racer, whatever the machine reports
UNKNOWN_MEMORY_BYTES = 2 << 30  # taken as available where nothing can be read
DICT_ENTRY_BYTES = 48  # a dict's hash table per entry (slot and index, kept at most two-thirds full)
MAX_BLOCK_TASK_VARS = 64  # a block's projection is tested for being an at-most-one up to this width (m²/2 SAT calls)


class StateBudgetExceeded(AutonesyError, RuntimeError):
    """The dynamic programme outgrew its state or time budget; the message says where."""


class NotOneHot(AutonesyError, RuntimeError):
    """An auxiliary block's projection is not an at-most-one or exactly-one of its task variables."""


def available_memory() -> int:
    """Bytes this process may still take: the least of the machine's MemAvailable, the cgroup's limit less its
    usage (v2, else v1) and RLIMIT_AS less the address space in use; ``UNKNOWN_MEMORY_BYTES`` where none reads."""
    figures = []
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    figures.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit_path, usage_path in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        try:
            with open(limit_path) as limit, open(usage_path) as usage:
                text = limit.read().strip()
                if text != "max":
                    figures.append(max(0, int(text) - int(usage.read())))
            break
        except (OSError, ValueError):
            continue
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/statm") as statm:
                figures.append(max(0, soft - int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")))
        except (OSError, ValueError, IndexError):
            figures.append(soft)
    return min(figures) if figures else UNKNOWN_MEMORY_BYTES


def state_memory_budget() -> int:
    """Bytes one racer's states may take: ``STATE_MEMORY_SHARE`` of :func:`available_memory`, split among
    ``RACERS_HOLDING_STATES``, at most ``MAX_STATE_BYTES``."""
    return int(min(MAX_STATE_BYTES, available_memory() * STATE_MEMORY_SHARE / RACERS_HOLDING_STATES))


class Footprint:
    """The bytes of a growing table of states, from its newest state measured each time the table passes a
    sampling point (each new state up to 32, then every 64th): states of one step are alike in size."""

    def __init__(self, measure: Callable):
        self.measure, self.sampled, self.total, self.next_sample = measure, 0, 0, 1

    def bytes(self, table: dict) -> int:
        """The estimated bytes of ``table`` (its states, counts and hash table), sampling it when due."""
        if table and len(table) >= self.next_sample:
            self.total += self.measure(next(reversed(table)))
            self.sampled += 1
            self.next_sample = len(table) + (1 if self.sampled < 32 else 64)
        return len(table) * self.total // self.sampled if self.sampled else 0


def _key_bytes(key: int) -> int:
    """A one-hot state's bytes: its integer, its count (an integer of up to 32 bytes) and its dict entry."""
    return sys.getsizeof(key) + 32 + DICT_ENTRY_BYTES


def _cut(
    allowed: dict[int, int], field: list[int], shift: list[int], width: list[int]
) -> tuple[int, list[tuple[int, int, int]]]:
    """The mask that cuts each group in ``allowed`` to its allowed values, and the tests that none is left empty:
    a field plus all ones in its width carries into the bit above it unless it is zero, so one addition tests
    many fields at once, in two passes that never hold two adjacent fields (a carry would run into the next)."""
    mask = functools.reduce(int.__and__, (~field[g] | (a << shift[g]) for g, a in allowed.items()), -1)
    passes: list[list[int]] = [[], []]
    for g in sorted(allowed):
        passes[1 if passes[0] and passes[0][-1] == g - 1 else 0].append(g)
    tests = [
        (sum(field[g] for g in part), sum(field[g] for g in part), sum(1 << (shift[g] + width[g]) for g in part))
        for part in passes
        if part
    ]
    return mask, tests


def one_hot_groups(cnf: CNF) -> list[tuple[int, ...]]:
    """The task variables split into exactly-one groups (each a positive clause whose literals are pairwise
    exclusive by binary clauses, taken longest first, disjoint) and singletons, ordered by first variable."""
    exclusive = {frozenset((-a, -b)) for a, b in (c for c in cnf.clauses if len(c) == 2) if a < 0 and b < 0}
    taken: set[int] = set()
    groups = []
    for clause in sorted(cnf.clauses, key=len, reverse=True):
        literals = set(clause)
        if len(clause) < 2 or len(literals) < len(clause) or min(clause) < 0 or literals & taken:
            continue
        if all(frozenset(pair) in exclusive for pair in itertools.combinations(clause, 2)):
            groups.append(tuple(sorted(clause)))
            taken |= literals
    groups.extend((var,) for var in cnf.task_vars if var not in taken)
    return sorted(groups, key=min)


def one_hot_projection(cnf: CNF) -> CNF:
    """``cnf`` without auxiliaries, with the same models projected on its task variables: each auxiliary block
    replaced by the at-most-one or exactly-one its projection is proved to be (:class:`NotOneHot` otherwise)."""
    if not cnf.num_aux_vars:
        return cnf
    plain, blocks = _auxiliary_blocks(cnf)
    return CNF(
        cnf.num_task_vars, tuple(plain) + tuple(c for b in blocks for c in _proved_one_hot(b, cnf.num_task_vars))
    )


def _auxiliary_blocks(cnf: CNF) -> tuple[list[Clause], list[list[Clause]]]:
    """The clauses over task variables only, and the others split into blocks: connected through auxiliaries, or over
    the same task variables."""
    n = cnf.num_task_vars
    parent: dict[int, int] = {}

    def root(var: int) -> int:
        while parent.setdefault(var, var) != var:
            parent[var] = parent[parent[var]]
            var = parent[var]
        return var

    plain, headed = [], []
    for clause in cnf.clauses:
        auxiliaries = [abs(lit) for lit in clause if abs(lit) > n]
        if not auxiliaries:
            plain.append(clause)
            continue
        for var in auxiliaries[1:]:
            parent[root(var)] = root(auxiliaries[0])
        headed.append((auxiliaries[0], clause))
    blocks: dict[int, list[Clause]] = defaultdict(list)
    for var, clause in headed:
        blocks[root(var)].append(clause)
    # Blocks over the same task variables are one constraint written in parts (a binary at-most-one: one block
    # per bit, none an at-most-one alone); conjoining blocks without common auxiliaries keeps the projection.
    merged: dict[frozenset[int], list[Clause]] = defaultdict(list)
    for clauses in blocks.values():
        merged[frozenset(abs(lit) for clause in clauses for lit in clause if abs(lit) <= n)].extend(clauses)
    return plain, list(merged.values())


def _proved_one_hot(block: Iterable[Clause], n: int) -> list[Clause]:
    """The block's projection on its task variables V as clauses over V, when SAT calls prove it an at-most-one
    (no two of V true together; each single one of V, and none, extend to a model) or an exactly-one (the same
    but none does not extend); :class:`NotOneHot` otherwise."""
    block = list(block)
    visible = sorted({abs(lit) for clause in block for lit in clause if abs(lit) <= n})
    if len(visible) > MAX_BLOCK_TASK_VARS:
        raise NotOneHot(f"an auxiliary block over {len(visible)} task variables, more than {MAX_BLOCK_TASK_VARS}")
    with Solver(name="minisat22", bootstrap_with=block) as solver:
        for a, b in itertools.combinations(visible, 2):
            if solver.solve(assumptions=[a, b]):
                raise NotOneHot(f"an auxiliary block allows {a} and {b} together")
        for a in visible:
            if not solver.solve(assumptions=[a] + [-b for b in visible if b != a]):
                raise NotOneHot(f"an auxiliary block rules out {a} alone")
        none_allowed = solver.solve(assumptions=[-b for b in visible])
    pairs: list[Clause] = [(-a, -b) for a, b in itertools.combinations(visible, 2)]
    return pairs if none_allowed else [*pairs, tuple(visible)]


def interchangeable_values(cnf: CNF, groups: list[tuple[int, ...]]) -> int:
    """m when every group has the same m > 1 variables and every permutation of the values, applied to all groups
    at once, maps the clauses onto themselves (Latin squares, Sudoku without clues, colourings); else 0.

    Checked on two permutations that generate them all: swapping values 0 and 1, and shifting every value by one.
    """
    m = len(groups[0]) if groups else 0
    if m < 2 or any(len(members) != m for members in groups):
        return 0
    clauses = {frozenset(clause) for clause in cnf.clauses}
    for permuted in ((1, 0, *range(2, m)), (*range(1, m), 0)):
        image = {members[i]: members[j] for members in groups for i, j in enumerate(permuted)}
        if any(frozenset(image[lit] if lit > 0 else -image[-lit] for lit in c) not in clauses for c in clauses):
            return 0
    return m


def count_one_hot(
    cnf: CNF,
    time_limit_s: float | None = None,
    max_states: int | None = None,
    on_structure: Callable[[], None] | None = None,
) -> int:
    """The number of models of ``cnf`` projected on its task variables (auxiliaries through :func:`one_hot_projection`).

    A group of m > 1 variables takes one of m values (value i: its i-th variable true, the others
    false); a singleton takes 0 (false) or 1 (true). ``on_structure`` is called once every task variable is
    known to be in a group of two or more (an all-different grid, the route's best case: a race can give it
    the CPU). Raises :class:`StateBudgetExceeded` when the two layers alive at once outgrow
    :func:`state_memory_budget` (or ``max_states`` states in one layer, where given) or past ``time_limit_s``.
    """
    deadline = time.monotonic() + time_limit_s if time_limit_s is not None else None
    cnf = one_hot_projection(cnf)
    groups = one_hot_groups(cnf)
    if on_structure is not None and all(len(group) > 1 for group in groups):
        on_structure()
    place = {var: (g, i) for g, members in enumerate(groups) for i, var in enumerate(members)}
    full = [(1 << len(members)) - 1 if len(members) > 1 else 0b11 for members in groups]
    labels = interchangeable_values(cnf, groups)

    def values_making_true(lit: int) -> int:
        g, i = place[abs(lit)]
        if len(groups[g]) == 1:
            return 0b10 if lit > 0 else 0b01
        return 1 << i if lit > 0 else full[g] & ~(1 << i)

    # A state is one integer: each group's future domain in its own bit field (zero once assigned), and above
    # them one bit per clause of three groups or more that is still open.
    width = [f.bit_length() for f in full]
    shift = list(itertools.accumulate(width, initial=0))
    field = [f << offset for f, offset in zip(full, shift)]
    slot: dict[int, int] = {}
    domains = list(full)
    # Per group and value: the clauses that value leaves unsatisfied, as (the clause's open bit, first group?,
    # groups left, its last group's field, the mask that cuts that field to the values satisfying it); the open
    # bits of the clauses it satisfies; and the two-group clauses it leaves unsatisfied, merged per last group.
    unsatisfied: list[list[list[tuple[int, bool, int, int, int]]]] = [[[] for _ in range(w)] for w in width]
    closes: list[list[int]] = [[0] * w for w in width]
    cuts: list[list[dict[int, int]]] = [[{} for _ in range(w)] for w in width]
    for index, clause in enumerate(cnf.clauses):
        masks: dict[int, int] = defaultdict(int)
        for lit in clause:
            masks[place[abs(lit)][0]] |= values_making_true(lit)
        touched = sorted(masks)
        if any(masks[g] == full[g] for g in touched):
            continue  # true whatever the groups take
        if not touched:
            return 0  # the empty clause
        if len(touched) == 1:
            domains[touched[0]] &= masks[touched[0]]
            continue
        last = touched[-1]
        bit = 1 << (shift[-1] + slot.setdefault(index, len(slot))) if len(touched) >= 3 else 0
        for position, g in enumerate(touched):
            left = len(touched) - 1 - position
            for value in range(width[g]):
                if not (full[g] >> value) & 1:
                    continue
                if (masks[g] >> value) & 1:
                    if position > 0 and bit:
                        closes[g][value] |= bit
                elif position == 0 and not bit:
                    cuts[g][value][last] = cuts[g][value].get(last, full[last]) & masks[last]
                elif position == 0 or bit:  # the last of two groups: its domain holds the clause
                    keep = ~field[last] | (masks[last] << shift[last])
                    unsatisfied[g][value].append((bit, position == 0, left, field[last], keep))
    if not all(domains):
        return 0
    cut_masks = [[_cut(cut, field, shift, width) if cut else None for cut in per_value] for per_value in cuts]
    # With interchangeable values, only assignments whose values appear in order of first use are made (a group
    # takes a value used before or the first unused one, in as many ways as values are unused): the state
    # carries the number of values used, above the open clauses' bits, and a Latin square's first row is fixed.
    used_shift = shift[-1] + len(slot)
    one_used = 1 << used_shift
    budget_bytes = state_memory_budget()
    layer: dict[int, int] = {sum(d << offset for d, offset in zip(domains, shift)): 1}
    held = 0  # the bytes of the layer being read
    for g in range(len(groups)):
        following: dict[int, int] = defaultdict(int)
        footprint = Footprint(_key_bytes)
        cuts_here, closes_here, unsatisfied_here = cut_masks[g], closes[g], unsatisfied[g]
        offset, full_here, cleared = shift[g], full[g], ~field[g]
        values_of: dict[int, list[int]] = {}
        for key, count in layer.items():
            domain, base = (key >> offset) & full_here, key & cleared
            values = values_of.get(domain)
            if values is None:
                values = values_of[domain] = [v for v in range(width[g]) if (domain >> v) & 1]
            first_unused = key >> used_shift if labels else width[g]  # past every value: none relabelled
            for value in values:
                ways, rest, cut = count, base, cuts_here[value]
                if value >= first_unused:
                    if value > first_unused:
                        break  # a relabelling of an assignment counted through the first unused value
                    ways, rest = count * (labels - value), rest + one_used
                if cut is not None:
                    rest &= cut[0]
                    if any((rest & fields) + ones & carries != carries for fields, ones, carries in cut[1]):
                        continue  # a domain emptied
                closing, pending = closes_here[value], unsatisfied_here[value]
                if not (closing or pending):  # no clause of three groups or more here
                    following[rest] += ways
                    continue
                rest &= ~closing
                for bit, first, left, last_field, keep in pending:
                    if not first and not rest & bit:
                        continue  # satisfied earlier, or its last group's domain already holds it
                    if left >= 2:
                        rest |= bit
                        continue
                    rest &= ~bit
                    if left == 0:
                        break
                    rest &= keep
                    if not rest & last_field:
                        break
                else:
                    following[rest] += ways
            taking = held + footprint.bytes(following)  # checked as the layer grows: a 9 x 9 Sudoku's takes gigabytes
            why = ""
            if taking > budget_bytes:
                why = f"memory budget ({budget_bytes >> 10:,} KiB)"
            elif max_states is not None and len(following) > max_states:
                why = f"states budget ({max_states} states)"
            elif deadline is not None and time.monotonic() > deadline:
                why = f"time budget ({time_limit_s} s)"
            if why:
                raise StateBudgetExceeded(
                    f"one-hot counting exceeded its {why} at group {g + 1} of {len(groups)} "
                    f"({len(following):,} states, about {taking >> 10:,} KiB with the layer before)"
                )
        layer, held = following, footprint.bytes(following)
    return sum(layer.values())
