"""Ling and Lam (2011): the heuristic, the NNDTF, the two GAs, the lockstep engine and the files (chapters 16-17)."""

import json

import numpy as np
import pytest

from evolving_ttt import numerics
from evolving_ttt.game import EMPTY, WIN_LINES, O, X, board_from_string, board_index, is_game_over, play
from evolving_ttt.game import player_to_move as to_move
from evolving_ttt.ling_lam import engine, experiment, fused, ga, heuristic, network
from evolving_ttt.outcomes import policy_table
from evolving_ttt.run_cache import RUN_CACHE_VARIABLE

# --------------------------------------------------------------------------------------------- the heuristic


def test_line_scores_have_the_papers_properties_1_to_5():
    gammas = list(heuristic.LINE_SCORES.values())  # gamma_6 ... gamma_1
    assert gammas == [7**7, 6**6, 5**5, 4**4, 3**3, 2**2]
    assert all(high > 4 * low for high, low in zip(gammas, gammas[1:], strict=False))


def test_a_win_that_also_blocks_scores_three_lines():
    board = board_from_string("..X OXX OO.")  # bottom right wins the right column and blocks O's bottom row
    assert heuristic.line_values(board, 8) == [-1.0, 3.0, 2.5]  # row, column, diagonal
    scores = heuristic.square_scores(board)
    assert scores[8] == 7**7 + 6**6 + 5**5 == 873_324
    assert scores[0] == 6**6 + 2 * 5**5 == 52_906  # blocks O's column, two lines with two X's
    assert scores[1] == 5**5 + 3**3 == 3_152
    assert heuristic.heuristic_move(board) == 8


def test_empty_board_scores_centre_corners_edges():
    scores = heuristic.square_scores(np.zeros(9, dtype=int))
    assert scores[4] == 4 * 4**4 and scores[0] == 3 * 4**4 and scores[1] == 2 * 4**4
    assert heuristic.heuristic_move(np.zeros(9, dtype=int)) == 4


def test_o_to_move_sees_the_colours_swapped():
    board = board_from_string("XX. O.. ...")
    assert to_move(board) == O
    assert heuristic.heuristic_move(board) == 2  # O blocks
    assert heuristic.square_scores(board)[2] == 6**6 + 2 * 4**4  # block (-1) plus two empty lines for O


def test_heuristic_ties_go_to_the_lowest_square():
    board = board_from_string("... .X. ...")  # O to move: the four corners score alike
    scores = heuristic.square_scores(board)
    assert scores[0] == scores[2] == scores[6] == scores[8] == scores.max()
    assert heuristic.heuristic_move(board) == 0


def test_score_table_equals_the_readable_scores_on_random_boards():
    from evolving_ttt.game import board_tables

    tables = board_tables()
    rng = np.random.default_rng(5)
    for i in rng.choice(np.flatnonzero(tables.legal & ~tables.over), 300, replace=False):
        mark = int(tables.to_move[i])
        assert np.array_equal(heuristic.score_table(mark)[i], heuristic.square_scores(tables.boards[i], mark))


def test_worked_example_comes_back_as_one_board_up_to_symmetry():
    boards = heuristic.worked_example_boards()
    assert len(boards) == 8
    bottom_right = [b for b in boards if heuristic.heuristic_move(b) == 8]
    assert (
        len(bottom_right) == 2
        and np.array_equal(bottom_right[0].reshape(3, 3).T.ravel(), bottom_right[1])
        or (np.array_equal(bottom_right[1].reshape(3, 3).T.ravel(), bottom_right[0]))
    )


@pytest.mark.slow
def test_heuristic_policy_equals_the_tabulated_player():
    for mark in (X, O):
        assert np.array_equal(heuristic.heuristic_policy(mark), policy_table(heuristic.heuristic_move, mark))


# ------------------------------------------------------------------------------------------- the networks


