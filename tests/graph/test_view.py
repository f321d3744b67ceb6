"""The viewer's server and static export without a browser: every page of a scripted sweep and of a
verification renders; paths outside the given directories are refused (``..``, absolute, symlinks);
LLM text is escaped; secrets never appear; the rows follow a running sweep; ``report --html``; ``view``."""

import json
import math
import os
import re
import shutil
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape as html_escape
from starlette.testclient import TestClient
from typer.testing import CliRunner
from view_dirs import SECRET, SECRET_NAME, XSS, make_sweep, make_verification

from autonesy.graph.cli import app
from autonesy.graph.report import frame, plot_data
from autonesy.graph.results import RESULTS_JSONL, SWEEP_FILE, read_results
from autonesy.graph.view.files import OutsideRoots, Roots
from autonesy.graph.view.server import create_app

runner = CliRunner()


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("view")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_NAME, SECRET)
        sweep = make_sweep(tmp / "sweep")
    verification = make_verification(tmp)
    return sweep, verification


@pytest.fixture
def client(dirs, monkeypatch):
    monkeypatch.setenv(SECRET_NAME, SECRET)
    return TestClient(create_app(list(dirs)), base_url="http://127.0.0.1")


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs, self.srcs, self.scripts = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])
        if attrs.get("data-src"):
            self.srcs.append(attrs["data-src"])
        if tag == "script" and attrs.get("type") != "application/json":
            self.scripts.append(attrs.get("src"))


def records(table):
    return [dict(zip(table["columns"], values)) for values in table["rows"]]


def parse(html):
    links = Links()
    links.feed(html)
    return links


def crawl(client):
    """Every page and fragment reachable from the home page: {url: text}."""
    seen, todo = {}, ["/"]
    while todo:
        url = todo.pop()
        if url in seen or not url.startswith("/"):
            continue
        response = client.get(url)
        assert response.status_code == 200, (url, response.text)
        seen[url] = response.text
        if url.startswith("/api/rows/"):
            todo += [row["href"] for row in records(response.json())]
            continue
        found = parse(response.text)
        todo += found.hrefs + found.srcs
        assert all(src is None or src.startswith("/static/") for src in found.scripts), found.scripts
        for match in re.finditer(r'data-src="([^"]+)"', response.text):
            todo.append(match.group(1).replace("&amp;", "&"))
    return seen


def test_every_page_renders_escapes_llm_text_and_shows_no_secret(client, dirs):
    sweep, _ = dirs
    pages = crawl(client)
    attempts = [u for u in pages if u.startswith("/r/0/attempts/")]
    assert len(attempts) == 16
    assert any(u.startswith("/api/event/") for u in pages) and any(u.startswith("/errors/") for u in pages)
    for url, text in pages.items():
        assert XSS not in text and "<img src=x" not in text, url
        assert SECRET not in text, url
    answers = [t for u, t in pages.items() if u.startswith("/api/event/0/") and '<div class="answer">' in t]
    assert answers and all("&lt;img src=x onerror=&#34;window.__xss=1&#34;&gt;" in t for t in answers)


def test_a_secret_written_into_a_run_directory_is_redacted(dirs, tmp_path, monkeypatch):
    sweep, _ = dirs
    run = tmp_path / "run"
    shutil.copytree(next((sweep / "attempts").iterdir()), run)
    (run / "formula.txt").unlink(missing_ok=True)
    (run / "formula.cnf").unlink(missing_ok=True)
    (run / "answer.txt").write_text(f"leaked {SECRET} here")
    config = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**config, "llm": f"http://x/v1@m?key={SECRET}"}))
    monkeypatch.setenv(SECRET_NAME, SECRET)
    page = TestClient(create_app([run]), base_url="http://127.0.0.1").get("/r/0/").text
    assert "leaked *** here" in page and "key=***" in page and SECRET not in page


