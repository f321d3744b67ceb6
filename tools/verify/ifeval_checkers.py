"""Checkers for Google's IFEval instruction types (Zhou et al. 2023, arXiv:2311.07911), written from the
published descriptions — the instruction text each type puts in a prompt and the paper's Table 1 —
with the conventions IFEval states (what a paragraph, a highlight, a placeholder, a bullet is).

One function per instruction id, ``check_<group>_<name>(response, **kwargs) -> bool``, taking IFEval's
own kwargs (``IFEVAL_CHECKERS`` maps the id to it); each is a ``@checker`` so the module is usable as a
user-checker module (``--checkers autonesy.tools.verify.ifeval_checkers``).

Two types need models IFEval borrows from NLTK and langdetect, which this project does not ship:

- ``length_constraints:number_sentences`` counts sentences with a rule-based splitter (a sentence ends
  at ``.``, ``!`` or ``?`` followed by space and a capital, digit or quote, except after a known
  abbreviation) instead of the Punkt model;
- ``language:response_language`` and the "in English" half of the case types name the language by
  its script and, within a script, by its most frequent function words, instead of langdetect's
  n-gram model.

Their agreement with IFEval's labels is measured on IFEval's 541 GPT-4 responses
(``tests/tasks/test_ifeval.py``); every disagreement is listed in ``tasks/vifbench/data/IFEVAL.md``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable

from autonesy.tools.verify.checkers import CHECKER_ATTRIBUTE, checker

_WORD_TOKEN = re.compile(r"\w+")
_RELATIONS = ("less than", "at least")


def _relate(count: int, relation: str, limit: int) -> bool:
    if relation == "less than":
        return count < limit
    if relation == "at least":
        return count >= limit
    raise ValueError(f"unknown relation {relation!r}; expected one of {', '.join(_RELATIONS)}")


# --------------------------------------------------------------------------------------------------
# language identification (script, then function words)

_SCRIPTS = (  # (language or script group, first code point, last code point)
    ("ko", 0xAC00, 0xD7AF),
    ("ko", 0x1100, 0x11FF),
    ("ja", 0x3040, 0x30FF),
    ("zh", 0x4E00, 0x9FFF),
    ("th", 0x0E00, 0x0E7F),
    ("bn", 0x0980, 0x09FF),
    ("pa", 0x0A00, 0x0A7F),
    ("gu", 0x0A80, 0x0AFF),
    ("ta", 0x0B80, 0x0BFF),
    ("te", 0x0C00, 0x0C7F),
    ("kn", 0x0C80, 0x0CFF),
    ("ml", 0x0D00, 0x0D7F),
    ("devanagari", 0x0900, 0x097F),
    ("arabic", 0x0600, 0x06FF),
    ("cyrillic", 0x0400, 0x04FF),
    ("he", 0x0590, 0x05FF),
    ("el", 0x0370, 0x03FF),
    ("latin", 0x0041, 0x024F),
)
_FUNCTION_WORDS = {
    "latin": {
        "en": "the and of to is in that it for you with are this be on as not have was but they your over from by at "
        "an or we he she his her our their what which who will would can do",
        "de": "der die und das ist nicht sie ich mit den ein eine zu auf für von sich des auch wir",
        "fr": "le la les et est des une un du pas que qui pour dans sur vous nous ce avec",
        "es": "el la los las y es que de en un una por para con no se del su al como",
        "it": "il la di che e è un una per non sono gli le del della con si nel sul",
        "pt": "o a os as e é que de um uma não para com do da em se no na são",
        "nl": "de het een en is van dat niet op te zijn met voor ik je",
        "fi": "ja on ei se että kun mutta tai joka ovat oli minä sinä hän me te he kuin",
        "sw": "na ya wa ni kwa la za katika kuwa hii ili lakini mtu kama sana",
        "vi": "và là của có không một những các cho được trong với người này đã",
        "id": "dan yang di itu dengan untuk tidak ini dari dalam akan pada",
    },
    "devanagari": {
        "hi": "है हैं के की का में और नहीं को से था यह वह हूं",
        "mr": "आहे आणि या हे ते नाही आहेत मध्ये",
        "ne": "छ छन् र मा हो थियो गर्न पनि लाई हुन्छ",
    },
    "arabic": {
        "ar": "في من على أن إلى هذا التي الذي عن مع",
        "fa": "است و در به از که این را با می",
        "ur": "ہے کے کی کا میں اور نہیں کو سے ہیں",
    },
    "cyrillic": {"ru": "и в не что это на я с как он она мы они", "bg": "и в не че това на се да са от за"},
}
_MARKERS = {"fa": "پچژگ", "ur": "ےںٹڈڑ", "ru": "ыэё"}


def _script_of(char: str) -> str | None:
    code = ord(char)
    for name, low, high in _SCRIPTS:
        if low <= code <= high:
            return name
    return None


_TOKEN = re.compile(r"[^\s\d.,;:!?\"“”()\[\]{}<>*#\-–—।॥،؟]+")


def detect_language(text: str) -> str | None:
    """An ISO 639-1 code for the language most of ``text`` is written in, or None: no letters, or a
    script shared by several languages without one of their function words (a list of names, one
    word) — too little to name the language."""
    counts: dict[str, int] = {}
    for char in text:
        if char.isalpha() or unicodedata.category(char).startswith("M"):  # vowel signs count for their script
            script = _script_of(char)
            if script:
                counts[script] = counts.get(script, 0) + 1
    if not counts:
        return None
    script = max(counts, key=counts.__getitem__)
    candidates = _FUNCTION_WORDS.get(script)
    if candidates is None:
        return script
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    scores = {}
    for language, listed in candidates.items():
        vocabulary = set(listed.split())
        scores[language] = sum(token in vocabulary for token in tokens)
        scores[language] += 3 * sum(text.count(mark) for mark in _MARKERS.get(language, ""))
    best = max(scores, key=scores.__getitem__)
    return best if scores[best] > 0 else None


def _english(text: str) -> bool:
    return detect_language(text) == "en"


# --------------------------------------------------------------------------------------------------
# sentences

_ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "inc",
    "ltd",
    "co",
    "corp",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "no",
    "u.s",
    "a.m",
    "p.m",
    "fig",
    "al",
    "approx",
    "dept",
    "est",
    "gen",
    "gov",
    "lt",
    "col",
    "capt",
}
_BOUNDARY = re.compile(r"([.!?]+[\"')\]]*)\s+(?=\S)")
_LAST_TOKEN = re.compile(r"[\w.]+$")
TOKEN_LOOKBACK = 64


def count_sentences(text: str) -> int:
    """Sentences: pieces of text ending with ``.``, ``!`` or ``?`` (and closing quotes or brackets)
    followed by white space — unless the dot ends a known abbreviation, a single letter (an initial), or
    a number followed by a lowercase word (a list item's number)."""
    pieces, start = [], 0
    for match in _BOUNDARY.finditer(text):
        # the word before the mark, looked for in a bounded stretch (longer ones are no abbreviation or initial):
        # linear in the text even when abbreviations keep a sentence open for long
        before = text[max(start, match.start(1) - TOKEN_LOOKBACK) : match.start(1)]
        last = _LAST_TOKEN.search(before)
        token = last.group(0).lower().rstrip(".") if last else ""
        single_dot = len(match.group(1).rstrip("\"')]")) == 1 and match.group(1).startswith(".")
        if single_dot and (token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())):
            continue
        if single_dot and token.isdigit() and text[match.end()].islower():
            continue  # "1. affordable ..." numbers a list item, it does not end a sentence
        pieces.append(text[start : match.end(1)])
        start = match.end()
    pieces.append(text[start:])
    return sum(1 for piece in pieces if piece.strip())


