"""Al-Khateeb's one-ply player compiled for the engine: each move searched once, and the new games of a generation.

* :func:`search_moves`: the one-ply moves of many (network, board) pairs, in one compiled loop
  (:func:`_one_ply_moves`) with the arithmetic of :func:`~evolving_ttt.al_khateeb.evaluator.evaluate_boards`;
* :func:`play_new_games`: the games of one generation of :func:`~evolving_ttt.al_khateeb.engine.coevolve` in
  lockstep, ply by ply, each (network, board) a network meets for the first time searched by :func:`_one_ply_moves`
  and every move kept in the engine's tables;
* :func:`swapped_index`: board numbers with X and O exchanged.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from evolving_ttt.al_khateeb.evaluator import WIN_VALUE
from evolving_ttt.game import MARK_DIGIT, N_BOARDS, POWERS_OF_3, O, X, board_tables
from evolving_ttt.numerics import JIT_OPTIONS, tanh_scalar


@cache
def swapped_index() -> np.ndarray:
    """``swapped_index()[i]``: the number of board ``i`` with X and O exchanged (chapter 14).

    Board ``i`` seen by O, with O's pieces as +1, is the board numbered ``swapped_index()[i]``.
    """
    digits = (np.arange(N_BOARDS)[:, None] // POWERS_OF_3) % 3
    swapped = np.where(digits == 0, 0, 3 - digits) @ POWERS_OF_3
    swapped.flags.writeable = False
    return swapped


@cache
def _board_rows() -> np.ndarray:
    """Every board as floats, one row per board number: shape (19683, 9)."""
    return np.ascontiguousarray(board_tables().boards, dtype=np.float64)


@numba.njit(**JIT_OPTIONS)
def _tanh_in_place(values):
    for i in range(values.size):  # a loop of its own, so that it runs on vector registers
        values[i] = tanh_scalar(values[i])


@numba.njit(**JIT_OPTIONS)
def _one_ply_moves(weights, boards, squares, counts, step, seen_index, board_rows, negate, win_mark, winners, out):
    """The search of :func:`search_moves`: every move's afterstate judged by its board's own network with
    :func:`~evolving_ttt.al_khateeb.evaluator.evaluate_boards`' arithmetic (each node: its bias, then input 0, 1,
    ... times its weight added one at a time; the portable tanh), layer by layer over all afterstates at once, and
    the first of the highest values kept.

    ``seen_index`` maps an afterstate to the board the network is shown; ``negate`` turns the value to the mover's
    side; a move that wins is worth :data:`WIN_VALUE` when ``win_mark`` is the mover (0: winning moves are left to
    the evaluator).
    """
    starts = np.zeros(boards.shape[0] + 1, dtype=np.int64)
    for k in range(boards.shape[0]):
        starts[k + 1] = starts[k] + counts[boards[k]]
    n = starts[-1]
    first, second, third = np.empty((n, 5)), np.empty((n, 3)), np.empty(n)
    for k in range(boards.shape[0]):  # 9 inputs: weights 0-44 (input-major), biases 45-49
        for j in range(starts[k + 1] - starts[k]):
            seen = seen_index[boards[k] + step[squares[boards[k], j]]]
            for node in range(5):
                total = weights[k, 45 + node]
                for i in range(9):
                    total += board_rows[seen, i] * weights[k, 5 * i + node]
                first[starts[k] + j, node] = total
    _tanh_in_place(first.reshape(-1))
    for k in range(boards.shape[0]):  # 5 inputs: weights 50-64, biases 65-67
        for item in range(starts[k], starts[k + 1]):
            for node in range(3):
                total = weights[k, 65 + node]
                for i in range(5):
                    total += first[item, i] * weights[k, 50 + 3 * i + node]
                second[item, node] = total
    _tanh_in_place(second.reshape(-1))
    for k in range(boards.shape[0]):  # 3 inputs: weights 68-70, bias 71
        for item in range(starts[k], starts[k + 1]):
            total = weights[k, 71]
            for i in range(3):
                total += second[item, i] * weights[k, 68 + i]
            third[item] = total
    _tanh_in_place(third)
    for k in range(boards.shape[0]):
        best, best_square = 0.0, squares[boards[k], 0]
        for j in range(starts[k + 1] - starts[k]):
            square = squares[boards[k], j]
            value = -third[starts[k] + j] if negate else third[starts[k] + j]
            if win_mark != 0 and winners[boards[k] + step[square]] == win_mark:
                value = WIN_VALUE
            if j == 0 or value > best:
                best, best_square = value, square
        out[k] = best_square


def search_moves(weights: np.ndarray, boards: np.ndarray, mark: int, view: str, winning_moves: str) -> np.ndarray:
    """The one-ply move of network ``weights[k]`` on board number ``boards[k]``, all at once (chapter 14).

    Every board must have ``mark`` to move in an unfinished game. ``weights`` has shape ``(m, 72)``, ``boards``
    ``(m,)``. The same moves as :func:`evolving_ttt.al_khateeb.evaluator.one_ply_move`, to the bit: the compiled
    loop :func:`_one_ply_moves` repeats :func:`~evolving_ttt.al_khateeb.evaluator.evaluate_boards`' sums in its
    order, node by node.
    """
    tables = board_tables()
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    out = np.zeros(len(boards), dtype=np.int64)
    if len(boards):
        m = 0 if mark == X else 1
        steps, seen, negates, win_marks = _reading(view, winning_moves)
        _one_ply_moves(weights, boards, _empty_squares(), tables.n_empty, steps[m], seen[m], _board_rows(), negates[m],
                       win_marks[m], tables.winner, out)  # fmt: skip
    return out


@cache
def _reading(view: str, winning_moves: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`_one_ply_moves` needs of the player's reading for each mover, X then O (read-only): the step a
    move adds to the board number on each square, the index of the board the network is shown for each afterstate
    (O's boards with X and O exchanged in the "mover" view), whether the value is negated (O in the "x" view), and
    the mover's mark when a winning move is worth :data:`WIN_VALUE` (the "rules" reading; 0 otherwise)."""
    steps = np.stack([(MARK_DIGIT[mark] * POWERS_OF_3).astype(np.int64) for mark in (X, O)])
    seen = np.stack([_identity_index(), swapped_index() if view == "mover" else _identity_index()])
    negates = np.array([False, view == "x"])
    win_marks = np.array([X, O] if winning_moves == "rules" else [0, 0], dtype=np.int64)
    for array in (steps, seen, negates, win_marks):
        array.flags.writeable = False
    return steps, seen, negates, win_marks


