"""Reference checkers for the VifBench constraint types (docs/architecture.md §11), and the user-checker convention.

Every checker is a plain function ``check_<type>(response: str, **params) -> bool`` over the text of
a response. They label the generated VifBench data (``autonesy.tasks.vifbench``), the ``vifbench
check`` command runs them one at a time, the label-reading plumbing agents answer with them, and they
are the worked example of a **user checker module**: a module whose functions carry ``@checker(...)``
metadata can be named with ``--checkers MODULE``, and the checking agent then prefers such a
function over writing code for a matching constraint.

The conventions are the ones the templates of the Nsvif paper's Table 5 state, word for word where
the table says something, and ours (marked *ours*) where it is silent:

- **title line**: a line that starts with exactly one ``#`` (``# My Title``), anywhere in the text
  ("titles are lines that start with only one #"); its title is the rest of the line.
- **subsection title line**: a line that starts with more than one ``#`` (``## Part One``)
  ("subsection title lines start with more than one #"). Leading spaces before the ``#`` are
  ignored (*ours*). Titles are compared without case, surrounding ``*``/``_`` emphasis or closing
  ``#``s (*ours*).
- **body**: every line that is not a title or subsection title line. The counting constraints (word
  count, parity, words per sentence, first and last word) apply to the body only ("this does not apply
  to title and subsection title lines").
- **words** (*ours*): the whitespace-separated tokens of the body that hold a letter or a digit, with
  the punctuation around them stripped ("3.14", "U.S.", "well-known" and "don't" are one word each;
  a lone dash is none); a list marker opening a line (``-``, ``*``, ``+``, ``•``, ``1.``, ``1)``) is
  not a word. First and last words are compared without case.
- **paragraphs**: the body's blocks — runs of lines that are neither blank nor title or subsection
  title lines, a line break inside a run joining its lines ("this does not apply to title and
  subsection title lines": only those lines are taken out, so a line break elsewhere is no boundary).
  A line opening with a list marker starts a block of its own (*ours*: a list item is a block).
- **sentences**: the unit the paper names ("this number of words per sentence constraint") is the
  sentence, so a sentence wrapped over two lines is one sentence. Each paragraph is split by pySBD
  (rule-based sentence boundary detection, the "Golden Rules": abbreviations such as "Dr.", "Mr.",
  "p.m.", "U.S.", "e.g.", initials, decimals and ellipses do not end a sentence), and a piece pySBD
  splits off that starts in lower case continues the sentence before it ("on Fri. please"); a piece
  without words is not a sentence. pySBD's time grows with the square of a text's sentences, so a
  long paragraph is given to it in windows (``SEGMENT_WINDOW`` characters, a sentence kept only when
  the next one starts ``SEGMENT_MARGIN`` characters before the window's end): linear in the text.
- **at most N words per sentence** holds when no sentence has more than N words (§A.4: an output
  violates it "as many sentences contain more than 8 words"), so an empty response, or one with only
  title lines, meets it.
- **subsections**: the stretch from a subsection title line to the next title or subsection title
  line; text before the first subsection title line is not a subsection. The subsections constraint
  needs at least one subsection with words and looks only at those (*ours*).
- **keywords**: string inclusion regardless of capitalization, anywhere in the response, title lines
  included ("cat" is included in "Category").
- **total word count** (*ours*; the paper says "around 500 words" and gives no tolerance): "around N"
  words means within ``word_tolerance(N)`` = max(3, 10 % of N, rounded) of N.

``writing_tone`` and ``writing_topic`` are *semantic* constraints: their reference checkers are
lexicon-based (a tone or topic is the category whose marker words occur most often, strictly), which
is exact on the generator's sentence banks and only a heuristic on free text.

``standalone_source(type, params)`` writes a reference checker as a self-contained program defining
``check(response) -> bool`` (and, where ``SPAN_FUNCTIONS`` has one, ``spans(response)``: the words,
sentences or lines the result rests on) — the kind of program the checking agent is asked to write.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pysbd

from autonesy.tools.pyast import parse_python

TITLE_RE = re.compile(r"^\s*#(?!#)")
SUBSECTION_RE = re.compile(r"^\s*##")
LIST_MARKER_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
EDGE_PUNCTUATION_RE = re.compile(r"^[\W_]+|[\W_]+$")
SEGMENTER = pysbd.Segmenter(language="en", clean=False, char_span=True)
SEGMENT_WINDOW, SEGMENT_MARGIN = 1000, 250  # pySBD sees at most this many characters at once

TONE_LEXICON: dict[str, tuple[str, ...]] = {
    "optimistic": ("hopeful", "brighter", "promising", "wonderful", "thrilled", "cheerful", "confident", "delighted"),
    "pessimistic": ("hopeless", "doomed", "bleak", "dreadful", "worse", "gloomy", "disaster", "pointless"),
    "humorous": ("hilarious", "giggle", "silly", "ridiculous", "joke", "clownish", "absurd", "chuckle"),
    "urgent": ("immediately", "urgent", "hurry", "deadline", "emergency", "quickly", "critical", "asap"),
}
# VifBench's 15 writing topics (autonesy.tasks.vifbench.banks) and the marker words of their sentences
TOPIC_LEXICON: dict[str, tuple[str, ...]] = {
    "The benefits of agile project management": (
        "standup",
        "backlog",
        "retrospective",
        "scrum",
        "kanban",
        "iteration",
        "velocity",
        "stakeholder",
    ),
    "Technology in education": (
        "tablet",
        "laptop",
        "software",
        "projector",
        "coding",
        "broadband",
        "chatbot",
        "webinar",
    ),
    "The importance of mental health awareness": (
        "therapist",
        "counselling",
        "mindfulness",
        "anxiety",
        "meditation",
        "helpline",
        "burnout",
        "journaling",
    ),
    "Sustainable living in cities": (
        "bicycle",
        "tram",
        "rooftop",
        "solar",
        "thrift",
        "insulation",
        "allotment",
        "carpool",
    ),
    "The future of remote work": (
        "videocall",
        "coworking",
        "headset",
        "timezone",
        "inbox",
        "whiteboard",
        "freelancer",
        "async",
    ),
    "The role of art in society": (
        "mural",
        "sculpture",
        "canvas",
        "theatre",
        "poetry",
        "graffiti",
        "exhibition",
        "sketchbook",
    ),
    "Healthy eating habits": (
        "porridge",
        "spinach",
        "lentils",
        "salmon",
        "yoghurt",
        "smoothie",
        "wholegrain",
        "lunchbox",
    ),
    "Climate change and coastal communities": (
        "seawall",
        "harbour",
        "fishermen",
        "dunes",
        "estuary",
        "mangroves",
        "tide",
        "boardwalk",
    ),
    "The impact of social media on teenagers": (
        "smartphone",
        "selfie",
        "influencer",
        "hashtag",
        "notifications",
        "livestream",
        "followers",
        "emoji",
    ),
    "The value of learning a second language": (
        "phrasebook",
        "flashcards",
        "tutor",
        "exchange",
        "dialect",
        "accent",
        "podcast",
        "penpal",
    ),
    "Space exploration and its benefits": (
        "astronaut",
        "telescope",
        "rover",
        "orbit",
        "spacecraft",
        "launchpad",
        "moon",
        "observatory",
    ),
    "The benefits of regular exercise": (
        "jogging",
        "yoga",
        "pilates",
        "swimming",
        "cycling",
        "stretching",
        "dumbbells",
        "hiking",
    ),
    "The history of the printing press": (
        "typesetter",
        "parchment",
        "ink",
        "bible",
        "monastery",
        "woodblock",
        "bookshop",
        "manuscript",
    ),
    "Urban gardening for beginners": (
        "balcony",
        "planter",
        "trowel",
        "basil",
        "windowsill",
        "greenhouse",
        "beehive",
        "wormery",
    ),
    "The importance of financial literacy for young adults": (
        "paycheck",
        "piggybank",
        "pension",
        "mortgage",
        "stocks",
        "tax",
        "insurance",
        "allowance",
    ),
}
TOLERANCE_SHARE, TOLERANCE_MIN = 0.10, 3  # total word count: "around N" = N ± max(3, 10 % of N)
PARITIES = ("even", "odd")


# --------------------------------------------------------------------------------------------------
# Text helpers (copied verbatim into standalone checker programs)


def is_heading(line):
    """True for a title line (one #) or a subsection title line (more than one #)."""
    return line.lstrip().startswith("#")


def heading_text(line):
    """The title of a title or subsection title line, without the #s and emphasis around it."""
    return line.strip().strip("#").strip().strip("*_").strip()


def titles(text):
    """The titles: lines that start with exactly one #, anywhere in the text."""
    return [heading_text(line) for line in text.splitlines() if TITLE_RE.match(line)]


def subsection_titles(text):
    """The subsection titles: lines that start with more than one #, in order."""
    return [heading_text(line) for line in text.splitlines() if SUBSECTION_RE.match(line)]


def same_title(found, wanted):
    """Two titles are the same regardless of capitalization and spacing."""
    return " ".join(found.split()).casefold() == " ".join(wanted.split()).casefold()


def body_lines(text):
    """The lines that are not title or subsection title lines (where counting constraints apply)."""
    return [line for line in text.splitlines() if not is_heading(line)]


def body_text(text):
    """The text without its title and subsection title lines."""
    return "\n".join(body_lines(text))


def plain_words(text):
    """The words of plain text: whitespace-separated tokens with a letter or digit, punctuation around them
    stripped (no title or list handling)."""
    found = []
    for token in text.split():
        word = EDGE_PUNCTUATION_RE.sub("", token)
        if any(ch.isalnum() for ch in word):
            found.append(word)
    return found


def words(text):
    """The words of the body: whitespace-separated tokens with a letter or digit, punctuation around
    them stripped, list markers opening a line skipped."""
    found = []
    for line in body_lines(text):
        found.extend(plain_words(LIST_MARKER_RE.sub("", line, count=1)))
    return found


def paragraphs(text):
    """The body's paragraphs: runs of lines that are neither blank nor title lines, each run's lines joined
    by spaces (a line break inside a paragraph does not end a sentence); a list item starts a paragraph."""
    found = []
    current: list[str] = []
    for line in text.splitlines():
        item = LIST_MARKER_RE.match(line)
        if not line.strip() or is_heading(line) or item:
            if current:
                found.append(" ".join(current))
            current = []
        if line.strip() and not is_heading(line):
            current.append(line[item.end() :].strip() if item else line.strip())
    if current:
        found.append(" ".join(current))
    return found


def sentences(text):
    """The body's sentences: pySBD on each paragraph (abbreviations, initials, decimals and ellipses do not
    end a sentence; a line break inside a paragraph does not either; a piece that starts in lower case
    continues the sentence before it); pieces without words dropped."""
    found: list[str] = []
    for paragraph in paragraphs(text):
        joined: list[list[str]] = []
        for piece in split_paragraph(paragraph):
            piece = piece.strip()
            if joined and piece[:1].islower():
                joined[-1].append(piece)
            elif piece:
                joined.append([piece])
        found.extend(sentence for sentence in (" ".join(parts) for parts in joined) if plain_words(sentence))
    return found


@functools.lru_cache(maxsize=1024)
def split_paragraph(paragraph):
    """One paragraph's pieces as pySBD segments them, given to it in windows so that the time stays linear
    (a piece is kept once the next one starts well inside the window; cached: segmenting is the slow part)."""
    pieces = []
    pending = ""  # the start of a piece that runs past the window
    start = 0
    while start < len(paragraph):
        window = paragraph[start : start + SEGMENT_WINDOW]
        last = start + SEGMENT_WINDOW >= len(paragraph)
        lead = len(window) - len(window.lstrip())  # pySBD's first piece starts after leading spaces
        found = [span.start for span in SEGMENTER.segment(window) if span.start > lead]
        starts = found if last else [at for at in found if at <= SEGMENT_WINDOW - SEGMENT_MARGIN]
        if not starts and not last:  # no boundary early enough: the piece runs on; the next window starts
            # SEGMENT_MARGIN before the first boundary seen (or before the end), so pySBD sees it in context
            cut = (found[0] if found else SEGMENT_WINDOW) - SEGMENT_MARGIN
            pending += window[:cut]
            start += cut
            continue
        bounds = [0, *starts] + ([len(window)] if last else [])
        for a, b in zip(bounds, bounds[1:]):
            pieces.append(pending + window[a:b])
            pending = ""
        if last:
            break
        start += starts[-1]
    return tuple(pieces)


def subsections(text):
    """[(title, text)] for each subsection: from a subsection title line to the next title or subsection
    title line (text before the first subsection title is not a subsection)."""
    parts = []
    current = None
    for line in text.splitlines():
        if SUBSECTION_RE.match(line):
            current = (heading_text(line), [])
            parts.append(current)
        elif TITLE_RE.match(line):
            current = None
        elif current is not None:
            current[1].append(line)
    return [(title, "\n".join(lines)) for title, lines in parts]


def same_word(first, second):
    """Two words are the same regardless of capitalization."""
    return first.casefold() == second.casefold()


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


def has_keyword(text, keyword):
    """keyword in text regardless of capitalization, also inside longer words and in title lines."""
    return keyword.casefold() in text.casefold()


def word_tolerance(target):
    """how far a count may be from target and still be "around" it."""
    return max(TOLERANCE_MIN, round(TOLERANCE_SHARE * target))


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
# The eleven reference checkers (Table 5's ten, and the total word count of §A.2)


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
    description="The response contains every one of the given keywords (string inclusion regardless of "
    "capitalization).",
    params={"keywords": "list of keywords"},
)
def check_keyword_inclusion(response, keywords):
    """Every keyword occurs (any case, also inside a longer word)."""
    return all(has_keyword(response, keyword) for keyword in keywords)


