"""The docs' LLM config file (docs/llms.md) works verbatim: it loads for a keyless local server."""

from __future__ import annotations

import re
from pathlib import Path

from autonesy.agents.llm import backend_from_spec

LLMS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "llms.md"


def toml_blocks() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", LLMS_PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_the_llm_config_example_loads_with_no_key_in_the_environment(tmp_path, monkeypatch):
    for name in ("AUTONESY_LLM_API_KEY", "OPENAI_API_KEY", "MY_SERVER_KEY"):
        monkeypatch.delenv(name, raising=False)
    (example,) = [block for block in toml_blocks() if block.startswith("[llm]")]
    path = tmp_path / "my_llm.toml"
    path.write_text(example, encoding="utf-8")
    backend = backend_from_spec(str(path))
    try:
        assert "qwen3-8b" in backend.label
    finally:
        backend.close()