@cache
def _identity_index() -> np.ndarray:
    index = np.arange(N_BOARDS, dtype=np.int64)
    index.flags.writeable = False
    return index


@cache
def _empty_squares() -> np.ndarray:
    squares = board_tables().empty_list.astype(np.int64)
    squares.flags.writeable = False
    return squares


@numba.njit(**JIT_OPTIONS)
def _play_games(game_x, game_o, weights, ids, known_moves, known_by, squares, counts, steps, seen_indexes, board_rows,
                negates, win_marks, winners, over, out):  # fmt: skip
    """:func:`play_new_games`; the per-mark arguments are indexed by the ply's parity (0: X moves, 1: O)."""
    games = game_x.shape[0]
    board = np.zeros(games, dtype=np.int64)
    playing = np.arange(games)
    pending = np.empty(games, dtype=np.int64)
    left = games
    for ply in range(9):
        m = ply % 2
        movers = game_x if m == 0 else game_o
        count = 0  # the (network, board) pairs met for the first time at this ply, each once
        for q in range(left):
            mover = movers[playing[q]]
            key = mover * N_BOARDS + board[playing[q]]
            if known_by[key] != ids[mover]:
                known_by[key] = ids[mover]
                pending[count] = key
                count += 1
        if count:
            keys = pending[:count]
            networks = keys // N_BOARDS
            moves = np.empty(count, dtype=np.int64)
            _one_ply_moves(weights[networks], keys % N_BOARDS, squares, counts, steps[m], seen_indexes[m], board_rows,
                           negates[m], win_marks[m], winners, moves)  # fmt: skip
            for i in range(count):
                known_moves[keys[i]] = moves[i]
        still = 0
        for q in range(left):
            game = playing[q]
            board[game] += steps[m, known_moves[movers[game] * N_BOARDS + board[game]]]
            if not over[board[game]]:
                playing[still] = game
                still += 1
        left = still
    for game in range(games):
        out[game] = winners[board[game]]


def play_new_games(game_x: np.ndarray, game_o: np.ndarray, weights: np.ndarray, ids: np.ndarray,
                   known_moves: np.ndarray, known_by: np.ndarray, view: str, winning_moves: str) -> np.ndarray:
    """The winners (+1 X, -1 O, 0 a draw) of the games of network ``game_x[k]`` (X) against ``game_o[k]`` (O).

    ``weights`` (networks, 72) are the networks by number, ``ids[n]`` the identity of network n (its number of birth).
    ``known_moves`` and ``known_by`` (networks x 19,683, flat) are the engine's tables: the move of network n on
    board b, at ``n * 19683 + b``, and the identity of the network that worked it out. Every move is read from them;
    a pair a network meets for the first time (its identity not in ``known_by``) is searched first, as
    :func:`search_moves` searches it, and written in. The games advance in lockstep, one ply at a time; the pairs
    met at a ply are searched together, in the order they are met (a network's move on a board does not depend on
    the order).
    """
    tables = board_tables()
    steps, seen, negates, win_marks = _reading(view, winning_moves)
    out = np.zeros(len(game_x), dtype=np.int8)
    _play_games(np.ascontiguousarray(game_x, dtype=np.int64), np.ascontiguousarray(game_o, dtype=np.int64),
                np.ascontiguousarray(weights, dtype=np.float64), ids, known_moves, known_by, _empty_squares(),
                tables.n_empty, steps, seen, _board_rows(), negates, win_marks, tables.winner, tables.over,
                out)  # fmt: skip
    return out