@checker(
    "keyword_exclusion",
    description="The response contains none of the given keywords (string exclusion regardless of capitalization).",
    params={"keywords": "list of keywords"},
)
def check_keyword_exclusion(response, keywords):
    """No keyword occurs (any case, not even inside a longer word)."""
    return not any(has_keyword(response, keyword) for keyword in keywords)


@checker(
    "response_title",
    description="The response has the given title on a title line (a line starting with exactly one '#').",
    params={"title": "the title"},
)
def check_response_title(response, title):
    """A title line holds the title (any case)."""
    return any(same_title(found, title) for found in titles(response))


@checker(
    "response_subsection_titles",
    description="The response includes each of the given subsection titles, each on a subsection title line "
    "(a line starting with more than one '#').",
    params={"titles": "list of subsection titles"},
)
def check_response_subsection_titles(response, titles):
    """Every title is on a subsection title line (any case, any order, other subsections allowed)."""
    found = subsection_titles(response)
    return all(any(same_title(f, wanted) for f in found) for wanted in titles)


@checker(
    "words_per_sentence",
    description="Every sentence has at most `max` words (title and subsection title lines excluded).",
    params={"max": "number of words"},
)
def check_words_per_sentence(response, max):
    """No sentence of the body has more than ``max`` words (so a response without sentences meets it)."""
    return all(len(plain_words(s)) <= max for s in sentences(response))


