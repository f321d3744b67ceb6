"""Exact counts kept on disk: read back unchanged, marked as read back, and used by the formula metrics."""

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import HealthCheck, given, settings

from autonesy.tools import metrics
from autonesy.tools.cnf import CNF
from autonesy.tools.count_store import stored_count
from autonesy.tools.counting import CountTimedOut
from autonesy.tools.metrics import score_formula


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    return tmp_path / "counts"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cnfs(max_aux=4))
def test_a_stored_count_reads_back_as_the_brute_force_count(cache, cnf):
    first, second = stored_count(cnf), stored_count(cnf)
    assert first.value == second.value == len(projected_models(cnf))
    assert second.exact and second.params["from_cache"] and second.method == first.method


def test_the_metrics_read_the_ground_truth_count_from_disk_in_a_later_run(cache, monkeypatch):
    truth = CNF(5, ((1, 2), (-3, 6), (-6, 4)), 6)
    candidate = CNF(5, ((1,), (4,)))
    cold = score_formula(candidate, truth)
    monkeypatch.setattr(metrics, "_truth_counts", type(metrics._truth_counts)())  # a new process's memory
    warm = score_formula(candidate, truth)
    assert warm.counts["truth"]["params"]["from_cache"] and not cold.counts["truth"]["params"].get("from_cache")
    assert (warm.tp, warm.fp, warm.fn, warm.tn) == (cold.tp, cold.fp, cold.fn, cold.tn)


def test_other_methods_do_not_use_the_disk(cache):
    truth = CNF(3, ((1, 2),))
    score_formula(CNF(3, ((1,),)), truth, "ganak")
    assert not cache.exists()


def test_a_timeout_holds_for_the_same_or_a_shorter_limit_only(cache):
    cnf = CNF(3, ((1, 4), (-4, 2)), 4)
    calls = []

    def times_out(formula):
        calls.append(formula)
        raise CountTimedOut("auto", 30.0, ("ganak (timed out)",))

    with pytest.raises(CountTimedOut):
        stored_count(cnf, times_out, time_limit_s=30.0)
    for limit in (30.0, 5.0):  # remembered: raised again without counting
        with pytest.raises(CountTimedOut) as again:
            stored_count(cnf, times_out, time_limit_s=limit)
        assert again.value.tried == ("ganak (timed out)",)
    assert len(calls) == 1
    assert stored_count(cnf, time_limit_s=60.0).value == len(projected_models(cnf))  # a longer limit counts again
    assert stored_count(cnf, times_out, time_limit_s=5.0).params["from_cache"]  # and the count replaces the timeout


def test_a_timeout_of_one_method_does_not_stop_another(cache):
    cnf = CNF(2, ((1, 2),))

    def times_out(formula):
        raise CountTimedOut("ganak", 10.0)

    with pytest.raises(CountTimedOut):
        stored_count(cnf, times_out, method="ganak", time_limit_s=10.0)
    assert stored_count(cnf, method="auto", time_limit_s=10.0).value == 3


def test_a_timeout_of_older_routes_does_not_hold(cache, monkeypatch):
    """A stronger route may count what timed out before; an exact count stays whatever the routes."""
    from autonesy.tools import counting

    timing_out, exact = CNF(2, ((1, 2),)), CNF(2, ((1,),))

    def times_out(formula):
        raise CountTimedOut("auto", 10.0)

    with pytest.raises(CountTimedOut):
        stored_count(timing_out, times_out, time_limit_s=10.0)
    assert stored_count(exact, time_limit_s=10.0).value == 2
    monkeypatch.setattr(counting, "ROUTES_VERSION", counting.ROUTES_VERSION + 1)
    assert stored_count(timing_out, time_limit_s=10.0).value == 3  # counted again, not the old timeout
    assert stored_count(exact, times_out, time_limit_s=10.0).params["from_cache"]


@pytest.mark.parametrize(
    "text", ['{"model_count": "x"', "[1, 2]", '{"timed_out": {"auto": {"limit": "soon"}}}', "null"]
)
def test_a_damaged_entry_is_counted_again(cache, text):
    cnf = CNF(2, ((1, 2),))
    stored_count(cnf)
    for path in cache.iterdir():
        path.write_text(text)
    again = stored_count(cnf, time_limit_s=1.0)
    assert again.value == 3 and not again.params.get("from_cache")
