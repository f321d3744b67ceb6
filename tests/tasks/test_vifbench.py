"""VifBench as the Nsvif paper builds it (§A.1–A.2, Tables 5–6): the banks, Table 6's groups and the
Cartesian product in order, Table 5's templates, the offline writer's rounds, the full set's checksum."""

import hashlib
import json
import random
from collections import Counter

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.tasks.vifbench import GROUPS, Instruction, generate
from autonesy.tasks.vifbench.banks import (
    EDGE_WORDS,
    FILLER,
    PREDICATE_LENGTHS,
    PREDICATES,
    SUBJECT_LENGTHS,
    TONES,
    TOPICS,
    WORD_COUNT_TARGETS,
)
from autonesy.tasks.vifbench.generator import (
    GROUP_COLUMNS,
    generate_instruction,
    group_instructions,
    group_types,
    vifbench_plan,
    write,
)
from autonesy.tools.verify.checkers import TONE_LEXICON, TOPIC_LEXICON, words
from autonesy.tools.verify.solver import decide, parse_composition

SPECIFIER = "this does not apply to title and subsection title lines. Title and subsection title lines start with at least one #."


def test_fifteen_topics_each_with_its_grouped_values_and_four_tones():
    assert len(TOPICS) == 15 and len({t.name for t in TOPICS}) == 15 and list(TOPIC_LEXICON) == [t.name for t in TOPICS]
    assert TONES == tuple(TONE_LEXICON) and len(TONES) == 4
    assert len(WORD_COUNT_TARGETS) == 10 and all(450 <= n <= 550 for n in WORD_COUNT_TARGETS)
    for topic in TOPICS:
        assert len(topic.subsection_titles) == 3 and len(topic.include) == len(topic.exclude) == 2


def test_sentence_banks_keep_counts_markers_and_keywords_apart():
    markers = {w: ("tone", t) for t, ws in TONE_LEXICON.items() for w in ws}
    markers.update({w: ("topic", t) for t, ws in TOPIC_LEXICON.items() for w in ws})
    assert len(markers) == sum(map(len, TONE_LEXICON.values())) + sum(map(len, TOPIC_LEXICON.values()))
    for topic in TOPICS:
        for phrase, length in zip(topic.subjects, SUBJECT_LENGTHS, strict=True):
            found = [w.lower() for w in words(phrase)]
            assert len(found) == length, phrase
            assert [markers[w] for w in found if w in markers] == [("topic", topic.name)], phrase
    for tone, phrases in PREDICATES.items():
        for phrase, length in zip(phrases, PREDICATE_LENGTHS, strict=True):
            found = [w.lower() for w in words(phrase)]
            assert len(found) == length and [markers[w] for w in found if w in markers] == [("tone", tone)], phrase
    predicates = " ".join(p for ps in PREDICATES.values() for p in ps)
    for topic in TOPICS:
        for keyword in topic.include + topic.exclude:
            elsewhere = [
                predicates,
                *topic.subjects,
                topic.title,
                *topic.subsection_titles,
                *EDGE_WORDS,
                FILLER,
                "with matters most",
                *(n for n in topic.nouns if n != keyword),
            ]
            assert not any(keyword.lower() in text.lower() for text in elsewhere), (topic.name, keyword)


def test_table6_groups_spread_every_value_over_100_of_the_product():
    sizes = {n: len(group_instructions(n)) for n in GROUP_COLUMNS}
    assert sizes == {2: 100, 3: 100, 4: 100, 5: 60, 6: 60, 7: 100, 8: 100, 9: 100, 10: 100}
    assert sum(sizes.values()) == 820 and [name for name, _, _ in GROUPS] == [str(n) for n in range(2, 11)]
    assert group_types(2) == ("writing_topic", "total_word_count")  # §A.2's example for C = 2
    assert "total_word_count" not in group_types(5) and len(group_types(10)) == 10
    for n in GROUP_COLUMNS:
        chosen = [tuple(repr(c.params) for c in i.constraints) for i in group_instructions(n)]
        assert len(set(chosen)) == len(chosen)  # distinct members of the product
        for position, values in enumerate(zip(*chosen)):  # each value used as evenly as 100 allow
            counts = Counter(values).values()
            assert max(counts) - min(counts) <= 1, (n, position)
        topics = {i.constraints[0].params["topic"] for i in group_instructions(n)}
        assert len(topics) == 15, n  # the 15 topics in every group (in product order C = 3 would have 3)
    two = group_instructions(2)  # 15 topics x 10 counts: every count 10 times
    assert Counter(i.constraints[1].params["target"] for i in two) == dict.fromkeys(WORD_COUNT_TARGETS, 10)
    five = group_instructions(5)  # all 60: every topic in every tone, the grouped values from the topic
    assert {(i.constraints[0].params["topic"], i.constraints[1].params["tone"]) for i in five} == {
        (t.name, tone) for t in TOPICS for tone in TONES
    }
    agile = group_instructions(10)[0].by_id
    assert agile["C3"].params == {"keywords": ["collaboration", "flexibility"]}
    assert agile["C5"].params == {"title": "Agile Teams That Deliver"}


