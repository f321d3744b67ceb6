"""Boolean functions of how many literals of a few disjoint groups are true, as tables over those counts.

A cardinality encoder's auxiliary (a sequential counter's prefix, a totalizer's node output, a sorting
network's wire) is a function of the count of one group of literals, or of two groups that a node or a
comparator joins. As an SDD over the task variables such a function has O(n·k) nodes and every AND or OR
costs a product of two of them (a sequential counter's exactly-100 of 200 has 20,000 auxiliaries: two
minutes); as a table over the groups' counts it has at most (|A| + 1)(|B| + 1) cells. After each
operation the groups the table ignores are dropped and two groups whose table depends only on the sum of
their counts merge (a totalizer's node over its two subtrees), so a symmetric constraint ends as one group
and one row: a :class:`~autonesy.tools.literal_count.LiteralCount`.

The tables are exact: every count vector of disjoint groups of distinct variables is reached by some
assignment, so two functions are equal exactly when their tables over a common refinement are. An
operation whose table would have more than ``MAX_CELLS`` cells or ``MAX_GROUPS`` groups raises
:class:`TooLarge` (a weighted sum is a function of each literal alone); the caller then builds SDDs instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from pysdd.sdd import SddManager, SddNode

from autonesy.tools.literal_count import LiteralCount

MAX_CELLS = 1 << 16  # a table over the refined groups of one operation's operands, at most
MAX_GROUPS = 8  # and over at most this many groups (merging tries every pair: a weighted sum's singletons never merge)


class TooLarge(Exception):
    """The function's table would have more than ``MAX_CELLS`` cells or ``MAX_GROUPS`` groups."""


Group = frozenset[int]  # literals of distinct variables; the count is how many are true


@dataclass(frozen=True, eq=False)
class CountFunction:
    """The function "``table[c_1, …, c_m]``" of the numbers ``c_i`` of true literals in ``groups[i]``
    (groups over disjoint variables; ``table`` has shape ``(len(groups[i]) + 1, …)``)."""

    groups: tuple[Group, ...]
    table: np.ndarray
    signs: tuple[int, ...]  # each group's: 1 or -1 when all its literals have that sign, else 0

    @classmethod
    def constant(cls, value: bool) -> CountFunction:
        return cls((), np.array(value), ())

    @classmethod
    def literal(cls, lit: int) -> CountFunction:
        return cls((frozenset((lit,)),), np.array([False, True]), (1 if lit > 0 else -1,))

    @classmethod
    def of_truth_table(cls, variables: Sequence[int], table: np.ndarray) -> CountFunction:
        """The function whose value on the assignment ``row`` of ``variables`` is ``table[row]``."""
        return _simplified([frozenset((var,)) for var in variables], [1] * len(variables), table)

    @cached_property
    def negations(self) -> tuple[Group, ...]:
        """Each group's literals negated."""
        return tuple(frozenset(-lit for lit in group) for group in self.groups)

    def __invert__(self) -> CountFunction:
        return CountFunction(self.groups, ~self.table, self.signs)

    def __and__(self, other: CountFunction) -> CountFunction:
        return or_of_ands([[(self, True), (other, True)]])

    def __or__(self, other: CountFunction) -> CountFunction:
        return or_of_ands([[(self, True)], [(other, True)]])

    def equals(self, other: CountFunction) -> bool:
        """The same Boolean function (tables equal on the common refinement of the groups)."""
        shape, _, _, (mine, theirs) = _refined([self, other])
        return bool(np.array_equal(np.broadcast_to(mine, shape), np.broadcast_to(theirs, shape)))

    def is_false(self) -> bool:
        return not self.table.any()

    def is_true(self) -> bool:
        return bool(self.table.all())

    def literal_count(self, visible: Sequence[int]) -> LiteralCount | None:
        """The function as "the number of true literals of its one group is in A" (a constant true one over
        ``visible``); None when it has several groups or is false."""
        if not self.groups:
            return LiteralCount(tuple(visible), tuple(range(len(visible) + 1))) if self.is_true() else None
        if len(self.groups) > 1:
            return None
        literals, allowed = sorted(self.groups[0], key=abs), [int(c) for c in np.flatnonzero(self.table)]
        if 2 * sum(lit < 0 for lit in literals) > len(literals):  # read as a count of mostly positive literals
            literals, allowed = [-lit for lit in literals], [len(literals) - c for c in allowed]
        return LiteralCount(tuple(literals), tuple(allowed))

    def to_sdd(self, manager: SddManager, top_down: Sequence[int]) -> SddNode:
        """The function as an SDD (unreferenced), by Shannon expansion along ``top_down`` (the variables in
        the vtree's order from its root: on a right-linear vtree each step is a decision on one literal). One
        node per reachable count vector and depth: O(n²) for one group of n."""
        position = {var: index for index, var in enumerate(top_down)}
        owner = {abs(lit): (index, lit) for index, group in enumerate(self.groups) for lit in group}
        chain = sorted(owner, key=position.__getitem__)
        nodes = {
            counts: manager.true() if self.table[counts] else manager.false()
            for counts in np.ndindex(*self.table.shape)
        }
        above = [len(group) for group in self.groups]  # literals of each group before the current depth
        for var in reversed(chain):
            index, lit = owner[var]
            above[index] -= 1
            node = manager.literal(abs(lit))
            yes, no = (node, ~node) if lit > 0 else (~node, node)
            level = {}
            for counts in np.ndindex(*(a + 1 for a in above)):
                raised = counts[:index] + (counts[index] + 1,) + counts[index + 1 :]
                high, low = nodes[raised], nodes[counts]
                level[counts] = high if high == low else (yes & high) | (no & low)
            nodes = level
        return nodes[(0,) * len(self.groups)]


