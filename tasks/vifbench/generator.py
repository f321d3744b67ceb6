"""VifBench as the Nsvif paper's §A.1–A.2, Tables 5–6 and Figure 8 build it: 820 instructions, one output each.

**Instructions** (§A.2, Table 6). Table 6's columns A–K are the constraint types in ``TABLE6_COLUMNS``
(our reading — the paper does not name them — fixed by what it says: C = 2 is "writing topic and
total word count", so A and B; 15 topics × 4 tones = 60 exhausts C = 5 and C = 6, so C is the tone and
D–G the four constraints grouped by topic; H–K follow Table 5's order). For each complexity group C
the instruction's types are its columns and the values range over the Cartesian product of theirs (a
topic-grouped type takes its topic's value); all 60 for C = 5 and C = 6, 100 otherwise. The paper
keeps "the first 100 combinations"; in product order that leaves 3 of the 15 topics in groups 3, 4
and 8–10, while the paper spreads its topics, so we keep 100 that spread every value: each next one is
the first, in product order, whose values have been used least (``spread``). 820 instructions, each
Table 5's templates concatenated (``Instruction.text``), its formula their conjunction.

**Outputs** (§A.2: "we generate sat and unsat responses alternatively"): within each group the
instructions alternate between a *sat* round (even positions) and an *unsat* round (odd ones).

- A sat round gives the writer the instruction; a draft that fails a checker is revised with the
  checkers' messages (the requirements left unmet), up to ``REGENERATION_BUDGET`` (5) times, and kept
  as it is when the budget runs out.
- An unsat round gives the writer the instruction *mutated*: one logic constraint omitted, as the
  paper does; in a share ``SEMANTIC_MUTATION_SHARE`` of the rounds also the tone or the topic
  replaced by another (Table 1's misinterpretation and pragmatic mismatch, which VifBench's unsat
  outputs cover). While the output still meets the whole instruction it is written again, up to 5
  times. The writer follows what it is told only as well as a writer does, so violations spread
  beyond the omitted constraint ("the output is also likely to violate more than one constraint").

Labels of logic constraints always come from the reference checkers
(:mod:`autonesy.tools.verify.checkers`); labels of tone and topic from how the output was made (the
tone and topic the writer was asked for).

**The offline writer** (the default; GPT-4.1 is not available) composes text from the sentence banks
(:mod:`.banks`). Each constraint it is told about it meets by construction — unless it *slips*:
``SLIPS`` gives, per type, the chance that a draft handles a constraint as if it had not been told
(counts are what writers miss: total word count, words per sentence, same first and last word, as
the paper's Figure 8 finds), and ``REVISION_SLIPS`` the chance that a revision told about the unmet
constraint slips again. What it is not told (or slips on) it does as a writer would by default, each
choice drawn from the instruction's seeded random stream: a title (its topic's) or none, subsections
or none, 150–350 words, sentences of any length (some of them two clauses joined), nouns of its topic
(the keywords to include and to exclude among them), edge words that rarely repeat. ``generate()``
with no arguments is the full set, the same on every run; ``generate(count)`` the first ``count``
instructions of ``vifbench_plan`` (the groups interleaved, so a small sample covers every group).
``composition`` sets the result next to the paper's figures (``stats.json``).
"""

from __future__ import annotations

