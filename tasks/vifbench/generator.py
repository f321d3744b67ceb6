"""The VifBench-style generator: instructions of 2 to 10 constraints with a sat and an unsat output each.

For every instruction (deterministic in ``seed`` and its index):

1. take ``n`` constraint types (distinct: each type at most once; at least one semantic and one logic
   type; ``n`` cycles through 2 … 10, one complexity group per count, as the paper reports them) and
   their composition into requirements (a constraint, NOT, OR, IMPLIES, IFF) from the Cartesian
   product of type combinations and compositions for ``n``: enumerated, and capped at
   ``MAX_PER_COUNT`` (100) members per count as the paper's §4 does — a seeded sample of distinct
   members where the product is larger (``product_indices``), so no two instructions of a count share
   their types and composition;
2. synthesise a *base* text from the sentence banks (:mod:`.banks`) and choose every constraint's
   parameters so that the base satisfies all of them (keywords among the words it uses, limits
   around its counts, its tone and topic, …);
3. for each verdict, draw a target truth value per constraint — a model of the formula for ``sat``,
   a counter-model for ``unsat``, few violations preferred — and *mutate* a copy of the base to
   violate exactly the constraints the target makes false (re-write on another tone or topic, swap a
   keyword, drop the title or a subsection title, lengthen or shorten a sentence, add or remove a
   word or sentences, change a first or last word);
4. label the result with the reference checkers (:mod:`autonesy.tools.verify.checkers`) — the labels are
   always the checkers', never the target's — and compute the verdict from the labels and the
   formula. A mutation that also flipped another constraint is retried; when no clean variant is
   found, any variant with the wanted verdict is kept (``clean: false``).

So every instruction has one ``sat`` and one ``unsat`` output: the data is balanced per constraint
count. These outputs are *synthetic* (``source: synthetic``); an LLM may write them instead
(``autonesy.graph.verify.vifbench``), labelled the same way.
"""

from __future__ import annotations

import copy
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
    NOUNS,
    PREDICATE_LENGTHS,
    PREDICATES,
    SECTION_NAMES,
    SUBJECT_LENGTHS,
    SUBJECTS,
    TITLES,
)
from autonesy.tasks.vifbench.constraints import Constraint, Instruction, Part
from autonesy.tools.formats.expr import evaluate
from autonesy.tools.verify.checkers import (
    CONSTRAINT_TYPES,
    LOGIC_TYPES,
    SEMANTIC_TYPES,
    body_text,
    sentences,
    word_tolerance,
    words,
)

GROUPS: tuple[tuple[str, int, int], ...] = tuple((str(n), n, n) for n in range(2, 11))  # one per constraint count
MAX_PER_COUNT = 100
MAX_TRIES = 40


def group_of(n: int) -> str:
    """The complexity group of a constraint count (the paper reports results per group)."""
    for name, low, high in GROUPS:
        if low <= n <= high:
            return name
    raise ValueError(f"no complexity group for {n} constraints (2 to 10)")


# --------------------------------------------------------------------------------------------------
# Synthetic documents


@dataclass
class Sentence:
    """One sentence of a synthetic text, from the sentence banks, with what mutations change (lead, tail, length)."""

    subject: int
    predicate: int
    topic: str
    tone: str
    tail: str | None = None  # "near the NOUN"
    lead: str | None = None  # an edge word opening the sentence
    trail: str | None = None  # an edge word closing it
    filler: bool = False

    def render(self) -> str:
        """The sentence as text."""
        subject = SUBJECTS[self.topic][self.subject]
        parts = []
        if self.lead:
            parts.append(self.lead.capitalize() + ",")
        else:
            subject = subject[:1].upper() + subject[1:]
        parts.append(subject)
        if self.filler:
            parts.append(FILLER)
        parts.append(PREDICATES[self.tone][self.predicate])
        if self.tail:
            parts.append(f"near the {self.tail}")
        if self.trail:
            parts.append(self.trail)
        return " ".join(parts) + "."

    def length(self) -> int:
        """The sentence's word count (from the banks' lengths, without rendering)."""
        return (
            SUBJECT_LENGTHS[self.subject]
            + PREDICATE_LENGTHS[self.predicate]
            + 3 * bool(self.tail)
            + bool(self.lead)
            + bool(self.trail)
            + bool(self.filler)
        )


@dataclass
class Section:
    """A section of a synthetic text: an optional subsection title and its sentences."""

    title: str | None
    sentences: list[Sentence]