def test_transfer_limits_shape_and_zero_spread():
    t = network.transfer
    assert t(1e6, 0.0, 1.0) == 1.0 and t(-1e6, 0.0, 1.0) == -1.0 and t(0.3, 0.3, 0.5) == 0.0
    f = np.linspace(-3, 3, 61)
    values = t(f, 0.2, 0.7)
    assert np.all(np.diff(values) >= 0) and np.all(np.abs(values) < 1)
    assert np.allclose(t(0.2 + f, 0.2, 0.7), -t(0.2 - f, 0.2, 0.7))  # odd about the mean
    assert np.allclose(t(f, 0.2, -0.7), values)  # only the square of the spread counts
    assert np.isclose(t(1.0, 0.0, 1.0), 1 - np.exp(-0.5))
    assert list(t(np.array([-0.5, 0.0, 0.5]), 0.0, 0.0)) == [-1.0, 0.0, 1.0]  # spread 0: the step


def test_the_exponent_floor_changes_no_bit():
    rng = np.random.default_rng(4)
    f, mean = rng.uniform(-3, 3, 5000), rng.uniform(-1, 1, 5000)
    spread = 10.0 ** rng.uniform(-12, 1, 5000)  # exponents from about 0 down to -1e24
    spread[:50], f[:25] = 0.0, mean[:25]  # the step, and 0 on it
    d = f - mean
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.fmin(d * d * (-0.5 / (spread * spread)), 0.0)
    unfloored = np.copysign(1.0 - numerics.exp(exponent), d)
    assert np.mean(exponent < network.EXPONENT_FLOOR) > 0.3  # the floor is reached often
    assert np.array_equal(network.transfer(f, mean, spread).view(np.int64), unfloored.view(np.int64))


def test_the_engines_transfer_is_the_readable_one_bit_for_bit():
    rng = np.random.default_rng(5)
    f, mean = rng.uniform(-3, 3, 5000), rng.uniform(-1, 1, 5000)
    spread = 10.0 ** rng.uniform(-12, 1, 5000)
    spread[:50], f[:25], spread[50:60] = 0.0, mean[:25], 1e-170  # the step, 0 on it, and a squared spread of 0
    spread[60:70], f[60:70] = -0.3, -f[60:70]
    readable = network.transfer(f, mean, spread)
    compiled, scratch = np.empty_like(f), np.empty_like(f)
    fused.transfer_layer(f, mean, spread, compiled, scratch)
    assert np.array_equal(readable.view(np.int64), compiled.view(np.int64))
    assert np.mean(np.abs(compiled) == 1.0) > 0.3 and np.sum(compiled == 0.0) >= 25  # the floor; 0 on the step


@pytest.mark.parametrize("order", network.HIDDEN_ORDERS)
def test_a_network_gets_the_same_bits_in_any_batch(order):
    rng = np.random.default_rng(6)
    genes, inputs = rng.uniform(-1, 1, (7, network.NNDTF_GENES)), network.training_positions(count=30).inputs
    together = network.nndtf_outputs(genes, inputs, order)
    alone = np.array([network.nndtf_outputs(g, inputs, order) for g in genes])
    assert np.array_equal(together, alone)
    assert np.array_equal(network.nndtf_outputs(genes[None], inputs, order)[0], together)


def test_neighbours_wrap_around():
    assert list(network.NEXT_NEURON) == [1, 2, 3, 4, 5, 6, 7, 0]
    assert list(network.PREVIOUS_NEURON) == [7, 0, 1, 2, 3, 4, 5, 6]
    # Only neuron 1 (index 0) feels its inputs and only neuron 8 (index 7) is read by the output:
    # neuron 8's dynamic mean is p_{1,8} times neuron 1's output, so that link alone carries the input.
    rng = np.random.default_rng(0)
    genes = np.zeros(network.NNDTF_GENES)
    lay = network.NNDTF_LAYOUT
    genes[lay["input_weights"]] = np.where(np.arange(72) % 8 == 0, rng.uniform(-1, 1, 72), 0.0)
    genes[lay["static_spread"]] = genes[lay["spread_link"]] = genes[lay["output_spread"]] = 0.5
    genes[lay["static_mean"].start + 6 : lay["static_mean"].stop] = -0.5  # neurons 7 and 8: constant, nonzero
    genes[lay["output_weights"].start + 7] = 1.0
    boards = heuristic.heuristic_encoding(np.array([[1, -1, 0, 0, 1, 0, 0, 0, -1], [0, 0, 0, 0, 1, 0, 0, -1, 0]]))
    mean_link_8 = lay["mean_link"].start + 7
    for order in network.HIDDEN_ORDERS:
        cut = network.nndtf_outputs(genes, boards, order)
        linked = genes.copy()
        linked[mean_link_8] = 0.9
        assert cut[0] == cut[1]  # without the link the output cannot see the board
        out = network.nndtf_outputs(linked, boards, order)
        assert out[0] != out[1]


