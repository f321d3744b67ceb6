"""Exact counts kept on disk: read back unchanged, marked as read back, and used by the formula metrics."""

import os

import pytest
from bruteforce import cnfs, projected_models
from hypothesis import HealthCheck, given, settings
from unprivileged import NESTED_RUN, run_file_as_user

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


# ------------------------------------------------------------------ entries nobody but this user wrote

TRUTH = CNF(7, ((1, 2), (-1, 3), (4, 5, 6)))  # 4 of 8 (x1, x2, x3) settings × 7 of 8 (x4, x5, x6) × 2 (x7): 56
CANDIDATE = CNF(7, ((1,),))  # 64 assignments


def brute_force_score(candidate: CNF, truth: CNF) -> tuple[int, int, int, int]:
    both = projected_models(truth.conjoin(candidate))
    tp, n_candidate, n_truth = len(both), len(projected_models(candidate)), len(projected_models(truth))
    return tp, n_candidate - tp, n_truth - tp, 2**truth.num_task_vars - n_candidate - n_truth + tp


def entry_file(cache, cnf: CNF):
    from autonesy.tools.cache_entries import entry_path
    from autonesy.tools.count_store import _material

    return entry_path(cache, _material(cnf))


def fresh_process(monkeypatch):
    """What a later process remembers: the disk only (no in-memory counts, no warning already given)."""
    from autonesy.tools import cache_entries

    monkeypatch.setattr(metrics, "_truth_counts", type(metrics._truth_counts)())
    monkeypatch.setattr(cache_entries, "_warned", set())


def forged_entries(cache, cnf: CNF) -> dict[str, str]:
    """Entries an attacker who can write the cache folder plants for ``cnf`` (3 models claimed; really 56)."""
    import hashlib
    import hmac
    import json

    from autonesy.tools.cache_entries import key_digest
    from autonesy.tools.count_store import COUNT_CACHE_VERSION, ENTRY_KIND, _material

    digest = key_digest(_material(cnf))
    data = {"model_count": hex(3), "count_method": "sdd", "seconds": 0.1}
    body = json.dumps([ENTRY_KIND, COUNT_CACHE_VERSION, digest, data], sort_keys=True, separators=(",", ":"))
    other_key = hmac.new(b"a colleague's key" * 2, body.encode(), hashlib.sha256).hexdigest()
    envelope = {"kind": ENTRY_KIND, "version": COUNT_CACHE_VERSION, "key": digest, "data": data}
    return {
        "the format before signatures": json.dumps({"model_count": 3, "count_method": "sdd", "seconds": 0.1}),
        "unsigned": json.dumps(envelope),
        "signed with another key": json.dumps({**envelope, "mac": other_key}),
        "a signature copied from nowhere": json.dumps({**envelope, "mac": "0" * 64}),
    }


@pytest.mark.parametrize("kind", ["the format before signatures", "unsigned", "signed with another key", "forged"])
def test_a_forged_ground_truth_count_is_ignored_and_counted_again(cache, monkeypatch, caplog, kind):
    """The attack of issue 50: a planted entry claiming 3 models for a ground truth of 42 is never believed."""
    cache.mkdir(parents=True)
    entries = forged_entries(cache, TRUTH)
    text = entries.get(kind, entries["a signature copied from nowhere"])
    entry_file(cache, TRUTH).write_text(text)
    fresh_process(monkeypatch)
    score = score_formula(CANDIDATE, TRUTH)
    assert (score.tp, score.fp, score.fn, score.tn) == brute_force_score(CANDIDATE, TRUTH)
    assert score.truth_count == 56 and not score.counts["truth"]["params"].get("from_cache")
    warnings = [r.getMessage() for r in caplog.records if "untrusted cache entry" in r.getMessage()]
    assert len(warnings) == 1 and entry_file(cache, TRUTH).name in warnings[0]
    fresh_process(monkeypatch)  # the recount replaced the forged entry by a signed one: believed from now on
    assert score_formula(CANDIDATE, TRUTH).counts["truth"]["params"]["from_cache"]


def test_an_entry_of_another_formula_renamed_to_this_one_is_not_believed(cache, monkeypatch, caplog):
    """A genuine, signed entry answers its own formula only: moved under another formula's name, it is refused."""
    other = CNF(7, ((1,), (2,), (3,), (4,), (5,), (6,)))  # 2 models
    stored_count(other)
    cache_file = entry_file(cache, other)
    cache_file.rename(entry_file(cache, TRUTH))
    fresh_process(monkeypatch)
    assert stored_count(TRUTH).value == 56
    assert any("another question" in r.getMessage() for r in caplog.records)


