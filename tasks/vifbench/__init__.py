"""VifBench (the Nsvif paper's §A.1–A.2, Tables 5–6) for instruction-following verification
(docs/architecture.md §11): the constraint types worded by Table 5's templates, 820 instructions from
Table 6's groups, outputs from an offline writer, labels from the reference checkers."""

from autonesy.tasks.vifbench.constraints import Constraint, Instruction, Part
from autonesy.tasks.vifbench.generator import GROUPS, generate, generate_instruction, group_of, label_distribution

__all__ = [
    "GROUPS",
    "Constraint",
    "Instruction",
    "Part",
    "generate",
    "generate_instruction",
    "group_of",
    "label_distribution",
]
