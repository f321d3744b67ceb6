"""The offline IFEval track: Nsvif's checker-and-solver half scored on Google's IFEval without reading
the answers.

For each of IFEval's prompts the constraints and the formula come from IFEval's own instruction
metadata — one constraint per ``instruction_id_list`` entry with its ``kwargs``, the formula their
conjunction (IFEval's strict prompt-level rule: every instruction followed) — never from the labels.
Our checkers (``autonesy.tools.verify.ifeval_checkers``) decide each constraint, Z3
(``autonesy.tools.verify.solver.decide``) decides the formula, and only then are the verdicts compared
with ``follow_instruction_list``: instruction-level accuracy (checker value = label) and prompt-level
accuracy (Z3's verdict = "every label true").

This measures the half of the verifier that runs after formulation and checker writing: what the
checkers and the solver do when the decomposition is right. It says nothing about an LLM's
formulation, classification, checker code or judging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from autonesy.graph.verify.run import VerifyError
from autonesy.tasks.vifbench.ifeval import IFEvalDataError, read_ifeval
from autonesy.tools.verify.ifeval_checkers import ifeval_check
from autonesy.tools.verify.metrics import binary_scores
from autonesy.tools.verify.solver import decide, parse_composition


def ifeval_constraints(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The constraints of one IFEval row from its metadata only (the labels are not looked at)."""
    return [
        {"id": f"C{number}", "type": iid, "params": {k: v for k, v in (kwargs or {}).items() if v is not None}}
        for number, (iid, kwargs) in enumerate(zip(row["instruction_id_list"], row["kwargs"]), start=1)
    ]


def verify_ifeval_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Nsvif's checker-and-solver verdict on one row: per-constraint values and Z3's verdict."""
    constraints = ifeval_constraints(row)
    ids = [c["id"] for c in constraints]
    composition = parse_composition("\n".join(ids), ids)  # one requirement per line: their conjunction
    try:
        values = {c["id"]: ifeval_check(c["type"], row["response"], c["params"]) for c in constraints}
    except (TypeError, ValueError, AttributeError) as error:  # kwargs a checker cannot take
        raise VerifyError(f"IFEval key {row['key']}: {type(error).__name__}: {error}") from None
    decision = decide(composition, values)
    return {"key": row["key"], "constraints": constraints, "values": values, "verdict": decision.verdict}


def ifeval_offline(source: Path | None = None) -> dict[str, Any]:
    """Instruction- and prompt-level accuracy against IFEval's strict labels, with every disagreement."""
    try:
        rows = read_ifeval(source)
    except IFEvalDataError as error:
        raise VerifyError(str(error)) from None
    return score_ifeval(rows)


def score_ifeval(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The offline track on labelled rows: each verified from metadata first, then compared with its labels."""
    instructions = agree = 0
    pairs = []
    disagreements = []
    for row in rows:
        result = verify_ifeval_row(row)
        labels = [bool(follow) for follow in row["follow_instruction_list"]]
        label_verdict = "sat" if all(labels) else "unsat"
        pairs.append((label_verdict, result["verdict"]))
        for constraint, label in zip(result["constraints"], labels):
            instructions += 1
            ours = result["values"][constraint["id"]]
            agree += ours == label
            if ours != label:
                disagreements.append(
                    {
                        "key": row["key"],
                        "instruction": constraint["type"],
                        "ours": ours,
                        "ifeval": label,
                        "prompt_verdict": {"ours": result["verdict"], "ifeval": label_verdict},
                    }
                )
    prompts = binary_scores(pairs)
    return {
        "track": "ifeval-offline",
        "measures": "checkers and Z3 on IFEval's own constraint metadata (no formulation, no LLM)",
        "instructions": {"n": instructions, "agree": agree, "accuracy": agree / instructions if instructions else None},
        "prompts": {
            **prompts,
            "agree": prompts["tp"] + prompts["tn"],
            "accuracy": prompts["pass_at_1"],
            "label_sat": sum(label == "sat" for label, _ in pairs),
        },
        "disagreements": disagreements,
    }


__all__ = ["ifeval_constraints", "ifeval_offline", "score_ifeval", "verify_ifeval_row"]
