"""VifBench as the Nsvif paper's §A.1–A.2 and Tables 5–6 build it: 820 instructions, one output each.

**Instructions** (§A.2, Table 6). Table 6's columns A–K are the constraint types in ``TABLE6_COLUMNS``
(our reading — the paper does not name them — fixed by what it says: C = 2 is "writing topic and
total word count", so A and B; 15 topics × 4 tones = 60 exhausts C = 5 and C = 6, so C is the tone and
D–G the four constraints grouped by topic; H–K follow Table 5's order). For each complexity group C
the instruction's types are its columns; the Cartesian product of their values is taken in order
(``itertools.product``, the topic outermost; a topic-grouped type takes its topic's value) and its
first 100 members kept — all 60 for C = 5 and C = 6: 820 instructions. Each instruction is Table 5's
templates concatenated (``Instruction.text``), its formula their conjunction.

**Outputs** (§A.2), from an offline writer (GPT-4.1 is not available): within each group the
instructions alternate between a *sat* round (even positions) and an *unsat* round (odd ones). A sat
round gives the writer the instruction; an unsat round gives it the instruction without one logic
constraint (drawn per instruction). The output is labelled by the reference checkers
(:mod:`autonesy.tools.verify.checkers`; tone and topic by their marker-word lexicons, exact on the
writer's sentences). A sat-round output that fails a constraint, or an unsat-round output that still
satisfies every constraint, is regenerated — up to ``REGENERATION_BUDGET`` (5) times — and kept as it
is when the budget runs out; its verdict is then whatever its labels make it.

**The writer** composes text from the sentence banks (:mod:`.banks`): on the instruction's topic, in
its tone (a tone of its own choice when none is asked), and it meets every constraint it is told
about by construction (the title and subsection titles given, at most ``max`` words per sentence,
around the target count, the keywords as sentences of their own, the excluded ones avoided, the
edge words repeated, the parity fixed with one word). What it is not told, it does as a writer
would by default, each choice drawn from the instruction's seeded random stream: a title (its
topic's) or none, subsections (its topic's titles) or none, 150–350 words, sentences of any length
in the banks, nouns of its topic (the keywords to include and to exclude among them), edge words
that rarely repeat. So a sat round never needs a regeneration, and an unsat round stays sat only
when the omitted constraint held by chance six times in a row (a limit of 20 words per sentence
always holds: no bank sentence is longer). ``generate()`` with no arguments is the full set, the same
on every run; ``generate(count)`` the first ``count`` instructions of ``vifbench_plan`` (the groups
interleaved, so a small sample covers every group).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autonesy.tasks.vifbench.banks import (
    EDGE_WORDS,
    FILLER,
    PREDICATE_LENGTHS,
    PREDICATES,
    SUBJECT_LENGTHS,
    TONES,
    TOPIC_BY_NAME,
    TOPICS,
    WORD_COUNT_TARGETS,
    WORDS_PER_SENTENCE,
    Topic,
)
from autonesy.tasks.vifbench.constraints import Constraint, Instruction, Part
from autonesy.tools.verify.checkers import CONSTRAINT_TYPES, PARITIES, words

TABLE6_COLUMNS: tuple[str, ...] = (
    "writing_topic",  # A
    "total_word_count",  # B
    "writing_tone",  # C
    "keyword_inclusion",  # D
    "keyword_exclusion",  # E
    "response_title",  # F
    "response_subsection_titles",  # G
    "words_per_sentence",  # H
    "even_odd_word_count",  # I
    "start_end_same_word",  # J
    "subsections_start_end_same_word",  # K
)
GROUP_COLUMNS: dict[int, str] = {  # Table 6: the columns ticked per complexity group
    2: "AB",
    3: "ABC",
    4: "ABCD",
    5: "ACDEF",
    6: "ACDEFG",
    7: "ACDEFGH",
    8: "ACDEFGHI",
    9: "ACDEFGHIJ",
    10: "ACDEFGHIJK",
}
GROUPS: tuple[tuple[str, int, int], ...] = tuple((str(n), n, n) for n in GROUP_COLUMNS)
MAX_PER_GROUP = 100
REGENERATION_BUDGET = 5
NATURAL_WORDS = (150, 350)  # the writer's length when no count is asked
TOPIC_GROUPED = ("keyword_inclusion", "keyword_exclusion", "response_title", "response_subsection_titles")


def group_of(n: int) -> str:
    """The complexity group of a constraint count (the paper reports results per group)."""
    if n not in GROUP_COLUMNS:
        raise ValueError(f"no complexity group for {n} constraints (2 to 10)")
    return str(n)


def group_types(n: int) -> tuple[str, ...]:
    """The constraint types of complexity group ``n``, in Table 6's column order."""
    return tuple(TABLE6_COLUMNS[ord(column) - ord("A")] for column in GROUP_COLUMNS[n])