def test_instructions_are_table5_templates_verbatim():
    instruction = group_instructions(10)[0]
    assert instruction.text.splitlines() == [
        "Please write in this topic: The benefits of agile project management",
        "Please write in this tone: optimistic",
        "Include these keywords, check for string inclusion regardless of capitalization: collaboration, flexibility",
        "Exclude these keywords, check for string exclusion regardless of capitalization: waterfall, bureaucracy",
        "Include this as the title of the text, titles are lines that start with only one #: Agile Teams That Deliver",
        "Include these subsection titles in the text, subsection titles are lines start with more than one #: "
        "Why Agile Works, Daily Practice, Measuring Progress",
        "Please consider this number of words per sentence constraint: at most 8 words in each sentence, " + SPECIFIER,
        "Please consider this even/odd word count constraint: the total number of words should be even " + SPECIFIER,
        "Please consider this word repetition constraint on the entire response: the response should start and end "
        "with the same word, " + SPECIFIER,
        "Please consider this word repetition constraint on subsections of the response: each subsection should "
        "start and end with the same word, " + SPECIFIER,
    ]
    assert instruction.formula.splitlines() == [f"C{i}" for i in range(1, 11)]


@pytest.mark.parametrize("n", sorted(GROUP_COLUMNS))
def test_the_writer_meets_every_constraint_it_is_told_about(n):
    rng = random.Random(n)
    for instruction in rng.sample(group_instructions(n), 5):
        text = write(instruction, random.Random(str(instruction.text)))
        assert all(instruction.labels(text).values()), (n, instruction.text, text)


def test_rounds_alternate_and_unsat_rounds_omit_one_logic_constraint():
    for n, position in vifbench_plan()[:60]:
        item = generate_instruction(n, position)
        rec = item.records[0]
        assert item.round == rec["round"] == ("sat" if position % 2 == 0 else "unsat")
        if item.round == "sat":
            assert item.given == item.instruction and rec["omitted"] is None and rec["mutated"] is None
            assert rec["verdict"] == "sat" or rec["regenerations"] == 5  # revised until sat, or kept as-is
        else:
            omitted = item.instruction.by_id[item.omitted]
            assert omitted.kind == "logic" and item.omitted not in item.given.ids
            assert len(item.given.constraints) == len(item.instruction.constraints) - 1
            assert rec["verdict"] == "unsat" or rec["regenerations"] == 5
            if rec["mutated"]:  # the tone or topic the writer was asked for is another one: off-tone / off-topic
                asked, wanted = item.given.by_id[rec["mutated"]], item.instruction.by_id[rec["mutated"]]
                assert asked.type == wanted.type and asked.params != wanted.params
                assert rec["labels"][rec["mutated"]] is False


def test_labels_are_the_reference_checkers_and_semantic_ones_how_the_output_was_made():
    records = generate(120)
    for rec in records:
        instruction = Instruction.from_dict(rec)
        assert instruction.text == rec["instruction"]
        for c in instruction.constraints:
            if c.kind == "logic":
                assert rec["labels"][c.id] is c.check(rec["output"])
            else:  # made: asked for it unless the mutation swapped it; the banks' marker words agree
                assert rec["labels"][c.id] is (rec.get("mutated") != c.id) is c.check(rec["output"])
        composition = parse_composition(rec["formula"], [c["id"] for c in rec["constraints"]])
        assert (
            decide(composition, rec["labels"]).verdict
            == rec["verdict"]
            == ("sat" if all(rec["labels"].values()) else "unsat")
        )
    assert any(rec.get("mutated") for rec in records)


def test_count_takes_the_groups_interleaved():
    records = generate(18)
    assert Counter(r["group"] for r in records) == {str(n): 2 for n in range(2, 11)}
    with pytest.raises(ValueError, match="count must be 1 to 820"):
        generate(821)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """``autonesy-agent vifbench generate --out DIR`` with no other option."""
    out = tmp_path_factory.mktemp("vifbench")
    result = CliRunner().invoke(app, ["vifbench", "generate", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out / "vifbench.jsonl"


def test_generate_with_no_options_writes_the_820_pairs_the_same_every_time(written):
    full = [json.loads(line) for line in written.read_text(encoding="utf-8").splitlines()]
    assert len(full) == 820 and len({r["id"] for r in full}) == 820
    assert Counter(r["group"] for r in full) == {
        "2": 100, "3": 100, "4": 100, "5": 60, "6": 60, "7": 100, "8": 100, "9": 100, "10": 100
    }  # fmt: skip
    assert hashlib.sha256(written.read_bytes()).hexdigest() == EXPECTED_SHA256


def test_the_composition_follows_the_paper(written):
    """The paper's figures (§4.2, §A.2–A.3, Figure 8) against the generated set, with thresholds read from them."""
    stats = json.loads((written.parent / "stats.json").read_text(encoding="utf-8"))["composition"]
    sat, unsat = stats["sat_unsat"]["ours"]
    assert stats["sat_unsat"]["paper"] == [391, 429] and sat + unsat == 820
    assert 0.45 <= sat / 820 <= 0.50  # the paper: 47.68 % sat
    for group, (gsat, gunsat) in stats["sat_unsat_by_group"]["ours"].items():
        assert 0.35 <= gsat / (gsat + gunsat) <= 0.65, group  # "relatively equal ... across all complexity groups"
    assert stats["unsat_violating_two_or_more"]["share"] >= 0.2  # "likely to violate more than one"
    assert stats["most_violated"]["ours"] == ["total_word_count", "words_per_sentence", "start_end_same_word"]
    assert all(count >= 10 for count in stats["semantic_violations"]["ours"].values())  # off-tone and off-topic
    assert set(stats["topics_per_group"]["ours"].values()) == {15}
    assert stats["values"]["total_word_count.target"] == list(WORD_COUNT_TARGETS)
    assert stats["values"]["writing_tone.tone"] == sorted(TONES)


# a pinned checksum (a regression value: it changes when the banks, the plan or the writer change)
EXPECTED_SHA256 = "d79fe6fd6d0062bf85197efcd1dae66d56d15f4c80621752376166bec6c4e747"
