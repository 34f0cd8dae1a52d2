"""Tabular Q-learning over the base-3 board index, with the arithmetic of OpenSpiel's ``QLearner``.

OpenSpiel's ``open_spiel.python.algorithms.tabular_qlearner.QLearner`` (version 2.0.2) is the field's reference
Q-learner, the yardstick of learning beside the book's evolved players. It is slow (a Python dictionary keyed by the
printed observation, an ``rl_environment`` step per move) and it draws from numpy's global random state. This module
does the same learning over the book's board index, with its random numbers from a :class:`numpy.random.Generator`
passed in, and ``tests/test_q_learning.py`` checks that it ends with the same Q-table, to the bit, as OpenSpiel's on
the same random numbers.

What OpenSpiel's learner does, and this module repeats operation for operation:

* **States.** OpenSpiel keys a state by ``str(observation_tensor(player))``, which on tic-tac-toe is a function of
  the board alone; here a state is the board's base-3 index. Unvisited values are 0.0.
* **Choice** (``_epsilon_greedy``). ``greedy_q`` is the largest value among the legal squares, the greedy squares
  those whose value equals it; square ``a`` gets probability ``epsilon / n_legal`` if legal, plus
  ``(1 - epsilon) / n_greedy`` if greedy, and the move is ``np.random.choice(range(9), p=probs)``: numpy's legacy
  choice, which takes the cumulative sum of the nine probabilities, divides it by its last entry and returns the
  first square whose entry exceeds one uniform number ``u`` (``searchsorted(u, side="right")``). One uniform
  number per move; ties among greedy squares are broken by it, uniformly.
* **Update** (``step``), at every step of the learner after its first one in an episode: ``target`` is its reward
  (0.0 before the end, its return of +1, 0 or -1 at the end), plus ``discount * max(Q[s'])`` over the legal
  squares ``s'`` of the new state unless the episode is over; ``loss = target - Q[s, a]``;
  ``Q[s, a] = Q[s, a] + step_size * loss``, for the state and move of its previous step. The move of the new step
  is drawn before the update (the update does not draw). On the last step of an episode the learner updates and
  then forgets its previous state.
* **Schedule.** Only a constant epsilon (OpenSpiel's default ``ConstantSchedule(0.2)``); with OpenSpiel's
  ``step_size=0.1`` and ``discount_factor=1.0`` as defaults too.

Two ways to train:

* :func:`train_against_rule_base`: the learner plays one side against Fogel's rule-based opponent
  (:mod:`evolving_ttt.rule_base`), which draws its one uniform number per move from the same generator, in
  playing order; the paper's cycled first reply of O is kept when the rule base plays O.
* :func:`train_self_play`: the learner plays both sides, as in OpenSpiel's ``tic_tac_toe_qlearner.py`` example
  with one ``QLearner`` per player. One table serves both, without any sharing between them: a board is either
  X's or O's to move, never both, so X's entries and O's are different rows. The values of a row are for the side
  to move on it.

:func:`q_policy` writes a table's choice as a policy table (:mod:`evolving_ttt.outcomes`), so that the book's
exact yardsticks (outcome tables, audits) apply to a learned player. The book's Q-learning system
(:mod:`evolving_ttt.q_learning.system`) trains as these two functions do, a stretch between two checkpoints at a
time: a table passed back in (``q``, and ``first_episode`` against the rule base) continues the training exactly as
one longer call would (``tests/test_q_learning_system.py``). It plays them with the compiled twins of the two,
:mod:`evolving_ttt.q_learning.engine`, which ``tests/test_q_learning_engine.py`` holds to the same bits.

All arithmetic on result paths is addition, subtraction, multiplication, division and comparison of doubles,
which IEEE 754 rounds the same on every processor; the learning loop runs on Python floats, which are those
doubles.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import accumulate

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
    check_number,
    check_probability,
)
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, rule_candidates

Q_SHAPE = (N_BOARDS, 9)
"""The shape of a Q-table: a row per base-3 board index, a column per square (as a policy table)."""


@dataclass(frozen=True)
class QSettings:
    """The learner's settings, with OpenSpiel's ``QLearner`` defaults.

    Attributes
    ----------
    step_size
        The learning rate: the share of the loss added to a value (OpenSpiel's ``step_size``, 0.1).
    epsilon
        The chance of a uniformly random legal move, spread over all legal squares, greedy ones included
        (OpenSpiel's ``ConstantSchedule(0.2)``).
    discount
        The weight of the next state's best value in the target (OpenSpiel's ``discount_factor``, 1.0).
    """

    step_size: float = 0.1
    epsilon: float = 0.2
    discount: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "step_size", check_number(self.step_size, "step_size", 0.0, 1.0))
        object.__setattr__(self, "epsilon", check_probability(self.epsilon, "epsilon"))
        object.__setattr__(self, "discount", check_number(self.discount, "discount", 0.0, 1.0))


@dataclass(frozen=True)
class QTraining:
    """The end of a stretch of training.

    Attributes
    ----------
    q : (19683, 9) float64
        The Q-table: ``q[i, s]`` is the learned value of playing square ``s`` on board ``i`` for the side to move
        there (0.0 where never updated).
    results : (episodes,) int8
        The result of each training episode: +1 X won, 0 drawn, -1 O won.
    """

    q: np.ndarray
    results: np.ndarray


# --- Tables for the scalar loop ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Lookups:
    """Python-object tables over the board index, for a loop that touches one board at a time."""

    moves: tuple[tuple[int, ...], ...]  # the legal squares in increasing order; () on finished boards
    over: tuple[bool, ...]
    winner: tuple[int, ...]
    step: dict[int, tuple[int, ...]]  # step[mark][s]: what playing mark on square s adds to the index


@cache
def _lookups() -> _Lookups:
    tables = board_tables()
    moves = tuple(
        () if over else tuple(row[:n].tolist())
        for over, row, n in zip(tables.over.tolist(), tables.empty_list, tables.n_empty.tolist(), strict=True)
    )
    step = {mark: tuple((MARK_DIGIT[mark] * POWERS_OF_3).tolist()) for mark in (X, O)}
    return _Lookups(moves, tuple(tables.over.tolist()), tuple(tables.winner.tolist()), step)


@cache
def _rule_squares(rule_d_lines: str, mark: int) -> tuple[tuple[int, ...], ...]:
    """The rule base's candidate squares (steps b-e) on every board where ``mark`` is to move; () elsewhere."""
    rules = OpponentRules(rule_d_lines=rule_d_lines)
    tables = board_tables()
    squares: list[tuple[int, ...]] = [()] * N_BOARDS
    for i in boards_to_move(mark).tolist():
        squares[i] = tuple(rule_candidates(tables.boards[i], rules, mark))
    return tuple(squares)


# --- The two decisions: the learner's and the rule base's --------------------------------------------------------


def epsilon_greedy_given(values: list[float], moves: tuple[int, ...], epsilon: float, u: float) -> int:
    """The square OpenSpiel's ``QLearner`` plays given the values of a board and its one uniform number ``u``.

    Parameters
    ----------
    values
        The nine values of the board (a row of the Q-table).
    moves
        The legal squares, in increasing order (at least one).
    epsilon
        The chance of exploring.
    u
        A uniform number in [0, 1).

    Returns
    -------
    int
        The first square whose normalized cumulative probability exceeds ``u``: the probabilities and the sums are
        formed as OpenSpiel and numpy's ``choice`` form them (illegal squares add 0.0, which changes no sum).
    """
    legal_values = [values[a] for a in moves]
    return _choose(legal_values, max(legal_values), moves, epsilon, u)


def _choose(legal_values: list[float], greedy_q: float, moves: tuple[int, ...], epsilon: float, u: float) -> int:
    """:func:`epsilon_greedy_given` once the values of the legal squares and their largest are known."""
    explore = epsilon / len(moves)
    greedy = explore + (1 - epsilon) / legal_values.count(greedy_q)  # OpenSpiel: probs[greedy] += (1 - eps) / n
    cumulative = list(accumulate([greedy if v == greedy_q else explore for v in legal_values]))
    total = cumulative[-1]
    for a, c in zip(moves, cumulative, strict=True):
        if c / total > u:
            return a
    raise AssertionError("unreachable: the last cumulative probability divided by itself is 1 > u")


def rule_base_move_given(index: int, u: float, rules: OpponentRules, mark: int) -> int:
    """The rule base's move on board ``index`` given its uniform number ``u``: the arithmetic of
    :func:`evolving_ttt.rule_base.near_perfect_move_given` on Python floats.

    With ``u`` below ``rules.random_move_probability`` a uniformly random empty square, else a uniformly random
    candidate of steps (b)-(e); ``u`` is rescaled to pick within the part it fell in.
    """
    p = rules.random_move_probability
    explore = u < p
    if p in (0.0, 1.0):
        v = u
    else:
        v = u / p if explore else (u - p) / (1.0 - p)
    squares = _lookups().moves[index] if explore else _rule_squares(rules.rule_d_lines, mark)[index]
    if not squares:
        raise ValueError("the rule base has no move here: the game is over or it is not its turn")
    return squares[min(int(v * len(squares)), len(squares) - 1)]


# --- Training ----------------------------------------------------------------------------------------------------


def _learn(rows: list[list[float]], state: int, action: int, target: float, step_size: float) -> None:
    """OpenSpiel's update of ``Q[state, action]`` towards ``target``: ``Q += step_size * (target - Q)``.

    ``target`` is the reward on the last step of an episode; before it, the reward (0.0) plus ``discount`` times
    the largest value of the new board's legal squares, added in that order (see the callers).
    """
    prev_q = rows[state][action]
    loss = target - prev_q
    rows[state][action] = prev_q + step_size * loss


def check_q_table(q: np.ndarray) -> np.ndarray:
    """``q`` if it is a Q-table to continue from: a float64 array of shape (19683, 9) of finite values.

    Raises
    ------
    ValueError
        Naming what is wrong with it.
    """
    check_instance(q, np.ndarray, "q", "a Q-table: a float array of shape (19683, 9)")
    if q.shape != Q_SHAPE or q.dtype != np.float64:
        raise ValueError(f"q must be a float64 array of shape (19683, 9); got {q.dtype} {q.shape}")
    if not np.isfinite(q).all():
        raise ValueError("q must hold finite values")
    return q


def _start_table(q: np.ndarray | None) -> list[list[float]]:
    """The Q-table to continue from (zeros when ``q`` is None), as nested lists of Python floats."""
    if q is None:
        return [[0.0] * 9 for _ in range(N_BOARDS)]
    return check_q_table(q).tolist()


def _finish(rows: list[list[float]], results: list[int]) -> QTraining:
    q = np.array(rows, dtype=np.float64)
    return QTraining(q=q, results=np.array(results, dtype=np.int8))


def train_against_rule_base(
    episodes: int,
    rng: np.random.Generator,
    settings: QSettings = QSettings(),
    rules: OpponentRules = PAPER_RULES,
    mark: int = X,
    q: np.ndarray | None = None,
    first_episode: int = 0,
) -> QTraining:
    """Train a Q-learner playing ``mark`` against Fogel's rule-based opponent for ``episodes`` games.

    Parameters
    ----------
    episodes
        Games to play.
    rng
        The one source of random numbers, in playing order: one uniform number per move of the learner (its
        epsilon-greedy choice) and one per move of the rule base (its random move or its pick among the
        candidates of its rules), except the rule base's cycled first reply, which draws none.
    settings
        The learner's settings.
    rules
        The rule base's settings. With ``first_reply="cycle"`` and the rule base playing O, its first reply in
        episode ``g`` is the ``(g mod 8)``-th empty square, as in the paper's protocol; playing X it always moves by
        its rules.
    mark
        The learner's side: X (the book's default) or O.
    q
        A Q-table to continue from; zeros if None. It is not modified.
    first_episode
        The number of the first episode (for the cycled first reply when training continues).

    Returns
    -------
    QTraining
        The Q-table and the result of each episode.
    """
    episodes = check_count(episodes, "episodes", minimum=0)
    first_episode = check_count(first_episode, "first_episode", minimum=0)
    check_instance(rng, np.random.Generator, "rng", "a numpy random Generator")
    check_instance(settings, QSettings, "settings", "QSettings")
    check_instance(rules, OpponentRules, "rules", "OpponentRules")
    mark = check_mark(mark)
    lookups = _lookups()
    moves_of, over_of, step_of = lookups.moves, lookups.over, lookups.step
    _rule_squares(rules.rule_d_lines, -mark)  # built before the loop
    cycle = rules.first_reply == "cycle" and mark == X
    epsilon, step_size, discount, random = settings.epsilon, settings.step_size, settings.discount, rng.random
    rows = _start_table(q)
    results = []
    for episode in range(first_episode, first_episode + episodes):
        index, mover, prev, prev_action, opponent_moves = 0, X, -1, -1, 0
        while True:
            moves = moves_of[index]
            if mover == mark:
                row = rows[index]
                legal_values = [row[a] for a in moves]
                greedy_q = max(legal_values)
                action = _choose(legal_values, greedy_q, moves, epsilon, random())
                if prev >= 0:  # the previous step's update, towards 0.0 + discount * greedy_q
                    target = 0.0
                    target += discount * greedy_q
                    _learn(rows, prev, prev_action, target, step_size)
                prev, prev_action = index, action
            elif cycle and opponent_moves == 0:
                action = moves[episode % 8]
                opponent_moves = 1
            else:
                action = rule_base_move_given(index, random(), rules, -mark)
            index += step_of[mover][action]
            mover = -mover
            if over_of[index]:
                break
        result = lookups.winner[index]
        _learn(rows, prev, prev_action, float(result * mark), step_size)
        results.append(result)
    return _finish(rows, results)


def train_self_play(
    episodes: int, rng: np.random.Generator, settings: QSettings = QSettings(), q: np.ndarray | None = None
) -> QTraining:
    """Train a Q-learner playing both sides for ``episodes`` games (OpenSpiel's example: one learner per side).

    Parameters
    ----------
    episodes
        Games to play.
    rng
        One uniform number per move, in playing order, for the epsilon-greedy choice of the side to move.
    settings
        The settings of both sides.
    q
        A Q-table to continue from; zeros if None. It is not modified. X's rows and O's are different boards.

    Returns
    -------
    QTraining
        The Q-table (each row valued for its side to move) and the result of each episode.
    """
    episodes = check_count(episodes, "episodes", minimum=0)
    check_instance(rng, np.random.Generator, "rng", "a numpy random Generator")
    check_instance(settings, QSettings, "settings", "QSettings")
    lookups = _lookups()
    moves_of, over_of, step_of = lookups.moves, lookups.over, lookups.step
    epsilon, step_size, discount, random = settings.epsilon, settings.step_size, settings.discount, rng.random
    rows = _start_table(q)
    results = []
    for _ in range(episodes):
        index, mover = 0, X
        previous = {X: (-1, -1), O: (-1, -1)}  # each side's state and move of its last step
        while True:
            moves = moves_of[index]
            row = rows[index]
            legal_values = [row[a] for a in moves]
            greedy_q = max(legal_values)
            action = _choose(legal_values, greedy_q, moves, epsilon, random())
            prev, prev_action = previous[mover]
            if prev >= 0:  # the previous step's update of the side to move, towards 0.0 + discount * greedy_q
                target = 0.0
                target += discount * greedy_q
                _learn(rows, prev, prev_action, target, step_size)
            previous[mover] = (index, action)
            index += step_of[mover][action]
            mover = -mover
            if over_of[index]:
                break
        result = lookups.winner[index]
        for side in (X, O):  # OpenSpiel steps player 0, then player 1, with the final time step
            prev, prev_action = previous[side]
            _learn(rows, prev, prev_action, float(result * side), step_size)
        results.append(result)
    return _finish(rows, results)


# --- The learned player ------------------------------------------------------------------------------------------


def q_policy(q: np.ndarray, mark: int, epsilon: float = 0.0) -> np.ndarray:
    """The learner's choice as a policy table for ``mark``: OpenSpiel's epsilon-greedy probabilities on every board
    where ``mark`` is to move.

    With ``epsilon=0`` (OpenSpiel's evaluation) the greedy player: its greedy squares, ties shared equally. With
    the training epsilon, the player as it explored.

    Returns
    -------
    (19683, 9) float64
        Zero rows on the boards where ``mark`` is not to move or the game is over.
    """
    check_instance(q, np.ndarray, "q", "a Q-table: a float array of shape (19683, 9)")
    if q.shape != Q_SHAPE:
        raise ValueError(f"q must have shape (19683, 9); got {q.shape}")
    mark, epsilon = check_mark(mark), check_probability(epsilon, "epsilon")
    tables = board_tables()
    rows = boards_to_move(mark)
    empty = tables.empty[rows]
    values = np.where(empty, q[rows], -np.inf)
    greedy = values == values.max(axis=1, keepdims=True)
    policy = np.zeros(POLICY_SHAPE)
    policy[rows] = np.where(empty, epsilon / tables.n_empty[rows, None], 0.0)
    policy[rows] += np.where(greedy, (1 - epsilon) / greedy.sum(axis=1, keepdims=True), 0.0)
    return policy
