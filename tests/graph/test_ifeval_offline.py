"""The offline IFEval track: constraints and formula from IFEval's metadata, our checkers, Z3; the labels
are read only to score. Measures the checker-and-solver half of Nsvif."""

import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.verify.offline import ifeval_offline, score_ifeval, verify_ifeval_row
from autonesy.graph.verify.run import VerifyError
from autonesy.tasks.vifbench.ifeval import read_ifeval

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


def without_labels(row):
    return {k: v for k, v in row.items() if k != "follow_instruction_list"}


def test_hand_rows_get_the_verdicts_read_off_the_text():
    assert [verify_ifeval_row(without_labels(r))["verdict"] for r in HAND_ROWS] == ["sat", "unsat", "unsat"]
    assert verify_ifeval_row(HAND_ROWS[2])["values"] == {"C1": True, "C2": False}
    report = score_ifeval(HAND_ROWS)
    assert report["instructions"] == {"n": 5, "agree": 5, "accuracy": 1.0}
    assert report["prompts"]["agree"] == 3 and report["disagreements"] == []


@pytest.fixture(scope="module")
def rows():
    return read_ifeval()


def test_verdicts_do_not_depend_on_the_labels(rows):
    for row in rows[::25]:
        flipped = {**row, "follow_instruction_list": [not f for f in row["follow_instruction_list"]]}
        assert verify_ifeval_row(without_labels(row)) == verify_ifeval_row(row) == verify_ifeval_row(flipped)


def test_the_shipped_gpt4_responses():
    report = ifeval_offline()
    # data/IFEVAL.md: our checkers disagree with IFEval on two instructions, keys 3572 and 3617
    # (change_case:english_capital, where langdetect calls a few capitalised names English)
    assert report["instructions"] == {"n": 834, "agree": 832, "accuracy": 832 / 834}
    assert [(d["key"], d["instruction"], d["ours"], d["ifeval"]) for d in report["disagreements"]] == [
        (3572, "change_case:english_capital", False, True),
        (3617, "change_case:english_capital", False, True),
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
    assert "instruction-level accuracy 5/5" in plain.stdout and "prompt-level accuracy 3/3" in plain.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**HAND_ROWS[2], "kwargs": [{"keywords": ["x"], "nope": 1}, {}]}) + "\n")
    with pytest.raises(VerifyError, match="IFEval key 3"):
        score_ifeval(read_ifeval(bad))
    result = CliRunner().invoke(app, ["vifbench", "offline-ifeval", "--source", str(tmp_path / "missing.jsonl")])
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot read the IFEval data")
