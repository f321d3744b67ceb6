"""autonesy: LLM agents that formalize natural-language constraints into CNF, score them against an
expert formula by model counting, and train neuro-symbolic predictors with them — the Python API.

Importing ``autonesy`` loads nothing heavy (no torch, LangGraph, LangChain or Ray): each public name
is imported from its private module the first time it is used.

Tasks: ``load_task``, ``load_data``. Formulas: ``score``, ``compile``. Agents: ``formalize`` (one
attempt), ``sweep`` (a grid), ``read_results``, ``read_run``. Instruction following: ``verify``.
Training: ``SemanticLoss``, ``SPL`` (``torch.nn.Module`` layers built from a formula). Extending
(docs/plugins.md): the decorators ``policy``, ``task``, ``provider``, and ``Policy`` to write a
policy against.

Examples:
    >>> import autonesy
    >>> autonesy.score("p cnf 10 1\\n1 2 3 4 5 6 7 8 9 10 0\\n", task="fashion", format="dimacs").relation
    'permissive'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it (imported on first use)
_EXPORTS: dict[str, str] = {
    "AgentTurn": "autonesy.agents.policies",
    "AttemptSpec": "autonesy.agents.policies",
    "AutonesyError": "autonesy.tools.errors",
    "Compiled": "autonesy._compile",
    "FormulaError": "autonesy._score",
    "LayerFormulaError": "autonesy._nesy",
    "ResultsError": "autonesy._results",
    "RunSummary": "autonesy.graph.summary",
    "SPL": "autonesy._nesy",
    "Score": "autonesy._score",
    "SemanticLoss": "autonesy._nesy",
    "SweepResult": "autonesy.graph.sweep.run",
    "Policy": "autonesy.agents.policies",
    "Task": "autonesy.tasks.task",
    "VerificationSummary": "autonesy.graph.verify.summary",
    "compile": "autonesy._compile",
    "formalize": "autonesy._formalize",
    "load_data": "autonesy._tasks",
    "load_task": "autonesy._tasks",
    "policy": "autonesy.tools.registry",
    "provider": "autonesy.tools.registry",
    "read_results": "autonesy._results",
    "read_run": "autonesy._results",
    "score": "autonesy._score",
    "sweep": "autonesy._sweep",
    "task": "autonesy.tools.registry",
    "verify": "autonesy._verify",
}

if TYPE_CHECKING:  # what type checkers and the docs generator see (tests/api/test_exports.py: the same names)
    from autonesy._compile import Compiled as Compiled
    from autonesy._compile import compile as compile
    from autonesy._formalize import formalize as formalize
    from autonesy._nesy import SPL as SPL
    from autonesy._nesy import LayerFormulaError as LayerFormulaError
    from autonesy._nesy import SemanticLoss as SemanticLoss
    from autonesy._results import ResultsError as ResultsError
    from autonesy._results import read_results as read_results
    from autonesy._results import read_run as read_run
    from autonesy._score import FormulaError as FormulaError
    from autonesy._score import Score as Score
    from autonesy._score import score as score
    from autonesy._sweep import sweep as sweep
    from autonesy._tasks import load_data as load_data
    from autonesy._tasks import load_task as load_task
    from autonesy._verify import verify as verify
    from autonesy.agents.policies import AgentTurn as AgentTurn
    from autonesy.agents.policies import AttemptSpec as AttemptSpec
    from autonesy.agents.policies import Policy as Policy
    from autonesy.graph.summary import RunSummary as RunSummary
    from autonesy.graph.sweep.run import SweepResult as SweepResult
    from autonesy.graph.verify.summary import VerificationSummary as VerificationSummary
    from autonesy.tasks.task import Task as Task
    from autonesy.tools.errors import AutonesyError as AutonesyError
    from autonesy.tools.registry import policy as policy
    from autonesy.tools.registry import provider as provider
    from autonesy.tools.registry import task as task

__all__ = [  # the names above, as a list tools read without running it (tests/api/test_exports.py)
    "AgentTurn",
    "AttemptSpec",
    "AutonesyError",
    "Compiled",
    "FormulaError",
    "LayerFormulaError",
    "Policy",
    "ResultsError",
    "RunSummary",
    "SPL",
    "Score",
    "SemanticLoss",
    "SweepResult",
    "Task",
    "VerificationSummary",
    "compile",
    "formalize",
    "load_data",
    "load_task",
    "policy",
    "provider",
    "read_results",
    "read_run",
    "score",
    "sweep",
    "task",
    "verify",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'autonesy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
