"""Directories for the viewer's study pages: oracle-feedback attempts (one that improves its formula over two rounds,
one that repeats a formula already tested), and a second sweep made from a first one's results (every attempt
accepted with F1 1)."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from autonesy.agents.llm import LangChainChatBackend
from autonesy.graph.results import RESULTS_JSONL, read_results
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.tools.llm_spec import LLMSpec

ONE_HOT = "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n" + "".join(
    f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11)
)
GOOD = f"<cnf>\n{ONE_HOT}</cnf>"
BROKEN = "<cnf>\np cnf 10 1\n1 2 banana 0\n</cnf>"
AT_LEAST_ONE = "<cnf>\np cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0\n</cnf>"
TWO_CLAUSES = "<cnf>\np cnf 10 2\n1 2 3 4 5 6 7 8 9 10 0\n-1 -2 0\n</cnf>"


def make_oracle_attempt(run_dir: Path) -> Path:
    """fashion · dimacs · oracle-feedback: a syntax error, fixed to 'at least one' (permissive); semantic round 1
    adds one 'at most one' clause after some reasoning (still permissive); round 2 the one-hot formula (equal,
    F1 1)."""
    answers = [BROKEN, f"[[FIXED]]\n{AT_LEAST_ONE}", f"Let me think again.\n{TWO_CLAUSES}", GOOD]
    return _attempt(run_dir, answers)


def make_repeating_attempt(run_dir: Path) -> Path:
    """fashion · dimacs · oracle-feedback: 'at least one', and the same formula again in semantic round 1 (the
    rounds stop there)."""
    return _attempt(run_dir, [AT_LEAST_ONE, f"Looks right to me.\n{AT_LEAST_ONE}"])


def _attempt(run_dir: Path, answers: list[str]) -> Path:
    backend = LangChainChatBackend(FakeListChatModel(responses=answers), "scripted", "fake", retries=1)
    config = RunConfig(
        task="fashion", format="dimacs", llm=LLMSpec.parse("http://scripted.test/v1@fake"), policy="oracle-feedback"
    )
    run_attempt(config, run_dir, backend=backend)
    return run_dir


def make_perfect_copy(sweep: Path, out: Path) -> Path:
    """A results-only sweep with the rows of ``sweep``, each accepted with F1 1."""
    out.mkdir(parents=True)
    rows = [
        {**r, "status": "accepted", "f1": 1.0, "relation": "equal", "syntax_error": False} for r in read_results(sweep)
    ]
    (out / RESULTS_JSONL).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out
