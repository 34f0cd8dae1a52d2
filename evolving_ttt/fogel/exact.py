"""Fogel (1993): exact expected scores, the best possible score, and the evaluation report (chapter 10).

Read first: :func:`o_reply_distribution`, :func:`game_payoff_moments` and :func:`exact_score_readable`,
which walk every line of play; :func:`exact_scores` is their batched twin. :func:`best_response`
finds the best any player of X can do against the rule base.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.fogel.engine import (
    ENGINE_UNITS,
    _network_moves,
    empty_board_negated_sums,
    engine_weights,
    x_turn_numbers,
    x_turn_square_codes,
)
from evolving_ttt.fogel.network import Network, Population, stack_networks
from evolving_ttt.fogel.opponent import (
    GAMES_PER_EVALUATION,
    PAPER_RULES,
    OpponentRules,
    network_player,
    opponent_tables,
    rule_candidates,
)
from evolving_ttt.fogel.selection import PAPER_PAYOFF, check_payoff
from evolving_ttt.game import (
    EMPTY,
    N_BOARDS,
    POWERS_OF_3,
    O,
    Player,
    X,
    board_index,
    board_tables,
    check_count,
    check_instance,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.numerics import fixed_matmul
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move, check_policy, outcome_table
from evolving_ttt.perfect import audit_player


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
    (:func:`rule_candidates`, with the roles of the marks swapped when the rule base plays X). It is the
    rule base's play on any board, so its first reply follows the rules: the protocol's cycled first
    replies (``rules.first_reply``) belong to the 32-game protocol, not to the player. For ``mark=O``
    it equals :func:`opponent_probabilities`. The table is shared between calls: do not write to it.
    """
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    p = rules.random_move_probability
    tables = board_tables()
    table = np.zeros(POLICY_SHAPE)
    for i in boards_to_move(mark):
        board = tables.boards[i]
        candidates = rule_candidates(board, rules, mark)
        table[i] = p * tables.empty[i] / tables.n_empty[i]
        table[i, candidates] += (1 - p) / len(candidates)
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


def game_payoff_moments(
    player: Player,
    board: np.ndarray,
    rules: OpponentRules = PAPER_RULES,
    payoff: Sequence[float] = PAPER_PAYOFF,
) -> tuple[float, float]:
    """Mean and second moment of X's payoff from ``board`` on, by walking every line of play (chapter 10).

    The readable recursion: at X's turn follow ``player``; at O's turn average over O's replies with
    the probabilities of :func:`o_reply_distribution`; at the end look up the payoff.
    """
    win, loss, draw = check_payoff(payoff)
    if is_game_over(board):
        value = {X: win, O: loss, EMPTY: draw}[winner(board)]
        return value, value * value
    if player_to_move(board) == X:
        return game_payoff_moments(player, play(board, player(board)), rules, payoff)
    mean = second = 0.0
    for square, probability in o_reply_distribution(board, rules).items():
        m, s = game_payoff_moments(player, play(board, square), rules, payoff)
        mean, second = mean + probability * m, second + probability * s
    return mean, second


def exact_score_readable(
    player: Player, rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF
) -> tuple[float, float]:
    """Exact mean and variance of the 32-game protocol score of ``player``, one game tree at a time (chapter 10).

    The 32 games are independent. With cycled first replies each of the eight replies is played four
    times; with first replies by the rules the 32 games are alike.
    """
    start = np.zeros(9, dtype=np.int8)
    first = play(start, player(start))
    if rules.first_reply == "cycle":
        moments = [game_payoff_moments(player, play(first, reply), rules, payoff) for reply in legal_moves(first)]
        mean = 4 * sum(m for m, _ in moments)
        variance = 4 * sum(s - m * m for m, s in moments)
    else:
        m, s = game_payoff_moments(player, first, rules, payoff)
        mean, variance = GAMES_PER_EVALUATION * m, GAMES_PER_EVALUATION * (s - m * m)
    return mean, max(variance, 0.0)  # a certain outcome has variance 0, which rounding can make -2e-16


