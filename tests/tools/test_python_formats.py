"""The three Python-program formats (PySAT, CPMpy, SymPy): correct programs give CNFs whose models,
projected on the task variables, are exactly the truth table; faulty programs give the expected
error kinds. Every program runs in the sandbox."""

from __future__ import annotations

import itertools

import pytest

from autonesy.tools import sandbox
from autonesy.tools.counting import enumerate_models
from autonesy.tools.formats import cpmpy_program, pysat_program, sympy_program
from autonesy.tools.formats.base import FormatError

FORMATS = {"pysat": pysat_program, "cpmpy": cpmpy_program, "sympy": sympy_program}
NAMES = ["a", "b", "c", "d", "e"]
QUICK = {"wall_seconds": 10.0}


@pytest.fixture(scope="module", autouse=True)
def warm_sandboxes():
    """Keep two sandboxes per format started ahead of need: importing cpmpy takes about a second,
    so back-to-back tests would otherwise wait for it."""
    saved, sandbox.PREWARM_SPARES = sandbox.PREWARM_SPARES, 2
    for module in FORMATS.values():
        module.warm_up()
    yield
    sandbox.PREWARM_SPARES = saved
    sandbox.shutdown()


def truth_table(rule) -> set[tuple[int, ...]]:
    return {bits for bits in itertools.product((0, 1), repeat=len(NAMES)) if rule(*bits)}


def models(cnf) -> set[tuple[int, ...]]:
    assert cnf.num_task_vars == len(NAMES)
    return set(enumerate_models(cnf))


RULES = {
    "exactly_one": lambda a, b, c, d, e: a + b + c + d == 1,
    "implication": lambda a, b, c, d, e: not (a and b) or c,
    "xor_chain": lambda a, b, c, d, e: (a + b + c + d) % 2 == 1,
    "at_least_two": lambda a, b, c, d, e: a + b + c + d + e >= 2,
}

PROGRAMS = {
    ("pysat", "exactly_one"): "formula = CardEnc.equals(lits=[a, b, c, d], bound=1)\n",
    ("pysat", "implication"): "clauses = [[-a, -b, c]]\n",
    ("pysat", "xor_chain"): (
        "clauses = []\n"
        "acc = a\n"
        "for x in [b, c, d]:\n"
        "    t = vpool.id()\n"
        "    clauses += [[-t, acc, x], [-t, -acc, -x], [t, -acc, x], [t, acc, -x]]\n"
        "    acc = t\n"
        "clauses.append([acc])\n"
    ),
    ("pysat", "at_least_two"): (
        "formula = CNF(from_clauses=CardEnc.atleast(lits=[a, b, c, d, e], bound=2, vpool=vpool,\n"
        "                                           encoding=EncType.seqcounter).clauses)\n"
    ),
    ("cpmpy", "exactly_one"): "constraints = [cp.sum([a, b, c, d]) == 1]\n",
    ("cpmpy", "implication"): "constraints = (a & b).implies(c)\n",
    ("cpmpy", "xor_chain"): "constraints = [cp.Xor([a, b, c, d])]\n",
    ("cpmpy", "at_least_two"): "model = cp.Model(cp.sum([a, b, c, d, e]) >= 2)\n",
    ("sympy", "exactly_one"): (
        "xs = [a, b, c, d]\nformula = Or(*xs) & And(*[~(x & y) for x, y in itertools.combinations(xs, 2)])\n"
    ),
    ("sympy", "implication"): "formula = Implies(a & b, c)\n",
    ("sympy", "xor_chain"): "formula = Xor(a, b, c, d)\n",
    ("sympy", "at_least_two"): "constraints = [Or(*[x & y for x, y in itertools.combinations(VARS.values(), 2)])]\n",
}

# Interleave formats so that each format's next sandbox can warm up while the others run.
CASES = [(fmt, rule) for rule in RULES for fmt in FORMATS]


@pytest.mark.parametrize("fmt,rule", CASES, ids=[f"{f}-{r}" for f, r in CASES])
def test_correct_programs_have_exactly_the_rule_as_models(fmt, rule):
    cnf = FORMATS[fmt].parse(PROGRAMS[fmt, rule], NAMES, **QUICK)
    assert models(cnf) == truth_table(RULES[rule])
    assert all(abs(lit) <= cnf.num_vars for clause in cnf.clauses for lit in clause)