import functools
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
KEYWORD_MENTION = 0.75  # untold, a writer names each keyword of its topic with this chance
COMPOUND_SHARE = 0.3  # untold about sentence length, a writer joins two clauses this often
SEMANTIC_MUTATION_SHARE = 0.12  # unsat rounds whose mutation also swaps the tone or the topic
SLIPS: dict[str, float] = {  # chance that a draft handles a constraint it was told about as if it were not
    "total_word_count": 0.35,
    "words_per_sentence": 0.35,
    "start_end_same_word": 0.85,
    "subsections_start_end_same_word": 0.2,
    "even_odd_word_count": 0.2,
    "keyword_inclusion": 0.03,
    "keyword_exclusion": 0.03,
    "response_title": 0.03,
    "response_subsection_titles": 0.05,
}
REVISION_SLIPS: dict[str, float] = {  # the same for a revision told that the constraint is unmet
    "total_word_count": 0.6,
    "words_per_sentence": 0.6,
    "start_end_same_word": 0.6,
    "even_odd_word_count": 0.6,
}
REVISION_SLIP = 0.3  # the other types
RESLIP = 0.1  # the chance that a revision breaks a constraint it was not told about (a logic one)
# the paper's figures (§4.2, §A.2–A.3, Figure 8), set beside ours in stats.json
PAPER: dict[str, Any] = {
    "sat": 391,
    "unsat": 429,
    "most_violated": ["total_word_count", "words_per_sentence", "start_end_same_word"],
    "topics": 15,
    "tones": 4,
    "word_count_options": 10,
    "regeneration_budget": REGENERATION_BUDGET,
}
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


def spread(combinations: list[tuple[Any, ...]], count: int) -> list[tuple[Any, ...]]:
    """``count`` of the combinations (all when fewer), each next one the first in order whose values have been
    used least so far (summed over the positions), kept in the order chosen: every value spread evenly."""
    chosen: list[tuple[Any, ...]] = []
    left = list(combinations)
    used: Counter[tuple[int, Any]] = Counter()
    while left and len(chosen) < count:
        best = min(range(len(left)), key=lambda i: sum(used[(k, v)] for k, v in enumerate(left[i])))
        pick = left.pop(best)
        chosen.append(pick)
        used.update(enumerate(pick))
    return chosen


@functools.cache
def group_instructions(n: int) -> tuple[Instruction, ...]:
    """Group ``n``'s instructions: ``MAX_PER_GROUP`` members of the Cartesian product of its types' values that
    spread every value (``spread``; all of them when there are fewer)."""
    types = group_types(n)
    found = []
    for values in spread(list(itertools.product(*(type_values(t) for t in types))), MAX_PER_GROUP):
        topic = TOPIC_BY_NAME[values[0]]
        constraints = tuple(
            Constraint(f"C{i}", t, params_for(t, v, topic)) for i, (t, v) in enumerate(zip(types, values), start=1)
        )
        found.append(Instruction(constraints, tuple(Part("lit", (c.id,)) for c in constraints)))
    return tuple(found)


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
    """One sentence: ``[lead,] subject [truly] predicate[, and subject predicate] [with NOUN] [trail].``, or fixed
    text."""

    topic: Topic
    tone: str
    subject: int = 0
    predicate: int = 0
    tail: str | None = None
    lead: str | None = None
    trail: str | None = None
    filler: bool = False
    text: str | None = None  # a keyword sentence
    second: tuple[int, int] | None = None  # a second clause: (subject, predicate)

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
        if self.second:
            parts[-1] += ","
            parts += ["and", self.topic.subjects[self.second[0]], PREDICATES[self.tone][self.second[1]]]
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
            + (1 + SUBJECT_LENGTHS[self.second[0]] + PREDICATE_LENGTHS[self.second[1]] if self.second else 0)
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
    """A bank sentence with room for ``extra`` edge words under the limit (two clauses joined now and then when
    there is no limit); a noun tail half the time, if it fits."""
    shapes = [
        (i, j)
        for i in range(len(SUBJECT_LENGTHS))
        for j in range(len(PREDICATE_LENGTHS))
        if limit is None or SUBJECT_LENGTHS[i] + PREDICATE_LENGTHS[j] + extra <= limit
    ]
    i, j = rng.choice(shapes)
    sentence = Sentence(topic, tone, i, j)
    if limit is None and rng.random() < COMPOUND_SHARE:
        sentence.second = (rng.randrange(len(SUBJECT_LENGTHS)), rng.randrange(len(PREDICATE_LENGTHS)))
    if nouns and rng.random() < 0.5 and (limit is None or sentence.length() + extra + 2 <= limit):
        sentence.tail = rng.choice(nouns)
    return sentence


