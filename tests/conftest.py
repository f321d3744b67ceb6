"""Every test gets its own LLM response cache: the shared one (``$AUTONESY_LLM_CACHE``) would answer a
test's prompts with another test's canned replies. Set in the environment, so sweep worker
processes started by a test use it too.

``COLUMNS`` is cleared before any test module imports the command line: pytest-xdist's workers set it
to 80, and a rich console made while it is set keeps that width for good, so a test that widens the
terminal for one command (``COLUMNS`` in its environment) saw its output folded and cut under xdist only.

Hypothesis runs without its per-example deadline: a test's speed is not what it checks (speed is
measured in benchmarks/), and on a loaded machine a 200 ms deadline failed a correct report test.

The tests' scripted LLM (``scripted_llm``) is imported here, so its label-reading providers
``oracle:DATA.jsonl`` and ``flawed:DATA.jsonl`` are registered for every
test that names them on a command line (the product has none)."""

from __future__ import annotations

import os

import pytest
import scripted_llm  # noqa: F401  (registers the oracle and flawed providers)
from hypothesis import settings

os.environ.pop("COLUMNS", None)
settings.register_profile("autonesy", deadline=None)
settings.load_profile("autonesy")


@pytest.fixture(autouse=True)
def _own_response_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTONESY_LLM_CACHE", str(tmp_path_factory.mktemp("llm-cache") / "responses.sqlite"))
