"""Al-Khateeb (2012): the evaluator, the one-ply player, self-adaptive mutation, the round robin and the engine."""

import json
import math

import numpy as np
import pytest

from evolving_ttt import numerics
from evolving_ttt.al_khateeb.engine import (
    CoevolutionRun,
    coevolve,
    load_coevolution_run,
    load_evaluator,
    save_coevolution_run,
    save_evaluator,
)
from evolving_ttt.al_khateeb.evaluator import (
    EVALUATOR_WEIGHTS,
    INITIAL_STEP_SIZE,
    STEP_SIZE_TAU,
    AlKhateebSettings,
    OnePlySettings,
    coevolution_game,
    coevolve_readable,
    draw_coevolution,
    evaluate_boards,
    evaluator_layers,
    move_values,
    one_ply_move,
    one_ply_player,
    random_evaluators,
    rank_population,
    round_robin_results,
    round_robin_totals,
    self_adaptive_mutation,
    trial_generators,
)
from evolving_ttt.al_khateeb.one_ply import search_moves, swapped_index
from evolving_ttt.game import O, X, board_from_string, board_index, board_tables, legal_moves, play, winner

READINGS = [OnePlySettings(view, wins) for view in ("mover", "x") for wins in ("evaluator", "rules")]
RECORD = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")


def plain_network_value(weights, board):
    """The textbook formula, tanh(W x + b) layer by layer with matrix products (sums in another order)."""
    values = np.asarray(board, dtype=float)
    for matrix, bias in evaluator_layers(weights):
        values = np.tanh(values @ matrix + bias)
    return float(values[0])


# --- the network ---------------------------------------------------------------------------------------


def test_the_network_has_72_weights_in_layers_of_9_5_3_1():
    assert EVALUATOR_WEIGHTS == 9 * 5 + 5 + 5 * 3 + 3 + 3 * 1 + 1 == 72
    layers = evaluator_layers(np.arange(72.0))
    assert [(m.shape, b.shape) for m, b in layers] == [((9, 5), (5,)), ((5, 3), (3,)), ((3, 1), (1,))]
    # the flat order: 45 input weights row by row, 5 biases, 15 weights, 3 biases, 3 weights, 1 bias
    assert layers[0][0][1, 0] == 5 and layers[0][1][0] == 45 and layers[1][0][0, 2] == 52
    assert layers[1][1][0] == 65 and layers[2][0][2, 0] == 70 and layers[2][1][0] == 71


def test_evaluate_boards_is_the_textbook_formula_and_lies_in_minus_one_to_one():
    rng = np.random.default_rng(0)
    weights = random_evaluators(rng, 5) * 4
    boards = board_tables().boards[rng.integers(0, 3**9, 40)]
    for w in weights:
        values = evaluate_boards(w, boards)
        assert values.shape == (40,)
        assert np.all(np.abs(values) <= 1)
        expected = [plain_network_value(w, b) for b in boards]
        assert np.allclose(values, expected, rtol=0, atol=1e-12)


def test_a_board_gets_the_same_bits_alone_or_in_any_batch():
    rng = np.random.default_rng(1)
    weights = random_evaluators(rng, 30) * 3
    boards = board_tables().boards[rng.integers(0, 3**9, 30)]
    paired = evaluate_boards(weights, boards)  # network k judges board k
    one_each = np.array([evaluate_boards(weights[k], boards[k]) for k in range(30)])
    all_pairs = evaluate_boards(weights[:, None, :], boards[None, :, :])  # (30, 30)
    assert np.array_equal(paired, one_each)
    assert np.array_equal(np.diag(all_pairs), paired)
    assert np.array_equal(all_pairs[3], evaluate_boards(weights[3], boards))


def test_evaluate_boards_refuses_bad_shapes_and_values():
    with pytest.raises(ValueError, match="72 weights"):
        evaluate_boards(np.zeros(71), np.zeros(9))
    with pytest.raises(ValueError, match="9 squares"):
        evaluate_boards(np.zeros(72), np.zeros(8))
    with pytest.raises(ValueError, match="finite"):
        evaluate_boards(np.full(72, np.nan), np.zeros(9))


def test_random_evaluators_are_uniform_on_the_paper_range_and_seeded():
    weights = random_evaluators(np.random.default_rng(2), 2000)
    assert weights.shape == (2000, 72)
    assert weights.min() >= -0.5 and weights.max() <= 0.5
    assert abs(weights.mean()) < 0.01 and abs(weights.std() - 1 / math.sqrt(12)) < 0.01
    assert np.array_equal(weights, random_evaluators(np.random.default_rng(2), 2000))


# --- the one-ply player --------------------------------------------------------------------------------


