"""Chapter 3: the near-perfect rule-based opponent and the 32-game protocol (readable and batched)."""

import itertools

import numpy as np
import pytest

from evolving_ttt.fogel.engine import (
    BIAS_UNIT_SUM,
    ENGINE_UNITS,
    block_sizes,
    concatenate_openings,
    distinct_boards,
    empty_board_negated_sums,
    endgame,
    endgame_class,
    engine_steps,
    engine_weights,
    first_best_squares,
    play_protocol_batch,
    protocol_openings,
    take_rows,
    x_turn_numbers,
    x_turn_square_codes,
)
from evolving_ttt.fogel.network import (
    MAX_HIDDEN,
    Network,
    network_player,
    network_preactivations,
    random_network,
    random_population,
    sigmoid,
    stack_networks,
)
from evolving_ttt.fogel_score import o_reply_distribution
from evolving_ttt.game import (
    EMPTY,
    N_BOARDS,
    O,
    X,
    board_from_string,
    board_index,
    board_tables,
    is_game_over,
    legal_moves,
    network_input,
    play,
    player_to_move,
    winner,
)
from evolving_ttt.perfect import lowest_square_player
from evolving_ttt.rule_base import (
    GAMES_PER_EVALUATION,
    PAPER_RULES,
    OpponentRules,
    first_reply_square,
    near_perfect_move,
    near_perfect_move_given,
    near_perfect_moves,
    opponent_tables,
    pick_uniform,
    play_game,
    play_protocol,
    random_player,
    rule_candidates,
    split_uniform,
)

ALL_RULES = [
    OpponentRules(rule_d_lines=d, first_reply=f) for d, f in itertools.product(("own", "opponent"), ("cycle", "rules"))
]
# 99.9% quantiles of the chi-square distribution, by degrees of freedom
CHI2_999 = {3: 16.266, 5: 20.515, 7: 24.322}


def chi_square(counts, expected):
    counts, expected = np.asarray(counts, float), np.asarray(expected, float)
    return float(((counts - expected) ** 2 / expected).sum())


def o_to_move_indices():
    tables = board_tables()
    return np.flatnonzero(tables.legal & ~tables.over & (tables.to_move == O))


def test_there_are_2097_boards_with_o_to_move():
    assert len(o_to_move_indices()) == 2097


@pytest.mark.parametrize("rule_d", ["own", "opponent"])
def test_rule_candidates_match_the_opponent_tables_everywhere(rule_d):
    rules = OpponentRules(rule_d_lines=rule_d)
    tables = board_tables()
    rule_tables = opponent_tables(rule_d)
    indices = o_to_move_indices()
    for i in indices:
        expected = rule_candidates(tables.boards[i], rules)
        assert rule_tables.candidates[i, : rule_tables.n_candidates[i]].tolist() == expected
        assert np.all(rule_tables.candidates[i, rule_tables.n_candidates[i] :] == -1)
    elsewhere = np.setdiff1d(np.arange(N_BOARDS), indices)
    assert np.all(rule_tables.n_candidates[elsewhere] == 0)


def test_the_two_rule_d_readings_differ_somewhere():
    own, opp = opponent_tables("own"), opponent_tables("opponent")
    assert not np.array_equal(own.candidates, opp.candidates)


@pytest.mark.parametrize(
    "rules",
    [*ALL_RULES[::2], OpponentRules(random_move_probability=0.0), OpponentRules(random_move_probability=1.0),
     OpponentRules(random_move_probability=0.37, rule_d_lines="opponent")],
)  # fmt: skip
def test_near_perfect_move_given_matches_the_batched_moves(rules):
    rng = np.random.default_rng(21)
    tables = board_tables()
    indices = rng.choice(o_to_move_indices(), size=300, replace=False)
    p = rules.random_move_probability
    edges = [0.0, p, np.nextafter(p, 0.0), np.nextafter(1.0, 0.0), 0.5]
    u = np.concatenate([rng.random(len(indices)), np.resize(np.clip(edges, 0.0, np.nextafter(1.0, 0.0)), len(indices))])
    idx = np.concatenate([indices, indices])
    batched = near_perfect_moves(idx, u, rules)
    readable = [near_perfect_move_given(tables.boards[i], float(v), rules) for i, v in zip(idx, u, strict=True)]
    assert batched.tolist() == readable
    assert np.all(tables.boards[idx, batched] == EMPTY)


