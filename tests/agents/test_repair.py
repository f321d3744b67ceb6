import pytest
from hypothesis import given
from hypothesis import strategies as st

from autonesy.agents.repair import parse_repair_answer


@pytest.mark.parametrize(
    "text, verdict, note",
    [
        ("[[OK]]", "ok", ""),
        ("The formula is right.\n**[[ ok ]]**", "ok", ""),
        ("[[FIXED]]\n<cnf>p cnf 1 1\n1 0</cnf>", "fixed", ""),
        ("I first thought [[OK]] but no.\n[[FIXED]] <CNF>1 0</CNF>", "fixed", ""),
        ("[[FIXED]] here it is... [[OK]]", "ok", ""),
        ("<cnf>1 0</cnf>", "fixed", "marker_missing"),
        ("<cnf>1 0</cnf>\n[[FIXED]]", "fixed", "block_before_marker"),
        ("[[FIXED]] but I forgot the block", "unclear", "[[FIXED]] without a <cnf> block"),
        ("", "unclear", "no [[OK]] or [[FIXED]] marker and no <cnf> block"),
        ("[OK]", "unclear", "no [[OK]] or [[FIXED]] marker and no <cnf> block"),
    ],
)
def test_verdicts(text, verdict, note):
    got = parse_repair_answer(text)
    assert (got.verdict, got.note) == (verdict, note)


def test_fixed_answer_keeps_the_block_after_the_marker():
    got = parse_repair_answer("old: <cnf>bad</cnf>\n[[FIXED]]\n<cnf>good</cnf>")
    assert "good" in got.answer and "bad" not in got.answer


@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text):
    assert parse_repair_answer(text).verdict in ("ok", "fixed", "unclear")
