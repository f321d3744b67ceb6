"""Find the formula in an LLM answer: the content of its ``<cnf>…</cnf>`` block.

Rules (stable; the prompts state the first one, the others are what we tolerate):

- Tags are matched case-insensitively and may hold blanks: ``<cnf>``, ``<CNF>``, ``< cnf >``,
  ``</ cnf>``.
- **Several complete blocks → the last one whose content is not blank.** Models that reason first
  often draft a formula and revise it later, and a prompt's own mention of "<cnf></cnf> tags" in the
  reasoning yields an empty block, which is skipped. A block is the text between a closing tag and
  the nearest opening tag before it, so an opening tag that was only mentioned earlier does not
  swallow a later block. Choosing among several blocks is noted as ``cnf_block_last_of_many``.
- **Unterminated block** (an opening tag, no closing tag after it, and no complete non-blank block
  anywhere): the text after the last opening tag is taken; noted as ``cnf_block_unterminated``
  (typically an answer cut off by the token limit).
- Markdown fence lines inside the block (a line holding only ```` ``` ```` or ``~~~`` plus an optional
  language tag, e.g. ```` ```python ````) are removed; noted as ``stray_fence_removed``.
- No block, or only blank ones → :class:`FormatError` ``no_block`` telling the model what to write.
- Answers larger than ``max_chars`` (default 1,000,000 characters) → ``too_large``.

The notes are the names the trace counts next to the autofixes (see :mod:`.autofix`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from autonesy.tools.formats.base import FormatError

MAX_ANSWER_CHARS = 1_000_000

_OPEN = re.compile(r"<\s*cnf\s*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*cnf\s*>", re.IGNORECASE)
FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*[\w+#.-]*[ \t]*$")

NOTE_LAST_OF_MANY = "cnf_block_last_of_many"
NOTE_UNTERMINATED = "cnf_block_unterminated"
NOTE_FENCE = "stray_fence_removed"


@dataclass(frozen=True)
class Extraction:
    """The formula text of an answer, and the names of the tolerances used to get it."""

    source: str
    notes: tuple[str, ...] = field(default=())


def _no_block(detail: str) -> FormatError:
    return FormatError(
        "no_block",
        f"{detail} Your answer must contain the formula inside <cnf> and </cnf> tags, for example:\n"
        "<cnf>\n...the formula...\n</cnf>\n"
        "Write exactly one such block, after any reasoning, with nothing but the formula inside it.",
    )


def strip_fence_lines(text: str) -> tuple[str, bool]:
    """Remove lines that are only a markdown fence; returns the text and whether any was removed."""
    lines = text.split("\n")
    kept = [line for line in lines if not FENCE_LINE.match(line)]
    return "\n".join(kept), len(kept) != len(lines)


def _dedent_block(text: str) -> str:
    """Drop the blank lines around the block and the indentation all its lines share.

    Text on the opening tag's own line (``<cnf> x AND y``) loses its leading blanks, which would
    otherwise be an indentation error in the Python formats.
    """
    lines = text.split("\n")
    lines[0] = lines[0].lstrip()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return ""
    common = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    if common:
        lines = [line[common:] if line.strip() else "" for line in lines]
    return "\n".join(lines) + "\n"


def extract(text: str, *, max_chars: int = MAX_ANSWER_CHARS) -> Extraction:
    """The content of the answer's ``<cnf>`` block, with notes; raises :class:`FormatError`."""
    if len(text) > max_chars:
        raise FormatError(
            "too_large",
            f"The answer has {len(text):,} characters, more than the {max_chars:,} allowed. "
            "Write a shorter formula (use auxiliary variables or cardinality encodings instead of "
            "spelling every case out).",
        )
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    tags = sorted(
        [(m.start(), m.end(), True) for m in _OPEN.finditer(text)]
        + [(m.start(), m.end(), False) for m in _CLOSE.finditer(text)]
    )
    notes: list[str] = []
    complete: list[str] = []  # every block, in order
    pending: int | None = None  # end of the latest opening tag not yet closed
    for start, end, is_open in tags:
        if is_open:
            pending = end
        elif pending is not None:
            complete.append(text[pending:start])
            pending = None

    candidates = [body for body in complete if _clean(body)[0].strip()]
    if len(candidates) > 1:
        notes.append(NOTE_LAST_OF_MANY)
    if candidates:
        body = candidates[-1]
    elif pending is not None and _clean(text[pending:])[0].strip():
        body = text[pending:]
        notes.append(NOTE_UNTERMINATED)
    elif pending is not None:
        raise _no_block("The <cnf> block is empty (and its closing </cnf> tag is missing).")
    elif complete:
        raise _no_block("The <cnf> block is empty.")
    elif tags:
        raise _no_block("Found a closing </cnf> tag but no opening <cnf> tag before it.")
    else:
        raise _no_block("No <cnf> block found.")

    source, fenced = _clean(body)
    if fenced:
        notes.append(NOTE_FENCE)
    return Extraction(source, tuple(notes))


def _clean(body: str) -> tuple[str, bool]:
    stripped, fenced = strip_fence_lines(body)
    return _dedent_block(stripped), fenced


def extract_cnf_block(text: str, *, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """Just the formula text of :func:`extract`."""
    return extract(text, max_chars=max_chars).source
