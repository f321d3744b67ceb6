"""Google's IFEval as labelled verification data (docs/architecture.md §11): its 541 prompts with GPT-4's responses
and, per instruction, whether the response follows it by IFEval's own checkers.

The shipped file ``data/ifeval_gpt4.jsonl.gz`` (Apache-2.0, ``data/LICENSE-IFEVAL``; provenance and the
way the labels were made in ``data/IFEVAL.md``) holds one row per prompt: ``key``, ``prompt``,
``instruction_id_list``, ``kwargs``, ``response`` and ``follow_instruction_list`` — IFEval's own
format plus the labels. ``ifeval_records`` turns rows into the project's VifBench records: one
constraint per instruction (``type`` the IFEval id, ``params`` its kwargs), the formula their
conjunction, verdict ``sat`` when every instruction is followed.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from autonesy.tools.errors import AutonesyError
from autonesy.tools.verify.checkers import CHECKER_ATTRIBUTE
from autonesy.tools.verify.ifeval_checkers import IFEVAL_CHECKERS, ifeval_check

SHIPPED = "ifeval_gpt4.jsonl.gz"
ROW_KEYS = ("key", "prompt", "instruction_id_list", "kwargs", "response", "follow_instruction_list")


class IFEvalDataError(AutonesyError, ValueError):
    """A row of IFEval data that cannot be used (one line); the command line prints it as it is."""


def _open(path: Path | None):
    if path is None:
        return gzip.open(
            resources.files("autonesy.tasks.vifbench").joinpath("data", SHIPPED).open("rb"), "rt", encoding="utf-8"
        )
    path = Path(path)
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def read_ifeval(path: Path | None = None) -> list[dict[str, Any]]:
    """The labelled IFEval rows (the shipped file unless ``path`` names another, ``.jsonl`` or ``.jsonl.gz``)."""
    try:
        with _open(path) as handle:
            lines = handle.read().splitlines()
    except OSError as error:
        raise IFEvalDataError(f"cannot read the IFEval data {path}: {error.strerror or error}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise IFEvalDataError(f"{path or SHIPPED}, line {number}: not JSON") from None
        missing = [k for k in ROW_KEYS if k not in row] if isinstance(row, dict) else list(ROW_KEYS)
        if missing:
            raise IFEvalDataError(f"{path or SHIPPED}, line {number}: missing {', '.join(missing)}")
        ids, kwargs, follow = row["instruction_id_list"], row["kwargs"], row["follow_instruction_list"]
        if not (len(ids) == len(kwargs) == len(follow)) or not ids:
            raise IFEvalDataError(
                f"{path or SHIPPED}, line {number}: instruction ids, kwargs and labels differ in length"
            )
        unknown = [i for i in ids if i not in IFEVAL_CHECKERS]
        if unknown:
            raise IFEvalDataError(f"{path or SHIPPED}, line {number}: unknown IFEval instruction {unknown[0]!r}")
        rows.append(row)
    return rows


def _summary(instruction_id: str, params: Mapping[str, Any]) -> str:
    info = getattr(IFEVAL_CHECKERS[instruction_id], CHECKER_ATTRIBUTE)
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "prompt_to_repeat")
    return info.description + (f" ({shown})" if shown else "")


def ifeval_records(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """VifBench records (``graph.vifbench.read_data`` reads them) from labelled IFEval rows."""
    records = []
    for row in rows:
        constraints, labels = [], {}
        for number, (iid, kwargs, follow) in enumerate(
            zip(row["instruction_id_list"], row["kwargs"], row["follow_instruction_list"]), start=1
        ):
            cid = f"C{number}"
            params = {k: v for k, v in (kwargs or {}).items() if v is not None}
            info = getattr(IFEVAL_CHECKERS[iid], CHECKER_ATTRIBUTE)
            constraints.append(
                {"id": cid, "type": iid, "kind": info.kind, "summary": _summary(iid, params), "params": params}
            )
            labels[cid] = bool(follow)
        n = len(constraints)
        records.append(
            {
                "id": f"ifeval-{row['key']}",
                "instruction_id": f"ifeval-{row['key']}",
                "instruction": row["prompt"],
                "output": row["response"],
                "verdict": "sat" if all(labels.values()) else "unsat",
                "labels": labels,
                "n_constraints": n,
                "group": str(n),
                "formula": "\n".join(c["id"] for c in constraints),
                "constraints": constraints,
                "source": "ifeval-gpt4",
            }
        )
    return records


def checker_agreement(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per IFEval instruction type: how often our checker (``tools.ifeval_checkers``) gives IFEval's label,
    and the keys of the prompts where it does not."""
    table: dict[str, dict[str, Any]] = {}
    for row in rows:
        for iid, kwargs, follow in zip(row["instruction_id_list"], row["kwargs"], row["follow_instruction_list"]):
            entry = table.setdefault(iid, {"n": 0, "agree": 0, "disagreements": []})
            entry["n"] += 1
            if ifeval_check(iid, row["response"], kwargs or {}) == bool(follow):
                entry["agree"] += 1
            else:
                entry["disagreements"].append(row["key"])
    return dict(sorted(table.items()))


def ifeval_distribution(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Verdicts per instruction count and follow labels per instruction type."""
    by_count: dict[str, dict[str, int]] = {}
    by_type: dict[str, dict[str, int]] = {}
    for rec in records:
        row = by_count.setdefault(str(rec["n_constraints"]), {"pairs": 0, "sat": 0, "unsat": 0})
        row["pairs"] += 1
        row[rec["verdict"]] += 1
        for constraint in rec["constraints"]:
            entry = by_type.setdefault(constraint["type"], {"true": 0, "false": 0})
            entry["true" if rec["labels"][constraint["id"]] else "false"] += 1
    return {
        "by_count": dict(sorted(by_count.items(), key=lambda kv: int(kv[0]))),
        "by_type": dict(sorted(by_type.items())),
    }


__all__ = [
    "IFEvalDataError",
    "checker_agreement",
    "ROW_KEYS",
    "SHIPPED",
    "ifeval_distribution",
    "ifeval_records",
    "read_ifeval",
]