def type_values(constraint_type: str) -> tuple[Any, ...]:
    """The values a type ranges over in the product (one for the topic-grouped and repetition types)."""
    return {
        "writing_topic": tuple(topic.name for topic in TOPICS),
        "total_word_count": WORD_COUNT_TARGETS,
        "writing_tone": TONES,
        "words_per_sentence": WORDS_PER_SENTENCE,
        "even_odd_word_count": PARITIES,
    }.get(constraint_type, (None,))


def params_for(constraint_type: str, value: Any, topic: Topic) -> dict[str, Any]:
    """The parameters of one constraint: its value, or its topic's value for a topic-grouped type."""
    return {
        "writing_topic": lambda: {"topic": value},
        "total_word_count": lambda: {"target": value},
        "writing_tone": lambda: {"tone": value},
        "keyword_inclusion": lambda: {"keywords": list(topic.include)},
        "keyword_exclusion": lambda: {"keywords": list(topic.exclude)},
        "response_title": lambda: {"title": topic.title},
        "response_subsection_titles": lambda: {"titles": list(topic.subsection_titles)},
        "words_per_sentence": lambda: {"max": value},
        "even_odd_word_count": lambda: {"parity": value},
        "start_end_same_word": dict,
        "subsections_start_end_same_word": dict,
    }[constraint_type]()


def group_instructions(n: int) -> list[Instruction]:
    """Group ``n``'s instructions: the first ``MAX_PER_GROUP`` members of the Cartesian product of its types'
    values, in order (all of them when there are fewer)."""
    types = group_types(n)
    found = []
    for values in itertools.islice(itertools.product(*(type_values(t) for t in types)), MAX_PER_GROUP):
        topic = TOPIC_BY_NAME[values[0]]
        constraints = tuple(
            Constraint(f"C{i}", t, params_for(t, v, topic)) for i, (t, v) in enumerate(zip(types, values), start=1)
        )
        found.append(Instruction(constraints, tuple(Part("lit", (c.id,)) for c in constraints)))
    return found


def vifbench_plan() -> list[tuple[int, int]]:
    """(group, position in the group) of every instruction, each group in product order: the groups
    interleaved two by two (a sat and an unsat round), so that any first ``count`` covers the groups."""
    sizes = {n: len(group_instructions(n)) for n in GROUP_COLUMNS}
    plan: list[tuple[int, int]] = []
    for pair in range(0, max(sizes.values()), 2):
        for n in GROUP_COLUMNS:
            plan.extend((n, position) for position in (pair, pair + 1) if position < sizes[n])
    return plan


# --------------------------------------------------------------------------------------------------
# The offline writer


@dataclass
class Sentence:
    """One sentence: ``[lead,] subject [truly] predicate [with NOUN] [trail].``, or fixed text."""

    topic: Topic
    tone: str
    subject: int = 0
    predicate: int = 0
    tail: str | None = None
    lead: str | None = None
    trail: str | None = None
    filler: bool = False
    text: str | None = None  # a keyword sentence

    def render(self) -> str:
        """The sentence as text."""
        if self.text is not None:
            return self.text
        parts = [self.lead.capitalize() + ","] if self.lead else []
        subject = self.topic.subjects[self.subject]
        parts.append(subject if self.lead else subject[:1].upper() + subject[1:])
        if self.filler:
            parts.append(FILLER)
        parts.append(PREDICATES[self.tone][self.predicate])
        if self.tail:
            parts.append(f"with {self.tail}")
        if self.trail:
            parts.append(self.trail)
        return " ".join(parts) + "."

    def length(self) -> int:
        """The sentence's word count."""
        if self.text is not None:
            return len(words(self.text))
        return (
            SUBJECT_LENGTHS[self.subject]
            + PREDICATE_LENGTHS[self.predicate]
            + 2 * bool(self.tail)
            + bool(self.lead)
            + bool(self.trail)
            + self.filler
        )


@dataclass
class Section:
    """A stretch of the text: an optional subsection title and its sentences."""

    title: str | None
    sentences: list[Sentence] = field(default_factory=list)


def render(title: str | None, sections: list[Section]) -> str:
    """The text as markdown: the title line, then each subsection's title line and paragraph."""
    lines = [f"# {title}", ""] if title else []
    for section in sections:
        if section.title:
            lines.append(f"## {section.title}")
        lines += [" ".join(s.render() for s in section.sentences), ""]
    return "\n".join(lines).strip() + "\n"


