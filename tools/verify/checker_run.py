"""Running a checker — generated code in the sandbox, or a trusted user checker — on a response.

**Generated checkers** (LLM-written Python) define ``check(response) -> bool`` and run only in the
sandbox (:mod:`autonesy.tools.sandbox`). The response text travels to the sandbox process in
``inputs`` (JSON data, verbatim); trusted setup code hides it in a closure before the program runs,
and trusted collect code hands it to ``check`` as its only argument. The checker never receives it
any other way, cannot change it (it holds a copy in another process; the text the verdict is
computed over is the caller's own string), and cannot make the harness check some other text:
collect verifies the SHA-256 of what it passes against the caller's hash. The return value must be
exactly ``True`` or ``False``; a program may also define ``spans(response) -> list[str]``, the
parts of the response its result rests on (the forbidden words found, the sentences over a limit),
which the explanation quotes — optional, and never an error. The text helpers of
:data:`autonesy.tools.verify.checkers.CHECKER_HELPERS` (``words``, ``sentences``, ``body_text``, …) are
defined before the program runs (trusted setup), so a checker can be a few lines that use them. Anything else (``"yes"``, ``1``, ``None``, a modified text) is a
``type`` error that the checking agent reflects on, as are crashes, timeouts and missing
definitions. What goes back to the checking agent (error message, printed output) is capped and
never contains the response: any stretch of it that also occurs in the response is cut out
(``raise ValueError(response)`` or ``print(response[:500])`` cannot carry it into the prompt).

**User checkers** (``@checker``-marked functions from a module the user names, see
:mod:`autonesy.tools.verify.user_checkers`) are the user's own trusted code and are called in-process
with the response and the arguments the checking agent chose; the same bool rule applies.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from autonesy.tools.sandbox import SandboxError, SandboxLimits, run_program
from autonesy.tools.verify.checkers import helper_source

MESSAGE_CHARS = 2000  # error text and printed output that go back to the checking agent
QUOTE_CHARS = 24  # a stretch this long that also occurs in the response is cut out
CHECKER_LIMITS = SandboxLimits(
    cpu_seconds=5.0, wall_seconds=10.0, memory_bytes=1 << 30, output_bytes=256 << 10, result_bytes=64 << 10
)
OUTPUT_NAME = "__autonesy_output__"

_SETUP = (
    helper_source()
    + f"""

def __autonesy_hold(text):
    def held():
        return text
    return held
{OUTPUT_NAME} = __autonesy_hold({OUTPUT_NAME})
del __autonesy_hold
"""
)

_COLLECT = """
import hashlib as _hashlib

EXPECTED = {expected!r}


def _describe(value):
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{{type(value).__name__}} {{text}}"


def collect(ns, submitted):
    holder = ns.get({name!r})
    text = holder() if callable(holder) else None
    if not isinstance(text, str) or _hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != EXPECTED:
        raise ProgramError("forbidden", "the program replaced the response it is given; a checker may only read "
                           "its argument")
    fn = ns.get("check")
    if not callable(fn):
        raise ProgramError("missing_definition", "the program does not define a function check(response)")
    value = fn(text)
    if type(value) is not bool:
        raise ProgramError("type", f"check(response) returned {{_describe(value)}}; it must return True or False "
                           "(a bool), nothing else")
    found = []
    spans = ns.get("spans")
    if callable(spans):  # optional: the parts of the response the result rests on; a failure here is no error
        try:
            listed = spans(text)
            found = [str(s)[:500] for s in listed][:20] if isinstance(listed, (list, tuple)) else []
        except Exception:
            found = []
    return {{"value": value, "spans": found}}