# --- the rules on hand-made boards -----------------------------------------------------------------------


def test_a_win_is_taken_before_a_block():
    board = board_from_string("XX. OO. ..X")  # O wins at 5; X threatens 2
    assert rule_candidates(board) == [5]
    assert rule_candidates(board, OpponentRules(rule_d_lines="opponent")) == [5]


def test_a_win_and_a_block_on_the_same_square():
    board = board_from_string("O.X .OX X..")  # O wins at 8 (0-4-8); X also threatens 8 (2-5-8)
    assert player_to_move(board) == O
    assert rule_candidates(board) == [8]


def test_two_winning_squares_are_both_candidates():
    board = board_from_string("OO. XOX X.X")  # O wins at 2 (0-1-2) or 7 (1-4-7); X threatens 2 and 7 too
    assert rule_candidates(board) == [2, 7]


def test_a_block_when_there_is_no_win():
    assert rule_candidates(board_from_string("XX. .O. ...")) == [2]
    double_threat = board_from_string("XO. .X. X.O")  # X threatens 2 (2-4-6) and 3 (0-3-6); O has no win
    assert rule_candidates(double_threat) == [2, 3]


def test_rule_d_own_and_opponent_readings_on_hand_boards():
    board = board_from_string("X.. ... ...")
    # 'own': no O on the board, so no line holds one O: step (e), every empty square
    assert rule_candidates(board, OpponentRules(rule_d_lines="own")) == [1, 2, 3, 4, 5, 6, 7, 8]
    # 'opponent': the lines through X's corner that are otherwise empty
    assert rule_candidates(board, OpponentRules(rule_d_lines="opponent")) == [1, 2, 3, 4, 6, 8]
    board = board_from_string("X.. .OX ...")  # X 0, 5; O 4; no two in a line anywhere
    # 'own': lines through O's centre that are otherwise empty: 1-4-7 and 2-4-6
    assert rule_candidates(board, OpponentRules(rule_d_lines="own")) == [1, 2, 6, 7]
    # 'opponent': 0-1-2, 0-3-6 and 2-5-8
    assert rule_candidates(board, OpponentRules(rule_d_lines="opponent")) == [1, 2, 3, 6, 8]


def test_rule_e_when_nothing_else_applies():
    board = board_from_string("XOX XO. OX.")  # O to move; every line is blocked or holds one X
    assert player_to_move(board) == O and not is_game_over(board)
    assert rule_candidates(board) == [5, 8] == legal_moves(board)


def independent_candidates(board, mark, rule_d):
    """Steps (b)-(e) for ``mark``, written out square by square."""
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    b = [int(v) for v in board]
    d_mark = mark if rule_d == "own" else -mark
    for wanted, count, gaps in ((mark, 2, 1), (-mark, 2, 1), (d_mark, 1, 2)):
        squares = sorted(
            {
                s
                for line in lines
                for s in line
                if b[s] == 0 and [b[q] for q in line].count(wanted) == count and [b[q] for q in line].count(0) == gaps
            }
        )
        if squares:
            return squares
    return [s for s in range(9) if b[s] == 0]


@pytest.mark.parametrize("rule_d", ["own", "opponent"])
def test_rule_candidates_for_either_side_match_an_independent_reading(rule_d):
    rules = OpponentRules(rule_d_lines=rule_d)
    tables = board_tables()
    going = tables.legal & ~tables.over
    for mark in (X, O):
        indices = np.flatnonzero(going & (tables.to_move == mark))
        for i in indices[::4]:
            board = tables.boards[i]
            assert rule_candidates(board, rules, mark) == independent_candidates(board, mark, rule_d)


