"""A small clause builder over PySAT encodings for the ground-truth encoders.

Auxiliary variables come from an ``IDPool`` that starts above the task variables, so every ground
truth has task variables 1..N and auxiliaries > N.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

from autonesy.tools.cnf import CNF


class ClauseBuilder:
    """Builds a ground-truth CNF over the task variables with PySAT cardinality encodings; auxiliaries are numbered
    above N so the task variables keep their DIMACS indices."""

    def __init__(self, num_task_vars: int) -> None:
        self.num_task_vars = num_task_vars
        self.pool = IDPool(start_from=num_task_vars + 1)
        self.clauses: list[list[int]] = []

    def add(self, *clauses: Sequence[int]) -> ClauseBuilder:
        """Add clauses as they are (chainable)."""
        self.clauses.extend(list(c) for c in clauses)
        return self

    def exactly(self, lits: Sequence[int], k: int, encoding: int = EncType.seqcounter) -> ClauseBuilder:
        """Exactly ``k`` of ``lits`` are true (sequential counter by default: auxiliaries, linear size)."""
        self._card(CardEnc.equals, lits, k, encoding)
        return self

    def exactly_one(self, lits: Sequence[int], encoding: int = EncType.pairwise) -> ClauseBuilder:
        """Exactly one of ``lits`` (pairwise by default: no auxiliaries, fine for short lists)."""
        return self.exactly(lits, 1, encoding)

    def at_most(self, lits: Sequence[int], k: int, encoding: int = EncType.seqcounter) -> ClauseBuilder:
        """At most ``k`` of ``lits`` are true."""
        self._card(CardEnc.atmost, lits, k, encoding)
        return self

    def at_least(self, lits: Sequence[int], k: int, encoding: int = EncType.seqcounter) -> ClauseBuilder:
        """At least ``k`` of ``lits`` are true."""
        self._card(CardEnc.atleast, lits, k, encoding)
        return self

    def implies(self, antecedent: Iterable[int], consequent: Iterable[int]) -> ClauseBuilder:
        """(∧ antecedent) → (∨ consequent), as one clause."""
        self.clauses.append([-lit for lit in antecedent] + list(consequent))
        return self

    def iff_or(self, out: int, ins: Sequence[int]) -> ClauseBuilder:
        """out ↔ ∨ ins."""
        self.clauses.append([-out, *ins])
        self.clauses.extend([out, -lit] for lit in ins)
        return self

    def iff_and(self, out: int, ins: Sequence[int]) -> ClauseBuilder:
        """out ↔ ∧ ins."""
        self.clauses.append([out, *(-lit for lit in ins)])
        self.clauses.extend([-out, lit] for lit in ins)
        return self

    def new_var(self) -> int:
        """A fresh auxiliary variable (above every task variable)."""
        return self.pool.id(("aux", self.pool.top + 1))

    def cnf(self) -> CNF:
        """The CNF built so far, with N task variables and every auxiliary counted."""
        return CNF(self.num_task_vars, tuple(tuple(c) for c in self.clauses), max(self.pool.top, self.num_task_vars))

    def _card(self, encode, lits: Sequence[int], k: int, encoding: int) -> None:
        formula = encode(lits=list(lits), bound=k, vpool=self.pool, encoding=encoding)
        self.clauses.extend(formula.clauses)
