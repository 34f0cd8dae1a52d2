"""The players written out for the board in the rendered book, which plays without a kernel (chapter 26).

The rendered pages cannot run Python, so the play chapter carries a small board in plain JavaScript
(``book/_static/play_board.js``). It never computes a move itself: it looks each move up in the tables
this module writes to ``book/_static/ttt_players.js``, so the page plays exactly what the Python
players play.

Nearly every player of the arena fits one form on every board: with probability ``epsilon`` a uniformly random
empty square, otherwise a uniformly random square of a set ``S`` (one square for a deterministic player;
the best moves for the perfect player; the rule candidates for Fogel's rule base). So each side of a
player is one number ``epsilon`` and, for each of the 19,683 base-3 board numbers, the set ``S`` as a
9-bit mask (bit ``s`` for square ``s``), written as two base-32 digits; ``00`` where the side is not to
move. :func:`decode_side` reads it back, and the tests check that it gives the policy tables again.

A side that does not fit (the MCTS players, whose probabilities are shares of searches, chapter 27) is written in
the *weighted* form when its probabilities are whole numbers over one denominator of at most
:data:`MAX_WEIGHT` (the 100 searches per board of an MCTS player): ``epsilon`` 0, and codes that begin with ``w``
and hold, for each board number in turn, one digit ``k`` (how many squares it may play there, 0 where the side is
not to move) and ``k`` groups of the square's digit and its weight in two base-32 digits; the square is drawn with
probability weight / (sum of the board's weights).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evolving_ttt.game import N_BOARDS, SYMBOLS, O, X, board_tables, check_instance
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.records import write_text_atomic

DIGITS = "0123456789abcdefghijklmnopqrstuv"
"""The 32 digits of a mask's two-character code."""

MAX_WEIGHT = 32 * 32 - 1
"""The largest weight of the weighted form (two base-32 digits), so the largest denominator of its probabilities."""

SCRIPT = Path(__file__).resolve().parents[1] / "book" / "_static" / "ttt_players.js"
"""Where the tables are written for the book's pages."""


