"""``parse_python``: the one way our code builds a Python AST, serialised by one lock.

CPython 3.11's ``ast`` module keeps the recursion depth of its AST constructor in state shared by
all threads (gh-106905). When a thread switch lands inside a conversion (a garbage collection run
during it can call a finaliser that releases the GIL), another thread's ``ast.parse`` moves that
depth and one of them fails with ``SystemError: AST constructor recursion depth mismatch``. Sweep
workers lint and autofix answers in threads, so one attempt in about a thousand crashed this way.
Every ``ast.parse`` in the package goes through here (``tests/tools/test_pyast.py`` checks both the
stress and that no other call remains).
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_AST_LOCK = threading.RLock()  # re-entrant: a finaliser that runs inside a parse may parse too


def parse_python(source: str, mode: str = "exec", **options: Any) -> Any:
    """``ast.parse(source, mode=mode, **options)`` with no other thread building an AST meanwhile."""
    with _AST_LOCK:
        return ast.parse(source, mode=mode, **options)


__all__ = ["parse_python"]