def test_paths_outside_the_directories_are_refused(client, dirs, tmp_path):
    sweep, verification = dirs
    outside = tmp_path / "outside"
    (outside / "attempts").mkdir(parents=True)
    link = sweep / "escape"
    link.symlink_to(outside, target_is_directory=True)
    inner = sweep / "inner-link"
    inner.symlink_to(sweep / "attempts", target_is_directory=True)
    try:
        roots = Roots([sweep])
        for bad in ("..", "../x", "attempts/../../x", "escape", "escape/attempts", str(outside), "/etc"):
            with pytest.raises(OutsideRoots):
                roots.resolve(0, bad)
        with pytest.raises(OutsideRoots):
            roots.resolve(5, "")
        assert roots.resolve(0, "inner-link") == (sweep / "attempts").resolve()
        for url in (
            "/r/0/%2e%2e",
            "/r/0/%2E%2E%2F%2E%2E%2Fetc",
            "/r/0/escape",
            "/api/rows/0/escape",
            "/api/event/0/%2e%2e/verification?i=0",
            "/errors/0/escape",
            "/r/7/",
            "/r/0/%2Fetc",
        ):
            response = client.get(url)
            assert response.status_code == 403 and response.text.startswith("refused:"), url
        assert client.get("/r/0/inner-link").status_code == 200
        assert client.get("/r/0/missing").status_code == 404
        assert client.get("/api/event/0/attempts?i=3").status_code == 404
        assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    finally:
        link.unlink()
        inner.unlink()


def test_rows_are_the_results_table_and_follow_a_running_sweep(client, dirs, tmp_path):
    sweep, _ = dirs
    data = client.get("/api/rows/0/").json()
    expected = read_results(sweep)
    assert data["live"] is False
    assert [(r["attempt_id"], r["status"], r["f1"]) for r in records(data)] == [
        (r["attempt_id"], r["status"], None if r["f1"] is None else round(r["f1"], 4)) for r in expected
    ]
    # a sweep still running: sweep.json newer than results.jsonl → the rows come from the attempt directories
    results = sweep / RESULTS_JSONL
    saved = results.read_text()
    stamp = results.stat().st_mtime
    try:
        results.write_text("")
        os.utime(results, (stamp - 60, stamp - 60))
        os.utime(sweep / SWEEP_FILE)
        live = client.get("/api/rows/0/").json()
        assert live["live"] is True
        assert sorted(r["attempt_id"] for r in records(live)) == sorted(r["attempt_id"] for r in expected)
        assert "running" in client.get("/r/0/").text
    finally:
        results.write_text(saved)


def test_repair_round_diff_and_counterexample_table(client, dirs):
    sweep, _ = dirs
    rows = read_results(sweep)
    fixed = next(r for r in rows if r["task"] == "sushi" and r["format"] == "dimacs" and r["status"] == "accepted")
    run = sweep / fixed["run_dir"]
    events = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    number = next(i for i, e in enumerate(events) if e["event"] == "repair_round")
    diff = client.get(f"/api/event/0/{fixed['run_dir']}?i={number}").text
    added = {m.group(1) for m in re.finditer(r'<span class="add">\+([^<]*)</span>', diff)}
    removed = {m.group(1) for m in re.finditer(r'<span class="del">-([^<]*)</span>', diff)}
    clauses = [
        line for line in (run / "formula.cnf").read_text().splitlines() if line and not line.startswith(("c", "p"))
    ]
    assert set(clauses) <= added and "1 2 banana 0" in removed

    permissive = next(
        r for r in rows if r["relation"] == "permissive" and r["format"] == "nat" and r["task"] == "sushi"
    )
    page = client.get(f"/r/0/{permissive['run_dir']}").text
    examples = json.loads((sweep / permissive["run_dir"] / "metrics.json").read_text())["oracle_test"][
        "counterexamples"
    ]
    table = page.split('id="counterexamples"')[1].split("</table>")[0]
    header = re.findall(r'<th class="var"><span>([^<]+)</span>', table)
    body = table.split("<tbody>")[1].split("</tr>")[:-1]
    assert len(body) == len(examples) and len(header) == 16
    for row, example in zip(body, examples):
        cells = re.findall(r'<td class="(on|off)">', row)
        assert {name for name, cell in zip(header, cells) if cell == "on"} == set(example["true_variables"])