def test_the_mover_sees_its_own_pieces_as_plus_one_on_both_sides():
    rng = np.random.default_rng(3)
    weights = random_evaluators(rng, 1)[0] * 3
    board = board_from_string("X O . . X . . . O")  # X to move
    moves, values = move_values(weights, board)
    assert moves == legal_moves(board)
    assert np.array_equal(values, [evaluate_boards(weights, play(board, s)) for s in moves])
    board_o = play(board, 2)  # O to move: it is shown the board times -1
    moves, values = move_values(weights, board_o)
    assert np.array_equal(values, [evaluate_boards(weights, -play(board_o, s)) for s in moves])
    assert one_ply_move(weights, board_o) == moves[int(np.argmax(values))]


def test_with_the_x_view_o_takes_the_lowest_value():
    weights = random_evaluators(np.random.default_rng(4), 1)[0] * 3
    board = board_from_string("X . . . . . . . .")
    moves, values = move_values(weights, board, OnePlySettings(view="x"))
    raw = np.array([evaluate_boards(weights, play(board, s)) for s in moves])
    assert np.array_equal(values, -raw)
    assert one_ply_move(weights, board, OnePlySettings(view="x")) == moves[int(np.argmin(raw))]


def test_ties_go_to_the_lowest_square_on_both_sides():
    zero = np.zeros(72)  # every board is worth tanh(0) = 0
    board = np.zeros(9, dtype=np.int8)
    while winner(board) == 0 and legal_moves(board):
        assert one_ply_move(zero, board) == legal_moves(board)[0]
        board = play(board, legal_moves(board)[0])


def test_winning_moves_by_the_rules_are_always_taken():
    zero = np.zeros(72)
    board = board_from_string("O O . . X X . . .")  # X to move, square 3 wins; the lowest empty square is 2
    assert winner(play(board, 3)) == X
    assert one_ply_move(zero, board) == 2
    assert one_ply_move(zero, board, OnePlySettings(winning_moves="rules")) == 3
    board_o = board_from_string("O O . X X . X . .")  # O to move, square 2 wins
    assert one_ply_move(zero, board_o, OnePlySettings(winning_moves="rules")) == 2


def test_one_ply_player_plays_only_its_own_side_and_refuses_bad_settings():
    player = one_ply_player(np.zeros(72), O)
    with pytest.raises(ValueError, match="other side"):
        player(np.zeros(9, dtype=np.int8))
    assert player(board_from_string("X . . . . . . . .")) == 1
    with pytest.raises(ValueError, match="view"):
        OnePlySettings(view="o")
    with pytest.raises(ValueError, match="winning_moves"):
        OnePlySettings(winning_moves="always")


@pytest.mark.parametrize("settings", READINGS, ids=lambda s: f"{s.view}-{s.winning_moves}")
def test_search_moves_makes_the_readable_players_moves(settings):
    rng = np.random.default_rng(5)
    tables = board_tables()
    for ply in range(8):
        mark = X if ply % 2 == 0 else O
        rows = np.flatnonzero(tables.legal & ~tables.over & (tables.n_empty == 9 - ply))
        boards = rng.choice(rows, size=min(25, len(rows)), replace=False)
        weights = random_evaluators(rng, len(boards)) * 4
        moves = search_moves(weights, boards, mark, settings.view, settings.winning_moves)
        expected = [one_ply_move(w, tables.boards[b], settings) for w, b in zip(weights, boards, strict=True)]
        assert moves.tolist() == expected


def test_swapped_index_exchanges_x_and_o():
    tables = board_tables()
    rng = np.random.default_rng(6)
    for i in rng.integers(0, 3**9, 50):
        assert board_index(-tables.boards[i]) == swapped_index()[i]
    assert np.array_equal(swapped_index()[swapped_index()], np.arange(3**9))


# --- self-adaptive mutation ----------------------------------------------------------------------------


def test_tau_is_one_over_root_two_root_nw():
    assert STEP_SIZE_TAU == pytest.approx(1 / math.sqrt(2 * math.sqrt(72)), rel=1e-15)
    assert STEP_SIZE_TAU == pytest.approx(0.242746, abs=1e-6)


def test_mutation_follows_the_two_equations_in_order():
    rng = np.random.default_rng(7)
    weights, steps = rng.normal(size=(4, 72)), rng.uniform(0.01, 0.1, size=(4, 72))
    step_normals, weight_normals = rng.normal(size=(4, 72)), rng.normal(size=(4, 72))
    new_weights, new_steps = self_adaptive_mutation(weights, steps, step_normals, weight_normals)
    assert np.array_equal(new_steps, steps * numerics.exp(STEP_SIZE_TAU * step_normals))
    assert np.array_equal(new_weights, weights + new_steps * weight_normals)  # the new step sizes move the weights
    same_weights, _ = self_adaptive_mutation(weights, steps, step_normals, np.zeros((4, 72)))
    assert np.array_equal(same_weights, weights)


