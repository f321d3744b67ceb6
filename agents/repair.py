"""Reading the repair agent's verdict: ``[[OK]]`` (keep the formula) or ``[[FIXED]]`` + a new block.

LLM answers are hostile by default, so the reading is lenient where intent is clear and strict
where it is not:
- markers are matched case-insensitively, with spaces inside the brackets and markdown emphasis
  around them (``**[[FIXED]]**``); when several appear, the last one counts (models that reason
  first often mention both);
- ``[[FIXED]]`` needs a ``<cnf>`` block; the block after the marker is preferred, else any block;
- no marker but a ``<cnf>`` block → treated as fixed, noted as ``marker_missing``;
- anything else (empty, no marker and no block, ``[[FIXED]]`` without a block) → ``unclear``:
  the round is spent and the formula is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = re.compile(r"\[\[\s*(OK|FIXED)\s*\]\]", re.IGNORECASE)
BLOCK = re.compile(r"<\s*cnf\s*>", re.IGNORECASE)
VERDICTS = ("ok", "fixed", "unclear")


@dataclass(frozen=True)
class RepairVerdict:
    """What a repair answer says: [[OK]] (the formula stands), [[FIXED]] with a new formula, or unclear."""

    verdict: str  # ok | fixed | unclear
    answer: str  # for "fixed": the text that holds the new <cnf> block
    note: str = ""


def parse_repair_answer(text: str) -> RepairVerdict:
    """Read the repair agent's verdict from its answer: the last marker wins; a ``<cnf>`` block without a marker counts
    as fixed; neither is ``unclear``."""
    text = text or ""
    markers = list(MARKER.finditer(text))
    if not markers:
        if BLOCK.search(text):
            return RepairVerdict("fixed", text, "marker_missing")
        return RepairVerdict("unclear", "", "no [[OK]] or [[FIXED]] marker and no <cnf> block")
    last = markers[-1]
    if last.group(1).upper() == "OK":
        return RepairVerdict("ok", "")
    after = text[last.end() :]
    if BLOCK.search(after):
        return RepairVerdict("fixed", after)
    if BLOCK.search(text):
        return RepairVerdict("fixed", text, "block_before_marker")
    return RepairVerdict("unclear", "", "[[FIXED]] without a <cnf> block")