@pytest.mark.parametrize("order", network.HIDDEN_ORDERS)
@pytest.mark.parametrize("hidden", [8, 3])
def test_the_nndtf_engine_is_the_readable_network_bit_for_bit(order, hidden):
    rng = np.random.default_rng(1)
    genes = rng.uniform(-1, 1, (4, network.gene_count("nndtf", hidden)))
    genes[0, network.nndtf_layout(hidden)["static_spread"]] = 0.0  # the step functions
    training = network.training_positions(count=30)
    fast = network.nndtf_outputs(genes, training.inputs, order)
    slow = np.array([[network.nndtf_output(g, x, order) for x in training.inputs] for g in genes])
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))


@pytest.mark.parametrize("hidden", [8, 2])
def test_the_baseline_engine_is_the_readable_network_bit_for_bit(hidden):
    rng = np.random.default_rng(3)
    genes = rng.uniform(-1, 1, (5, network.gene_count("baseline", hidden)))
    training = network.training_positions(count=30)
    fast = network.baseline_outputs(genes, training.inputs)
    slow = np.array([[network.baseline_output(g, x) for x in training.inputs] for g in genes])
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))
    assert np.array_equal(network.baseline_outputs(genes[2], training.inputs), fast[2])  # any batch


def test_the_engines_refuse_inputs_that_are_not_encoded_boards():
    with pytest.raises(ValueError, match=r"inputs must be encoded boards \(P, 9\)"):
        network.nndtf_outputs(np.zeros(network.NNDTF_GENES), np.zeros((3, 8)))
    with pytest.raises(ValueError, match="inputs must be encoded boards"):
        network.baseline_outputs(np.zeros(network.BASELINE_GENES), np.zeros(9))


def test_the_orders_differ():
    rng = np.random.default_rng(2)
    genes = rng.uniform(-1, 1, (3, network.NNDTF_GENES))
    inputs = network.training_positions(count=20).inputs
    assert not np.allclose(
        network.nndtf_outputs(genes, inputs, "simultaneous"), network.nndtf_outputs(genes, inputs, "sequential")
    )


def test_output_squares_is_the_closest_empty_grid_number_with_ties_low():
    training = network.training_positions()
    rng = np.random.default_rng(3)
    y = rng.uniform(-1, 1, (40, 100))
    y[:5] = np.round(y[:5] * 8) / 8  # many exact midpoints
    target = 5 + 4 * y
    distance = np.abs(target[..., None] - np.arange(1, 10))
    distance = np.where(training.boards[:, network.SQUARES_BY_GRID_NUMBER] != EMPTY, np.inf, distance)
    brute = network.SQUARES_BY_GRID_NUMBER[np.argmin(distance, axis=-1)]
    assert np.array_equal(network.output_squares(y, training.boards), brute)
    assert list(network.output_squares(np.array([[-3.0, 7.0]]), training.boards[:2])[0]) == list(
        network.output_squares(np.array([[-1.0, 1.0]]), training.boards[:2])[0]
    )  # outputs beyond [-1, 1] count as the ends
    board = board_from_string("... .X. ...")[None]  # grid numbers 4 and 6 empty around the occupied 5
    assert network.output_squares(np.array([0.0]), board)[0] == 5  # grid number 4 (middle right)
    assert list(network.GRID_NUMBERS.reshape(3, 3)[0]) == [3, 2, 1]


