"""The Q-learner's two training loops compiled with numba: the games, draws and updates of
:mod:`evolving_ttt.q_learning.learner`, to the bit, about a hundred times as fast.

The readable loops in ``learner`` are what chapter 27 shows; they play one game at a time in Python, about 25 µs a
game, so that one of the curve study's tasks (a million games) takes some 25 s. The loops here are the same loops
over arrays instead of tuples and lists:

* the legal squares of every board (``BoardTables.empty_list``) and the rule base's candidate squares (steps b-e,
  :func:`~evolving_ttt.q_learning.learner.rule_base_move_given`) as ``(19683, 9)`` tables padded with -1;
* the Q-table as a ``(19683, 9)`` float64 array, updated in place (a copy of the one passed in);
* the random numbers drawn from the same :class:`numpy.random.Generator`, inside the compiled loop: numba's
  ``Generator`` calls the generator's own bit generator, so the draws are numpy's, in the same order, and the
  generator is left exactly where the readable loop leaves it.

The arithmetic is the readable loop's, operation for operation: additions, subtractions, multiplications, divisions
and comparisons of doubles, compiled without fastmath (no reordering, no fused multiply-add), which IEEE 754 rounds
the same on every processor. ``tests/test_q_learning_engine.py`` checks the two against each other, Q-tables,
results and the generator's state after, for both sides, self-play, odd settings and continued tables.
"""

from __future__ import annotations

from functools import cache

import numba
import numpy as np

from evolving_ttt.game import (
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    O,
    X,
    board_tables,
    check_count,
    check_instance,
    check_mark,
    squares_to_list,
)
from evolving_ttt.numerics import JIT_OPTIONS
from evolving_ttt.q_learning.learner import QSettings, QTraining, check_q_table
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, candidate_masks

OPENSPIEL_DEFAULTS = QSettings()
"""The learner's default settings, OpenSpiel's ``QLearner`` defaults (as in ``learner``)."""


