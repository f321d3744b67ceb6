"""The VifBench generator: sentence banks, determinism, balance, labels from the reference checkers."""

from collections import Counter

import pytest

from autonesy.tasks.vifbench import GROUPS, Instruction, generate, group_of, label_distribution
from autonesy.tasks.vifbench.banks import (
    EDGE_WORDS,
    FILLER,
    NOUNS,
    PREDICATE_LENGTHS,
    PREDICATES,
    SECTION_NAMES,
    SUBJECT_LENGTHS,
    SUBJECTS,
    TITLES,
)
from autonesy.tools.verify.checkers import CONSTRAINT_TYPES, TONE_LEXICON, TOPIC_LEXICON, words
from autonesy.tools.verify.solver import decide, parse_composition


@pytest.fixture(scope="module")
def records():
    return generate(27, seed=7)  # three instructions per constraint count 2 … 10


def test_sentence_banks_keep_counts_and_markers_apart():
    markers = {w: ("tone", t) for t, ws in TONE_LEXICON.items() for w in ws}
    markers.update({w: ("topic", t) for t, ws in TOPIC_LEXICON.items() for w in ws})
    assert len(markers) == sum(map(len, TONE_LEXICON.values())) + sum(map(len, TOPIC_LEXICON.values()))
    special = set(NOUNS) | set(EDGE_WORDS) | {FILLER}
    assert not special & set(markers)
    for bank, lengths, kind in ((SUBJECTS, SUBJECT_LENGTHS, "topic"), (PREDICATES, PREDICATE_LENGTHS, "tone")):
        for name, phrases in bank.items():
            for phrase, length in zip(phrases, lengths, strict=True):
                found = [w.lower() for w in words(phrase)]
                assert len(found) == length, phrase
                assert [markers[w] for w in found if w in markers] == [(kind, name)], phrase
                assert not special & set(found), phrase
    for text in TITLES + SECTION_NAMES:
        assert not {w.lower() for w in words(text)} & (set(markers) | special), text


def test_generation_is_deterministic_by_seed(records):
    assert generate(27, seed=7) == records
    assert generate(3, seed=8) != generate(3, seed=7)[:6]


def test_balanced_sat_and_unsat_per_group(records):
    assert len(records) == 54
    by_group = Counter((r["group"], r["verdict"]) for r in records)
    assert [name for name, _, _ in GROUPS] == [str(n) for n in range(2, 11)]  # results per constraint count
    for name, _, _ in GROUPS:
        assert by_group[(name, "sat")] == by_group[(name, "unsat")] == 3
    pairs = Counter(r["instruction_id"] for r in records)
    assert set(pairs.values()) == {2}
    assert all(2 <= r["n_constraints"] <= 10 and r["group"] == group_of(r["n_constraints"]) for r in records)
    assert {c["type"] for r in records for c in r["constraints"]} == set(CONSTRAINT_TYPES)
    assert {p["op"] for r in records for p in r["parts"]} == {"lit", "not", "or", "implies", "iff"}
    for r in records:  # the paper: each type once, at least one semantic and one logic constraint
        types = [c["type"] for c in r["constraints"]]
        assert len(set(types)) == len(types)
        assert {c["kind"] for c in r["constraints"]} == {"logic", "semantic"}


def test_at_most_100_instructions_per_constraint_count():
    with pytest.raises(ValueError, match="at most 100 instructions per constraint count"):
        generate(901)


def test_labels_are_the_reference_checkers_and_the_verdict_follows_the_formula(records):
    for rec in records:
        instruction = Instruction.from_dict(rec)
        assert instruction.labels(rec["output"]) == rec["labels"]
        assert instruction.verdict(rec["labels"]) == rec["verdict"]
        assert instruction.text == rec["instruction"] and instruction.formula == rec["formula"]
        composition = parse_composition(rec["formula"], [c["id"] for c in rec["constraints"]])
        assert decide(composition, rec["labels"]).verdict == rec["verdict"]
        for c in rec["constraints"]:
            assert c["summary"][:-1].lower()[1:] in rec["instruction"].lower()  # every constraint is in the text
        assert rec["source"] == "synthetic"
    assert sum(bool(r["clean"]) for r in records) / len(records) > 0.9  # mutations rarely flip another label


def test_unsat_outputs_violate_few_constraints(records):
    violated = []
    for r in records:
        if r["verdict"] == "unsat":
            composition = parse_composition(r["formula"], [c["id"] for c in r["constraints"]])
            violated.append(len(decide(composition, r["labels"]).violated))
    assert min(violated) >= 1 and sum(violated) / len(violated) < 3


def test_label_distribution(records):
    table = label_distribution(records)
    assert list(table) == [str(n) for n in range(2, 11)] + ["all"]
    total = table["all"]
    assert total["outputs"] == 54 and total["sat"] == total["unsat"] == 27 and total["instructions"] == 27
    assert total["labels_true"] + total["labels_false"] == sum(r["n_constraints"] for r in records)
    assert (
        sum(v["true"] + v["false"] for v in total["by_type"].values()) == total["labels_true"] + total["labels_false"]
    )
