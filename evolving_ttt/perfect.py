"""Perfect play: the game-theoretic value of every board, the perfect move, and audits (chapter 11).

``minimax_values`` solves the game once by working backwards over the base-3 board index;
``perfect_move`` and ``audit_player`` judge any player of X against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    O,
    Player,
    X,
    board_index,
    board_tables,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    validate_board,
    winner,
)


@cache
def minimax_values() -> np.ndarray:
    """Game-theoretic value (+1 X wins, 0 draw, -1 O wins with best play) of every legal board (chapter 11).

    Indexed by the base-3 board index; nan on boards that cannot arise.
    """
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    # Work backwards from full boards: a board's children have one more mark.
    marks = 9 - tables.n_empty.astype(int)
    for count in range(9, -1, -1):
        for i in np.flatnonzero(tables.legal & (marks == count)):
            if tables.over[i]:
                values[i] = tables.winner[i]
                continue
            mover = int(tables.to_move[i])
            children = i + MARK_DIGIT[mover] * POWERS_OF_3[tables.empty_list[i, : tables.n_empty[i]]]
            values[i] = values[children].max() if mover == X else values[children].min()
    values.flags.writeable = False
    return values


def perfect_move(board: Sequence[int] | np.ndarray) -> int:
    """A move with the best game-theoretic value for the player to move; ties go to the lowest square (chapter 11)."""
    board = validate_board(board)
    moves = legal_moves(board)
    if not moves:
        raise ValueError("the game is over on this board; there is no move to make")
    mover = player_to_move(board)
    values = minimax_values()
    child_values = [mover * values[board_index(play(board, s))] for s in moves]
    return moves[int(np.argmax(child_values))]


@dataclass(frozen=True)
class Audit:
    """How a player of X fares against every possible sequence of O replies (chapter 11).

    Attributes
    ----------
    games, wins, draws, losses
        Counts of the complete games (leaves) of the tree of all O replies.
    positions
        Distinct positions the player meets with X to move.
    mistakes
        Those where its move has a worse game-theoretic value than the position's best move.
    mistake_boards
        The base-3 indices of those positions.
    """

    games: int
    wins: int
    draws: int
    losses: int
    positions: int
    mistakes: int
    mistake_boards: tuple[int, ...]


def audit_player(player: Player) -> Audit:
    """Play ``player`` (X) against every possible sequence of O replies and judge each of its moves (chapter 11)."""
    values = minimax_values()
    counts = {X: 0, O: 0, EMPTY: 0}
    seen: dict[int, bool] = {}

    def walk(board: np.ndarray) -> None:
        if is_game_over(board):
            counts[winner(board)] += 1
            return
        if player_to_move(board) == X:
            i = board_index(board)
            move = player(board)
            if i not in seen:
                seen[i] = values[board_index(play(board, move))] < values[i]
            walk(play(board, move))
        else:
            for square in legal_moves(board):
                walk(play(board, square))

    walk(np.zeros(9, dtype=np.int8))
    mistakes = tuple(sorted(i for i, bad in seen.items() if bad))
    return Audit(
        games=sum(counts.values()), wins=counts[X], draws=counts[EMPTY], losses=counts[O],
        positions=len(seen), mistakes=len(mistakes), mistake_boards=mistakes,
    )  # fmt: skip


def lowest_square_player(board: np.ndarray) -> int:
    """A naive player that always takes the lowest empty square (chapter 11)."""
    return legal_moves(board)[0]