def test_rule_candidates_playing_x_on_hand_boards():
    assert rule_candidates(board_from_string("XX. OO. ..."), PAPER_RULES, X) == [2]  # win
    assert rule_candidates(board_from_string("OO. X.. X.."), PAPER_RULES, X) == [2]  # block
    board = board_from_string("O.. .X. ...")
    assert rule_candidates(board, OpponentRules(rule_d_lines="own"), X) == [1, 2, 3, 5, 6, 7]
    assert rule_candidates(board, OpponentRules(rule_d_lines="opponent"), X) == [1, 2, 3, 6]
    with pytest.raises(ValueError, match="the rule base plays X here: it needs a board where X is to move"):
        rule_candidates(board_from_string("X.. ... ..."), PAPER_RULES, X)
    u = np.random.default_rng(3).random(200)
    moves = {near_perfect_move_given(board, float(v), PAPER_RULES, X) for v in u}
    assert moves == set(legal_moves(board))  # random moves reach every square; the rules prefer 1, 2, 3, 5, 6, 7
    rng = np.random.default_rng(4)
    assert near_perfect_move(board_from_string("XX. OO. ..."), rng, OpponentRules(0.0), X) == 2


@pytest.mark.parametrize("mark", [0, 2])
def test_rule_candidates_reject_a_mark_that_is_not_x_or_o(mark):
    with pytest.raises(ValueError, match="mark"):
        rule_candidates(board_from_string("X.. ... ..."), PAPER_RULES, mark)


def test_rule_candidates_reject_boards_without_an_o_move():
    with pytest.raises(ValueError, match="O is to move and the game is not over"):
        rule_candidates(np.zeros(9))
    with pytest.raises(ValueError, match="O is to move and the game is not over"):
        rule_candidates(board_from_string("XXX OO. ..."))
    with pytest.raises(ValueError, match="impossible piece counts"):
        rule_candidates(board_from_string("XX. ... ..."))


# --- randomness --------------------------------------------------------------------------------------------


def test_the_random_move_is_uniform_over_empty_squares():
    board = board_from_string("XX. .O. ...")  # the rules say 2 (block); six squares are empty
    empties = legal_moves(board)
    rng = np.random.default_rng(1)
    u = rng.random(6000) * 0.1  # all below the 10% threshold
    moves = near_perfect_moves(np.full(len(u), board_index(board)), u)
    counts = [int(np.sum(moves == s)) for s in empties]
    assert sum(counts) == len(u)
    assert chi_square(counts, [len(u) / 6] * 6) < CHI2_999[5]
    readable = [near_perfect_move_given(board, float(v)) for v in u[:600]]
    assert readable == moves[:600].tolist()
    # at or above the threshold the rules decide
    above = 0.1 + 0.9 * rng.random(500)
    assert set(near_perfect_moves(np.full(500, board_index(board)), above).tolist()) == {2}
    assert near_perfect_move_given(board, 0.1) == 2


def test_near_perfect_move_frequencies_match_the_reply_distribution():
    board = board_from_string("X.. .OX ...")  # rule (d) own: candidates 1, 2, 6, 7; six empty squares
    rng = np.random.default_rng(13)
    moves = [near_perfect_move(board, rng) for _ in range(2000)]
    distribution = o_reply_distribution(board)
    assert sorted(distribution) == legal_moves(board)
    assert abs(sum(distribution.values()) - 1.0) < 1e-12
    for square in (1, 2, 6, 7):
        assert distribution[square] == pytest.approx(0.1 / 6 + 0.9 / 4, rel=1e-12)
    for square in (3, 8):
        assert distribution[square] == pytest.approx(0.1 / 6, rel=1e-12)
    counts = [moves.count(s) for s in distribution]
    assert chi_square(counts, [2000 * p for p in distribution.values()]) < CHI2_999[5]


