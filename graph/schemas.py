"""The JSON Schemas of what a run and a sweep write, generated from the models that write them.

``docs/schemas/`` holds them for readers in other languages; ``tests/graph/test_schemas.py`` fails
when a model changes and the checked-in file does not, so the documented format cannot drift.
Regenerate with ``python -m autonesy.graph.schemas docs/schemas``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from autonesy.graph.results import ResultsRow
from autonesy.graph.summary import RunSummary
from autonesy.graph.verify.summary import VerificationSummary
from autonesy.tools import safe_files

SCHEMAS: dict[str, type[BaseModel]] = {
    "run-summary.schema.json": RunSummary,  # summary.json
    "results-row.schema.json": ResultsRow,  # a line of results.jsonl
    "verification-summary.schema.json": VerificationSummary,  # a verification's summary.json
}


def schema_text(model: type[BaseModel]) -> str:
    """The model's JSON Schema (what it writes) as the checked-in file holds it."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **model.model_json_schema(mode="serialization"),
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    """Write every schema into ``directory``; the paths written."""
    directory = safe_files.output_dir(directory)
    written = []
    for name, model in SCHEMAS.items():
        safe_files.write_text(directory / name, schema_text(model), root=directory)
        written.append(directory / name)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(path)
