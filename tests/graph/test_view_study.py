"""The viewer's study pages without a browser: oracle-feedback rounds as rounds (counterexamples, formula diff), the
repair diff over formulas only, accepted always with relation and F1, overlap circles sized by the counts, the folder
page's runs list with metrics, two sweeps side by side, F1 error bars inside [0, 1]."""

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from study_dirs import make_oracle_attempt, make_perfect_copy
from view_dirs import SECRET, SECRET_NAME, make_sweep

from autonesy.graph.report import frame, plot_data
from autonesy.graph.results import read_results
from autonesy.graph.view.pages import _lens_area, overlap_circles
from autonesy.graph.view.server import create_app


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_NAME, SECRET)
        sweep = make_sweep(tmp / "folder" / "sweep")
    oracle = make_oracle_attempt(tmp / "folder" / "oracle")
    perfect = make_perfect_copy(sweep, tmp / "perfect")
    return tmp / "folder", sweep, oracle, perfect


def client_for(*paths):
    return TestClient(create_app(list(paths)), base_url="http://127.0.0.1")


def test_semantic_rounds_are_rounds_with_counterexamples_and_a_formula_diff(dirs):
    _, _, oracle, _ = dirs
    client = client_for(oracle)
    page = client.get("/r/0/").text
    assert "semantic round 1 · 5 counterexamples" in page and "semantic round 2 · 5 counterexamples" in page
    assert "semantic_round {" not in page and "&#34;counterexamples&#34;" not in page  # not raw JSON
    events = [json.loads(line) for line in (oracle / "trace.jsonl").read_text().splitlines()]
    first, second = [i for i, e in enumerate(events) if e["event"] == "semantic_round"]
    one = client.get(f"/api/event/0/?i={first}").text  # the reasoning around the formula is not in the diff
    assert "think" not in one and '<span class="add">+-1 -2 0</span>' in one and one.count('class="add"') == 2
    diff = client.get(f"/api/event/0/?i={second}").text
    assert '<span class="del">-p cnf 10 2</span>' in diff and '<span class="add">+p cnf 10 46</span>' in diff
    assert diff.count('<span class="add">+-') == 44  # the other "at most one" clauses
    table = diff.split('class="grid cex round-cex"')[1].split("</table>")[0]
    assert table.split("<tbody>")[1].count("<tr>") == 5  # the round's counterexamples as a table


def test_a_repeated_formula_is_no_change_and_ends_the_rounds(tmp_path):
    from study_dirs import make_repeating_attempt

    run = make_repeating_attempt(tmp_path / "repeat")
    client = client_for(run)
    assert "a formula already tested: the rounds stop" in client.get("/r/0/").text
    events = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    [number] = [i for i, e in enumerate(events) if e["event"] == "semantic_round"]
    assert "no change to the formula in this round" in client.get(f"/api/event/0/?i={number}").text


def test_repair_diff_compares_formulas_not_raw_answers(dirs):
    _, _, oracle, _ = dirs
    events = [json.loads(line) for line in (oracle / "trace.jsonl").read_text().splitlines()]
    number = next(i for i, e in enumerate(events) if e["event"] == "repair_round")
    diff = client_for(oracle).get(f"/api/event/0/?i={number}").text
    assert "[[FIXED]]" not in diff and "&lt;cnf&gt;" not in diff
    assert (
        '<span class="del">-1 2 banana 0</span>' in diff and '<span class="add">+1 2 3 4 5 6 7 8 9 10 0</span>' in diff
    )
    assert "[syntax] line" not in diff and "line 2: &#39;banana&#39;" in diff


def test_accepted_is_shown_with_its_relation_and_f1(dirs):
    _, sweep, _, _ = dirs
    client = client_for(sweep)
    for row in read_results(sweep):
        if row["status"] != "accepted":
            continue
        outcome = client.get(f"/r/0/{row['run_dir']}").text.split('<p class="outcome">')[1].split("</p>")[0]
        assert f"rel-{row['relation']}" in outcome and f"{row['f1']:.3f}" in outcome