"""


def text_hash(text: str) -> str:
    """SHA-256 of a text (lone surrogates kept): checker results are cached by response hash."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class CheckerRun:
    """One run of a checker on a response: its bool, or why there is none."""

    ok: bool
    value: bool | None = None
    error_kind: str | None = None  # a sandbox error kind (syntax, runtime, type, timeout, ...)
    message: str = ""  # for the LLM: what went wrong, where
    line: int | None = None
    seconds: float = 0.0
    stdout: str = ""
    spans: tuple[str, ...] = ()  # the parts of the response the result rests on, when the checker names them

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON data."""
        return {
            "ok": self.ok,
            "value": self.value,
            "spans": list(self.spans),
            "error_kind": self.error_kind,
            "message": self.message,
            "line": self.line,
            "seconds": round(self.seconds, 4),
            "stdout": self.stdout,
        }

    def describe(self) -> str:
        """The outcome in a few words for prompts and explanations."""
        return f"returned {self.value}" if self.ok else f"[{self.error_kind}] {self.message}"


def run_checker_code(
    code: str, response: str, *, limits: SandboxLimits = CHECKER_LIMITS, prewarm: bool = True
) -> CheckerRun:
    """Run ``check(response)`` of a generated program in the sandbox; :class:`SandboxError` if it cannot run."""
    collect = _COLLECT.format(expected=text_hash(response), name=OUTPUT_NAME)
    result = run_program(
        code, inputs={OUTPUT_NAME: response}, setup=_SETUP, collect=collect, limits=limits, prewarm=prewarm
    )
    stdout = scrub(result.stdout[-MESSAGE_CHARS:], response)
    if result.ok:
        data = result.result
        if isinstance(data, dict) and type(data.get("value")) is bool:
            spans = tuple(str(span) for span in data.get("spans") or [] if isinstance(span, str))
            return CheckerRun(True, data["value"], seconds=result.duration, stdout=stdout, spans=spans)
        return CheckerRun(False, None, "type", "the checker's result could not be read", seconds=result.duration)
    if result.error_kind == "internal":  # fail closed: no verdict without the sandbox, and no reflection on it
        raise SandboxError(result.message)
    message = scrub(result.message[:MESSAGE_CHARS], response)
    if result.error_kind == "missing_definition" and "submit" in message:
        message = "the program does not define a function check(response)"
    return CheckerRun(False, None, result.error_kind, message, result.line, result.duration, stdout)


def scrub(text: str, response: str) -> str:
    """``text`` with every stretch of ``QUOTE_CHARS`` or more characters that occurs in ``response`` cut out.

    A stretch that long contains a ``QUOTE_CHARS // 2``-character piece of the response starting at
    a multiple of ``QUOTE_CHARS // 2``, so those pieces (a set, linear in the response) find it;
    each hit is grown both ways while the text still occurs in the response.
    """
    step = QUOTE_CHARS // 2
    if len(response) < QUOTE_CHARS or len(text) < QUOTE_CHARS:
        return text
    pieces = {response[i : i + step] for i in range(0, len(response) - step + 1, step)}
    cut = [False] * len(text)
    for i in range(len(text) - step + 1):
        if text[i : i + step] in pieces:
            start, end = i, i + step
            while start > 0 and text[start - 1 : end] in response:
                start -= 1
            while end < len(text) and text[start : end + 1] in response:
                end += 1
            if end - start >= QUOTE_CHARS:
                cut[start:end] = [True] * (end - start)
    out, i = [], 0
    while i < len(text):
        if cut[i]:
            while i < len(text) and cut[i]:
                i += 1
            out.append("<part of the response>")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def run_user_function(fn: Callable[..., Any], response: str, arguments: Mapping[str, Any] | None = None) -> CheckerRun:
    """Call a trusted user checker ``fn(response, **arguments)``; it must return a bool."""
    arguments = dict(arguments or {})
    start = time.perf_counter()
    try:
        inspect.signature(fn).bind(response, **arguments)
    except TypeError as error:
        return CheckerRun(
            False,
            None,
            "type",
            f"bad arguments for {getattr(fn, '__name__', 'the checker')}: {error}",
            seconds=time.perf_counter() - start,
        )
    try:
        value = fn(response, **arguments)
    except Exception as error:  # noqa: BLE001 - the user's checker failed; recorded, not raised
        return CheckerRun(
            False, None, "runtime", f"{type(error).__name__}: {error}", seconds=time.perf_counter() - start
        )
    if type(value) is not bool:
        return CheckerRun(
            False,
            None,
            "type",
            f"the checker returned {type(value).__name__} {value!r:.60}; expected a bool",
            seconds=time.perf_counter() - start,
        )
    return CheckerRun(True, value, seconds=time.perf_counter() - start)


__all__ = ["CHECKER_LIMITS", "CheckerRun", "run_checker_code", "run_user_function", "scrub", "text_hash"]
