"""Reference checkers, their standalone programs, running checkers in the sandbox, and user checkers."""

import sys
import time
from pathlib import Path

import pysbd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tasks.vifbench import generate
from autonesy.tools.sandbox import SandboxLimits
from autonesy.tools.verify.checker_run import run_checker_code, run_user_function, text_hash
from autonesy.tools.verify.checkers import (
    CHECKER_HELPERS,
    CONSTRAINT_TYPES,
    LOGIC_TYPES,
    PROMPTED_HELPERS,
    SEMANTIC_TYPES,
    helper_api,
    helper_source,
    plain_words,
    reference_check,
    sentences,
    standalone_source,
    subsections,
    titles,
    words,
)
from autonesy.tools.verify.user_checkers import UserCheckerError, load_spec, load_user_checkers

TEXT = """# Field Notes

## Part One
Today, the daily standup makes me feel hopeful near the lantern today.

## Part Two
Lately, our product backlog points to brighter days. It is a wonderful sign overall lately.
"""
QUICK = SandboxLimits(cpu_seconds=1, wall_seconds=1)


def test_text_conventions():
    assert titles(TEXT) == ["Field Notes"] and titles("Hello\n# x") == ["x"] and titles("## Not a title\nx") == []
    assert words("It's a well-known fact, isn't it?") == ["It's", "a", "well-known", "fact", "isn't", "it"]
    assert sentences(TEXT) == [
        "Today, the daily standup makes me feel hopeful near the lantern today.",
        "Lately, our product backlog points to brighter days.",
        "It is a wonderful sign overall lately.",
    ]
    assert [t for t, _ in subsections(TEXT)] == ["Part One", "Part Two"]
    assert subsections("intro text\n## A\nbody") == [("A", "body")]  # text before the first ## is no subsection
    assert subsections("just text") == []


def test_a_paragraph_in_windows_has_the_sentences_pysbd_finds_in_it_whole():
    """Windowing (linear time) changes no sentence: brute force is pySBD on the whole paragraph, with the same
    rule that a piece starting in lower case continues the one before (pySBD's own splits differ at times: on
    the whole text it cut "e.g." from "this one." far from the window's edge; the rule joins them again)."""
    whole = pysbd.Segmenter(language="en", clean=False)
    parts = ["Dr. Smith came.", "It was 3.14 p.m. in the U.S.", "Why?", "we met Mr. Lee.", "e.g. this one."]
    parts += ["J. R. R. Tolkien wrote.", "A long one " + "x " * 700 + "end.", "Wait... then rain."]
    parts += ["Near the edge " + "y " * 375 + "z. Next came Mr. Lee.", "d. Then e. more."]  # ends near a window's end

    def brute(text):
        joined = []
        for piece in (p.strip() for p in whole.segment(text)):
            if joined and piece[:1].islower():
                joined[-1] += " " + piece
            elif piece:
                joined.append(piece)
        return [sentence for sentence in joined if plain_words(sentence)]

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.sampled_from(parts), min_size=1, max_size=90))
    def same(chosen):
        text = " ".join(chosen)
        assert sentences(text) == brute(text)

    same()