def _sentence(topic: Topic, tone: str, rng: random.Random, limit: int | None, extra: int, nouns: list[str]) -> Sentence:
    """A bank sentence with room for ``extra`` edge words under the limit; a noun tail half the time, if it fits."""
    shapes = [
        (i, j)
        for i in range(len(SUBJECT_LENGTHS))
        for j in range(len(PREDICATE_LENGTHS))
        if limit is None or SUBJECT_LENGTHS[i] + PREDICATE_LENGTHS[j] + extra <= limit
    ]
    i, j = rng.choice(shapes)
    sentence = Sentence(topic, tone, i, j)
    if nouns and rng.random() < 0.5 and (limit is None or sentence.length() + extra + 2 <= limit):
        sentence.tail = rng.choice(nouns)
    return sentence


def write(seen: Instruction, rng: random.Random) -> str:
    """The writer's response to the instruction it is given (see the module docstring)."""
    asked = {c.type: dict(c.params) for c in seen.constraints}
    topic = TOPIC_BY_NAME[asked["writing_topic"]["topic"]]
    tone = asked["writing_tone"]["tone"] if "writing_tone" in asked else rng.choice(TONES)
    limit = asked.get("words_per_sentence", {}).get("max")
    title = asked["response_title"]["title"] if "response_title" in asked else rng.choice([topic.title, None])
    if "response_subsection_titles" in asked:
        titles: list[str | None] = list(asked["response_subsection_titles"]["titles"])
    elif "subsections_start_end_same_word" in asked or rng.random() < 0.5:
        titles = list(topic.subsection_titles)
    else:
        titles = [None]
    target = asked["total_word_count"]["target"] if "total_word_count" in asked else rng.randint(*NATURAL_WORDS)
    excluded = set(asked.get("keyword_exclusion", {}).get("keywords", ()))
    nouns = [n for n in topic.nouns if n not in excluded]

    # edge words: the same word opens and closes the text (and each subsection) when asked; else by chance
    if "start_end_same_word" in asked or "subsections_start_end_same_word" in asked:
        shared = rng.choice(EDGE_WORDS)
        edges: list[tuple[str | None, str | None]] = [(shared, shared) for _ in titles]
    else:
        edges = [
            (
                rng.choice(EDGE_WORDS) if rng.random() < 0.3 else None,
                rng.choice(EDGE_WORDS) if rng.random() < 0.3 else None,
            )
            for _ in titles
        ]
    sections = []
    for section_title, (lead, trail) in zip(titles, edges):
        first = _sentence(topic, tone, rng, limit, 1 if lead else 0, nouns)
        last = _sentence(topic, tone, rng, limit, 1 if trail else 0, nouns)
        first.lead, last.trail = lead, trail
        sections.append(Section(section_title, [first, last]))
    keywords = list(asked.get("keyword_inclusion", {}).get("keywords", ()))
    room = target - 10 - 3 * len(keywords)  # what the keyword sentences and the parity word will add
    while sum(s.length() for sec in sections for s in sec.sentences) < room:
        section = rng.choice(sections)
        section.sentences.insert(len(section.sentences) - 1, _sentence(topic, tone, rng, limit, 0, nouns))
    for keyword in keywords:
        section = rng.choice(sections)
        text = f"{keyword[:1].upper()}{keyword[1:]} matters most."
        section.sentences.insert(rng.randint(1, len(section.sentences) - 1), Sentence(topic, tone, text=text))
    if "even_odd_word_count" in asked:
        wanted = 0 if asked["even_odd_word_count"]["parity"] == "even" else 1
        if len(words(render(title, sections))) % 2 != wanted:
            roomy = [
                s
                for sec in sections
                for s in sec.sentences
                if s.text is None and not s.filler and (limit is None or s.length() < limit)
            ]
            rng.choice(roomy).filler = True
    return render(title, sections)


# --------------------------------------------------------------------------------------------------
# Instructions with their outputs


@dataclass
class GeneratedItem:
    """One VifBench instruction with its output (a sat or an unsat round)."""

    instruction_id: str
    instruction: Instruction
    group: str
    round: str  # sat | unsat: what the writer was asked to produce
    given: Instruction  # what the writer saw (without the omitted constraint in an unsat round)
    omitted: str | None
    records: list[dict[str, Any]] = field(default_factory=list)


