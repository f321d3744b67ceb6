"""Find the formula in an LLM answer: the content of its ``<cnf>…</cnf>`` block.

Rules (stable; the prompts state the first one, the others are what we tolerate):

- Tags are matched case-insensitively and may hold blanks: ``<cnf>``, ``<CNF>``, ``< cnf >``,
  ``</ cnf>``.
- **Several complete blocks → the last one whose content is not blank or a placeholder.** Models
  that reason first often draft a formula and revise it later, and a prompt's own mention of
  "<cnf></cnf> tags" in the reasoning yields an empty block, which is skipped; so is a placeholder
  block such as ``<cnf> … </cnf>`` or ``<cnf>...the formula...</cnf>`` (an answer repeating the
  prompt's wording after its real block). A block is the text between a closing tag and
  the nearest opening tag before it, so an opening tag that was only mentioned earlier does not
  swallow a later block. Choosing among several blocks is noted as ``cnf_block_last_of_many``.
- **Unterminated block** (an opening tag, no closing tag after it, and no complete non-blank block
  anywhere): the text after the last opening tag is taken; noted as ``cnf_block_unterminated``
  (typically an answer cut off by the token limit).
- Markdown fence lines inside the block (a line holding only ```` ``` ```` or ``~~~`` plus an optional
  language tag, e.g. ```` ```python ````) are removed; noted as ``stray_fence_removed``. When the
  block holds a complete fenced section, text outside the fenced sections ("Here is the code:",
  an explanation after the closing fence) is prose and is removed too; noted as
  ``prose_outside_fence_removed``.
- No block, or only blank ones → :class:`FormatError` ``no_block`` telling the model what to write.
- Answers larger than ``max_chars`` (default 1,000,000 characters) → ``too_large``.

The notes are the names the trace counts next to the autofixes (see :mod:`.autofix`).
:attr:`Extraction.where` says which block was read (its number and line), so an error about the
formula can name the block it is about when the answer held several.
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
NOTE_PROSE = "prose_outside_fence_removed"


# A block holding only an ellipsis, or "...some words..." (the prompts' own "<cnf>...the formula...</cnf>").
_PLACEHOLDER = re.compile(r"^(?:\.{2,}|…)(?:[^\n]{0,40}?(?:\.{2,}|…))?$")


@dataclass(frozen=True)
class Extraction:
    """The formula text of an answer, the names of the tolerances used to get it, and which block it was."""

    source: str
    notes: tuple[str, ...] = field(default=())
    where: str = field(
        default="", compare=False
    )  # e.g. "block 2 of 3 (line 14 of the answer)"; "" when the answer had one block


def is_placeholder(body: str) -> bool:
    """Blank, or only an ellipsis (optionally around a few words): not a formula."""
    text = body.strip()
    return not text or bool(_PLACEHOLDER.match(text))


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
    complete: list[tuple[int, str]] = []  # every block (start offset, body), in order
    pending: int | None = None  # end of the latest opening tag not yet closed
    for start, end, is_open in tags:
        if is_open:
            pending = end
        elif pending is not None:
            complete.append((pending, text[pending:start]))
            pending = None

    candidates = [
        (i, at, body) for i, (at, body) in enumerate(complete, start=1) if not is_placeholder(_clean(body)[0])
    ]
    if len(candidates) > 1:
        notes.append(NOTE_LAST_OF_MANY)
    where = ""
    if candidates:
        number, at, body = candidates[-1]
        if len(complete) > 1:
            skipped = len(complete) - number
            where = (
                f"block {number} of {len(complete)} (line {text.count(chr(10), 0, at) + 1} of the answer"
                + (f"; {skipped} later block{'s' if skipped > 1 else ''} empty or a placeholder" if skipped else "")
                + ")"
            )
    elif pending is not None and not is_placeholder(_clean(text[pending:])[0]):
        body = text[pending:]
        notes.append(NOTE_UNTERMINATED)
        where = f"the unterminated block at line {text.count(chr(10), 0, pending) + 1} of the answer"
    elif pending is not None:
        raise _no_block("The <cnf> block is empty (and its closing </cnf> tag is missing).")
    elif complete:
        raise _no_block(
            "The <cnf> block is empty or only a placeholder such as '…'."
            if len(complete) == 1
            else f"All {len(complete)} <cnf> blocks are empty or only placeholders such as '…'."
        )
    elif tags:
        raise _no_block("Found a closing </cnf> tag but no opening <cnf> tag before it.")
    else:
        raise _no_block("No <cnf> block found.")

    body, prose = inside_fences(body)
    if prose:
        notes.append(NOTE_PROSE)
    source, fenced = _clean(body)
    if fenced:
        notes.append(NOTE_FENCE)
    return Extraction(source, tuple(notes), where)


def inside_fences(text: str) -> tuple[str, bool]:
    """The text with whatever lies outside its complete fenced sections removed (fence lines kept),
    and whether anything non-blank was removed; text without a complete fenced section unchanged."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if FENCE_LINE.match(line)]
    if len(fences) < 2:
        return text, False
    keep: set[int] = set()
    for opening, closing in zip(fences[0::2], fences[1::2]):
        keep.update(range(opening, closing + 1))
    dropped = [line for i, line in enumerate(lines) if i not in keep]
    if not any(line.strip() for line in dropped):
        return text, False
    return "\n".join(line for i, line in enumerate(lines) if i in keep), True


def _clean(body: str) -> tuple[str, bool]:
    stripped, fenced = strip_fence_lines(body)
    return _dedent_block(stripped), fenced


def extract_cnf_block(text: str, *, max_chars: int = MAX_ANSWER_CHARS) -> str:
    """Just the formula text of :func:`extract`."""
    return extract(text, max_chars=max_chars).source
