"""How many of some literals are true, as a constraint with a CNF encoding that counting can recognise.

A constraint such as "the matrix's entries sum to a multiple of 12" or "exactly one of these twelve
products holds" is a symmetric function of its literals: any permutation of them keeps it. Its CNF
encoding is not symmetric (a counter reads the literals in some order), so the formula's syntactic
symmetries, which counting by orbits (:mod:`autonesy.tools.orbit_count`) uses, are lost. Here the
constraint is written once by :func:`with_literal_counts`: the clauses of a unary counter along the
literals (state s_{i,q}: "the first i literals leave the count in state q"; each state implies the
next by the next literal's value; the disallowed final states false) and a comment line declaring it.
:func:`recognised` reads those comments back and believes one only after writing its clauses again
and finding them all in the formula, their auxiliaries in no other clause: the declaration says what
the clauses say, whoever wrote the file.

The count of the literals (each as often as it is listed) is read in states: modulo ``modulus``
when one is given (the residues in ``allowed`` are kept), else as a total, where every total from
the last change of verdict on is one state (exactly-1 of 12 has states 0, 1 and "2 or more"). The
encoding's projection on the other variables is exact: for every assignment of the literals the
states it reaches are forced true, so a disallowed count has no extension and an allowed one extends.
A count can also be guarded: "when literal g is true, the count is in A_g" for each of its guards,
which is how an integer equal to a sum of Booleans is said (one guard per value of its one-hot
encoding: handshakes per person), a final state false only where its guard holds.

    >>> from autonesy.tools.cnf import CNF
    >>> cnf = with_literal_counts(CNF(3, ()), [LiteralCount((1, 2, 3), (1,))])
    >>> [(c.literals, c.allowed) for c, _ in recognised(cnf)]
    [((1, 2, 3), (1,))]
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from autonesy.tools.cnf import CNF, Clause

COMMENT = "literal-count "  # the comment's prefix; a JSON object follows
MAX_LITERALS = 10_000  # a declaration listing more is not read (its clauses would be written again to check it)
MAX_STATES = 1_000


@dataclass(frozen=True)
class LiteralCount:
    """The number of true literals in ``literals`` (a literal listed twice counts twice) is in
    ``allowed``: totals, or residues modulo ``modulus`` when one is given; and in ``A`` whenever the
    literal ``g`` of a guard ``(g, A)`` is true."""

    literals: tuple[int, ...]
    allowed: tuple[int, ...]
    modulus: int | None = None
    guards: tuple[tuple[int, tuple[int, ...]], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "literals", tuple(int(lit) for lit in self.literals))
        object.__setattr__(self, "allowed", tuple(sorted({int(a) for a in self.allowed})))
        object.__setattr__(
            self, "guards", tuple((int(g), tuple(sorted({int(a) for a in allowed}))) for g, allowed in self.guards)
        )
        if any(lit == 0 for lit in self.literals) or any(g == 0 for g, _ in self.guards):
            raise ValueError("a literal count lists the literal 0")
        if self.modulus is not None and not 1 <= self.modulus <= MAX_STATES:
            raise ValueError(f"a literal count's modulus must be 1..{MAX_STATES}")
        top = self.modulus - 1 if self.modulus is not None else len(self.literals)
        if any(not 0 <= a <= top for a in self.allowed + tuple(a for _, allowed in self.guards for a in allowed)):
            raise ValueError(f"a literal count allows a value outside 0..{top}")

    def _verdicts(self, value: int) -> tuple[bool, ...]:
        """Whether a count (or residue) is allowed, and whether under each guard."""
        return (value in self.allowed, *(value in allowed for _, allowed in self.guards))

    def _states(self) -> int:
        """How many states the counter needs: the residues, or the totals up to the last change of verdict."""
        if self.modulus is not None:
            return self.modulus
        n = len(self.literals)
        last_change = max((t for t in range(n) if self._verdicts(t) != self._verdicts(n)), default=-1)
        return last_change + 2  # the totals 0..last_change, then "more" (every total from last_change + 1 on)

    def _next(self, state: int, states: int) -> int:
        return (state + 1) % states if self.modulus is not None else min(state + 1, states - 1)

    def _value(self, state: int, states: int) -> int:
        """A count (or residue) that a final state stands for: the last one stands for every larger total."""
        return state if self.modulus is not None or state < states - 1 else len(self.literals)

    def _steps(self) -> int:
        states = self._states()
        # the start, then two clauses per state and literal
        return 1 + sum(2 * min(i + 1, states) for i in range(len(self.literals)))

    def size(self) -> int:
        """How many clauses :meth:`clauses` writes (known before writing them: a declaration read from a
        file is checked against the formula's size first)."""
        states = self._states()
        reached = states if self.modulus is None else min(len(self.literals) + 1, states)
        finals = {self._value(state, states) for state in range(reached)}
        allowed = finals & set(self.allowed)  # a unit for each other final state, a clause per guard that leaves it out
        return (
            self._steps()
            + len(finals - allowed)
            + sum(len(allowed) - len(allowed.intersection(a)) for _, a in self.guards)
        )

    def clauses(self, first_aux: int) -> tuple[list[Clause], int]:
        """The counter's clauses over auxiliaries numbered from ``first_aux`` in a fixed order, and the
        highest variable used (``first_aux - 1`` when no auxiliary is needed)."""
        states = self._states()
        if states > MAX_STATES:
            raise ValueError(f"a literal count needs more than {MAX_STATES} states")
        top = first_aux - 1
        current = {0: top + 1}  # state -> its variable after the first i literals
        top += 1
        out: list[Clause] = [(current[0],)]
        for lit in self.literals:
            reached: dict[int, int] = {}
            for state in sorted(current):
                for value, target in ((False, state), (True, self._next(state, states))):
                    if target not in reached:
                        top += 1
                        reached[target] = top
                    out.append((-current[state], lit if not value else -lit, reached[target]))
            current = reached
        for state, var in sorted(current.items()):
            final = self._value(state, states)
            if final not in self.allowed:
                out.append((-var,))
                continue
            out.extend((-g, -var) for g, allowed in self.guards if final not in allowed)
        return out, top

    def substituted(self, image: Callable[[int], int]) -> LiteralCount:
        """The same count over ``image(lit)`` for each literal and guard (the formula's variables renamed)."""
        guards = tuple((image(g), allowed) for g, allowed in self.guards)
        return LiteralCount(tuple(image(lit) for lit in self.literals), self.allowed, self.modulus, guards)

    def to_comment(self, first_aux: int) -> str:
        fields: dict[str, object] = {
            "first_aux": first_aux,
            "allowed": list(self.allowed),
            "literals": list(self.literals),
        }
        if self.modulus is not None:
            fields["modulus"] = self.modulus
        if self.guards:
            fields["guards"] = [[g, list(allowed)] for g, allowed in self.guards]
        return COMMENT + json.dumps(fields, separators=(",", ":"))


def with_literal_counts(cnf: CNF, counts: Iterable[LiteralCount]) -> CNF:
    """``cnf`` and each count's counter, over new auxiliaries above its variables, each declared in a comment."""
    clauses, comments, top = list(cnf.clauses), list(cnf.comments), cnf.num_vars
    for count in counts:
        encoded, last = count.clauses(top + 1)
        comments.append(count.to_comment(top + 1))
        clauses.extend(encoded)
        top = last
    return CNF(cnf.num_task_vars, tuple(clauses), top, tuple(comments))


def _declared(comment: str, num_vars: int) -> tuple[LiteralCount, int] | None:
    """The count a comment declares and its first auxiliary; None for any other or malformed comment."""
    if not comment.startswith(COMMENT) or len(comment) > 20 * MAX_LITERALS:
        return None
    try:
        fields = json.loads(comment[len(COMMENT) :])
        literals, allowed, first = fields["literals"], fields["allowed"], fields["first_aux"]
        modulus, guards = fields.get("modulus"), fields.get("guards", [])
        if not (isinstance(literals, list) and isinstance(allowed, list) and type(first) is int):
            return None
        if not isinstance(guards, list) or len(literals) + len(guards) > MAX_LITERALS:
            return None
        if not all(
            isinstance(g, list) and len(g) == 2 and type(g[0]) is int and isinstance(g[1], list) for g in guards
        ):
            return None
        guard_values = [a for _, values in guards for a in values]
        if not all(type(x) is int for x in literals + allowed + guard_values) or len(guard_values) > MAX_LITERALS:
            return None
        if modulus is not None and type(modulus) is not int:
            return None
        if any(abs(lit) > num_vars for lit in literals + [g for g, _ in guards]) or not 0 < first <= num_vars:
            return None
        return LiteralCount(tuple(literals), tuple(allowed), modulus, tuple((g, tuple(v)) for g, v in guards)), first
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def recognised(cnf: CNF) -> list[tuple[LiteralCount, frozenset[Clause]]]:
    """The literal counts declared in ``cnf``'s comments whose clauses it holds, each with those clauses.

    A declaration is believed only when its counter, written again from it, is all in the formula,
    its auxiliaries are auxiliaries (above the task variables) that occur in no other clause, and no
    two declarations share one; any other declaration is ignored. Declarations are written out only
    while they can still fit in the formula together, so many forged comments cost no more than one."""
    found: list[tuple[LiteralCount, frozenset[Clause]]] = []
    candidates = []
    budget = len(cnf.clauses)  # believed counters share no clause: together they fit in the formula
    for comment in cnf.comments:
        declared = _declared(comment, cnf.num_vars)
        if declared is None:
            continue
        count, first = declared
        try:
            size = count.size()  # its clauses, guards' included, counted before any is written
            if size > budget:  # it could not all be in the formula beside those read before
                continue
            budget -= size
            encoded, last = count.clauses(first)
        except ValueError:
            continue
        if first <= cnf.num_task_vars or last > cnf.num_vars:
            continue
        candidates.append((count, first, last, frozenset(tuple(sorted(c)) for c in encoded)))
    if not candidates:
        return found
    present = {tuple(sorted(c)) for c in cnf.clauses}
    owner: dict[int, int] = {}
    for index, (_, first, last, _) in enumerate(candidates):
        for var in range(first, last + 1):
            owner[var] = -1 if var in owner else index  # -1: two declarations claim it
    uses: dict[int, set[tuple[int, ...]]] = {}
    for clause in present:
        for lit in clause:
            if abs(lit) in owner:
                uses.setdefault(abs(lit), set()).add(clause)
    for index, (count, first, last, own) in enumerate(candidates):
        auxiliaries = range(first, last + 1)
        if any(owner[var] != index for var in auxiliaries) or not own <= present:
            continue
        if any(not uses.get(var, set()) <= own for var in auxiliaries):
            continue
        if any(abs(lit) in owner for lit in count.literals + tuple(g for g, _ in count.guards)):  # over other states
            continue
        found.append((count, own))
    return found