def test_fitness_is_one_for_the_best_squares_and_matches_the_definition():
    training = network.training_positions()
    best = np.argmax(training.scores, axis=1)
    exact = (network.GRID_NUMBERS[best] - 5) / 4
    assert network.fitness(exact, training) == 1.0
    y = np.random.default_rng(4).uniform(-1, 1, (6, 100))
    squares = network.output_squares(y, training.boards)
    expected = training.scores[np.arange(100), squares].sum(axis=1) / training.scores.max(axis=1).sum()
    assert np.array_equal(network.fitness(y, training), expected)


@pytest.mark.slow
@pytest.mark.parametrize("source", network.TRAINING_SOURCES)
def test_training_positions_are_distinct_x_to_move_and_seeded(source):
    a = network.training_positions(7, 100, source)
    assert np.array_equal(a.boards, network.training_positions(7, 100, source).boards)
    assert len({int(board_index(b)) for b in a.boards}) == 100
    assert all(to_move(b) == X and not is_game_over(b) and (b == EMPTY).sum() >= 2 for b in a.boards)
    assert not np.array_equal(a.boards, network.training_positions(8, 100, source).boards)


def test_bad_genes_are_refused():
    with pytest.raises(ValueError, match="114 values"):
        network.nndtf_output(np.zeros(113), np.zeros(9))
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        network.check_genes(np.full(89, 1.5), 89)


# ------------------------------------------------------------------------------------------- the operators


def test_roulette_picks_by_cumulative_fitness():
    fitness = np.array([0.1, 0.3, 0.6])
    # d = 1 - u: d <= 0.1 picks 0, d in (0.1, 0.4] picks 1, above picks 2
    assert list(ga.roulette(fitness, np.array([0.95, 0.85, 0.65, 0.55, 0.0]))) == [0, 1, 1, 2, 2]


def test_genes_stay_in_bounds_under_every_operator():
    rng = np.random.default_rng(6)
    for first, second in [(np.ones(50), -np.ones(50)), (np.ones(50), np.ones(50)), tuple(rng.uniform(-1, 1, (2, 50)))]:
        for w in (0.0, 0.1, 1.0):
            assert np.all(np.abs(ga.crossover_candidates(first, second, w)) <= 1)
        for a in (0.0, 0.3, 1.0):
            assert np.all(np.abs(ga.arithmetic_crossover(first, second, 0.0, a, 0.8)) <= 1)
    draws = np.concatenate([[0, 0, 0.999999, 1 - 1e-16], rng.random(150), [0.5]])
    assert np.all(np.abs(ga.mutants(np.ones(50), draws)) <= 1)
    settings = ga.TraditionalGASettings(iterations=10)
    children = np.stack([np.ones(50), -np.ones(50)])
    for r in (0.0, 1e-300, 0.5):
        d = np.concatenate([np.zeros(100), np.full(100, r), np.tile([0.0, 0.9], 50)])
        for t in (1, 5, 10):
            assert np.all(np.abs(ga.nonuniform_mutation(children, d, t, settings)) <= 1)


def test_mutants_change_one_gene_a_subset_and_all():
    rng = np.random.default_rng(7)
    offspring = rng.uniform(-1, 1, 114)
    draws = rng.random(ga.improved_draw_count(114))
    one, subset, every = ga.mutants(offspring, draws)
    assert (one != offspring).sum() == 1 and np.flatnonzero(one != offspring)[0] == int(draws[2] * 114)
    chosen = draws[4 : 4 + 114] < 0.5
    assert np.array_equal(subset != offspring, chosen)
    assert (every != offspring).all()


