"""The ground-truth model counts that `tasks` lists are counted once and then read from the disk cache."""

import json

import pytest

import autonesy.tools.counting as counting
from autonesy.tasks.registry import get_task
from autonesy.tasks.summary import ground_truth_count, task_summary
from autonesy.tools.cnf import CNF


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    return tmp_path / "counts"


def refuse_counting(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("counted although the count is cached")

    monkeypatch.setattr(counting, "count_models", fail)


@pytest.mark.parametrize("name", ["sushi", "kand-logic-2", "bdd-oia"])
def test_a_cached_count_equals_a_fresh_count(name, cache, monkeypatch):
    truth = get_task(name).ground_truth
    fresh = counting.count_models(truth)
    first = ground_truth_count(truth)
    assert first["model_count"] == fresh.value  # which exact route answers first is a race: not compared
    assert set(first) == {"model_count", "count_method"} and first["count_method"] != "approxmc"
    assert len(list(cache.glob("*.json"))) == 1
    refuse_counting(monkeypatch)
    assert ground_truth_count(truth) == first
    assert task_summary(get_task(name))["model_count"] == fresh.value


def test_formulas_that_differ_do_not_share_an_entry(cache):
    a = CNF(3, ((1, 2), (-3,)))
    b = CNF(3, ((1, 2), (3,)))
    c = CNF(4, ((1, 2), (-3,)))  # the same clauses over one more (free) task variable
    counts = [ground_truth_count(f)["model_count"] for f in (a, b, c)]
    assert counts == [3, 3, 6]
    assert len(list(cache.glob("*.json"))) == 3


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"model_count": "many", "count_method": "sdd"}'])
def test_a_damaged_entry_is_counted_again(damage, cache, monkeypatch):
    formula = CNF(2, ((1, 2),))
    assert ground_truth_count(formula)["model_count"] == 3
    (entry,) = cache.glob("*.json")
    entry.write_text(damage)
    assert ground_truth_count(formula)["model_count"] == 3
    refuse_counting(monkeypatch)  # the recount was written back whole: read now, not counted
    assert ground_truth_count(formula)["model_count"] == 3


def test_approximate_counts_are_not_kept(cache, monkeypatch):
    approximate = counting.ModelCount(1000, "approxmc", False, 0.1)
    monkeypatch.setattr(counting, "count_models", lambda cnf: approximate)
    assert ground_truth_count(CNF(2, ((1,),))) == {"model_count": 1000, "count_method": "approxmc"}
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_an_unwritable_cache_still_counts(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(blocker))
    assert ground_truth_count(CNF(2, ((1, 2),)))["model_count"] == 3


def test_concurrent_writers_leave_one_whole_entry(cache, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    formula = CNF(4, ((1, 2, 3), (-1, -4)))
    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(lambda _: ground_truth_count(formula)["model_count"], range(32)))
    assert set(counts) == {counting.count_models(formula).value}
    (entry,) = cache.glob("*")  # no temporary file is left behind
    json.loads(entry.read_text())  # whole JSON, not two writes interleaved
    refuse_counting(monkeypatch)
    assert ground_truth_count(formula)["model_count"] == counts[0]  # and trusted when read back
