"""One logic constraint checked on one response from textual parameters (``vifbench check``): the
parameters parsed and validated, the reference checker's verdict, and the evidence it rests on.

Parameters are ``KEY=VALUE`` texts: ``keywords=A,B`` (comma-separated), ``titles=A|B``
(``|``-separated, since a title may hold commas), ``title=TEXT``, ``max=N`` and ``target=N``
(positive integers), ``parity=even|odd``. The semantic types (tone, topic) need a judge and are not
offered here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from autonesy.tools.errors import AutonesyError
from autonesy.tools.verify.checkers import (
    CHECKER_ATTRIBUTE,
    LOGIC_TYPES,
    PARITIES,
    REFERENCE_CHECKERS,
    has_keyword,
    sentences,
    subsection_titles,
    subsections,
    titles,
    word_tolerance,
    words,
)

PARAM_FORMS = {
    "keywords": "keywords=A,B",
    "titles": "titles=A|B",
    "title": "title=TEXT",
    "max": "max=N",
    "target": "target=N",
    "parity": "parity=even|odd",
}


class ConstraintParamError(AutonesyError):
    """A constraint type or parameter that cannot be checked (one line)."""


def param_names(constraint_type: str) -> tuple[str, ...]:
    """The parameters a logic constraint type takes, in its checker's order."""
    if constraint_type not in LOGIC_TYPES:
        raise ConstraintParamError(
            f"unknown constraint type {constraint_type!r}; one of: {', '.join(LOGIC_TYPES)}"
            + (" (tone and topic are semantic: a judge decides them)" if constraint_type in REFERENCE_CHECKERS else "")
        )
    return tuple(getattr(REFERENCE_CHECKERS[constraint_type], CHECKER_ATTRIBUTE).params)


def _value(constraint_type: str, key: str, text: str) -> Any:
    if key in ("keywords", "titles"):
        items = [item.strip() for item in text.split("," if key == "keywords" else "|")]
        if not all(items):
            raise ConstraintParamError(f"{constraint_type}: an empty item in {key}={text!r} ({PARAM_FORMS[key]})")
        return items
    if key in ("max", "target"):
        if not text.strip().isdigit() or int(text) < 1:
            raise ConstraintParamError(f"{constraint_type}: {key} must be a positive integer, not {text!r}")
        return int(text)
    if key == "parity":
        if text not in PARITIES:
            raise ConstraintParamError(f"{constraint_type}: parity must be even or odd, not {text!r}")
        return text
    if not text.strip():
        raise ConstraintParamError(f"{constraint_type}: {key} is empty")
    return text.strip()


def parse_params(constraint_type: str, pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` texts as the checker's parameters; every problem is one ``ConstraintParamError`` line."""
    names = param_names(constraint_type)
    takes = ", ".join(PARAM_FORMS[n] for n in names) or "no parameters"
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep:
            raise ConstraintParamError(f"--param {pair!r} is not KEY=VALUE; {constraint_type} takes {takes}")
        if key not in names:
            raise ConstraintParamError(f"{constraint_type} takes no parameter {key!r}; it takes {takes}")
        if key in params:
            raise ConstraintParamError(f"{constraint_type}: {key} given twice")
        params[key] = _value(constraint_type, key, text)
    missing = [n for n in names if n not in params]
    if missing:
        raise ConstraintParamError(f"{constraint_type} needs --param {PARAM_FORMS[missing[0]]}")
    return params


def evidence(constraint_type: str, response: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """What the verdict rests on: the keywords found, the titles, the long sentences, the counts, the edge words."""
    if constraint_type in ("keyword_inclusion", "keyword_exclusion"):
        found = [k for k in params["keywords"] if has_keyword(response, k)]
        return {"found": found, "absent": [k for k in params["keywords"] if k not in found]}
    if constraint_type == "response_title":
        return {"titles": titles(response)}
    if constraint_type == "response_subsection_titles":
        return {"subsection_titles": subsection_titles(response)}
    if constraint_type == "words_per_sentence":
        counted = [(s, len(words(s))) for s in sentences(response)]
        return {
            "sentences": len(counted),
            "longest": max((n for _, n in counted), default=0),
            "over": [{"sentence": s, "words": n} for s, n in counted if n > params["max"]],
        }
    if constraint_type in ("even_odd_word_count", "total_word_count"):
        count = len(words(response))
        if constraint_type == "total_word_count":
            tolerance = word_tolerance(params["target"])
            return {"words": count, "allowed": [params["target"] - tolerance, params["target"] + tolerance]}
        return {"words": count}
    if constraint_type == "start_end_same_word":
        found = words(response)
        return {"first": found[0] if found else None, "last": found[-1] if found else None}
    parts = []
    for title, body in subsections(response):
        found = words(body)
        parts.append({"title": title, "first": found[0] if found else None, "last": found[-1] if found else None})
    return {"subsections": parts}


def check_constraint(constraint_type: str, response: str, pairs: Iterable[str]) -> dict[str, Any]:
    """``{"verdict": "sat" | "unsat", "evidence": {...}}`` for one logic constraint on one response."""
    params = parse_params(constraint_type, pairs)
    holds = bool(REFERENCE_CHECKERS[constraint_type](response, **params))
    return {"verdict": "sat" if holds else "unsat", "evidence": evidence(constraint_type, response, params)}


__all__ = ["PARAM_FORMS", "ConstraintParamError", "check_constraint", "evidence", "param_names", "parse_params"]
