"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by Playwright through the
system browser): open a scripted sweep, filter it, click into an attempt, expand a repair round and
see its diff, open a counterexample table, open a verification and see the violated constraint
marked; the static export opens from disk. Any JavaScript error (console error or uncaught
exception) fails the test. A screenshot of each page is written to ``tests/artifacts/viewer/``."""

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
        assert "+[[FIXED]]" in added and any(line.startswith("+1 2 3 4 0") for line in added)
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
        page.wait_for_selector("li.ev-repair_round.verdict-ok")
        shot(page, "errors-to-attempt")


def test_verification_marks_the_violated_constraint(dirs, page):
    _, verification = dirs
    with serving([verification]) as url:
        page.goto(f"{url}r/0/")
        violated = page.locator("table.constraints tr.violated")
        assert violated.count() == 1 and violated.locator("mark").inner_text() == "violated"
        background = violated.evaluate("row => getComputedStyle(row).backgroundColor")
        assert background not in ("rgba(0, 0, 0, 0)", "transparent")
        violated.locator("summary").first.click()  # its evidence: the judge's reasoning or the checker's code
        assert violated.locator("pre").first.inner_text().strip()
        checked = page.locator("table.constraints tr", has_text="checker code")
        assert checked.count() >= 1  # the logic constraint's generated checker is shown with it
        checked.first.locator("summary", has_text="checker code").click()
        assert "def " in checked.first.locator("pre").first.inner_text()
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
