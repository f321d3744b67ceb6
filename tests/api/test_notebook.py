"""The ten-line notebook example of docs/api.md, run as written against an OpenAI-compatible endpoint:
the loopback fake server answers with a right formula for fashion (exactly one of its 10 classes,
written here from the task's description), so the example must formalize, score it equal to the
ground truth, and train a classifier whose predictions mostly pick exactly one class."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import torch
from loopback_llm import LoopbackLLM

import autonesy

ROOT = Path(__file__).resolve().parents[2]
MARK = "# not run: needs an OpenAI-compatible endpoint (tests/api/test_notebook.py"
ENDPOINT = "http://localhost:8000/v1@my-model"


def notebook_example() -> str:
    """The example's code, as docs/api.md shows it."""
    blocks = re.findall(r"^```python\n(.*?)^```$", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S | re.M)
    (code,) = [block for block in blocks if block.startswith(MARK)]
    return code


def exactly_one_in_nat(names: list[str]) -> str:
    """At least one class, and no two: the fashion task's rule ("exactly one class") in NAT."""
    lines = [" OR ".join(names)] + [f"NOT ({a} AND {b})" for a, b in itertools.combinations(names, 2)]
    return "<cnf>\n" + "\n".join(lines) + "\n</cnf>"


def test_the_notebook_example_runs_against_an_endpoint(tmp_path, monkeypatch):
    code = notebook_example()
    lines = [line for line in code.splitlines() if line.strip() and not line.startswith("#")]
    assert len(lines) <= 12  # the imports and ten lines
    assert ENDPOINT in code
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTONESY_DATA_DIR", str(tmp_path / "data"))
    names = list(autonesy.load_task("fashion").names)
    torch.manual_seed(0)
    with LoopbackLLM(exactly_one_in_nat(names)) as server:
        namespace: dict = {}
        exec(compile(code.replace(ENDPOINT, server.spec()), "docs/api.md", "exec"), namespace)
        asked = server.requests[0]["json"]["messages"]
    run, score, net, sl, data = (namespace[k] for k in ("run", "score", "net", "sl", "data"))
    assert any("tshirt_top" in message["content"] for message in asked)  # the task's variables were in the prompt
    assert run.status == "accepted" and run.llm_calls >= 1
    assert Path(run.run_dir).resolve().is_relative_to(tmp_path.resolve())  # out="runs/fashion", here
    assert (score.relation, score.f1, score.tp, score.fp, score.fn) == ("equal", 1.0, 10, 0, 0)
    assert isinstance(sl, torch.nn.Module)
    with torch.no_grad():
        predicted = net(torch.tensor(data.test.x)) > 0
    one_class = (predicted.sum(dim=1) == 1).float().mean().item()
    right = (predicted == torch.tensor(data.test.y).bool()).all(dim=1).float().mean().item()
    # untrained, ten independent coin flips hold exactly one true 10/1024 of the time, and chance accuracy is 1/10
    assert one_class > 0.3 and right > 0.3, (one_class, right)
