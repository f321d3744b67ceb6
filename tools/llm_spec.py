"""The ``--llm`` spec as text that may be shown or written: a password in an endpoint URL redacted.

Lives in tools/ so that what reads results (report, viewer) can show a spec without loading the LLM
backends; how a spec becomes a backend is ``agents/llm/spec.py``.
"""

from __future__ import annotations


def redact_spec(spec: str | None) -> str | None:
    """The spec as it may be shown or written: a password in an endpoint URL becomes ``***``."""
    if not spec or "://" not in spec:
        return spec
    scheme, rest = spec.split("://", 1)
    authority, slash, tail = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return spec
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}{slash}{tail}"
