"""The Task type: what an LLM is asked to formalize and what its answer is scored against."""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tools.cnf import CNF
from autonesy.tools.errors import AutonesyError

if TYPE_CHECKING:  # the expression tree type, only for annotations
    from autonesy.tools.formats.expr import Expr

EQUIVALENCE_METHODS = ("exhaustive", "construction", "clausal", "none")
PROVENANCES = ("real", "procedural", "synthetic-features", "user", "none")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# Names the formats treat as operators or library names (NAT keywords, SymPy/Python builtins).
_NAT_KEYWORDS = frozenset({"AND", "OR", "NOT", "IMPLIES", "IFF", "XOR", "TRUE", "FALSE"})
RESERVED_NAMES = frozenset({"cp", "sp", "S", "E", "I", "N", "O", "Q"})


class TaskError(AutonesyError, ValueError):
    """A task definition that cannot be used; the message says which part and why."""


@dataclass(frozen=True)
class Variable:
    """One task variable: its DIMACS name and what it means in words (the prompt shows both)."""

    name: str
    meaning: str


@dataclass(frozen=True)
class Descriptions:
    """The two description levels; only these texts differ between detailed and not-detailed prompts."""

    detailed: str
    not_detailed: str

    def get(self, level: str) -> str:
        """The description at a detail level; an unknown level is a ``TaskError`` naming the levels."""
        if level not in DETAIL_LEVELS:
            raise TaskError(f"unknown detail level {level!r}; choose one of {', '.join(DETAIL_LEVELS)}")
        return self.detailed if level == "detailed" else self.not_detailed


@dataclass(frozen=True)
class TaskMetadata:
    """Where a task comes from (dataset, citation, licence) and how its ground truth is proved equal to its oracle."""

    source_dataset: str
    citation: str
    licence: str
    published_clauses: int | None
    data_provenance: str
    equivalence_method: str
    design_notes: str = ""
    redistributable: bool = True

    def __post_init__(self) -> None:
        if self.equivalence_method not in EQUIVALENCE_METHODS:
            raise TaskError(f"equivalence method {self.equivalence_method!r} not in {EQUIVALENCE_METHODS}")
        if self.data_provenance not in PROVENANCES:
            raise TaskError(f"data provenance {self.data_provenance!r} not in {PROVENANCES}")


OracleBatch = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Task:
    """A NeSy constraint over N named Boolean variables (DIMACS index = position + 1).

    ``encode`` builds the ground-truth CNF (auxiliaries above N). ``oracle_batch`` is an independent
    plain-Python/NumPy check taking a (B, N) 0/1 array and returning (B,) booleans.
    ``enumerate_valid``, when given, yields every valid assignment by construction (needed by the
    equivalence proof when N is too large to enumerate all 2^N assignments). ``rule_list``, for
    tasks whose constraint is a published list of rules, gives those rules as an auxiliary-free CNF
    that the oracle evaluates (used by the ``clausal`` proof). ``reference_expression``, for tasks whose
    ground truth needs auxiliary variables and has no ``rule_list``, gives the constraint as an
    auxiliary-free expression tree (:mod:`autonesy.tools.formats.expr`) equivalent to the ground truth
    on the task variables: the reference formalization in the formats without auxiliaries (NAT, SymPy).
    """

    name: str
    variables: tuple[Variable, ...]
    descriptions: Descriptions
    metadata: TaskMetadata
    encode: Callable[[], CNF] | None = field(repr=False, compare=False)
    oracle_batch: OracleBatch | None = field(repr=False, compare=False)
    enumerate_valid: Callable[[], Iterable[Sequence[int]]] | None = field(default=None, repr=False, compare=False)
    rule_list: Callable[[], CNF] | None = field(default=None, repr=False, compare=False)
    reference_expression: Callable[[], Expr] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", tuple(self.variables))
        validate_variable_names([v.name for v in self.variables], where=f"task {self.name!r}")
        for level in DETAIL_LEVELS:
            if not self.descriptions.get(level).strip():
                raise TaskError(f"task {self.name!r}: the {level} description is empty")

    @property
    def num_vars(self) -> int:
        """N, the number of task variables (DIMACS 1..N; auxiliaries are above)."""
        return len(self.variables)

    @property
    def names(self) -> list[str]:
        """The variable names in DIMACS order."""
        return [v.name for v in self.variables]

    def index_of(self, name: str) -> int:
        """DIMACS index (1-based) of a variable name."""
        try:
            return self.names.index(name) + 1
        except ValueError:
            raise TaskError(f"task {self.name!r} has no variable {name!r}") from None

    @property
    def has_ground_truth(self) -> bool:
        """Whether formulas can be scored against an expert CNF (task files and benchmarks may have none)."""
        return self.encode is not None

    @property
    def has_oracle(self) -> bool:
        """Whether an independent oracle exists for the oracle test and the equivalence proof."""
        return self.oracle_batch is not None

    @cached_property
    def ground_truth(self) -> CNF:
        """The expert CNF, built once and checked to stay within N task variables plus auxiliaries."""
        if self.encode is None:
            raise TaskError(f"task {self.name!r} has no ground truth; give one to score formulas against it")
        cnf = self.encode()
        if cnf.num_task_vars != self.num_vars:
            raise TaskError(
                f"task {self.name!r}: ground truth has {cnf.num_task_vars} task variables, expected {self.num_vars}"
            )
        return cnf

    def oracle(self, assignment: Sequence[int | bool]) -> bool:
        """The oracle's verdict on one assignment (in variable order)."""
        row = np.asarray(assignment, dtype=bool).reshape(1, -1)
        if row.shape[1] != self.num_vars:
            raise TaskError(f"task {self.name!r}: assignment has {row.shape[1]} values, expected {self.num_vars}")
        return bool(self.oracle_rows(row)[0])

    def oracle_rows(self, rows: np.ndarray) -> np.ndarray:
        """The oracle's verdicts on many assignments (rows × N, bool) at once; ``TaskError`` for a task
        without an oracle, so a caller never has to check the optional field itself."""
        if self.oracle_batch is None:
            raise TaskError(f"task {self.name!r} has no oracle")
        return np.asarray(self.oracle_batch(rows), dtype=bool)


def validate_variable_names(names: Sequence[str], where: str) -> None:
    """Refuse names a formula could not use in every format: no names, non-identifiers, Python keywords and format
    operators, duplicates."""
    if not names:
        raise TaskError(f"{where}: no variables")
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not _NAME.match(name):
            raise TaskError(
                f"{where}: variable name {name!r} must start with a letter and hold only letters, digits and '_'"
            )
        if keyword.iskeyword(name) or name in RESERVED_NAMES or name.upper() in _NAT_KEYWORDS:
            raise TaskError(f"{where}: variable name {name!r} is reserved (a Python keyword or format operator)")
        if name in seen:
            raise TaskError(f"{where}: duplicate variable name {name!r}")
        seen.add(name)