def or_of_ands(terms: Sequence[Sequence[tuple[CountFunction, bool]]]) -> CountFunction:
    """The OR over ``terms`` of the AND of each term's functions (negated where paired with False), in one
    table over the common refinement of all their groups (an auxiliary's whole definition at once)."""
    operands = list({id(f): f for term in terms for f, _ in term}.values())
    if not operands:
        return CountFunction.constant(bool(terms))  # an empty AND is true
    shape, groups, signs, tables = _refined(operands)
    table_of = {id(f): table for f, table in zip(operands, tables)}
    result: np.ndarray = np.array(False)
    for term in terms:
        value: np.ndarray = np.array(True)
        for f, positive in term:
            value = value & (table_of[id(f)] if positive else ~table_of[id(f)])
        result = result | value
    return _simplified(groups, signs, np.broadcast_to(result, shape))


def _refined(
    operands: Sequence[CountFunction],
) -> tuple[tuple[int, ...], list[Group], list[int], list[np.ndarray]]:
    """The common refinement of the operands' groups (its table shape and pieces), and each operand's table
    over it (broadcastable to that shape).

    A piece is the variables in the same group of each operand (and in none of an operand that does not
    read them), with one polarity in each or the opposite one; it is written as the first operand to read
    it does, so a group's count is the sum over its pieces of the piece's count or its size minus it. When
    all literals have one sign (the groups' signs say so), no piece has opposite polarities."""
    first = operands[0].groups
    if all(f.groups == first for f in operands[1:]):
        return tuple(len(g) + 1 for g in first), list(first), list(operands[0].signs), [f.table for f in operands]
    one_sign = {sign for f in operands for sign in f.signs} in ({1}, {-1})
    pieces: list[tuple[Group, int, dict[int, tuple[int, bool]]]] = [  # literals, their sign, who reads them
        (group, sign, {0: (index, False)}) for index, (group, sign) in enumerate(zip(first, operands[0].signs))
    ]
    for k, f in enumerate(operands[1:], start=1):
        negations = f.negations if not one_sign else [frozenset()] * len(f.groups)
        for index, (group, negated, group_sign) in enumerate(zip(f.groups, negations, f.signs)):
            split: list[tuple[Group, int, dict[int, tuple[int, bool]]]] = []
            covered: list[Group] = []  # the group's literals already in pieces, in the group's polarity
            for lits, sign, reads in pieces:
                same = lits if lits is group else lits & group
                opposite = lits & negated if negated else negated
                if not same and not opposite:
                    split.append((lits, sign, reads))
                    continue
                if same:
                    split.append((same, sign, {**reads, k: (index, False)}))
                    covered.append(same)
                if opposite:
                    split.append((opposite, sign, {**reads, k: (index, True)}))
                    covered.append(frozenset(-lit for lit in opposite))
                if len(same) + len(opposite) < len(lits):
                    split.append((lits - same - opposite, sign, reads))
            if sum(map(len, covered)) < len(group):
                split.append((group.difference(*covered), group_sign, {k: (index, False)}))
            pieces = split
    shape = tuple(len(lits) + 1 for lits, _, _ in pieces)
    if math.prod(shape) > MAX_CELLS or len(shape) > MAX_GROUPS:
        raise TooLarge(f"a table of {math.prod(shape)} cells over {len(shape)} groups")
    axes = [
        np.arange(size).reshape([size if a == axis else 1 for a in range(len(shape))])
        for axis, size in enumerate(shape)
    ]
    tables = []
    for k, f in enumerate(operands):
        counts: list[np.ndarray | int] = [0] * len(f.groups)
        for axis, (_, _, reads) in enumerate(pieces):
            if k in reads:
                index, flipped = reads[k]
                counts[index] = counts[index] + (shape[axis] - 1 - axes[axis] if flipped else axes[axis])
        tables.append(f.table[tuple(counts)])
    return shape, [lits for lits, _, _ in pieces], [sign for _, sign, _ in pieces], tables


def _simplified(groups: Sequence[Group], signs: Sequence[int], table: np.ndarray) -> CountFunction:
    """Without the groups the table ignores, and with two groups merged while the table reads only their sum."""
    kept, kept_signs = list(groups), list(signs)
    for axis in reversed(range(table.ndim)):
        moved = np.moveaxis(table, axis, 0) if axis else table
        if (moved[1:] == moved[:-1]).all():
            table = moved[0]
            del kept[axis], kept_signs[axis]
    merging = True
    while merging and len(kept) > 1:
        merging = False
        for a, b in itertools.combinations(range(len(kept)), 2):
            pair = np.moveaxis(table, (a, b), (0, 1)) if (a, b) != (0, 1) else table
            for flipped in (
                False,
                True,
            ):  # a function of c_a + c_b, or of c_a - c_b: of c_a + the count of b's negations
                if flipped:
                    pair = pair[:, ::-1]
                if (pair[1:, :-1] == pair[:-1, 1:]).all():  # equal along each antidiagonal
                    table = np.concatenate([pair[0], pair[1:, -1]])
                    sign_b = -kept_signs[b] if flipped else kept_signs[b]
                    joined = kept[a] | (frozenset(-lit for lit in kept[b]) if flipped else kept[b])
                    rest = [index for index in range(len(kept)) if index not in (a, b)]
                    kept = [joined, *(kept[index] for index in rest)]
                    kept_signs = [
                        kept_signs[a] if kept_signs[a] == sign_b else 0,
                        *(kept_signs[index] for index in rest),
                    ]
                    merging = True
                    break
            if merging:
                break
    return CountFunction(tuple(kept), np.array(table), tuple(kept_signs))  # a copy, never a broadcast's view
