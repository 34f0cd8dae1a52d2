"""Fogel (1993): exact expected scores, the best possible score, and the evaluation report (chapter 10).

Read first: :func:`o_reply_distribution`, :func:`game_payoff_moments` and :func:`exact_score_readable`,
which walk every line of play; :func:`exact_scores` is their batched twin. :func:`best_response`
finds the best any player of X can do against the rule base.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evolving_ttt.fogel.engine import (
    ENGINE_UNITS,
    _network_moves,
    empty_board_negated_sums,
    engine_weights,
    x_turn_numbers,
    x_turn_square_codes,
)
from evolving_ttt.fogel.network import Network, Population, network_player, stack_networks
from evolving_ttt.fogel_score import (
    PAPER_PAYOFF,
    best_response,
    check_payoff,
    o_reply_distribution,
    opponent_probabilities,
)
from evolving_ttt.game import (
    EMPTY,
    POWERS_OF_3,
    O,
    Player,
    X,
    board_tables,
    check_count,
    check_instance,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.perfect import audit_player
from evolving_ttt.rule_base import GAMES_PER_EVALUATION, PAPER_RULES, OpponentRules


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