def test_nonuniform_steps_shrink_to_zero_at_the_last_iteration():
    settings = ga.TraditionalGASettings(iterations=100)
    children = np.zeros((2, 10))
    draws = np.concatenate([np.zeros(20), np.full(20, 0.3), np.zeros(20)])  # every gene mutates upwards
    steps = [ga.nonuniform_mutation(children, draws, t, settings)[0, 0] for t in (1, 50, 90, 100)]
    assert steps[0] > steps[1] > steps[2] > steps[3] == 0.0


def _replace(fitness, candidate_fitness, u, reading):
    population = np.arange(len(fitness), dtype=float)[:, None].repeat(2, axis=1)[None]
    candidates = (10.0 + np.arange(3))[:, None].repeat(2, axis=1)[None]
    fit = np.array(fitness, dtype=float)[None]
    ga.replace_worst(population, fit, candidates, np.array(candidate_fitness, dtype=float)[None],
                     np.array([u]), 0.5, reading)  # fmt: skip
    return population[0, :, 0].tolist(), fit[0].tolist()


def test_replacement_accepts_the_best_mutant_even_when_worse():
    assert _replace([0.5, 0.2, 0.9], [0.1, 0.15, 0.05], 0.3, "text") == ([0, 11, 2], [0.5, 0.15, 0.9])


def test_replacement_otherwise_tries_each_mutant_against_the_updated_worst():
    # mutant 0 (0.6) beats 0.2; mutant 1 (0.55) then beats 0.5; mutant 2 (0.52) beats the new worst 0.55? no
    assert _replace([0.5, 0.2, 0.9], [0.6, 0.55, 0.52], 0.7, "text") == ([11, 10, 2], [0.55, 0.6, 0.9])
    assert _replace([0.5, 0.2, 0.9], [0.1, 0.2, 0.15], 0.7, "text") == ([0, 1, 2], [0.5, 0.2, 0.9])  # ties lose


def test_replacement_readings_differ_only_after_acceptance():
    text = _replace([0.5, 0.2, 0.9], [0.3, 0.8, 0.6], 0.3, "text")
    figure = _replace([0.5, 0.2, 0.9], [0.3, 0.8, 0.6], 0.3, "figure")
    assert text == ([0, 11, 2], [0.5, 0.8, 0.9])
    assert figure == ([11, 11, 2], [0.8, 0.8, 0.9])  # the accepted mutant then also takes the new worst place
    assert _replace([0.5, 0.2, 0.9], [0.6, 0.55, 0.52], 0.7, "figure") == ([11, 10, 2], [0.55, 0.6, 0.9])


# --------------------------------------------------------------------------------- lockstep against readable


def test_blocks_of_draws_are_the_same_numbers_as_one_at_a_time():
    a, b = np.random.default_rng(9), np.random.default_rng(9)
    assert np.array_equal(a.random((5, 7)), np.stack([b.random(7) for _ in range(5)]))


@pytest.mark.parametrize("engine_name", ["lockstep", "compiled"])
@pytest.mark.parametrize(("order", "replacement"), [("simultaneous", "text"), ("sequential", "figure")])
def test_lockstep_improved_ga_is_the_readable_one_bit_for_bit(order, replacement, engine_name, monkeypatch):
    monkeypatch.setattr(engine, "DRAW_BLOCK", 7)  # several blocks in a short run
    training = network.training_positions(count=40)
    evaluate = experiment.fitness_function("nndtf", training, order)
    settings = ga.ImprovedGASettings(iterations=60, replacement=replacement)
    lock = engine.improved_ga_lockstep(evaluate, 114, [np.random.default_rng(s) for s in range(3)], settings,
                                       engine=engine_name)  # fmt: skip
    for s in range(3):
        one = ga.improved_ga(evaluate, 114, np.random.default_rng(s), settings)
        assert np.array_equal(one.population[0], lock.population[s])
        assert np.array_equal(one.best_fitness[0], lock.best_fitness[s])
        assert np.array_equal(one.champions[0], lock.champions[s])
    assert np.all(np.diff(lock.best_fitness, axis=1) >= 0)  # the best is never lost


