"""The pages as HTML, for the server and for the static export alike: one Jinja environment (escaping
everything), one page function per directory kind, and two ways to spell links (``ServerLinks`` for
``view``, ``StaticLinks`` for files that open from disk)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jinja2

from autonesy.graph import results
from autonesy.graph.view import pages
from autonesy.graph.view.files import Roots

STATIC_DIR = Path(__file__).parent / "static"
PLOTLY_JS = "plotly.min.js"


def plotly_js() -> Path:
    """plotly.js as shipped inside the ``plotly`` package (nothing is downloaded when a page opens)."""
    import plotly

    return Path(plotly.__file__).parent / "package_data" / PLOTLY_JS


class ServerLinks:
    """URLs of the live viewer's routes (pages, API fragments, static files)."""

    static = False

    def home(self) -> str:
        """The directory list."""
        return "/"

    def page(self, index: int, rel: str) -> str:
        """The page of a directory under root ``index``."""
        return f"/r/{index}/{_quote(rel)}"

    def errors(self, index: int, rel: str) -> str:
        """The error-analysis page of a sweep."""
        return f"/errors/{index}/{_quote(rel)}"

    def rows(self, index: int, rel: str) -> str:
        """The JSON rows of a sweep table (loaded by the page as it scrolls)."""
        return f"/api/rows/{index}/{_quote(rel)}"

    def summary(self, index: int, rel: str) -> str:
        """The HTML fragment of a sweep's summary tables."""
        return f"/api/summary/{index}/{_quote(rel)}"

    def event(self, index: int, rel: str) -> str:
        """The HTML fragment of one trace event (expanded on demand)."""
        return f"/api/event/{index}/{_quote(rel)}"

    def asset(self, name: str) -> str:
        """A static file (scripts, styles)."""
        return f"/static/{name}"


class StaticLinks:
    """Links between files in one folder: ``index.html`` for the first directory, one file per page."""

    static = True
    COMPARE = "compare.html"  # the first two sweeps side by side (report --html over two or more)

    def home(self) -> str:
        """The index file."""
        return "index.html"

    def page(self, index: int, rel: str) -> str:
        """One flat file name per directory page (path characters replaced)."""
        if index == 0 and rel == "":
            return "index.html"
        return f"{index}_{re.sub(r'[^A-Za-z0-9._-]', '_', rel) or 'root'}.html"

    def errors(self, index: int, rel: str) -> str:
        """The error-analysis file of a sweep."""
        return "errors_" + self.page(index, rel)

    def rows(self, index: int, rel: str) -> str:
        """No API in a static site: rows are embedded in the page."""
        return ""

    def summary(self, index: int, rel: str) -> str:
        """No API in a static site: the summary is embedded in the page."""
        return ""

    def event(self, index: int, rel: str) -> str:
        """No API in a static site: events are embedded in the page."""
        return ""

    def asset(self, name: str) -> str:
        """A static file copied next to the pages."""
        return f"static/{name}"


def _quote(rel: str) -> str:
    from urllib.parse import quote

    return quote(rel)


