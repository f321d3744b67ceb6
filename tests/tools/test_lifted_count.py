"""Lifted counting over interchangeable blocks: against brute force on random rosters, against
closed forms where brute force cannot go, and where it must refuse."""

import itertools
import math

import pytest
from bruteforce import satisfies
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.lifted_count import NotLiftable, count_by_lifting
from autonesy.tools.literal_count import LiteralCount, with_literal_counts
from autonesy.tools.onehot_count import StateBudgetExceeded


def holds(assignment: dict[int, bool], count: LiteralCount) -> bool:
    """The count read from its definition, guards included."""
    true = sum(assignment[abs(lit)] == (lit > 0) for lit in count.literals)
    value = true % count.modulus if count.modulus else true
    return value in count.allowed and all(
        value in allowed for g, allowed in count.guards if assignment[abs(g)] == (g > 0)
    )


def brute_force(n: int, num_vars: int, clauses, counts) -> int:
    """Task assignments (variables 1..n) that some assignment of n+1..num_vars extends to satisfy every
    clause and count."""
    found = set()
    for values in itertools.product((False, True), repeat=num_vars):
        assignment = {i + 1: v for i, v in enumerate(values)}
        if satisfies(clauses, assignment) and all(holds(assignment, c) for c in counts):
            found.add(values[:n])
    return len(found)


