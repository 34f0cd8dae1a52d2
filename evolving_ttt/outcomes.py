"""Players as tables of move probabilities, and the exact results of any two of them (chapter 11).

Every system of the book makes players of a different kind: Fogel's networks, Al-Khateeb's board
evaluator, Ling and Lam's heuristic and network, Mohammadi's programs, the rule base, the perfect
player. To compare them exactly, each is written down as a *policy table*: an array of shape
``(19683, 9)`` over the base-3 board index (:func:`evolving_ttt.game.board_index`) whose row ``i``
holds the probability of each square on board ``i`` for the side to move. Rows of boards where that
side is not to move, or where the game is over, or that cannot arise in play, are zero.

Given a table for X and one for O, :func:`outcome_table` works backwards from the finished boards,
one number of marks at a time, and gives the exact probabilities of an X win, a draw and an O win
from every board; no game is sampled. Leading batch axes are allowed on either table, so that many
players are judged in one call (memory grows as ``batch x 19683 x 9``: judge a few hundred at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    SYMBOLS,
    O,
    X,
    board_tables,
    check_count,
    check_mark,
    check_probability,
)
from evolving_ttt.perfect import minimax_values

POLICY_SHAPE = (N_BOARDS, 9)
"""The shape of one policy table: a row per base-3 board index, a column per square (chapter 11)."""

OUTCOMES = ("X wins", "draw", "O wins")
"""The order of the last axis of :func:`outcome_table` and :func:`outcome_probabilities` (chapter 11)."""


@cache
def boards_to_move(mark: int) -> np.ndarray:
    """Indices of the legal, unfinished boards where ``mark`` is to move, in increasing order (chapter 11)."""
    tables = board_tables()
    rows = np.flatnonzero(tables.legal & ~tables.over & (tables.to_move == check_mark(mark)))
    rows.flags.writeable = False
    return rows


def check_policy(policy: np.ndarray, mark: int, name: str = "policy", single: bool = False) -> np.ndarray:
    """Return ``policy`` as a float array after checking that it is a policy table for ``mark`` (chapter 11).

    With ``single`` it must be one table, shape (19683, 9), with no batch axes.

    Raises
    ------
    ValueError
        If the shape is not ``(..., 19683, 9)`` (or not ``(19683, 9)`` with ``single``), a probability is
        negative or not finite, a square that is not empty gets probability, or a row of a board where
        ``mark`` is to move does not sum to 1.
    """
    if not isinstance(policy, np.ndarray):
        raise ValueError(f"{name} must be a numpy array of shape (..., 19683, 9); got {type(policy).__name__}")
    if single and policy.shape != POLICY_SHAPE:
        raise ValueError(f"{name} must be one table of shape (19683, 9); got {policy.shape}")
    if policy.shape[-2:] != POLICY_SHAPE:
        raise ValueError(f"{name} must have shape (..., 19683, 9); got {policy.shape}")
    policy = policy.astype(float, copy=False)
    if not np.all(np.isfinite(policy)) or np.any(policy < 0):
        raise ValueError(f"{name} must hold finite, non-negative probabilities")
    tables = board_tables()
    if np.any((policy != 0) & ~tables.empty):  # elementwise: a boolean-mask gather costs 40 times as much
        raise ValueError(f"{name} gives probability to a square that is not empty")
    rows = boards_to_move(mark)
    totals = policy[..., rows, :].sum(axis=-1)
    if not np.allclose(totals, 1.0, rtol=0, atol=1e-9):
        worst = np.unravel_index(np.argmax(np.abs(totals - 1.0)), totals.shape)
        board = tables.boards[rows[worst[-1]]]
        raise ValueError(
            f"{name} must give each board where {SYMBOLS[mark]} is to move probabilities that sum to 1; "
            f"on board {''.join(SYMBOLS[int(v)] for v in board)} they sum to {totals[worst]:.6g}"
        )
    return policy


def policy_table(player: Callable[[np.ndarray], int], mark: int) -> np.ndarray:
    """Tabulate a deterministic player: a 1 at its square on every board where ``mark`` is to move (chapter 11).

    ``player`` maps a board (int8, X = +1, O = -1, as it is on the table) to a square. It is asked once
    on every legal unfinished board where ``mark`` is to move (2,423 boards for X, 2,097 for O).

    Raises
    ------
    ValueError
        If ``player`` is not callable, or returns something other than an empty square.
    """
    if not callable(player):
        raise ValueError(f"player must be a function from a board to a square; got {type(player).__name__}")
    tables = board_tables()
    table = np.zeros(POLICY_SHAPE)
    for i in boards_to_move(mark):
        board = tables.boards[i].copy()
        square = player(board)
        if isinstance(square, bool) or not isinstance(square, (int, np.integer)) or not tables.empty[i, square]:
            raise ValueError(
                f"player must return an empty square (0-8); on board "
                f"{''.join(SYMBOLS[int(v)] for v in tables.boards[i])} it returned {square!r}"
            )
        table[i, int(square)] = 1.0
    return table


def random_policy(mark: int) -> np.ndarray:
    """The uniformly random player of ``mark``: every empty square alike (chapter 11)."""
    tables = board_tables()
    table = np.zeros(POLICY_SHAPE)
    rows = boards_to_move(mark)
    table[rows] = tables.empty[rows] / tables.n_empty[rows, None]
    return table


def perfect_policy(mark: int, random_move_probability: float = 0.0) -> np.ndarray:
    """The perfect player of ``mark``, choosing at random among its best moves (chapter 11).

    With probability ``random_move_probability`` it plays a uniformly random empty square instead
    (Al-Khateeb's "nearly perfect" player uses 0.1). Best means best game-theoretic value
    (:func:`evolving_ttt.perfect.minimax_values`) for the side to move.
    """
    p = check_probability(random_move_probability, "random_move_probability")
    tables = board_tables()
    rows = boards_to_move(mark)
    empty = tables.empty[rows]
    children = rows[:, None] + MARK_DIGIT[mark] * POWERS_OF_3[None, :]
    # Values seen by the mover (+1 is a win for it); occupied squares get -2, below any real value.
    child_values = np.where(empty, mark * minimax_values()[np.where(empty, children, 0)], -2.0)
    best = child_values == child_values.max(axis=1, keepdims=True)
    table = np.zeros(POLICY_SHAPE)
    table[rows] = (1 - p) * best / best.sum(axis=1, keepdims=True) + p * empty / tables.n_empty[rows, None]
    return table


@cache
def _layers() -> tuple[tuple[int, np.ndarray, np.ndarray], ...]:
    """For each number of marks k (8 down to 0): the unfinished legal boards and their children."""
    tables = board_tables()
    marks = 9 - tables.n_empty.astype(int)
    layers = []
    for k in range(8, -1, -1):
        mover = X if k % 2 == 0 else O
        rows = np.flatnonzero(tables.legal & ~tables.over & (marks == k))
        # The child of an occupied square is never weighted (its probability is 0); point it at board 0.
        children = np.where(tables.empty[rows], rows[:, None] + MARK_DIGIT[mover] * POWERS_OF_3[None, :], 0)
        layers.append((mover, rows, children))
    return tuple(layers)


def outcome_table(x_policy: np.ndarray, o_policy: np.ndarray) -> np.ndarray:
    """Exact probabilities of (X wins, draw, O wins) from every board, shape ``(..., 19683, 3)`` (chapter 11).

    Backward induction over the number of marks: a finished board's outcome is certain; an unfinished
    board's is the mover's probabilities times its children's outcomes. Rows of boards that cannot arise
    are zero. Leading batch axes of the two tables broadcast against each other.
    """
    x_policy, o_policy = check_policy(x_policy, X, "x_policy"), check_policy(o_policy, O, "o_policy")
    batch = np.broadcast_shapes(x_policy.shape[:-2], o_policy.shape[:-2])
    tables = board_tables()
    values = np.zeros(batch + (N_BOARDS, 3))
    finished = np.flatnonzero(tables.legal & tables.over)
    values[..., finished, :] = np.eye(3)[np.select([tables.winner[finished] == X, tables.winner[finished] == EMPTY],
                                                   [0, 1], 2)]  # fmt: skip
    for mover, rows, children in _layers():
        policy = x_policy if mover == X else o_policy
        # (..., n, 9) probabilities times (..., n, 9, 3) outcomes of the children, summed over the squares.
        values[..., rows, :] = np.einsum("...ns,...nsc->...nc", policy[..., rows, :], values[..., children, :])
    return values


def outcome_probabilities(x_policy: np.ndarray, o_policy: np.ndarray) -> np.ndarray:
    """Exact probabilities of (X wins, draw, O wins) of a game from the empty board, shape ``(..., 3)`` (chapter 11)."""
    return outcome_table(x_policy, o_policy)[..., 0, :]


def sample_games(
    x_policy: np.ndarray, o_policy: np.ndarray, rng: np.random.Generator, games: int
) -> tuple[np.ndarray, list[list[int]]]:
    """Play ``games`` games between two policy tables, drawing each move from ``rng`` (chapter 11).

    Returns the results (+1 X wins, -1 O wins, 0 draw) and each game's squares in order. Each move
    uses one uniform number from ``rng``, so the same seed gives the same games. Used to check the exact
    results against sampling, and for matches of a fixed number of games.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    games = check_count(games, "games", minimum=0)
    policies = {
        X: check_policy(x_policy, X, "x_policy", single=True),
        O: check_policy(o_policy, O, "o_policy", single=True),
    }
    tables = board_tables()
    results, all_moves = np.zeros(games, dtype=np.int8), []
    for g in range(games):
        index, moves = 0, []
        while not tables.over[index]:
            mover = int(tables.to_move[index])
            cumulative = np.cumsum(policies[mover][index])
            # The first square whose running total passes u: a square of probability 0 is never chosen.
            square = min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right")), 8)
            moves.append(square)
            index += MARK_DIGIT[mover] * int(POWERS_OF_3[square])
        results[g] = tables.winner[index]
        all_moves.append(moves)
    return results, all_moves


def sample_game(x_policy: np.ndarray, o_policy: np.ndarray, rng: np.random.Generator) -> tuple[int, list[int]]:
    """Play one game between two policy tables: ``(result, moves)``, as :func:`sample_games` (chapter 11)."""
    results, moves = sample_games(x_policy, o_policy, rng, 1)
    return int(results[0]), moves[0]


def best_response_policy(opponent_policy: np.ndarray, mark: int, payoff: tuple[float, float, float] = (1.0, -1.0, 0.0)):
    """The best reply of ``mark`` to a known opponent: expectimax over policy tables (chapter 11).

    ``opponent_policy`` is the other side's table. On every board where ``mark`` is to move, the returned
    table plays the square with the largest expected payoff for ``mark`` (``payoff`` = win, loss, draw, as
    seen by ``mark``), averaging over the opponent's moves; ties go to the lowest square. Returns
    ``(table, values)``: the deterministic policy table and the expected payoff of every board (nan on
    boards that cannot arise).
    """
    mark = check_mark(mark)
    opponent_policy = check_policy(opponent_policy, -mark, "opponent_policy", single=True)
    win, loss, draw = (float(v) for v in payoff)
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    finished = np.flatnonzero(tables.legal & tables.over)
    values[finished] = np.select([tables.winner[finished] == mark, tables.winner[finished] == -mark], [win, loss], draw)
    table = np.zeros(POLICY_SHAPE)
    for mover, rows, children in _layers():
        child_values = np.where(tables.empty[rows], values[children], 0.0)
        if mover == mark:
            # Occupied squares get -inf; argmax takes the first (lowest) of equal best squares.
            scores = np.where(tables.empty[rows], child_values, -np.inf)
            best = np.argmax(scores, axis=1)
            table[rows, best] = 1.0
            values[rows] = scores[np.arange(len(rows)), best]
        else:
            values[rows] = (opponent_policy[rows] * child_values).sum(axis=1)
    return table, values


def favourable_values(mark: int, random_move_probability: float, payoff=(1.0, -1.0, 0.0)) -> np.ndarray:
    """The most ``mark`` can expect from every board against a perfect player whose every choice goes its way
    (chapter 15).

    An upper bound on :func:`best_response_policy` against ``perfect_policy(-mark, random_move_probability)``,
    whatever that player's ties and random moves are: on each of its boards it plays, with probability
    ``1 - random_move_probability``, the move best for ``mark`` among its moves of best game-theoretic value,
    and otherwise the move best for ``mark`` among all its moves; ``mark`` replies as well as it can. Returns
    the expected payoff (``payoff`` = win, loss, draw, as seen by ``mark``) of every board, nan where none arises.
    """
    mark, p = check_mark(mark), check_probability(random_move_probability, "random_move_probability")
    win, loss, draw = (float(v) for v in payoff)
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    finished = np.flatnonzero(tables.legal & tables.over)
    values[finished] = np.select([tables.winner[finished] == mark, tables.winner[finished] == -mark], [win, loss], draw)
    for mover, rows, children in _layers():
        scores = np.where(tables.empty[rows], values[children], -np.inf)  # occupied squares: never chosen
        best = scores.max(axis=1)
        if mover == mark:
            values[rows] = best
        else:  # the opponent's perfect moves, by their value from its side, then the best of them for mark
            seen = np.where(tables.empty[rows], mover * minimax_values()[children], -np.inf)
            perfect = np.where(seen == seen.max(axis=1, keepdims=True), scores, -np.inf).max(axis=1)
            values[rows] = (1 - p) * perfect + p * best
    return values


@dataclass(frozen=True)
class PolicyAudit:
    """How a player fares against every line of play of its opponent, judged by perfect play (chapter 11).

    Attributes
    ----------
    mark
        The side the player plays.
    positions
        Distinct positions it can reach with its turn to move (following every move it plays with
        positive probability and every reply of the opponent).
    mistakes
        Those where one of its moves has a worse game-theoretic value than the best move there.
    can_lose
        Whether some line of play ends in its loss.
    losing_boards
        How many distinct finished boards it can reach that it has lost.
    worst_value
        The game-theoretic result it can be held to by a perfect opponent: +1 win, 0 draw, -1 loss, from
        its side, assuming the worst of its own random choices.
    """

    mark: int
    positions: int
    mistakes: int
    can_lose: bool
    losing_boards: int
    worst_value: int


def audit_policy(policy: np.ndarray, mark: int) -> PolicyAudit:
    """Audit a policy table of ``mark`` against every reply of the opponent (chapter 11).

    The table-driven twin of :func:`evolving_ttt.perfect.audit_player`, for either side and for
    stochastic players: reachability runs forward one number of marks at a time.
    """
    mark = check_mark(mark)
    policy = check_policy(policy, mark, single=True)
    tables, values = board_tables(), minimax_values()
    reached = np.zeros(N_BOARDS, dtype=bool)
    reached[0] = True
    mistakes = positions = 0
    for mover, rows, children in reversed(_layers()):  # from the empty board forward
        rows_here = reached[rows]
        rows, children = rows[rows_here], children[rows_here]
        if mover == mark:
            played = policy[rows] > 0
            positions += len(rows)
            child_values = mark * values[children]
            best = np.where(tables.empty[rows], child_values, -np.inf).max(axis=1)
            mistakes += int(np.any(played & (child_values < best[:, None]), axis=1).sum())
        else:
            played = tables.empty[rows]
        reached[children[played]] = True
    lost = reached & tables.legal & tables.over & (tables.winner == -mark)
    # Worst case: the opponent plays perfectly, the player's own random choices go against it.
    worst = np.full(N_BOARDS, np.nan)
    worst[tables.over] = mark * tables.winner[tables.over]
    for mover, rows, children in _layers():
        child_worst = np.where(tables.empty[rows], worst[children], np.inf)
        if mover == mark:
            worst[rows] = np.where(policy[rows] > 0, child_worst, np.inf).min(axis=1)
        else:
            worst[rows] = child_worst.min(axis=1)
    return PolicyAudit(mark, positions, mistakes, bool(lost.any()), int(lost.sum()), int(worst[0]))
