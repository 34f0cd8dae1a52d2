"""Chapter 2: the 9-H-9 network and the padded Population."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evolving_ttt.fogel.network import (
    Network,
    check_hidden_count,
    concatenate_populations,
    hidden_slot_mask,
    network_move,
    network_outputs,
    network_preactivations,
    population_moves,
    population_outputs,
    random_network,
    random_population,
    sigmoid,
    stack_networks,
)
from evolving_ttt.game import (
    EMPTY,
    O,
    X,
    board_from_string,
    board_tables,
    is_game_over,
    legal_moves,
    network_input,
    play,
)
from evolving_ttt.perfect import lowest_square_player

ARRAY_NAMES = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")


def hand_network(output_bias, hidden=1):
    """A network whose hidden layer is silent (zero output weights): its output pre-activations are -output_bias."""
    return Network(np.zeros((hidden, 9)), np.zeros(hidden), np.zeros((9, hidden)), np.asarray(output_bias, float))


def sample_boards(rng, indices, count):
    tables = board_tables()
    return tables.boards[rng.choice(indices, size=count, replace=False)]


# --- construction and validation ------------------------------------------------------------------------


def test_random_population_shapes_and_padding():
    rng = np.random.default_rng(11)
    pop = random_population(rng, 500)
    assert pop.shape == (500,) and len(pop) == 500
    assert pop.hidden_weights.shape == (500, 10, 9)
    assert pop.hidden_bias.shape == (500, 10)
    assert pop.output_weights.shape == (500, 9, 10)
    assert pop.output_bias.shape == (500, 9)
    assert set(pop.hidden_count.tolist()) == set(range(1, 11))
    used = hidden_slot_mask(pop.hidden_count)
    assert np.all(pop.hidden_weights[~used] == 0)
    assert np.all(pop.hidden_bias[~used] == 0)
    assert np.all(np.swapaxes(pop.output_weights, 1, 2)[~used] == 0)
    for array, mask in ((pop.hidden_weights, used), (pop.hidden_bias, used)):
        values = array[mask]
        assert np.all(np.abs(values) <= 0.5) and np.all(values != 0)
    assert np.all(np.abs(pop.output_bias) <= 0.5)
    # the used weights really are spread over [-0.5, 0.5]
    assert pop.hidden_weights[used].min() < -0.45 and pop.hidden_weights[used].max() > 0.45


def test_random_population_is_reproducible():
    a = random_population(np.random.default_rng(3), 20)
    b = random_population(np.random.default_rng(3), 20)
    c = random_population(np.random.default_rng(4), 20)
    assert all(np.array_equal(x, y) for x, y in zip(a.arrays(), b.arrays(), strict=True))
    assert not np.array_equal(a.hidden_weights, c.hidden_weights)


@pytest.mark.parametrize("size", [0, -3, 2.0, True])
def test_random_population_rejects_bad_size(size):
    with pytest.raises(ValueError, match="size must be a whole number >= 1"):
        random_population(np.random.default_rng(0), size)


def test_population_network_unpads_and_stack_networks_round_trips():
    pop = random_population(np.random.default_rng(5), 30)
    networks = [pop.network(i) for i in range(30)]
    for i, net in enumerate(networks):
        h = int(pop.hidden_count[i])
        assert net.hidden_count == h
        assert np.array_equal(net.hidden_weights, pop.hidden_weights[i, :h])
        assert np.array_equal(net.hidden_bias, pop.hidden_bias[i, :h])
        assert np.array_equal(net.output_weights, pop.output_weights[i, :, :h])
        assert np.array_equal(net.output_bias, pop.output_bias[i])
    again = stack_networks(networks)
    for x, y in zip(again.arrays(), pop.arrays(), strict=True):
        assert x.shape == y.shape and np.array_equal(x, y)


def test_population_indexing_reshape_and_concatenate():
    pop = random_population(np.random.default_rng(6), 12)
    grid = pop.reshape(3, 4)
    assert grid.shape == (3, 4)
    net = grid.network((2, 1))
    for name in ARRAY_NAMES:
        assert np.array_equal(getattr(net, name), getattr(pop.network(9), name))
    assert grid[1].shape == (4,)
    assert np.array_equal(grid[1].hidden_count, pop.hidden_count[4:8])
    joined = concatenate_populations([grid[:, :1], grid[:, 1:]], axis=-1)
    for x, y in zip(joined.arrays(), grid.arrays(), strict=True):
        assert np.array_equal(x, y)


def test_network_copies_and_freezes_its_arrays():
    weights = np.full((2, 9), 0.25)
    net = Network(weights, [0.0, 0.0], np.zeros((9, 2)), np.zeros(9))
    weights[0, 0] = 99.0
    assert net.hidden_weights[0, 0] == 0.25
    assert net.hidden_count == 2
    with pytest.raises(ValueError, match="read-only"):
        net.hidden_weights[0, 0] = 1.0


def good_arrays(hidden=3):
    return {
        "hidden_weights": np.zeros((hidden, 9)),
        "hidden_bias": np.zeros(hidden),
        "output_weights": np.zeros((9, hidden)),
        "output_bias": np.zeros(9),
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hidden_weights": np.zeros((0, 9)), "hidden_bias": np.zeros(0), "output_weights": np.zeros((9, 0))},
         r"hidden_weights.shape\[0\] must be a whole number of hidden nodes from 1 to 10; got 0"),
        ({"hidden_weights": np.zeros((11, 9)), "hidden_bias": np.zeros(11), "output_weights": np.zeros((9, 11))},
         r"hidden_weights.shape\[0\] .* got 11"),
        ({"hidden_weights": np.zeros(9)}, r"hidden_weights.shape\[0\]"),
        ({"hidden_weights": np.zeros((3, 8))}, r"hidden_weights must have shape \(3, 9\) for H=3; got \(3, 8\)"),
        ({"hidden_bias": np.zeros(4)}, r"hidden_bias must have shape \(3,\) for H=3; got \(4,\)"),
        ({"output_weights": np.zeros((3, 9))}, r"output_weights must have shape \(9, 3\)"),
        ({"output_bias": np.zeros(8)}, r"output_bias must have shape \(9,\)"),
        ({"hidden_bias": np.array([0.0, np.nan, 0.0])}, r"hidden_bias must be finite"),
        ({"output_weights": np.full((9, 3), np.inf)}, r"output_weights must be finite"),
        ({"hidden_weights": np.full((3, 9), -np.inf)}, r"hidden_weights must be finite"),
        ({"output_bias": np.array([np.nan] * 9)}, r"output_bias must be finite"),
    ],
)  # fmt: skip
def test_network_rejects_bad_arrays(changes, message):
    arrays = {**good_arrays(), **changes}
    with pytest.raises(ValueError, match=message):
        Network(**arrays)


@pytest.mark.parametrize("hidden", [0, 11, -1, True, 2.0, "3", None])
def test_check_hidden_count_rejects(hidden):
    with pytest.raises(ValueError, match=r"hidden must be a whole number of hidden nodes from 1 to 10"):
        check_hidden_count(hidden)


def test_check_hidden_count_accepts_and_names_the_field():
    assert [check_hidden_count(h) for h in range(1, 11)] == list(range(1, 11))
    assert check_hidden_count(np.int64(7)) == 7 and type(check_hidden_count(np.int64(7))) is int
    with pytest.raises(ValueError, match=r"layer size must be .*; got 11"):
        check_hidden_count(11, "layer size")


# --- what the network computes -----------------------------------------------------------------------------


def test_sigmoid_values():
    assert sigmoid(0.0) == 0.5
    x = np.linspace(-5, 5, 11)
    assert np.allclose(sigmoid(x) + sigmoid(-x), 1.0)
    assert np.allclose(sigmoid(x), [1 / (1 + math.exp(-v)) for v in x])


def test_network_outputs_by_hand_with_subtracted_biases():
    hidden_weights = np.zeros((2, 9))
    hidden_weights[0, 0], hidden_weights[1, 1] = 1.0, 2.0
    net = Network(hidden_weights, [0.5, -1.0], np.arange(18).reshape(9, 2) / 10.0, np.linspace(-1, 1, 9))
    board = board_from_string("XO. ... ...")  # inputs: square 0 = +1, square 1 = -1
    h0 = 1 / (1 + math.exp(-(1.0 - 0.5)))
    h1 = 1 / (1 + math.exp(-(2.0 * -1.0 + 1.0)))
    expected = [
        1 / (1 + math.exp(-(net.output_weights[s, 0] * h0 + net.output_weights[s, 1] * h1 - net.output_bias[s])))
        for s in range(9)
    ]
    assert np.allclose(network_outputs(net, board), expected, rtol=1e-13, atol=0)


@pytest.mark.parametrize("seed", range(8))
def test_population_outputs_and_moves_match_the_single_network(seed, legal_unfinished_indices):
    rng = np.random.default_rng(seed)
    pop = random_population(rng, 4)
    boards = np.stack([sample_boards(rng, legal_unfinished_indices, 60) for _ in range(4)])  # (4, 60, 9)
    outputs = population_outputs(pop, boards)
    moves = population_moves(pop, boards)
    assert outputs.shape == (4, 60, 9) and moves.shape == (4, 60)
    for i in range(4):
        net = pop.network(i)
        for k, board in enumerate(boards[i]):
            assert np.allclose(outputs[i, k], network_outputs(net, board), rtol=1e-12, atol=0)
            assert moves[i, k] == network_move(net, board)
            assert board[moves[i, k]] == EMPTY


@given(st.integers(0, 2**32 - 1))
def test_population_moves_match_network_move_on_random_games(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng)
    board = np.zeros(9, dtype=np.int8)
    pop = stack_networks([net])
    while not is_game_over(board):
        move = network_move(net, board)
        assert population_moves(pop, board[None, None, :])[0, 0] == move
        assert move in legal_moves(board)
        board = play(board, move)
        if not is_game_over(board):
            board = play(board, int(rng.choice(legal_moves(board))))


def test_population_moves_on_full_boards_is_minus_one():
    pop = random_population(np.random.default_rng(1), 2)
    boards = np.array([[board_from_string("XOX XOO OXX"), np.zeros(9)]] * 2)
    assert population_moves(pop, boards)[:, 0].tolist() == [-1, -1]
    assert np.all(population_moves(pop, boards)[:, 1] >= 0)


def test_network_move_ignores_occupied_squares_with_the_largest_output():
    output_bias = np.zeros(9)
    output_bias[[0, 1, 5]] = [-5.0, -4.0, -3.0]  # pre-activations 5, 4, 3 on squares 0, 1, 5; 0 elsewhere
    net = hand_network(output_bias)
    outputs = network_outputs(net, np.zeros(9))
    assert int(np.argmax(outputs)) == 0
    assert network_move(net, np.zeros(9)) == 0
    board = board_from_string("XO. ... ...")
    assert network_move(net, board) == 5
    board2 = board_from_string("XO. ..O .X.")  # squares 0, 1 and 5 taken: all other outputs tie
    assert network_move(net, board2) == 2
    pop = stack_networks([net])
    assert population_moves(pop, np.array([[board, board2]])).tolist() == [[5, 2]]


def test_ties_go_to_the_lowest_empty_square():
    net = hand_network(np.zeros(9), hidden=4)
    pop = stack_networks([net])
    for text, expected in (("... ... ...", 0), ("XO. ... ...", 2), ("OX. .X. ...", 2), ("XOX OXO ...", 6)):
        board = board_from_string(text)
        assert network_move(net, board) == expected == lowest_square_player(board)
        assert population_moves(pop, board[None, None, :])[0, 0] == expected


def test_network_move_on_a_finished_board():
    net = hand_network(np.zeros(9))
    with pytest.raises(ValueError, match="game is over"):
        network_move(net, board_from_string("XXX OO. ..."))


def test_network_move_agrees_with_population_moves_when_outputs_saturate():
    """Output pre-activations 40..48 all give sigmoid == 1.0 in floating point.

    ``population_moves`` (and the batched engine) take the largest pre-activation (square 8);
    ``network_move`` takes the lowest of the tied outputs (square 0). The two must agree: they are the
    readable and batched forms of the same move rule.
    """
    net = hand_network(-(40.0 + np.arange(9)))
    board = np.zeros(9, dtype=np.int8)
    assert np.all(network_outputs(net, board) == 1.0)  # the outputs really are tied in floating point
    batched = int(population_moves(stack_networks([net]), board[None, None, :])[0, 0])
    assert network_move(net, board) == batched


def test_network_preactivations_and_playing_o_with_swapped_colours():
    rng = np.random.default_rng(77)
    net = random_network(rng)
    board = board_from_string("XO. .X. ..O")  # X to move
    inputs = network_input(board)
    for mark, seen in ((X, inputs), (O, -inputs)):
        hidden = 1 / (1 + np.exp(-(net.hidden_weights @ seen - net.hidden_bias)))
        expected = net.output_weights @ hidden - net.output_bias
        assert np.allclose(network_preactivations(net, board, mark), expected, rtol=1e-12, atol=1e-14)
        pre = network_preactivations(net, board, mark)
        assert np.array_equal(network_outputs(net, board, mark), sigmoid(pre))
        empty = legal_moves(board)
        assert network_move(net, board, mark) == empty[int(np.argmax(expected[empty]))]
    assert np.array_equal(network_preactivations(net, board), network_preactivations(net, board, X))
    # playing O on a board is playing X on the colour-swapped board
    pop = stack_networks([net])
    assert network_move(net, board, O) == population_moves(pop, -board[None, None, :])[0, 0]


@pytest.mark.parametrize("mark", [0, 2])
def test_network_move_rejects_a_mark_that_is_not_x_or_o(mark):
    net = hand_network(np.zeros(9))
    with pytest.raises(ValueError, match="mark"):
        network_move(net, np.zeros(9), mark)
