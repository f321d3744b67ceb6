"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by Playwright through the
system browser): open a scripted sweep, filter it, click into an attempt, expand a repair round and
see its diff, open a counterexample table, open a verification and see the violated constraint
marked; the static export opens from disk. Any JavaScript error (console error or uncaught
exception) fails the test. A screenshot of each page is written to ``tests/artifacts/viewer/``."""

import json
import shutil
from pathlib import Path

import pytest
from view_dirs import SECRET, SECRET_NAME, make_sweep, make_verification, serving

from autonesy.graph.results import read_results

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason="no chromium (apt-get install chromium)")
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts" / "viewer"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("view-browser")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_NAME, SECRET)
        sweep = make_sweep(tmp / "sweep")
    return sweep, make_verification(tmp)


@pytest.fixture(scope="module")
def scripted_sweep(tmp_path_factory):
    """The scripted sweep alone (the layout and comparison tests need no verification), run in a thread of its own:
    Playwright's event loop may already be running in this one."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(make_sweep, tmp_path_factory.mktemp("view-layout") / "sweep").result()


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A page that records every JavaScript error; the test fails if there was one."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems = []
    page.on(
        "console",
        lambda message: (
            problems.append(f"console {message.text} at {message.location}") if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"pageerror {error}"))
    page.on("dialog", lambda dialog: (problems.append(f"dialog {dialog.message}"), dialog.dismiss()))
    yield page
    context.close()
    assert problems == [], problems


def shot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def no_xss(page):
    assert page.evaluate("window.__xss") is None


def test_sweep_filter_attempt_diff_counterexamples(dirs, page):
    sweep, _ = dirs
    rows = read_results(sweep)
    with serving([sweep]) as url:
        page.goto(url)
        page.click("text=sweep")
        page.wait_for_selector("#rows tbody tr")
        assert page.locator("#rows tbody tr").count() == 16
        page.wait_for_selector("#plot-f1 .main-svg")  # plotly drew the plot
        shot(page, "sweep")

        page.select_option("select[data-filter=status]", "rejected")
        assert page.locator("#rows tbody tr").count() == sum(r["status"] == "rejected" for r in rows)
        page.select_option("select[data-filter=status]", "")
        page.select_option("select[data-filter=format]", "dimacs")
        page.fill("#search", "sushi")
        expected = [r for r in rows if r["format"] == "dimacs" and r["task"] == "sushi"]
        assert page.locator("#rows tbody tr").count() == len(expected) == 4
        assert page.inner_text("#shown") == "4 of 16 attempts"
        page.select_option("select[data-filter=format]", "")
        page.fill("#search", "")
        page.click("th[data-sort=f1]")
        first = page.locator("#rows tbody tr").first.locator("td.f1").inner_text()
        assert float(first) == min(r["f1"] for r in rows)

        fixed = next(r for r in expected if r["status"] == "accepted")
        page.fill("#search", fixed["attempt_id"])
        page.click(f"a:text('{fixed['attempt_id']}')")
        page.wait_for_selector("ol.timeline")
        assert "Attempt" in page.inner_text("h1")
        repair = page.locator("li.ev-repair_round details").first
        repair.locator("summary").click()
        page.wait_for_selector("li.ev-repair_round pre.diff .add")
        added = page.locator("li.ev-repair_round pre.diff .add").all_inner_texts()
        assert "+[[FIXED]]" not in added and any(line.startswith("+1 2 3 4 0") for line in added)  # formulas only
        assert page.locator("li.ev-repair_round pre.diff .del", has_text="banana").count() == 1
        call = page.locator("li.ev-llm_call details").first
        call.locator("summary").click()
        page.wait_for_selector("li.ev-llm_call .answer pre")
        assert "<img src=x" in call.locator(".answer pre").inner_text()  # shown as text, not run
        no_xss(page)
        shot(page, "attempt")

        permissive = next(r for r in rows if r["relation"] == "permissive" and r["task"] == "sushi")
        page.goto(f"{url}r/0/{permissive['run_dir']}")
        table = page.locator("#counterexamples table")
        assert not table.is_visible()
        page.click("#counterexamples summary")
        assert table.is_visible() and table.locator("tbody tr").count() == 5
        assert table.locator("td.on").count() == 5 * 4  # four items ranked in each counterexample
        shot(page, "counterexamples")

        page.goto(f"{url}errors/0/")
        page.click("text=[[OK]] answered on a broken formula")
        page.locator("section.taxonomy", has_text="[[OK]] answered").locator("summary").first.click()
        page.locator("section.taxonomy", has_text="[[OK]] answered").locator("a").first.click()
        page.wait_for_selector("li.ev-repair_round.verdict-still-error")
        shot(page, "errors-to-attempt")


def test_verification_marks_the_violated_constraint(dirs, page):
    _, verification = dirs
    with serving([verification]) as url:
        page.goto(f"{url}r/0/")
        records = (verification.parent / "vifbench" / "vifbench.jsonl").read_text().splitlines()
        record = next(r for r in map(json.loads, records) if r["verdict"] == "unsat")  # the one verified
        expected = sum(not label for label in record["labels"].values())  # an unsat output may break several
        violated = page.locator("table.constraints tr.violated")
        assert expected >= 1 and violated.count() == expected
        assert violated.locator("mark").all_inner_texts() == ["violated"] * expected
        violated = violated.first
        background = violated.evaluate("row => getComputedStyle(row).backgroundColor")
        assert background not in ("rgba(0, 0, 0, 0)", "transparent")
        violated.locator("summary").first.click()  # its evidence: the judge's reasoning or the checker's code
        assert violated.locator("pre").first.inner_text().strip()
        checked = page.locator("table.constraints tr", has_text="checker code")
        assert checked.count() >= 1  # the logic constraint's generated checker is shown with it
        code = checked.first.locator("details", has_text="checker code")
        if not code.evaluate("details => details.open"):  # the violated row's may be open already
            code.locator("summary").click()
        assert "def " in code.locator("pre").inner_text()
        shot(page, "verification")