@dataclass
class Document:
    """A synthetic text as structure, so mutations change one property and leave the others."""

    title: str | None
    sections: list[Section]

    def render(self) -> str:
        """The document as markdown text."""
        lines: list[str] = []
        if self.title:
            lines += [f"# {self.title}", ""]
        for section in self.sections:
            if section.title:
                lines.append(f"## {section.title}")
            lines.append(" ".join(s.render() for s in section.sentences))
            lines.append("")
        return "\n".join(lines).strip() + "\n"

    def all_sentences(self) -> list[Sentence]:
        """Every sentence, in order."""
        return [s for section in self.sections for s in section.sentences]

    def tails(self) -> list[str]:
        """The tails the sentences end with (words a keyword constraint may draw from)."""
        return [s.tail for s in self.all_sentences() if s.tail]


def base_document(types: Iterable[str], rng: random.Random) -> Document:
    """A base text on a random topic and tone with the structure the constraint types need (title, subsections)."""
    types = set(types)
    topic = rng.choice(sorted(SUBJECTS))
    tone = rng.choice(sorted(PREDICATES))
    headings = bool(types & {"response_subsection_titles", "subsections_start_end_same_word"}) or rng.random() < 0.3
    count = rng.randint(1, 4) if headings else 1
    names = rng.sample(SECTION_NAMES, count)
    sections = []
    for k in range(count):
        size = rng.randint(2, 4) if headings else rng.randint(3, 6)
        sentences_ = [Sentence(rng.randrange(7), rng.randrange(7), topic, tone) for _ in range(size)]
        sections.append(Section(names[k] if headings else None, sentences_))
    doc = Document(rng.choice(TITLES) if ("response_title" in types or rng.random() < 0.5) else None, sections)
    every = doc.all_sentences()
    with_tail = rng.sample(every, min(len(every), max(3, len(every) // 2)))
    for sentence, noun in zip(with_tail, rng.sample(NOUNS, len(with_tail))):
        sentence.tail = noun
    edges = [rng.choice(EDGE_WORDS) for _ in sections]
    if "start_end_same_word" in types:
        edges[-1] = edges[0]
    for section, word in zip(sections, edges):
        section.sentences[0].lead = word
        section.sentences[-1].trail = word
    return doc


def _stats(text: str) -> dict[str, Any]:
    lengths = [len(words(s)) for s in sentences(text)]
    return {"lengths": lengths, "total": len(words(body_text(text)))}


def choose_params(constraint_type: str, doc: Document, rng: random.Random, taken: set[str]) -> dict[str, Any]:
    """Parameters under which ``doc`` satisfies the constraint."""
    text = doc.render()
    stats = _stats(text)
    first = doc.all_sentences()[0]
    if constraint_type == "writing_tone":
        return {"tone": first.tone}
    if constraint_type == "writing_topic":
        return {"topic": first.topic}
    if constraint_type == "keyword_inclusion":
        present = sorted(set(doc.tails()) - taken)
        chosen = rng.sample(present, rng.randint(1, min(3, len(present))))
        taken.update(chosen)
        return {"keywords": chosen}
    if constraint_type == "keyword_exclusion":
        absent = sorted(n for n in set(NOUNS) - taken if n not in text.lower())
        chosen = rng.sample(absent, rng.randint(1, min(3, len(absent))))
        taken.update(chosen)
        return {"keywords": chosen}
    if constraint_type == "response_title":
        return {"title": doc.title}
    if constraint_type == "response_subsection_titles":
        return {"titles": [section.title for section in doc.sections]}
    if constraint_type == "words_per_sentence":
        return {"max": max(stats["lengths"]) + rng.randint(0, 2)}
    if constraint_type == "even_odd_word_count":
        return {"parity": "even" if stats["total"] % 2 == 0 else "odd"}
    if constraint_type == "total_word_count":
        target = max(5, round(stats["total"] / 5) * 5)  # a round number near the count
        while abs(stats["total"] - target) > word_tolerance(target):
            target += 1 if target < stats["total"] else -1
        return {"target": target}
    return {}  # start_end_same_word, subsections_start_end_same_word


# --------------------------------------------------------------------------------------------------
# Mutations: each tries to make one constraint false on the document (in place)


def _middle_positions(doc: Document) -> list[tuple[int, int]]:
    """(section, index) of sentences that are neither first nor last of their section."""
    return [(k, i) for k, section in enumerate(doc.sections) for i in range(1, len(section.sentences) - 1)]


def _other_edge(word: str, rng: random.Random) -> str:
    return rng.choice([w for w in EDGE_WORDS if w != word])


def mutate(doc: Document, constraint: Constraint, instruction: Instruction, rng: random.Random) -> None:
    """Change the document so that it violates ``constraint`` (another tone or topic, a swapped keyword, a dropped
    title, a longer or shorter sentence, …)."""
    kind, params = constraint.type, constraint.params
    every = doc.all_sentences()
    if kind == "writing_tone":
        tone = rng.choice([t for t in sorted(PREDICATES) if t != params["tone"]])
        for s in every:
            s.tone = tone
    elif kind == "writing_topic":
        topic = rng.choice([t for t in sorted(SUBJECTS) if t != params["topic"]])
        for s in every:
            s.topic = topic
    elif kind == "keyword_inclusion":
        keyword = rng.choice(list(params["keywords"]))
        reserved = {k for c in instruction.constraints if c.type.startswith("keyword_") for k in c.params["keywords"]}
        spare = sorted(set(NOUNS) - reserved - set(doc.tails()))
        for s in every:
            if s.tail == keyword:
                s.tail = rng.choice(spare)
    elif kind == "keyword_exclusion":
        word = rng.choice(list(params["keywords"]))
        protected = {k for c in instruction.constraints if c.type == "keyword_inclusion" for k in c.params["keywords"]}
        candidates = [s for s in every if s.tail and s.tail not in protected] or [s for s in every if not s.tail]
        rng.choice(candidates or every).tail = word
    elif kind == "response_title":
        doc.title = None
    elif kind == "response_subsection_titles":
        choice = rng.random()
        if choice < 0.5:
            doc.sections[0].title = None  # the first subsection loses its title
        else:  # a title other than the given one
            section = rng.choice(doc.sections)
            section.title = rng.choice([n for n in SECTION_NAMES if n not in {s.title for s in doc.sections}])
    elif kind == "words_per_sentence":
        positions = _middle_positions(doc) or [
            (k, i) for k, sec in enumerate(doc.sections) for i in range(len(sec.sentences))
        ]
        k, i = rng.choice(positions)
        s = doc.sections[k].sentences[i]
        s.subject, s.predicate = rng.choice([(7, 7), (7, 6), (6, 7)])
        if not s.tail:
            s.tail = rng.choice(sorted(set(NOUNS) - _keywords(instruction)))
        s.filler = s.length() <= params["max"]
    elif kind == "even_odd_word_count":
        s = rng.choice(every)
        s.filler = not s.filler
    elif kind == "total_word_count":
        target = params["target"]
        high = target + word_tolerance(target)
        low = target - word_tolerance(target)
        if rng.random() < 0.5 or not _middle_positions(doc):  # well over the target
            while len(words(body_text(doc.render()))) <= high:
                section = rng.choice(doc.sections)
                model = rng.choice(every)
                new = Sentence(model.subject, model.predicate, model.topic, model.tone)
                section.sentences.insert(max(1, len(section.sentences) - 1), new)
        else:  # well under it
            while len(words(body_text(doc.render()))) >= low:
                positions = _middle_positions(doc)
                if not positions:
                    break
                k, i = rng.choice(positions)
                del doc.sections[k].sentences[i]
    elif kind == "start_end_same_word":
        if rng.random() < 0.5:
            last = doc.sections[-1].sentences[-1]
            last.trail = _other_edge(doc.sections[0].sentences[0].lead or "", rng)
        else:
            first = doc.sections[0].sentences[0]
            first.lead = _other_edge(doc.sections[-1].sentences[-1].trail or "", rng)
    elif kind == "subsections_start_end_same_word":
        sections = doc.sections
        if len(sections) >= 3:
            target = rng.choice(sections[1:-1]).sentences[-1]
            target.trail = _other_edge(target.trail or "", rng)
        elif len(sections) == 2:
            if rng.random() < 0.5:
                sections[0].sentences[-1].trail = _other_edge(sections[0].sentences[0].lead or "", rng)
            else:
                sections[1].sentences[0].lead = _other_edge(sections[1].sentences[-1].trail or "", rng)
        else:
            sections[0].sentences[-1].trail = _other_edge(sections[0].sentences[0].lead or "", rng)
    else:  # pragma: no cover - all types are handled above
        raise ValueError(f"no mutation for {kind!r}")


def _keywords(instruction: Instruction) -> set[str]:
    return {k for c in instruction.constraints if c.type.startswith("keyword_") for k in c.params["keywords"]}


# --------------------------------------------------------------------------------------------------
# Instructions and their outputs


SINGLE_OPS = ("lit", "not")  # a requirement of one constraint
PAIR_OPS = ("or", "implies", "iff")  # a requirement joining the next two constraints


def type_combinations(n: int) -> list[tuple[str, ...]]:
    """Every set of ``n`` distinct constraint types with at least one semantic and one logic type."""
    return [
        combo
        for combo in itertools.combinations(CONSTRAINT_TYPES, n)
        if set(combo) & set(SEMANTIC_TYPES) and set(combo) & set(LOGIC_TYPES)
    ]


@functools.cache
def shape_count(n: int) -> int:
    """How many compositions ``n`` constraints have: each requirement is one constraint (as it is, or
    negated) or joins the next two (OR, IMPLIES, IFF)."""
    if n <= 1:
        return len(SINGLE_OPS) ** n
    return len(SINGLE_OPS) * shape_count(n - 1) + len(PAIR_OPS) * shape_count(n - 2)


def shape_at(n: int, index: int) -> tuple[str, ...]:
    """The ``index``-th composition of ``n`` constraints (0 ≤ index < shape_count(n)): its operators in order."""
    if n == 0:
        return ()
    singles = len(SINGLE_OPS) * shape_count(n - 1)
    if index < singles:
        op, rest = divmod(index, shape_count(n - 1))
        return (SINGLE_OPS[op], *shape_at(n - 1, rest))
    op, rest = divmod(index - singles, shape_count(n - 2))
    return (PAIR_OPS[op], *shape_at(n - 2, rest))


def product_size(n: int) -> int:
    """The size of the Cartesian product of type combinations and compositions for ``n`` constraints."""
    return len(type_combinations(n)) * shape_count(n)


def product_at(n: int, index: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``index``-th (type combination, composition) of the product for ``n`` constraints."""
    combo, shape = divmod(index, shape_count(n))
    return type_combinations(n)[combo], shape_at(n, shape)


def product_indices(n: int, seed: int) -> list[int]:
    """The members of the product for ``n`` constraints that VifBench uses, in order: all of it when it
    has at most ``MAX_PER_COUNT``, else a seeded sample of that many distinct members (§4's cap)."""
    size = product_size(n)
    if size <= MAX_PER_COUNT:
        return list(range(size))
    return random.Random(f"vifbench-product:{seed}:{n}").sample(range(size), MAX_PER_COUNT)


def compose(ids: list[str], shape: tuple[str, ...]) -> list[Part]:
    """The requirements over ``ids`` that ``shape`` (its operators, in order) describes."""
    pending = list(ids)
    parts: list[Part] = []
    for op in shape:
        arity = 2 if op in PAIR_OPS else 1
        parts.append(Part(op, tuple(pending[:arity])))
        del pending[:arity]
    if pending:
        raise ValueError(f"the composition {shape} leaves {pending} unused")
    return parts


def make_instruction(
    types: tuple[str, ...], shape: tuple[str, ...], rng: random.Random
) -> tuple[Instruction, Document]:
    """An instruction of ``types`` (given to C1, C2, … in a random order) composed as ``shape``, and the
    base text that meets every constraint."""
    types = tuple(rng.sample(types, len(types)))
    ids = [f"C{i}" for i in range(1, len(types) + 1)]
    parts = compose(ids, shape)
    doc = base_document(types, rng)
    taken: set[str] = set()
    constraints = tuple(Constraint(cid, ctype, choose_params(ctype, doc, rng, taken)) for cid, ctype in zip(ids, types))
    return Instruction(constraints, tuple(parts)), doc


def _assignments(instruction: Instruction, verdict: str) -> list[dict[str, bool]]:
    expr, ids = instruction.expr(), instruction.ids
    wanted = verdict == "sat"
    found = []
    for values in itertools.product((True, False), repeat=len(ids)):
        if evaluate(expr, dict(enumerate(values, start=1))) == wanted:
            found.append(dict(zip(ids, values)))
    return found


def realize(
    instruction: Instruction, base: Document, verdict: str, rng: random.Random
) -> tuple[Document, dict[str, bool], dict[str, bool], bool] | None:
    """A mutated copy of ``base`` with the wanted verdict: (document, labels, target, clean)."""
    candidates = _assignments(instruction, verdict)
    weights = [0.35 ** sum(not v for v in target.values()) for target in candidates]
    fallback = None
    for _ in range(4):  # targets
        target = rng.choices(candidates, weights)[0]
        false = [c for c in instruction.constraints if not target[c.id]]
        for _ in range(MAX_TRIES // 4):
            doc = copy.deepcopy(base)
            for constraint in rng.sample(false, len(false)):
                mutate(doc, constraint, instruction, rng)
            labels = instruction.labels(doc.render())
            if labels == target:
                return doc, labels, target, True
            if fallback is None and instruction.verdict(labels) == verdict:
                fallback = (doc, labels, target, False)
    return fallback


@dataclass
class GeneratedItem:
    """One generated instruction with its base document and its labelled sat and unsat records."""

    instruction_id: str
    instruction: Instruction
    group: str
    base: Document
    records: list[dict[str, Any]] = field(default_factory=list)


def record(
    item_id: str,
    instruction_id: str,
    instruction: Instruction,
    output: str,
    labels: Mapping[str, bool],
    *,
    source: str,
    clean: bool | None,
    target: Mapping[str, bool] | None = None,
) -> dict[str, Any]:
    """One labelled data record: instruction, output, per-constraint labels and the verdict computed from them."""
    verdict = instruction.verdict(labels)
    return {
        "id": item_id,
        "instruction_id": instruction_id,
        "instruction": instruction.text,
        "output": output,
        "verdict": verdict,
        "labels": dict(labels),
        "target_labels": dict(target) if target is not None else None,
        "clean": clean,
        "n_constraints": len(instruction.constraints),
        "group": group_of(len(instruction.constraints)),
        "formula": instruction.formula,
        "constraints": [c.to_dict() for c in instruction.constraints],
        "parts": [p.to_dict() for p in instruction.parts],
        "source": source,
    }


def instruction_plan(count: int, seed: int) -> list[tuple[int, int]]:
    """(constraint count, member of that count's product) for each of ``count`` instructions: the counts
    cycle through the complexity groups (balanced), and each group takes the members of
    ``product_indices`` in turn — distinct, at most ``MAX_PER_COUNT`` per count."""
    if -(-count // len(GROUPS)) > MAX_PER_COUNT:
        raise ValueError(
            f"at most {MAX_PER_COUNT} instructions per constraint count "
            f"({MAX_PER_COUNT * len(GROUPS)} in all), as in the paper"
        )
    used: Counter[int] = Counter()
    plan = []
    for k in range(count):
        n = GROUPS[k % len(GROUPS)][1]
        plan.append((n, product_indices(n, seed)[used[n]]))
        used[n] += 1
    return plan


def generate_instruction(seed: int, index: int, n: int, member: int) -> GeneratedItem:
    """Instruction ``index``: member ``member`` of the product for ``n`` constraints, with a sat and an unsat output."""
    rng = random.Random(f"vifbench:{seed}:{index}")
    types, shape = product_at(n, member)
    while True:
        instruction, base = make_instruction(types, shape, rng)
        outputs = [realize(instruction, base, verdict, rng) for verdict in ("sat", "unsat")]
        if all(outputs):
            break
    instruction_id = f"vif-{seed}-{index:04d}"
    item = GeneratedItem(instruction_id, instruction, group_of(n), base)
    for verdict, (doc, labels, target, clean) in zip(("sat", "unsat"), outputs):
        item.records.append(
            record(
                f"{instruction_id}-{verdict}",
                instruction_id,
                instruction,
                doc.render(),
                labels,
                source="synthetic",
                clean=clean,
                target=target,
            )
        )
    return item


def generate(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` instructions → ``2 * count`` records (one sat and one unsat output each), offline."""
    records = []
    for index, (n, member) in enumerate(instruction_plan(count, seed)):
        records.extend(generate_instruction(seed, index, n, member).records)
    return records


def label_distribution(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per complexity group (and ``all``): pairs, verdicts, per-constraint labels, clean mutations,
    and true/false labels per constraint type."""
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
                    "clean": 0,
                    "by_type": Counter(),
                },
            )
            row["outputs"] += 1
            row["instructions"].add(rec["instruction_id"])
            row[rec["verdict"]] += 1
            row["constraints"] += rec["n_constraints"]
            row["clean"] += bool(rec.get("clean"))
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
            "clean_share": round(row["clean"] / row["outputs"], 3),
            "by_type": by_type,
        }
    return out


__all__ = [
    "GROUPS",
    "MAX_PER_COUNT",
    "Document",
    "GeneratedItem",
    "base_document",
    "compose",
    "generate",
    "generate_instruction",
    "group_of",
    "instruction_plan",
    "label_distribution",
    "make_instruction",
    "product_at",
    "product_indices",
    "product_size",
    "realize",
    "record",
    "shape_at",
    "shape_count",
    "type_combinations",
]