# --------------------------------------------------------------------------------------------------
# the checkers, one per IFEval instruction id


@checker(
    "ifeval_capital_word_frequency",
    description="Words in all capital letters appear less than / at least N times.",
    params={"capital_frequency": "N", "capital_relation": "'less than' or 'at least'"},
)
def check_capital_word_frequency(response, capital_frequency, capital_relation):
    """Count all-capital words (hyphen- and apostrophe-joined words count once) against IFEval's relation."""
    tokens = re.findall(r"[^\W_]+(?:[-'’][^\W_]+)*", response)
    return _relate(sum(token.isupper() for token in tokens), capital_relation, capital_frequency)


@checker("ifeval_english_capital", description="The entire response is in English and in capital letters only.")
def check_english_capital(response):
    """All letters capital and the text reads as English (both halves of IFEval's rule)."""
    return response.isupper() and _english(response)


@checker("ifeval_english_lowercase", description="The entire response is in English and in lowercase letters only.")
def check_english_lowercase(response):
    """All letters lowercase and the text reads as English."""
    return response.islower() and _english(response)


@checker(
    "ifeval_repeat_prompt",
    description="The response starts by repeating the request word for word.",
    params={"prompt_to_repeat": "the request"},
)
def check_repeat_prompt(response, prompt_to_repeat):
    """The response opens with the request repeated (case and surrounding space ignored)."""
    return response.strip().lower().startswith(prompt_to_repeat.strip().lower())


