"""Formula metrics against brute-force sets of projected models, degenerate cases included."""

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import given, settings
from hypothesis import strategies as st

from autonesy.tools.cnf import CNF
from autonesy.tools.metrics import confusion_scores, relation_of, score_formula, syntax_error_rate


@pytest.fixture(autouse=True)
def _own_count_cache(tmp_path, monkeypatch):
    """Exact ground-truth counts go to a disk cache; keep the tests' out of the user's."""
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))


def _pair(n_max=6):
    return st.integers(1, n_max).flatmap(
        lambda n: st.tuples(cnfs(min_task_vars=n, max_task_vars=n), cnfs(min_task_vars=n, max_task_vars=n))
    )


@settings(max_examples=60, deadline=None)
@given(_pair(), st.sampled_from(["auto", "enumeration", "sdd", "ganak"]))
def test_confusion_counts_match_brute_force(pair, method):
    candidate, truth = pair
    got = score_formula(candidate, truth, method)
    cand, true = projected_models(candidate), projected_models(truth)
    total = 2**truth.num_task_vars
    assert (got.tp, got.fp, got.fn) == (len(cand & true), len(cand - true), len(true - cand))
    assert got.tn == total - len(cand | true)
    expected_relation = (
        "equal" if cand == true else "strict" if cand < true else "permissive" if cand > true else "incomparable"
    )
    assert got.relation == expected_relation
    assert got.mc_ratio == pytest.approx(len(cand) / max(len(true), 1))
    if cand and true:
        precision, recall = len(cand & true) / len(cand), len(cand & true) / len(true)
        assert got.precision == pytest.approx(precision) and got.recall == pytest.approx(recall)
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        assert got.f1 == pytest.approx(f1)
    assert got.exact


def test_unsatisfiable_candidate():
    got = score_formula(CNF(2, ((1,), (-1,))), CNF(2, ((1, 2),)))
    assert (got.tp, got.fp, got.fn, got.tn) == (0, 0, 3, 1)
    assert (got.precision, got.recall, got.f1) == (0.0, 0.0, 0.0)
    assert got.relation == "strict" and got.mc_ratio == 0.0


def test_valid_candidate():
    got = score_formula(CNF(2, ()), CNF(2, ((1,), (2,))))
    assert (got.tp, got.fp, got.fn, got.tn) == (1, 3, 0, 0)
    assert got.recall == 1.0 and got.precision == 0.25 and got.relation == "permissive"
    assert got.mc_ratio == 4.0


def test_both_unsatisfiable_are_equal():
    empty = CNF(1, ((1,), (-1,)))
    got = score_formula(empty, empty)
    assert got.relation == "equal" and got.f1 == 1.0 and got.mc_ratio == 0.0


def test_auxiliaries_do_not_leak_into_counts():
    truth = CNF(2, ((1, 3), (-3, 2)), 3)  # ∃a. (x1 ∨ a) ∧ (¬a ∨ x2)  ≡  x1 ∨ x2
    candidate = CNF(2, ((1, 2),))
    got = score_formula(candidate, truth)
    assert got.relation == "equal" and got.f1 == 1.0


def test_different_task_variable_counts_are_rejected():
    with pytest.raises(ValueError, match="task variables"):
        score_formula(CNF(2, ()), CNF(3, ()))


def test_relation_and_scores_tables():
    assert relation_of(0, 0) == "equal" and relation_of(0, 1) == "strict"
    assert relation_of(2, 0) == "permissive" and relation_of(1, 1) == "incomparable"
    assert confusion_scores(0, 0, 0, 4) == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_syntax_error_rate():
    assert syntax_error_rate([True, False, False, True]) == 0.5
    with pytest.raises(ValueError):
        syntax_error_rate([])


def _subset_pair():
    """A random formula and a random sub-list of its clauses (either may play the candidate)."""
    return cnfs().flatmap(
        lambda cnf: st.lists(st.booleans(), min_size=len(cnf.clauses), max_size=len(cnf.clauses)).map(
            lambda keep: (cnf, cnf.with_clauses([c for c, k in zip(cnf.clauses, keep) if k]))
        )
    )


@settings(max_examples=40, deadline=None)
@given(_subset_pair(), st.booleans(), st.sampled_from(["auto", "ganak"]))
def test_clause_subset_shortcut_matches_brute_force(pair, swap, method):
    whole, part = pair
    candidate, truth = (part, whole) if swap else (whole, part)
    got = score_formula(candidate, truth, method)
    cand, true = projected_models(candidate), projected_models(truth)
    assert (got.tp, got.fp, got.fn) == (len(cand & true), len(cand - true), len(true - cand))
    assert got.counts["both"]["method"] in ("subset", "equivalence")  # a subset may also be proved equivalent


