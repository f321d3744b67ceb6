"""The NeSy layers as ``torch.nn.Module`` layers built from a formula, for a training loop of your own.

Both compile the formula once to an SDD shaped for batched evaluation (``nesy/constraint.py``) and
evaluate its circuit on the CPU: logits on another device are moved there and the result moved back,
which autograd follows. Neither has parameters to learn; the network whose logits they read does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from autonesy.tools.errors import AutonesyError

if TYPE_CHECKING:
    from autonesy.nesy.constraint import Constraint
    from autonesy.tools.cnf import CNF

Formula = Any  # CNF | DIMACS text | a DIMACS file (Path) | a Score or Compiled record | a RunSummary
REDUCTIONS = ("mean", "sum", "none")


class LayerFormulaError(AutonesyError, ValueError):
    """Something a NeSy layer cannot be built from (the message says what it got and what it takes)."""


def formula_cnf(formula: Formula, num_vars: int | None = None) -> CNF:
    """The CNF of what a layer is built from: a ``CNF``; DIMACS text, or a ``pathlib.Path`` to a DIMACS
    file (``num_vars``: how many of its variables are task variables, default its ``c task_vars``
    comment, else all); a ``Score`` or ``Compiled`` record (its formula); or a run's summary (its
    accepted ``formula.cnf``)."""
    from autonesy.graph.summary import RunSummary
    from autonesy.tools import safe_files
    from autonesy.tools.cnf import CNF, DimacsError, parse_dimacs

    if isinstance(formula, CNF):
        return formula
    if isinstance(getattr(formula, "formula", None), CNF):  # a Score or Compiled record
        return formula.formula
    try:
        if isinstance(formula, RunSummary):  # its accepted formula.cnf, nothing followed below its run directory
            if not formula.accepted:
                raise LayerFormulaError(f"the run in {formula.run_dir} accepted no formula (status {formula.status})")
            formula = safe_files.read_text(Path(formula.run_dir) / "formula.cnf", root=Path(formula.run_dir))
        elif isinstance(formula, os.PathLike):  # a file you name: a link or a pipe is fine
            formula = Path(formula).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LayerFormulaError(f"cannot read the formula: {error}") from None
    if not isinstance(formula, str):
        raise LayerFormulaError(
            f"cannot build a layer from a {type(formula).__name__}: give a CNF, DIMACS text or file, "
            "a Score or Compiled record, or a run's summary"
        )
    try:
        return parse_dimacs(formula, num_vars)
    except DimacsError as error:
        raise LayerFormulaError(f"not a DIMACS formula: {error}") from None


def _constraint(formula: Formula, num_vars: int | None) -> Constraint:
    from autonesy.nesy.constraint import constraint_for

    return constraint_for(formula_cnf(formula, num_vars))


def _reduced(values: torch.Tensor, reduction: str) -> torch.Tensor:
    if reduction == "mean":
        return values.mean()
    return values.sum() if reduction == "sum" else values


def _check_reduction(reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduction!r}; choose one of {', '.join(REDUCTIONS)}")
    return reduction


class SemanticLoss(torch.nn.Module):
    """Semantic loss (Xu et al. 2018) of a formula, a ``torch.nn.Module`` for your own training loop.

    −log P(a sample of the independent outputs σ(logits) satisfies the formula), exact on the formula's
    circuit (KLay). Add it, weighted, to your task loss; predictions stay per output (``logits > 0``).

    Args:
        formula: a ``Score`` or ``Compiled`` record, a run's ``RunSummary`` (its accepted formula),
            a ``CNF``, DIMACS text, or a ``pathlib.Path`` to a DIMACS file.
        num_vars: how many of a DIMACS formula's variables are task variables (default: its
            ``c task_vars N`` comment, else all); the rest are auxiliaries.
        reduction: ``mean`` or ``sum`` over the batch, or ``none`` (one value per row).

    Raises:
        LayerFormulaError: not a formula it can read.
        UnsatisfiableConstraint: a formula without models.

    Examples:
        >>> import autonesy, torch
        >>> sl = autonesy.SemanticLoss("p cnf 2 1\\n1 2 0\\n")  # y1 OR y2
        >>> logits = torch.zeros(1, 2)  # each output true with probability 1/2: the clause holds with 3/4
        >>> torch.allclose(sl(logits), -torch.log(torch.tensor(0.75)))
        True
    """

    def __init__(self, formula: Formula, *, num_vars: int | None = None, reduction: str = "mean") -> None:
        from autonesy.nesy.sl import SemanticLoss as KlaySemanticLoss

        super().__init__()
        self.reduction = _check_reduction(reduction)
        self.constraint = _constraint(formula, num_vars)
        self.circuit = KlaySemanticLoss(self.constraint).fused

    @property
    def num_vars(self) -> int:
        """The formula's task variables: the width of the logits it reads."""
        return self.constraint.num_vars

    def log_wmc(self, logits: torch.Tensor) -> torch.Tensor:
        """log P(y ⊨ K) for y drawn from the independent outputs σ(logits), per row: (B, N) → (B,)."""
        if logits.ndim != 2 or logits.shape[1] != self.num_vars:
            raise ValueError(f"expected logits of shape (B, {self.num_vars}), got {tuple(logits.shape)}")
        return self.circuit(logits.cpu()).to(logits.device)

    def forward(self, logits: torch.Tensor) -> torch.Tensor:
        """The semantic loss of a batch of logits (B, N), reduced over the batch as ``reduction`` says."""
        return _reduced(-self.log_wmc(logits), self.reduction)


