"""Fogel's yardstick for a player of any system: the rule base as a policy table, the exact 32-game protocol score
and the best score any player can reach (chapters 5 and 10).

Every system's players are measured against Fogel's rule base (:mod:`evolving_ttt.rule_base`), so its exact
scores live here, below the systems: :func:`rule_base_policy` writes the rule base as a table of move probabilities
for either side, :func:`protocol_score` the expected score of any player of X over Fogel's 32 games, and
:func:`best_response` the ceiling no player can pass. The payoff of a game (:data:`PAPER_PAYOFF`) is the paper's
win, loss and draw values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    LARGEST_SETTING,
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    O,
    Player,
    X,
    board_index,
    board_tables,
    check_instance,
    legal_moves,
    play,
)
from evolving_ttt.numerics import fixed_matmul
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move, check_policy, outcome_table
from evolving_ttt.rule_base import (
    GAMES_PER_EVALUATION,
    PAPER_RULES,
    OpponentRules,
    candidate_masks,
    opponent_tables,
    rule_candidates,
)

PAPER_PAYOFF = (1.0, -10.0, 0.0)
"""Payoff for a win, a loss and a draw in the experiments Fogel (1993) reports (chapter 5)."""


def check_payoff(payoff: Sequence[float]) -> tuple[float, float, float]:
    """Return ``payoff`` as a ``(win, loss, draw)`` tuple of floats or raise ``ValueError`` naming it (chapter 5).

    Each must be finite and at most :data:`~evolving_ttt.game.LARGEST_SETTING` in size, and the three may not all
    be equal."""
    try:
        values = np.asarray(payoff, dtype=float) if not isinstance(payoff, (str, bytes)) else np.array([])
    except (TypeError, ValueError):
        values = np.array([])
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise ValueError(f"payoff must be three finite numbers (win, loss, draw); got {payoff!r}")
    if np.abs(values).max() > LARGEST_SETTING:
        raise ValueError(f"payoff must be three numbers from {-LARGEST_SETTING:g} to {LARGEST_SETTING:g} (a network's "
                         f"score adds 32 of them); got {payoff!r}")  # fmt: skip
    if values[0] == values[1] == values[2]:
        raise ValueError(f"payoff must tell results apart: a win, a loss and a draw all pay {values[0]:g}, so every "
                         f"score is equal and selection is by chance alone; got {payoff!r}")  # fmt: skip
    return tuple(float(v) for v in values)


def opponent_probabilities(rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """The rule base's move probabilities on every board, shape (19683, 9) (chapter 10).

    ``P[i, s]`` is the chance that O plays ``s`` on board ``i``: ``p / n_empty`` for every empty square
    (the random move) plus ``(1 - p) / n_candidates`` for each rule candidate. Rows of boards where O is
    not to move in an unfinished game are zero.
    """
    tables, rule_tables = board_tables(), opponent_tables(rules.rule_d_lines)
    p = rules.random_move_probability
    o_to_move = rule_tables.n_candidates > 0
    probabilities = np.zeros((N_BOARDS, 9))
    rows = np.flatnonzero(o_to_move)
    probabilities[rows] = p * tables.empty[rows] / tables.n_empty[rows, None]
    for k in range(9):
        has_k = rows[rule_tables.n_candidates[rows] > k]
        probabilities[has_k, rule_tables.candidates[has_k, k]] += (1 - p) / rule_tables.n_candidates[has_k]
    return probabilities


def o_reply_distribution(board: np.ndarray, rules: OpponentRules = PAPER_RULES) -> dict[int, float]:
    """The rule base's move probabilities on one board, read off the rules directly (chapter 10)."""
    empty, candidates = legal_moves(board), rule_candidates(board, rules)
    p = rules.random_move_probability
    return {s: p / len(empty) + ((1 - p) / len(candidates) if s in candidates else 0.0) for s in empty}


