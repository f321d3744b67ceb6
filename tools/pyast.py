"""``parse_python``: the one way our code builds a Python AST, serialised by one lock, and the same
lock put around ``ast.parse`` for everyone else in the process.

CPython 3.11's ``ast`` module keeps the recursion depth of its AST constructor in state shared by
all threads (gh-106905, fixed in 3.12). When a thread switch lands inside a conversion (a garbage
collection run during it can call a finaliser that releases the GIL), another thread's
``ast.parse`` moves that depth and one of them fails with ``SystemError: AST constructor recursion
depth mismatch``. Sweep workers lint and autofix answers in threads, so one attempt in about a
thousand crashed this way. Locking our own parses is not enough: libraries parse too, in the same
threads (``numpy.load`` reads a ``.npy`` header with ``ast.literal_eval``; ``inspect.signature`` of
a built-in parses its text signature), and one such parse beside ours broke a sweep attempt in CI.
So on 3.11, importing this module (``autonesy.tools`` does) replaces ``ast.parse`` by the locked
one; ``tests/tools/test_pyast.py`` checks the stress, the library paths and that no other call
remains in the package.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from typing import Any

_AST_LOCK = threading.RLock()  # re-entrant: a finaliser that runs inside a parse may parse too
_UNLOCKED_PARSE = getattr(ast.parse, "__wrapped__", ast.parse)  # a re-import must not wrap the wrapper


def parse_python(source: str, mode: str = "exec", **options: Any) -> Any:
    """``ast.parse(source, mode=mode, **options)`` with no other thread building an AST meanwhile."""
    return _serialised_parse(source, mode=mode, **options)


@functools.wraps(_UNLOCKED_PARSE)  # ast.parse's signature, and ``__wrapped__`` for a re-import
def _serialised_parse(*args: Any, **kwargs: Any) -> Any:
    with _AST_LOCK:
        return _UNLOCKED_PARSE(*args, **kwargs)


THREAD_SAFE_AST = sys.version_info >= (3, 12)  # gh-106905 fixed: nothing to serialise
if not THREAD_SAFE_AST:
    ast.parse = _serialised_parse  # ast.literal_eval and inspect look ``parse`` up here at each call

__all__ = ["THREAD_SAFE_AST", "parse_python"]
