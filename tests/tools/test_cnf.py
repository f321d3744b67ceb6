import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given

from autonesy.tools.cnf import CNF, DimacsError, from_pysat, parse_dimacs, to_dimacs


def test_parse_inline_dimacs():
    cnf = parse_dimacs("c hello\np cnf 3 2\n-1 2 0\n3 0\n")
    assert cnf.clauses == ((-1, 2), (3,))
    assert cnf.num_vars == 3 and cnf.num_task_vars == 3
    assert cnf.comments == ("hello",)


def test_clause_may_span_lines():
    assert parse_dimacs("p cnf 3 1\n1 2\n3 0\n").clauses == ((1, 2, 3),)


def test_task_vars_comment_marks_auxiliaries():
    cnf = parse_dimacs("c task_vars 2\np cnf 4 1\n1 -3 4 0\n")
    assert cnf.num_task_vars == 2 and cnf.num_aux_vars == 2


@pytest.mark.parametrize(
    "text, needle",
    [
        ("1 2 0\n", "header"),
        ("p cnf 2 1\n1 3 0\n", "exceeds"),
        ("p cnf 2 2\n1 2 0\n", "declares 2 clauses, found 1"),
        ("p cnf 2 1\n1 x 0\n", "'x' is not an integer"),
        ("p cnf 2 1\n1 2\n", "not terminated"),
        ("p cnf 2\n1 2 0\n", "expected one header"),
    ],
)
def test_bad_dimacs_is_rejected_with_its_reason(text, needle):
    with pytest.raises(DimacsError, match=needle):
        parse_dimacs(text)


@given(cnfs())
def test_dimacs_round_trip(cnf):
    names = [f"x{i}" for i in cnf.task_vars]
    text = to_dimacs(cnf, names)
    back = parse_dimacs(text)
    assert back == cnf
    assert "c var 1 x1" in text


@given(cnfs(max_aux=2), cnfs(max_aux=2))
def test_conjoin_renames_auxiliaries_apart(a, b):
    n = max(a.num_task_vars, b.num_task_vars)
    a, b = CNF(n, a.clauses, max(a.num_vars, n)), CNF(n, b.clauses, max(b.num_vars, n))
    both = a.conjoin(b)
    assert projected_models(both) == projected_models(a) & projected_models(b)


def test_from_pysat_keeps_declared_variables():
    from pysat.card import CardEnc, EncType

    formula = CardEnc.equals(lits=[1, 2, 3], bound=1, top_id=3, encoding=EncType.seqcounter)
    cnf = from_pysat(formula, 3)
    assert cnf.num_task_vars == 3 and cnf.num_vars >= max(abs(l) for c in cnf.clauses for l in c)
    assert projected_models(cnf) == {(1, 0, 0), (0, 1, 0), (0, 0, 1)}


def test_literal_zero_is_rejected():
    with pytest.raises(ValueError, match="literal 0"):
        CNF(2, ((1, 0),))