def test_verification_page_marks_the_violated_constraint(client, dirs):
    _, verification = dirs
    summary = json.loads((verification / "summary.json").read_text())
    violated = {v["id"] for v in summary["decision"]["violated"]}
    page = client.get("/r/1/").text
    marked = set(re.findall(r'<tr class="violated" data-constraint="([^"]+)"', page))
    assert violated and marked == violated
    assert summary["formula"] in page and "unsat core" in page


def test_follow_page_shows_each_round_with_its_verdict(dirs):
    _, verification = dirs
    follow = verification.parent / "follow"
    history = json.loads((follow / "summary.json").read_text())["history"]
    page = TestClient(create_app([follow]), base_url="http://127.0.0.1").get("/r/0/").text
    shown = re.findall(r'<div class="round"><div class="label">round (\d+) · <span class="status status-(\w+)">', page)
    assert shown == [(str(h["round"]), h["verdict"]) for h in history] and shown
    for h in history:
        text = (follow / "outputs" / f"round-{h['round']}.txt").read_text()
        assert str(html_escape(text)) in page


def test_report_html_writes_a_static_site(dirs, tmp_path, monkeypatch):
    sweep, _ = dirs
    monkeypatch.setenv(SECRET_NAME, SECRET)
    outside = tmp_path / "outside"
    shutil.copytree(next((sweep / "attempts").iterdir()), outside)
    escape = sweep / "attempts" / "zz-escape"
    escape.symlink_to(outside, target_is_directory=True)
    try:
        result = runner.invoke(app, ["report", str(sweep), "--out", str(tmp_path / "r"), "--no-plots", "--html"])
    finally:
        escape.unlink()
    assert result.exit_code == 0, result.output
    site = tmp_path / "r" / "html"
    index = (site / "index.html").read_text()
    rows = records(
        json.loads(re.search(r'<script type="application/json" id="rows-data">(.*?)</script>', index, re.S).group(1))
    )
    assert len(rows) == 16 and all((site / row["href"]).is_file() for row in rows)
    assert not list(site.glob("*escape*"))  # the symlink out of the sweep was not followed
    for page in site.glob("*.html"):
        text = page.read_text()
        assert SECRET not in text and XSS not in text and 'href="/' not in text and 'src="/' not in text, page
        for href in parse(text).hrefs:
            assert (site / href).is_file(), (page, href)
    assert (site / "static" / "plotly.min.js").is_file() and (site / "static" / "viewer.js").is_file()
    attempt = (site / rows[0]["href"]).read_text()
    assert "data-src" not in attempt and '<div class="answer">' in attempt  # content inline: no server to ask


