"""The command line's argument types that every system's command shares (chapter 7)."""

from __future__ import annotations

import argparse


def whole_number(text: str) -> int:
    """An ``argparse`` type: a whole number >= 0, with a one-line error otherwise."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0; got {text!r}")
    return value
