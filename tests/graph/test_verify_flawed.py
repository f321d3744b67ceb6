"""Plumbing checks with the flawed label-reading LLM (the oracle with hand-set error rates): each flaw
does what it is meant to do, and the metrics align decompositions by meaning. Its scores are set by
those rates, so nothing here compares verifiers (issue 30)."""

import json

from scripted_llm import (
    DECOMPOSITIONS,
    FlawedVifBenchLLM,
    Flaws,
    ScriptedChatModel,
    wrong_source,
)

from autonesy.agents.llm import LangChainChatBackend
from autonesy.agents.verify.formulation import parse_formulation
from autonesy.graph.verify.run import VerifyConfig
from autonesy.graph.verify.vifbench import evaluate
from autonesy.tasks.vifbench import generate
from autonesy.tasks.vifbench.constraints import Constraint
from autonesy.tools.formats.expr import evaluate as evaluate_expr
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.verify.checker_run import run_checker_code
from autonesy.tools.verify.checkers import standalone_source

SCRIPTED = LLMSpec.parse("http://scripted.test/v1@fake-model")  # the LLM the scripted backends stand for


def formulation_answer(model: FlawedVifBenchLLM, text: str) -> str:
    prompt = f"<instruction>\n{text}\n</instruction>"
    return model._formulation(prompt)


def test_every_decomposition_flaw_keeps_or_loses_meaning_as_intended():
    records = generate(40, seed=2)
    model = FlawedVifBenchLLM(records, Flaws(decomposition=1.0))
    seen = set()
    for rec in records:
        formulation = parse_formulation(formulation_answer(model, rec["instruction"]))
        flaw = model.flaw_of(rec["instruction"])
        seen.add(flaw)
        values = {}
        for number, (_cid, summary) in enumerate(formulation.constraints, start=1):
            values[number] = all(c.check(rec["output"]) for c in model.views[summary])
        verdict = "sat" if evaluate_expr(formulation.composition.expr, values) else "unsat"
        if flaw in ("renumber", "split", "merge"):  # still right: another numbering or grain, the same meaning
            assert verdict == rec["verdict"], (flaw, rec["id"])
        else:  # a dropped requirement can only turn unsat into sat
            assert flaw == "drop" and (verdict == rec["verdict"] or rec["verdict"] == "unsat")
            assert len(formulation.constraints) == rec["n_constraints"] - 1
    assert seen == set(DECOMPOSITIONS)


def test_a_wrong_checker_runs_but_is_off_by_one_or_case_sensitive():
    count = Constraint("C1", "total_word_count", {"target": 10})  # 7 … 13 words
    text = "one two three four five six seven"
    right, wrong = (
        run_checker_code(code, text) for code in (standalone_source(count.type, count.params), wrong_source(count))
    )
    assert right.ok and wrong.ok and right.value is True and wrong.value is False
    assert run_checker_code(wrong_source(count), " ".join(["w"] * 10)).value is True  # right away from the edge
    keyword = Constraint("C2", "keyword_inclusion", {"keywords": ["lantern"]})
    assert run_checker_code(wrong_source(keyword), "Lantern light.").value is False
    assert keyword.check("Lantern light.") and run_checker_code(wrong_source(keyword), "a lantern").value is True


def test_constraint_scores_align_a_renumbered_or_split_decomposition_by_meaning(tmp_path):
    records = generate(9, seed=6)
    data = tmp_path / "vifbench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    only = Flaws(
        decomposition=1.0,
        decompositions=("renumber", "split"),
        misclassify=0,
        wrong_checker=0,
        judge_logic=0,
        judge_semantic=0,
        holistic=0,
        misread=0,
    )
    model = FlawedVifBenchLLM(records, only)
    backend = LangChainChatBackend(
        ScriptedChatModel(handler=model, model_name="flawed"), "scripted", "flawed", retries=1
    )
    nsvif = evaluate(data, ["nsvif"], VerifyConfig(llm=SCRIPTED), tmp_path / "eval", backend=backend)["verifiers"][
        "nsvif"
    ]
    assert {model.flaw_of(r["instruction"]) for r in records} <= {"renumber", "split"}
    assert "renumber" in {model.flaw_of(r["instruction"]) for r in records}
    rows = [json.loads(line) for line in (tmp_path / "eval" / "results-nsvif.jsonl").read_text().splitlines()]
    assert any(
        [c["id"] for c in r["decomposition"]] != [c["id"] for c in r["constraints"]]
        or [c["summary"] for c in r["decomposition"]] != [c["summary"] for c in r["constraints"]]
        for r in rows
    )
    assert nsvif["overall"]["f1"] == 1.0  # the same meaning, numbered its own way
    # a split constraint aligns with one of its parts: where they differ (one keyword of two present) that part
    # is what is scored, so accuracy stays near 1, not at 1
    assert nsvif["constraints"]["accuracy"] >= 0.95 and nsvif["constraints"]["aligned_share"] >= 0.95