@pytest.mark.parametrize("engine_name", ["lockstep", "compiled"])
def test_lockstep_traditional_ga_is_the_readable_one_bit_for_bit(engine_name, monkeypatch):
    monkeypatch.setattr(engine, "DRAW_BLOCK", 7)
    training = network.training_positions(count=40)
    evaluate = experiment.fitness_function("baseline", training)
    settings = ga.TraditionalGASettings(iterations=60)
    lock = engine.traditional_ga_lockstep(evaluate, 89, [np.random.default_rng(s) for s in range(3)], settings,
                                          engine=engine_name)  # fmt: skip
    for s in range(3):
        one = ga.traditional_ga(evaluate, 89, np.random.default_rng(s), settings)
        assert np.array_equal(one.population[0], lock.population[s])
        assert np.array_equal(one.best_fitness[0], lock.best_fitness[s])
        assert np.array_equal(one.champions[0], lock.champions[s])
        assert np.array_equal(one.population_best[0], lock.population_best[s])
        assert one.champion_fitness[0] == lock.champion_fitness[s] == lock.best_fitness[s, -1]
    assert np.all(np.diff(lock.best_fitness, axis=1) >= 0) and np.all(lock.best_fitness >= lock.population_best)
    assert np.any(np.diff(lock.population_best, axis=1) < 0)  # the traditional GA loses its best at times


def test_training_gives_the_same_runs_for_any_number_of_workers():
    settings = experiment.LingLamSettings(seeds=3, iterations=20)
    one = experiment.train("nndtf", settings, seed=4, workers=1)
    two = experiment.train("nndtf", settings, seed=4, workers=2)
    assert np.array_equal(one.best_fitness, two.best_fitness) and np.array_equal(one.champions, two.champions)
    alone = experiment.train("nndtf", experiment.LingLamSettings(seeds=1, iterations=20), seed=4)
    assert np.array_equal(alone.champions[0], one.champions[0])


def test_run_cache_is_the_builds_shared_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(RUN_CACHE_VARIABLE, str(tmp_path))
    settings = experiment.LingLamSettings(seeds=2, iterations=5)
    first = experiment.run_training("baseline", settings, seed=2, progress=False, workers=1)
    assert len(list(tmp_path.glob("ling-lam-*.npz"))) == 1
    again = experiment.run_training("baseline", settings, seed=2, progress=False, workers=1)
    assert np.array_equal(first.best_fitness, again.best_fitness) and again.settings == settings
    assert not list(tmp_path.glob("*.partial.npz"))  # the file was written whole, then renamed


def test_config_refuses_bad_settings():
    with pytest.raises(ValueError, match="order"):
        experiment.LingLamSettings(order="backwards")
    with pytest.raises(ValueError, match="replacement"):
        experiment.LingLamSettings(replacement="always")
    with pytest.raises(ValueError, match="acceptance"):
        ga.ImprovedGASettings(acceptance=1.5)
    with pytest.raises(ValueError, match="method"):
        experiment.train("fogel")


# ------------------------------------------------------------------------------------- files and games