def test_random_move_probability_zero_and_one():
    board = board_from_string("XX. OO. ..X")  # candidates [5]; empties 2, 5, 6, 7
    index = board_index(board)
    u = np.random.default_rng(4).random(4000)
    never = OpponentRules(random_move_probability=0.0)
    assert set(near_perfect_moves(np.full(4000, index), u, never).tolist()) == {5}
    assert {near_perfect_move_given(board, float(v), never) for v in u[:200]} == {5}
    always = OpponentRules(random_move_probability=1.0)
    moves = near_perfect_moves(np.full(4000, index), u, always)
    counts = [int(np.sum(moves == s)) for s in (2, 5, 6, 7)]
    assert sum(counts) == 4000
    assert chi_square(counts, [1000] * 4) < CHI2_999[3]
    assert [near_perfect_move_given(board, float(v), always) for v in u[:200]] == moves[:200].tolist()


def test_split_uniform_and_pick_uniform():
    heads, v = split_uniform(np.array([0.0, 0.05, 0.1, 0.55, 0.999]), 0.1)
    assert heads.tolist() == [True, True, False, False, False]
    assert np.allclose(v, [0.0, 0.5, 0.0, 0.5, 0.999 / 0.9 - 0.1 / 0.9])
    squares = np.array([[3, 5, 7, -1], [1, 2, -1, -1]])
    assert pick_uniform(squares, np.array([3, 2]), np.array([0.99, 0.49])).tolist() == [7, 1]
    assert pick_uniform(squares, np.array([3, 2]), np.array([0.34, 0.5])).tolist() == [5, 2]


def test_first_reply_square_cycles_through_all_eight():
    start = np.zeros(9, dtype=np.int8)
    for opening in range(9):
        board = play(start, opening)
        replies = [first_reply_square(board, g) for g in range(GAMES_PER_EVALUATION)]
        assert replies[:8] == legal_moves(board)
        assert sorted(set(replies)) == legal_moves(board)
        assert all(replies.count(s) == 4 for s in set(replies))
        assert replies == replies[:8] * 4


# --- whole games -------------------------------------------------------------------------------------------


def test_play_game_by_hand():
    # X always takes the lowest square. Game 0: O's cycled first reply is square 1; then rule (d) gives
    # O the choice [4, 7], u = 0.5 -> (0.5 - 0.1) / 0.9 = 0.44 -> the first, 4; X plays 3; O wins at 7.
    result, moves = play_game(lowest_square_player, [0.5] * 4, PAPER_RULES, game=0)
    assert (result, moves) == (-1, [0, 1, 2, 4, 3, 7])
    # game 3: O's first reply is the fourth empty square, 4
    result, moves = play_game(lowest_square_player, [0.5] * 4, PAPER_RULES, game=3)
    assert moves[:2] == [0, 4]


def test_play_protocol_rejects_wrong_uniforms():
    with pytest.raises(ValueError, match=r"uniforms must have shape \(32, 4\); got \(32, 3\)"):
        play_protocol(lowest_square_player, np.zeros((32, 3)))


@pytest.mark.slow
@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: f"{r.rule_d_lines}-{r.first_reply}")
def test_play_protocol_batch_matches_play_protocol(rules):
    rng = np.random.default_rng(ALL_RULES.index(rules) + 40)
    pop = random_population(rng, 10)
    uniforms = rng.random((10, 32, 4))
    batched = play_protocol_batch(pop, uniforms, rules)
    assert batched.shape == (10, 32)
    for i in range(10):
        readable = play_protocol(network_player(pop.network(i)), uniforms[i], rules)
        assert readable.tolist() == batched[i].tolist()
    # a batch of shape (2, 5) gives the same results
    assert np.array_equal(play_protocol_batch(pop.reshape(2, 5), uniforms.reshape(2, 5, 32, 4), rules),
                          batched.reshape(2, 5, 32))  # fmt: skip


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_play_protocol_batch_matches_with_extreme_random_move_probability(p):
    rules = OpponentRules(random_move_probability=p, first_reply="rules")
    rng = np.random.default_rng(int(p * 10) + 100)
    pop = random_population(rng, 4)
    uniforms = rng.random((4, 32, 4))
    batched = play_protocol_batch(pop, uniforms, rules)
    for i in range(4):
        assert play_protocol(network_player(pop.network(i)), uniforms[i], rules).tolist() == batched[i].tolist()


