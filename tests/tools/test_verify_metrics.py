"""Verifier scores: unknown verdicts as their own outcome, constraint alignment by meaning, FP/FN per type."""

from hypothesis import given
from hypothesis import strategies as st

from autonesy.tools.verify.metrics import align_constraints, binary_scores, constraint_agreement

VERDICTS = st.sampled_from(["sat", "unsat"])


@given(st.lists(st.tuples(VERDICTS, st.sampled_from(["sat", "unsat", "unknown", None])), max_size=40))
def test_unknown_is_neither_right_nor_wrong(pairs):
    scored = binary_scores(pairs)
    decided = [(label, predicted) for label, predicted in pairs if predicted in ("sat", "unsat")]
    alone = binary_scores(decided)
    for key in ("tp", "fp", "fn", "tn", "f1", "precision", "recall", "pass_at_1", "fp_rate", "fn_rate"):
        assert scored[key] == alone[key], key
    assert scored["unknown"] == len(pairs) - len(decided) and scored["n"] == len(pairs)
    if pairs:
        assert scored["unknown_share"] == scored["unknown"] / len(pairs)
    right = sum(label == predicted for label, predicted in decided)
    assert scored["pass_at_1"] == (right / len(decided) if decided else None)


def test_an_unknown_on_an_unsat_pair_is_not_a_correct_rejection():
    scored = binary_scores([("unsat", "unknown"), ("sat", "sat")])
    assert scored["tn"] == 0 and scored["pass_at_1"] == 1.0 and scored["unknown_share"] == 0.5


LABELLED = [
    {
        "id": "C1",
        "type": "keyword_inclusion",
        "params": {"keywords": ["lantern", "harbor"]},
        "summary": 'The response includes each of the keywords "lantern" and "harbor".',
    },
    {
        "id": "C2",
        "type": "total_word_count",
        "params": {"relation": "at most", "limit": 120},
        "summary": "The response has at most 120 words in total.",
    },
    {
        "id": "C3",
        "type": "writing_tone",
        "params": {"tone": "humorous"},
        "summary": "The response is written in a humorous tone.",
    },
]


def test_alignment_is_by_meaning_not_by_id():
    renumbered = [
        {"id": "C1", "summary": LABELLED[2]["summary"]},
        {"id": "C2", "summary": LABELLED[1]["summary"]},
        {"id": "C3", "summary": LABELLED[0]["summary"]},
    ]
    assert align_constraints(LABELLED, renumbered) == {"C1": "C3", "C2": "C2", "C3": "C1"}
    reworded = [
        {"id": "C1", "summary": "Keep it funny."},
        {"id": "C2", "summary": "Use no more than 120 words."},
        {"id": "C3", "summary": "Mention both lantern and harbor."},
        {"id": "C4", "summary": "Sign with a name."},
    ]
    pairs = align_constraints(LABELLED, reworded)
    assert pairs["C1"] == "C3" and pairs["C2"] == "C2" and "C4" not in pairs.values()
    split = [
        {"id": "C1", "summary": 'The response includes the keyword "lantern".'},
        {"id": "C2", "summary": 'The response includes the keyword "harbor".'},
    ]
    assert list(align_constraints(LABELLED, split)) == ["C1"]  # one of the pieces; the other stays unaligned
    assert align_constraints(LABELLED, []) == {}


def test_constraint_agreement_counts_fp_fn_and_unknown_per_type():
    rows = [
        {
            "constraints": LABELLED,
            "labels": {"C1": True, "C2": False, "C3": False},
            "decomposition": [
                {"id": "C9", "summary": LABELLED[1]["summary"]},
                {"id": "C8", "summary": LABELLED[0]["summary"]},
                {"id": "C7", "summary": LABELLED[2]["summary"]},
            ],
            "values": {"C9": True, "C8": False, "C7": None},
        }
    ]
    result = constraint_agreement(rows)
    assert result["by_type"]["total_word_count"]["fp"] == 1
    assert result["by_type"]["keyword_inclusion"]["fn"] == 1
    assert result["by_type"]["writing_tone"]["unknown"] == 1 and result["unknown_share"] == 1 / 3
    assert result["accuracy"] == 0.0 and result["aligned_share"] == 1.0