def test_step_sizes_stay_positive_and_their_logarithm_spreads_by_tau():
    rng = np.random.default_rng(8)
    steps = np.full((2000, 72), INITIAL_STEP_SIZE)
    _, new_steps = self_adaptive_mutation(np.zeros((2000, 72)), steps, rng.normal(size=steps.shape) * 6,
                                          np.zeros(steps.shape))  # fmt: skip
    assert np.all(new_steps > 0)
    _, new_steps = self_adaptive_mutation(np.zeros((2000, 72)), steps, rng.normal(size=steps.shape),
                                          np.zeros(steps.shape))  # fmt: skip
    log_ratio = np.log(new_steps / steps)
    assert abs(log_ratio.std() - STEP_SIZE_TAU) < 0.005 and abs(log_ratio.mean()) < 0.005


# --- the round robin and selection ---------------------------------------------------------------------


def test_a_game_is_a_legal_sequence_of_moves():
    rng = np.random.default_rng(9)
    x_weights, o_weights = random_evaluators(rng, 2)
    result, moves = coevolution_game(x_weights, o_weights)
    board = np.zeros(9, dtype=np.int8)
    for square in moves:
        assert square in legal_moves(board)
        board = play(board, square)
    assert result == winner(board) and 5 <= len(moves) <= 9


def test_round_robin_counts():
    population = random_evaluators(np.random.default_rng(10), 6) * 3
    results = round_robin_results(population)
    assert results.shape == (6, 6) and np.all(np.diag(results) == 0)
    totals = round_robin_totals(results)
    assert totals.sum() == 0  # every win is someone's loss
    for i in range(6):
        wins = np.sum(results[i] == X) + np.sum(results[:, i] == O)
        losses = np.sum(results[i] == O) + np.sum(results[:, i] == X)
        assert totals[i] == wins - losses and abs(totals[i]) <= 2 * 5
    # a deterministic pairing always gives the same game
    assert results[2, 4] == coevolution_game(population[2], population[4])[0]


def test_ranking_puts_the_highest_totals_first_and_breaks_ties_by_the_keys():
    totals = np.array([3, 5, 3, -1, 5])
    keys = np.array([0.9, 0.7, 0.1, 0.0, 0.2])
    assert rank_population(totals, keys).tolist() == [4, 1, 2, 0, 3]


def test_config_checks_its_numbers():
    with pytest.raises(ValueError, match="twice the parents"):
        AlKhateebSettings(population=20, parents=9)
    with pytest.raises(ValueError, match="generations"):
        AlKhateebSettings(generations=0)
    settings = AlKhateebSettings(generations=7, player=OnePlySettings("x", "rules"))
    assert AlKhateebSettings.from_dict(json.loads(json.dumps(settings.as_dict()))) == settings
    with pytest.raises(ValueError, match="configuration"):
        AlKhateebSettings.from_dict({"population": 20})


def test_runs_draw_from_their_own_seeded_generators():
    first, second = trial_generators(4, 3), trial_generators(4, 3)
    draws = [draw_coevolution(rng) for rng in first]
    again = [draw_coevolution(rng) for rng in second]
    assert all(np.array_equal(a.step_normals, b.step_normals) for a, b in zip(draws, again, strict=True))
    assert not np.array_equal(draws[0].tie_keys, draws[1].tie_keys)
    assert draws[0].step_normals.shape == (10, 72) and draws[0].tie_keys.shape == (20,)
    with pytest.raises(ValueError, match="seed"):
        trial_generators(-1, 3)


# --- the engine agrees with the readable code ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("reading", READINGS, ids=lambda s: f"{s.view}-{s.winning_moves}")
def test_engine_equals_the_readable_code_bit_for_bit(reading):
    settings = AlKhateebSettings(population=6, parents=3, generations=6, runs=3, player=reading)
    engine = coevolve(settings, seed=11)
    for run in range(3):
        readable = coevolve_readable(settings, seed=11, run=run)
        for name in RECORD:
            assert np.array_equal(getattr(engine, name)[run], getattr(readable, name)), name


@pytest.mark.slow
def test_engine_equals_the_readable_code_at_the_papers_size():
    settings = AlKhateebSettings(generations=2, runs=2)
    engine = coevolve(settings, seed=12, runs=[1])
    readable = coevolve_readable(settings, seed=12, run=1)
    for name in RECORD:
        assert np.array_equal(getattr(engine, name)[0], getattr(readable, name)), name
    assert engine.totals.shape == (1, 2, 20) and np.all(engine.totals.sum(axis=-1) == 0)