@checker(
    "ifeval_two_responses", description="Two different responses separated by six asterisks (******), and nothing else."
)
def check_two_responses(response):
    """Exactly two non-empty, different responses around the ``******`` separator; an empty one between separators
    fails."""
    parts = response.split("******")
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part.strip())
        elif 0 < index < len(parts) - 1:
            return False  # an empty response between two separators
    return len(kept) == 2 and kept[0] != kept[1]


@checker(
    "ifeval_number_placeholders",
    description="At least N placeholders in square brackets, like [address].",
    params={"num_placeholders": "N"},
)
def check_number_placeholders(response, num_placeholders):
    """Count bracketed placeholders such as ``[address]``."""
    return len(re.findall(r"\[[^\]]*?\]", response)) >= num_placeholders


@checker(
    "ifeval_postscript",
    description="A postscript starting with the marker (P.S. or P.P.S) opens a line at the end.",
    params={"postscript_marker": "P.S. or P.P.S"},
)
def check_postscript(response, postscript_marker):
    """A line starting with the postscript marker (P.S. and P.P.S spelled with or without inner spaces)."""
    marker = postscript_marker.strip().lower()
    if marker in ("p.p.s", "p.p.s."):
        pattern = r"^\s*p\.\s?p\.\s?s"
    elif marker in ("p.s.", "p.s"):
        pattern = r"^\s*p\.\s?s\."
    else:
        pattern = r"^\s*" + re.escape(marker)
    return re.search(pattern, response.lower(), re.MULTILINE) is not None


_OPTIONS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@checker("ifeval_constrained_response", description="The response contains one of: My answer is yes./no./maybe.")
def check_constrained_response(response):
    """One of IFEval's three fixed answers appears in the response."""
    return any(option in response.strip() for option in _OPTIONS)


@checker("ifeval_json_format", description="The entire output is JSON (markdown code fences around it are allowed).")
def check_json_format(response):
    """The response parses as JSON once markdown code fences around it are removed."""
    text = response.strip()
    text = re.sub(r"^```(?:json)?", "", text, flags=re.IGNORECASE).strip()
    text = re.sub(r"```$", "", text).strip()
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@checker(
    "ifeval_multiple_sections",
    description="N sections, each opened by the splitter word and its number (SECTION X).",
    params={"num_sections": "N", "section_spliter": "the word, e.g. SECTION"},
)
def check_multiple_sections(response, num_sections, section_spliter):
    """Count section marks (the splitter word followed by a number)."""
    marks = re.findall(r"\s?" + re.escape(section_spliter) + r"\s?\d+\s?", response)
    return len(marks) >= num_sections


@checker(
    "ifeval_number_bullet_lists",
    description="Exactly N markdown bullet points (lines starting with * or -).",
    params={"num_bullets": "N"},
)
def check_number_bullet_lists(response, num_bullets):
    """Count markdown bullet lines opened by ``*`` or ``-`` (bold ``**`` lines are not bullets)."""
    stars = re.findall(r"^\s*\*[^*].*$", response, re.MULTILINE)
    dashes = re.findall(r"^\s*-.*$", response, re.MULTILINE)
    return len(stars) + len(dashes) == num_bullets


