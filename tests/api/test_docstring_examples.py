"""The examples in the public API's docstrings run, and say what they print (``doctest``)."""

from __future__ import annotations

import doctest
import importlib

import pytest

import autonesy

MODULES = sorted({"autonesy", *(m for m in autonesy._EXPORTS.values() if m.startswith("autonesy._"))})


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write a run directory write it here
    monkeypatch.setenv("AUTONESY_DATA_DIR", str(tmp_path / "data"))
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    tests = doctest.DocTestFinder().find(module, name)
    assert any(test.examples for test in tests), f"{name} has no docstring example"
    runner = doctest.DocTestRunner(optionflags=flags)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name} (output above)"
