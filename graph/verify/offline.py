"""Offline tracks: Nsvif's checker-and-solver half scored without reading the answers.

Each labelled record carries its constraints as metadata (type and parameters) and its formula. The
track decides each constraint with our checkers — VifBench's reference checkers
(``autonesy.tools.verify.checkers``) or, for IFEval's instruction ids, ``ifeval_checkers`` —, leaves
VifBench's semantic constraints (tone, topic) ``unknown`` (no judge runs offline), and lets Z3
(``autonesy.tools.verify.solver.decide``) decide the formula; a verdict that an unknown constraint
could flip stays ``unknown``. Only then are the values and the verdict compared with the record's
labels: constraint-level accuracy over the decided constraints, prompt-level accuracy over all.

- **IFEval** (``ifeval_offline``): IFEval's own metadata (``instruction_id_list`` + ``kwargs``; the
  formula their conjunction, IFEval's strict prompt-level rule) on the 541 GPT-4 responses, against
  Google's strict labels.
- **VifBench** (``data_offline``): the generator's constraint metadata. On data this project
  generated the logic labels *are* the reference checkers', so agreement there is by construction; the
  track's use is data labelled some other way.

Both measure the half of the verifier that runs after formulation and checker writing — what the
checkers and the solver do when the decomposition is right — not an LLM's formulation,
classification, checker code or judging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from autonesy.graph.verify.run import VerifyError
from autonesy.graph.verify.vifbench import read_data
from autonesy.tasks.vifbench.ifeval import ifeval_records, read_ifeval
from autonesy.tools.formats.base import FormatError
from autonesy.tools.verify.checkers import LOGIC_TYPES, SEMANTIC_TYPES, reference_check
from autonesy.tools.verify.ifeval_checkers import IFEVAL_CHECKERS, ifeval_check
from autonesy.tools.verify.metrics import binary_scores
from autonesy.tools.verify.solver import CompositionError, decide, parse_composition


def constraint_value(constraint_type: str, response: str, params: Mapping[str, Any]) -> bool | None:
    """Our checker's value of one constraint from its metadata; None for VifBench's tone and topic (they
    need a judge). Every IFEval id has a checker (the response language by script and function words)."""
    if constraint_type in LOGIC_TYPES:
        return reference_check(constraint_type, response, params)
    if constraint_type in IFEVAL_CHECKERS:
        return ifeval_check(constraint_type, response, dict(params))
    if constraint_type in SEMANTIC_TYPES:
        return None
    raise VerifyError(f"no checker for the constraint type {constraint_type!r}")


def verify_record(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The checker-and-solver verdict on one record from its ``constraints``, ``formula`` and ``output`` only."""
    constraints = rec.get("constraints") or []
    ids = [str(c.get("id")) for c in constraints]
    try:
        composition = parse_composition(rec.get("formula") or "\n".join(ids), ids)
        values = {
            cid: constraint_value(c["type"], rec["output"], c.get("params") or {}) for cid, c in zip(ids, constraints)
        }
    except (CompositionError, FormatError, KeyError) as error:
        raise VerifyError(f"pair {rec.get('id')}: {type(error).__name__}: {error}") from None
    except (TypeError, ValueError, AttributeError) as error:  # parameters a checker cannot take
        raise VerifyError(f"pair {rec.get('id')}: {type(error).__name__}: {error}") from None
    return {"id": rec["id"], "values": values, "verdict": decide(composition, values).verdict}


def score_records(records: Iterable[Mapping[str, Any]], track: str) -> dict[str, Any]:
    """The offline track on labelled records: each verified from its metadata first, then compared with its labels."""
    decided = agree = semantic = 0
    pairs = []
    disagreements = []
    for rec in records:
        result = verify_record(rec)
        pairs.append((rec["verdict"], result["verdict"]))
        types = {c["id"]: c["type"] for c in rec["constraints"]}
        for cid, ours in result["values"].items():
            if ours is None:
                semantic += 1
                continue
            label = bool(rec["labels"][cid])
            decided += 1
            agree += ours == label
            if ours != label:
                disagreements.append(
                    {
                        "id": rec["id"],
                        "constraint": cid,
                        "type": types[cid],
                        "ours": ours,
                        "label": label,
                        "verdict": {"ours": result["verdict"], "label": rec["verdict"]},
                    }
                )
    prompts = binary_scores(pairs)
    return {
        "track": track,
        "measures": "our checkers and Z3 on the constraint metadata (no formulation, no LLM; semantic ones unknown)",
        "constraints": {
            "decided": decided,
            "agree": agree,
            "accuracy": agree / decided if decided else None,
            "semantic_unknown": semantic,
        },
        "prompts": {
            **prompts,
            "agree": prompts["tp"] + prompts["tn"],
            "accuracy": (prompts["tp"] + prompts["tn"]) / prompts["n"] if prompts["n"] else None,
            "label_sat": sum(label == "sat" for label, _ in pairs),
        },
        "disagreements": disagreements,
    }


def ifeval_offline(source: Path | None = None) -> dict[str, Any]:
    """The IFEval track: the shipped GPT-4 responses (or ``source``) against Google's strict labels."""
    return score_records(ifeval_records(read_ifeval(source)), "ifeval-offline")


def data_offline(path: Path) -> dict[str, Any]:
    """The track on VifBench-format data (``vifbench generate`` or ``vifbench import`` output)."""
    records = read_data(Path(path))
    missing = [r["id"] for r in records if not r.get("constraints") or "labels" not in r]
    if missing:
        raise VerifyError(f"pair {missing[0]} has no constraint metadata or labels: the offline track needs both")
    return score_records(records, "vifbench-offline")


__all__ = ["constraint_value", "data_offline", "ifeval_offline", "score_records", "verify_record"]