def test_a_count_above_two_to_the_n_is_not_believed_even_when_signed(cache, monkeypatch, caplog):
    from autonesy.tools.cache_entries import write_entry
    from autonesy.tools.count_store import COUNT_CACHE_VERSION, ENTRY_KIND, _material

    write_entry(
        cache, ENTRY_KIND, COUNT_CACHE_VERSION, _material(TRUTH), {"model_count": hex(2**7 + 1), "count_method": "sdd"}
    )
    fresh_process(monkeypatch)
    assert stored_count(TRUTH).value == 56
    assert any("not a count of 7 variables" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "huge"])
def test_an_entry_that_is_not_a_small_regular_file_is_ignored_at_once(cache, monkeypatch, caplog, kind):
    """A FIFO in place of the entry must not hang `score`, a link to /dev/zero must not fill the memory."""
    import os
    import time

    cache.mkdir(parents=True)
    path = entry_file(cache, TRUTH)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b" " * (5 << 20))  # past the entry cap
    fresh_process(monkeypatch)
    start = time.perf_counter()
    score = score_formula(CANDIDATE, TRUTH)
    assert time.perf_counter() - start < 20
    assert (score.tp, score.fp, score.fn, score.tn) == brute_force_score(CANDIDATE, TRUTH)
    assert sum("untrusted cache entry" in r.getMessage() for r in caplog.records) == 1


def test_a_count_of_any_size_round_trips(cache, monkeypatch):
    """2^20,000 has 6,021 decimal digits, past the 4,300 Python writes or reads: stored in hexadecimal."""
    wide = CNF(20_001, ((1, 2),))  # 3 settings of (x1, x2) × 2^19,999
    first = stored_count(wide)
    fresh_process(monkeypatch)
    second = stored_count(wide)
    assert first.value == second.value == 3 * 2**19_999 and second.params["from_cache"]


def test_a_key_file_others_can_read_is_not_used(tmp_path, monkeypatch, caplog):
    """The key that signs entries is this user's secret: a world-readable one signs nothing that is believed later."""
    from autonesy.tools import cache_entries

    key = tmp_path / "config" / "cache.key"
    key.parent.mkdir()
    key.write_bytes(b"k" * 32)
    key.chmod(0o644)
    monkeypatch.setattr(cache_entries, "key_path", lambda: key)
    monkeypatch.setattr(cache_entries, "_key", None)
    assert cache_entries.cache_key() != b"k" * 32
    assert any("not a private file" in r.getMessage() for r in caplog.records)


@pytest.mark.skipif(bool(os.environ.get(NESTED_RUN)), reason="the nested run itself")
def test_the_forged_entries_are_refused_for_an_unprivileged_user_too(tmp_path):
    done = run_file_as_user(__file__, tmp_path, "unprivileged_user")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_a_signed_count_that_contradicts_the_other_counts_is_counted_again(cache, monkeypatch, caplog):
    """Beyond the signature (a bug, a stolen key): a stored truth count of 3 is below the 28 models the truth shares
    with x1 (x1, x3 true, x2 free: 2 × 7 × 2), so it cannot be right; the score counts the truth again."""
    from autonesy.tools.cache_entries import write_entry
    from autonesy.tools.count_store import COUNT_CACHE_VERSION, ENTRY_KIND, _material

    write_entry(
        cache, ENTRY_KIND, COUNT_CACHE_VERSION, _material(TRUTH), {"model_count": hex(3), "count_method": "sdd"}
    )
    fresh_process(monkeypatch)
    score = score_formula(CANDIDATE, TRUTH)
    assert (score.tp, score.fp, score.fn, score.tn) == brute_force_score(CANDIDATE, TRUTH) == (28, 36, 28, 36)
    assert any("contradicts" in r.getMessage() for r in caplog.records)
    fresh_process(monkeypatch)
    assert stored_count(TRUTH).value == 56  # the entry was replaced


def test_score_on_the_command_line_reports_the_true_count_beside_a_forged_entry(cache, tmp_path, monkeypatch):
    """The reproduction of issue 50 item 1: `score` with a planted entry (3 models) for the example task's ground truth."""
    import json
    from pathlib import Path

    from typer.testing import CliRunner

    import autonesy.tasks.examples as examples
    from autonesy.graph.cli import app
    from autonesy.tasks.registry import load_task

    example = str(Path(examples.__file__).parent / "pizza.toml")
    truth = load_task(example).ground_truth
    cache.mkdir(parents=True)
    entry_file(cache, truth).write_text(forged_entries(cache, truth)["the format before signatures"])
    answer = tmp_path / "answer.cnf"
    answer.write_text("p cnf 9 1\n1 0\n")  # a thin base
    fresh_process(monkeypatch)
    result = CliRunner().invoke(app, ["score", str(answer), "--task", example, "--format", "dimacs", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    candidate = CNF(9, ((1,),))
    assert (data["tp"], data["fp"], data["fn"], data["tn"]) == brute_force_score(candidate, truth)
    assert data["truth_count"] == len(projected_models(truth)) and data["exact"]
