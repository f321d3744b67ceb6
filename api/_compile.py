"""Compiling a formula to an SDD over exactly the task's variables: what ``compile`` writes."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from autonesy.tools.config import COMPILE_TIME_LIMIT_S

if TYPE_CHECKING:
    from autonesy.tasks.task import Task
    from autonesy.tools.cnf import CNF
    from autonesy.tools.compile import CompiledSDD


@dataclass(frozen=True)
class Compiled:
    """A formula read in a format, as CNF over the task's variables and as its compiled SDD (auxiliaries
    quantified); ``files``: the DIMACS, SDD and vtree files written, when an ``out`` folder was given."""

    task: str
    format: str
    autofixes: tuple[str, ...]
    formula: CNF = field(repr=False)
    sdd: CompiledSDD = field(repr=False)
    files: tuple[Path, ...] = ()

    @property
    def size(self) -> int:
        """The SDD's size (what a circuit built from it costs)."""
        return self.sdd.size

    @property
    def model_count(self) -> int:
        """How many assignments of the task's variables satisfy the formula (exact)."""
        return self.sdd.model_count()


def compile(
    answer: str | os.PathLike[str],
    *,
    task: Task | str | os.PathLike[str],
    format: str,
    out: str | os.PathLike[str] | None = None,
    name: str = "formula",
    time_limit: float = COMPILE_TIME_LIMIT_S,
) -> Compiled:
    """Convert a formula to CNF and compile it to an SDD over exactly the task's variables (auxiliaries
    quantified): what ``compile`` writes.

    Args:
        answer: the formula's text, or a ``pathlib.Path`` to a file holding it (as ``score`` reads it).
        task: the task (loaded, or its name or file).
        format: the formula's format.
        out: a folder to write ``NAME.cnf`` (DIMACS, task variables named), ``NAME.sdd`` and
            ``NAME.vtree`` into (PySDD's formats); none: nothing is written.
        name: the files' stem.
        time_limit: seconds the compilation may take.

    Raises:
        FormulaError: the answer is not a formula in that format over the task's variables.
        CompilationBudgetExceeded: the SDD did not fit the time limit.

    Examples:
        >>> import autonesy
        >>> names = autonesy.load_task("fashion").names
        >>> c = autonesy.compile(f"{names[0]} AND NOT {names[1]}", task="fashion", format="nat")
        >>> c.model_count == 2 ** 8  # two of the ten variables fixed, eight free
        True
    """
    from autonesy._score import read_answer
    from autonesy._tasks import task_of
    from autonesy.tools import safe_files
    from autonesy.tools.cnf import to_dimacs
    from autonesy.tools.compile import compile_to_sdd

    loaded = task_of(task)
    conversion = read_answer(answer, loaded, format)
    assert conversion.cnf is not None  # read_answer raised otherwise
    sdd = compile_to_sdd(conversion.cnf, time_limit_s=time_limit)
    files: tuple[Path, ...] = ()
    if out is not None:
        folder = safe_files.output_dir(Path(out))
        safe_files.write_text(folder / f"{name}.cnf", to_dimacs(conversion.cnf, loaded.names))
        files = (folder / f"{name}.cnf", *sdd.save(folder, name))
    return Compiled(loaded.name, format, tuple(conversion.autofixes), conversion.cnf, sdd, files)
