"""The command line's argument types that every system's command shares (chapter 7)."""

from __future__ import annotations

import argparse

LARGEST_WHOLE_NUMBER = 2**63 - 1
"""The largest number an option takes: every count and seed fits a 64-bit integer (so that a record can hold it and
a memory estimate can weigh it); the memory estimates refuse far smaller counts than this."""


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``"1 run"``, ``"2 runs"``, ``"1,000 generations"``: a count with its noun in the right number."""
    word = singular if count == 1 else (plural or singular + "s")
    return f"{count:,} {word}"


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:30]) + f"... ({len(text)} characters)"


def whole_number(text: str) -> int:
    """An ``argparse`` type: a whole number from 0 to :data:`LARGEST_WHOLE_NUMBER`, with a one-line error otherwise."""
    try:
        value = int(text)
    except ValueError:  # not a number, or more digits than Python converts
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0; got {_shown(text)}")
    if value > LARGEST_WHOLE_NUMBER:
        raise argparse.ArgumentTypeError(f"expected a whole number up to 2**63 - 1; got {_shown(text)}")
    return value