def write(seen: Instruction, rng: random.Random, slips: frozenset[str] = frozenset()) -> str:
    """The writer's response to the instruction it is given, handling the constraint types in ``slips`` as if it
    had not been told about them (see the module docstring)."""
    asked = {c.type: dict(c.params) for c in seen.constraints if c.type not in slips}
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
    # untold, a writer names each keyword of its topic now and then (the ones it was told to avoid never)
    keywords_in_mind = [k for k in topic.include + topic.exclude if rng.random() < KEYWORD_MENTION]
    nouns = [n for n in (*topic.others, *keywords_in_mind) if n not in excluded]

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
            if roomy:
                rng.choice(roomy).filler = True
            else:  # every sentence at the limit: a three-word sentence flips the parity
                section = rng.choice(sections)
                section.sentences.insert(len(section.sentences) - 1, Sentence(topic, tone, text="That matters most."))
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


def draw_slips(instruction: Instruction, rng: random.Random, rates: Mapping[str, float]) -> frozenset[str]:
    """The logic constraint types a draft slips on, each with its rate."""
    return frozenset(c.type for c in instruction.constraints if rng.random() < rates.get(c.type, 0.0))


def mutate(instruction: Instruction, rng: random.Random) -> tuple[Instruction, str, str | None]:
    """An unsat round's instruction: one logic constraint omitted (§A.2) and, in a share of the rounds, the tone or
    the topic replaced by another value; returns it with the omitted id and the replaced one (or None)."""
    omitted = rng.choice([c.id for c in instruction.constraints if c.kind == "logic"])
    given = next(o for o in instruction.omissions() if omitted not in o.ids)
    semantic = [c for c in given.constraints if c.kind == "semantic"]
    if rng.random() >= SEMANTIC_MUTATION_SHARE:
        return given, omitted, None
    target = rng.choice(semantic)
    key = "tone" if target.type == "writing_tone" else "topic"
    values = [v for v in type_values(target.type) if v != target.params[key]]
    swapped = Constraint(target.id, target.type, {key: rng.choice(values)})
    constraints = tuple(swapped if c.id == target.id else c for c in given.constraints)
    return Instruction(constraints, given.parts), omitted, target.id


def made_labels(instruction: Instruction, given: Instruction) -> dict[str, bool]:
    """The semantic labels, from how the output was made: a tone or topic holds when the writer was asked for it."""
    asked = given.by_id
    return {
        c.id: c.id in asked and dict(asked[c.id].params) == dict(c.params)
        for c in instruction.constraints
        if c.kind == "semantic"
    }


def label(instruction: Instruction, given: Instruction, text: str) -> dict[str, bool]:
    """Each constraint's label: logic ones by the reference checkers, semantic ones by how the text was made."""
    semantic = made_labels(instruction, given)
    return {c.id: semantic[c.id] if c.id in semantic else c.check(text) for c in instruction.constraints}


def generate_instruction(n: int, position: int, seed: int = 0) -> GeneratedItem:
    """Instruction ``position`` of group ``n`` with the offline writer's output (§A.2's procedure)."""
    instruction = group_instructions(n)[position]
    instruction_id = f"vif-c{n}-{position:03d}"
    rng = random.Random(f"vifbench:{seed}:{instruction_id}")
    wanted = "sat" if position % 2 == 0 else "unsat"
    omitted = swapped = None
    given = instruction
    if wanted == "unsat":
        given, omitted, swapped = mutate(instruction, rng)
    item = GeneratedItem(instruction_id, instruction, group_of(n), wanted, given, omitted)
    slips = draw_slips(given, rng, SLIPS)
    text = write(given, rng, slips)
    labels = label(instruction, given, text)
    regenerations = 0
    while instruction.verdict(labels) != wanted and regenerations < REGENERATION_BUDGET:
        regenerations += 1
        if wanted == "sat":  # revised with the checkers' messages: the unmet ones get the writer's attention
            named = {instruction.by_id[cid].type for cid, ok in labels.items() if not ok}
            rates = {t: RESLIP for t in SLIPS if t not in named}
            slips = draw_slips(given, rng, rates) | {
                t for t in sorted(named) if rng.random() < REVISION_SLIPS.get(t, REVISION_SLIP)
            }
        else:  # written again for the mutated instruction
            slips = draw_slips(given, rng, SLIPS)
        text = write(given, rng, slips)
        labels = label(instruction, given, text)
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
            mutated=swapped,
            writer_instruction=given.text,
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


