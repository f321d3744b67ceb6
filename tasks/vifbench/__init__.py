"""VifBench-style data for instruction-following verification (docs/architecture.md §11): constraint types, instructions
composed with ¬ ∧ ∨ ⇒ ⇔, synthetic outputs from sentence banks, labels from the reference checkers."""

from autonesy.tasks.vifbench.constraints import CONVENTIONS, Constraint, Instruction, Part
from autonesy.tasks.vifbench.generator import GROUPS, generate, generate_instruction, group_of, label_distribution

__all__ = [
    "CONVENTIONS",
    "GROUPS",
    "Constraint",
    "Instruction",
    "Part",
    "generate",
    "generate_instruction",
    "group_of",
    "label_distribution",
]
