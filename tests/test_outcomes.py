"""Policy tables and exact outcomes (evolving_ttt.outcomes), checked by hand, by recursion and by sampling."""

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from evolving_ttt.fogel.exact import exact_score
from evolving_ttt.fogel.network import load_network, network_player
from evolving_ttt.fogel_score import best_response, opponent_probabilities, rule_base_policy
from evolving_ttt.game import EMPTY, O, X, board_index, board_tables, legal_moves, play, player_to_move, winner
from evolving_ttt.outcomes import (
    audit_policy,
    best_response_policy,
    boards_to_move,
    check_policy,
    outcome_probabilities,
    outcome_table,
    perfect_policy,
    policy_table,
    random_policy,
    sample_game,
    sample_games,
)
from evolving_ttt.perfect import audit_player, minimax_values, perfect_move
from evolving_ttt.rule_base import OpponentRules, rule_candidates


def test_boards_to_move_are_the_legal_unfinished_boards_of_each_side():
    tables = board_tables()
    for mark in (X, O):
        rows = boards_to_move(mark)
        assert np.all(tables.legal[rows] & ~tables.over[rows] & (tables.to_move[rows] == mark))
    assert len(boards_to_move(X)) + len(boards_to_move(O)) == int((tables.legal & ~tables.over).sum())
    assert (len(boards_to_move(X)), len(boards_to_move(O))) == (2423, 2097)


def test_random_against_random_gives_the_known_fractions():
    # 737/1260, 160/1260 and 363/1260 are the classical results of two uniformly random players.
    result = outcome_probabilities(random_policy(X), random_policy(O))
    assert [Fraction(float(p)).limit_denominator(5000) for p in result] == [
        Fraction(737, 1260), Fraction(160, 1260), Fraction(363, 1260)
    ]  # fmt: skip


def test_perfect_against_perfect_is_always_a_draw_and_the_random_move_only_helps_the_other_side():
    assert np.allclose(outcome_probabilities(perfect_policy(X), perfect_policy(O)), [0, 1, 0])
    x_wins, _, o_wins = outcome_probabilities(perfect_policy(X), perfect_policy(O, 0.1))
    assert x_wins > 0.1 and o_wins == 0
    x_wins, _, o_wins = outcome_probabilities(perfect_policy(X, 0.1), perfect_policy(O))
    assert o_wins > 0.05 and x_wins == 0