def composition(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The data's composition next to the paper's figures (``stats.json``): the sat/unsat split overall and per
    complexity group, how many unsat outputs violate two or more constraints, the violations per constraint
    type and the three most violated (Figure 8), the semantic violations, the topics per group, the values
    used, and the regenerations."""
    records = list(records)
    groups: dict[str, Counter[str]] = {}
    violations: Counter[str] = Counter()
    several = unsat = exhausted = regenerations = 0
    topics: dict[str, set[str]] = {}
    values: dict[str, set[Any]] = {}
    for rec in records:
        groups.setdefault(rec["group"], Counter())[rec["verdict"]] += 1
        types = {c["id"]: c["type"] for c in rec["constraints"]}
        for c in rec["constraints"]:
            for key, value in c["params"].items():
                if not isinstance(value, list):
                    values.setdefault(f"{c['type']}.{key}", set()).add(value)
            if c["type"] == "writing_topic":
                topics.setdefault(rec["group"], set()).add(c["params"]["topic"])
        regenerations += rec.get("regenerations") or 0
        exhausted += (rec.get("regenerations") or 0) >= REGENERATION_BUDGET and rec["verdict"] != rec.get("round")
        if rec["verdict"] == "unsat":
            unsat += 1
            broken = [types[cid] for cid, ok in rec["labels"].items() if not ok]
            violations.update(broken)
            several += len(broken) >= 2
    sat = len(records) - unsat
    order = [name for name, _, _ in GROUPS if name in groups]
    return {
        "pairs": {"ours": len(records), "paper": PAPER["sat"] + PAPER["unsat"]},
        "sat_unsat": {"ours": [sat, unsat], "paper": [PAPER["sat"], PAPER["unsat"]]},
        "sat_share": {
            "ours": round(sat / len(records), 4) if records else None,
            "paper": round(PAPER["sat"] / (PAPER["sat"] + PAPER["unsat"]), 4),
        },
        "sat_unsat_by_group": {
            "ours": {g: [groups[g]["sat"], groups[g]["unsat"]] for g in order},
            "paper": "relatively equal numbers of sat and unsat responses across all complexity groups",
        },
        "unsat_violating_two_or_more": {
            "ours": several,
            "share": round(several / unsat, 4) if unsat else None,
            "paper": "the output is also likely to violate more than one constraint (Figure 8)",
        },
        "violations_by_type": dict(violations.most_common()),
        "most_violated": {"ours": [t for t, _ in violations.most_common(3)], "paper": PAPER["most_violated"]},
        "semantic_violations": {
            "ours": {t: violations[t] for t in ("writing_tone", "writing_topic")},
            "paper": "unsat outputs cover Table 1's categories: misinterpretation (tone), pragmatic mismatch (topic)",
        },
        "topics_per_group": {"ours": {g: len(topics.get(g, ())) for g in order}, "paper": PAPER["topics"]},
        "values": {key: sorted(found) for key, found in sorted(values.items()) if len(found) <= 10},
        "regenerations": {
            "ours": regenerations,
            "budget_exhausted": exhausted,
            "budget": REGENERATION_BUDGET,
            "paper": PAPER["regeneration_budget"],
        },
    }


__all__ = [
    "GROUPS",
    "GROUP_COLUMNS",
    "MAX_PER_GROUP",
    "REGENERATION_BUDGET",
    "PAPER",
    "TABLE6_COLUMNS",
    "GeneratedItem",
    "composition",
    "label",
    "mutate",
    "spread",
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
