"""Autofixes: each canonical fault, its exact repair and its name; nothing else is touched."""

import pytest

from autonesy.tools.formats import autofix as autofix_module
from autonesy.tools.formats import dimacs
from autonesy.tools.formats.autofix import autofix


def fix(text, fmt="dimacs", **kw):
    return autofix(text, fmt, **kw)


# --------------------------------------------------------------------------- all formats


@pytest.mark.parametrize("fmt", ["dimacs", "nat", "pysat", "cpmpy", "sympy"])
def test_stray_fences_are_removed(fmt):
    body = "p cnf 1 1\n1 0\n" if fmt == "dimacs" else "x = 1\n" if fmt != "nat" else "a OR b\n"
    assert fix(f"```{fmt}\n{body}```\n", fmt) == (body, ["stray_fence_removed"])


def test_nat_has_nothing_else_to_fix():
    assert fix("a && b ||\n", "nat") == ("a && b ||\n", [])


def test_unknown_format():
    with pytest.raises(ValueError):
        autofix("x", "prolog")


# --------------------------------------------------------------------------- DIMACS


@pytest.mark.parametrize(
    "text",
    [
        "p cnf 3 2\n1 -2 0\n2 3 0\n",
        "c hello\np cnf 5 1\n1\n2 0\n",  # a clause spanning lines, header agrees: left alone
        "p cnf 3 0\n",
        "p cnf 3 2\n1 0 2 0\n",
    ],
)
def test_valid_dimacs_is_left_alone(text):
    assert fix(text) == (text, [])


def test_header_added_before_the_first_clause():
    assert fix("c exactly one\n1 2 0\n-1 -2 0\n") == (
        "c exactly one\np cnf 2 2\n1 2 0\n-1 -2 0\n",
        ["dimacs_header_added"],
    )
    assert fix("c nothing\n") == ("c nothing\np cnf 0 0\n", ["dimacs_header_added"])


def test_header_recounted():
    assert fix("p cnf 2 5\n1 3 0\n") == ("p cnf 3 1\n1 3 0\n", ["dimacs_header_recounted"])
    # a header declaring more variables than used is not wrong: only the clause count changes
    assert fix("p cnf 9 2\n1 0\n") == ("p cnf 9 1\n1 0\n", ["dimacs_header_recounted"])


def test_header_replaced():
    assert fix("p cnf 3\n1 0\n") == ("p cnf 1 1\n1 0\n", ["dimacs_header_replaced"])
    assert fix("p dnf 4 1\n1 0\n") == ("p cnf 1 1\n1 0\n", ["dimacs_header_replaced"])


def test_header_moved_and_duplicates_removed():
    assert fix("c x\n1 0\np cnf 1 1\n") == ("c x\np cnf 1 1\n1 0\n", ["dimacs_header_moved"])
    assert fix("p cnf 1 1\np cnf 1 1\n1 0\n") == ("p cnf 1 1\n1 0\n", ["dimacs_duplicate_header_removed"])


def test_missing_terminators_one_clause_per_line():
    assert fix("p cnf 3 2\n1 2\n-3\n") == ("p cnf 3 2\n1 2 0\n-3 0\n", ["dimacs_missing_terminator"])
    assert fix("1 2\n3 0\n4 5\n") == (
        "p cnf 5 3\n1 2 0\n3 0\n4 5 0\n",
        ["dimacs_missing_terminator", "dimacs_header_added"],
    )


def test_missing_terminator_mid_formula_when_the_header_counts_lines():
    assert fix("p cnf 3 3\n1 2\n3 0\n-1 0\n") == ("p cnf 3 3\n1 2 0\n3 0\n-1 0\n", ["dimacs_missing_terminator"])


def test_missing_terminator_with_several_clauses_per_line_only_ends_the_last():
    assert fix("p cnf 3 3\n1 0 2 0\n3\n") == ("p cnf 3 3\n1 0 2 0\n3 0\n", ["dimacs_missing_terminator"])


def test_comment_lines_converted():
    assert fix("# one\n// two\np cnf 1 1\n1 0\n") == ("c one\nc two\np cnf 1 1\n1 0\n", ["dimacs_comment_converted"])


def test_no_structural_fix_while_a_token_is_not_an_integer():
    assert fix("1 x\n") == ("1 x\n", [])


def test_lines_after_a_percent_trailer_are_ignored():
    assert fix("p cnf 1 1\n1 0\n%\n0\n") == ("p cnf 1 1\n1 0\n%\n0\n", [])


@pytest.mark.parametrize(
    "text",
    ["1 2\n-1 -2\n", "```\np cnf 1 9\n1 2 0\n```\n", "c a\n1 0\np cnf 3\np cnf 1 1\n2\n", "# c\n1 0 2 0\n3\n"],
)
def test_fixed_dimacs_parses_and_fixing_twice_changes_nothing(text):
    fixed, names = fix(text)
    assert names
    dimacs.parse(fixed, ["a", "b", "c"])
    assert fix(fixed) == (fixed, [])