def test_perfect_policy_spreads_over_exactly_the_best_moves():
    values = minimax_values()
    table = perfect_policy(O)
    board = np.array([X, 0, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8)  # O's only non-losing replies: the centre
    assert np.flatnonzero(table[board_index(board)]).tolist() == [4]
    board = np.array([0, 0, 0, 0, X, 0, 0, 0, 0], dtype=np.int8)  # against the centre: the four corners
    row = table[board_index(board)]
    assert np.flatnonzero(row).tolist() == [0, 2, 6, 8] and np.allclose(row[[0, 2, 6, 8]], 0.25)
    boards, table = board_tables().boards, perfect_policy(X)
    for i in boards_to_move(X)[::97]:
        child_values = {s: values[board_index(play(boards[i], s))] for s in legal_moves(boards[i])}
        best = max(child_values.values())
        assert np.flatnonzero(table[i]).tolist() == [s for s, v in child_values.items() if v == best]


def outcome_by_recursion(x_policy, o_policy, board, memo=None):
    """The readable twin: walk every line of play from ``board`` (remembering boards already valued)."""
    memo = {} if memo is None else memo
    key = board_index(board)
    if key not in memo:
        if winner(board) != EMPTY or not legal_moves(board):
            memo[key] = np.eye(3)[{X: 0, EMPTY: 1, O: 2}[winner(board)]]
        else:
            row = (x_policy if player_to_move(board) == X else o_policy)[key]
            memo[key] = sum(
                row[s] * outcome_by_recursion(x_policy, o_policy, play(board, s), memo) for s in legal_moves(board)
            )
    return memo[key]


def random_stochastic_policy(rng, mark):
    table = random_policy(mark) * rng.random((3**9, 9))
    rows = boards_to_move(mark)
    table[rows] /= table[rows].sum(axis=1, keepdims=True)
    return table


@pytest.mark.slow
def test_outcome_table_agrees_with_the_recursion_on_random_stochastic_policies():
    rng = np.random.default_rng(5)
    x_policy, o_policy = random_stochastic_policy(rng, X), random_stochastic_policy(rng, O)
    table = outcome_table(x_policy, o_policy)
    for board in (
        np.zeros(9, dtype=np.int8),
        np.array([X, O, 0, 0, X, 0, 0, 0, 0], dtype=np.int8),
        np.array([X, O, X, 0, O, 0, 0, 0, 0], dtype=np.int8),
    ):
        assert np.allclose(table[board_index(board)], outcome_by_recursion(x_policy, o_policy, board))
    assert np.allclose(table[board_tables().legal].sum(axis=1), 1.0)


def test_batches_broadcast_and_give_each_pair_its_own_result():
    rng = np.random.default_rng(6)
    xs = np.stack([random_stochastic_policy(rng, X) for _ in range(3)])
    o_policy = rule_base_policy(O)
    batch = outcome_probabilities(xs, o_policy)
    assert batch.shape == (3, 3)
    for k in range(3):
        assert np.allclose(batch[k], outcome_probabilities(xs[k], o_policy))


def test_exact_outcomes_agree_with_seeded_sampling():
    x_policy, o_policy = perfect_policy(X, 0.3), rule_base_policy(O)
    exact = outcome_probabilities(x_policy, o_policy)
    rng = np.random.default_rng(7)
    games = 4000
    results, moves = sample_games(x_policy, o_policy, rng, games)
    counts = np.array([np.sum(results == X), np.sum(results == EMPTY), np.sum(results == O)])
    for result, squares in zip(results[:300], moves[:300], strict=True):
        board = np.zeros(9, dtype=np.int8)
        for square in squares:
            board = play(board, square)  # every sampled move is legal
        assert winner(board) == result
    spread = np.sqrt(exact * (1 - exact) / games)
    assert np.all(np.abs(counts / games - exact) < 4 * spread + 1e-12)


def test_sample_game_is_reproducible_from_the_seed():
    x_policy, o_policy = random_policy(X), random_policy(O)
    first = [sample_games(x_policy, o_policy, np.random.default_rng(11), 5)[1] for _ in range(3)]
    assert all(games == first[0] for games in first)
    assert sample_games(x_policy, o_policy, np.random.default_rng(12), 5)[1] != first[0]
    assert sample_game(x_policy, o_policy, np.random.default_rng(11)) == (
        sample_games(x_policy, o_policy, np.random.default_rng(11), 1)[0][0], first[0][0]
    )


@pytest.mark.slow
def test_policy_table_of_a_deterministic_player_and_its_errors():
    table = policy_table(perfect_move, X)
    rows = boards_to_move(X)
    assert np.array_equal(table[rows].sum(axis=1), np.ones(len(rows)))
    for i in rows[::50]:
        assert table[i, perfect_move(board_tables().boards[i])] == 1
    assert np.allclose(outcome_probabilities(table, perfect_policy(O)), [0, 1, 0])
    with pytest.raises(ValueError, match="must return an empty square"):
        policy_table(lambda board: 4, X)
    with pytest.raises(ValueError, match="player must be a function"):
        policy_table("perfect", X)
    with pytest.raises(ValueError, match="mark must be X"):
        policy_table(perfect_move, 2)


def test_bad_policies_are_refused_with_the_reason():
    good = random_policy(X)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 19683, 9\)"):
        outcome_probabilities(good[:100], random_policy(O))
    with pytest.raises(ValueError, match="numpy array"):
        outcome_probabilities(good.tolist(), random_policy(O))
    bad = good.copy()
    bad[0] *= 0.5
    with pytest.raises(ValueError, match="sum to 1; on board \\.\\.\\.\\.\\.\\.\\.\\.\\. they sum to 0.5"):
        check_policy(bad, X)
    occupied = good.copy()
    i = board_index(np.array([X, O, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8))
    occupied[i] = 0
    occupied[i, 0] = 1
    with pytest.raises(ValueError, match="not empty"):
        check_policy(occupied, X)
    negative = good.copy()
    negative[0, :2] = [-0.5, 1.5 - good[0, 1]]
    with pytest.raises(ValueError, match="non-negative"):
        check_policy(negative, X)
    with pytest.raises(ValueError, match="random_move_probability"):
        perfect_policy(X, 1.5)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        sample_game(good, random_policy(O), 3)
    with pytest.raises(ValueError, match="games must be"):
        sample_games(good, random_policy(O), np.random.default_rng(0), -1)


def test_rule_base_policy_is_the_opponent_of_chapter_10_and_plays_x_by_the_swapped_rules():
    for rules in (OpponentRules(), OpponentRules(rule_d_lines="opponent", random_move_probability=0.3)):
        assert np.array_equal(rule_base_policy(O, rules), opponent_probabilities(rules))
    table = rule_base_policy(X)
    board = np.array([O, O, 0, X, X, 0, 0, 0, 0], dtype=np.int8)  # X wins at 5 by step (b)
    assert rule_candidates(board, mark=X) == [5]
    row = table[board_index(board)]
    assert np.isclose(row[5], 0.9 + 0.1 / 5) and np.isclose(row.sum(), 1.0)
    with pytest.raises(ValueError, match="rules must be an OpponentRules"):
        rule_base_policy(O, "paper")


def test_the_network_against_the_rule_base_by_policies_is_the_exact_score_of_chapter_10():
    network, _ = load_network(Path(__file__).resolve().parents[1] / "book" / "data" / "champion.json")
    rules = OpponentRules(first_reply="rules")  # the policy table's first reply follows the rules
    x_wins, _, o_wins = outcome_probabilities(policy_table(network_player(network), X), rule_base_policy(O, rules))
    assert np.isclose(32 * (x_wins - 10 * o_wins), exact_score(network, rules)[0], rtol=0, atol=1e-9)


def test_policy_audit_agrees_with_the_readable_audit_and_judges_both_sides():
    network, _ = load_network(Path(__file__).resolve().parents[1] / "book" / "data" / "champion.json")
    readable = audit_player(network_player(network))
    table = audit_policy(policy_table(network_player(network), X), X)
    assert (table.positions, table.mistakes, table.can_lose) == (readable.positions, readable.mistakes, False)
    for mark in (X, O):
        perfect = audit_policy(perfect_policy(mark), mark)
        assert perfect.mistakes == 0 and not perfect.can_lose and perfect.worst_value == 0
        careless = audit_policy(perfect_policy(mark, 0.1), mark)
        assert careless.can_lose and careless.worst_value == -1 and careless.positions == len(boards_to_move(mark))
    # the lowest-square player as X is beaten by O taking squares 3, 4 and then 5 or 6
    assert audit_policy(policy_table(lambda board: legal_moves(board)[0], X), X).can_lose


@pytest.mark.slow
def test_best_response_policy_is_chapter_10s_expectimax():
    ceiling = best_response()
    table, values = best_response_policy(rule_base_policy(O), X, (1, -10, 0))
    rows = np.flatnonzero(ceiling.policy >= 0)[1:]  # the empty board's opening is chosen for the protocol
    assert np.allclose(values[rows], ceiling.values[rows], rtol=0, atol=1e-12)
    chosen, theirs = table[rows].argmax(axis=1), ceiling.policy[rows]
    boards = board_tables().boards
    for i, a, b in zip(rows[chosen != theirs], chosen[chosen != theirs], theirs[chosen != theirs], strict=True):
        # where the moves differ, the two are tied up to rounding
        assert np.isclose(values[board_index(play(boards[i], a))], values[board_index(play(boards[i], b))], atol=1e-12)
    with pytest.raises(ValueError, match="opponent_policy must give each board where O is to move"):
        best_response_policy(random_policy(X), X)


def test_functions_of_one_table_refuse_a_batch_of_them():
    batch = np.stack([random_policy(X)] * 2)
    for call in (lambda: audit_policy(batch, X), lambda: best_response_policy(np.stack([random_policy(O)] * 2), X),
                 lambda: sample_games(batch, random_policy(O), np.random.default_rng(0), 1)):  # fmt: skip
        with pytest.raises(ValueError, match=r"must be one table of shape \(19683, 9\); got \(2, 19683, 9\)"):
            call()