@checker(
    "even_odd_word_count",
    description="The response has an even / odd number of words (title and subsection title lines excluded).",
    params={"parity": "'even' or 'odd'"},
)
def check_even_odd_word_count(response, parity):
    """The body's word count is even or odd as asked."""
    return len(words(response)) % 2 == (0 if parity == "even" else 1)


@checker(
    "total_word_count",
    description="The response has around `target` words (within max(3, 10 %); title and subsection title "
    "lines excluded).",
    params={"target": "number of words"},
)
def check_total_word_count(response, target):
    """The body's word count is "around" the target: within a share of it, and at least a minimum."""
    return abs(len(words(response)) - target) <= word_tolerance(target)


@checker(
    "start_end_same_word",
    description="The response starts and ends with the same word (any case; title and subsection title lines "
    "excluded).",
)
def check_start_end_same_word(response):
    """The body's first and last words are the same (any case)."""
    found = words(response)
    return bool(found) and same_word(found[0], found[-1])


@checker(
    "subsections_start_end_same_word",
    description="Every subsection (from a line starting with more than one '#' to the next such line) starts and "
    "ends with the same word (any case; title lines excluded).",
)
def check_subsections_start_end_same_word(response):
    """Every subsection with words starts and ends with the same word (and there is one)."""
    bodies = [found for found in (words(body) for _, body in subsections(response)) if found]
    return bool(bodies) and all(same_word(found[0], found[-1]) for found in bodies)