def test_network_file_round_trip_and_clear_errors(tmp_path):
    genes = np.random.default_rng(8).uniform(-1, 1, 114)
    net = experiment.TrainedNetwork("nndtf", genes, "sequential")
    path = tmp_path / "n.json"
    experiment.save_trained_network(net, path, fitness=0.5)
    back, provenance = experiment.load_trained_network(path)
    assert np.array_equal(back.genes, genes) and back.order == "sequential" and provenance == {"fitness": 0.5}
    record = json.loads(path.read_text())
    assert record["layout"]["output_spread"] == [113, 114]
    for change, message in [({"format": "x"}, "not a Ling-Lam"), ({"version": 2}, "version"),
                            ({"kind": "cnn"}, "kind"), ({"genes": [0.0] * 5}, "114"),
                            ({"genes": [2.0] * 114}, r"genes.*above 1\.0")]:  # fmt: skip
        path.write_text(json.dumps({**record, **change}))
        with pytest.raises(ValueError, match=message):
            experiment.load_trained_network(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not valid JSON"):
        experiment.load_trained_network(path)


def test_games_from_positions_match_a_readable_game_loop():
    rng = np.random.default_rng(10)
    a = experiment.TrainedNetwork("nndtf", rng.uniform(-1, 1, 114))
    b = experiment.TrainedNetwork("baseline", rng.uniform(-1, 1, 89))
    positions = experiment.two_by_two_positions()
    assert len(positions) == 756
    tables = experiment.network_move_table(a), experiment.network_move_table(b)
    winners = experiment.play_from_positions(*tables, positions)
    for k in rng.choice(756, 40, replace=False):
        board = positions[k].copy()
        while not is_game_over(board):
            player = a if to_move(board) == X else b
            board = play(board, network.ling_lam_player(player.kind, player.genes)(board))
        from evolving_ttt.game import winner

        assert winners[k] == winner(board)


def test_network_policy_is_the_tabulated_player():
    net = experiment.TrainedNetwork("baseline", np.random.default_rng(11).uniform(-1, 1, 89))
    for mark in (X, O):
        assert np.array_equal(experiment.network_policy(net, mark), policy_table(net.move, mark))


def test_win_lines_are_the_heuristics_lines():
    assert sum(len(lines) for lines in heuristic.LINES_THROUGH) == 3 * len(WIN_LINES)


# ------------------------------------------------------------------------------------------- the command line


def test_command_line_trains_and_writes_the_books_files(tmp_path, capsys):
    from evolving_ttt.cli import main

    out = tmp_path / "run.npz"
    argv = ["ling-lam", "--seeds", "2", "--iterations", "500", "--out", str(out), "--data-dir", str(tmp_path),
            "--workers", "1", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    runs = experiment.load_training_runs(out)
    assert set(runs) == {"nndtf", "baseline"} and runs["nndtf"].best_fitness.shape == (2, 501)
    summary, provenance = experiment.load_runs_summary(tmp_path / "ling_lam_runs.json")
    assert np.array_equal(summary["baseline"].best_fitness, runs["baseline"].best_fitness[:, ::500])
    network_file, _ = experiment.load_trained_network(tmp_path / "ling_lam_nndtf.json")
    assert np.array_equal(network_file.genes, runs["nndtf"].network().genes)
    assert "nndtf: fitness of the trained networks" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--methods", "nndtf,fogel"], "--methods must list"),
        (["--methods", "nndtf,nndtf"], "--methods must list"),
        (["--out", "/no/such/folder/run.npz"], "does not exist"),
        (["--data-dir", "/no/such/folder"], "no such folder"),
        (["--data-dir", ".", "--iterations", "700"], "multiple of 500"),
        (["--seeds", "0"], "seeds"),
        (["--iterations", "0"], "iterations must be a whole number >= 1"),
        (["--order", "backwards"], "invalid choice"),
    ],
)
def test_command_line_refuses_bad_arguments_before_running(extra, message, tmp_path, capsys):
    from evolving_ttt.cli import main

    argv = ["ling-lam", "--out", str(tmp_path / "run.npz"), *extra]
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run.npz").exists()


def test_runs_summary_refuses_bad_files(tmp_path):
    settings = experiment.LingLamSettings(seeds=2, iterations=500)
    run = experiment.train("baseline", settings, seed=3)
    path = tmp_path / "runs.json"
    experiment.save_runs_summary({"baseline": run}, path, command="test")
    runs, provenance = experiment.load_runs_summary(path)
    assert provenance == {"command": "test"} and runs["baseline"].iterations.tolist() == [0, 500]
    record = json.loads(path.read_text())
    broken = json.loads(path.read_text())
    broken["methods"]["baseline"]["best_fitness"] = [[0.5]] * 2
    renamed = {**record, "methods": {"baseline": {**record["methods"]["baseline"], "method": "cnn"}}}
    for bad, message in [({**record, "format": "x"}, "not a Ling-Lam runs"), ({**record, "version": 3}, "version"),
                         (broken, r"best_fitness.*has shape \(2, 1\); expected \(2, 2\)"),
                         (renamed, "method.*must be one of")]:  # fmt: skip
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=message):
            experiment.load_runs_summary(path)
    with pytest.raises(ValueError, match="divide"):
        experiment.save_runs_summary({"baseline": run}, path, curve_step=300)