def test_engine_gives_the_same_runs_alone_together_or_on_two_workers():
    settings = AlKhateebSettings(population=8, parents=4, generations=5, runs=4)
    together = coevolve(settings, seed=13)
    alone = coevolve(settings, seed=13, runs=[2])
    shared = coevolve(settings, seed=13, workers=2)
    assert shared.run_numbers == together.run_numbers == (0, 1, 2, 3)
    for name in RECORD:
        assert np.array_equal(getattr(alone, name)[0], getattr(together, name)[2])
        assert np.array_equal(getattr(shared, name), getattr(together, name))
    with pytest.raises(ValueError, match="run numbers"):
        coevolve(settings, runs=[4])


def test_the_best_network_is_the_first_of_the_next_population():
    run = coevolve(AlKhateebSettings(population=8, parents=4, generations=5, runs=2), seed=14)
    assert np.array_equal(run.players(), run.best_weights[:, -1])
    assert np.array_equal(run.weights[:, 0], run.best_weights[:, -1])
    assert np.all(run.best_ids < 8 + 4 * 5)
    # a network that stays best keeps its number and its weights
    same = run.best_ids[:, 1:] == run.best_ids[:, :-1]
    assert np.all(np.all(run.best_weights[:, 1:] == run.best_weights[:, :-1], axis=-1)[same])


# --- files ---------------------------------------------------------------------------------------------


def test_a_record_survives_saving_and_loading(tmp_path):
    run = coevolve(AlKhateebSettings(population=4, parents=2, generations=3, runs=2), seed=15)
    save_coevolution_run(run, tmp_path / "run.npz")
    loaded = load_coevolution_run(tmp_path / "run.npz")
    assert isinstance(loaded, CoevolutionRun) and loaded.settings == run.settings and loaded.seed == 15
    for name in RECORD:
        assert np.array_equal(getattr(loaded, name), getattr(run, name))
    np.savez(tmp_path / "other.npz", totals=np.zeros(3))
    with pytest.raises(ValueError, match=r"other.npz \(Al-Khateeb co-evolution record\): field 'config' is missing"):
        load_coevolution_run(tmp_path / "other.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(ValueError, match=r"text.npz is not a readable Al-Khateeb co-evolution record \(.npz\)"):
        load_coevolution_run(tmp_path / "text.npz")


def test_an_evaluator_file_keeps_every_bit(tmp_path):
    rng = np.random.default_rng(16)
    weights, steps = rng.normal(size=72) / 3, rng.uniform(0.01, 0.2, size=72)
    path = tmp_path / "ttt.json"
    save_evaluator(weights, steps, path, seed=1, run=3)
    loaded_weights, loaded_steps, provenance = load_evaluator(path)
    assert np.array_equal(loaded_weights, weights) and np.array_equal(loaded_steps, steps)
    assert provenance == {"seed": 1, "run": 3}
    record = json.loads(path.read_text())
    assert record["format"] == "al-khateeb-evaluator" and record["layers"] == [9, 5, 3, 1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(format="fogel-ttt-network"), "not an evaluator file"),
        (lambda r: r.update(version=2), "unsupported version"),
        (lambda r: r.update(layers=[9, 10, 9]), "layers"),
        (lambda r: r.update(layers=[9, 5, 3, True]), "layers"),
        (lambda r: r.update(version=True), "'version' must be a whole number"),
        (lambda r: r.update(weights=r["weights"][:-1]), r"'weights' has shape \(71,\); expected \(72,\)"),
        (lambda r: r.update(weights=["a"] * 72), "'weights' must hold numbers only; it holds str"),
        (lambda r: r["weights"].__setitem__(3, False), "'weights' must hold numbers only; it holds bool"),
        (lambda r: r.pop("step_sizes"), "'step_sizes' is missing"),
        (lambda r: r["step_sizes"].__setitem__(0, -0.1), "positive"),
        (lambda r: r["step_sizes"].__setitem__(0, 0), "positive"),
        (lambda r: r["weights"].__setitem__(0, float("inf")), "the number Infinity is not allowed"),
    ],
)
def test_a_bad_evaluator_file_says_what_is_wrong(tmp_path, change, message):
    path = tmp_path / "ttt.json"
    save_evaluator(np.zeros(72), np.full(72, 0.05), path)
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message):
        load_evaluator(path)


def test_an_unreadable_evaluator_file_says_so(tmp_path):
    with pytest.raises(ValueError, match="could not be read"):
        load_evaluator(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_evaluator(tmp_path / "bad.json")


def test_a_shorter_run_is_the_beginning_of_a_longer_one():
    short = coevolve(AlKhateebSettings(population=6, parents=3, generations=4, runs=2), seed=17)
    long = coevolve(AlKhateebSettings(population=6, parents=3, generations=9, runs=2), seed=17)
    assert np.array_equal(short.players(), long.best_weights[:, 3])
    assert np.array_equal(short.totals, long.totals[:, :4]) and np.array_equal(short.best_ids, long.best_ids[:, :4])