@pytest.mark.parametrize("fmt", FORMATS)
def test_skeletons_are_valid_programs(fmt):
    module = FORMATS[fmt]
    assert module.CONVENTION.strip() and module.SKELETON.strip()
    cnf = module.parse(module.SKELETON, NAMES, **QUICK)
    expected = truth_table(lambda a, b, c, d, e: a + b + c == 1 and (not a or d))
    assert models(cnf) == expected


FAULTY = {
    "syntax": (
        {"pysat": "clauses = [[a, b]\n", "cpmpy": "constraints = [a |]\n", "sympy": "formula = Or(a, b\n"},
        "syntax",
    ),
    "unknown_name": (
        {"pysat": "clauses = [[a, zz]]\n", "cpmpy": "constraints = [a | zz]\n", "sympy": "formula = a | zz\n"},
        "unknown_variable",
    ),
    "missing": ({"pysat": "x = [[a, b]]\n", "cpmpy": "x = [a | b]\n", "sympy": "x = a | b\n"}, "missing_definition"),
    "wrong_type": (
        {"pysat": "clauses = 'a or b'\n", "cpmpy": "constraints = ['a or b']\n", "sympy": "formula = 'a or b'\n"},
        "type",
    ),
    "runtime": (
        {
            "pysat": "x = 1\nclauses = [[a, b]][2]\n",
            "cpmpy": "x = 1\nconstraints = [a | b][2]\n",
            "sympy": "x = 1\nformula = [a | b][2]\n",
        },
        "runtime",
    ),
}
FAULTY_CASES = [(fmt, fault) for fault in FAULTY for fmt in FORMATS]


@pytest.mark.parametrize("fmt,fault", FAULTY_CASES, ids=[f"{f}-{k}" for f, k in FAULTY_CASES])
def test_faulty_programs_give_the_expected_error(fmt, fault):
    sources, kind = FAULTY[fault]
    with pytest.raises(FormatError) as caught:
        FORMATS[fmt].parse(sources[fmt], NAMES, **QUICK)
    error = caught.value
    assert error.kind == kind, error.message
    if fault == "runtime":
        assert error.line == 2
        assert "IndexError" in error.message and "line 2" in error.message
    if fault == "syntax":
        assert error.line == 1
    if fault == "unknown_name":
        assert "zz" in error.message and "a, b, c, d, e" in error.message


@pytest.mark.parametrize("fmt", FORMATS)
def test_endless_loop_times_out(fmt):
    with pytest.raises(FormatError) as caught:
        FORMATS[fmt].parse("while True:\n    pass\n", NAMES, wall_seconds=1.0)
    assert caught.value.kind == "timeout"


@pytest.mark.parametrize("fmt", FORMATS)
def test_programs_cannot_touch_files_outside(fmt, tmp_path):
    target = tmp_path / "outside.txt"
    with pytest.raises(FormatError) as caught:
        FORMATS[fmt].parse(f"open({str(target)!r}, 'w').write('x')\n", NAMES, **QUICK)
    assert caught.value.kind == "forbidden"
    assert not target.exists()


# --- format-specific behaviour -------------------------------------------------------------------


def test_pysat_literal_zero_and_out_of_range():
    with pytest.raises(FormatError) as caught:
        pysat_program.parse("clauses = [[a, b, 0]]\n", NAMES, **QUICK)
    assert caught.value.kind == "out_of_range" and "0" in caught.value.message
    with pytest.raises(FormatError) as caught:
        pysat_program.parse("clauses = [[a, 10 ** 9]]\n", NAMES, **QUICK)
    assert caught.value.kind == "out_of_range"


def test_pysat_flat_list_and_native_cardinality_are_type_errors():
    with pytest.raises(FormatError) as caught:
        pysat_program.parse("clauses = [a, -b]\n", NAMES, **QUICK)
    assert caught.value.kind == "type" and "list of lists" in caught.value.message
    with pytest.raises(FormatError) as caught:
        pysat_program.parse("formula = CardEnc.atmost([a, b], 1, encoding=EncType.native)\n", NAMES, **QUICK)
    assert caught.value.kind == "type"


