"""The VifBench generator: sentence banks, determinism, balance, labels from the reference checkers."""

import itertools
import math
from collections import Counter

import pytest

from autonesy.tasks.vifbench import GROUPS, Instruction, generate, generator, group_of, label_distribution
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
from autonesy.tasks.vifbench.generator import (
    MAX_PER_COUNT,
    PAIR_OPS,
    SINGLE_OPS,
    product_indices,
    product_size,
    shape_at,
    shape_count,
    type_combinations,
)
from autonesy.tools.verify.checkers import CONSTRAINT_TYPES, SEMANTIC_TYPES, TONE_LEXICON, TOPIC_LEXICON, words
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


# -- the Cartesian product of type combinations and compositions (§4), capped per count ----------


def _shapes_by_brute_force(n):
    """Every operator sequence whose arities add up to n (singles take one constraint, pairs two)."""
    found = set()
    for length in range(1, n + 1):
        for ops in itertools.product(SINGLE_OPS + PAIR_OPS, repeat=length):
            if sum(2 if op in PAIR_OPS else 1 for op in ops) == n:
                found.add(ops)
    return found


@pytest.mark.parametrize("n", range(1, 7))
def test_compositions_are_enumerated_one_to_one(n):
    enumerated = [shape_at(n, i) for i in range(shape_count(n))]
    assert len(set(enumerated)) == len(enumerated) and set(enumerated) == _shapes_by_brute_force(n)


def test_type_combinations_have_a_semantic_and_a_logic_type():
    for n in range(2, 11):
        combos = type_combinations(n)
        assert len(combos) == len(set(combos)) == math.comb(11, n) - math.comb(9, n) - (n == 2)
        assert all(set(c) & set(SEMANTIC_TYPES) and set(c) - set(SEMANTIC_TYPES) for c in combos)


def test_the_product_is_capped_at_100_distinct_members_by_a_seeded_sample(monkeypatch):
    for n in range(2, 11):
        chosen = product_indices(n, seed=3)
        assert len(chosen) == len(set(chosen)) == MAX_PER_COUNT == 100 < product_size(n)
        assert all(0 <= i < product_size(n) for i in chosen) and chosen == product_indices(n, seed=3)
    assert product_indices(5, seed=3) != product_indices(5, seed=4)
    monkeypatch.setattr(generator, "MAX_PER_COUNT", 200)  # a product within the cap is enumerated whole
    assert product_indices(2, seed=3) == list(range(product_size(2))) and product_size(2) == 126


def test_no_two_instructions_of_a_count_share_types_and_composition():
    records = generate(36, seed=2)  # four instructions per count
    seen = Counter()
    for rec in records:
        if rec["verdict"] == "sat":
            design = (
                rec["n_constraints"],
                tuple(sorted(c["type"] for c in rec["constraints"])),
                tuple(p["op"] for p in rec["parts"]),
            )
            seen[design] += 1
    assert len(seen) == 36 and set(seen.values()) == {1}
    assert Counter(n for n, _, _ in seen) == {n: 4 for n in range(2, 11)}
