"""Chapters 8, 10 and 11: trees of games, exact expected scores, the best response, minimax and the audit."""

import itertools
import math

import numpy as np
import pytest

from evolving_ttt.drawing import draw_game_tree, tree_counts
from evolving_ttt.fogel.engine import play_protocol_batch
from evolving_ttt.fogel.exact import exact_score, exact_score_readable, exact_scores, game_payoff_moments
from evolving_ttt.fogel.network import (
    Network,
    Population,
    concatenate_populations,
    network_player,
    random_network,
    random_population,
    stack_networks,
)
from evolving_ttt.fogel.selection import game_payoffs
from evolving_ttt.fogel.trees import game_tree
from evolving_ttt.fogel_score import PAPER_PAYOFF, best_response, o_reply_distribution, opponent_probabilities
from evolving_ttt.game import (
    EMPTY,
    O,
    X,
    board_from_string,
    board_index,
    board_tables,
    is_game_over,
    legal_moves,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.perfect import audit_player, lowest_square_player, minimax_values, perfect_move
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules, rule_candidates

ALL_RULES = [
    OpponentRules(rule_d_lines=d, first_reply=f) for d, f in itertools.product(("own", "opponent"), ("cycle", "rules"))
]
PAYOFF_VALUE = {X: 0, O: 1, EMPTY: 2}  # position of each result in a (win, loss, draw) payoff


def replay(moves):
    board = np.zeros(9, dtype=np.int8)
    for square in moves:
        board = play(board, square)
    return board


def zero_network(hidden=2):
    """All outputs equal: the network always takes the lowest empty square."""
    return Network(np.zeros((hidden, 9)), np.zeros(hidden), np.zeros((9, hidden)), np.zeros(9))


def repeat_network(network, copies):
    single = stack_networks([network])
    return Population(*(np.repeat(a, copies, axis=0) for a in single.arrays()))


# --- trees of games (chapter 8) ---------------------------------------------------------------------------


def check_tree(tree, player, rules):
    leaves = tree.leaves()
    counts = tree_counts(tree)
    assert sum(counts.values()) == len(leaves)
    assert np.count_nonzero(tree.board) == 1 and tree.moves == [player(np.zeros(9, dtype=np.int8))]

    def walk(node, first):
        assert np.array_equal(replay(node.moves), node.board)
        if not node.children:
            assert is_game_over(node.board)
            assert node.result == winner(node.board)
            return
        assert not is_game_over(node.board) and node.result is None
        expected = legal_moves(node.board) if first and rules.first_reply == "cycle" else rule_candidates(
            node.board, rules)  # fmt: skip
        assert [child.moves[len(node.moves)] for child in node.children] == expected
        for child in node.children:
            after_o = play(node.board, child.moves[len(node.moves)])
            if len(child.moves) == len(node.moves) + 2:  # X answered with the player's move
                assert child.moves[-1] == player(after_o)
            else:
                assert is_game_over(after_o)
            walk(child, False)

    walk(tree, True)
    return counts


def tree_expected_score(tree, rules, payoff):
    """The protocol's expected score when O never moves at random, from the tree alone."""

    def value(node):
        if not node.children:
            return payoff[PAYOFF_VALUE[node.result]]
        return sum(value(child) for child in node.children) / len(node.children)

    if rules.first_reply == "cycle":
        return 4 * sum(value(child) for child in tree.children)
    return 32 * value(tree)


def test_the_champions_tree_of_games(champion):
    network, _ = champion
    player = network_player(network)
    tree = game_tree(player)
    counts = check_tree(tree, player, PAPER_RULES)
    assert len(tree.children) == 8
    assert counts["losses"] == 0
    assert counts["wins"] > 0


@pytest.mark.parametrize("rules", [OpponentRules(random_move_probability=0.0),
                                   OpponentRules(random_move_probability=0.0, first_reply="rules",
                                                   rule_d_lines="opponent")])  # fmt: skip
def test_a_tree_gives_the_exact_score_of_an_opponent_that_never_moves_at_random(rules, champion):
    for player in (network_player(champion[0]), lowest_square_player):
        tree = game_tree(player, rules)
        check_tree(tree, player, rules)
        expected = tree_expected_score(tree, rules, PAPER_PAYOFF)
        assert exact_score_readable(player, rules)[0] == pytest.approx(expected, abs=1e-9)
    assert exact_score(champion[0], rules)[0] == pytest.approx(
        tree_expected_score(game_tree(network_player(champion[0]), rules), rules, PAPER_PAYOFF), abs=1e-9
    )


def test_a_naive_player_loses_some_games_of_its_tree():
    tree = game_tree(lowest_square_player)
    counts = check_tree(tree, lowest_square_player, PAPER_RULES)
    assert counts["losses"] > 0
    assert any(leaf.moves[:6] == [0, 1, 2, 4, 3, 7] for leaf in tree.leaves())  # the hand-checked loss


def test_draw_game_tree_frames_every_leaf(champion):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tree = game_tree(network_player(champion[0]))
    ax = draw_game_tree(tree)
    assert len(ax.patches) == len(tree.leaves())
    plt.close(ax.figure)


# --- exact scores (chapter 10) ----------------------------------------------------------------------------


def brute_force_moments(player, rules, payoff):
    """Mean and variance of the protocol score, enumerating games with the rules' probabilities written out."""

    def moments(board):
        if is_game_over(board):
            value = payoff[PAYOFF_VALUE[winner(board)]]
            return value, value * value
        if player_to_move(board) == X:
            return moments(play(board, player(board)))
        empty, candidates = legal_moves(board), rule_candidates(board, rules)
        p = rules.random_move_probability
        mean = second = 0.0
        for square in empty:
            chance = p / len(empty) + (1 - p) / len(candidates) * (square in candidates)
            m, s = moments(play(board, square))
            mean, second = mean + chance * m, second + chance * s
        return mean, second

    first = play(np.zeros(9, dtype=np.int8), player(np.zeros(9, dtype=np.int8)))
    if rules.first_reply == "cycle":
        per_reply = [moments(play(first, reply)) for reply in legal_moves(first)]
        return 4 * sum(m for m, _ in per_reply), 4 * sum(s - m * m for m, s in per_reply)
    m, s = moments(first)
    return 32 * m, 32 * (s - m * m)


@pytest.mark.parametrize("rules", [PAPER_RULES, OpponentRules(rule_d_lines="opponent", first_reply="rules")])
def test_exact_scores_by_brute_force_for_the_lowest_square_player(rules):
    payoff = (1.0, -10.0, 0.0)
    mean, variance = brute_force_moments(lowest_square_player, rules, payoff)
    assert exact_score_readable(lowest_square_player, rules, payoff) == pytest.approx((mean, variance), abs=1e-9)
    # a network with all outputs equal plays exactly like the lowest-square player
    assert exact_score(zero_network(), rules, payoff) == pytest.approx((mean, variance), abs=1e-9)
    board = board_from_string("X.. .O. ...")
    m, s = game_payoff_moments(lowest_square_player, board, rules, payoff)
    assert 0 <= s - m * m and -10 <= m <= 1


@pytest.mark.slow
@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: f"{r.rule_d_lines}-{r.first_reply}")
def test_exact_scores_match_the_readable_recursion(rules):
    rng = np.random.default_rng(ALL_RULES.index(rules) + 60)
    pop = random_population(rng, 2)
    for payoff, i in ((PAPER_PAYOFF, 0), ((1, -1, 0), 1)):
        means, variances = exact_scores(pop, rules, payoff)
        assert means.shape == variances.shape == (2,)
        readable = exact_score_readable(network_player(pop.network(i)), rules, payoff)
        assert np.allclose((means[i], variances[i]), readable, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_exact_scores_match_with_extreme_random_move_probability(p):
    rules = OpponentRules(random_move_probability=p)
    net = random_network(np.random.default_rng(70 + int(p)))
    assert np.allclose(exact_score(net, rules), exact_score_readable(network_player(net), rules),
                       rtol=1e-9, atol=1e-9)  # fmt: skip


def test_exact_scores_chunks_and_batch_shape():
    pop = random_population(np.random.default_rng(15), 12)
    whole = exact_scores(pop)
    chunked = exact_scores(pop, chunk=5)
    shaped = exact_scores(pop.reshape(3, 4))
    for a, b, c in zip(whole, chunked, shaped, strict=True):
        assert np.array_equal(a, b)
        assert np.array_equal(a.reshape(3, 4), c)
    assert np.all(whole[1] >= 0)
    single = exact_score(pop.network(7))
    assert single == pytest.approx((whole[0][7], whole[1][7]), abs=1e-12)


@pytest.mark.parametrize("rule_d", ["own", "opponent"])
def test_opponent_probabilities_match_the_reply_distribution(rule_d):
    rules = OpponentRules(rule_d_lines=rule_d, random_move_probability=0.25)
    probabilities = opponent_probabilities(rules)
    tables = board_tables()
    o_to_move = tables.legal & ~tables.over & (tables.to_move == O)
    assert np.allclose(probabilities[o_to_move].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(probabilities[~o_to_move] == 0)
    for i in np.flatnonzero(o_to_move)[::3]:
        row = np.zeros(9)
        for square, q in o_reply_distribution(tables.boards[i], rules).items():
            row[square] = q
        assert np.allclose(probabilities[i], row, rtol=0, atol=1e-15)


@pytest.mark.parametrize("rules", [PAPER_RULES, OpponentRules(first_reply="rules")], ids=["cycle", "rules"])
def test_sampled_scores_agree_with_the_exact_moments(rules):
    copies = 3000
    rng = np.random.default_rng(99 if rules.first_reply == "cycle" else 98)
    networks = [random_network(rng) for _ in range(3 if rules.first_reply == "cycle" else 1)]
    pop = concatenate_populations([repeat_network(net, copies) for net in networks])
    results = play_protocol_batch(pop, rng.random((len(networks) * copies, 32, 4)), rules)
    scores = game_payoffs(results).sum(axis=1).reshape(len(networks), copies)
    exact_means, exact_variances = exact_scores(stack_networks(networks), rules)
    for k in range(len(networks)):
        assert exact_variances[k] > 0
        standard_error = math.sqrt(exact_variances[k] / copies)
        assert abs(scores[k].mean() - exact_means[k]) < 4 * standard_error
        assert scores[k].var(ddof=1) == pytest.approx(exact_variances[k], rel=0.15)


# --- the best response ------------------------------------------------------------------------------------


def test_best_response_reaches_its_ceiling(paper_best_response):
    best = paper_best_response
    player = best.player()
    mean, _ = exact_score_readable(player)
    assert mean == pytest.approx(best.ceiling, abs=1e-9)
    assert best.policy[0] == best.opening == player(np.zeros(9, dtype=np.int8))
    first = play(np.zeros(9, dtype=np.int8), best.opening)
    assert best.ceiling == pytest.approx(4 * sum(best.values[board_index(play(first, r))]
                                                 for r in legal_moves(first)), abs=1e-9)  # fmt: skip
    assert not best.values.flags.writeable and not best.policy.flags.writeable


def test_the_ceiling_bounds_every_player(paper_best_response, champion):
    ceiling = paper_best_response.ceiling
    assert ceiling < 32
    assert exact_score(champion[0])[0] <= ceiling + 1e-9
    means, _ = exact_scores(random_population(np.random.default_rng(50), 50))
    assert np.all(means <= ceiling + 1e-9)
    assert exact_score_readable(perfect_move)[0] <= ceiling + 1e-9
    assert exact_score_readable(lowest_square_player)[0] < ceiling


def test_best_response_moves_are_best_one_step_ahead(paper_best_response):
    """At every X-to-move board it values, its move has the largest expected value among X's moves."""
    best = paper_best_response
    tables = board_tables()
    valued_x_boards = np.flatnonzero((best.policy >= 0) & (tables.to_move == X) & ~tables.over)
    assert len(valued_x_boards) > 100
    for i in valued_x_boards[::7]:
        if i == 0:
            continue
        board = tables.boards[i]
        children = [best.values[board_index(play(board, s))] for s in legal_moves(board)]
        assert best.values[i] == pytest.approx(max(children), abs=1e-12)
        assert best.values[board_index(play(board, int(best.policy[i])))] == best.values[i]


# --- perfect play (chapter 11) ----------------------------------------------------------------------------


@pytest.mark.slow
def test_minimax_values_against_an_independent_negamax(reachable):
    values = minimax_values()
    tables = board_tables()
    assert values[0] == 0
    assert int(np.sum(~np.isnan(values))) == 5478
    assert np.array_equal(~np.isnan(values), tables.legal)
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    memo = {}

    def value(board):  # +1 X wins, -1 O wins, with best play
        if board in memo:
            return memo[board]
        for a, b, c in lines:
            if board[a] != 0 and board[a] == board[b] == board[c]:
                memo[board] = board[a]
                return board[a]
        if 0 not in board:
            memo[board] = 0
            return 0
        mover = 1 if board.count(1) == board.count(-1) else -1
        children = [value(board[:s] + (mover,) + board[s + 1 :]) for s in range(9) if board[s] == 0]
        memo[board] = max(children) if mover == 1 else min(children)
        return memo[board]

    for board in reachable:
        assert values[board_index(board)] == value(tuple(int(v) for v in board))
    opening_values = [values[board_index(play(np.zeros(9, dtype=np.int8), s))] for s in range(9)]
    assert opening_values == [0] * 9


def test_known_position_values_and_perfect_moves():
    values = minimax_values()
    board = board_from_string("XX. OO. ...")  # X to move completes the top row
    assert values[board_index(board)] == 1 and perfect_move(board) == 2
    board = board_from_string("XX. OO. ..X")  # O to move wins at 5 at once, or at 2 with a fork
    assert values[board_index(board)] == -1
    assert perfect_move(board) == 2  # both win for O; ties go to the lowest square
    assert values[board_index(play(board, 5))] == values[board_index(play(board, 2))] == -1
    assert values[board_index(play(board, 6))] == 1  # neither win nor block: X wins at 2
    assert values[board_index(board_from_string(".O. .X. ..."))] == 1  # an edge reply to the centre loses
    assert values[board_index(board_from_string("O.. .X. ..."))] == 0  # a corner reply draws
    board = board_from_string("X.. .O. ..X")  # O must not take a corner
    assert perfect_move(board) in (1, 3, 5, 7)
    assert values[board_index(play(board, 2))] == 1


def test_perfect_move_rejects_finished_and_illegal_boards():
    with pytest.raises(ValueError, match="game is over on this board; there is no move to make"):
        perfect_move(board_from_string("XXX OO. ..."))
    with pytest.raises(ValueError, match="game is over"):
        perfect_move(board_from_string("XOX XOO OXX"))
    with pytest.raises(ValueError, match="impossible piece counts"):
        perfect_move([1, 1, 0, 0, 0, 0, 0, 0, 0])


def test_the_perfect_player_never_loses_and_never_errs():
    audit = audit_player(perfect_move)
    assert audit.losses == 0 and audit.mistakes == 0 and audit.mistake_boards == ()
    assert audit.games == audit.wins + audit.draws + audit.losses > 0
    assert audit.positions > 0


def test_the_lowest_square_player_loses_and_errs():
    audit = audit_player(lowest_square_player)
    assert audit.losses > 0 and audit.mistakes > 0
    assert audit.games == audit.wins + audit.draws + audit.losses
    assert audit.mistakes == len(audit.mistake_boards) <= audit.positions
    assert list(audit.mistake_boards) == sorted(audit.mistake_boards)
    values = minimax_values()
    tables = board_tables()
    for i in audit.mistake_boards:
        board = tables.boards[i]
        assert tables.to_move[i] == X and not tables.over[i]
        after = play(board, lowest_square_player(board))
        assert values[board_index(after)] < values[i]
    # the first move of the lowest-square player (a corner) is no mistake
    assert 0 not in audit.mistake_boards


def test_the_champions_audit_agrees_with_its_tree(champion):
    audit = audit_player(network_player(champion[0]))
    assert audit.games == audit.wins + audit.draws + audit.losses
    tree_losses = tree_counts(game_tree(network_player(champion[0])))["losses"]
    assert tree_losses <= audit.losses  # the rule-base tree is part of the tree of all O replies
    assert audit.mistakes == len(audit.mistake_boards)


def test_bad_arguments_to_the_exact_functions_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="population must be a Population"):
        exact_scores("abc")
    with pytest.raises(ValueError, match="chunk must be a whole number"):
        exact_scores(stack_networks([random_network(np.random.default_rng(0))]), chunk=0)
    with pytest.raises(ValueError, match="rules must be an OpponentRules"):
        exact_scores(stack_networks([random_network(np.random.default_rng(0))]), rules="paper")
    with pytest.raises(ValueError, match="network must be a Network"):
        exact_score([0.1] * 9)
    with pytest.raises(ValueError, match="rules must be an OpponentRules"):
        best_response(rules=None)