def circles(page):
    found = re.findall(r'<circle cx="([\d.]+)" cy="80" r="([\d.]+)" class="(truth|formula)"/>', page)
    return {kind: (float(cx), float(r)) for cx, r, kind in found}


def test_overlap_circles_follow_the_counts(dirs):
    _, sweep, _, _ = dirs
    client = client_for(sweep)
    rows = read_results(sweep)
    equal = next(r for r in rows if r["relation"] == "equal")
    drawn = circles(client.get(f"/r/0/{equal['run_dir']}").text)
    assert drawn["truth"] == drawn["formula"]  # F1 = 1: one circle
    permissive = next(r for r in rows if r["relation"] == "permissive")
    drawn = circles(client.get(f"/r/0/{permissive['run_dir']}").text)
    (truth_x, truth_r), (formula_x, formula_r) = drawn["truth"], drawn["formula"]
    # permissive: every model of the truth is a model of the formula (FN = 0), the formula has more (FP > 0)
    assert formula_r == 65 and truth_r < formula_r
    assert truth_r / formula_r == pytest.approx(
        math.sqrt(permissive["tp"] / (permissive["tp"] + permissive["fp"])), 1e-3
    )
    assert abs(truth_x - formula_x) + truth_r <= formula_r + 0.01  # inside


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_circle_overlap_area_is_the_true_positive_share(tp, fp, fn):
    drawn = overlap_circles({"tp": tp, "fp": fp, "fn": fn})
    if tp + fn == 0 and tp + fp == 0:
        assert drawn is None
        return
    (t, f) = drawn["truth"], drawn["formula"]
    scale = 65 / math.sqrt(max(tp + fn, tp + fp))
    assert t["r"] == pytest.approx(scale * math.sqrt(tp + fn), abs=0.01)
    lens = _lens_area(t["r"], f["r"], abs(f["cx"] - t["cx"]))
    # drawn to 0.01 px: within 0.2 % of the larger circle's area
    assert lens == pytest.approx(math.pi * scale**2 * tp, abs=0.002 * math.pi * 65**2)
    assert drawn["one"] == (fp == 0 and fn == 0)


def test_folder_page_lists_runs_and_sweeps_with_their_metrics(dirs):
    folder, sweep, _, _ = dirs
    page = client_for(folder).get("/r/0/").text
    rows = read_results(sweep)
    finished = [r for r in rows if r["status"] in ("accepted", "rejected")]
    sweeps = page.split('id="sweeps"')[1].split("</table>")[0]
    assert f"<td>{len(rows)}</td>" in sweeps
    for key in {(r["model"], r["policy"]) for r in rows}:  # a mean per LLM and policy, never pooled across them
        planned = [r for r in rows if (r["model"], r["policy"]) == key]
        scored = [r["f1"] for r in planned if r["status"] in ("accepted", "rejected")]
        shown = f"{key[0]} · {key[1]}: {sum(scored) / len(scored):.3f} ({len(scored)} of {len(planned)})"
        assert shown in sweeps
    accepted = sum(r["status"] == "accepted" for r in rows)
    assert f"accepted {accepted}" in sweeps and f"{100 * accepted / len(finished):.1f}%" in sweeps
    runs = page.split('id="runs"')[1].split("</table>")[0]
    assert "oracle" in runs and "rel-equal" in runs and "1.000" in runs and "fashion" in runs


def test_two_sweeps_side_by_side(dirs):
    _, sweep, _, perfect = dirs
    client = client_for(sweep, perfect)
    home = client.get("/").text
    assert '<form action="/compare"' in home and 'value="0/"' in home and 'value="1/"' in home
    page = client.get("/compare?a=0/&b=1/").text
    rows = read_results(sweep)
    table = page.split('id="cells"')[1].split("</table>")[0]
    header = re.findall(r"<th>([^<]+)</th>", table)
    keys = header[: header.index("A attempts")]
    varying = [k for k in ("format", "prompt", "detail") if len({r[k] for r in rows}) > 1]
    assert keys == varying  # the settings that vary across both sweeps, nothing else
    body = table.split("<tbody>")[1].split("</tr>")[:-1]
    assert len(body) == len({tuple(r[k] for k in keys) for r in rows})
    for line in body:
        cells = re.findall(r"<td[^>]*>([^<]*)</td>", line)
        part = [r for r in rows if [r[k] for k in keys] == cells[: len(keys)]]
        finished = [r for r in part if r["status"] in ("accepted", "rejected")]
        mean = sum(r["f1"] for r in finished) / len(finished)
        a_n, a_f1, _, b_n, b_f1, _, delta, _ = cells[len(keys) :]
        assert a_n == f"{len(finished)} of {len(part)}" and b_n == f"{len(part)} of {len(part)}"
        assert a_f1.startswith(f"{mean:.3f} [") and b_f1 == "1.000 [1.000, 1.000]" and delta == f"{1 - mean:+.3f}"
    assert client.get("/compare?a=0/&b=9/").status_code == 403
    assert client.get("/compare?a=0/attempts&b=1/").status_code == 404


