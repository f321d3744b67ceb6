"""convert(): extraction, front-end dispatch, one autofix retry, and never a raised FormatError."""

import sys
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools import formats
from autonesy.tools.formats import FORMATS, FRONT_ENDS, convert, front_end
from autonesy.tools.formats.base import FormatError

NAMES = ["a", "b", "c"]


def test_dispatch_table():
    assert FRONT_ENDS == {
        "dimacs": "autonesy.tools.formats.dimacs",
        "nat": "autonesy.tools.formats.nat",
        "pysat": "autonesy.tools.formats.pysat_program",
        "cpmpy": "autonesy.tools.formats.cpmpy_program",
        "sympy": "autonesy.tools.formats.sympy_program",
    }
    assert front_end("nat").__name__ == "autonesy.tools.formats.nat"


def test_unknown_format_lists_the_five():
    with pytest.raises(ValueError) as info:
        convert("<cnf>1 0</cnf>", "prolog", NAMES)
    assert all(fmt in str(info.value) for fmt in FORMATS)


def test_dimacs_ok():
    conversion = convert("Sure.\n<cnf>\np cnf 3 1\n1 -2 0\n</cnf>", "dimacs", NAMES)
    assert conversion.ok and conversion.error is None
    assert conversion.cnf.clauses == ((1, -2),)
    assert (conversion.format, conversion.source, conversion.autofixes) == ("dimacs", "p cnf 3 1\n1 -2 0\n", ())


def test_nat_ok():
    conversion = convert("<cnf>\na OR b\nNOT (a AND b)\n</cnf>", "nat", NAMES)
    assert conversion.ok and conversion.cnf.num_task_vars == 3


def test_autofix_retry_records_extraction_notes_and_fixes():
    conversion = convert("<cnf>\n```\n1 2\n-1 -2\n```\n</cnf>\n<cnf>\n1 2\n-1 -2\n", "dimacs", NAMES)
    assert conversion.ok
    assert conversion.cnf.clauses == ((1, 2), (-1, -2))
    assert conversion.source == "p cnf 2 2\n1 2 0\n-1 -2 0\n"
    assert conversion.autofixes == ("stray_fence_removed", "dimacs_missing_terminator", "dimacs_header_added")


def test_autofix_off():
    conversion = convert("<cnf>\n1 2 0\n", "dimacs", NAMES, autofix=False)
    assert not conversion.ok
    assert conversion.error.kind == "header"
    assert conversion.source == "1 2 0\n"
    assert conversion.autofixes == ("cnf_block_unterminated",)


def test_nothing_to_fix_returns_the_first_error():
    conversion = convert("<cnf>p cnf 3 1\n1 x 0</cnf>", "dimacs", NAMES)
    assert (conversion.error.kind, conversion.error.line, conversion.autofixes) == ("syntax", 2, ())
    assert conversion.source == "p cnf 3 1\n1 x 0\n"


def test_failed_retry_keeps_the_fixes_and_reports_the_new_error():
    conversion = convert("<cnf>\n# note\np cnf 3 1\n1 b 0\n</cnf>", "dimacs", NAMES)
    assert conversion.autofixes == ("dimacs_comment_converted",)
    assert conversion.source == "c note\np cnf 3 1\n1 b 0\n"
    assert (conversion.error.kind, conversion.error.line) == ("syntax", 3)


def test_no_block_and_too_large_are_conversions_not_exceptions():
    conversion = convert("a OR b", "nat", NAMES)
    assert (conversion.ok, conversion.error.kind, conversion.source) == (False, "no_block", "")
    conversion = convert("<cnf>a OR b</cnf>", "nat", NAMES, max_chars=5)
    assert conversion.error.kind == "too_large"


def test_limits_reach_the_front_end_and_python_formats_get_the_names(monkeypatch):
    seen = {}

    def parse(source, names, **limits):
        seen.update(limits, names=list(names), source=source)
        if "from itertools import combinations" not in source:
            raise FormatError("runtime", "NameError: name 'combinations' is not defined", line=1)
        return formats.dimacs.parse("p cnf 3 0\n", names)

    fake = types.ModuleType("fake_front_end")
    fake.parse = parse
    fake.RESERVED_NAMES = frozenset({"And"})
    monkeypatch.setitem(sys.modules, "fake_front_end", fake)
    monkeypatch.setitem(FRONT_ENDS, "sympy", "fake_front_end")
    conversion = convert(
        "<cnf>\nfor p, q in combinations([a, b], 2):\n    pass\n</cnf>", "sympy", NAMES, wall_seconds=5
    )
    assert conversion.ok
    assert seen["wall_seconds"] == 5 and seen["names"] == NAMES
    assert conversion.autofixes == ("python_import_added:itertools",)
    assert conversion.source.startswith("from itertools import combinations\n")


def test_no_retry_after_a_timeout(monkeypatch):
    calls = []

    def parse(source, names, **limits):
        calls.append(source)
        raise FormatError("timeout", "the program ran past its 40 s wall-time limit")

    fake = types.ModuleType("fake_front_end")
    fake.parse = parse
    monkeypatch.setitem(sys.modules, "fake_front_end", fake)
    monkeypatch.setitem(FRONT_ENDS, "cpmpy", "fake_front_end")
    conversion = convert("<cnf>\nfor p in combinations(xs, 2):\n    pass\n</cnf>", "cpmpy", NAMES)
    assert conversion.error.kind == "timeout" and len(calls) == 1 and conversion.autofixes == ()


GARBAGE = st.text(alphabet="<cnf>/ \n\t0123-4abpc#()&|~!^ANDORT`%", max_size=50)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["dimacs", "nat"]), GARBAGE, GARBAGE, st.sampled_from(["", "</cnf>", "</CNF>\n<cnf>"]))
def test_garbage_never_raises(fmt, before, body, after):
    conversion = convert(f"{before}<cnf>{body}{after}", fmt, NAMES)
    assert conversion.ok != (conversion.error is not None)
    if conversion.error is not None:
        assert conversion.error.message