class Site:
    """Renders the viewer's pages from the directories it was given, for the server and the static site alike (only
    ``links`` differ)."""

    def __init__(self, roots: Roots, links: ServerLinks | StaticLinks, *, compare_published: bool = False) -> None:
        self.roots = roots
        self.links = links
        self.compare_published = compare_published
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True
        )

    def render(self, template: str, **context: Any) -> str:
        """The one exit of every page and fragment: escaped by Jinja, environment secrets removed."""
        html = self.env.get_template(template).render(links=self.links, roots=self.roots, **context)
        return self.roots.redact(html)

    def name(self, index: int, rel: str) -> str:
        """A directory's display name: its root's name and the path below it."""
        return f"{self.roots.dirs[index].name}/{rel}".rstrip("/")

    # --------------------------------------------------------------------------------- pages
    def home(self) -> str:
        """The start page: every root directory and what kind of run it holds."""
        entries = [{"index": i, "name": str(d), "kind": pages.directory_kind(d)} for i, d in enumerate(self.roots.dirs)]
        return self.render("home.html", title="autonesy viewer", entries=entries, sweeps=self.sweeps())

    def page(self, index: int, rel: str) -> str:
        """The page of a directory, chosen by what it holds (sweep, attempt, verification, or a folder of runs)."""
        path = self.roots.resolve(index, rel)
        if not path.is_dir():
            raise FileNotFoundError(f"{rel}: no such directory")
        kind = pages.directory_kind(path)
        common = {"index": index, "rel": rel, "title": self.name(index, rel), "kind": kind}
        if kind == "sweep":
            return self.sweep(path, common)
        if kind == "attempt":
            return self.render(
                "attempt.html", **common, a=pages.attempt_page(self.roots, path), bodies=self.inline_bodies(path)
            )
        if kind == "verification":
            return self.render(
                "verification.html",
                **common,
                v=pages.verification_page(self.roots, path),
                bodies=self.inline_bodies(path),
            )
        entries = []
        for found in pages.folder_entries(path):
            kind = pages.directory_kind(found)
            rel = self.roots.relative(index, found)
            entries.append({"rel": rel, "kind": kind, "m": pages.entry_metrics(self.roots, found, kind)})
        return self.render("folder.html", **common, entries=entries)

    def sweep(self, path: Path, common: dict[str, Any]) -> str:
        """The page itself is light; the server fills the table and the report from /api (a static page
        carries both)."""
        rows = summary = None
        if self.links.static:
            found = pages.sweep_rows(path)
            rows = self.table_rows(common["index"], path, found)
            summary = self.summary(common["index"], common["rel"])
        compare = StaticLinks.COMPARE if self.links.static and len(self.sweeps()) >= 2 else None
        return self.render(
            "sweep.html",
            **common,
            rows=rows,
            summary=summary,
            filters=pages.FILTERS,
            live=pages.sweep_is_running(path),
            compare=compare,
        )

    def summary(self, index: int, rel: str) -> str:
        """A sweep's summary tables as an HTML fragment."""
        path = self.roots.resolve(index, rel)
        report = pages.sweep_summary(pages.sweep_rows(path, first_answers=True), self.compare_published)
        return self.render("_summary.html", s=report)

    def table_rows(self, index: int, path: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """A sweep's rows for the table script, each linked to its attempt's page."""
        base = self.roots.relative(index, path)
        return pages.table_rows(rows, lambda run_dir: self.links.page(index, f"{base}/{run_dir}".strip("/")))

    def rows_json(self, index: int, rel: str) -> bytes:
        """The table as JSON; a finished sweep's is built once per version of its results file."""
        path = self.roots.resolve(index, rel)
        if pages.sweep_is_running(path):
            return self._rows_json(index, path, None)
        return self._rows_json(index, path, (path / results.RESULTS_JSONL).stat().st_mtime_ns)

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one site object per server, kept for its lifetime
    def _rows_json(self, index: int, path: Path, version: int | None) -> bytes:
        table = self.table_rows(index, path, pages.sweep_rows(path))
        text = json.dumps({**table, "live": version is None}, ensure_ascii=False, separators=(",", ":"))
        return self.roots.redact(text).encode("utf-8")

    def event(self, index: int, rel: str, number: int) -> str:
        """One trace event rendered in full (the page shows events collapsed)."""
        path = self.roots.resolve(index, rel)
        events = pages.trace_events(path)
        if not 0 <= number < len(events):
            raise FileNotFoundError(f"no event {number}")
        dimacs = self.roots.read_text(path / "formula.cnf", "") or ""
        return self.render("_body.html", body=pages.event_body(events, number, dimacs))

    def inline_bodies(self, path: Path) -> dict[int, str] | None:
        """Static pages cannot fetch: they carry every item's content."""
        if not self.links.static:
            return None
        events = pages.trace_events(path)
        dimacs = self.roots.read_text(path / "formula.cnf", "") or ""
        return {i: self.render("_body.html", body=pages.event_body(events, i, dimacs)) for i in range(len(events))}

    def sweeps(self) -> list[dict[str, Any]]:
        """Every sweep among the directories and their folders (what the comparison form offers)."""
        found = []
        for index, root in enumerate(self.roots.dirs):
            below = [root] if pages.directory_kind(root) == "sweep" else pages.folder_entries(root)
            for path in below:
                if pages.directory_kind(path) == "sweep":
                    rel = self.roots.relative(index, path)
                    found.append({"value": f"{index}/{rel}", "name": self.name(index, rel)})
        return found

    def compare(self, first: str, second: str) -> str:
        """Two sweeps side by side (each given as ``INDEX/PATH``, as the home page's form sends them)."""
        where = []
        for given in (first, second):
            number, _, rel = given.partition("/")
            if not number.isdigit():
                raise ValueError(f"{given!r}: expected INDEX/PATH")
            path = self.roots.resolve(int(number), rel)
            if pages.directory_kind(path) != "sweep":
                raise FileNotFoundError(f"{given}: not a sweep")
            where.append((int(number), rel, path))
        (ia, ra, pa), (ib, rb, pb) = where
        comparison = pages.compare_sweeps(pages.sweep_rows(pa), pages.sweep_rows(pb))
        names = {"A": self.name(ia, ra), "B": self.name(ib, rb)}
        links = {"A": self.links.page(ia, ra), "B": self.links.page(ib, rb)}
        return self.render(
            "compare.html",
            title=f"{names['A']} vs {names['B']}",
            kind="compare",
            c=comparison,
            names=names,
            hrefs=links,
        )

    def errors(self, index: int, rel: str) -> str:
        """A sweep's error analysis: rejected attempts grouped by error kind, with examples."""
        path = self.roots.resolve(index, rel)
        analysis = pages.error_analysis(path)
        for found in analysis["groups"].values():
            for _, refs in found:
                for ref in refs:
                    ref["href"] = self.links.page(index, self.roots.relative(index, ref["run_dir"]))
        return self.render(
            "errors.html", index=index, rel=rel, title=self.name(index, rel), kind="errors", analysis=analysis
        )