@cache
def rule_base_policy(mark: int = O, rules: OpponentRules = PAPER_RULES) -> np.ndarray:
    """Fogel's rule base as a policy table for either side, shape (19683, 9) (chapter 10).

    On every legal unfinished board where ``mark`` is to move: ``p / n_empty`` for each empty square
    (the random move, step a) plus ``(1 - p) / n_candidates`` for each square that steps (b)-(e) allow
    (:func:`~evolving_ttt.rule_base.candidate_masks`, with the roles of the marks swapped when the rule base plays
    X). It is the rule base's play on any board, so its first reply follows the rules: the protocol's cycled first
    replies (``rules.first_reply``) belong to the 32-game protocol, not to the player. For ``mark=O``
    it equals :func:`opponent_probabilities`, and on every board it equals what
    :func:`~evolving_ttt.rule_base.rule_candidates` gives (``tests/test_fogel_score.py``). The table is shared
    between calls: do not write to it.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    p = rules.random_move_probability
    tables = board_tables()
    rows = boards_to_move(mark)
    candidates = candidate_masks(rules.rule_d_lines, mark)[rows]
    table = np.zeros(POLICY_SHAPE)
    table[rows] = p * tables.empty[rows] / tables.n_empty[rows, None]
    table[rows] += np.where(candidates, (1 - p) / candidates.sum(axis=1)[:, None], 0.0)
    table.flags.writeable = False
    return table


def protocol_score(
    x_policy: np.ndarray, rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF
) -> float:
    """Exact expected 32-game protocol score of any player of X given as a policy table (chapter 10).

    Fogel's yardstick for players of every system: the table's first move (or moves, with their
    probabilities), then, with cycled first replies, each of the eight replies four times, and the rule
    base's play after that. Equals :func:`exact_score` for a network's table.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    x_policy = check_policy(x_policy, X, "x_policy", single=True)
    win, loss, draw = check_payoff(payoff)
    table = fixed_matmul(outcome_table(x_policy, rule_base_policy(O, rules)), np.array([win, draw, loss]))
    total = 0.0
    for opening in np.flatnonzero(x_policy[0]):
        first = int(POWERS_OF_3[opening])
        if rules.first_reply == "cycle":
            replies = first + 2 * POWERS_OF_3[[s for s in range(9) if s != opening]]
            total += x_policy[0, opening] * 4 * table[replies].sum()
        else:
            total += x_policy[0, opening] * GAMES_PER_EVALUATION * table[first]
    return float(total)


@dataclass(frozen=True)
class BestResponse:
    """The best any player of X can do against the rule base (chapter 10).

    Attributes
    ----------
    ceiling
        The largest expected 32-game score.
    opening
        X's first move that reaches it.
    policy
        ``policy[i]``: the best move on board index ``i`` (X to move), -1 elsewhere.
    values
        ``values[i]``: expected payoff of one game from board ``i`` on under the best policy, nan where unused.
    """

    ceiling: float
    opening: int
    policy: np.ndarray
    values: np.ndarray

    def player(self) -> Player:
        """The player that follows the best policy."""
        return lambda board: int(self.policy[board_index(board)])