@checker(
    "ifeval_number_highlighted_sections",
    description="At least N sections highlighted in markdown, *like this*.",
    params={"num_highlights": "N"},
)
def check_number_highlighted_sections(response, num_highlights):
    """Count non-empty ``*highlighted*`` and ``**bold**`` spans, as IFEval does."""
    single = [h for h in re.findall(r"\*[^\n*]*\*", response) if h.strip("*").strip()]
    double = [h for h in re.findall(r"\*\*[^\n*]*\*\*", response) if h[2:-2].strip()]
    return len(single) + len(double) >= num_highlights


@checker("ifeval_title", description="A title wrapped in double angular brackets, like <<poem of joy>>.")
def check_title(response):
    """A non-empty title in double angular brackets anywhere in the response."""
    return any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", response))


@checker(
    "ifeval_keyword_existence",
    description="Every keyword occurs in the response (any case, also inside words).",
    params={"keywords": "list of keywords"},
)
def check_keyword_existence(response, keywords):
    """Every keyword occurs, case-insensitively, also inside longer words."""
    lowered = response.lower()
    return all(keyword.lower() in lowered for keyword in keywords)


@checker(
    "ifeval_forbidden_words",
    description="None of the words occurs as a whole word (any case).",
    params={"forbidden_words": "list of words"},
)
def check_forbidden_words(response, forbidden_words):
    """No forbidden word occurs as a whole word, case-insensitively."""
    return not any(re.search(r"\b" + re.escape(word) + r"\b", response, re.IGNORECASE) for word in forbidden_words)


@checker(
    "ifeval_keyword_frequency",
    description="The keyword occurs less than / at least N times (any case, also inside words).",
    params={"keyword": "the word", "frequency": "N", "relation": "'less than' or 'at least'"},
)
def check_keyword_frequency(response, keyword, frequency, relation):
    """Count case-insensitive occurrences of the keyword (substrings included) against the relation."""
    return _relate(response.lower().count(keyword.lower()), relation, frequency)


@checker(
    "ifeval_letter_frequency",
    description="The letter occurs less than / at least N times (any case).",
    params={"letter": "the letter", "let_frequency": "N", "let_relation": "'less than' or 'at least'"},
)
def check_letter_frequency(response, letter, let_frequency, let_relation):
    """Count the letter, case-insensitively, against the relation."""
    return _relate(response.lower().count(letter.lower()), let_relation, let_frequency)


@checker(
    "ifeval_response_language",
    kind="semantic",
    description="The entire response is in the given language.",
    params={"language": "ISO 639-1 code"},
)
def check_response_language(response, language):
    """The language this module detects (script, then function words) is the one asked for."""
    return detect_language(response) == language


def _paragraphs(response: str, separator: str) -> list[str] | None:
    """Paragraphs split at ``separator``; empty ones at either end are dropped, one in the middle
    makes the layout invalid (None)."""
    parts = re.split(separator, response)
    kept = []
    for index, part in enumerate(parts):
        if part.strip():
            kept.append(part)
        elif 0 < index < len(parts) - 1:
            return None
    return kept


@checker(
    "ifeval_nth_paragraph_first_word",
    description="N paragraphs separated by blank lines (\\n\\n); paragraph i starts with the given word.",
    params={"num_paragraphs": "N", "nth_paragraph": "i", "first_word": "the word"},
)
def check_nth_paragraph_first_word(response, num_paragraphs, nth_paragraph, first_word):
    """Paragraphs split at blank lines: the count matches and paragraph ``nth`` starts with the word (quotes and
    trailing punctuation ignored)."""
    parts = response.split("\n\n")
    count = sum(1 for part in parts if part.strip())
    if nth_paragraph > count or nth_paragraph > len(parts) or not parts[nth_paragraph - 1].strip():
        return False
    word = parts[nth_paragraph - 1].split()[0].lstrip("'\"")
    word = re.split(r"[.,?!'\"]", word, maxsplit=1)[0].lower()
    return count == num_paragraphs and word == first_word.lower()


