"""The composition language and the Z3 decision: parsing (NAT notation, SMT-LIB), verdicts against brute
force, minimal cores, blame, corrections."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.formats.expr import Op, Var, evaluate
from autonesy.tools.verify.solver import CompositionError, decide, evaluate3, parse_composition, render

IDS = ["C1", "C2", "C3", "C4"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("C1 AND (C2 OR NOT C3) IMPLIES C4", "C1 AND (C2 OR NOT C3) IMPLIES C4"),
        ("C1 ∧ (C2 ∨ ¬C3) ⇒ C4", "C1 AND (C2 OR NOT C3) IMPLIES C4"),
        ("c1", None),
        ("C1\nNOT C2\nC3 IFF C4", "C1\nNOT C2\nC3 IFF C4"),
        ("C1 ⇔ C2 ⇒ C3", "C1 IFF C2 IMPLIES C3"),
        ("(C1 IMPLIES C2) IMPLIES C3", "(C1 IMPLIES C2) IMPLIES C3"),
        ("C1 and c2", None),
    ],
)
def test_nat_notation(text, expected):
    if expected is None:
        with pytest.raises(CompositionError, match="unknown variable"):
            parse_composition(text, IDS)
        return
    assert parse_composition(text, IDS).text() == expected


def test_top_level_conjuncts_are_the_requirements():
    composition = parse_composition("C1 AND C2\nC3 OR C4", IDS)
    assert [composition.render(p) for p in composition.parts] == ["C1", "C2", "C3 OR C4"]


def test_smtlib_with_declared_booleans_only():
    composition = parse_composition(
        "(declare-const C1 Bool)\n(assert (=> C1 (or C2 (not C3))))\n(assert (= C4 C1))\n(check-sat)", IDS
    )
    assert composition.text() == "C1 IMPLIES C2 OR NOT C3\nC4 IFF C1"
    for bad, message in [
        ("(declare-const x Bool)(assert C1)", "only C1"),
        ("(declare-const C2 Int)(assert C1)", "may only hold"),
        ("(declare-fun f (Bool) Bool)(assert (f C1))", "may only hold"),
        ("(assert (> 1 2))", "non-Boolean"),
        ("(assert C9)", "does not parse"),
        ("(set-option :x 1)", "does not parse"),
    ]:
        with pytest.raises(CompositionError, match=message):
            parse_composition(bad, IDS)


@pytest.mark.parametrize("text", ["", "C1 AND", "C1 C2", "C1 = C2", "C0", "(C1 OR C2"])
def test_errors_are_written_for_the_llm(text):
    with pytest.raises(CompositionError) as error:
        parse_composition(text, IDS)
    assert "\n" not in str(error.value).splitlines()[0] and len(str(error.value)) > 10


def exprs():
    leaves = st.builds(Var, st.integers(1, 4))
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.builds(lambda a: Op("not", (a,)), inner),
            st.builds(
                lambda op, a, b: Op(op, (a, b)), st.sampled_from(["and", "or", "implies", "iff", "xor"]), inner, inner
            ),
        ),
        max_leaves=8,
    )


def test_a_checked_result_is_blamed_when_the_structure_blames_only_unchecked_ones():
    # NOT C2 and (C1 implies C2) is NOT C1 and NOT C2: with C1 holding and C2 unchecked it is false
    # whatever C2 is, and C1, which holds but must not, is the one to blame (the implication's
    # structure alone would blame only C2).
    decision = decide(parse_composition("NOT C2\nC1 IMPLIES C2", IDS), {"C1": True, "C2": None, "C3": True, "C4": True})
    assert decision.verdict == "unsat" and decision.core == ["C1"]
    assert [(item.id, item.value) for item in decision.violated] == [("C1", True)]
    assert [(item.id, item.should_be) for item in decision.to_fix] == [("C1", False)]


@settings(max_examples=60, deadline=None)
@given(exprs(), st.lists(st.sampled_from([True, False, None]), min_size=4, max_size=4))
def test_decide_agrees_with_brute_force(expr, raw):
    text = render(expr, IDS)
    composition = parse_composition(text, IDS)
    assert all(
        evaluate(composition.expr, dict(enumerate(v, 1))) == evaluate(expr, dict(enumerate(v, 1)))
        for v in itertools.product([True, False], repeat=4)
    )  # render → parse keeps the meaning
    values = dict(zip(IDS, raw))
    decision = decide(composition, values)
    unknown = [i for i, v in enumerate(raw, 1) if v is None]
    outcomes = set()
    for filled in itertools.product([True, False], repeat=len(unknown)):
        assignment = {i: v for i, v in enumerate(raw, 1)}
        assignment.update(zip(unknown, filled))
        outcomes.add(evaluate(expr, assignment))
    expected = {frozenset({True}): "sat", frozenset({False}): "unsat"}.get(frozenset(outcomes), "unknown")
    assert decision.verdict == expected
    assert evaluate3(expr, {i: v for i, v in enumerate(raw, 1)}) in ({"sat": True, "unsat": False}.get(expected), None)
    contradiction = not any(evaluate(expr, dict(enumerate(a, 1))) for a in itertools.product([True, False], repeat=4))
    if expected == "unsat":
        core = set(decision.core)
        assert (core or contradiction) and all(values[c] is not None for c in core)
        for drop in [None, *core]:  # the core forces false; no smaller subset does
            kept = core - {drop}
            forced = all(
                not evaluate(expr, {**dict(enumerate(a, 1)), **{IDS.index(c) + 1: values[c] for c in kept}})
                for a in itertools.product([True, False], repeat=4)
            )
            assert forced == (drop is None)
        fixed = {**values, **{item.id: item.should_be for item in decision.to_fix}}
        if not contradiction and all(v is not None for v in fixed.values()):
            assert evaluate(expr, {IDS.index(c) + 1: v for c, v in fixed.items()})
        assert decision.violated or contradiction  # something is blamed unless the formula itself is false


def test_blame_negation_disjunction_and_equivalence():
    comp = parse_composition("NOT C1\nC2 OR C3\nC4 IFF C1", IDS)
    decision = decide(comp, {"C1": True, "C2": False, "C3": False, "C4": False})
    assert decision.verdict == "unsat"
    assert {v.id: v.value for v in decision.violated} == {"C1": True, "C2": False, "C3": False, "C4": False}
    assert decision.falsified_parts == ["NOT C1", "C2 OR C3", "C4 IFF C1"]
    sat = decide(comp, {"C1": False, "C2": True, "C3": False, "C4": False})
    assert sat.verdict == "sat" and sat.violated == [] and set(sat.core) == {"C1", "C2", "C4"}


def test_results_for_unknown_constraints_are_refused():
    with pytest.raises(ValueError, match="C9"):
        decide(parse_composition("C1", IDS), {"C9": True})


def test_decide_is_safe_from_many_threads():
    # Z3's shared context fails with 'unreachable' under concurrent use unless calls are serialised.
    from concurrent.futures import ThreadPoolExecutor

    composition = parse_composition("C1 AND (C2 OR NOT C3) IMPLIES C4", ["C1", "C2", "C3", "C4"])
    cases = [{"C1": True, "C2": bool(i % 2), "C3": bool(i % 3), "C4": bool(i % 5)} for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(lambda values: decide(composition, values).verdict, cases))
    expected = ["sat" if (not (v["C2"] or not v["C3"])) or v["C4"] else "unsat" for v in cases]
    assert verdicts == expected


# -- feedback a writer can act on -----------------------------------------------------------------------

from autonesy.agents.verify.explanation import explain  # noqa: E402
from autonesy.tools.verify.solver import contradiction  # noqa: E402

THREE = ["C1", "C2", "C3"]
ATOMS = st.sampled_from([Var(1), Var(2), Var(3)])
FORMULAS = st.recursive(
    ATOMS,
    lambda inner: st.one_of(
        inner.map(lambda a: Op("not", (a,))),
        st.tuples(st.sampled_from(["and", "or", "implies", "iff", "xor"]), inner, inner).map(lambda t: Op(t[0], t[1:])),
    ),
    max_leaves=5,
)
VALUES = st.fixed_dictionaries({cid: st.booleans() for cid in THREE})


def _forced_false(text, literals):
    """Brute force: the literals (name → value) make the formula false whatever the other constraints are."""
    expr = parse_composition(text, THREE).expr
    free = [c for c in THREE if c not in literals]
    for filling in itertools.product((True, False), repeat=len(free)):
        values = {**literals, **dict(zip(free, filling))}
        if evaluate(expr, {i: values[c] for i, c in enumerate(THREE, start=1)}):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(st.lists(FORMULAS, min_size=1, max_size=3), VALUES)
def test_the_fix_works_and_a_minimal_reason_is_shown_only_when_it_is_the_only_one(parts, values):
    text = "\n".join(render(p, THREE) for p in parts)
    composition = parse_composition(text, THREE)
    if contradiction(composition):
        return
    decision = decide(composition, values)
    if decision.verdict != "unsat":
        return
    fixed = {**values, **{item.id: item.should_be for item in decision.to_fix}}
    assert decide(composition, fixed).verdict == "sat"  # following "To follow the instruction, change" works
    minimal = [
        set(s)
        for k in range(1, 4)
        for s in itertools.combinations(THREE, k)
        if _forced_false(text, {c: values[c] for c in s})
        and not any(_forced_false(text, {c: values[c] for c in s if c != d}) for d in s)
    ]
    assert decision.core_unique == (len(minimal) == 1)
    assert set(decision.core) in minimal
    for alternative in decision.alternatives:  # XOR / IFF: changing any one of them is enough
        part = parse_composition(alternative.requirement, THREE)
        for name in alternative.ids:
            flipped = {**values, name: not values[name]}
            assert decide(part, flipped).verdict == "sat"


def test_an_xor_of_two_present_keywords_asks_to_drop_one_not_both():
    constraints = [
        {"id": "C1", "summary": 'The response contains the word "cat".'},
        {"id": "C2", "summary": 'The response contains the word "dog".'},
        {"id": "C3", "summary": "The response has a title."},
    ]
    decision = decide(parse_composition("C1 XOR C2\nC3", THREE), {"C1": True, "C2": True, "C3": True})
    text = explain(decision, constraints, {})
    assert "exactly one of them must hold, so change one of them (not all)" in text
    assert "requires that it does not" not in text
    assert len(decision.to_fix) == 1


def test_three_independent_failures_have_no_single_minimal_reason():
    constraints = [{"id": c, "summary": f"Constraint {c}."} for c in THREE]
    many = decide(parse_composition("C1\nC2\nC3", THREE), {"C1": False, "C2": False, "C3": False})
    one = decide(parse_composition("C1\nC2\nC3", THREE), {"C1": False, "C2": True, "C3": True})
    assert not many.core_unique and "Minimal reason" not in explain(many, constraints, {})
    assert one.core_unique and "Minimal reason (Z3 unsat core): C1 = false." in explain(one, constraints, {})


@pytest.mark.parametrize(
    "text, conflict",
    [
        ("C2 AND NOT C2\nC1", ("C2", "NOT C2")),
        ("C1 IMPLIES C2\nC1\nNOT C2\nC3", ("C1 IMPLIES C2", "C1", "NOT C2")),
        ("C1 XOR C2\nC1 IFF C2", ("C1 XOR C2", "C1 IFF C2")),
        ("C1 XOR C2\nC3", ()),
    ],
)
def test_contradictions_are_found_before_any_response(text, conflict):
    assert contradiction(parse_composition(text, THREE)) == conflict
