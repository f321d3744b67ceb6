"""Ground-truth counts remembered on disk: counts and timeouts come back as they were written."""

from autonesy.tools import truth_counts
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import CountTimedOut, ModelCount, count_models

CNF_A = CNF(3, ((1, 4), (-4, 2)), 4)


def test_a_slow_count_comes_back(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    real = count_models(CNF_A, "ganak")
    slow = ModelCount(real.value, real.method, real.exact, 5.0, {"note": "x"})
    truth_counts.remember(CNF_A, "s", slow)
    assert truth_counts.recall(CNF_A, "s", 60.0) == slow
    assert truth_counts.recall(CNF_A, "other settings", 60.0) is None
    assert truth_counts.recall(CNF(3, ((1, 4), (-4, 3)), 4), "s", 60.0) is None


def test_a_quick_count_is_not_written(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    truth_counts.remember(CNF_A, "s", ModelCount(5, "enumeration", True, 0.01))
    assert truth_counts.recall(CNF_A, "s", 60.0) is None


def test_a_timeout_holds_for_the_same_or_a_shorter_limit_only(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    truth_counts.remember(CNF_A, "s", CountTimedOut("auto", 30.0, ("ganak (timed out)",)))
    again = truth_counts.recall(CNF_A, "s", 30.0)
    assert isinstance(again, CountTimedOut) and again.tried == ("ganak (timed out)",)
    assert truth_counts.recall(CNF_A, "s", 60.0) is None


def test_a_damaged_file_is_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    truth_counts.remember(CNF_A, "s", ModelCount(5, "ganak", True, 3.0))
    for path in (tmp_path / "truth_counts").iterdir():
        path.write_text('{"value": "x"')
    assert truth_counts.recall(CNF_A, "s", 60.0) is None
