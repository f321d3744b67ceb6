"""Untrusted directories: every path the viewer opens is resolved inside one of the directories it
was given (so ``..`` and symlinks that lead out are refused), every file it shows is read through
``tools/safe_files.py`` (a link such as ``formula.txt`` → a private file is refused, a FIFO is never
waited on, sizes are capped), and every text passes through one reader that removes environment
secrets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autonesy.graph.trace import environment_secrets
from autonesy.tools import safe_files

VIEW_LIMIT = 64 * 2**20  # bytes of one file shown (a formula or an answer is kilobytes)


class OutsideRoots(ValueError):
    """A requested path that is not inside the directories the viewer serves."""


class Roots:
    """The directories given on the command line, numbered in the URLs (``/r/<index>/<path>``)."""

    def __init__(self, dirs: Sequence[str | Path]) -> None:
        self.dirs = [Path(d).resolve() for d in dirs]
        for given, resolved in zip(dirs, self.dirs):
            if not resolved.is_dir():
                raise FileNotFoundError(f"{given}: not a directory")
        self.secrets = environment_secrets()

    def resolve(self, index: int, relative: str) -> Path:
        """``relative`` inside root ``index``, symlinks followed; refused when it ends up outside."""
        if not 0 <= index < len(self.dirs):
            raise OutsideRoots(f"no directory number {index}")
        root = self.dirs[index]
        if Path(relative).is_absolute():
            raise OutsideRoots(f"{relative}: absolute paths are refused")
        path = (root / relative).resolve()
        if path != root and root not in path.parents:
            raise OutsideRoots(f"{relative}: outside {root.name}")
        return path

    def relative(self, index: int, path: Path) -> str:
        """The URL path of ``path`` (resolved) below root ``index``."""
        rel = Path(path).resolve().relative_to(self.dirs[index])
        return "" if str(rel) == "." else rel.as_posix()

    def redact(self, text: str) -> str:
        """Replace secret values from the environment with ``***`` before a text is shown."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def root_of(self, path: Path) -> Path | None:
        """The given directory ``path`` lies in (paths are built from resolved ones), if any."""
        return next((root for root in self.dirs if root == path or root in path.parents), None)

    def read_text(self, path: Path, default: str | None = None) -> str | None:
        """A file's text with secrets redacted, or ``default`` when it cannot be read or is refused (a link, a
        FIFO, larger than ``VIEW_LIMIT``, outside the given directories)."""
        root = self.root_of(Path(path))
        if root is None:
            return default
        try:
            return self.redact(safe_files.read_text(path, root=root, limit=VIEW_LIMIT))
        except OSError:
            return default

    def read_json(self, path: Path, default: Any = None) -> Any:
        """A JSON object (every file the viewer reads holds one); ``default`` for anything else."""
        text = self.read_text(path)
        if text is None:
            return default
        try:
            value = json.loads(text)
        except ValueError:
            return default
        return value if isinstance(value, dict) else default