def test_enumerated_models_are_checked_against_a_formula_with_auxiliaries():
    truth = CNF(3, ((1, 4), (-4, 2), (3, -1)), 4)  # ∃a. (x1 ∨ a) ∧ (¬a ∨ x2) ∧ (x3 ∨ ¬x1)
    candidate = CNF(3, ((2,),))
    got = score_formula(candidate, truth)
    cand, true = projected_models(candidate), projected_models(truth)
    assert got.counts["both"]["method"] == "model-check"
    assert (got.tp, got.fp, got.fn) == (len(cand & true), len(cand - true), len(true - cand))


def test_ground_truth_is_counted_once_per_cnf(monkeypatch):
    import autonesy.tools.metrics as metrics

    counted = []
    real = metrics.count_models
    monkeypatch.setattr(metrics, "count_models", lambda cnf, *a, **k: counted.append(cnf) or real(cnf, *a, **k))
    truth = CNF(4, ((1, 2), (-3, 4), (1, -4)))
    for candidate in (CNF(4, ((1,),)), CNF(4, ((2, 3),)), CNF(4, ((-1, 2),))):
        score_formula(candidate, truth, "ganak", time_limit_s=17.0)
    assert counted.count(truth) == 1


def test_a_count_that_runs_out_of_time_says_so(monkeypatch):
    """The pigeonhole of 10: hard for every route but the one-hot CSP's (its 0 at once), kept out of this one."""
    import time

    from pysat.examples.genhard import PHP

    import autonesy.tools.counting as counting
    from autonesy.tools.counting import CountTimedOut

    monkeypatch.setattr(counting, "count_one_hot", lambda *args, **kwargs: time.sleep(60))

    hard = PHP(10)
    candidate = CNF(hard.nv, tuple(tuple(c) for c in hard.clauses))
    with pytest.raises(CountTimedOut, match="timed out"):
        score_formula(candidate, CNF(hard.nv, ()), "auto", time_limit_s=0.5)


def _timing_out(monkeypatch, tmp_path):
    """count_models that always runs out of time, and a private disk cache of ground-truth counts."""
    from collections import OrderedDict

    import autonesy.tools.metrics as metrics
    from autonesy.tools.counting import CountTimedOut

    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(metrics, "_truth_counts", OrderedDict())
    calls = []

    def count_models(cnf, *args, **kwargs):
        calls.append(cnf)
        raise CountTimedOut("auto", kwargs.get("time_limit_s", 0.0))

    monkeypatch.setattr(metrics, "count_models", count_models)
    return calls


@pytest.mark.parametrize(
    "candidate",
    [
        CNF(3, ((1, 4), (-4, 2), (3,)), 4),  # the ground truth itself
        CNF(3, ((3,), (1, 7), (-7, 2)), 9),  # its clauses reordered, its auxiliary renamed
    ],
)
def test_an_equivalent_answer_scores_one_when_the_ground_truth_cannot_be_counted(monkeypatch, tmp_path, candidate):
    calls = _timing_out(monkeypatch, tmp_path)
    truth = CNF(3, ((1, 4), (-4, 2), (3,)), 4)
    got = score_formula(candidate, truth, time_limit_s=1.0)
    assert (got.f1, got.precision, got.recall, got.relation, got.fp, got.fn) == (1.0, 1.0, 1.0, "equal", 0, 0)
    assert got.tp is None and got.truth_count is None and got.count_method == "equivalence"
    score_formula(candidate, truth, time_limit_s=1.0)
    import autonesy.tools.metrics as metrics

    metrics._truth_counts.clear()  # a new process: only the disk remembers
    score_formula(candidate, truth, time_limit_s=1.0)
    assert calls == [truth]  # the timeout is remembered: the ground truth is tried once


def test_an_unproved_answer_still_reports_the_timeout(monkeypatch, tmp_path):
    from autonesy.tools.counting import CountTimedOut

    _timing_out(monkeypatch, tmp_path)
    with pytest.raises(CountTimedOut):
        score_formula(CNF(3, ((1,),)), CNF(3, ((1, 4), (-4, 2)), 4), time_limit_s=1.0)


@settings(max_examples=60, deadline=None)
@given(_pair(n_max=5))
def test_entailed_auxiliary_free_side_matches_brute_force(pair):
    """Overlaps through the entailment route (one side without auxiliaries) equal brute force."""
    candidate, truth = pair
    n = truth.num_task_vars
    candidate = CNF(n, tuple(c for c in candidate.clauses if all(abs(lit) <= n for lit in c)), n)
    got = score_formula(candidate, truth, "ganak")
    cand, true = projected_models(candidate), projected_models(truth)
    assert (got.tp, got.fp, got.fn) == (len(cand & true), len(cand - true), len(true - cand))
