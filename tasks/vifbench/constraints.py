"""VifBench constraints and instructions: the constraint types, their wording, and the composition of
several constraints into one instruction as text and as a formula.

A constraint standing alone is worded by its template from the Nsvif paper's Table 5, verbatim (the
total word count, which Table 5 does not list, by a template of ours in the same style); VifBench's
instructions are those templates concatenated, one per line (§A.2), and their formula is the
conjunction. Requirements may also negate a constraint or join two with OR, IMPLIES or IFF (worded
as clauses); the formula is written in the composition language of
:mod:`autonesy.tools.verify.solver` (one requirement per line).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from autonesy.tools.formats.expr import Expr, Op, Var, conj
from autonesy.tools.verify.checkers import CONSTRAINT_TYPES, SEMANTIC_TYPES, reference_check

PART_OPS = ("lit", "not", "or", "implies", "iff")
SPECIFIER = "this does not apply to title and subsection title lines. Title and subsection title lines start with at least one #."


def template(constraint_type: str, params: Mapping[str, Any]) -> str:
    """The constraint as VifBench's instruction words it: Table 5's template with its value."""
    p = dict(params)
    if constraint_type == "writing_tone":
        return f"Please write in this tone: {p['tone']}"
    if constraint_type == "writing_topic":
        return f"Please write in this topic: {p['topic']}"
    if constraint_type == "keyword_inclusion":
        return "Include these keywords, check for string inclusion regardless of capitalization: " + ", ".join(
            p["keywords"]
        )
    if constraint_type == "keyword_exclusion":
        return "Exclude these keywords, check for string exclusion regardless of capitalization: " + ", ".join(
            p["keywords"]
        )
    if constraint_type == "response_title":
        return f"Include this as the title of the text, titles are lines that start with only one #: {p['title']}"
    if constraint_type == "response_subsection_titles":
        return (
            "Include these subsection titles in the text, subsection titles are lines start with more than one #: "
            + (", ".join(p["titles"]))
        )
    if constraint_type == "words_per_sentence":
        return (
            "Please consider this number of words per sentence constraint: "
            f"at most {p['max']} words in each sentence, {SPECIFIER}"
        )
    if constraint_type == "even_odd_word_count":
        return (
            "Please consider this even/odd word count constraint: "
            f"the total number of words should be {p['parity']} {SPECIFIER}"
        )
    if constraint_type == "total_word_count":  # not in Table 5: ours, in its style
        return (
            f"Please consider this total word count constraint: around {p['target']} words (within 10 %), {SPECIFIER}"
        )
    if constraint_type == "start_end_same_word":
        return (
            "Please consider this word repetition constraint on the entire response: "
            f"the response should start and end with the same word, {SPECIFIER}"
        )
    if constraint_type == "subsections_start_end_same_word":
        return (
            "Please consider this word repetition constraint on subsections of the response: "
            f"each subsection should start and end with the same word, {SPECIFIER}"
        )
    raise ValueError(f"unknown constraint type {constraint_type!r}")


def _quoted(items: list[str]) -> str:
    quoted = [f'"{item}"' for item in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def clause(constraint_type: str, params: Mapping[str, Any]) -> str:
    """The constraint as a lower-case clause ("the response ...")."""
    p = dict(params)
    if constraint_type == "writing_tone":
        return f"the response is written in {'an' if p['tone'][0] in 'aeiou' else 'a'} {p['tone']} tone"
    if constraint_type == "writing_topic":
        return f"the response is about {p['topic']}"
    if constraint_type == "keyword_inclusion":
        kws = list(p["keywords"])
        return (
            f"the response includes the keyword {_quoted(kws)}"
            if len(kws) == 1
            else f"the response includes each of the keywords {_quoted(kws)}"
        )
    if constraint_type == "keyword_exclusion":
        kws = list(p["keywords"])
        return (
            f"the response does not use the word {_quoted(kws)}"
            if len(kws) == 1
            else f"the response uses none of the words {_quoted(kws)}"
        )
    if constraint_type == "response_title":
        return f'the response has the title "{p["title"]}" on a line starting with a single "#"'
    if constraint_type == "response_subsection_titles":
        titles = list(p["titles"])
        named = (
            f"the subsection title {_quoted(titles)}"
            if len(titles) == 1
            else f"the subsection titles {_quoted(titles)}"
        )
        return f'the response includes {named}, each on a line starting with "##"'
    if constraint_type == "words_per_sentence":
        return f"every sentence has at most {p['max']} words"
    if constraint_type == "even_odd_word_count":
        return f"the response has an {p['parity']} number of words"
    if constraint_type == "total_word_count":
        return f"the response has around {p['target']} words in total"
    if constraint_type == "start_end_same_word":
        return "the response starts and ends with the same word"
    if constraint_type == "subsections_start_end_same_word":
        return "every subsection starts and ends with the same word"
    raise ValueError(f"unknown constraint type {constraint_type!r}")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Constraint:
    """One constraint of an instruction: its id, type and parameters; its checker is the reference one."""

    id: str  # C1, C2, ...
    type: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``semantic`` (tone, topic: a judge decides) or ``logic`` (a checker program decides)."""
        return "semantic" if self.type in SEMANTIC_TYPES else "logic"

    @property
    def clause(self) -> str:
        """The constraint as a clause of the instruction's text."""
        return clause(self.type, self.params)

    @property
    def summary(self) -> str:
        """The one-line summary a formulation agent is expected to extract."""
        return _capital(self.clause) + "."

    def check(self, response: str) -> bool:
        """Whether a response meets the constraint, by its reference checker (the labels come from here)."""
        return reference_check(self.type, response, self.params)

    def to_dict(self) -> dict[str, Any]:
        """The constraint as JSON data."""
        return {
            "id": self.id,
            "type": self.type,
            "kind": self.kind,
            "summary": self.summary,
            "params": dict(self.params),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Constraint:
        """A constraint from JSON data; an unknown type is a ``ValueError``."""
        if data.get("type") not in CONSTRAINT_TYPES:
            raise ValueError(f"unknown constraint type {data.get('type')!r}")
        return cls(str(data["id"]), str(data["type"]), dict(data.get("params") or {}))


@dataclass(frozen=True)
class Part:
    """One requirement of an instruction: ``op`` over one or two constraint ids."""

    op: str  # lit | not | or | implies | iff
    args: tuple[str, ...]

    def formula(self) -> str:
        """The requirement as a formula over constraint ids (the text a verifier's formulation is compared with)."""
        if self.op == "lit":
            return self.args[0]
        if self.op == "not":
            return f"NOT {self.args[0]}"
        return f" {self.op.upper()} ".join(self.args)

    def sentence(self, by_id: Mapping[str, Constraint]) -> str:
        """The requirement as an English sentence of the instruction."""
        if self.op == "lit":
            constraint = by_id[self.args[0]]
            return template(constraint.type, constraint.params)
        a = by_id[self.args[0]].clause
        if self.op == "not":
            return f"It is not the case that {a}."
        b = by_id[self.args[1]].clause
        if self.op == "or":
            return f"Either {a}, or {b} (or both)."
        if self.op == "implies":
            return f"If {a}, then {b}."
        return f"{_capital(a)} if and only if {b}."

    def expr(self, index: Mapping[str, int]) -> Expr:
        """The requirement as an expression over the constraints' variable indices."""
        args = tuple(Var(index[a]) for a in self.args)
        if self.op == "lit":
            return args[0]
        if self.op == "not":
            return Op("not", args)
        return Op(self.op, args)

    def to_dict(self) -> dict[str, Any]:
        """The requirement as JSON data."""
        return {"op": self.op, "args": list(self.args)}


@dataclass(frozen=True)
class Instruction:
    """An instruction: its constraints and the requirements composed from them (a constraint, NOT, OR, IMPLIES, IFF)."""

    constraints: tuple[Constraint, ...]
    parts: tuple[Part, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        """The constraint ids in order."""
        return tuple(c.id for c in self.constraints)

    @property
    def by_id(self) -> dict[str, Constraint]:
        """The constraints by id."""
        return {c.id: c for c in self.constraints}

    @property
    def formula(self) -> str:
        """The requirements as formulas, one per line."""
        return "\n".join(part.formula() for part in self.parts)

    def expr(self) -> Expr:
        """The whole instruction as one expression (the conjunction of its requirements)."""
        index = {cid: i for i, cid in enumerate(self.ids, start=1)}
        return conj(*(part.expr(index) for part in self.parts))

    @property
    def text(self) -> str:
        """The instruction as a prompt: its requirements' sentences (Table 5's templates), one per line."""
        by_id = self.by_id
        return "\n".join(part.sentence(by_id) for part in self.parts)

    def labels(self, response: str) -> dict[str, bool]:
        """Each constraint's truth value for a response, by the reference checkers."""
        return {c.id: c.check(response) for c in self.constraints}

    def verdict(self, labels: Mapping[str, bool]) -> str:
        """``sat`` or ``unsat``: the requirements evaluated under the constraint labels."""
        from autonesy.tools.formats.expr import evaluate

        values = {i: bool(labels[cid]) for i, cid in enumerate(self.ids, start=1)}
        return "sat" if evaluate(self.expr(), values) else "unsat"

    def unmet(self, labels: Mapping[str, bool]) -> list[str]:
        """The requirements the labels leave false, as the instruction words them (the checkers' messages
        a writer gets to repair a response)."""
        from autonesy.tools.formats.expr import evaluate

        index = {cid: i for i, cid in enumerate(self.ids, start=1)}
        values = {index[cid]: bool(labels[cid]) for cid in self.ids}
        by_id = self.by_id
        return [part.sentence(by_id) for part in self.parts if not evaluate(part.expr(index), values)]

    def omissions(self) -> list[Instruction]:
        """The instruction without one requirement over a logic constraint, for each such requirement —
        what a writer is given to produce an unsat response (the paper's §A.2)."""
        found = []
        for part in self.parts:
            if any(self.by_id[cid].kind == "logic" for cid in part.args):
                kept = tuple(p for p in self.parts if p is not part)
                used = {cid for p in kept for cid in p.args}
                found.append(Instruction(tuple(c for c in self.constraints if c.id in used), kept))
        return found

    def to_dict(self) -> dict[str, Any]:
        """The instruction as JSON data."""
        return {
            "constraints": [c.to_dict() for c in self.constraints],
            "parts": [p.to_dict() for p in self.parts],
            "formula": self.formula,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Instruction:
        """An instruction from JSON data."""
        constraints = tuple(Constraint.from_dict(c) for c in data["constraints"])
        parts = tuple(Part(p["op"], tuple(p["args"])) for p in data["parts"])
        return cls(constraints, parts)


__all__ = ["SPECIFIER", "Constraint", "Instruction", "PART_OPS", "Part", "clause", "template"]
