"""The offline tracks: constraints and formula from the metadata (IFEval's, the generator's), our
checkers, Z3; the labels are read only to score. They measure the checker-and-solver half of Nsvif."""

import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.verify.offline import data_offline, ifeval_offline, score_records, verify_record
from autonesy.graph.verify.run import VerifyError
from autonesy.tasks.vifbench import generate
from autonesy.tasks.vifbench.ifeval import ifeval_records, read_ifeval

# written by reading the responses against IFEval's instruction descriptions
HAND_ROWS = [
    {  # no comma: holds; all lower case: holds -> sat
        "key": 1,
        "prompt": "p",
        "instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"],
        "kwargs": [{}, {}],
        "response": "the sky is blue and the sea is green.",
        "follow_instruction_list": [True, True],
    },
    {  # a comma: fails -> unsat
        "key": 2,
        "prompt": "p",
        "instruction_id_list": ["punctuation:no_comma"],
        "kwargs": [{}],
        "response": "Red, green and blue.",
        "follow_instruction_list": [False],
    },
    {  # the keyword "ocean" is there, "desert" is not -> unsat
        "key": 3,
        "prompt": "p",
        "instruction_id_list": ["keywords:existence", "keywords:existence"],
        "kwargs": [{"keywords": ["ocean"]}, {"keywords": ["desert"]}],
        "response": "The ocean is wide.",
        "follow_instruction_list": [True, False],
    },
]


def without_labels(rec):
    return {k: v for k, v in rec.items() if k not in ("labels", "verdict")}


def test_hand_rows_get_the_verdicts_read_off_the_text():
    records = ifeval_records(HAND_ROWS)
    assert [verify_record(without_labels(r))["verdict"] for r in records] == ["sat", "unsat", "unsat"]
    assert verify_record(records[2])["values"] == {"C1": True, "C2": False}
    report = score_records(records, "hand")
    assert report["constraints"] == {"decided": 5, "agree": 5, "accuracy": 1.0, "semantic_unknown": 0}
    assert report["prompts"]["agree"] == 3 and report["disagreements"] == []


@pytest.fixture(scope="module")
def rows():
    return read_ifeval()


def test_verdicts_do_not_depend_on_the_labels(rows):
    for rec in ifeval_records(rows[::25]):
        flipped = {**rec, "labels": {k: not v for k, v in rec["labels"].items()}, "verdict": "x"}
        assert verify_record(without_labels(rec)) == verify_record(rec) == verify_record(flipped)


def test_the_shipped_gpt4_responses():
    report = ifeval_offline()
    # data/IFEVAL.md: our checkers disagree with IFEval on two instructions, keys 3572 and 3617
    # (change_case:english_capital, where langdetect calls a few capitalised names English)
    assert report["constraints"] == {"decided": 834, "agree": 832, "accuracy": 832 / 834, "semantic_unknown": 0}
    assert [(d["id"], d["type"], d["ours"], d["label"]) for d in report["disagreements"]] == [
        ("ifeval-3572", "change_case:english_capital", False, True),
        ("ifeval-3617", "change_case:english_capital", False, True),
    ]
    prompts = report["prompts"]
    assert (prompts["n"], prompts["label_sat"], prompts["agree"], prompts["fp"], prompts["fn"]) == (541, 417, 539, 0, 2)


def test_the_command_prints_the_accuracies_and_errors_in_one_line(tmp_path):
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in HAND_ROWS))
    result = CliRunner().invoke(app, ["vifbench", "offline-ifeval", "--source", str(source), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["prompts"]["accuracy"] == 1.0
    plain = CliRunner().invoke(app, ["vifbench", "offline-ifeval", "--source", str(source)])
    assert "constraint-level accuracy 5/5" in plain.stdout and "prompt-level accuracy 3/3" in plain.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**HAND_ROWS[2], "kwargs": [{"keywords": ["x"], "nope": 1}, {}]}) + "\n")
    with pytest.raises(VerifyError, match="pair ifeval-3: TypeError"):
        score_records(ifeval_records(read_ifeval(bad)), "bad")
    result = CliRunner().invoke(app, ["vifbench", "offline-ifeval", "--source", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot read the IFEval data")


def test_the_vifbench_track_leaves_tone_and_topic_unknown(tmp_path):
    records = generate(18)  # a sat and an unsat round of every group
    data = tmp_path / "vifbench.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = data_offline(data)
    semantic = sum(c["kind"] == "semantic" for r in records for c in r["constraints"])
    logic = sum(c["kind"] == "logic" for r in records for c in r["constraints"])
    # the generator's logic labels are the reference checkers': agreement by construction
    assert report["constraints"] == {"decided": logic, "agree": logic, "accuracy": 1.0, "semantic_unknown": semantic}
    prompts = report["prompts"]
    # an unsat pair breaks a logic constraint (decided); a sat one is unknown until tone and topic are judged
    unsat = sum(r["verdict"] == "unsat" for r in records)
    assert (prompts["tn"], prompts["unknown"], prompts["fp"], prompts["fn"]) == (unsat, len(records) - unsat, 0, 0)
    result = CliRunner().invoke(app, ["vifbench", "offline", "--data", str(data), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["constraints"]["decided"] == logic
    stripped = tmp_path / "stripped.jsonl"
    stripped.write_text(json.dumps({k: v for k, v in records[0].items() if k != "constraints"}) + "\n")
    result = CliRunner().invoke(app, ["vifbench", "offline", "--data", str(stripped)])
    assert result.exit_code == 1 and "no constraint metadata" in result.stderr
