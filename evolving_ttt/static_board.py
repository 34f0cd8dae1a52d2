"""The players written out for the board in the rendered book, which plays without a kernel (chapter 26).

The rendered pages cannot run Python, so the play chapter carries a small board in plain JavaScript
(``book/_static/play_board.js``). It never computes a move itself: it looks each move up in the tables
this module writes to ``book/_static/ttt_players.js``, so the page plays exactly what the Python
players play.

Every player of the arena fits one form on every board: with probability ``epsilon`` a uniformly random
empty square, otherwise a uniformly random square of a set ``S`` (one square for a deterministic player;
the best moves for the perfect player; the rule candidates for Fogel's rule base). So each side of a
player is one number ``epsilon`` and, for each of the 19,683 base-3 board numbers, the set ``S`` as a
9-bit mask (bit ``s`` for square ``s``), written as two base-32 digits; ``00`` where the side is not to
move. :func:`decode_side` reads it back, and the tests check that it gives the policy tables again.
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

SCRIPT = Path(__file__).resolve().parents[1] / "book" / "_static" / "ttt_players.js"
"""Where the tables are written for the book's pages."""


def encode_side(policy: np.ndarray, mark: int, name: str = "player") -> tuple[float, str]:
    """Write one side's policy table as ``(epsilon, codes)``: 19,683 two-digit masks (chapter 26).

    Raises
    ------
    ValueError
        If some board's probabilities do not have the form epsilon-random plus uniform over a set, with
        one epsilon for the whole side.
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
    if not np.allclose(decode_side(epsilon, text, mark), policy, rtol=0, atol=1e-9):
        raise ValueError(
            f"{name} as {SYMBOLS[mark]} does not fit the static board's form (epsilon-random, else uniform over "
            "a set of squares, one epsilon for the side)"
        )
    return epsilon, text


def decode_side(epsilon: float, codes: str, mark: int) -> np.ndarray:
    """Read ``(epsilon, codes)`` back into a policy table, as the page's JavaScript does (chapter 26)."""
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