@checker(
    "ifeval_number_paragraphs",
    description="Exactly N paragraphs separated by the markdown divider ***.",
    params={"num_paragraphs": "N"},
)
def check_number_paragraphs(response, num_paragraphs):
    """Exactly N paragraphs between ``***`` dividers; an empty one in the middle fails."""
    kept = _paragraphs(response, r"\s?\*\*\*\s?")
    return kept is not None and len(kept) == num_paragraphs


@checker(
    "ifeval_number_sentences",
    description="Less than / at least N sentences.",
    params={"num_sentences": "N", "relation": "'less than' or 'at least'"},
)
def check_number_sentences(response, num_sentences, relation):
    """Count sentences with the rule-based splitter (IFEval uses NLTK's Punkt) against the relation."""
    return _relate(count_sentences(response), relation, num_sentences)


@checker(
    "ifeval_number_words",
    description="Less than / at least N words (runs of letters, digits and _).",
    params={"num_words": "N", "relation": "'less than' or 'at least'"},
)
def check_number_words(response, num_words, relation):
    """Count word tokens against the relation."""
    return _relate(len(_WORD_TOKEN.findall(response)), relation, num_words)


@checker("ifeval_no_comma", description="No commas anywhere in the response.")
def check_no_comma(response):
    """No comma anywhere."""
    return "," not in response


@checker(
    "ifeval_end_checker",
    description="The response ends with the exact phrase (any case; a closing quote may follow).",
    params={"end_phrase": "the phrase"},
)
def check_end_checker(response, end_phrase):
    """The response ends with the phrase (case-insensitive; surrounding quotes ignored)."""
    return response.strip().strip('"').lower().endswith(end_phrase.strip().lower())


@checker("ifeval_quotation", description="The entire response is wrapped in double quotation marks.")
def check_quotation(response):
    """The whole response, trimmed, is wrapped in double quotes."""
    text = response.strip()
    return len(text) > 1 and text[0] == '"' and text[-1] == '"'


IFEVAL_CHECKERS: dict[str, Callable[..., bool]] = {
    "change_case:capital_word_frequency": check_capital_word_frequency,
    "change_case:english_capital": check_english_capital,
    "change_case:english_lowercase": check_english_lowercase,
    "combination:repeat_prompt": check_repeat_prompt,
    "combination:two_responses": check_two_responses,
    "detectable_content:number_placeholders": check_number_placeholders,
    "detectable_content:postscript": check_postscript,
    "detectable_format:constrained_response": check_constrained_response,
    "detectable_format:json_format": check_json_format,
    "detectable_format:multiple_sections": check_multiple_sections,
    "detectable_format:number_bullet_lists": check_number_bullet_lists,
    "detectable_format:number_highlighted_sections": check_number_highlighted_sections,
    "detectable_format:title": check_title,
    "keywords:existence": check_keyword_existence,
    "keywords:forbidden_words": check_forbidden_words,
    "keywords:frequency": check_keyword_frequency,
    "keywords:letter_frequency": check_letter_frequency,
    "language:response_language": check_response_language,
    "length_constraints:nth_paragraph_first_word": check_nth_paragraph_first_word,
    "length_constraints:number_paragraphs": check_number_paragraphs,
    "length_constraints:number_sentences": check_number_sentences,
    "length_constraints:number_words": check_number_words,
    "punctuation:no_comma": check_no_comma,
    "startend:end_checker": check_end_checker,
    "startend:quotation": check_quotation,
}


def ifeval_check(instruction_id: str, response: str, kwargs: dict) -> bool:
    """Our label of one IFEval instruction on one response (IFEval's kwargs; ``None`` values ignored)."""
    try:
        fn = IFEVAL_CHECKERS[instruction_id]
    except KeyError:
        raise ValueError(f"unknown IFEval instruction {instruction_id!r}") from None
    return bool(fn(response, **{k: v for k, v in kwargs.items() if v is not None}))


def ifeval_kind(instruction_id: str) -> str:
    """Whether IFEval's instruction id is checked by code (logic) or needs a judge (semantic)."""
    return getattr(IFEVAL_CHECKERS[instruction_id], CHECKER_ATTRIBUTE).kind


__all__ = ["IFEVAL_CHECKERS", "count_sentences", "detect_language", "ifeval_check", "ifeval_kind"]