def test_pysat_auxiliaries_sit_above_the_task_variables():
    cnf = pysat_program.parse(
        "t = vpool.id()\nclauses = [[-t, a], [t, b]]\nassert t == N + 1 and VARS['c'] == 3\n", NAMES, **QUICK
    )
    assert cnf.num_vars == len(NAMES) + 1
    assert models(cnf) == truth_table(lambda a, b, c, d, e: a or b)


def test_pysat_encoders_never_collide_with_task_variables_even_when_imported():
    # plain PySAT would number the auxiliaries from max(lits) + 1 = 4, i.e. over d and e
    source = (
        "from pysat.card import CardEnc, EncType\n"
        "formula = CardEnc.atmost(lits=[a, b, c], bound=1, encoding=EncType.seqcounter)\n"
    )
    cnf = pysat_program.parse(source, NAMES, **QUICK)
    assert cnf.num_vars > len(NAMES)
    assert models(cnf) == truth_table(lambda a, b, c, d, e: a + b + c <= 1)


def test_cpmpy_redeclared_variable_means_the_task_variable_and_unused_ones_stay_free():
    cnf = cpmpy_program.parse(
        'x = cp.boolvar(name="b")\nhelper = cp.boolvar(name="h")\n'
        "constraints = [x.implies(helper), helper.implies(a)]\n",
        NAMES,
        **QUICK,
    )
    assert models(cnf) == truth_table(lambda a, b, c, d, e: not b or a)
    assert any("h" in comment for comment in cnf.comments)


def test_cpmpy_integer_helpers_are_auxiliary():
    cnf = cpmpy_program.parse(
        'n = cp.intvar(0, 5, name="n")\nconstraints = [n == cp.sum(list(VARS.values())), n == 2]\n', NAMES, **QUICK
    )
    assert models(cnf) == truth_table(lambda *bits: sum(bits) == 2)


def test_cpmpy_numeric_expression_is_a_type_error():
    with pytest.raises(FormatError) as caught:
        cpmpy_program.parse("constraints = [a + b]\n", NAMES, **QUICK)
    assert caught.value.kind == "type"


def test_sympy_unknown_symbol():
    with pytest.raises(FormatError) as caught:
        sympy_program.parse('formula = a | sp.Symbol("zz")\n', NAMES, **QUICK)
    assert caught.value.kind == "unknown_variable" and "zz" in caught.value.message


def test_sympy_relational_is_a_type_error():
    with pytest.raises(FormatError) as caught:
        sympy_program.parse("formula = sp.Symbol('n') > 2\n", NAMES, **QUICK)
    assert caught.value.kind == "type"


def test_sympy_constants_ite_and_large_xor():
    cnf = sympy_program.parse("constraints = [ITE(a, b, c), true]\n", NAMES, **QUICK)
    assert models(cnf) == truth_table(lambda a, b, c, d, e: b if a else c)
    cnf = sympy_program.parse("formula = false\n", NAMES, **QUICK)
    assert models(cnf) == set()
    # a XOR over all variables stays linear in size (SymPy's to_cnf would be exponential)
    names = [f"x{i}" for i in range(30)]
    cnf = sympy_program.parse("formula = Xor(*VARS.values())\n", names, **QUICK)
    assert len(cnf.clauses) < 200


def test_sympy_build_exprs_rejects_malformed_node_tables():
    with pytest.raises(FormatError):
        sympy_program.build_exprs({"nodes": [["and", [5]]], "roots": [0]}, NAMES)
    with pytest.raises(FormatError):
        sympy_program.build_exprs({"nodes": [["eval", "x"]], "roots": [0]}, NAMES)
    with pytest.raises(FormatError):
        sympy_program.build_exprs({"nodes": [["var", "a"]], "roots": [3]}, NAMES)


def test_task_names_that_clash_with_pre_bound_names_are_refused():
    with pytest.raises(ValueError):
        pysat_program.parse("clauses = []\n", ["vpool", "b"])
    with pytest.raises(ValueError):
        cpmpy_program.parse("constraints = []\n", ["model"])
    with pytest.raises(ValueError):
        sympy_program.parse("formula = true\n", ["Xor"])


def test_empty_program_is_no_block():
    with pytest.raises(FormatError) as caught:
        pysat_program.parse("   \n", NAMES)
    assert caught.value.kind == "no_block"