def exact_scores(
    population: Population,
    rules: OpponentRules = PAPER_RULES,
    payoff: Sequence[float] = PAPER_PAYOFF,
    chunk: int = 500,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance of the protocol score of every network in a population (chapter 10).

    The batched twin of :func:`exact_score_readable`. Because every empty square has a positive chance
    of being O's reply (the random move), the tree of O's replies has the same shape for every network:
    8 first replies, then 6, 4 and 2 choices. It is held as dense arrays of shape ``(n, 8, 6, 4, 2)``
    (cut at the current depth); finished games keep their place and stop collecting probability. X's
    moves are evaluated for all states of a depth at once with the engine's incremental pre-activations.
    Networks are processed ``chunk`` at a time to bound memory.

    Raises
    ------
    ValueError
        If ``population`` is not a :class:`Population`, ``rules`` not :class:`OpponentRules`, ``payoff`` not
        three numbers or ``chunk`` not a positive integer.
    """
    check_instance(population, Population, "population", "a Population (th.stack_networks makes one from networks)")
    check_instance(rules, OpponentRules, "rules", "an OpponentRules")
    chunk = check_count(chunk, "chunk")
    batch = population.shape
    flat = population.reshape(-1)
    means, variances = [], []
    for start in range(0, flat.shape[0], chunk):
        m, v = _exact_scores_flat(flat[start : start + chunk], rules, check_payoff(payoff))
        means.append(m)
        variances.append(v)
    return np.concatenate(means).reshape(batch), np.concatenate(variances).reshape(batch)


def _exact_scores_flat(
    flat: Population, rules: OpponentRules, payoff: tuple[float, float, float]
) -> tuple[np.ndarray, np.ndarray]:
    tables = board_tables()
    probabilities = opponent_probabilities(rules)
    payoff_of = np.array([payoff[2], payoff[0], payoff[1]])  # indexed by winner: 0 draw, +1 X, -1 O (index -1)
    n = flat.shape[0]
    input_columns, output_weights = engine_weights(flat)
    numbers = x_turn_numbers()[0]
    rows = np.arange(n) * 9

    def x_moves(hidden_pre, index, turn):  # the same computation as the batched engine's
        # Boards X does not face at this turn (in branches of weight 0) get squares 0 to e - 1.
        codes = np.take(x_turn_square_codes()[turn], numbers[turn][index.ravel()], axis=1, mode="clip")
        k = index[0].size
        moves = _network_moves(-hidden_pre.reshape(-1, ENGINE_UNITS), codes, [(np.arange(n), k)], output_weights)
        return moves.reshape(index.shape)

    def add_columns(hidden_pre, moves, sign):
        columns = np.take(input_columns, rows.reshape((n,) + (1,) * (moves.ndim - 1)) + moves, axis=0)
        return hidden_pre + sign * columns

    # X's first move, on the empty board.
    index = np.zeros((n,), dtype=np.int64)
    hidden_pre = -empty_board_negated_sums(flat)
    move = x_moves(hidden_pre[:, None, :], index[:, None], 0)[:, 0]
    index = index + POWERS_OF_3[move]
    hidden_pre = add_columns(hidden_pre, move, X)
    weight = np.ones((n,))
    mean = np.zeros((n, 8))  # per first reply (or per reply branch when the first reply follows the rules)
    second = np.zeros((n, 8))
    for o_turn in range(4):
        # O replies: every empty square, in increasing order, with its probability.
        replies = tables.empty_list[index][..., : 8 - 2 * o_turn]
        if o_turn == 0 and rules.first_reply == "cycle":
            chance = np.ones(replies.shape)
        else:
            chance = np.take_along_axis(probabilities[index], replies.astype(np.int64), axis=-1)
        replies = np.maximum(replies, 0)
        weight = weight[..., None] * chance
        index = np.where(weight > 0, index[..., None] + 2 * POWERS_OF_3[replies], index[..., None])
        hidden_pre = add_columns(hidden_pre[..., None, :], replies, O)
        for turn in ("O", "X"):
            if turn == "X":
                if o_turn == 3:
                    move = tables.empty_list[index, 0].astype(np.int64)
                else:
                    move = x_moves(hidden_pre, index, o_turn + 1)
                move = np.where(weight > 0, move, 0)
                index = np.where(weight > 0, index + POWERS_OF_3[move], index)
                if o_turn < 3:
                    hidden_pre = add_columns(hidden_pre, move, X)
            ended = (weight > 0) & tables.over[index]
            value = payoff_of[tables.winner[index]]
            contribution = np.where(ended, weight, 0.0)
            axes = tuple(range(2, contribution.ndim))
            mean += (contribution * value).sum(axis=axes)
            second += (contribution * value * value).sum(axis=axes)
            weight = np.where(ended, 0.0, weight)
    # A certain outcome has variance 0, which rounding can turn into -2e-16: clamp at 0.
    if rules.first_reply == "cycle":
        return 4 * mean.sum(axis=1), np.maximum(4 * (second - mean**2).sum(axis=1), 0.0)
    game_mean, game_second = mean.sum(axis=1), second.sum(axis=1)
    return GAMES_PER_EVALUATION * game_mean, np.maximum(GAMES_PER_EVALUATION * (game_second - game_mean**2), 0.0)


def exact_score(network: Network, rules: OpponentRules = PAPER_RULES, payoff=PAPER_PAYOFF) -> tuple[float, float]:
    """Exact mean and variance of one network's protocol score (chapter 10)."""
    check_instance(network, Network, "network", "a Network")
    mean, variance = exact_scores(stack_networks([network]), rules, payoff)
    return float(mean[0]), float(variance[0])


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


def best_response(rules: OpponentRules = PAPER_RULES, payoff: Sequence[float] = PAPER_PAYOFF) -> BestResponse:
    """Expectimax against the rule base: X maximizes, O's moves are averaged (chapter 10).

    Values depend only on the board, so they are memoized over the base-3 index. X's first move is
    chosen for the whole protocol: the sum over the first replies it will face (each four times), or
    32 times the expectation when the first reply follows the rules. Ties go to the lowest square.
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
    opening = int(np.argmax(totals))
    policy[0] = opening
    values.flags.writeable = False
    policy.flags.writeable = False
    return BestResponse(float(totals[opening]), opening, policy, values)


def evaluation_report(network: Network, provenance: dict | None = None, rules: OpponentRules = PAPER_RULES) -> str:
    """The text ``python -m ttt_helpers evaluate`` prints for a network (chapter 11)."""
    mean, variance = exact_score(network, rules)
    ceiling = best_response(rules)
    audit = audit_player(network_player(network))
    lines = [
        f"network: {network.hidden_count} hidden nodes",
        *(f"  {key}: {provenance[key]}" for key in ("seed", "trial", "generation") if provenance and key in provenance),
        f"exact expected score over the 32-game protocol: {mean:.4f} (standard deviation {math.sqrt(variance):.4f})",
        f"best expected score any player of X can reach: {ceiling.ceiling:.4f} (opening square {ceiling.opening})",
        f"perfect-play audit against every sequence of O replies: {audit.games} games, {audit.wins} wins, "
        f"{audit.draws} draws, {audit.losses} losses",
        f"  positions met with X to move: {audit.positions}; moves worse than the best: {audit.mistakes}",
        "  verdict: " + ("never loses" if audit.losses == 0 else f"can lose ({audit.losses} losing lines)"),
    ]
    return "\n".join(lines)
