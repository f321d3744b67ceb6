"""Integers of any size to and from decimal text: model counts reach 2^(10^5) and more, and Python's ``str`` and ``int``
refuse decimal integers past 4,300 digits (``sys.set_int_max_str_digits``, a guard against quadratic parsing).
``decimal`` converts both ways without that limit, in about linear time (libmpdec)."""

from __future__ import annotations

import decimal


def decimal_text(value: int) -> str:
    """``value`` in decimal, whatever its size."""
    return str(decimal.Decimal(value))


def parse_decimal(text: str, max_digits: int | None = None) -> int:
    """The integer the decimal ``text`` writes (optional sign, ASCII digits), whatever its size; at most
    ``max_digits`` digits when given. Anything else is a ``ValueError``."""
    digits = text.strip().lstrip("+-")
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"not a decimal integer: {text[:40]!r}")
    if max_digits is not None and len(digits) > max_digits:
        raise ValueError(f"a decimal integer of {len(digits):,} digits, more than {max_digits:,}")
    return int(decimal.Decimal(text.strip()))


__all__ = ["decimal_text", "parse_decimal"]
