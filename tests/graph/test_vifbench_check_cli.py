"""``vifbench check``: one constraint on one response, its evidence, and one-line errors (exit 2)."""

import json

import pytest
from typer.testing import CliRunner

from autonesy.graph.cli import app
from autonesy.graph.cli.verify import CHECK_TYPES
from autonesy.tools.verify.checkers import LOGIC_TYPES

RESPONSE = "# Agile Work\n\n## Planning\nPlan the sprint, then plan.\n\n## Review\nReview it. Dr. Lee agrees, review.\n"


def run(*args, text=RESPONSE, tmp_path):
    output = tmp_path / "out.txt"
    output.write_text(text, encoding="utf-8")
    return CliRunner().invoke(app, ["vifbench", "check", *args, "--output", str(output)])


def test_the_offered_types_are_the_logic_types():
    assert sorted(CHECK_TYPES) == sorted(LOGIC_TYPES)


@pytest.mark.parametrize(
    "args, verdict, evidence",
    [
        (["keyword_inclusion", "--param", "keywords=sprint,LEE,scrum"], "unsat", {"absent": ["scrum"]}),
        (["keyword_exclusion", "--param", "keywords=waterfall"], "sat", {"found": []}),
        (["response_title", "--param", "title=agile work"], "sat", {"titles": ["Agile Work"]}),
        (["response_subsection_titles", "--param", "titles=Review|Planning"], "sat", {}),
        # "Plan the sprint, then plan." 5, "Review it." 2, "Dr. Lee agrees, review." 4 words
        (["words_per_sentence", "--param", "max=4"], "unsat", {"sentences": 3, "longest": 5}),
        (["even_odd_word_count", "--param", "parity=odd"], "sat", {"words": 11}),
        (["total_word_count", "--param", "target=14"], "sat", {"words": 11, "allowed": [11, 17]}),
        (["start_end_same_word"], "unsat", {"first": "Plan", "last": "review"}),
        (["subsections_start_end_same_word"], "sat", {}),
    ],
)
def test_verdict_and_evidence(args, verdict, evidence, tmp_path):
    result = run(*args, "--json", tmp_path=tmp_path)
    assert result.exit_code == (0 if verdict == "sat" else 1), result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == verdict
    assert {k: data["evidence"][k] for k in evidence} == evidence
    plain = run(*args, tmp_path=tmp_path)
    assert plain.stdout == verdict + "\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["writing_tone", "--param", "tone=urgent"], "semantic"),
        (["no_such_type"], "unknown constraint type 'no_such_type'"),
        (["words_per_sentence"], "needs --param max=N"),
        (["words_per_sentence", "--param", "max=0"], "positive integer"),
        (["words_per_sentence", "--param", "max"], "is not KEY=VALUE"),
        (["words_per_sentence", "--param", "limit=3"], "takes no parameter 'limit'; it takes max=N"),
        (["even_odd_word_count", "--param", "parity=three"], "even or odd"),
        (["keyword_inclusion", "--param", "keywords=a,,b"], "an empty item"),
        (["start_end_same_word", "--param", "x=1"], "takes no parameters"),
        (["total_word_count", "--param", "target=5", "--param", "target=6"], "given twice"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(args, message, tmp_path):
    result = run(*args, tmp_path=tmp_path)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


def test_a_missing_or_undecodable_output_is_one_line(tmp_path):
    missing = CliRunner().invoke(app, ["vifbench", "check", "start_end_same_word", "--output", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\xfa")
    result = CliRunner().invoke(app, ["vifbench", "check", "start_end_same_word", "--output", str(bad)])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