# --------------------------------------------------------------------------- Python formats


@pytest.fixture
def no_prebound(monkeypatch):
    """The import mechanism on its own, whatever the front-ends pre-bind in their sandboxes."""
    monkeypatch.setattr(autofix_module, "prebound_names", lambda fmt: frozenset())


def test_sympy_imports_added_at_the_top(no_prebound):
    assert fix("f = And(a, Or(b, Not(c)))\n", "sympy", bound=["a", "b", "c"]) == (
        "from sympy import And, Or, Not\nf = And(a, Or(b, Not(c)))\n",
        ["python_import_added:sympy"],
    )


def test_imports_go_after_future_imports(no_prebound):
    text = '"""doc"""\nfrom __future__ import annotations\nx = sp.Symbol("x")\n'
    assert fix(text, "sympy") == (
        '"""doc"""\nfrom __future__ import annotations\nimport sympy as sp\nx = sp.Symbol("x")\n',
        ["python_import_added:sympy"],
    )


def test_one_line_and_one_name_per_module(no_prebound):
    text = "for p, q in combinations(xs, 2):\n    y = sp.Xor(p, q)\nz = product(xs)\n"
    fixed, names = fix(text, "sympy")
    assert fixed.splitlines()[:2] == ["import sympy as sp", "from itertools import combinations, product"]
    assert names == ["python_import_added:itertools", "python_import_added:sympy"]


def test_names_the_program_binds_are_not_imported(no_prebound):
    text = (
        "import sympy as sp\nfrom sympy import And as And\ndef Or(*xs):\n    return xs\nNot = 3\nf = And(Or(a), Not)\n"
    )
    assert fix(text, "sympy", bound=["a"]) == (text, [])


def test_task_variables_are_never_imported_over(no_prebound):
    assert fix("constraint = Implies(a, b)\n", "sympy", bound=["Implies", "a", "b"]) == (
        "constraint = Implies(a, b)\n",
        [],
    )


def test_star_imports_count_as_binding(no_prebound):
    text = "from sympy import *\nf = And(a, b)\n"
    assert fix(text, "sympy") == (text, [])


def test_code_that_does_not_parse_is_checked_textually(no_prebound):
    text = "f = And(a, Or(b, c)\n"  # unbalanced
    assert fix(text, "sympy") == ("from sympy import And, Or\n" + text, ["python_import_added:sympy"])
    text = "from sympy import And\nf = And(a, Or(b, c)\n"
    assert fix(text, "sympy") == ("from sympy import Or\n" + text, ["python_import_added:sympy"])


def test_cpmpy_module_alias(no_prebound):
    assert fix("x = cp.boolvar(name='x')\n", "cpmpy") == (
        "import cpmpy as cp\nx = cp.boolvar(name='x')\n",
        ["python_import_added:cpmpy"],
    )
    assert fix("x = cpmpy.boolvar()\n", "cpmpy") == (
        "import cpmpy\nx = cpmpy.boolvar()\n",
        ["python_import_added:cpmpy"],
    )


def test_pysat_cardenc_is_prebound():
    pytest.importorskip("autonesy.tools.formats.pysat_program")
    # In the PySAT sandbox CardEnc is a wrapper drawing auxiliaries from vpool: importing the plain
    # class over it would change what the program means.
    assert "CardEnc" in autofix_module.prebound_names("pysat")


@pytest.mark.parametrize("fmt", ["pysat", "cpmpy", "sympy"])
def test_names_the_sandbox_prebinds_are_never_imported(fmt):
    prebound = autofix_module.prebound_names(fmt) & set(autofix_module.KNOWN_IMPORTS[fmt])
    for name in sorted(prebound):
        text = f"y = {name}\n"
        assert fix(text, fmt) == (text, []), name


def test_pysat_imports_when_not_prebound(monkeypatch):
    monkeypatch.setattr(autofix_module, "prebound_names", lambda fmt: frozenset())
    text = (
        "pool = IDPool(start_from=4)\nf = CNF(from_clauses=CardEnc.atmost([1, 2], encoding=EncType.pairwise).clauses)\n"
    )
    fixed, names = fix(text, "pysat")
    assert fixed.splitlines()[:2] == [
        "from pysat.card import CardEnc, EncType",
        "from pysat.formula import IDPool, CNF",
    ]
    assert names == ["python_import_added:pysat.card", "python_import_added:pysat.formula"]
    fixed, _ = fix("c = PBEnc.atmost([1, 2], weights=[1, 2], bound=2, encoding=EncType.best)\n", "pysat")
    assert fixed.splitlines()[0] == "from pysat.pb import EncType, PBEnc"