def encode_side(policy: np.ndarray, mark: int, name: str = "player") -> tuple[float, str]:
    """Write one side's policy table as ``(epsilon, codes)``: 19,683 two-digit masks (chapter 26).

    A side of another form is written in the weighted form (the module's docstring): ``(0.0, "w...")``.

    Raises
    ------
    ValueError
        If some board's probabilities do not have the form epsilon-random plus uniform over a set, with
        one epsilon for the whole side, nor are whole numbers over one denominator up to :data:`MAX_WEIGHT`.
    """
    tables = board_tables()
    codes = np.zeros(N_BOARDS, dtype=np.int64)
    epsilons = []
    for i in boards_to_move(mark):
        row, empty = policy[i], tables.empty[i]
        low, high = row[empty].min(), row.max()
        chosen = row > low + 1e-12 if high - low > 1e-12 else row > 0
        if high - low > 1e-12:  # two levels: the random move's share is low * (number of empty squares)
            epsilons.append(low * tables.n_empty[i])
        codes[i] = int((chosen.astype(np.int64) << np.arange(9)).sum())
    epsilon = float(np.median(epsilons)) if epsilons else 0.0
    text = "".join(DIGITS[c // 32] + DIGITS[c % 32] for c in codes)
    if np.allclose(decode_side(epsilon, text, mark), policy, rtol=0, atol=1e-9):
        return epsilon, text
    text = _weighted_codes(policy, mark)
    if text is None or not np.allclose(decode_side(0.0, text, mark), policy, rtol=0, atol=1e-9):
        raise ValueError(
            f"{name} as {SYMBOLS[mark]} does not fit the static board's form (epsilon-random, else uniform over "
            f"a set of squares, one epsilon for the side), nor its weighted form (whole numbers over one "
            f"denominator up to {MAX_WEIGHT})"
        )
    return 0.0, text


def _weighted_codes(policy: np.ndarray, mark: int) -> str | None:
    """The weighted form's codes of ``policy`` (the module's docstring), or ``None`` if no denominator up to
    :data:`MAX_WEIGHT` makes every probability a whole number."""
    rows = boards_to_move(mark)
    table = np.asarray(policy, dtype=float)[rows]
    for denominator in range(1, MAX_WEIGHT + 1):
        scaled = table * denominator
        weights = np.round(scaled)
        if np.all(np.abs(scaled - weights) <= 1e-9 * denominator):
            break
    else:
        return None
    weights = np.zeros((N_BOARDS, 9), dtype=np.int64)
    weights[rows] = np.round(table * denominator).astype(np.int64)
    parts = ["w"]
    for row in weights:
        squares = np.flatnonzero(row)
        parts.append(str(len(squares)) + "".join(f"{s}{DIGITS[row[s] // 32]}{DIGITS[row[s] % 32]}" for s in squares))
    return "".join(parts)


def decode_side(epsilon: float, codes: str, mark: int) -> np.ndarray:
    """Read ``(epsilon, codes)`` back into a policy table, as the page's JavaScript does (chapter 26)."""
    if codes.startswith("w"):
        return _decode_weighted(codes, mark)
    if len(codes) != 2 * N_BOARDS:
        raise ValueError(f"codes must hold {2 * N_BOARDS} characters; got {len(codes)}")
    masks = np.array([DIGITS.index(codes[2 * i]) * 32 + DIGITS.index(codes[2 * i + 1]) for i in range(N_BOARDS)])
    chosen = (masks[:, None] >> np.arange(9)) & 1
    tables = board_tables()
    table = np.zeros(POLICY_SHAPE)
    rows = boards_to_move(mark)
    n_chosen = chosen[rows].sum(axis=1, keepdims=True)
    table[rows] = epsilon * tables.empty[rows] / tables.n_empty[rows, None] + (1 - epsilon) * chosen[rows] / n_chosen
    return table


def _decode_weighted(codes: str, mark: int) -> np.ndarray:
    """The policy table of the weighted form's ``codes`` (the module's docstring)."""
    weights = np.zeros(POLICY_SHAPE)
    at = 1
    try:
        for board in range(N_BOARDS):
            k = int(codes[at])
            for j in range(k):
                square, high, low = codes[at + 1 + 3 * j : at + 4 + 3 * j]
                weights[board, int(square)] = DIGITS.index(high) * 32 + DIGITS.index(low)
            at += 1 + 3 * k
    except (ValueError, IndexError):
        raise ValueError(f"codes in the weighted form are damaged at character {at}") from None
    if at != len(codes):
        raise ValueError(f"codes in the weighted form must end after board {N_BOARDS - 1}; {len(codes) - at} more")
    table = np.zeros(POLICY_SHAPE)
    rows = boards_to_move(mark)
    totals = weights[rows].sum(axis=1, keepdims=True)
    if np.any(totals == 0):
        raise ValueError(f"codes in the weighted form give no move on board {rows[np.flatnonzero(totals == 0)[0]]}")
    table[rows] = weights[rows] / totals
    return table


def players_script(players: Sequence[ArenaPlayer]) -> str:
    """The JavaScript file that defines ``window.TTT_PLAYERS`` for the page's board (chapter 26)."""
    entries = []
    for player in players:
        check_instance(player, ArenaPlayer, "players", "a sequence of ArenaPlayer")
        sides = {}
        for mark in (X, O):
            epsilon, codes = encode_side(player.policy(mark), mark, player.name)
            sides[SYMBOLS[mark]] = {"epsilon": round(epsilon, 12), "codes": codes}
        entries.append({"name": player.name, "system": player.system, "description": player.description,
                        "deterministic": player.deterministic, "sides": sides})  # fmt: skip
    body = json.dumps(entries, separators=(",", ":"))
    return (
        "// Written by evolving_ttt.static_board.write_players_script from the Python players; do not edit.\n"
        f"window.TTT_PLAYERS = {body};\n"
    )


def write_players_script(players: Sequence[ArenaPlayer], path: str | Path = SCRIPT) -> Path:
    """Write :func:`players_script` to exactly ``path`` (by default the book's static folder) and return the path.

    The file is replaced whole or not at all (:func:`evolving_ttt.records.write_text_atomic`); a folder missing on
    the way is made.
    """
    path = Path(path)
    text = players_script(players)  # every player is checked before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, text, "players script")