# ------------------------------------------------------------------------------------ arguments of the wrong type

_BOARD = np.zeros(9, dtype=np.int8)
_NET = experiment.TrainedNetwork("baseline", np.zeros(89))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: experiment.train("config"), "method must be one of"),
        (lambda: experiment.train("nndtf", "config"), "settings must be a LingLamSettings"),
        (lambda: experiment.train("nndtf", experiment.LingLamSettings(seeds=1, iterations=1), seed=-1), "seed"),
        (lambda: experiment.train("nndtf", progress=2), "progress must be"),
        (lambda: experiment.run_training("nndtf", None), "settings must be a LingLamSettings"),
        (lambda: experiment.LingLamSettings(iterations=0), "iterations must be a whole number >= 1"),
        (lambda: experiment.LingLamSettings(training_seed="x"), "training_seed"),
        (lambda: experiment.LingLamSettings(methods=[["nndtf"]]), "methods must list"),
        (lambda: experiment.LingLamSettings(traditional={}), "traditional must be a TraditionalGASettings"),
        (lambda: experiment.LingLamSettings.from_dict(None), "settings must be an object"),
        (lambda: experiment.PAPER_LING_LAM.settings(["nndtf"]), "method must be one of"),
        (lambda: ga.TraditionalGASettings(shape="5"), "shape must be a number from 0 to 1e\\+06"),
        (lambda: ga.TraditionalGASettings(shape=1e308), "shape must be a number from 0 to 1e\\+06; got 1e\\+308"),
        (lambda: ga.improved_ga(None, 114, np.random.default_rng(0)), "evaluate must be a function"),
        (lambda: ga.traditional_ga(np.sum, 89, "rng"), "rng must be a numpy.random.Generator"),
        (lambda: ga.improved_ga(np.sum, 114, np.random.default_rng(0), "fast"), "settings must be an Improved"),
        (lambda: engine.traditional_ga_lockstep(np.sum, 89, None), "rngs must be a non-empty list"),
        (lambda: engine.improved_ga_lockstep(np.sum, 114, [None]), "each of rngs"),
        (lambda: experiment.TrainedNetwork("nndtf", {}), "genes must be an array of numbers"),
        (lambda: experiment.TrainedNetwork(None, np.zeros(89)), "kind must be one of"),
        (lambda: experiment.network_move_table(None), "network must be a TrainedNetwork"),
        (lambda: experiment.network_policy("net", 1), "network must be a TrainedNetwork"),
        (lambda: experiment.estimated_memory(None), "settings must be a LingLamSettings"),
        (lambda: experiment.save_trained_network(None, "n.json"), "network must be a TrainedNetwork"),
        (lambda: experiment.save_trained_network(_NET, None), "path must be a file name"),
        (lambda: experiment.save_training_runs(["run"], "r.npz"), "runs must be a non-empty dict"),
        (lambda: experiment.save_runs_summary({"a": None}, "r.json"), r"runs\['a'\] must be a TrainingRun"),
        (lambda: experiment.load_training_runs(None), "path must be a file name"),
        (lambda: experiment.load_runs_summary(3), "path must be a file name"),
        (lambda: experiment.load_trained_network(b"n.json"), "path must be a file name"),
        (lambda: network.training_positions("seed"), "seed must be a whole number"),
        (lambda: network.fitness(np.zeros(3), None), "training must be a TrainingSet"),
        (lambda: network.ling_lam_player("cnn", np.zeros(89)), "kind must be one of"),
        (lambda: network.ling_lam_player("nndtf", np.zeros(114), "backwards"), "order must be one of"),
    ],
)
def test_public_functions_name_the_argument_of_the_wrong_type(call, message):
    with pytest.raises(ValueError, match=message):
        call()
