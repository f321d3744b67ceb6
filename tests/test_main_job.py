"""The README's main job, as a user runs it: ``autonesy-agent run --task warcraft`` on the embedded
model, end to end (formalize under the grammar, check, repair, compile, score, train SPL and SL).
Skipped, with the reason, when the ``[local]`` extra is not installed; ``.ci/run`` installs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from local_extra import local_extra_missing

MISSING = local_extra_missing()


@pytest.mark.skipif(MISSING is not None, reason=f"the [local] extra is not installed: {MISSING}")
def test_the_main_job_runs_end_to_end(tmp_path):
    command = shutil.which("autonesy-agent", path=str(Path(sys.executable).parent)) or "autonesy-agent"
    env = {k: v for k, v in os.environ.items() if k not in ("AUTONESY_LLM", "OPENAI_API_KEY")}
    env["AUTONESY_DATA_DIR"] = str(tmp_path / "data")
    done = subprocess.run(
        [command, "run", "--task", "warcraft", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["llm"].startswith("local") and summary["decoding"] == "grammar"
    assert summary["status"] in ("accepted", "rejected") and summary["llm_calls"] >= 1
    assert "training: spl,sl" in done.stderr and "… formalizing the description" in done.stderr
    if summary["status"] == "accepted":
        names = {p.name for p in (tmp_path / "run").iterdir()}
        assert {"formula.cnf", "formula.txt", "metrics.json", "downstream.json"} <= names
        downstream = json.loads((tmp_path / "run" / "downstream.json").read_text())
        assert set(downstream["results"]) == {"spl", "sl"} and downstream["baseline"] is not None
