"""``report --html``: the viewer's pages written as files that open from disk (no server): each
given directory's page, every attempt or run below it, and the error analysis, in one folder."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from autonesy.graph import results
from autonesy.graph.view import pages
from autonesy.graph.view.files import OutsideRoots, Roots
from autonesy.graph.view.site import PLOTLY_JS, STATIC_DIR, Site, StaticLinks, plotly_js


def export_html(dirs: Sequence[str | Path], out: str | Path, *, compare_published: bool = False) -> Path:
    """Write the site into ``out``; returns the path of its ``index.html``."""
    out = Path(out)
    roots = Roots(dirs)
    site = Site(roots, StaticLinks(), compare_published=compare_published)
    (out / "static").mkdir(parents=True, exist_ok=True)
    for asset in STATIC_DIR.iterdir():
        shutil.copyfile(asset, out / "static" / asset.name)
    shutil.copyfile(plotly_js(), out / "static" / PLOTLY_JS)
    for index, root in enumerate(roots.dirs):
        for run_dir in _pages_below(root):
            rel = "" if run_dir == root else run_dir.relative_to(root).as_posix()
            try:
                html = site.page(index, rel)
            except OutsideRoots:  # a symlink that leads out of the directory: not exported
                continue
            (out / site.links.page(index, rel)).write_text(html, encoding="utf-8")
        if pages.directory_kind(root) in ("sweep", "folder"):
            (out / site.links.errors(index, "")).write_text(site.errors(index, ""), encoding="utf-8")
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
