"""Ling and Lam (2011), Section 2: the move-scoring heuristic the networks learn to imitate (chapter 16).

The heuristic scores every empty square for the player about to place an X. The board is encoded with
X = 1, O = -1 and an empty square = 0.5 (:func:`heuristic_encoding`); an X is put on the square and each
line through it is summed (:func:`line_values`); each of the six possible sums is mapped to a score
(:data:`LINE_SCORES`), and the scores of the square's lines are added up (:func:`square_scores`).
:func:`score_table` does the same for every board index at once; :func:`heuristic_move` plays the
best square (the lowest of equals); :func:`worked_example_boards` finds the boards that reproduce the
two scores the paper quotes for its Figure 1.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    N_BOARDS,
    WIN_LINES,
    O,
    X,
    board_tables,
    check_mark,
    is_game_over,
    line_winners,
    player_to_move,
    validate_board,
)
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move

HEURISTIC_EMPTY = 0.5
"""The value an empty square takes in the heuristic's encoding (and in the networks' input)."""

LINE_SCORES: dict[float, int] = {3.0: 7**7, -1.0: 6**6, 2.5: 5**5, 2.0: 4**4, 1.0: 3**3, 0.5: 2**2}
"""The score of each possible line sum, from the highest priority down (the paper's gamma_6 ... gamma_1).

3 completes X's line, -1 blocks two O's, 2.5 makes two X's with a free square, 2 starts a line in an empty
row, 1 and 0.5 add an X to a line O has already spoiled.
"""

LINES_THROUGH: tuple[tuple[int, ...], ...] = tuple(
    tuple(k for k, line in enumerate(WIN_LINES) if s in line) for s in range(9)
)
"""The winning lines (rows of ``WIN_LINES``) through each square: 3 at a corner, 2 at an edge, 4 at the centre."""


def heuristic_encoding(boards: Sequence[int] | np.ndarray, mark: int = X) -> np.ndarray:
    """Boards (..., 9) in the heuristic's encoding: ``mark``'s squares 1, the opponent's -1, empty 0.5.

    With ``mark=O`` the colours are swapped first, so that the player to place a mark always sees
    itself as X (the paper only describes X to move).
    """
    boards = np.asarray(boards)
    own = boards * check_mark(mark)
    return np.where(own == EMPTY, HEURISTIC_EMPTY, own).astype(float)


def line_values(board: Sequence[int] | np.ndarray, square: int, mark: int = X) -> list[float]:
    """The sums of the lines through ``square`` once ``mark`` is placed there (the paper's evaluated values)."""
    board = validate_board(board)
    if not 0 <= square < 9 or board[square] != EMPTY:
        raise ValueError(f"square must be an empty square 0-8 of the board; got {square!r}")
    encoded = heuristic_encoding(board, mark)
    encoded[square] = 1.0
    return [float(encoded[WIN_LINES[k]].sum()) for k in LINES_THROUGH[square]]


def square_scores(board: Sequence[int] | np.ndarray, mark: int | None = None) -> np.ndarray:
    """The heuristic's final score of every square for ``mark`` (default: the player to move); 0 if occupied.

    Readable version: for each empty square, the scores of :func:`line_values` added up.
    """
    board = validate_board(board)
    mark = player_to_move(board) if mark is None else check_mark(mark)
    scores = np.zeros(9, dtype=np.int64)
    for square in np.flatnonzero(board == EMPTY):
        scores[square] = sum(LINE_SCORES[value] for value in line_values(board, int(square), mark))
    return scores


# The line sums, doubled, are whole numbers from -2 to 6; this table maps 2 * sum + 2 to the score.
_SCORE_BY_DOUBLED_SUM = np.zeros(9, dtype=np.int64)
for _value, _score in LINE_SCORES.items():
    _SCORE_BY_DOUBLED_SUM[int(2 * _value) + 2] = _score


@cache
def score_table(mark: int = X) -> np.ndarray:
    """``square_scores`` for ``mark`` on every base-3 board index at once: an int64 array (19683, 9).

    Vectorized: the encoded boards are built for all indices, each line's sum with the new mark is
    ``1 + (sum of the other two squares)``, and a lookup on the doubled sum gives its score. Computed
    on every index, legal or not (rows of impossible boards are never used); occupied squares score 0.
    """
    encoded = heuristic_encoding(board_tables().boards, mark)  # (19683, 9)
    line_sums = encoded[:, WIN_LINES].sum(axis=-1)  # (19683, 8) sums of the lines as they are
    scores = np.zeros((N_BOARDS, 9), dtype=np.int64)
    for square in range(9):
        for k in LINES_THROUGH[square]:
            with_mark = line_sums[:, k] - encoded[:, square] + 1.0  # the square becomes 1
            scores[:, square] += _SCORE_BY_DOUBLED_SUM[np.rint(2 * with_mark).astype(int) + 2]
    scores[board_tables().boards != EMPTY] = 0
    scores.flags.writeable = False
    return scores


def heuristic_move(board: Sequence[int] | np.ndarray, mark: int | None = None) -> int:
    """The heuristic as a player: the square with the highest score; ties go to the lowest square."""
    board = validate_board(board)
    if is_game_over(board):
        raise ValueError("the game is over on this board; there is no move to make")
    return int(np.argmax(square_scores(board, mark)))


def heuristic_policy(mark: int) -> np.ndarray:
    """The heuristic as a policy table (19683, 9) for ``mark`` (see :mod:`evolving_ttt.outcomes`).

    Vectorized: the first best square of :func:`score_table` on every board where ``mark`` is to move;
    equal to ``policy_table(heuristic_move, mark)``, which asks :func:`heuristic_move` board by board.
    """
    rows = boards_to_move(mark)
    table = np.zeros(POLICY_SHAPE)
    table[rows, np.argmax(score_table(mark)[rows], axis=1)] = 1.0
    return table


def worked_example_boards(best: int = 873_324, second: int = 52_906) -> list[np.ndarray]:
    """Every unfinished board with three X's and three O's whose two highest square scores are the given ones.

    The paper's Figure 1 is lost from our copy; only its two scores remain. This search recovers the
    boards that give them (X is to move on all of them).
    """
    found = []
    for xs in itertools.combinations(range(9), 3):
        others = [s for s in range(9) if s not in xs]
        for os in itertools.combinations(others, 3):
            board = np.zeros(9, dtype=np.int8)
            board[list(xs)], board[list(os)] = X, O
            if line_winners(board):
                continue
            scores = np.sort(square_scores(board, X)[board == EMPTY])[::-1]
            if scores[0] == best and scores[1] == second:
                found.append(board)
    return found