def record(
    item_id: str,
    instruction_id: str,
    instruction: Instruction,
    output: str,
    labels: Mapping[str, bool],
    *,
    source: str,
    **extra: Any,
) -> dict[str, Any]:
    """One labelled data record: instruction, output, per-constraint labels and the verdict computed from them."""
    return {
        "id": item_id,
        "instruction_id": instruction_id,
        "instruction": instruction.text,
        "output": output,
        "verdict": instruction.verdict(labels),
        "labels": dict(labels),
        "n_constraints": len(instruction.constraints),
        "group": group_of(len(instruction.constraints)),
        "formula": instruction.formula,
        "constraints": [c.to_dict() for c in instruction.constraints],
        "parts": [p.to_dict() for p in instruction.parts],
        "source": source,
        **extra,
    }


def generate_instruction(n: int, position: int, seed: int = 0) -> GeneratedItem:
    """Instruction ``position`` of group ``n`` with the offline writer's output (§A.2's procedure)."""
    instruction = group_instructions(n)[position]
    instruction_id = f"vif-c{n}-{position:03d}"
    rng = random.Random(f"vifbench:{seed}:{instruction_id}")
    wanted = "sat" if position % 2 == 0 else "unsat"
    omitted = None
    given = instruction
    if wanted == "unsat":
        logic = [c.id for c in instruction.constraints if c.kind == "logic"]
        omitted = rng.choice(logic)
        given = next(o for o in instruction.omissions() if omitted not in o.ids)
    item = GeneratedItem(instruction_id, instruction, group_of(n), wanted, given, omitted)
    text = write(given, rng)
    labels = instruction.labels(text)
    regenerations = 0
    while instruction.verdict(labels) != wanted and regenerations < REGENERATION_BUDGET:
        regenerations += 1
        text = write(given, rng)
        labels = instruction.labels(text)
    item.records.append(
        record(
            instruction_id,
            instruction_id,
            instruction,
            text,
            labels,
            source="offline-writer",
            round=wanted,
            omitted=omitted,
            regenerations=regenerations,
        )
    )
    return item


def generate(count: int | None = None, seed: int = 0) -> list[dict[str, Any]]:
    """VifBench's records: all 820 (``count`` None), or the first ``count`` of ``vifbench_plan``; offline."""
    plan = vifbench_plan()
    if count is not None and not 1 <= count <= len(plan):
        raise ValueError(f"VifBench has {len(plan)} instructions; count must be 1 to {len(plan)}")
    return [rec for n, position in plan[:count] for rec in generate_instruction(n, position, seed).records]


def label_distribution(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per complexity group (and ``all``): instructions, verdicts, per-constraint labels, regenerations, and
    true/false labels per constraint type."""
    table: dict[str, dict[str, Any]] = {}
    for rec in records:
        for group in (rec["group"], "all"):
            row = table.setdefault(
                group,
                {
                    "outputs": 0,
                    "instructions": set(),
                    "sat": 0,
                    "unsat": 0,
                    "constraints": 0,
                    "labels_true": 0,
                    "labels_false": 0,
                    "regenerations": 0,
                    "by_type": Counter(),
                },
            )
            row["outputs"] += 1
            row["instructions"].add(rec["instruction_id"])
            row[rec["verdict"]] += 1
            row["constraints"] += rec["n_constraints"]
            row["regenerations"] += rec.get("regenerations") or 0
            types = {c["id"]: c["type"] for c in rec["constraints"]}
            for cid, value in rec["labels"].items():
                row["labels_true" if value else "labels_false"] += 1
                row["by_type"][(types[cid], bool(value))] += 1
    order = [name for name, _, _ in GROUPS] + ["all"]
    out = {}
    for group in order:
        if group not in table:
            continue
        row = table[group]
        by_type = {
            t: {"true": row["by_type"][(t, True)], "false": row["by_type"][(t, False)]}
            for t in CONSTRAINT_TYPES
            if row["by_type"][(t, True)] + row["by_type"][(t, False)]
        }
        out[group] = {
            "instructions": len(row["instructions"]),
            "outputs": row["outputs"],
            "sat": row["sat"],
            "unsat": row["unsat"],
            "mean_constraints": round(row["constraints"] / row["outputs"], 2),
            "labels_true": row["labels_true"],
            "labels_false": row["labels_false"],
            "regenerations": row["regenerations"],
            "by_type": by_type,
        }
    return out


__all__ = [
    "GROUPS",
    "GROUP_COLUMNS",
    "MAX_PER_GROUP",
    "REGENERATION_BUDGET",
    "TABLE6_COLUMNS",
    "GeneratedItem",
    "generate",
    "generate_instruction",
    "group_instructions",
    "group_of",
    "group_types",
    "label_distribution",
    "params_for",
    "record",
    "type_values",
    "vifbench_plan",
    "write",
]