def test_static_export_opens_from_disk(dirs, page, tmp_path):
    from autonesy.graph.view.export import export_html

    sweep, _ = dirs
    index = export_html([sweep], tmp_path / "site")
    page.goto(index.as_uri())
    page.wait_for_selector("#rows tbody tr")
    page.select_option("select[data-filter=relation]", "permissive")
    assert page.locator("#rows tbody tr").count() == sum(r["relation"] == "permissive" for r in read_results(sweep))
    page.locator("#rows tbody a").first.click()
    page.wait_for_selector("ol.timeline")
    page.locator("li.ev-llm_call details summary").first.click()
    assert page.locator("li.ev-llm_call .answer pre").first.is_visible()
    no_xss(page)
    shot(page, "static-attempt")


def boxes_overlap(a, b):
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and (b["y"] < a["y"] + a["height"])
    )


def test_sweep_layout_at_1400_pixels(scripted_sweep, browser):
    sweep = scripted_sweep
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        with serving([sweep]) as url:
            page.goto(f"{url}r/0/")
            page.wait_for_selector("#plot-relations .main-svg")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # nothing overflows
            main = page.locator("main").bounding_box()
            plots = page.locator(".plot").all()
            assert len(plots) == 4
            for plot in plots:
                box = plot.bounding_box()
                assert box["x"] >= main["x"] and box["x"] + box["width"] <= main["x"] + main["width"] + 0.5
            tops = {round(plot.bounding_box()["y"]) for plot in plots[:3]}
            assert len(tops) == 1  # three plots side by side in the first row
            for plot in plots:  # the toolbar (shown on hover) does not cover the title
                plot.hover()
                page.wait_for_timeout(150)
                title = plot.locator(".gtitle").bounding_box()
                bar = plot.locator(".modebar").bounding_box()
                assert title and bar and not boxes_overlap(title, bar), (title, bar)
            relations = page.locator("#plot-relations")
            frame_box = relations.bounding_box()
            for label in relations.locator(".ytick text").all():  # relation labels (model names) not cut off
                box = label.bounding_box()
                assert box["x"] >= frame_box["x"] - 0.5 and box["width"] > 0
            accepted = page.locator("#rows td.status-accepted").first
            assert accepted.evaluate("td => getComputedStyle(td).color") != "rgb(42, 157, 143)"  # not green
            shot(page, "sweep-1400")
    finally:
        context.close()


def test_two_sweeps_compared_from_the_home_page(scripted_sweep, page, tmp_path):
    from study_dirs import make_perfect_copy

    sweep = scripted_sweep
    perfect = make_perfect_copy(sweep, tmp_path / "perfect")
    with serving([sweep, perfect]) as url:
        page.goto(url)
        page.select_option("form.compare select[name=b]", "1/")
        page.click("form.compare button")
        page.wait_for_selector("#cells tbody tr")
        assert page.locator("#cells tbody tr").count() >= 2
        deltas = page.locator("#cells td.delta").all_inner_texts()
        assert any(d != "—" for d in deltas) and all(
            d == "—" or float(d) >= 0 for d in deltas
        )  # B is perfect: never worse
        intervals = page.locator("#cells td.delta-ci").all_inner_texts()
        assert len(intervals) == len(deltas)
        assert all(i == "—" or float(i.strip("[]").split(",")[0]) >= 0 for i in intervals)  # nor its low end
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        shot(page, "compare")


def test_semantic_rounds_open_to_a_formula_diff(page, tmp_path):
    from study_dirs import make_oracle_attempt

    run = make_oracle_attempt(tmp_path / "oracle")
    with serving([run]) as url:
        page.goto(url)
        page.click("text=oracle")
        rounds = page.locator("li.ev-semantic_round")
        assert rounds.count() == 2
        assert "5 counterexamples" in rounds.first.inner_text() and "+2 −1 lines" in rounds.first.inner_text()
        rounds.nth(1).locator("summary").click()
        page.wait_for_selector("li.ev-semantic_round pre.diff .add")
        added = rounds.nth(1).locator("pre.diff .add").all_inner_texts()
        assert "+p cnf 10 46" in added and len([a for a in added if a.startswith("+-")]) == 44
        assert rounds.nth(1).locator("table.round-cex tbody tr").count() == 5
        assert "relation equal · F1 1.000" in page.locator("li.ev-outcome").inner_text()
        assert "[syntax]" not in page.locator("li.ev-syntax_error").inner_text()  # the kind once, in the title
        outcome = page.locator("p.outcome").inner_text()
        assert "accepted" in outcome and "equal" in outcome and "1.000" in outcome
        circles = page.locator("svg.overlap circle")
        assert circles.nth(0).get_attribute("cx") == circles.nth(1).get_attribute("cx")  # F1 = 1: one circle
        shot(page, "semantic-rounds")