def test_play_protocol_batch_results_are_game_results():
    pop = random_population(np.random.default_rng(2), 50)
    results = play_protocol_batch(pop, np.random.default_rng(3).random((50, 32, 4)))
    assert set(np.unique(results).tolist()) <= {-1, 0, 1}
    assert set(np.unique(results).tolist()) >= {-1, 1}  # random networks both win and lose some games


def test_play_protocol_batch_rejects_uniforms_of_the_wrong_shape():
    pop = random_population(np.random.default_rng(0), 3)
    with pytest.raises(ValueError, match="uniforms must have shape"):
        play_protocol_batch(pop, np.zeros((2, 32, 4)))
    # 4 * 32 * 3 == 3 * 32 * 4 numbers: the wrong shape must still be caught
    with pytest.raises(ValueError, match="uniforms must have shape"):
        play_protocol_batch(pop, np.zeros((4, 32, 3)))


def test_play_protocol_batch_matches_play_protocol_when_outputs_saturate():
    """A network whose outputs all round to 1.0 (pre-activations 40..48): readable and batched games must agree."""
    net = Network(np.zeros((1, 9)), np.zeros(1), np.zeros((9, 1)), -(40.0 + np.arange(9)))
    uniforms = np.random.default_rng(0).random((32, 4))
    readable = play_protocol(network_player(net), uniforms)
    batched = play_protocol_batch(stack_networks([net]), uniforms[None])[0]
    assert readable.tolist() == batched.tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"random_move_probability": 1.5}, r"random_move_probability must be a probability in \[0, 1\]; got 1.5"),
        ({"random_move_probability": -0.1}, r"random_move_probability must be a probability"),
        ({"random_move_probability": float("nan")}, r"random_move_probability must be a probability"),
        ({"random_move_probability": "0.1"}, r"random_move_probability must be a probability"),
        ({"random_move_probability": True}, r"random_move_probability must be a probability"),
        ({"rule_d_lines": "mine"}, r"rule_d_lines must be 'own' or 'opponent'; got 'mine'"),
        ({"first_reply": "random"}, r"first_reply must be 'cycle' or 'rules'; got 'random'"),
    ],
)
def test_opponent_rules_reject_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpponentRules(**kwargs)


def test_random_player_plays_legal_moves():
    rng = np.random.default_rng(0)
    player = random_player(rng)
    board = board_from_string("XO. .XO ...")
    moves = {player(board) for _ in range(200)}
    assert moves == set(legal_moves(board))


# --- The engine's grouping of games by board (chapter 3, explained in chapter 9) -------------------------


def test_x_turn_numbers_number_exactly_the_unfinished_boards_with_equal_marks():
    numbers, sizes = x_turn_numbers()
    for turn in range(4):
        # Independent count: every way to place `turn` X and `turn` O marks, keeping boards without a line.
        expected = 0
        for xs in itertools.combinations(range(9), turn):
            rest = [s for s in range(9) if s not in xs]
            for os_ in itertools.combinations(rest, turn):
                board = np.zeros(9, dtype=np.int8)
                board[list(xs)], board[list(os_)] = X, O
                try:
                    expected += winner(board) == 0
                except ValueError:  # X has a line but O moved after it: not a legal board
                    pass
        assert sizes[turn] == expected
        numbered = numbers[turn] < sizes[turn]
        assert numbered.sum() == expected
        assert np.array_equal(np.sort(numbers[turn][numbered]), np.arange(expected))  # one number per board
        assert np.all(numbers[turn][~numbered] == sizes[turn])
    assert sizes.tolist()[:3] == [1, 72, 756]


