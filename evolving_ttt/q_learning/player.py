"""A learned player of the Q-learning system: its Q-table, its learning curve, the exact yardsticks, its JSON.

* :func:`checkpoint_games`: the game counts at which a task measures its player, log-spaced from 100 games;

* :class:`QPlayer`: a task's result, the Q-table (:data:`~evolving_ttt.q_learning.learner.Q_SHAPE`) and the
  :class:`LearningCurve` of its greedy player (epsilon 0, ties shared equally,
  :func:`~evolving_ttt.q_learning.learner.q_policy`) at the task's checkpoints;
* :func:`greedy_yardsticks`: the book's exact yardsticks of a Q-table's greedy player: Fogel's expected protocol score,
  and the exact (win, draw, loss) as X and as O against the perfect and the random player (:data:`CURVE_RESULTS`);
* the player as JSON (the ``player`` field of the kit's player and record files): :func:`player_json` writes
  ``{"q": [[INDEX, 9 values], ...], "curve": {...}}``, only the rows of the Q-table holding a value other than 0.0,
  in increasing order of the board index, every value as Python's shortest exact text of the double, so that the
  bits survive; :func:`player_from_json` reads it back and checks every field; :func:`json_text` writes a file with
  each list of numbers (a row of the Q-table) on one line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.fogel_score import protocol_score
from evolving_ttt.game import EMPTY, N_BOARDS, O, X, board_tables, check_count, check_instance
from evolving_ttt.outcomes import boards_to_move, outcome_probabilities, perfect_policy, random_policy
from evolving_ttt.q_learning.learner import Q_SHAPE, q_policy
from evolving_ttt.rule_base import PAPER_RULES

FIRST_CHECKPOINT = 100
"""The games played at the first checkpoint of a task (or all of them, if the task plays fewer)."""

LARGEST_CHECKPOINTS = 200
"""The most checkpoints a task may have (each measures the player exactly, in about a tenth of a second)."""

LARGEST_EPISODES = 10**9
"""The most games a task may play (some five hours on one core, at about 60,000 games a second)."""

CURVE_RESULTS = ("perfect_x", "perfect_o", "random_x", "random_o")
"""The exact results of a learning curve, in order: against the perfect player as X and as O, against the random
player as X and as O; each the player's (win, draw, loss)."""

PROTOCOL_RANGE = (-320.0, 32.0)
"""The range of Fogel's 32-game protocol score (32 losses at -10, 32 wins at +1)."""


# --- Checkpoints ----------------------------------------------------------------------------------------------------


