"""VifBench's reference checkers against the answer's size: every checker on one long paragraph of 50 to 400 KB
(time per size and the ratio to the size before: about 2 when linear, about 4 when quadratic), and pySBD on the
whole paragraph (what ``sentences`` did before it gave pySBD windows) for the sizes it finishes in a minute.

    python benchmarks/checker_scaling.py [--sizes 50,100,200,400]
"""

from __future__ import annotations

import argparse
import os
import time

import pysbd

from autonesy.tools.verify import checkers

SENTENCE = "Dr. Smith met Mr. Jones at 3 p.m. in the U.S. office, e.g. the lobby today. "
PARAMS = {
    "writing_tone": {"tone": "urgent"},
    "writing_topic": {"topic": "Healthy eating habits"},
    "keyword_inclusion": {"keywords": ["lobby", "zebra"]},
    "keyword_exclusion": {"keywords": ["zebra"]},
    "response_title": {"title": "Title"},
    "response_subsection_titles": {"titles": ["Part"]},
    "words_per_sentence": {"max": 16},
    "even_odd_word_count": {"parity": "even"},
    "total_word_count": {"target": 500},
}


def text_of(kilobytes: int) -> str:
    return "# Title\n## Part\n" + SENTENCE * (kilobytes * 1000 // len(SENTENCE))


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,100,200,400", help="answer sizes in KB")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} (1 min)")
    print(
        f"{'KB':>5}  {'words/sentence s':>16}  {'ratio':>5}  {'all others s':>12}  {'pySBD whole s':>13}  {'ratio':>5}"
    )
    before: tuple[float, float | None] | None = None
    whole_ok = True
    for kb in sizes:
        text = text_of(kb)
        checkers.split_paragraph.cache_clear()
        wps = timed(lambda: checkers.reference_check("words_per_sentence", text, PARAMS["words_per_sentence"]))
        others = sum(
            timed(lambda t=t: checkers.reference_check(t, text, PARAMS.get(t, {})))
            for t in checkers.CONSTRAINT_TYPES
            if t != "words_per_sentence"
        )
        whole = None
        if whole_ok:
            whole = timed(lambda: pysbd.Segmenter(language="en", clean=False).segment(text.split("\n", 2)[2]))
            whole_ok = whole < 30  # the next size would take four times as long
        ratio = f"{wps / before[0]:.1f}" if before else ""
        whole_ratio = f"{whole / before[1]:.1f}" if before and before[1] and whole else ""
        whole_text = f"{whole:.2f}" if whole is not None else "skipped"
        print(f"{kb:>5}  {wps:>16.2f}  {ratio:>5}  {others:>12.2f}  {whole_text:>13}  {whole_ratio:>5}")
        before = (wps, whole)


if __name__ == "__main__":
    main()
