"""Al-Khateeb (2012): the evolved players measured, exactly and as the paper did (chapter 15).

* :func:`evaluator_moves` and :func:`evaluator_policies` write many evaluators down as policy tables
  at once (the form :mod:`evolving_ttt.outcomes` judges), evaluating each board once per network.
* :func:`evaluator_exact_results` gives every player's exact win, draw and loss probabilities against any
  opponent given as tables, as X and as O; :func:`progress_curve` does it for the best network of every
  generation of a run: the learning curve co-evolution cannot show by itself.
* :func:`final_round_robin`, :func:`game_points` and :func:`welch_test` rebuild the paper's Table 1;
  :func:`match_record` plays the seeded 50-game matches of its Tables 2 and 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.al_khateeb.evaluator import (
    PAPER_ONE_PLY,
    WIN_VALUE,
    OnePlySettings,
    check_weights,
    evaluate_boards,
    round_robin_results,
)
from evolving_ttt.al_khateeb.search import search_positions, search_tables
from evolving_ttt.game import MARK_DIGIT, POWERS_OF_3, O, X, board_tables, check_mark
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move, outcome_probabilities, sample_games

AL_KHATEEB_TABLE_1 = {10: 51, 15: 51, 6: 50, 14: 50, 17: 50, 4: 49, 12: 49, 1: 48, 7: 48, 16: 48, 20: 48,
                 8: 47, 11: 47, 18: 47, 2: 46, 5: 46, 19: 46, 3: 45, 9: 45, 13: 45}  # fmt: skip
"""The paper's Table 1: points of each player TTT(k) in its round robin (3 a win, 1 a draw) (chapter 15)."""

AL_KHATEEB_TABLE_2 = (0, 43, 7)
"""The paper's Table 2: TTT's wins, draws and losses in 50 games against the online perfect player (chapter 15)."""

AL_KHATEEB_TABLE_3 = (28, 20, 2)
"""The paper's Table 3: TTT's wins, draws and losses in 50 games against the nearly perfect player (chapter 15)."""


@dataclass(frozen=True)
class AfterstateTables:
    """Every move on every board where one side is to move, as the evaluator sees it (chapter 15).

    Attributes
    ----------
    rows : (n,)
        The legal unfinished boards with that side to move (:func:`evolving_ttt.outcomes.boards_to_move`).
    squares : (n, 9)
        Their empty squares, lowest first, padded with -1.
    seen : (k,)
        The distinct boards the evaluator is shown after those moves (board numbers).
    position : (n, 9)
        For each move, its board's place in ``seen`` (0 in the padding).
    wins : (n, 9)
        Whether the move completes a line.
    """

    rows: np.ndarray
    squares: np.ndarray
    seen: np.ndarray
    position: np.ndarray
    wins: np.ndarray


