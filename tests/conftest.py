"""Every test gets its own LLM response cache: the shared one (``$AUTONESY_LLM_CACHE``) would answer a
test's prompts with another test's canned replies. Set in the environment, so sweep worker
processes started by a test use it too."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_response_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTONESY_LLM_CACHE", str(tmp_path_factory.mktemp("llm-cache") / "responses.sqlite"))