def test_view_prints_the_url_and_opens_nothing_unless_asked(dirs, monkeypatch):
    import webbrowser

    import uvicorn

    sweep, _ = dirs
    opened, ran = [], []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url))
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(sockets[0].getsockname()))
    result = runner.invoke(app, ["view", str(sweep)])
    assert result.exit_code == 0, result.output
    url = re.search(r"http://127\.0\.0\.1:(\d+)/", result.output)
    assert url and int(url.group(1)) == ran[0][1] > 0 and ran[0][0] == "127.0.0.1" and opened == []
    result = runner.invoke(app, ["view", str(sweep), "--open", "--port", "0", "--host", "127.0.0.1"])
    assert result.exit_code == 0 and len(opened) == 1 and opened[0] in result.output
    missing = runner.invoke(app, ["view", str(sweep / "nope")])
    assert missing.exit_code == 1 and missing.output.startswith("error:") and len(missing.output.splitlines()) == 1


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["m1", "m2", "expert"]),
            st.sampled_from(["nat", "dimacs", "cpmpy"]),
            st.sampled_from(["accepted", "rejected"]),
            st.one_of(st.none(), st.floats(0, 1)),
            st.sampled_from(["equal", "permissive", None]),
            st.integers(0, 3),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_plot_data_matches_a_cell_by_cell_count(cells):
    """The plots' numbers (PNG and browser) against a direct computation over each (model, format) cell."""
    rows = [
        {
            "attempt_id": str(i),
            "llm": m,
            "model": m,
            "format": f,
            "status": s,
            "f1": f1,
            "relation": rel,
            "repair_rounds": r,
            "syntax_error": syn and s == "rejected",
            "failure": None,
            "prompt": "zs",
            "detail": "detailed",
            "n_autofixes": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "llm_seconds": 0,
            "llm_calls": 0,
        }
        for i, (m, f, s, f1, rel, r, syn) in enumerate(cells)
    ]
    data = plot_data(frame(rows))
    for m in data["models"]:
        for j, f in enumerate(data["formats"]):
            cell = [r for r in rows if r["model"] == m and r["format"] == f]
            scores = [r["f1"] for r in cell if r["f1"] is not None]
            mean = sum(scores) / len(scores) if scores else 0.0
            std = math.sqrt(sum((x - mean) ** 2 for x in scores) / len(scores)) if scores else 0.0
            assert data["f1_mean"][m][j] == pytest.approx(mean, abs=1e-9)
            assert data["f1_std"][m][j] == pytest.approx(std, abs=1e-9)
            rate = sum(r["syntax_error"] for r in cell) / len(cell) if cell else 0.0
            assert data["syntax_error_rate"][m][j] == pytest.approx(rate)
        mine = [r for r in rows if r["model"] == m]
        assert data["round_counts"][m] == [
            sum(r["repair_rounds"] == k for r in mine) for k in range(len(data["rounds"]))
        ]
        for relation, shares in data["relations"].items():
            kind = [("rejected" if r["status"] == "rejected" else r["relation"] or "unscored") for r in mine]
            assert shares[data["models"].index(m)] == pytest.approx(kind.count(relation) / len(mine))
    assert sum(sum(v) for v in data["round_counts"].values()) == len(rows)


GARBAGE = [
    "",
    "null",
    "[1, 2]",
    '"text"',
    "{",
    '{"formula": "x", "oracle_test": 5, "compiled": [1]}',
    '{"oracle_test": {"counterexamples": [1, {"true_variables": 3}, {"true_variables": ["a"]}]}}',
    '{"constraints": [1, {"id": "C1"}], "results": [], "decision": {"violated": "C1"}, "history": [3]}',
    '{"status": {"x": 1}, "reason": [1], "metrics": 7}',
]


@pytest.mark.parametrize("content", GARBAGE)
def test_files_of_any_shape_still_render(dirs, tmp_path, content):
    sweep, verification = dirs
    attempt, verify = tmp_path / "attempt", tmp_path / "verify"
    shutil.copytree(next((sweep / "attempts").iterdir()), attempt)
    shutil.copytree(verification, verify)
    for run in (attempt, verify):
        for name in ("summary.json", "metrics.json", "config.json", "downstream.json"):
            (run / name).write_text(content)
        with (run / "trace.jsonl").open("a") as trace:
            trace.write(content + "\n" + '{"event": "llm_call", "messages": [1, {"role": 2}], "verdict": [1]}\n')
    client = TestClient(create_app([attempt, verify, tmp_path]), base_url="http://127.0.0.1")
    for url in ("/r/0/", "/r/1/", "/r/2/", "/errors/2/", "/api/event/0/?i=0"):
        response = client.get(url)
        assert response.status_code == 200, (url, response.text)
    count = len((attempt / "trace.jsonl").read_text().splitlines())
    for i in range(count):
        assert client.get(f"/api/event/0/?i={i}").status_code in (200, 404)