def test_f1_error_bars_stay_inside_zero_and_one():
    rows = [
        {
            "attempt_id": str(i),
            "llm": "m",
            "model": "m",
            "format": "nat",
            "prompt": "zs",
            "detail": "detailed",
            "status": "accepted",
            "f1": f1,
            "relation": "equal",
            "repair_rounds": 0,
            "syntax_error": False,
            "n_autofixes": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "llm_seconds": 0,
            "llm_calls": 1,
        }
        for i, f1 in enumerate([1.0, 1.0, 0.0])
    ]
    data = plot_data(frame(rows))
    # mean 2/3, std sqrt(2)/3 ≈ 0.471: the bar may rise only 1/3 above the mean, and falls the full std
    assert data["f1_err_plus"]["m"] == [pytest.approx(1 / 3)]
    assert data["f1_err_minus"]["m"] == [pytest.approx(math.sqrt(2) / 3)]


def test_sweep_summary_has_the_syntax_error_rate_before_repair(dirs):
    _, sweep, _, _ = dirs
    rows = read_results(sweep)
    # the scripted model's first answers that did not parse are the attempts that needed a repair round
    before = sum(r["repair_rounds"] > 0 for r in rows) / len(rows)
    summary = client_for(sweep).get("/api/summary/0/").text
    table = summary.split("Results per LLM")[1].split("</table>")[0]
    header = re.findall(r"<th>([^<]+)</th>", table)
    cells = re.findall(r"<td>([^<]*)</td>", table)
    assert cells[header.index("syntax errors before repair")].startswith(f"{100 * before:.1f}% [")


def test_a_recorded_round_shows_its_counterexamples_as_a_table(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    examples = [
        {"true_variables": ["coat"], "formula_says": True, "oracle_says": False, "source": "probe"},
        {"true_variables": ["coat", "hat"], "formula_says": False, "oracle_says": True, "source": "label 3"},
    ]
    event = {
        "event": "semantic_round",
        "round": 1,
        "counterexamples": examples,
        "formula_before": "p cnf 2 1\n1 0",
        "formula_after": "p cnf 2 1\n2 0",
    }
    (run / "trace.jsonl").write_text(json.dumps(event) + "\n")
    client = client_for(run)
    assert "semantic round 1 · 2 counterexamples" in client.get("/r/0/").text
    body = client.get("/api/event/0/?i=0").text
    table = body.split('class="grid cex round-cex"')[1].split("</table>")[0]
    assert re.findall(r'<th class="var"><span>([^<]+)</span>', table) == ["coat", "hat"]
    assert [re.findall(r'<td class="(on|off)">', row) for row in table.split("<tbody>")[1].split("</tr>")[:-1]] == [
        ["on", "off"],
        ["on", "on"],
    ]
    assert '<span class="del">-1 0</span>' in body and '<span class="add">+2 0</span>' in body


def test_static_export_of_two_sweeps_carries_their_comparison(dirs, tmp_path):
    from autonesy.graph.view.export import export_html

    _, sweep, _, perfect = dirs
    index = export_html([sweep, perfect], tmp_path / "site")
    assert '<a href="compare.html">' in index.read_text()
    page = (tmp_path / "site" / "compare.html").read_text()
    assert 'id="cells"' in page and 'href="/' not in page and "<form" not in page