@st.composite
def rosters(draw):
    """Copies of one or two block templates (a few task variables, maybe an auxiliary, random clauses
    among them), counted position by position across the copies with a template's own sign and
    multiplicity (so copies of a template are interchangeable), maybe one count over arbitrary task
    literals (which breaks that), and maybe a guarded count whose guards are an exactly-one group of
    auxiliaries."""
    templates = []
    for _ in range(draw(st.integers(1, 2))):
        width = draw(st.integers(1, 3))
        aux = draw(st.integers(0, 1))
        local = st.integers(0, width + aux - 1).flatmap(lambda v: st.sampled_from((v + 1, -(v + 1))))
        clauses = draw(st.lists(st.lists(local, min_size=1, max_size=3), max_size=3))
        copies = draw(st.integers(1, 3))
        templates.append((width, aux, clauses, copies))
    n = sum(width * copies for width, _, _, copies in templates)
    if n > 9:
        templates = templates[:1]
        width, aux, clauses, copies = templates[0]
        templates[0] = (width, aux, clauses, min(copies, 9 // width))
        n = sum(width * copies for width, _, _, copies in templates)
    next_task, next_aux = 1, n + 1
    blocks = []  # per block: its template index and local variable -> global variable
    for index, (width, aux, _, copies) in enumerate(templates):
        for _ in range(copies):
            names = list(range(next_task, next_task + width)) + list(range(next_aux, next_aux + aux))
            next_task, next_aux = next_task + width, next_aux + aux
            blocks.append((index, names))
    clauses = []
    for index, names in blocks:
        for clause in templates[index][2]:
            clauses.append(tuple(names[abs(lit) - 1] * (1 if lit > 0 else -1) for lit in clause))
    counts = []
    for position in range(max(width for width, _, _, _ in templates)):
        how = [
            (draw(st.integers(0, 2)), draw(st.booleans())) for _ in templates
        ]  # per template: how often its variable is listed, and negated or not
        literals = []
        for index, names in blocks:
            times, negated = how[index]
            if position < templates[index][0]:
                literals += [-names[position] if negated else names[position]] * times
        if not literals:
            continue
        modulus = draw(st.none() | st.integers(2, 3))
        top = modulus - 1 if modulus else len(literals)
        counts.append(
            LiteralCount(tuple(literals), tuple(draw(st.lists(st.integers(0, top), max_size=top + 1))), modulus)
        )
    if draw(st.booleans()):
        task = st.integers(1, n).flatmap(lambda v: st.sampled_from((v, -v)))
        literals = draw(st.lists(task, min_size=1, max_size=4))
        counts.append(LiteralCount(tuple(literals), tuple(draw(st.lists(st.integers(0, len(literals)), max_size=3)))))
    if draw(st.booleans()) and next_aux <= 11:
        group = list(range(next_aux, next_aux + draw(st.integers(1, 3))))
        next_aux += len(group)
        clauses.append(tuple(group))
        clauses.extend((-a, -b) for a, b in itertools.combinations(group, 2))
        literals = tuple(v for v in range(1, n + 1) if draw(st.booleans())) or (1,)
        top = len(literals)
        guards = tuple((g, tuple(draw(st.lists(st.integers(0, top), max_size=top + 1)))) for g in group)
        counts.append(LiteralCount(literals, tuple(range(top + 1)), None, guards))
    return n, next_aux - 1, clauses, counts


@settings(max_examples=250, deadline=None)
@given(rosters())
def test_a_lifted_count_is_the_brute_force_count(case):
    n, num_vars, clauses, counts = case
    cnf = with_literal_counts(CNF(n, tuple(clauses), num_vars), counts)
    expected = brute_force(n, num_vars, clauses, counts)
    if not counts:
        with pytest.raises(NotLiftable, match="no declared"):
            count_by_lifting(cnf)
        return
    assert count_by_lifting(cnf) == expected


def test_copies_of_a_block_are_one_class_and_counted_by_how_many_are_in_each_state():
    """n people, m slots; each person in at most one slot (its block), each slot exactly one person
    (a count across the people): the injections of m slots into n people, n!/(n-m)!, far past brute force."""
    for people, slots in ((8, 8), (10, 6), (20, 20)):
        var = {(p, s): p * slots + s + 1 for p in range(people) for s in range(slots)}
        clauses = [(-var[p, a], -var[p, b]) for p in range(people) for a, b in itertools.combinations(range(slots), 2)]
        counts = [LiteralCount(tuple(var[p, s] for p in range(people)), (1,)) for s in range(slots)]
        cnf = with_literal_counts(CNF(people * slots, tuple(clauses)), counts)
        assert count_by_lifting(cnf, time_limit_s=60) == math.factorial(people) // math.factorial(people - slots)


def crew(people: list[tuple[int, int]], flights: list[tuple[int, int]], working: tuple[int, ...]):
    """DCP-Bench's crew in small: person p (a row of attributes) works flight f or not; flight f needs
    exactly ``staff`` people and at least ``speakers`` of attribute 1; a flight worked, two off; and an
    integer "how many people work at all", one-hot over auxiliaries, equal to a guarded count of one
    auxiliary per person defined (all its 2^F rows, as a table encoder writes it) as "works some flight",
    the integer's values ``working``."""
    n, flights_n = len(people) * len(flights), len(flights)

    def var(f: int, p: int) -> int:
        return f * len(people) + p + 1

    works = {p: n + 1 + p for p in range(len(people))}
    level = {v: n + len(people) + i for i, v in enumerate(working, start=1)}  # the integer's one-hot values
    clauses = []
    for p in range(len(people)):
        for f in range(flights_n - 2):
            window = [var(f + d, p) for d in range(3)]
            clauses.extend((-a, -b) for a, b in itertools.combinations(window, 2))
        for row in itertools.product((False, True), repeat=flights_n):
            # the table's row: these values imply works[p] is their disjunction
            literal = works[p] if any(row) else -works[p]
            clauses.append(tuple(-var(f, p) if v else var(f, p) for f, v in enumerate(row)) + (literal,))
    clauses.append(tuple(level.values()))
    clauses.extend((-a, -b) for a, b in itertools.combinations(level.values(), 2))
    counts = []
    for f, (staff, speakers) in enumerate(flights):
        counts.append(LiteralCount(tuple(var(f, p) for p in range(len(people))), (staff,)))
        speaking = tuple(var(f, p) for p, (attribute, _) in enumerate(people) if attribute)
        counts.append(LiteralCount(speaking, tuple(range(speakers, len(speaking) + 1))))
    everyone = tuple(works.values())
    counts.append(
        LiteralCount(everyone, tuple(range(1, len(people) + 1)), None, tuple((g, (v,)) for v, g in level.items()))
    )
    return n, len(people), flights_n, var, CNF(n, tuple(clauses), n + len(people) + len(working)), counts


@pytest.mark.parametrize("working", [tuple(range(1, 6)), (4,), (3, 5)])
def test_a_small_crew_with_its_worker_count_is_counted_as_the_schedules_read_from_the_rules(working):
    """With every number of workers possible the worker count is implied by the flights' and dropped;
    with 4, or 3 or 5, it is not, and its auxiliaries are counted across the people."""
    people = [(1, 0), (1, 0), (0, 0), (0, 0), (0, 1)]
    flights = [(1, 1), (1, 0), (1, 1), (2, 0)]
    n, persons, flights_n, var, cnf, counts = crew(people, flights, working)
    expected = 0
    for values in itertools.product((0, 1), repeat=n):
        x = {(f, p): values[var(f, p) - 1] for f in range(flights_n) for p in range(persons)}
        if all(
            sum(x[f, p] for p in range(persons)) == staff
            and sum(x[f, p] for p in range(persons) if people[p][0]) >= speakers
            for f, (staff, speakers) in enumerate(flights)
        ) and all(x[f, p] + x[f + 1, p] + x[f + 2, p] <= 1 for f in range(flights_n - 2) for p in range(persons)):
            expected += sum(any(x[f, p] for f in range(flights_n)) for p in range(persons)) in working
    assert expected > 0
    assert count_by_lifting(with_literal_counts(cnf, counts)) == expected


def test_a_formula_without_declared_counts_or_with_a_huge_block_is_refused():
    with pytest.raises(NotLiftable, match="no declared"):
        count_by_lifting(CNF(2, ((1, 2),)))
    chain = tuple((i, i + 1) for i in range(1, 30))  # one block of 30 task variables
    with pytest.raises(NotLiftable, match="block has 30"):
        count_by_lifting(with_literal_counts(CNF(30, chain), [LiteralCount(tuple(range(1, 31)), (15,))]))


def test_a_task_variable_guard_is_refused_and_a_small_state_budget_gives_up():
    guarded = LiteralCount((1, 2), (0, 1, 2), None, ((3, (1,)),))
    with pytest.raises(NotLiftable, match="guard"):
        count_by_lifting(with_literal_counts(CNF(3, ()), [guarded]))
    var = {(p, s): p * 6 + s + 1 for p in range(6) for s in range(6)}
    clauses = tuple((-var[p, a], -var[p, b]) for p in range(6) for a, b in itertools.combinations(range(6), 2))
    spread = [LiteralCount(tuple(var[p, s] for s in range(6)), (0, 1)) for p in range(6)]  # blocks one per slot now
    counts = [LiteralCount(tuple(var[p, s] for p in range(6)), (1, 2)) for s in range(6)] + spread
    with pytest.raises(StateBudgetExceeded):
        count_by_lifting(with_literal_counts(CNF(36, clauses), counts), max_states=3)


def test_auto_counts_a_roster_by_lifting_when_the_other_routes_fail(monkeypatch):
    import autonesy.tools.counting as counting

    for route in (
        "_ganak_count",
        "_sdd_routes",
        "count_by_frontier",
        "count_by_orbits",
        "count_one_hot",
        "count_by_recovery",
    ):
        monkeypatch.setattr(counting, route, _broken)
    monkeypatch.setattr(counting, "AUTO_RACE_ENUMERATION_CAP", 5)
    monkeypatch.setattr(counting, "AUTO_TABLES_MAX_S", 0.0)
    var = {(p, s): p * 6 + s + 1 for p in range(7) for s in range(6)}
    clauses = tuple((-var[p, a], -var[p, b]) for p in range(7) for a, b in itertools.combinations(range(6), 2))
    counts = [LiteralCount(tuple(var[p, s] for p in range(7)), (1,)) for s in range(6)]
    result = counting.count_models(with_literal_counts(CNF(42, clauses), counts), "auto", enumeration_cap=3)
    assert result.value == math.factorial(7) and result.method == "lifted" and result.exact  # 7!/1! injections


def _broken(*args):
    raise RuntimeError("broken on purpose")


def test_many_guarded_counts_whose_guards_allow_every_value_leave_the_variables_free():
    """300 guarded counts over pairs of 100 task variables, each guard group an exactly-one of four
    auxiliaries allowing 0, 1, 2 and 0: every pair's total is allowed by some guard, so 2^100."""
    clauses, counts, top = [], [], 100
    for i in range(300):
        group = list(range(top + 1, top + 5))
        top += 4
        clauses.append(tuple(group))
        clauses.extend((-a, -b) for a, b in itertools.combinations(group, 2))
        guards = tuple((g, (j % 3,)) for j, g in enumerate(group))
        counts.append(LiteralCount((i % 100 + 1, (i + 1) % 100 + 1), (0, 1, 2), None, guards))
    assert count_by_lifting(with_literal_counts(CNF(100, tuple(clauses), top), counts)) == 2**100


def test_blocks_with_too_many_models_together_are_refused(monkeypatch):
    import autonesy.tools.lifted_count as lifted

    monkeypatch.setattr(lifted, "MAX_MODELS", 100)
    blocks = [tuple(range(4 * b + 1, 4 * b + 5)) for b in range(10)]  # 15 models each, 150 together
    cnf = with_literal_counts(CNF(40, tuple(blocks)), [LiteralCount(tuple(b[0] for b in blocks), (3,))])
    with pytest.raises(NotLiftable, match="models together"):
        count_by_lifting(cnf)
