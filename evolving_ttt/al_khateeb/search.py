"""Al-Khateeb (2012): the evaluator at the leaves of a deeper search, readable and table-wise (chapter 21).

The book's player (chapter 14) looks one ply ahead. The paper places itself in the line of Fogel's checkers and
chess players, where the evolved network judges the leaves of a minimax search, and it never states a depth. Here
a player of depth ``d`` (:attr:`~evolving_ttt.al_khateeb.evaluator.OnePlySettings.depth`) looks ``d`` plies ahead:

* the **leaves** are the boards ``d`` plies on, and finished games on the way; the evaluator judges them for the
  searching side (:func:`leaf_value`: with the view ``"mover"`` the board is shown with the searching side's
  pieces as +1, with ``"x"`` as it is and negated for O), so one number means "good for me" throughout the tree;
* with winning moves read as ``"rules"``, a finished game with a line is worth :data:`WIN_VALUE` to the searching
  side if it won and ``-WIN_VALUE`` if it lost, beyond any value of the evaluator; with ``"evaluator"`` the
  evaluator judges it like any other leaf (the book's one-ply reading, kept at every depth);
* the searching side takes the largest value, its opponent the smallest (minimax), and the root takes the move of
  the largest value, ties to the lowest square.

With ``d = 1`` this is exactly the one-ply player of chapter 14 (the tests check it move for move).

Two versions. The **readable** one (:func:`minimax_value`, :func:`search_values`, :func:`search_move` with
alpha-beta pruning) searches one board at a time. The **table-wise** one (:func:`search_tables`) does what the
engine needs: a network's move on every one of the 4,520 boards where a side can move, at once. Tic-tac-toe has
only 5,478 positions (:func:`search_positions`); the network judges each of them once, and the values are backed up
``d - 1`` times over the whole table of positions, each step a gather over the nine children of every position
and a maximum or minimum. The tests check the two against each other for ``d = 1`` to 4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.al_khateeb.evaluator import (
    PAPER_ONE_PLY,
    WIN_VALUE,
    OnePlySettings,
    check_weights,
    evaluate_boards,
)
from evolving_ttt.game import (
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    X,
    board_tables,
    check_instance,
    check_mark,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    validate_board,
    winner,
)

# --- The readable search ---------------------------------------------------------------------------------------


def leaf_value(weights: np.ndarray, board: np.ndarray, mark: int, settings: OnePlySettings) -> float:
    """The evaluator's value of ``board`` for the searching side ``mark`` (chapter 21).

    With the view ``"mover"`` the board is shown with ``mark``'s pieces as +1 (for O: the board times -1); with
    ``"x"`` it is shown as it is and the value is negated for O. For a board just after ``mark``'s move, this is
    the value of :func:`evolving_ttt.al_khateeb.evaluator.move_values`.
    """
    if settings.view == "mover":
        return float(evaluate_boards(weights, mark * np.asarray(board, dtype=float)))
    return mark * float(evaluate_boards(weights, board))


def minimax_value(weights: np.ndarray, board: np.ndarray, depth: int, mark: int, settings: OnePlySettings) -> float:
    """The value for ``mark`` of ``board`` searched ``depth`` more plies: plain minimax, every node (chapter 21).

    A finished game with a line is scored by the rules (``+-WIN_VALUE``) when ``settings.winning_moves`` is
    ``"rules"``; otherwise finished games and the boards at depth 0 are judged by :func:`leaf_value`. On the
    other boards the side to move picks: ``mark`` the largest value of a move, its opponent the smallest.
    """
    line = winner(board)
    if line != 0 and settings.winning_moves == "rules":
        return WIN_VALUE if line == mark else -WIN_VALUE
    if depth == 0 or is_game_over(board):
        return leaf_value(weights, board, mark, settings)
    values = [minimax_value(weights, play(board, square), depth - 1, mark, settings) for square in legal_moves(board)]
    return max(values) if player_to_move(board) == mark else min(values)


def search_values(
    weights: np.ndarray, board: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY
) -> tuple[list[int], np.ndarray]:
    """Every legal move of the side to move and its minimax value with ``settings.depth`` plies (chapter 21).

    The move's board is searched ``depth - 1`` further plies; with depth 1 the values are those of
    :func:`evolving_ttt.al_khateeb.evaluator.move_values`.
    """
    mark, moves = player_to_move(board), legal_moves(board)
    values = [minimax_value(weights, play(board, square), settings.depth - 1, mark, settings) for square in moves]
    return moves, np.array(values)


def alpha_beta(
    weights: np.ndarray,
    board: np.ndarray,
    depth: int,
    mark: int,
    settings: OnePlySettings,
    alpha: float = -math.inf,
    beta: float = math.inf,
) -> float:
    """:func:`minimax_value` with alpha-beta pruning (chapter 21).

    The result is exact when it lies strictly between ``alpha`` and ``beta``; when the true value is at most
    ``alpha`` (at least ``beta``) the result is too, and the search stops early. The values are the evaluator's
    numbers themselves, never sums, so pruning changes no bit.
    """
    line = winner(board)
    if line != 0 and settings.winning_moves == "rules":
        return WIN_VALUE if line == mark else -WIN_VALUE
    if depth == 0 or is_game_over(board):
        return leaf_value(weights, board, mark, settings)
    maximising = player_to_move(board) == mark
    best = -math.inf if maximising else math.inf
    for square in legal_moves(board):
        value = alpha_beta(weights, play(board, square), depth - 1, mark, settings, alpha, beta)
        if maximising:
            best, alpha = max(best, value), max(alpha, value)
        else:
            best, beta = min(best, value), min(beta, value)
        if alpha >= beta:
            break  # the other side would never let the game come here
    return best


def search_move(weights: np.ndarray, board: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY) -> int:
    """The move of a player of depth ``settings.depth``: the largest minimax value, ties to the lowest square
    (chapter 21).

    The moves are searched in order with alpha-beta; a later move replaces the best so far only if its value is
    strictly larger, and its search needs to be exact only then, so the window starts at the best value so far.
    """
    mark = player_to_move(board)
    best_move, best = -1, -math.inf
    for square in legal_moves(board):
        value = alpha_beta(weights, play(board, square), settings.depth - 1, mark, settings, best, math.inf)
        if value > best:
            best_move, best = square, value
    return best_move


def search_player(weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY):
    """A move function (board -> square) for the evaluator playing ``mark`` with a search of
    ``settings.depth`` plies (chapter 21)."""
    weights, mark = check_weights(weights).copy(), check_mark(mark)
    check_instance(settings, OnePlySettings, "settings", "a OnePlySettings")

    def player(board: np.ndarray) -> int:
        board = validate_board(board)
        if player_to_move(board) != mark or is_game_over(board):
            raise ValueError("this player moves only on unfinished boards where its side is to move")
        return search_move(weights, board, settings)

    return player


# --- The table-wise search of the engine ------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchPositions:
    """Every position of tic-tac-toe that can arise in play, as tables (chapter 21).

    Attributes
    ----------
    numbers : (5478,)
        Their board numbers, in increasing order.
    index : (19683,)
        ``index[b]``: the place of board number ``b`` in ``numbers``, -1 for boards that cannot arise.
    boards : (5478, 9) float
        The boards, X = +1, O = -1.
    to_move, winner : (5478,)
        The side to move, and the side with a line (0 if none).
    over : (5478,)
        Whether the game is finished.
    children : (5478, 9)
        The place of the position after a move on each square; -1 where the square is taken or the game over.
    """

    numbers: np.ndarray
    index: np.ndarray
    boards: np.ndarray
    to_move: np.ndarray
    winner: np.ndarray
    over: np.ndarray
    children: np.ndarray


@cache
def search_positions() -> SearchPositions:
    """The :class:`SearchPositions`, built once (chapter 21)."""
    tables = board_tables()
    numbers = np.flatnonzero(tables.legal)  # exactly the 5,478 positions reachable in play
    index = np.full(N_BOARDS, -1, dtype=np.int64)
    index[numbers] = np.arange(len(numbers))
    to_move, over = tables.to_move[numbers], tables.over[numbers]
    digit = np.where(to_move == X, MARK_DIGIT[X], MARK_DIGIT[-X])
    after = numbers[:, None] + digit[:, None] * POWERS_OF_3[None, :]
    open_square = tables.empty[numbers] & ~over[:, None]
    children = np.where(open_square, index[np.where(open_square, after, 0)], -1)
    result = SearchPositions(numbers, index, tables.boards[numbers].astype(float), to_move,
                             tables.winner[numbers], over, children)  # fmt: skip
    for array in vars(result).values():
        array.flags.writeable = False
    return result


def search_tables(weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY) -> np.ndarray:
    """The move of each network on every position where ``mark`` is to move, shape ``(networks, 5478)``
    (chapter 21).

    Position ``p`` is ``search_positions().numbers[p]``; positions where ``mark`` is not to move, or the game is
    over, hold -1. The moves are those of :func:`search_move`, to the bit: every leaf is judged once by
    :func:`leaf_value`'s formula (in one batch, which gives the same bits as one board at a time), the rules'
    values replace those of finished games with a line (reading ``"rules"``), and ``depth - 1`` backups give
    every position its minimax value; a move's value is that of the position it leads to.

    The table holds each value for the side to move at its position (the searching side's value, negated where
    the opponent is to move: "negamax"), so that every backup is one minimum: a position is worth minus the
    smallest value of the positions its moves lead to. Negation and minimum change no bit.
    """
    weights = check_weights(weights)
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (networks, 72); got {weights.shape}")
    mark = check_mark(mark)
    check_instance(settings, OnePlySettings, "settings", "a OnePlySettings")
    positions = search_positions()
    n = len(positions.numbers)
    children = np.where(positions.children >= 0, positions.children, n)  # column n: +inf, never the minimum

    # Which positions are reached after j plies from a board where ``mark`` moves: those where ``mark`` is to move
    # after an even number, the other side after an odd one. The leaves are the positions at the horizon (depth)
    # and the finished ones; backup j fills the positions at depth - j.
    def at_depth(j: int) -> np.ndarray:
        return positions.to_move == (mark if j % 2 == 0 else -mark)

    judged = positions.over | at_depth(settings.depth)
    if settings.winning_moves == "rules":
        judged &= positions.winner == 0
    seen = positions.boards[judged] * (mark if settings.view == "mover" else 1)
    side = np.where(positions.to_move == mark, 1.0, -1.0)  # +1 where the searching side is to move
    roots = at_depth(0) & ~positions.over
    moves = np.full((len(weights), n), -1, dtype=np.int8)
    for start in range(0, len(weights), 16):
        part = weights[start : start + 16]
        values = np.zeros((len(part), n + 1))
        values[:, n] = np.inf
        leaf = evaluate_boards(part[:, None, :], seen)  # (networks, judged positions)
        values[:, :n][:, judged] = leaf * side[judged] * (mark if settings.view == "x" else 1)
        if settings.winning_moves == "rules":
            lines = positions.winner != 0
            values[:, :n][:, lines] = np.where(positions.winner[lines] == positions.to_move[lines], WIN_VALUE,
                                               -WIN_VALUE)  # fmt: skip
        for j in range(settings.depth - 1, 0, -1):
            filled = at_depth(j) & ~positions.over
            values[:, :n][:, filled] = -values[:, children[filled]].min(axis=-1)
        # A move's value for ``mark`` is minus the value of its position for the opponent: the smallest wins.
        moves[start : start + len(part), roots] = values[:, children[roots]].argmin(axis=-1)  # ties: lowest square
    return moves


def move_tables(weights: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY) -> np.ndarray:
    """Each network's move on every unfinished position, whichever side is to move, shape ``(networks, 5478)``
    (-1 on finished positions) (chapter 21)."""
    positions = search_positions()
    as_x, as_o = search_tables(weights, X, settings), search_tables(weights, -X, settings)
    return np.where(positions.to_move == X, as_x, as_o)