def test_an_unforeseen_failure_is_one_line_not_a_traceback(dirs, monkeypatch):
    from autonesy.graph.view import pages

    sweep, _ = dirs
    monkeypatch.setattr(pages, "attempt_page", lambda roots, path: 1 / 0)
    response = TestClient(create_app([sweep]), base_url="http://127.0.0.1").get(
        "/r/0/attempts/" + read_results(sweep)[0]["attempt_id"]
    )
    assert response.status_code == 500 and response.text.count("\n") == 0 and "ZeroDivisionError" in response.text


def test_compare_published_puts_the_published_figures_in_the_tables(dirs):
    sweep, _ = dirs
    plain = TestClient(create_app([sweep]), base_url="http://127.0.0.1").get("/api/summary/0/").text
    published = (
        TestClient(create_app([sweep], compare_published=True), base_url="http://127.0.0.1").get("/api/summary/0/").text
    )
    assert "auto-nesy-bench" not in plain and "auto-nesy-bench" in published


def test_training_results_are_a_table_per_method_formula_and_seed(dirs, tmp_path):
    sweep, _ = dirs
    run = tmp_path / "run"
    shutil.copytree(next((sweep / "attempts").iterdir()), run)
    per_seed = [{"f1": 0.25, "accuracy": 0.5, "consistency": 1.0}, {"f1": 0.75, "accuracy": 0.5, "consistency": 1.0}]
    (run / "downstream.json").write_text(
        json.dumps(
            {
                "task": "fashion",
                "seeds": [3, 4],
                "formula": {"relation": "equal"},
                "results": {"spl": {"formula": {"per_seed": per_seed}, "ground_truth": {"per_seed": per_seed[:1]}}},
            }
        )
    )
    page = TestClient(create_app([run]), base_url="http://127.0.0.1").get("/r/0/").text
    table = page.split("SPL / SL training")[1].split("</table>")[0]
    cells = [re.findall(r"<td>\s*([^<]*?)\s*</td>", row) for row in table.split("<tbody>")[1].split("</tr>")[:-1]]
    assert [c[:4] for c in cells] == [
        ["spl", "generated", "3", "0.250"],
        ["spl", "generated", "4", "0.750"],
        ["spl", "expert", "3", "0.250"],
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab <&>\n", max_size=40),
    st.lists(st.text(alphabet="ab <&", max_size=4), max_size=4),
    st.booleans(),
)
def test_marked_segments_keep_the_output_and_mark_only_named_spans(output, spans, violated):
    from autonesy.graph.view.pages import marked_segments

    segments = marked_segments(output, [{"id": "C2", "violated": violated, "spans": spans}])
    assert "".join(s["text"] for s in segments) == output  # nothing lost, nothing added
    for segment in segments:
        if segment["mark"] is not None:
            assert violated and segment["mark"] == "C2" and segment["text"] in spans and segment["text"]
    if violated and any(span and span in output for span in spans):
        assert any(s["mark"] for s in segments)


def test_only_violated_constraints_mark_the_output():
    from autonesy.graph.view.pages import marked_segments

    segments = marked_segments(
        "say <b>cat</b> and cat",
        [{"id": "C1", "violated": True, "spans": ["cat"]}, {"id": "C2", "violated": False, "spans": ["say"]}],
    )
    assert [s["text"] for s in segments if s["mark"]] == ["cat", "cat"]
    assert all(s["mark"] in (None, "C1") for s in segments)


def test_a_constraint_result_is_read_as_the_verifiers_record_or_not_at_all():
    from autonesy.graph.view.pages import constraint_result

    written = {"id": "C1", "summary": "A title.", "kind": "logic", "method": "checker", "value": False, "code": "x"}
    written["failures"] = [{"error_kind": "runtime", "message": "IndexError", "line": 2}]
    read = constraint_result(written)
    assert read is not None and read.code == "x" and read.failures[0].line == 2
    assert constraint_result({**written, "method": "oracle"}) is None and constraint_result([written]) is None