class SPL(torch.nn.Module):
    """Semantic probabilistic layer (Ahmed et al. 2022) of a formula, a ``torch.nn.Module``.

    p(y | x) ∝ Π_i σ(±logit_i) over the assignments that satisfy the formula, exact on its circuit
    (cirkit). Called on logits and labels it is the negative log-likelihood (a label that violates the
    formula has none and is left out); ``predict`` gives the most probable assignment, which always
    satisfies the formula.

    Args:
        formula: a ``Score`` or ``Compiled`` record, a run's ``RunSummary`` (its accepted formula),
            a ``CNF``, DIMACS text, or a ``pathlib.Path`` to a DIMACS file.
        num_vars: how many of a DIMACS formula's variables are task variables (default: its
            ``c task_vars N`` comment, else all); the rest are auxiliaries.
        reduction: ``mean`` or ``sum`` over the rows whose label satisfies the formula, or ``none``
            (one value per row, +inf for a violating label).

    Raises:
        LayerFormulaError: not a formula it can read.
        UnsatisfiableConstraint: a formula without models.

    Examples:
        >>> import autonesy, torch
        >>> spl = autonesy.SPL("p cnf 2 1\\n-1 -2 0\\n")  # not both
        >>> logits = torch.tensor([[3.0, 2.0]])  # alone, both would be true
        >>> spl.predict(logits).tolist()  # the best assignment with at most one true
        [[1, 0]]
        >>> y = torch.tensor([[1, 0]])  # p(1,0) = σ(3)σ(-2) / (σ(3)σ(-2) + σ(-3)σ(2) + σ(-3)σ(-2))
        >>> q = lambda a, b: torch.sigmoid(torch.tensor(a)) * torch.sigmoid(torch.tensor(b))
        >>> torch.allclose(spl(logits, y), -torch.log(q(3., -2.) / (q(3., -2.) + q(-3., 2.) + q(-3., -2.))))
        True
    """

    def __init__(self, formula: Formula, *, num_vars: int | None = None, reduction: str = "mean") -> None:
        from autonesy.nesy.spl import SPL as CirkitSPL

        super().__init__()
        self.reduction = _check_reduction(reduction)
        self.constraint = _constraint(formula, num_vars)
        self.layer = CirkitSPL(self.constraint)

    @property
    def num_vars(self) -> int:
        """The formula's task variables: the width of the logits and labels it reads."""
        return self.constraint.num_vars

    def log_likelihood(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """log p(y | logits) per row, −inf where y violates the formula: (B, N), (B, N) → (B,)."""
        return self.layer.log_likelihood(logits.cpu(), y.cpu()).to(logits.device)

    def forward(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The negative log-likelihood of labels y (B, N) in {0, 1}, over the rows whose label satisfies
        the formula (0 when none does), reduced as ``reduction`` says (``none``: (B,), +inf on the others)."""
        if self.reduction == "none":
            return -self.log_likelihood(logits, y)
        loss = self.layer.loss(logits.cpu(), y.cpu()).to(logits.device)  # the mean over the kept rows
        if self.reduction == "sum":
            return loss * int(self.layer.satisfies(y.cpu()).sum())
        return loss

    @torch.no_grad()
    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """The most probable assignment of each row (B, N) int64, each one a model of the formula."""
        return self.layer.predict(logits.cpu()).to(logits.device)
