"""`trace`: syntax and oracle-feedback rounds in trace order, the error shown once with its kind, reasons cut at
word boundaries, the --kind and --node filters; the report's first-answer syntax check from a trace."""

import json

from hypothesis import given
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from typer.testing import CliRunner

from autonesy.agents.llm import LangChainChatBackend
from autonesy.graph.cli import app
from autonesy.graph.run import RunConfig, run_attempt
from autonesy.graph.trace import attempt_report, first_answer_syntax_error, shorten
from autonesy.tools.llm_spec import LLMSpec

ONE_HOT = "p cnf 10 46\n1 2 3 4 5 6 7 8 9 10 0\n" + "".join(
    f"-{a} -{b} 0\n" for a in range(1, 11) for b in range(a + 1, 11)
)
GOOD = f"<cnf>\n{ONE_HOT}</cnf>"
BROKEN = "<cnf>\np cnf 10 1\n1 2 banana 0\n</cnf>"
AT_LEAST_ONE = "<cnf>\np cnf 10 1\n1 2 3 4 5 6 7 8 9 10 0\n</cnf>"
runner = CliRunner()


def attempt(run_dir, answers, **options):
    backend = LangChainChatBackend(FakeListChatModel(responses=answers), "scripted", "fake", retries=1)
    run_attempt(
        RunConfig(task="fashion", format="dimacs", llm=LLMSpec.parse("http://scripted.test/v1@fake"), **options),
        run_dir,
        backend=backend,
    )
    return run_dir


def oracle_run(tmp_path):
    from study_dirs import make_oracle_attempt

    return make_oracle_attempt(tmp_path / "runs" / "oracle")


def test_semantic_rounds_show_counterexamples_and_the_formula_change(tmp_path):
    report = attempt_report(oracle_run(tmp_path))
    rounds = [(r["round"], r["counterexamples"], r["changed"]) for r in report["semantic_rounds"]]
    # round 1: the header line changes and one clause is added; round 2: the header again, and the 44 other
    # "at most one" clauses (the reasoning around the formula in round 1 is no change)
    assert rounds == [(1, 5, "+2 −1 lines"), (2, 5, "+45 −1 lines")]
    assert report["status"] == "accepted" and (report["relation"], report["f1"]) == ("equal", 1.0)


def test_a_repeated_formula_ends_the_rounds_and_says_so(tmp_path):
    from study_dirs import make_repeating_attempt

    [item] = attempt_report(make_repeating_attempt(tmp_path / "r"))["semantic_rounds"]
    assert item["changed"] == "unchanged formula · a formula already tested: the rounds stop"


def test_trace_cli_prints_rounds_in_order_once_and_filters(tmp_path):
    oracle_run(tmp_path)
    attempt(tmp_path / "runs" / "plain", [GOOD])
    result = runner.invoke(app, ["trace", str(tmp_path / "runs"), "--node", "check_syntax"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    out = result.output
    assert "[syntax] [syntax]" not in out and "round 1 [syntax]: line 2: 'banana'" in out
    assert out.index("round 1 [syntax]") < out.index("semantic round 1: 5 counterexamples → +2 −1 lines")
    assert "semantic round 2: 5 counterexamples → +45 −1 lines" in out
    assert "accepted · relation equal · F1 1.000" in out
    assert "node check_syntax: 4 visits" in out and "node check_syntax: 1 visits" in out
    only = runner.invoke(app, ["trace", str(tmp_path / "runs"), "--kind", "semantic"], env={"COLUMNS": "300"})
    assert only.exit_code == 0 and "plain" not in only.output and "[syntax]" not in only.output
    assert only.output.count("semantic round") == 2


@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=60), st.integers(3, 30))
def test_shorten_cuts_only_at_word_boundaries(text, limit):
    flat = " ".join(text.split())
    short = shorten(text, limit)
    if len(flat) <= limit:
        assert short == flat
    else:
        kept = short.removesuffix(" …")
        assert short.endswith(" …") and flat.startswith(kept) and len(kept) <= limit
        assert " " not in flat[:limit] or flat[len(kept)] == " "  # never half a word


def test_first_answer_syntax_error_reads_the_first_check(tmp_path):
    assert first_answer_syntax_error(attempt(tmp_path / "a", [BROKEN, f"[[FIXED]]\n{GOOD}"])) is True
    assert first_answer_syntax_error(attempt(tmp_path / "b", [GOOD])) is False
    assert first_answer_syntax_error(tmp_path / "none") is None


def recorded_round(run_dir, **fields):
    """A trace whose oracle-feedback round records its counterexamples and formulas itself."""
    run_dir.mkdir(parents=True)
    events = [
        {"event": "llm_call", "role": "formalizer", "text": AT_LEAST_ONE},
        {"event": "llm_call", "role": "semantic_repair", "semantic_round": 1, "text": AT_LEAST_ONE},
        {"event": "semantic_round", "round": 1, **fields},
    ]
    (run_dir / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return run_dir


EXAMPLES = [
    {"true_variables": ["tshirt", "coat"], "formula_says": True, "oracle_says": False, "source": "probe"},
    {"true_variables": [], "formula_says": True, "oracle_says": False, "source": "probe"},
]


def test_a_round_that_records_itself_is_read_from_its_record(tmp_path):
    run = recorded_round(
        tmp_path / "r",
        counterexamples=EXAMPLES,
        formula_before="p cnf 10 1\n1 2 0",
        formula_after="p cnf 10 1\n1 2 0",
        repeated=True,
    )
    [item] = attempt_report(run)["semantic_rounds"]
    assert item["counterexamples"] == 2 and item["examples"] == EXAMPLES
    assert item["changed"] == "unchanged formula · a formula already tested: the rounds stop"
    moved = recorded_round(tmp_path / "m", counterexamples=[], formula_before="a\nb", formula_after="a\nc\nd")
    assert attempt_report(moved)["semantic_rounds"][0]["changed"] == "+2 −1 lines"