def test_distinct_boards_groups_games_by_board():
    rng = np.random.default_rng(70)
    n, games, size = 40, 32, 12
    board_numbers = rng.integers(0, size, (n, games)) * rng.integers(0, 2, (n, 1))  # some networks: 1 board
    table = distinct_boards(board_numbers, size)
    flat = board_numbers.ravel()
    # every game sits on a row whose board is its own, and rows never mix networks
    assert np.array_equal(flat[table.source[table.game_row]], board_numbers)
    assert np.array_equal(table.source[table.game_row] // games, np.repeat(np.arange(n), games).reshape(n, games))
    assert np.array_equal(table.network, table.source // games)  # each row's network
    # blocks cover the table in order; each network has k rows, its distinct boards first, then padding
    start, seen = 0, []
    for networks, k in table.blocks:
        for i in networks:
            rows = table.source[start : start + k]
            distinct = len(np.unique(board_numbers[i]))
            assert k >= distinct and np.all(rows // games == i)
            assert len(np.unique(flat[rows[:distinct]])) == distinct
            assert np.all(rows[distinct:] == i * games)  # padding repeats the network's first game
            start += k
        seen.extend(networks.tolist())
    assert start == len(table.source) and sorted(seen) == list(range(n))


@pytest.mark.parametrize("seed", range(5))
def test_block_sizes_minimise_the_padded_rows(seed):
    counts = np.random.default_rng(seed).integers(1, 20, 200)
    sizes = block_sizes(counts)
    assert sizes == sorted(set(sizes)) and len(sizes) <= 3 and sizes[-1] == counts.max()

    def rows(chosen):
        chosen = np.array(sorted(chosen))
        return int(chosen[np.searchsorted(chosen, counts)].sum())

    brute = min(rows({a, b, counts.max()}) for a in range(1, counts.max() + 1) for b in range(a, counts.max() + 1))
    assert rows(sizes) == brute
    assert rows(sizes) < len(counts) * counts.max()  # padding everyone to the largest count costs more


def test_engine_steps_follow_the_moves_and_stand_still_on_finished_boards():
    tables, rule_tables, steps = board_tables(), opponent_tables(), engine_steps()
    over = np.repeat(tables.over, 2 * 9)
    live = (rule_tables.choices >= 0) & ~over
    assert np.array_equal(steps.o_steps[live], 2 * 3 ** rule_tables.choices[live].astype(np.int64))
    assert np.all(steps.o_steps[over] == 0)
    assert np.all(steps.o_counts >= 1)
    one_left = ~tables.over & (tables.n_empty == 1)
    assert np.array_equal(steps.last_x_steps[one_left], 3 ** tables.empty_list[one_left, 0].astype(np.int64))
    assert np.all(steps.last_x_steps[tables.over] == 0)


def test_the_engine_bias_unit_outputs_exactly_one_and_the_layout_gives_the_network_outputs():
    assert sigmoid(BIAS_UNIT_SUM) == 1.0
    pop = random_population(np.random.default_rng(71), 6)
    columns, output_weights = engine_weights(pop)
    negated = empty_board_negated_sums(pop)
    hidden = sigmoid(-negated)
    assert np.all(hidden[:, MAX_HIDDEN] == 1.0)
    for i in range(6):
        z = hidden[i] @ output_weights[i]
        assert np.allclose(z, network_preactivations(pop.network(i), np.zeros(9, dtype=np.int8)), atol=1e-12)
    # a move subtracts the input-weight column of its square (sign flipped: the sums are b - W x)
    board = play(np.zeros(9, dtype=np.int8), 4)
    after = negated[0] - columns[4]  # network 0, square 4
    net = pop.network(0)
    expected = net.hidden_bias - net.hidden_weights @ network_input(board)
    assert np.allclose(after[: net.hidden_count], expected, atol=1e-12)


def test_distinct_boards_gives_skipped_games_no_row():
    board_numbers = np.array([[3, 3, 5, 9], [9, 9, 9, 9], [1, 2, 1, 9]])  # 9 plays "finished"
    table = distinct_boards(board_numbers, 9)
    # network 0 has boards 3 and 5, network 1 none (no block holds it), network 2 boards 1 and 2
    rows_of = {int(i): k for networks, k in table.blocks for i in networks}
    assert 1 not in rows_of and rows_of[0] >= 2 and rows_of[2] >= 2
    live = board_numbers != 9
    assert np.array_equal(board_numbers.ravel()[table.source[table.game_row[live]]], board_numbers[live])
    assert len(table.source) == sum(len(networks) * k for networks, k in table.blocks)
    assert np.all(table.game_row[~live] == len(table.source))  # skipped games: one past the last row
    everything_skipped = distinct_boards(np.full_like(board_numbers, 9), 9)
    assert everything_skipped.blocks == [] and len(everything_skipped.source) == 0


def test_distinct_boards_rejects_more_games_than_a_byte_can_number():
    with pytest.raises(ValueError, match="at most 127 games"):
        distinct_boards(np.zeros((2, 128), dtype=np.int64), 5)


def test_take_rows_gathers_whole_rows():
    rng = np.random.default_rng(72)
    table = rng.standard_normal((50, 11))
    rows = rng.integers(0, 50, 200)
    assert np.array_equal(take_rows(table, rows), table[rows])
    assert np.array_equal(take_rows(table[:, :7], rows[:3]), table[rows[:3], :7])  # a non-contiguous table


@pytest.mark.slow
def test_openings_are_the_first_three_plies_of_the_readable_games():
    rng = np.random.default_rng(73)
    population = random_population(rng, 12)
    openings = protocol_openings(population)
    assert openings.boards.shape == (12, 8) and openings.negated_sums.shape == (12, 8, ENGINE_UNITS)
    uniforms = rng.random((12, 32, 4))
    for i in range(12):
        for g in range(32):
            _, moves = play_game(network_player(population.network(i)), uniforms[i, g], game=g)
            board = np.zeros(9, dtype=np.int8)
            for square in moves[:3]:
                board = play(board, square)
            assert openings.boards[i, g % 8] == board_index(board)
        net = population.network(i)
        for g in range(8):  # the sums are b - W x on each board (up to the last bit)
            x = network_input(board_tables().boards[openings.boards[i, g]])
            expected = net.hidden_bias - net.hidden_weights @ x
            assert np.allclose(openings.negated_sums[i, g, : net.hidden_count], expected, atol=1e-12)
    results = play_protocol_batch(population, uniforms)
    assert np.array_equal(play_protocol_batch(population, uniforms, openings=openings), results)
    # openings have the population's batch shape, and join and select like networks
    grid = protocol_openings(population.reshape(3, 4))
    assert grid.shape == (3, 4) and np.array_equal(grid.boards.reshape(12, 8), openings.boards)
    picked = grid.take(np.array([[3, 0], [1, 1], [2, 3]]))
    assert np.array_equal(picked.boards[0], openings.boards[[3, 0]])
    assert np.array_equal(picked.negated_sums[2], openings.negated_sums[[10, 11]])
    halves = concatenate_openings([grid.take(np.tile([0, 1], (3, 1))), grid.take(np.tile([2, 3], (3, 1)))])
    assert np.array_equal(halves.boards, grid.boards) and np.array_equal(halves.negated_sums, grid.negated_sums)


def test_play_protocol_batch_on_an_empty_population():
    empty = random_population(np.random.default_rng(75), 3)[:0]
    for rules in (PAPER_RULES, OpponentRules(first_reply="rules")):
        assert play_protocol_batch(empty, np.zeros((0, 32, 4)), rules).shape == (0, 32)
    assert protocol_openings(empty).shape == (0,)


def test_play_protocol_batch_rejects_unusable_openings():
    rng = np.random.default_rng(74)
    population = random_population(rng, 4)
    uniforms = rng.random((4, 32, 4))
    openings = protocol_openings(population)
    with pytest.raises(ValueError, match="cycles its first reply"):
        play_protocol_batch(population, uniforms, OpponentRules(first_reply="rules"), openings)
    with pytest.raises(ValueError, match="one per network"):
        play_protocol_batch(population, uniforms, openings=protocol_openings(population[:3]))


def test_play_protocol_batch_when_one_network_has_finished_every_game_before_x_fourth_move():
    """Network 0 (seed 75) loses or wins every game by ply 5 when O follows its rules: at X's fourth turn
    it has no board to evaluate, and the other network alone must be evaluated with its own weights."""
    early = random_network(np.random.default_rng(75))
    uniforms = np.full((2, 32, 4), 0.5)  # O always follows its rules
    assert max(len(play_game(network_player(early), uniforms[0, g], game=g)[1]) for g in range(32)) <= 6
    other = random_network(np.random.default_rng(76))
    batched = play_protocol_batch(stack_networks([early, other]), uniforms)
    for i, net in enumerate((early, other)):
        assert play_protocol(network_player(net), uniforms[i]).tolist() == batched[i].tolist()


@pytest.mark.slow
@pytest.mark.parametrize("rule_d", ["own", "opponent"])
def test_endgame_outcomes_are_the_results_of_the_readable_game(rule_d):
    """Every entry of the table against the readable rule base: X's fourth move, O's last move, X's forced move."""
    rules = OpponentRules(rule_d_lines=rule_d)
    tables, last_move = board_tables(), endgame(rule_d)
    numbers, sizes = x_turn_numbers()
    assert last_move.outcome.shape == (sizes[3] + 1, 4, 10) and last_move.matters.shape == (sizes[3] + 1, 4)
    # One number u of each class: (coin, pick below 1/2) -> u, through split_uniform's rescaling with p = 0.1.
    class_u = {0: 0.1 + 0.9 * 0.25, 1: 0.1 + 0.9 * 0.75, 2: 0.1 * 0.25, 3: 0.1 * 0.75}
    assert all(endgame_class(*split_uniform(u, 0.1)) == c for c, u in class_u.items())
    rng = np.random.default_rng(80)
    faced = np.flatnonzero(numbers[3] < sizes[3])
    for index in rng.choice(faced, size=150, replace=False):
        b = numbers[3][index]
        for c, u in class_u.items():
            results = {}
            for s in legal_moves(tables.boards[index]):
                board = play(tables.boards[index], s)
                if not is_game_over(board):
                    board = play(board, near_perfect_move_given(board, u, rules))
                if not is_game_over(board):
                    board = play(board, legal_moves(board)[0])
                results[s] = winner(board)
                assert last_move.outcome[b, c, s] == results[s]
            assert last_move.matters[b, c] == (len(set(results.values())) > 1)
            if not last_move.matters[b, c]:
                assert last_move.outcome[b, c, 9] == next(iter(results.values()))
    assert not last_move.matters[-1].any()
    # X's choice matters on some boards and not on others, in every class
    assert last_move.matters[:-1].any(axis=0).all() and (~last_move.matters[:-1]).any(axis=0).all()
    # The board to evaluate: the board itself where the choice matters, the no-row number sizes[3] elsewhere.
    expected = np.where(last_move.matters, np.arange(sizes[3] + 1)[:, None], sizes[3]).ravel()
    assert np.array_equal(last_move.board_to_evaluate, expected)


def test_square_codes_list_each_boards_empty_squares_lowest_first():
    tables = board_tables()
    numbers, sizes = x_turn_numbers()
    for turn, codes in enumerate(x_turn_square_codes()):
        e = 9 - 2 * turn
        assert codes.shape == (e, sizes[turn] + 1) and codes.dtype == np.uint8
        faced = np.flatnonzero(numbers[turn] < sizes[turn])
        squares = codes[:, numbers[turn][faced]] & 15
        assert np.array_equal(squares.T, tables.empty_list[faced, :e])  # in increasing order
        assert np.array_equal(codes[:, -1] & 15, np.arange(e))
        assert np.all(np.diff(codes.astype(int) >> 4, axis=0) == -1)  # ranks e, e - 1, ..., 1


def test_first_best_squares_is_the_argmax_over_empty_squares_with_ties_to_the_lowest():
    """Against a masked argmax, on random scores with many exact ties (scores drawn from three values)."""
    rng = np.random.default_rng(81)
    tables = board_tables()
    numbers, sizes = x_turn_numbers()
    for turn in range(4):
        board_numbers = rng.integers(0, sizes[turn], 5000)
        index = np.flatnonzero(numbers[turn] < sizes[turn])[board_numbers]
        scores = rng.choice([-1.5, 0.25, 2.0], size=(5000, 9))
        codes = np.take(x_turn_square_codes()[turn], board_numbers, axis=1)
        masked = np.where(tables.empty[index], scores, -np.inf)
        assert np.array_equal(first_best_squares(scores, codes), masked.argmax(axis=1))
