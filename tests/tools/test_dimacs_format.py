"""LLM-facing DIMACS: what is accepted, and the error each canonical mistake produces."""

import pytest

from autonesy.tools.formats import dimacs
from autonesy.tools.formats.base import FormatError

NAMES = ["a", "b", "c"]


def parse(text):
    return dimacs.parse(text, NAMES)


def error(text, **limits):
    with pytest.raises(FormatError) as info:
        dimacs.parse(text, NAMES, **limits)
    return info.value


def test_plain():
    cnf = parse("p cnf 3 2\n1 -2 0\n2 3 0\n")
    assert cnf.clauses == ((1, -2), (2, 3))
    assert (cnf.num_task_vars, cnf.num_vars) == (3, 3)


def test_comments_blank_lines_spanning_and_packed_clauses():
    text = "c at least one\n\np cnf 3 3\nc first\n1 2\n  3 0 -1 -2 0\n\n-3 0\n"
    assert parse(text).clauses == ((1, 2, 3), (-1, -2), (-3,))


def test_auxiliaries_above_n_are_allowed():
    cnf = parse("p cnf 5 2\n-4 1 0\n5 4 0\n")
    assert (cnf.num_task_vars, cnf.num_vars, cnf.num_aux_vars) == (3, 5, 2)


def test_num_vars_comes_from_the_literals_not_the_header():
    assert parse("p cnf 40 1\n1 0\n").num_vars == 3
    assert parse("p cnf 1 1\n1 0\n").num_vars == 3  # a header below N is fine if no literal exceeds it


def test_empty_formula_is_true():
    cnf = parse("c nothing to say\np cnf 3 0\n")
    assert cnf.clauses == () and cnf.num_task_vars == 3


def test_header_any_case_plus_signs_and_satlib_trailer():
    assert parse("P CNF 3 1\n+1 -2 0\n%\n0\n").clauses == ((1, -2),)


def test_not_an_integer():
    err = error("p cnf 3 2\n1 -2 0\n2 b 0\n")
    assert (err.kind, err.line) == ("syntax", 3)
    assert "'b'" in err.message and "not an integer" in err.message and "'2 b 0'" in err.message


def test_inline_comment_is_not_an_integer():
    err = error("p cnf 3 1\n1 2 0 % at least one\n")
    assert (err.kind, err.line) == ("syntax", 2)


def test_unterminated_last_clause():
    err = error("p cnf 3 2\n1 2 0\n-1\n-2\n")
    assert (err.kind, err.line) == ("syntax", 3)
    assert "(-1 -2)" in err.message and "end with 0" in err.message


def test_empty_clause_is_rejected():
    err = error("p cnf 3 2\n1 0 0\n")
    assert (err.kind, err.line) == ("syntax", 2)
    assert "empty clause" in err.message


def test_literal_above_the_header():
    err = error("p cnf 3 2\n1 2 0\n-4 3 0\n")
    assert (err.kind, err.line) == ("out_of_range", 3)
    assert "-4" in err.message and "declares only 3" in err.message


def test_literal_above_the_limit():
    err = error("p cnf 99999999999 1\n99999999999 0\n")
    assert err.kind == "out_of_range" and "limit" in err.message
    assert error("p cnf 20 1\n20 0\n", max_var=10).kind == "out_of_range"


def test_missing_header_says_what_to_write():
    err = error("1 2 0\n-5 0\n")
    assert err.kind == "header" and err.line is None
    assert "'p cnf 5 2'" in err.message


def test_wrong_clause_count():
    err = error("c x\np cnf 3 3\n1 2 0\n")
    assert (err.kind, err.line) == ("header", 2)
    assert "declares 3 clauses" in err.message and "has 1" in err.message and "'p cnf 3 1'" in err.message


@pytest.mark.parametrize("header", ["p cnf 3", "p dnf 3 1", "p cnf three 1", "p cnf -3 1", "p"])
def test_malformed_header(header):
    err = error(f"{header}\n1 0\n")
    assert (err.kind, err.line) == ("header", 1)
    assert "p cnf VARIABLES CLAUSES" in err.message


def test_second_header():
    err = error("p cnf 3 1\np cnf 3 1\n1 0\n")
    assert (err.kind, err.line) == ("header", 2) and "second header" in err.message


def test_header_after_clauses():
    err = error("1 0\np cnf 3 1\n")
    assert (err.kind, err.line) == ("header", 2) and "before" in err.message


def test_accepts_and_ignores_unknown_limits():
    assert parse("p cnf 3 1\n1 0\n") == dimacs.parse("p cnf 3 1\n1 0\n", NAMES, timeout_s=3)