# --------------------------------------------------------------------------------------------------
# Spans: the parts of a response a checker's result rests on (quoted in the verifier's explanation)


def spans_keywords(response, keywords):
    """The lines holding the keywords (wanted or forbidden)."""
    return [line.strip() for line in response.splitlines() if any(has_keyword(line, k) for k in keywords)]


def spans_words_per_sentence(response, max):
    """The sentences over the limit."""
    return [s for s in sentences(response) if len(plain_words(s)) > max]


def spans_subsection_titles(response, titles):
    """The subsection title lines."""
    return [line.strip() for line in response.splitlines() if SUBSECTION_RE.match(line)]


SPAN_FUNCTIONS: dict[str, Callable[..., list]] = {
    "keyword_inclusion": spans_keywords,
    "keyword_exclusion": spans_keywords,
    "words_per_sentence": spans_words_per_sentence,
    "response_subsection_titles": spans_subsection_titles,
}


REFERENCE_CHECKERS: dict[str, Callable[..., bool]] = {
    getattr(fn, CHECKER_ATTRIBUTE).name: fn
    for fn in (
        check_writing_tone,
        check_writing_topic,
        check_keyword_inclusion,
        check_keyword_exclusion,
        check_response_title,
        check_response_subsection_titles,
        check_words_per_sentence,
        check_even_odd_word_count,
        check_total_word_count,
        check_start_end_same_word,
        check_subsections_start_end_same_word,
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
    is_heading,
    heading_text,
    titles,
    subsection_titles,
    same_title,
    body_lines,
    body_text,
    plain_words,
    words,
    paragraphs,
    split_paragraph,
    sentences,
    subsections,
    same_word,
    category_counts,
    dominant_category,
    has_keyword,
    word_tolerance,
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
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(node) + "\n"


_CONSTANTS = {
    "TITLE_RE": f"TITLE_RE = re.compile({TITLE_RE.pattern!r})",
    "SUBSECTION_RE": f"SUBSECTION_RE = re.compile({SUBSECTION_RE.pattern!r})",
    "LIST_MARKER_RE": f"LIST_MARKER_RE = re.compile({LIST_MARKER_RE.pattern!r})",
    "EDGE_PUNCTUATION_RE": f"EDGE_PUNCTUATION_RE = re.compile({EDGE_PUNCTUATION_RE.pattern!r})",
    "SEGMENTER": "SEGMENTER = pysbd.Segmenter(language='en', clean=False, char_span=True)",
    "SEGMENT_WINDOW": f"SEGMENT_WINDOW, SEGMENT_MARGIN = {SEGMENT_WINDOW!r}, {SEGMENT_MARGIN!r}",
    "SEGMENT_MARGIN": "",
    "TOLERANCE_SHARE": f"TOLERANCE_SHARE, TOLERANCE_MIN = {TOLERANCE_SHARE!r}, {TOLERANCE_MIN!r}",
    "TOLERANCE_MIN": "",
    "TONE_LEXICON": f"TONE_LEXICON = {dict(TONE_LEXICON)!r}",
    "TOPIC_LEXICON": f"TOPIC_LEXICON = {dict(TOPIC_LEXICON)!r}",
}

# The helpers every generated checker finds already defined (the checking agent is told their
# signatures and meanings instead of writing them out: the conventions in a few lines of prompt, and
# programs a few lines long). The prompt lists those in ``PROMPTED_HELPERS``; the others are what they use.
PROMPTED_HELPERS = (
    titles,
    subsection_titles,
    same_title,
    body_text,
    plain_words,
    words,
    paragraphs,
    sentences,
    subsections,
    same_word,
    has_keyword,
    word_tolerance,
)
CHECKER_HELPERS = (is_heading, heading_text, body_lines, split_paragraph, *PROMPTED_HELPERS)


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
    imports = [f"import {name}" for name in ("pysbd", "re") if re.search(rf"\b{name}\.", program)]
    return "\n".join(imports) + "\n\n\n" + program if imports else program


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
        f"{helper.__name__}{inspect.signature(helper)}: {' '.join((inspect.getdoc(helper) or '').split())}"
        for helper in PROMPTED_HELPERS
    ]


def standalone_source(constraint_type: str, params: Mapping[str, Any], *, helpers: bool = True) -> str:
    """A program defining ``check(response) -> bool`` for this constraint (and ``spans``, where
    ``SPAN_FUNCTIONS`` has one): the reference checker with its parameters bound.

    With ``helpers`` it is self-contained (the helpers and constants it uses written out; only ``re``
    and ``pysbd`` imported); without, it relies on ``CHECKER_HELPERS`` being defined, as
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
    "PROMPTED_HELPERS",
    "HELPER_NAMES",
    "CONSTRAINT_TYPES",
    "LOGIC_TYPES",
    "PARITIES",
    "REFERENCE_CHECKERS",
    "SPAN_FUNCTIONS",
    "SEMANTIC_TYPES",
    "TONE_LEXICON",
    "TOPIC_LEXICON",
    "CheckerInfo",
    "body_text",
    "checker",
    "reference_check",
    "has_keyword",
    "helper_api",
    "paragraphs",
    "plain_words",
    "helper_source",
    "sentences",
    "standalone_source",
    "subsection_titles",
    "subsections",
    "word_tolerance",
    "titles",
    "words",
]