@cache
def afterstate_tables(mark: int, view: str) -> AfterstateTables:
    """The :class:`AfterstateTables` of the side ``mark`` with the given view (chapter 15)."""
    mark = check_mark(mark)
    OnePlySettings(view=view)  # checks the view
    tables = board_tables()
    rows = boards_to_move(mark)
    squares = tables.empty_list[rows].astype(np.int64)
    valid = squares >= 0
    after = np.where(valid, rows[:, None] + MARK_DIGIT[mark] * POWERS_OF_3[np.maximum(squares, 0)], 0)
    if view == "mover" and mark == O:  # O's pieces shown as +1: exchange the two digits
        digits = (after[..., None] // POWERS_OF_3) % 3
        after_seen = np.where(digits == 0, 0, 3 - digits) @ POWERS_OF_3
    else:
        after_seen = after
    seen, inverse = np.unique(after_seen[valid], return_inverse=True)
    position = np.zeros(squares.shape, dtype=np.int64)
    position[valid] = inverse
    wins = valid & (tables.winner[after] == mark)
    result = AfterstateTables(rows, squares, seen, position, wins)
    for array in vars(result).values():
        array.flags.writeable = False
    return result


def evaluator_moves(
    weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY, chunk: int = 64
) -> np.ndarray:
    """The square each network picks on every board where ``mark`` is to move, shape ``(networks, n)`` (chapter 15).

    Board ``k`` is ``boards_to_move(mark)[k]``. Each network judges each distinct board it can be shown
    once (about 2,500 per side), ``chunk`` networks at a time; the moves are those of
    :func:`evolving_ttt.al_khateeb.evaluator.one_ply_move`, to the bit. A player of depth 2 or more (chapter 21)
    searches with :func:`evolving_ttt.al_khateeb.search.search_tables`.
    """
    weights = check_weights(weights)
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (networks, 72); got {weights.shape}")
    if settings.depth > 1:  # a deeper search (chapter 21): the table-wise minimax of evolving_ttt.al_khateeb.search
        rows = boards_to_move(mark)
        return np.concatenate([search_tables(weights[s : s + chunk], mark, settings)[:, search_positions().index[rows]]
                               for s in range(0, len(weights), chunk)]).astype(np.int8)  # fmt: skip
    tables = afterstate_tables(mark, settings.view)
    valid = tables.squares >= 0
    boards = board_tables().boards[tables.seen].astype(float)  # (k, 9)
    moves = np.zeros((len(weights), len(tables.rows)), dtype=np.int8)
    for start in range(0, len(weights), chunk):
        part = weights[start : start + chunk]
        values = evaluate_boards(part[:, None, :], boards)  # (chunk, k): every board once per network
        if settings.view == "x" and mark == O:
            values = -values
        move_values = np.where(valid, values[:, tables.position], -np.inf)
        if settings.winning_moves == "rules":
            move_values = np.where(tables.wins, WIN_VALUE, move_values)
        choice = move_values.argmax(axis=-1)  # the first of equal values: the lowest square
        moves[start : start + chunk] = tables.squares[np.arange(len(tables.rows)), choice]
    return moves


def moves_to_policies(moves: np.ndarray, mark: int) -> np.ndarray:
    """Policy tables ``(networks, 19683, 9)`` with a 1 at the square :func:`evaluator_moves` chose (chapter 15)."""
    rows = boards_to_move(mark)
    moves = np.asarray(moves, dtype=np.int64)
    if moves.ndim != 2 or moves.shape[1] != len(rows):
        raise ValueError(f"moves must have shape (networks, {len(rows)}); got {moves.shape}")
    tables = np.zeros((len(moves),) + POLICY_SHAPE)
    tables[np.arange(len(moves))[:, None], rows, moves] = 1.0
    return tables


def evaluator_policies(weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY) -> np.ndarray:
    """The policy tables of many evaluators playing ``mark``, shape ``(networks, 19683, 9)`` (chapter 15)."""
    return moves_to_policies(evaluator_moves(weights, mark, settings), mark)


def evaluator_policy(weights: np.ndarray, mark: int, settings: OnePlySettings = PAPER_ONE_PLY) -> np.ndarray:
    """The policy table of one evaluator playing ``mark``, shape ``(19683, 9)`` (chapter 15)."""
    weights = check_weights(weights)
    if weights.shape != (72,):
        raise ValueError(f"weights must be one network of 72 numbers; got shape {weights.shape}")
    return evaluator_policies(weights[None], mark, settings)[0]


def evaluator_exact_results(
    weights: np.ndarray,
    opponent_as_x: np.ndarray,
    opponent_as_o: np.ndarray,
    settings: OnePlySettings = PAPER_ONE_PLY,
    chunk: int = 32,
) -> np.ndarray:
    """Exact win, draw and loss probabilities of each network against one opponent, shape ``(networks, 2, 3)``
    (chapter 15).

    ``[:, 0]`` is the network playing X against ``opponent_as_o``, ``[:, 1]`` the network playing O
    against ``opponent_as_x``; the last axis is (win, draw, loss) for the network. The opponent is
    given as policy tables (:mod:`evolving_ttt.outcomes`). Networks that make the same moves
    everywhere share one policy table, and each distinct table is judged once by
    :func:`evolving_ttt.outcomes.outcome_probabilities`.
    """
    weights = check_weights(weights)
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (networks, 72); got {weights.shape}")
    results = np.zeros((len(weights), 2, 3))
    for side, (mark, opponent) in enumerate(((X, opponent_as_o), (O, opponent_as_x))):
        distinct, which = np.unique(evaluator_moves(weights, mark, settings), axis=0, return_inverse=True)
        outcomes = np.concatenate([
            outcome_probabilities(moves_to_policies(distinct[s : s + chunk], mark), opponent)
            if mark == X else outcome_probabilities(opponent, moves_to_policies(distinct[s : s + chunk], mark))
            for s in range(0, len(distinct), chunk)
        ])  # fmt: skip
        # outcome_probabilities gives (X wins, draw, O wins); as O the network's win is O's.
        results[:, side] = outcomes[which.ravel()] if mark == X else outcomes[which.ravel()][:, ::-1]
    return results


def progress_curve(
    run, opponent_as_x: np.ndarray, opponent_as_o: np.ndarray, generations=None, chunk: int = 32
) -> np.ndarray:
    """Exact results of each run's best network of the given generations against one opponent (chapter 15).

    ``run`` is a :class:`evolving_ttt.al_khateeb.engine.CoevolutionRun`; ``generations`` are generation
    numbers counted from 1 (default: all). Returns shape ``(runs, len(generations), 2, 3)``, axes 2 and
    3 as in :func:`evaluator_exact_results`. A network that stays best for several of these generations is judged
    once.
    """
    runs, total = run.best_ids.shape
    generations = np.arange(1, total + 1) if generations is None else np.asarray(generations, dtype=np.int64)
    if generations.ndim != 1 or np.any((generations < 1) | (generations > total)):
        raise ValueError(f"generations must be generation numbers from 1 to {total}")
    ids = run.best_ids[:, generations - 1]
    keys = np.arange(runs)[:, None] * (int(run.best_ids.max()) + 1) + ids
    _, first, which = np.unique(keys.ravel(), return_index=True, return_inverse=True)
    networks = run.best_weights[:, generations - 1].reshape(-1, run.best_weights.shape[-1])[first]
    results = evaluator_exact_results(networks, opponent_as_x, opponent_as_o, run.settings.player, chunk)
    return results[which.ravel()].reshape(runs, len(generations), 2, 3)


def final_round_robin(players: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY) -> np.ndarray:
    """The paper's Table 1 tournament: every player meets every other once as X and once as O (chapter 15).

    Returns ``results[i, j]``, the winner of player ``i`` (X) against player ``j`` (O), as
    :func:`evolving_ttt.al_khateeb.evaluator.round_robin_results`.
    """
    return round_robin_results(players, settings)


def game_points(results: np.ndarray, win: int = 3, draw: int = 1, loss: int = 0) -> np.ndarray:
    """Each player's points in each of its games, shape ``(players, 2 (players - 1))`` (chapter 15).

    Row ``i`` holds its games as X against every other player in order, then its games as O; a win
    earns ``win`` points, a draw ``draw`` and a loss ``loss`` (the paper's 3, 1, 0).
    """
    results = np.asarray(results)
    n = results.shape[0]
    others = ~np.eye(n, dtype=bool)
    as_x = results[others].reshape(n, n - 1)  # +1: player i (X) won
    as_o = -results.T[others].reshape(n, n - 1)  # +1: player i (O) won
    outcome = np.concatenate([as_x, as_o], axis=1)
    return np.select([outcome == 1, outcome == 0], [win, draw], loss)


@dataclass(frozen=True)
class WelchTest:
    """A one-sided Welch t-test of "player a scores more points per game than player b" (chapter 15)."""

    statistic: float
    degrees_of_freedom: float
    p_value: float


def welch_test(points_a: np.ndarray, points_b: np.ndarray) -> WelchTest:
    """Welch's t-test (unequal variances), one-sided: is the mean of ``points_a`` larger? (chapter 15)

    Uses :func:`scipy.stats.ttest_ind` with ``equal_var=False`` and ``alternative="greater"``. A small
    p-value is evidence that a scores more per game than b; a large one is *not* evidence that they are
    equal.
    """
    from scipy import stats

    test = stats.ttest_ind(np.asarray(points_a, float), np.asarray(points_b, float), equal_var=False,
                           alternative="greater")  # fmt: skip
    return WelchTest(float(test.statistic), float(test.df), float(test.pvalue))


def match_record(
    player: np.ndarray, player_mark: int, opponent: np.ndarray, rng: np.random.Generator, games: int = 50
) -> tuple[int, int, int]:
    """Wins, draws and losses of a player in ``games`` sampled games against ``opponent`` (chapter 15).

    ``player`` and ``opponent`` are policy tables; ``player_mark`` says which side the player takes
    (the opponent takes the other). The games are drawn from ``rng`` by
    :func:`evolving_ttt.outcomes.sample_games`, so a seed fixes them.
    """
    mark = check_mark(player_mark)
    x_policy, o_policy = (player, opponent) if mark == X else (opponent, player)
    results, _ = sample_games(x_policy, o_policy, rng, games)
    wins, losses = int(np.sum(results == mark)), int(np.sum(results == -mark))
    return wins, games - wins - losses, losses


def choose_ttt(run) -> tuple[int, np.ndarray]:
    """TTT: the run whose player scores most points in the final round robin; ``(row, points)`` (chapter 15).

    ``run`` is a :class:`evolving_ttt.al_khateeb.engine.CoevolutionRun`; each run's player is its
    network ranked first in the last generation. Points are 3 a win, 1 a draw (the paper's Table 1).
    Equal points go to the lowest run number (the paper does not say how it chose between its two
    players with 51 points).
    """
    points = game_points(final_round_robin(run.players(), run.settings.player)).sum(axis=1)
    return int(np.argmax(points)), points


def ttt_provenance(run, row: int, points: np.ndarray) -> dict:
    """What :func:`evolving_ttt.al_khateeb.engine.save_evaluator` records with TTT (chapter 15)."""
    return {
        "description": "TTT: the player with the most points in the round robin of the final players of all runs "
        "(3 a win, 1 a draw); each run's player is its network ranked first in the last generation",
        "seed": run.seed,
        "run": run.run_numbers[row],
        "generation": run.settings.generations,
        "round_robin_points": int(points[row]),
        "experiment": run.settings.as_dict(),
    }
