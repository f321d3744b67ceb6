"""Block extraction: which <cnf> block counts, and what the model is told when there is none."""

import pytest

from autonesy.tools.formats.base import FormatError
from autonesy.tools.formats.extract import Extraction, extract, extract_cnf_block


def test_single_block():
    assert extract("Here it is:\n<cnf>\n1 2 0\n</cnf>\nDone.") == Extraction("1 2 0\n", ())


def test_tags_are_case_insensitive_and_may_hold_blanks():
    assert extract_cnf_block("<CNF>\na OR b\n</Cnf>") == "a OR b\n"
    assert extract_cnf_block("< cnf >a OR b</ cnf >") == "a OR b\n"


def test_several_blocks_take_the_last_and_say_so():
    answer = "Draft:\n<cnf>\n1 0\n</cnf>\nWait, that is wrong.\n<cnf>\n-1 0\n</cnf>"
    assert extract(answer) == Extraction("-1 0\n", ("cnf_block_last_of_many",))


def test_blank_blocks_are_skipped():
    # a mention of the tags in the reasoning yields an empty block, which does not count
    answer = "I will answer in <cnf></cnf> tags.\n<cnf>\n1 0\n</cnf>\nAs required, <cnf> </cnf>."
    assert extract(answer) == Extraction("1 0\n", ())


def test_a_mentioned_opening_tag_does_not_swallow_the_block():
    answer = "The formula goes inside a <cnf> tag. Here:\n<cnf>\n1 0\n</cnf>"
    assert extract_cnf_block(answer) == "1 0\n"


def test_unterminated_block_takes_the_rest():
    assert extract("Answer:\n<cnf>\n1 2 0\n-1 0") == Extraction("1 2 0\n-1 0\n", ("cnf_block_unterminated",))


def test_a_complete_block_wins_over_a_trailing_unterminated_one():
    assert extract("<cnf>1 0</cnf>\nMaybe also <cnf>\n2") == Extraction("1 0\n", ())


def test_fences_inside_the_block_are_removed():
    answer = "<cnf>\n```python\nimport cpmpy as cp\n```\n</cnf>"
    assert extract(answer) == Extraction("import cpmpy as cp\n", ("stray_fence_removed",))
    assert extract("<cnf>\n~~~\nx\n~~~\n</cnf>").notes == ("stray_fence_removed",)


def test_fences_outside_the_block_are_irrelevant():
    assert extract("```xml\n<cnf>\nx\n</cnf>\n```") == Extraction("x\n", ())


def test_python_indentation_is_kept_and_common_indentation_removed():
    answer = "<cnf>\n    for i in range(3):\n        x = i\n</cnf>"
    assert extract_cnf_block(answer) == "for i in range(3):\n    x = i\n"
    assert extract_cnf_block("<cnf>  x = 1\ny = 2</cnf>") == "x = 1\ny = 2\n"


def test_windows_newlines():
    assert extract_cnf_block("<cnf>\r\n1 0\r\n</cnf>") == "1 0\n"


@pytest.mark.parametrize(
    "answer, detail",
    [
        ("The answer is a OR b.", "No <cnf> block"),
        ("<cnf>\n\n</cnf>", "empty"),
        ("<cnf>\n```\n```\n</cnf>", "empty"),
        ("a OR b\n</cnf>", "no opening <cnf>"),
        ("<cnf>   ", "empty"),
    ],
)
def test_no_block(answer, detail):
    with pytest.raises(FormatError) as info:
        extract(answer)
    assert info.value.kind == "no_block"
    assert detail in info.value.message
    assert "inside <cnf> and </cnf> tags" in info.value.message


def test_too_large():
    with pytest.raises(FormatError) as info:
        extract("<cnf>" + "1 0\n" * 300_000 + "</cnf>")
    assert info.value.kind == "too_large"
    assert extract("<cnf>1 0</cnf>", max_chars=20).source == "1 0\n"
    with pytest.raises(FormatError):
        extract("<cnf>1 0</cnf>", max_chars=10)


def test_many_tags_stay_linear():
    answer = "<cnf>" * 50_000 + "1 0" + "</cnf>" * 50_000
    assert extract_cnf_block(answer) == "1 0\n"
