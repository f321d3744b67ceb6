"""``report --html``: the viewer's pages written as files that open from disk (no server): each
given directory's page, every attempt or run below it, and the error analysis, in one folder. The folder
lies in a report folder that may be inside a received directory: every file is written through
``tools/safe_files.py`` below the folder's parent, no link followed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autonesy.graph import results
from autonesy.graph.view import pages
from autonesy.graph.view.files import OutsideRoots, Roots
from autonesy.graph.view.site import PLOTLY_JS, STATIC_DIR, Site, StaticLinks, plotly_js
from autonesy.tools import safe_files


def export_html(dirs: Sequence[str | Path], out: str | Path, *, compare_published: bool = False) -> Path:
    """Write the site into ``out``; returns the path of its ``index.html``."""
    out = Path(out)
    root = out.parent
    roots = Roots(dirs)
    site = Site(roots, StaticLinks(), compare_published=compare_published)
    safe_files.make_dirs(out / "static", root=root)
    for asset in [*STATIC_DIR.iterdir(), plotly_js()]:  # our package's files: read as files, not through links
        name = PLOTLY_JS if asset == plotly_js() else asset.name
        safe_files.write_bytes(out / "static" / name, safe_files.read_bytes(asset), root=root)
    for index, given in enumerate(roots.dirs):
        for run_dir in _pages_below(given):
            rel = "" if run_dir == given else run_dir.relative_to(given).as_posix()
            try:
                html = site.page(index, rel)
            except OutsideRoots:  # a symlink that leads out of the directory: not exported
                continue
            safe_files.write_text(out / site.links.page(index, rel), html, root=root)
        if pages.directory_kind(given) in ("sweep", "folder"):
            safe_files.write_text(out / site.links.errors(index, ""), site.errors(index, ""), root=root)
    sweeps = site.sweeps()
    if len(sweeps) >= 2:  # no server to ask: the first two sweeps side by side, linked from the sweep pages
        first, second = sweeps[0]["value"], sweeps[1]["value"]
        safe_files.write_text(out / StaticLinks.COMPARE, site.compare(first, second), root=root)
    return out / "index.html"


def _pages_below(root: Path) -> list[Path]:
    """The directory itself, and every page its page links to."""
    kind = pages.directory_kind(root)
    if kind == "sweep":
        attempts = root / results.ATTEMPTS_DIR
        return [root] + (sorted(p for p in attempts.iterdir() if p.is_dir()) if attempts.is_dir() else [])
    if kind == "folder":
        return [root] + [p for entry in pages.folder_entries(root) for p in _pages_below(entry)]
    return [root]