def expectimax_walk(rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF) -> BestResponse:
    """Expectimax against the rule base: X maximizes, O's moves are averaged (chapter 10).

    Values depend only on the board, so they are memoized over the base-3 index. X's first move is
    chosen for the whole protocol: the sum over the first replies it will face (each four times), or
    32 times the expectation when the first reply follows the rules. Ties go to the lowest square. This walk is
    the readable version; :func:`best_response` gives the same bits by a pass over the board tables.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    win, loss, draw = check_payoff(payoff)
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    policy = np.full(N_BOARDS, -1, dtype=np.int64)

    def value(board: np.ndarray) -> float:
        i = board_index(board)
        if np.isnan(values[i]):
            if tables.over[i]:
                values[i] = {X: win, O: loss, EMPTY: draw}[int(tables.winner[i])]
            elif tables.to_move[i] == X:
                options = [(value(play(board, s)), -s) for s in legal_moves(board)]
                best_value, best_square = max(options)
                values[i], policy[i] = best_value, -best_square
            else:
                values[i] = sum(q * value(play(board, s)) for s, q in o_reply_distribution(board, rules).items())
        return float(values[i])

    start = np.zeros(9, dtype=np.int8)
    totals = []
    for opening in range(9):
        first = play(start, opening)
        if rules.first_reply == "cycle":
            totals.append(4 * sum(value(play(first, reply)) for reply in legal_moves(first)))
        else:
            totals.append(GAMES_PER_EVALUATION * value(first))
    return _finished(totals, values, policy)


def _finished(totals: list[float], values: np.ndarray, policy: np.ndarray) -> BestResponse:
    """The best response from the openings' totals and the values and moves below them (read-only arrays)."""
    opening = int(np.argmax(totals))
    policy[0] = opening
    values.flags.writeable = False
    policy.flags.writeable = False
    return BestResponse(float(totals[opening]), opening, policy, values)


def best_response(rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF) -> BestResponse:
    """The best any player of X can do against the rule base, as :func:`expectimax_walk` finds it (chapter 10).

    The same bits as the walk (``tests/test_fogel_score.py``), computed by a pass over the board tables from the
    full boards back to the empty one, and once per rule base and payoff: the result (read-only arrays) is shared
    between calls, as the arena, the chapters and the tests ask for the same one often.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    return _best_response(rules, check_payoff(payoff))


@cache
def _best_response(rules: OpponentRules, payoff: tuple[float, float, float]) -> BestResponse:
    """:func:`expectimax_walk`'s values and moves, level by level over the number of marks on the board.

    Each board is worked out after every board one move later, with the walk's arithmetic: X's value is the
    largest of its moves' (the first, so the lowest square, of equal ones), O's the sum of ``q * value`` over its
    empty squares in increasing order, with the rule base's probabilities ``q`` (:func:`rule_base_policy`, whose
    entries are those of :func:`o_reply_distribution`). The walk never values the empty board, nor, with cycled
    first replies, the boards after X's opening; those stay nan here too.
    """
    win, loss, draw = payoff
    tables = board_tables()
    values = np.full(N_BOARDS, np.nan)
    policy = np.full(N_BOARDS, -1, dtype=np.int64)
    finished = tables.legal & tables.over
    values[finished] = np.where(tables.winner == X, win, np.where(tables.winner == O, loss, draw))[finished]
    q = rule_base_policy(O, rules)
    marks = 9 - tables.n_empty.astype(np.int64)
    going = tables.legal & ~tables.over
    for level in range(8, -1, -1):
        at_level = going & (marks == level)
        for mark in (X, O):
            rows = np.flatnonzero(at_level & (tables.to_move == mark))
            if rows.size == 0:
                continue
            empty = tables.empty[rows]
            children = np.where(empty, rows[:, None] + MARK_DIGIT[mark] * POWERS_OF_3[None, :], 0)
            child_values = values[children]
            if mark == X:
                best = np.argmax(np.where(empty, child_values, -np.inf), axis=1)
                values[rows] = child_values[np.arange(rows.size), best]
                policy[rows] = best
            else:
                total = np.zeros(rows.size)
                for square in range(9):
                    total = np.where(empty[:, square], total + q[rows, square] * child_values[:, square], total)
                values[rows] = total
    totals = []
    for opening in range(9):
        first = int(POWERS_OF_3[opening])
        if rules.first_reply == "cycle":
            replies = [first + 2 * int(POWERS_OF_3[reply]) for reply in range(9) if reply != opening]
            totals.append(4 * sum(float(values[i]) for i in replies))
        else:
            totals.append(GAMES_PER_EVALUATION * float(values[first]))
    values[0] = np.nan
    if rules.first_reply == "cycle":
        values[POWERS_OF_3] = np.nan
    policy[0] = -1
    return _finished(totals, values, policy)