@cache
def _move_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The legal squares of every board (-1 padded) and their number, whether the game is over, the winner, and
    ``step[0 for X, 1 for O, square]``: what playing there adds to the board index."""
    tables = board_tables()
    moves = np.where(tables.over[:, None], -1, tables.empty_list).astype(np.int64)
    counts = np.where(tables.over, 0, tables.n_empty).astype(np.int64)
    step = np.stack([MARK_DIGIT[X] * POWERS_OF_3, MARK_DIGIT[O] * POWERS_OF_3]).astype(np.int64)
    for array in (moves, counts, step):
        array.flags.writeable = False
    return moves, counts, tables.over.copy(), tables.winner.astype(np.int64), step


@cache
def _rule_tables(rule_d_lines: str, mark: int) -> tuple[np.ndarray, np.ndarray]:
    """The rule base's candidate squares on every board where ``mark`` is to move (-1 padded), and their number:
    :func:`~evolving_ttt.rule_base.candidate_masks` as lists, the squares ``learner`` takes from
    :func:`~evolving_ttt.rule_base.rule_candidates` board by board."""
    squares, counts = (array.astype(np.int64) for array in squares_to_list(candidate_masks(rule_d_lines, mark)))
    squares.flags.writeable = False
    counts.flags.writeable = False
    return squares, counts


@numba.njit(**JIT_OPTIONS)
def _choose(q: np.ndarray, index: int, moves: np.ndarray, n: int, epsilon: float, u: float) -> tuple[int, float]:
    """The learner's epsilon-greedy square on board ``index`` given its uniform number ``u``, and the largest value
    of the legal squares (``learner._choose`` and the ``max`` before it)."""
    greedy_q = q[index, moves[index, 0]]
    for k in range(1, n):  # Python's max: the first of the largest
        value = q[index, moves[index, k]]
        if value > greedy_q:
            greedy_q = value
    count = 0
    for k in range(n):
        if q[index, moves[index, k]] == greedy_q:
            count += 1
    explore = epsilon / n
    greedy = explore + (1 - epsilon) / count
    cumulative = np.empty(9)
    total = 0.0
    for k in range(n):
        share = greedy if q[index, moves[index, k]] == greedy_q else explore
        total = share if k == 0 else total + share
        cumulative[k] = total
    for k in range(n):
        if cumulative[k] / total > u:
            return moves[index, k], greedy_q
    return -1, greedy_q  # unreachable: the last cumulative probability divided by itself is 1 > u


@numba.njit(**JIT_OPTIONS)
def _learn(q: np.ndarray, state: int, action: int, target: float, step_size: float) -> None:
    prev_q = q[state, action]
    loss = target - prev_q
    q[state, action] = prev_q + step_size * loss


@numba.njit(**JIT_OPTIONS)
def _rule_base_move(index: int, u: float, p: float, moves: np.ndarray, counts: np.ndarray, rule_moves: np.ndarray,
                    rule_counts: np.ndarray) -> int:  # fmt: skip
    """``learner.rule_base_move_given`` with the tables as arrays (-1 when the rule base has no move)."""
    explore = u < p
    if p == 0.0 or p == 1.0:
        v = u
    elif explore:
        v = u / p
    else:
        v = (u - p) / (1.0 - p)
    n = counts[index] if explore else rule_counts[index]
    if n == 0:
        return -1
    k = min(int(v * n), n - 1)
    return moves[index, k] if explore else rule_moves[index, k]


@numba.njit(**JIT_OPTIONS)
def _against_rule_base(q, results, rng, first_episode, mark, cycle, epsilon, step_size, discount, p, moves, counts,
                       over, winners, step, rule_moves, rule_counts):  # fmt: skip
    """The readable ``train_against_rule_base`` loop; 0, or -1 if the rule base had no move somewhere."""
    for g in range(results.shape[0]):
        episode = first_episode + g
        index, mover, prev, prev_action, opponent_moves = 0, X, -1, -1, 0
        while True:
            if mover == mark:
                action, greedy_q = _choose(q, index, moves, counts[index], epsilon, rng.random())
                if prev >= 0:
                    target = 0.0
                    target += discount * greedy_q
                    _learn(q, prev, prev_action, target, step_size)
                prev, prev_action = index, action
            elif cycle and opponent_moves == 0:
                action = moves[index, episode % 8]
                opponent_moves = 1
            else:
                action = _rule_base_move(index, rng.random(), p, moves, counts, rule_moves, rule_counts)
                if action < 0:
                    return -1
            index += step[0 if mover == X else 1, action]
            mover = -mover
            if over[index]:
                break
        result = winners[index]
        _learn(q, prev, prev_action, float(result * mark), step_size)
        results[g] = result
    return 0


@numba.njit(**JIT_OPTIONS)
def _self_play(q, results, rng, epsilon, step_size, discount, moves, counts, over, winners, step):  # fmt: skip
    """The readable ``train_self_play`` loop."""
    previous = np.empty((2, 2), dtype=np.int64)  # row 0 X's, row 1 O's: the state and move of its last step
    for g in range(results.shape[0]):
        index, mover = 0, X
        previous[:] = -1
        while True:
            side = 0 if mover == X else 1
            action, greedy_q = _choose(q, index, moves, counts[index], epsilon, rng.random())
            prev, prev_action = previous[side, 0], previous[side, 1]
            if prev >= 0:
                target = 0.0
                target += discount * greedy_q
                _learn(q, prev, prev_action, target, step_size)
            previous[side, 0], previous[side, 1] = index, action
            index += step[side, action]
            mover = -mover
            if over[index]:
                break
        result = winners[index]
        for side in range(2):  # X's final step, then O's
            _learn(q, previous[side, 0], previous[side, 1], float(result * (X if side == 0 else O)), step_size)
        results[g] = result


def _table(q: np.ndarray | None) -> np.ndarray:
    """The Q-table to continue from, as a new array (zeros when ``q`` is None); ``q`` itself is not modified."""
    return np.zeros((N_BOARDS, 9)) if q is None else np.array(check_q_table(q), copy=True, order="C")


def fast_train_against_rule_base(
    episodes: int,
    rng: np.random.Generator,
    settings: QSettings = OPENSPIEL_DEFAULTS,
    rules: OpponentRules = PAPER_RULES,
    mark: int = X,
    q: np.ndarray | None = None,
    first_episode: int = 0,
) -> QTraining:
    """:func:`~evolving_ttt.q_learning.learner.train_against_rule_base`, compiled: the same arguments, the same
    Q-table and results to the bit, and ``rng`` left in the same state."""
    episodes = check_count(episodes, "episodes", minimum=0)
    first_episode = check_count(first_episode, "first_episode", minimum=0)
    check_instance(rng, np.random.Generator, "rng", "a numpy random Generator")
    check_instance(settings, QSettings, "settings", "QSettings")
    check_instance(rules, OpponentRules, "rules", "OpponentRules")
    mark = check_mark(mark)
    table = _table(q)
    moves, counts, over, winners, step = _move_tables()
    rule_moves, rule_counts = _rule_tables(rules.rule_d_lines, -mark)
    results = np.zeros(episodes, dtype=np.int8)
    cycle = rules.first_reply == "cycle" and mark == X
    status = _against_rule_base(table, results, rng, first_episode, mark, cycle, settings.epsilon,
                                settings.step_size, settings.discount, rules.random_move_probability, moves, counts,
                                over, winners, step, rule_moves, rule_counts)  # fmt: skip
    if status < 0:
        raise ValueError("the rule base has no move here: the game is over or it is not its turn")
    return QTraining(q=table, results=results)


def fast_train_self_play(
    episodes: int, rng: np.random.Generator, settings: QSettings = OPENSPIEL_DEFAULTS, q: np.ndarray | None = None
) -> QTraining:
    """:func:`~evolving_ttt.q_learning.learner.train_self_play`, compiled: the same arguments, the same Q-table and
    results to the bit, and ``rng`` left in the same state."""
    episodes = check_count(episodes, "episodes", minimum=0)
    check_instance(rng, np.random.Generator, "rng", "a numpy random Generator")
    check_instance(settings, QSettings, "settings", "QSettings")
    table = _table(q)
    moves, counts, over, winners, step = _move_tables()
    results = np.zeros(episodes, dtype=np.int8)
    _self_play(table, results, rng, settings.epsilon, settings.step_size, settings.discount, moves, counts, over,
               winners, step)  # fmt: skip
    return QTraining(q=table, results=results)
