"""``vifbench eval`` reads no label before it scores: with every label flipped, each verifier's verdicts stay
where they were and only the scores move (the flipped data's accuracy is the complement of the original's)."""

import hashlib
import json

import pytest
from scripted_llm import ScriptedChatModel, ScriptedRoles

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify import JudgeAgent
from autonesy.agents.verify.prompts import SATISFIED, VIOLATED
from autonesy.graph.tracer import Tracer
from autonesy.graph.verify.run import VerifyConfig, VerifyError
from autonesy.graph.verify.vifbench import audit_semantic_labels, evaluate, read_optimised_on
from autonesy.tasks.vifbench import generate
from autonesy.tools.llm_spec import LLMSpec

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@blind-model")


def blind(prompt: str) -> str:
    """A judge that sees only the prompt: its verdict is a hash of it (it cannot know the labels)."""
    return SATISFIED if hashlib.sha256(prompt.encode()).digest()[0] % 2 else VIOLATED


def flipped(records):
    for rec in records:
        yield {
            **rec,
            "verdict": "unsat" if rec["verdict"] == "sat" else "sat",
            "labels": {cid: not value for cid, value in rec["labels"].items()},
        }


def test_flipping_every_label_moves_no_verdict(tmp_path):
    records = generate(18)
    data, flip = tmp_path / "data.jsonl", tmp_path / "flipped.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    flip.write_text("".join(json.dumps(r) + "\n" for r in flipped(records)), encoding="utf-8")
    verifiers = ["judge", "conv-cot"]
    runs = {}
    for name, path in (("original", data), ("flipped", flip)):
        backend = LangChainChatBackend(ScriptedChatModel(answer=blind), "scripted", "blind", retries=1)
        report = evaluate(path, verifiers, VerifyConfig(llm=SCRIPTED), tmp_path / name, backend=backend)
        rows = {
            v: [json.loads(line) for line in (tmp_path / name / f"results-{v}.jsonl").read_text().splitlines()]
            for v in verifiers
        }
        runs[name] = (report, rows)
    for verifier in verifiers:
        original = {r["id"]: r["predicted"] for r in runs["original"][1][verifier]}
        assert original == {r["id"]: r["predicted"] for r in runs["flipped"][1][verifier]}
        assert set(original.values()) <= {"sat", "unsat", "unknown"} and len(original) == 18
        decided = [r for r in runs["original"][1][verifier] if r["predicted"] in ("sat", "unsat")]
        assert decided
        right = sum(r["predicted"] == r["label"] for r in decided)
        wrong = sum(
            r["predicted"] != r["label"] for r in runs["flipped"][1][verifier] if r["predicted"] in ("sat", "unsat")
        )
        assert right == wrong  # what was right against the labels is wrong against their flips


def test_gepa_cot_is_scored_only_on_instructions_its_guidance_never_saw(tmp_path):
    records = generate(18)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    backend = LangChainChatBackend(ScriptedChatModel(answer=blind), "scripted", "blind", retries=1)
    config = VerifyConfig(llm=SCRIPTED, judge_guidance="Check every constraint, one at a time.")
    with pytest.raises(VerifyError, match="not optimised on"):
        evaluate(data, ["gepa-cot"], config, tmp_path / "refused", backend=backend)
    seen = [records[0]["instruction_id"], records[5]["instruction_id"]]
    report = evaluate(data, ["gepa-cot", "judge"], config, tmp_path / "run", backend=backend, optimised_on=seen)
    assert report["pairs"] == 16 and report["gepa_split"] == {"optimised_on_instructions": 2, "left_out_pairs": 2}
    for verifier in ("gepa-cot", "judge"):
        scored = [
            json.loads(line)["instruction_id"] for line in (tmp_path / "run" / f"results-{verifier}.jsonl").open()
        ]
        assert len(scored) == 16 and not set(scored) & set(seen)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["gepa_split"]["left_out_pairs"] == 2
    assert "optimised on 2 instructions" in (tmp_path / "run" / "report.md").read_text()


def test_eval_reads_the_split_from_the_optimize_record_beside_the_guidance(tmp_path):
    guidance = tmp_path / "opt" / "guidance.txt"
    guidance.parent.mkdir()
    guidance.write_text("Check every constraint.\n")
    with pytest.raises(VerifyError, match="no optimize.json"):
        read_optimised_on(guidance)
    (guidance.parent / "optimize.json").write_text(json.dumps({"instructions_used": ["vif-c2-000"]}))
    assert read_optimised_on(guidance) == ["vif-c2-000"]


def test_a_judge_audits_the_semantic_labels_of_a_sample_per_group(tmp_path):
    """§A.2: 10 % of each group's outputs (at least one) checked for tone and topic; a judge that finds every
    output off-topic and off-tone disagrees exactly with the sampled labels that say on-topic / on-tone."""
    records = generate(18)  # two outputs in each of the nine groups: one sampled per group

    def violated(prompt):
        return "\n".join(f"{cid}: no. {VIOLATED}" for cid in ScriptedRoles.listed(prompt))

    backend = LangChainChatBackend(ScriptedChatModel(answer=violated), "scripted", "audit", retries=1)
    audit = audit_semantic_labels(records, JudgeAgent(backend), Tracer(tmp_path))
    assert audit["sampled_outputs"] == 9 and audit["undecided"] == 0
    sampled = {d["id"] for d in audit["disagreements"]}
    assert audit["disagreements"] and all(d["label"] is True for d in audit["disagreements"])
    semantic = {rec["id"]: [c["id"] for c in rec["constraints"] if c["kind"] == "semantic"] for rec in records}
    assert audit["judged"] >= 9 and audit["agree"] == audit["judged"] - len(audit["disagreements"])
    for rec in records:
        if rec["id"] in sampled:
            true = [cid for cid in semantic[rec["id"]] if rec["labels"][cid]]
            assert sorted(d["constraint"] for d in audit["disagreements"] if d["id"] == rec["id"]) == sorted(true)