def _root_floor(value: int, n: int) -> int:
    """The largest whole number ``g`` with ``g ** n <= value`` (whole numbers only: the same on every machine)."""
    low, high = 0, 1 << (value.bit_length() // n + 1)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if pow(middle, n) <= value else (low, middle)  # whole numbers: exact
    return low


def checkpoint_games(episodes: int, checkpoints: int) -> tuple[int, ...]:
    """The game counts at which a task measures its player: ``checkpoints`` counts spaced evenly in the logarithm
    from :data:`FIRST_CHECKPOINT` (or ``episodes``, if fewer) to ``episodes``, each rounded down.

    Count ``k`` of ``n`` is the largest whole number ``g`` with ``g ** (n - 1) <= first ** (n - 1 - k) *
    episodes ** k``, computed on whole numbers, so that every machine finds the same counts. One checkpoint is
    ``episodes`` alone.

    Raises
    ------
    ValueError
        If two counts would be equal (too many checkpoints for so few games).
    """
    episodes, checkpoints = check_count(episodes, "episodes"), check_count(checkpoints, "checkpoints")
    if checkpoints == 1:
        return (episodes,)
    first, steps = min(FIRST_CHECKPOINT, episodes), checkpoints - 1
    games = tuple(_root_floor(pow(first, steps - k) * pow(episodes, k), steps) for k in range(checkpoints))
    if any(a >= b for a, b in zip(games, games[1:], strict=False)):
        raise ValueError(f"checkpoints: {checkpoints} checkpoints from {first:,} to {episodes:,} games would measure "
                         "the same game count twice; give fewer checkpoints or more episodes")  # fmt: skip
    return games


# --- The player and its learning curve ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LearningCurve:
    """A task's greedy player at each checkpoint, on the book's exact yardsticks.

    Attributes
    ----------
    games : (n,) int64
        The games played at each checkpoint (both sides counted), increasing; the last is all of the task's games.
    protocol_score : (n,) float64
        Fogel's expected 32-game protocol score as X against his rule base
        (:func:`evolving_ttt.fogel_score.protocol_score`).
    results : (n, 4, 3) float64
        The exact (win, draw, loss) of the player against the opponents of :data:`CURVE_RESULTS`.
    protocol_losses : (n,) float64
        The expected number of the protocol's 32 games it loses to the rule base as X (0.0 exactly when it never
        loses to it).
    """

    games: np.ndarray
    protocol_score: np.ndarray
    results: np.ndarray
    protocol_losses: np.ndarray

    def result(self, name: str) -> np.ndarray:
        """The (win, draw, loss) of each checkpoint against one opponent of :data:`CURVE_RESULTS`, shape (n, 3)."""
        if name not in CURVE_RESULTS:
            raise ValueError(f"no result named {name!r}; the results are {', '.join(CURVE_RESULTS)}")
        return self.results[:, CURVE_RESULTS.index(name)]

    def points(self, name: str) -> np.ndarray:
        """Expected points per game at each checkpoint against one opponent (1 a win, 1/2 a draw), as sweeps count."""
        outcomes = self.result(name)
        return outcomes[:, 0] + 0.5 * outcomes[:, 1]


@dataclass(frozen=True, eq=False)
class QPlayer:
    """A task's learned player: its Q-table and how its greedy player improved.

    Attributes
    ----------
    q : (19683, 9) float64
        The Q-table (:data:`~evolving_ttt.q_learning.learner.Q_SHAPE`): ``q[i, s]`` the learned value of square
        ``s`` on board ``i`` for the side to move there. The player plays its greedy squares, ties at random.
    curve
        Its learning curve.
    """

    q: np.ndarray
    curve: LearningCurve

    @property
    def games(self) -> int:
        """The games it was trained for."""
        return int(self.curve.games[-1])


@cache
def _reference_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The perfect and the random player of O and of X, as the arena has them."""
    tables = (perfect_policy(O), perfect_policy(X), random_policy(O), random_policy(X))
    for table in tables:
        table.flags.writeable = False
    return tables


def greedy_yardsticks(q: np.ndarray) -> tuple[float, np.ndarray]:
    """The exact yardsticks of the greedy player of the Q-table ``q`` (epsilon 0, ties shared equally).

    Returns
    -------
    float, (4, 3) float64
        Fogel's expected protocol score as X, and the player's (win, draw, loss) against the opponents of
        :data:`CURVE_RESULTS`: the same numbers, to the bit, as the arena's :func:`~evolving_ttt.arena.measure`
        and a sweep's yardsticks give the player.
    """
    x_policy, o_policy = q_policy(q, X), q_policy(q, O)
    perfect_o, perfect_x, random_o, random_x = _reference_tables()
    results = np.stack([
        outcome_probabilities(x_policy, perfect_o), outcome_probabilities(perfect_x, o_policy)[::-1],
        outcome_probabilities(x_policy, random_o), outcome_probabilities(random_x, o_policy)[::-1],
    ])  # fmt: skip
    return protocol_score(x_policy, PAPER_RULES), results


def greedy_protocol_losses(q: np.ndarray) -> float:
    """The expected number of the protocol's 32 games that the greedy player of ``q`` loses as X to the rule base:
    :func:`~evolving_ttt.fogel_score.protocol_score` with a loss worth 1 and a win or a draw 0."""
    return protocol_score(q_policy(q, X), PAPER_RULES, payoff=(0.0, 1.0, 0.0))


# --- The player's JSON ---------------------------------------------------------------------------------------------


def player_json(player: QPlayer) -> dict:
    """The player as plain JSON: the Q-table's rows holding any value other than 0.0, each as its board index and
    its nine values, in increasing order of the index, and the curve; every float as Python writes it (the shortest
    text that reads back to the same double)."""
    check_instance(player, QPlayer, "player", "a QPlayer")
    kept = np.flatnonzero(np.any(player.q.view(np.int64) != 0, axis=1))  # every bit kept, -0.0 too
    curve = player.curve
    return {
        "q": [[int(i), *player.q[i].tolist()] for i in kept],
        "curve": {"games": curve.games.tolist(), "protocol_score": curve.protocol_score.tolist(),
                  **{name: curve.result(name).tolist() for name in CURVE_RESULTS},
                  "protocol_losses": curve.protocol_losses.tolist()},
    }  # fmt: skip


def _number(value: Any) -> bool:
    """Whether ``value`` is a finite JSON number (a whole number or a float, never true or false)."""
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _check_fields(data: Any, where: str, names: Sequence[str]) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"field {where!r} must be an object with the fields {', '.join(names)}; got "
                         f"{type(data).__name__}")  # fmt: skip
    for name in names:
        if name not in data:
            raise ValueError(f"field '{where}.{name}' is missing")
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ValueError(f"field {where!r} has no field {unknown[0]!r:.40}; its fields are {', '.join(names)}")


@cache
def _movable() -> np.ndarray:
    """Whether some side is to move on each board (legal and unfinished): the only rows a learner values."""
    movable = np.zeros(N_BOARDS, dtype=bool)
    movable[boards_to_move(X)] = movable[boards_to_move(O)] = True
    movable.flags.writeable = False
    return movable


def _q_from_json(data: Any) -> np.ndarray:
    """The Q-table of the rows ``data``, every row checked (at once: a table has thousands); ``ValueError`` naming
    the first row that is wrong."""
    if not isinstance(data, list):
        raise ValueError(f"field 'player.q' must be a list of rows (a board index and 9 values); got "
                         f"{type(data).__name__}")  # fmt: skip

    def refuse(k: int, problem: str) -> ValueError:  # "must ..." or what is wrong with the row
        return ValueError(f"field 'player.q[{k}]'{' ' if problem.startswith('must') else ': '}{problem}")

    def row_kind(row: Any) -> bool:
        return (isinstance(row, list) and len(row) == 10 and type(row[0]) is int and 0 <= row[0] < N_BOARDS
                and set(map(type, row[1:])) <= {int, float})  # fmt: skip

    wrong = next((k for k, row in enumerate(data) if not row_kind(row)), None)
    if wrong is not None:
        raise refuse(wrong, f"must be a board index from 0 to {N_BOARDS - 1} and 9 finite numbers; got "
                            f"{data[wrong]!r:.60}")  # fmt: skip
    try:
        table = np.array(data, dtype=np.float64).reshape(len(data), 10)
    except OverflowError:  # a whole number too large for a double
        k = next(k for k, row in enumerate(data) if not all(-1 <= v <= 1 for v in row[1:]))
        raise refuse(k, "must hold values from -1 to 1 (a learned value mixes results of +1, 0 and -1)") from None
    indices, values = table[:, 0].astype(np.int64), table[:, 1:]
    problems = [
        (np.diff(indices, prepend=-1) <= 0, lambda k: "the board indices must increase from row to row; board "
                                                      f"{indices[k]} follows {indices[k - 1]}"),
        (~_movable()[indices], lambda k: f"board {indices[k]} is one on which no side is to move (finished or "
                                         "unreachable)"),
        (~(np.abs(values) <= 1).all(axis=1), lambda k: f"must hold values from -1 to 1 (a learned value mixes results "
                                                       f"of +1, 0 and -1); got {data[k][1:]!r:.80}"),
        ((board_tables().boards[indices] != EMPTY) & (values != 0), None),
    ]  # fmt: skip
    for bad, problem in problems:
        if bad.ndim == 2:  # a value on a taken square
            rows, squares = np.nonzero(bad)
            if len(rows):
                k = int(rows[0])
                raise refuse(k, f"board {indices[k]} has a value on square {squares[0]}, which is taken; a learner "
                                "values only empty squares")  # fmt: skip
        elif bad.any():
            k = int(np.argmax(bad))
            raise refuse(k, problem(k))
    q = np.zeros(Q_SHAPE)
    q[indices] = values
    q.flags.writeable = False
    return q


def _curve_from_json(data: Any) -> LearningCurve:
    names = ("games", "protocol_score", *CURVE_RESULTS, "protocol_losses")
    _check_fields(data, "player.curve", names)
    games = data["games"]
    if (not isinstance(games, list) or not games
            or not all(isinstance(g, int) and not isinstance(g, bool) and 1 <= g <= LARGEST_EPISODES for g in games)
            or any(a >= b for a, b in zip(games, games[1:], strict=False))):  # fmt: skip
        raise ValueError(f"field 'player.curve.games' must be increasing whole numbers of games from 1 to "
                         f"{LARGEST_EPISODES:,}; got {games!r:.60}")  # fmt: skip
    n = len(games)
    if n > LARGEST_CHECKPOINTS or tuple(games) != checkpoint_games(games[-1], n):
        raise ValueError(f"field 'player.curve.games' must be the checkpoints of {games[-1]:,} games (at most "
                         f"{LARGEST_CHECKPOINTS}, log-spaced from {FIRST_CHECKPOINT}); got {games!r:.60}")  # fmt: skip
    scores = data["protocol_score"]
    low, high = PROTOCOL_RANGE
    if not isinstance(scores, list) or len(scores) != n or not all(_number(s) and low <= s <= high for s in scores):
        raise ValueError(f"field 'player.curve.protocol_score' must be {n} scores from {low:g} to {high:g}, one per "
                         f"checkpoint; got {scores!r:.60}")  # fmt: skip
    results = []
    for name in CURVE_RESULTS:
        found = data[name]
        triples = isinstance(found, list) and len(found) == n and all(
            isinstance(t, list) and len(t) == 3 and all(_number(v) and 0 <= v <= 1 for v in t)
            and abs(sum(t) - 1) <= 1e-9 for t in found)  # fmt: skip
        if not triples:
            raise ValueError(f"field 'player.curve.{name}' must be {n} (win, draw, loss) probabilities summing to "
                             f"1, one per checkpoint; got {found!r:.60}")  # fmt: skip
        results.append(np.array(found, dtype=np.float64))
    losses = data["protocol_losses"]
    if not isinstance(losses, list) or len(losses) != n or not all(_number(v) and 0 <= v <= 32 for v in losses):
        raise ValueError(f"field 'player.curve.protocol_losses' must be {n} expected numbers of lost games from 0 "
                         f"to 32, one per checkpoint; got {losses!r:.60}")  # fmt: skip
    return LearningCurve(np.array(games, dtype=np.int64), np.array(scores, dtype=np.float64),
                         np.stack(results, axis=1), np.array(losses, dtype=np.float64))  # fmt: skip


def player_from_json(data: Any) -> QPlayer:
    """The player :func:`player_json` wrote; ``ValueError`` naming the field that is wrong."""
    _check_fields(data, "player", ("q", "curve"))
    return QPlayer(_q_from_json(data["q"]), _curve_from_json(data["curve"]))


def json_text(data: Any, path: str | Path) -> str:
    """``data`` as JSON text with one space of indent per level, every list of numbers on one line (a Q-table's row,
    a curve's results); ``ValueError`` naming ``path`` if it is not plain JSON."""

    def text(item: Any, depth: int) -> str:
        numbers = isinstance(item, list) and all(type(v) in (int, float) for v in item)  # NaN: refused by dumps
        if numbers or not isinstance(item, (dict, list)) or not item:
            return json.dumps(item, allow_nan=False)
        pad, end = "\n" + " " * (depth + 1), "\n" + " " * depth
        if isinstance(item, dict):
            entries = (f"{pad}{json.dumps(str(key))}: {text(value, depth + 1)}" for key, value in item.items())
            return "{" + ",".join(entries) + end + "}"
        return "[" + ",".join(pad + text(v, depth + 1) for v in item) + end + "]"

    try:
        return text(data, 0) + "\n"
    except (TypeError, ValueError, RecursionError) as error:
        raise ValueError(f"{path} was not written: what it would hold is not plain JSON ({error})") from None
