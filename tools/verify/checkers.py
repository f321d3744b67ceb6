"""Reference checkers for the VifBench constraint types (docs/architecture.md §11), and the user-checker convention.

Every checker is a plain function ``check_<type>(response: str, **params) -> bool`` over the text of
a response. They label the generated VifBench data (``autonesy.tasks.vifbench``), they are what the
scripted self-test LLM answers with, and they are the worked example of a **user checker module**:
a module whose functions carry ``@checker(...)`` metadata can be named with ``--checkers MODULE``,
and the checking agent then prefers such a function over writing code for a matching constraint.

Conventions every checker shares (the instruction text of a VifBench item states them too):

- **words**: maximal runs of letters and digits, joined by inner apostrophes or hyphens
  (``WORD_RE``); compared case-insensitively.
- **title**: the first non-empty line, when it starts with exactly one ``#`` (``# My Title``), as in
  the Nsvif paper's VifBench (Table 5).
- **subsection title**: a line starting with more than one ``#`` (``## Part One``); it opens a
  subsection. A subsection-title constraint names the titles the response must use.
- **body**: the response without its title line and subsection-title lines. Word counts, sentences,
  tone, topic and first/last words are measured on the body.
- **keywords**: matched anywhere in the response, case-insensitively, as substrings (the paper's
  meaning: "cat" is included in "Category").
- **total word count**: "around N" words means within ``word_tolerance(N)`` = max(3, 10 % of N,
  rounded) of N.
- **sentences**: body text split after ``.``, ``!`` or ``?`` and at blank lines; a piece without
  words is not a sentence.
- **subsections**: the body split at subsection titles; text before the first title (if it has
  words) is a subsection without a title; a response without titles is one subsection.

``writing_tone`` and ``writing_topic`` are *semantic* constraints: their reference checkers are
lexicon-based (a tone or topic is the category whose marker words occur most often, strictly), which
is exact on the generator's sentence banks and only a heuristic on free text.

``standalone_source(type, params)`` writes a reference checker as a self-contained program defining
``check(response) -> bool`` (and, where ``SPAN_FUNCTIONS`` has one, ``spans(response)``: the words,
sentences or lines the result rests on) — the kind of program the checking agent is asked to write.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from autonesy.tools.pyast import parse_python

WORD_RE = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
TITLE_RE = re.compile(r"^\s*#(?!#)\s*\S")
HEADING_RE = re.compile(r"^\s*##+\s*\S")
SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|\n\s*\n")

TONE_LEXICON: dict[str, tuple[str, ...]] = {
    "optimistic": ("hopeful", "brighter", "promising", "wonderful", "thrilled", "cheerful", "confident", "delighted"),
    "pessimistic": ("hopeless", "doomed", "bleak", "dreadful", "worse", "gloomy", "disaster", "pointless"),
    "humorous": ("hilarious", "giggle", "silly", "ridiculous", "joke", "clownish", "absurd", "chuckle"),
    "nostalgic": ("childhood", "memories", "remember", "nostalgia", "bygone", "reminisce", "yesteryear", "fondly"),
    "urgent": ("immediately", "urgent", "hurry", "deadline", "emergency", "quickly", "critical", "asap"),
}
TOPIC_LEXICON: dict[str, tuple[str, ...]] = {
    "technology": ("laptop", "software", "robot", "smartphone", "internet", "computer", "gadget", "algorithm"),
    "nature": ("forest", "river", "mountain", "meadow", "oak", "waterfall", "wildflowers", "glacier"),
    "food": ("soup", "bread", "pasta", "pancakes", "curry", "salad", "cheese", "dumplings"),
    "sports": ("football", "marathon", "tennis", "basketball", "swimming", "cycling", "goalkeeper", "stadium"),
    "travel": ("airport", "passport", "luggage", "hotel", "suitcase", "journey", "voyage", "itinerary"),
    "health": ("doctor", "vitamins", "clinic", "sleep", "exercise", "nurse", "medicine", "therapy"),
    "music": ("guitar", "concert", "piano", "orchestra", "melody", "drummer", "album", "choir"),
    "art": ("painting", "sculpture", "canvas", "gallery", "sketch", "portrait", "museum", "easel"),
    "science": (
        "experiment",
        "laboratory",
        "microscope",
        "telescope",
        "molecule",
        "physics",
        "chemistry",
        "hypothesis",
    ),
    "history": ("castle", "empire", "medieval", "archive", "pharaoh", "revolution", "dynasty", "manuscript"),
    "education": ("classroom", "teacher", "homework", "exam", "textbook", "tutor", "semester", "graduation"),
    "finance": ("budget", "savings", "investment", "mortgage", "taxes", "salary", "loan", "pension"),
    "fashion": ("jacket", "dress", "sneakers", "scarf", "boutique", "runway", "wardrobe", "necklace"),
    "weather": ("rain", "thunderstorm", "fog", "sunshine", "snowfall", "breeze", "forecast", "drizzle"),
    "animals": ("puppy", "kitten", "parrot", "rabbit", "horse", "hamster", "tortoise", "dolphin"),
}
RELATIONS = ("at most", "at least")  # words per sentence
TOLERANCE_SHARE, TOLERANCE_MIN = 0.10, 3  # total word count: "around N" = N ± max(3, 10 % of N)
PARITIES = ("even", "odd")


# --------------------------------------------------------------------------------------------------
# Text helpers (copied verbatim into standalone checker programs)


def words(text):
    """list of words (letter/digit runs, inner ' or - kept)."""
    return WORD_RE.findall(text)


def title_of(text):
    """the title if the first non-empty line starts with exactly one #, else None."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[1:].strip() if TITLE_RE.match(line) else None
    return None


def body_lines(text):
    """The lines of the body: without the title line and without subsection-title lines."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    keep = []
    for i, line in enumerate(lines):
        if i == first and TITLE_RE.match(line):
            continue
        if HEADING_RE.match(line):
            keep.append("")  # a title line ends the paragraph before it
            continue
        keep.append(line)
    return keep


def body_text(text):
    """text without the title and ## lines (where words and sentences are counted)."""
    return "\n".join(body_lines(text))


def sentences(text):
    """the body's sentences (split after .!? and at blank lines)."""
    pieces = SENTENCE_SPLIT_RE.split(body_text(text).strip())
    return [piece.strip() for piece in pieces if words(piece)]


def subsections(text):
    """[(title or None, text)]: the body split at ## lines."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    parts = [[None, []]]
    for i, line in enumerate(lines):
        if i == first and TITLE_RE.match(line):
            continue
        if HEADING_RE.match(line):
            parts.append([line.strip().lstrip("#").strip(), []])
        else:
            parts[-1][1].append(line)
    result = [(title, "\n".join(body)) for title, body in parts]
    if len(result) > 1 and not words(result[0][1]):
        result = result[1:]
    return result


def category_counts(text, lexicon):
    """How often the marker words of each category occur in ``text`` (whole words, any case)."""
    counts = {name: 0 for name in lexicon}
    for word in words(text):
        lowered = word.lower()
        for name, markers in lexicon.items():
            if lowered in markers:
                counts[name] += 1
    return counts


def dominant_category(text, lexicon):
    """The category with strictly the most marker words (at least one), else None."""
    counts = category_counts(text, lexicon)
    best = max(counts.values()) if counts else 0
    leaders = [name for name, count in counts.items() if count == best]
    return leaders[0] if best > 0 and len(leaders) == 1 else None


def compare(value, relation, limit):
    """relation: 'at most' or 'at least'."""
    if relation == "at most":
        return value <= limit
    if relation == "at least":
        return value >= limit
    raise ValueError(f"unknown relation {relation!r}; expected 'at most' or 'at least'")


def has_keyword(text, keyword):
    """keyword in text, any case, also inside words."""
    return keyword.lower() in text.lower()


def word_tolerance(target):
    """how far a count may be from target and still be "around" it."""
    return max(TOLERANCE_MIN, round(TOLERANCE_SHARE * target))


def subsection_titles(text):
    """titles of the ## lines, in order."""
    return [line.strip().lstrip("#").strip() for line in text.splitlines() if HEADING_RE.match(line)]


# --------------------------------------------------------------------------------------------------
# The user-checker convention


@dataclass(frozen=True)
class CheckerInfo:
    """What the checking agent is told about a checker function (its prompt lists these)."""

    name: str
    description: str
    kind: str = "logic"  # logic | semantic
    params: Mapping[str, str] = field(default_factory=dict)  # parameter name -> meaning

    def signature(self) -> str:
        """The checker's call as prompts show it: ``name(response, params…)``."""
        args = ", ".join(["response", *self.params])
        return f"{self.name}({args})"


CHECKER_ATTRIBUTE = "__verify_checker__"


def checker(
    name: str | None = None, *, description: str, params: Mapping[str, str] | None = None, kind: str = "logic"
) -> Callable[[Callable[..., bool]], Callable[..., bool]]:
    """Mark ``fn(response, **params) -> bool`` as a checker the checking agent may choose.

    ``description`` says which constraint it checks (one line); ``params`` names and explains its
    keyword parameters; ``kind`` is ``logic`` or ``semantic``.
    """
    if kind not in ("logic", "semantic"):
        raise ValueError("kind must be 'logic' or 'semantic'")

    def mark(fn: Callable[..., bool]) -> Callable[..., bool]:
        setattr(
            fn,
            CHECKER_ATTRIBUTE,
            CheckerInfo(name or fn.__name__, " ".join(description.split()), kind, dict(params or {})),
        )
        return fn

    return mark


# --------------------------------------------------------------------------------------------------
# The eleven reference checkers


@checker(
    "writing_tone",
    kind="semantic",
    description="The response is written in a given tone.",
    params={"tone": f"one of {', '.join(TONE_LEXICON)}"},
)
def check_writing_tone(response, tone):
    """The tone with strictly the most marker words in the body is the one asked for."""
    return dominant_category(body_text(response), TONE_LEXICON) == tone


@checker(
    "writing_topic",
    kind="semantic",
    description="The response is about a given topic.",
    params={"topic": f"one of {', '.join(TOPIC_LEXICON)}"},
)
def check_writing_topic(response, topic):
    """The topic with strictly the most marker words in the body is the one asked for."""
    return dominant_category(body_text(response), TOPIC_LEXICON) == topic


@checker(
    "keyword_inclusion",
    description="The response contains every one of the given keywords (any case, also inside words).",
    params={"keywords": "list of words"},
)
def check_keyword_inclusion(response, keywords):
    """Every keyword occurs (any case, also inside a longer word)."""
    return all(has_keyword(response, keyword) for keyword in keywords)


@checker(
    "keyword_exclusion",
    description="The response contains none of the given keywords (any case, also inside words).",
    params={"keywords": "list of words"},
)
def check_keyword_exclusion(response, keywords):
    """No keyword occurs (any case, not even inside a longer word)."""
    return not any(has_keyword(response, keyword) for keyword in keywords)


@checker("response_title", description="The response starts with a title: a first line starting with exactly one '#'.")
def check_response_title(response):
    """The first non-empty line is a ``#`` title."""
    return title_of(response) is not None


@checker(
    "subsection_titles",
    description="The body is divided into subsections with exactly the given titles, in order, each on a line "
    "starting with '##' (no text before the first one).",
    params={"titles": "list of subsection titles"},
)
def check_subsection_titles(response, titles):
    """The response is divided into subsections with exactly these titles, in order (any case)."""
    parts = subsections(response)
    return all(title is not None for title, _ in parts) and [t.lower() for t in subsection_titles(response)] == [
        t.lower() for t in titles
    ]


@checker(
    "words_per_sentence",
    description="Every sentence of the body has at most / at least `limit` words.",
    params={"relation": "'at most' or 'at least'", "limit": "number of words"},
)
def check_words_per_sentence(response, relation, limit):
    """Every sentence's word count meets the relation (and there is at least one sentence)."""
    found = sentences(response)
    return bool(found) and all(compare(len(words(s)), relation, limit) for s in found)


@checker(
    "word_count_parity", description="The body has an even / odd number of words.", params={"parity": "'even' or 'odd'"}
)
def check_word_count_parity(response, parity):
    """The body's word count is even or odd as asked."""
    return len(words(body_text(response))) % 2 == (0 if parity == "even" else 1)


@checker(
    "total_word_count",
    description="The body has around `target` words in total (within max(3, 10 %)).",
    params={"target": "number of words"},
)
def check_total_word_count(response, target):
    """The body's word count is "around" the target: within a share of it, and at least a minimum."""
    return abs(len(words(body_text(response))) - target) <= word_tolerance(target)


@checker("same_start_end_word", description="The body starts and ends with the same word (any case).")
def check_same_start_end_word(response):
    """The body starts and ends with the same word (any case)."""
    found = words(body_text(response))
    return bool(found) and found[0].lower() == found[-1].lower()


@checker(
    "subsections_same_start_end_word",
    description="Every subsection of the body (that has words) starts and ends with the same word (any case).",
)
def check_subsections_same_start_end_word(response):
    """Every non-empty subsection starts and ends with the same word."""
    bodies = [words(body) for _, body in subsections(response)]
    bodies = [found for found in bodies if found]
    return bool(bodies) and all(found[0].lower() == found[-1].lower() for found in bodies)


# --------------------------------------------------------------------------------------------------
# Spans: the parts of a response a checker's result rests on (quoted in the verifier's explanation)


def spans_keywords(response, keywords):
    """The words holding the keywords (wanted or forbidden)."""
    return [w for w in words(response) if any(k.lower() in w.lower() for k in keywords)]


def spans_words_per_sentence(response, relation, limit):
    """The sentences that break the limit."""
    return [s for s in sentences(response) if not compare(len(words(s)), relation, limit)]


def spans_subsection_titles(response, titles):
    """The subsection title lines."""
    return [line.strip() for line in response.splitlines() if HEADING_RE.match(line)]


SPAN_FUNCTIONS: dict[str, Callable[..., list]] = {
    "keyword_inclusion": spans_keywords,
    "keyword_exclusion": spans_keywords,
    "words_per_sentence": spans_words_per_sentence,
    "subsection_titles": spans_subsection_titles,
}


REFERENCE_CHECKERS: dict[str, Callable[..., bool]] = {
    getattr(fn, CHECKER_ATTRIBUTE).name: fn
    for fn in (
        check_writing_tone,
        check_writing_topic,
        check_keyword_inclusion,
        check_keyword_exclusion,
        check_response_title,
        check_subsection_titles,
        check_words_per_sentence,
        check_word_count_parity,
        check_total_word_count,
        check_same_start_end_word,
        check_subsections_same_start_end_word,
    )
}
CONSTRAINT_TYPES = tuple(REFERENCE_CHECKERS)
SEMANTIC_TYPES = tuple(
    name for name, fn in REFERENCE_CHECKERS.items() if getattr(fn, CHECKER_ATTRIBUTE).kind == "semantic"
)
LOGIC_TYPES = tuple(name for name in CONSTRAINT_TYPES if name not in SEMANTIC_TYPES)


def reference_check(constraint_type: str, response: str, params: Mapping[str, Any]) -> bool:
    """The reference label of one constraint on one response."""
    try:
        fn = REFERENCE_CHECKERS[constraint_type]
    except KeyError:
        raise ValueError(f"unknown constraint type {constraint_type!r}; known: {', '.join(CONSTRAINT_TYPES)}") from None
    return bool(fn(response, **dict(params)))


_HELPERS = (
    words,
    title_of,
    body_lines,
    body_text,
    sentences,
    subsections,
    category_counts,
    dominant_category,
    compare,
    has_keyword,
    word_tolerance,
    subsection_titles,
)


def _needed(source: str, available: Mapping[str, str]) -> list[str]:
    """Names of ``available`` that ``source`` uses, directly or through each other (definition order)."""
    found: set[str] = set()
    pending = [source]
    while pending:
        text = pending.pop()
        for name, body in available.items():
            if name not in found and re.search(rf"\b{name}\b", text):
                found.add(name)
                pending.append(body)
    return [name for name in available if name in found]


def _compact(fn: Callable[..., Any]) -> str:
    """The source of ``fn`` without decorators, docstring and comments (what a program needs)."""
    node = parse_python(textwrap.dedent(inspect.getsource(fn))).body[0]
    node.decorator_list = []
    if (
        node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(getattr(node.body[0], "value", None), ast.Constant)
        and isinstance(node.body[0].value.value, str)
    ):
        node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(node) + "\n"


_CONSTANTS = {
    "WORD_RE": f"WORD_RE = re.compile({WORD_RE.pattern!r})",
    "TITLE_RE": f"TITLE_RE = re.compile({TITLE_RE.pattern!r})",
    "HEADING_RE": f"HEADING_RE = re.compile({HEADING_RE.pattern!r})",
    "SENTENCE_SPLIT_RE": f"SENTENCE_SPLIT_RE = re.compile({SENTENCE_SPLIT_RE.pattern!r})",
    "TOLERANCE_SHARE": f"TOLERANCE_SHARE, TOLERANCE_MIN = {TOLERANCE_SHARE!r}, {TOLERANCE_MIN!r}",
    "TOLERANCE_MIN": "",
    "TONE_LEXICON": f"TONE_LEXICON = {dict(TONE_LEXICON)!r}",
    "TOPIC_LEXICON": f"TOPIC_LEXICON = {dict(TOPIC_LEXICON)!r}",
}

# The helpers every generated checker finds already defined (the checking agent is told their
# signatures and meanings instead of writing them out: the conventions in a few lines of prompt, and
# programs a few lines long). ``body_lines`` is there for ``body_text``; the prompt lists the others.
CHECKER_HELPERS = (
    words,
    title_of,
    body_lines,
    body_text,
    sentences,
    subsections,
    subsection_titles,
    has_keyword,
    word_tolerance,
    compare,
)


def _program(code: str, provided: frozenset[str] = frozenset()) -> str:
    """``code`` preceded by the helpers and constants it uses that are not ``provided``."""
    helpers = {helper.__name__: _compact(helper) for helper in _HELPERS if helper.__name__ not in provided}
    functions = _needed(code, helpers)
    code_so_far = code + "".join(helpers[name] for name in functions)
    constants = {name: line for name, line in _CONSTANTS.items() if name not in provided}
    parts = ["\n".join(constants[name] for name in _needed(code_so_far, constants))]
    parts += [helpers[name] for name in functions]
    parts.append(code)
    program = "\n\n".join(part.rstrip() + "\n" for part in parts if part.strip())
    return f"import re\n\n\n{program}" if "re." in program else program


def helper_source() -> str:
    """The trusted source that defines ``CHECKER_HELPERS`` (and the constants they use) before a
    generated checker runs."""
    return _program(
        "\n\n".join(_compact(helper) for helper in CHECKER_HELPERS), frozenset(h.__name__ for h in CHECKER_HELPERS)
    )


HELPER_NAMES = frozenset([helper.__name__ for helper in CHECKER_HELPERS] + _needed(helper_source(), _CONSTANTS))


def helper_api() -> list[str]:
    """One line per helper a checker may call: its signature and what it returns (for the checker prompt)."""
    return [
        f"{helper.__name__}{inspect.signature(helper)}: {inspect.getdoc(helper)}"
        for helper in CHECKER_HELPERS
        if helper is not body_lines
    ]


def standalone_source(constraint_type: str, params: Mapping[str, Any], *, helpers: bool = True) -> str:
    """A program defining ``check(response) -> bool`` for this constraint (and ``spans``, where
    ``SPAN_FUNCTIONS`` has one): the reference checker with its parameters bound.

    With ``helpers`` it is self-contained (the helpers and constants it uses written out; only the
    standard library's ``re`` imported); without, it relies on ``CHECKER_HELPERS`` being defined, as
    in a generated checker's run (``helper_source``).
    """
    fn = REFERENCE_CHECKERS.get(constraint_type)
    if fn is None:
        raise ValueError(f"unknown constraint type {constraint_type!r}")
    body = _bound(fn, "check", params)
    span_fn = SPAN_FUNCTIONS.get(constraint_type)
    if span_fn is not None:
        body += "\n\n" + _bound(span_fn, "spans", params)
    return _program(body, frozenset() if helpers else HELPER_NAMES)


def _bound(fn: Callable[..., Any], name: str, params: Mapping[str, Any]) -> str:
    """The source of ``fn`` named ``name``, with ``params`` as the defaults of its parameters after the
    response (so ``name(response)`` is the bound call)."""
    node = parse_python(_compact(fn)).body[0]
    assert isinstance(node, ast.FunctionDef)
    node.name = name
    node.args.defaults = [parse_python(repr(params[arg.arg]), mode="eval").body for arg in node.args.args[1:]]
    return ast.unparse(node) + "\n"


__all__ = [
    "CHECKER_ATTRIBUTE",
    "CHECKER_HELPERS",
    "HELPER_NAMES",
    "CONSTRAINT_TYPES",
    "LOGIC_TYPES",
    "PARITIES",
    "REFERENCE_CHECKERS",
    "SPAN_FUNCTIONS",
    "RELATIONS",
    "SEMANTIC_TYPES",
    "TONE_LEXICON",
    "TOPIC_LEXICON",
    "CheckerInfo",
    "body_text",
    "checker",
    "reference_check",
    "has_keyword",
    "helper_api",
    "helper_source",
    "sentences",
    "standalone_source",
    "subsection_titles",
    "subsections",
    "word_tolerance",
    "title_of",
    "words",
]