def test_every_checker_is_linear_in_the_answer():
    """400 KB in one paragraph: seconds when linear; pySBD on the whole of it (quadratic) took minutes.
    The answer and parameters are benchmarks/checker_scaling.py's (it measures the same at each size)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from checker_scaling import PARAMS as params
    from checker_scaling import text_of

    text = text_of(400)
    start = time.perf_counter()
    verdicts = {t: reference_check(t, text, params.get(t, {})) for t in CONSTRAINT_TYPES}
    assert time.perf_counter() - start < 60
    assert verdicts["words_per_sentence"] is True  # 16 words each: "Dr." "p.m." "U.S." "e.g." end none
    assert reference_check("words_per_sentence", text, {"max": 15}) is False
    assert verdicts["start_end_same_word"] is False and verdicts["subsections_start_end_same_word"] is False


@pytest.mark.parametrize(
    "ctype, params, expected",
    [
        ("writing_tone", {"tone": "optimistic"}, True),
        ("writing_tone", {"tone": "humorous"}, False),
        ("writing_topic", {"topic": "The benefits of agile project management"}, True),
        ("keyword_inclusion", {"keywords": ["lantern", "LANTERN"]}, True),
        ("keyword_inclusion", {"keywords": ["lantern", "kettle"]}, False),
        ("keyword_exclusion", {"keywords": ["kettle"]}, True),
        ("keyword_exclusion", {"keywords": ["field"]}, False),  # keywords count anywhere, the title included
        ("keyword_inclusion", {"keywords": ["STANDUP", "duct"]}, True),  # any case, inside a word ("product")
        ("keyword_exclusion", {"keywords": ["duct"]}, False),
        ("response_title", {"title": "Field Notes"}, True),
        ("response_title", {"title": "Part One"}, False),  # a ## line is a subsection title
        ("response_subsection_titles", {"titles": ["Part One", "Part Two"]}, True),
        ("response_subsection_titles", {"titles": ["part one", "part two"]}, True),
        ("response_subsection_titles", {"titles": ["Part One"]}, True),  # included; others may follow
        ("response_subsection_titles", {"titles": ["Part Two", "Part One"]}, True),
        ("response_subsection_titles", {"titles": ["Part Three"]}, False),
        ("words_per_sentence", {"max": 12}, True),
        ("words_per_sentence", {"max": 11}, False),  # the first sentence has 12 words
        ("even_odd_word_count", {"parity": "odd"}, True),
        ("total_word_count", {"target": 27}, True),  # the body has 27 words; "around N" is N ± max(3, 10 %)
        ("total_word_count", {"target": 30}, True),
        ("total_word_count", {"target": 31}, False),
        ("total_word_count", {"target": 24}, True),
        ("total_word_count", {"target": 23}, False),
        ("start_end_same_word", {}, False),  # "Today" … "lately"
        ("subsections_start_end_same_word", {}, True),
    ],
)
def test_reference_checkers(ctype, params, expected):
    assert reference_check(ctype, TEXT, params) is expected


def test_types_split_into_logic_and_semantic():
    assert set(SEMANTIC_TYPES) == {"writing_tone", "writing_topic"} and len(LOGIC_TYPES) == 9
    assert len(CONSTRAINT_TYPES) == 11
    with pytest.raises(ValueError, match="unknown constraint type"):
        reference_check("nope", TEXT, {})


def test_standalone_programs_agree_with_the_reference_on_generated_data():
    records = generate(8, seed=4)
    programs = {}
    for rec in records:
        for c in rec["constraints"]:
            key = (c["type"], repr(sorted(c["params"].items())))
            if key not in programs:
                namespace = {}
                exec(standalone_source(c["type"], c["params"]), namespace)
                programs[key] = namespace["check"]
            assert (
                programs[key](rec["output"])
                == rec["labels"][c["id"]]
                == reference_check(c["type"], rec["output"], c["params"])
            )


@pytest.mark.parametrize(
    "code, kind, needle",
    [
        ("def check(response):\n    return 'yes'\n", "type", "returned str 'yes'"),
        ("def check(response):\n    return 1\n", "type", "returned int 1"),
        ("def check(response):\n    return response\n", "type", "returned str"),
        ("def check(response):\n    return None\n", "type", "returned NoneType"),
        ("def check(response):\n    return [][0]\n", "runtime", "IndexError"),
        ("def check(response):\n    while True:\n        pass\n", "timeout", "ran longer"),
        ("def check(response)\n    return True\n", "syntax", "SyntaxError"),
        ("x = 1\n", "missing_definition", "does not define a function check(response)"),
        ("import socket\nsocket.socket()\ndef check(response):\n    return True\n", "forbidden", "network"),
    ],
)
def test_checker_failures_are_reported_for_reflection(code, kind, needle):
    run = run_checker_code(code, TEXT, limits=QUICK)
    assert not run.ok and run.value is None and run.error_kind == kind and needle in run.message


def test_a_checker_gets_the_response_as_its_argument_and_cannot_change_it():
    text = 'héllo wörld\n\u2028 "quoted" \\ backslash'
    original = str(text)
    run = run_checker_code("def check(response):\n    return response == " + repr(text) + "\n", text, limits=QUICK)
    assert run.ok and run.value is True  # verbatim, as data
    for tamper in (
        "__autonesy_output__ = lambda: 'other text'\ndef check(response):\n    return True\n",
        "del __autonesy_output__\ndef check(response):\n    return True\n",
    ):
        run = run_checker_code(tamper, text, limits=QUICK)
        assert run.error_kind == "forbidden" and "replaced the response" in run.message
    run = run_checker_code(
        "def check(response):\n    global x\n    x = response.upper()\n    return x.isupper()\n", text, limits=QUICK
    )
    assert run.ok and text == original and text_hash(text) == text_hash(original)


def test_user_checkers_from_a_file_a_module_and_a_function(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "from autonesy.tools.verify.checkers import checker\n\n"
        "@checker(description='Has at most `n` lines.', params={'n': 'lines'})\n"
        "def short(response, n):\n    return len(response.splitlines()) <= n\n\n"
        "def check_upper(response):\n    '''Everything is upper case.'''\n    return response.isupper()\n\n"
        "def helper(x):\n    return x\n"
    )
    found = {c.name: c for c in load_user_checkers([str(path)])}
    assert set(found) == {"short", "upper"}
    assert (
        found["short"].info.signature() == "short(response, n)"
        and found["upper"].info.description == "Everything is upper case."
    )
    assert run_user_function(found["short"].fn, "a\nb", {"n": 2}).value is True
    assert run_user_function(found["short"].fn, "a\nb", {"m": 2}).error_kind == "type"
    assert run_user_function(lambda r: "yes", "a").error_kind == "type"
    assert run_user_function(lambda r: 1 / 0, "a").error_kind == "runtime"
    reference = load_user_checkers(["autonesy.tools.verify.checkers"])
    assert {c.name for c in reference} == set(CONSTRAINT_TYPES)
    one = load_spec("autonesy.tools.verify.checkers:check_response_title")
    assert [c.name for c in one] == ["response_title"]
    for spec, message in [
        ("no/such/file.py", "does not exist"),
        ("no_such_module_xyz", "cannot import"),
        ("autonesy.tools.verify.checkers:nothing", "has no function"),
        ("json", "holds no checker"),
    ]:
        with pytest.raises(UserCheckerError, match=message):
            load_spec(spec)


def test_reference_programs_name_the_spans_their_result_rests_on():
    from autonesy.tools.verify.checker_run import run_checker_code
    from autonesy.tools.verify.checkers import standalone_source

    run = run_checker_code(standalone_source("keyword_exclusion", {"keywords": ["cheap"]}), "Cheap, and cheap again.")
    assert run.ok and run.value is False and run.spans == ("Cheap, and cheap again.",)
    run = run_checker_code(
        standalone_source("words_per_sentence", {"max": 3}),
        "One two. One two three four. Fine.",
    )
    assert run.spans == ("One two three four.",)
    broken = "def check(response):\n    return True\n\ndef spans(response):\n    return 1 / 0\n"
    run = run_checker_code(broken, "text")  # a failing spans() is no error: the result stands
    assert run.ok and run.value is True and run.spans == ()


# -- the helpers a generated checker finds defined -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab #\n.!?'-", max_size=80))
def test_the_helper_source_defines_the_helpers_as_they_are_here(text):
    namespace: dict = {}
    exec(helper_source(), namespace)
    for helper in CHECKER_HELPERS:
        args = {
            "has_keyword": (text, "a b"),
            "word_tolerance": (len(text),),
            "same_title": (text, "a b"),
            "same_word": (text, "A"),
        }
        call = args.get(helper.__name__, (text,))
        assert namespace[helper.__name__](*call) == helper(*call), helper.__name__


def test_programs_that_use_the_helpers_agree_with_the_reference():
    """What the scripted LLM writes (the helpers not written out) is short and still exact."""
    for rec in generate(8, seed=5):
        for c in rec["constraints"]:
            short = standalone_source(c["type"], c["params"], helpers=False)
            assert len(short) < len(standalone_source(c["type"], c["params"]))
            namespace: dict = {}
            exec(helper_source(), namespace)
            exec(short, namespace)
            assert namespace["check"](rec["output"]) is rec["labels"][c["id"]]


def test_a_generated_checker_may_call_the_helpers_in_the_sandbox():
    code = "def check(response):\n    return len(words(response)) == 3 and titles(response) == ['T']\n"
    assert run_checker_code(code, "# T\n\n## Part\nOne two three.", limits=QUICK).value is True
    assert run_checker_code(code, "# T\n\nOne two.", limits=QUICK).value is False
    listed = [line.split("(")[0] for line in helper_api()]  # the prompt lists the helpers a checker would call
    assert listed == [helper.__name__ for helper in PROMPTED_HELPERS]
