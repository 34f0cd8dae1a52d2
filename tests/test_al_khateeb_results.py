"""Al-Khateeb (2012): policy tables, exact results against sampling, Table 1 and its test, matches, the command."""

import subprocess
import sys

import numpy as np
import pytest

from evolving_ttt.al_khateeb.engine import coevolve, load_coevolution_run, load_evaluator
from evolving_ttt.al_khateeb.evaluator import (
    AlKhateebSettings,
    OnePlySettings,
    coevolution_game,
    one_ply_move,
    one_ply_player,
    random_evaluators,
    round_robin_results,
)
from evolving_ttt.al_khateeb.results import (
    AL_KHATEEB_TABLE_1,
    choose_ttt,
    evaluator_exact_results,
    evaluator_moves,
    evaluator_policy,
    game_points,
    match_record,
    progress_curve,
    welch_test,
)
from evolving_ttt.game import O, X, board_tables
from evolving_ttt.outcomes import (
    boards_to_move,
    outcome_probabilities,
    perfect_policy,
    policy_table,
    random_policy,
    sample_games,
)

READINGS = [OnePlySettings(view, wins) for view in ("mover", "x") for wins in ("evaluator", "rules")]


@pytest.fixture(scope="module")
def small_run():
    return coevolve(AlKhateebSettings(population=6, parents=3, generations=12, runs=3), seed=21)


@pytest.mark.slow
@pytest.mark.parametrize("settings", READINGS, ids=lambda s: f"{s.view}-{s.winning_moves}")
@pytest.mark.parametrize("mark", [X, O])
def test_evaluator_moves_are_the_readable_players_moves_on_every_board(settings, mark):
    weights = random_evaluators(np.random.default_rng(22), 3) * 4
    moves = evaluator_moves(weights, mark, settings, chunk=2)
    boards = board_tables().boards[boards_to_move(mark)]
    rng = np.random.default_rng(23)
    for k in rng.choice(len(boards), size=150, replace=False):
        for n in range(3):
            assert moves[n, k] == one_ply_move(weights[n], boards[k], settings)


@pytest.mark.slow
def test_a_policy_table_of_an_evaluator_is_the_tabulated_player():
    weights = random_evaluators(np.random.default_rng(24), 1)[0] * 2
    for mark in (X, O):
        assert np.array_equal(evaluator_policy(weights, mark), policy_table(one_ply_player(weights, mark), mark))
    with pytest.raises(ValueError, match="one network"):
        evaluator_policy(np.zeros((2, 72)), X)


def test_exact_results_are_the_shared_outcome_probabilities_seen_by_the_player():
    weights = random_evaluators(np.random.default_rng(25), 4) * 3
    opponent_x, opponent_o = perfect_policy(X, 0.1), perfect_policy(O, 0.1)
    results = evaluator_exact_results(weights, opponent_x, opponent_o)
    assert results.shape == (4, 2, 3) and np.allclose(results.sum(axis=-1), 1)
    for n in range(4):
        as_x = outcome_probabilities(evaluator_policy(weights[n], X), opponent_o)
        as_o = outcome_probabilities(opponent_x, evaluator_policy(weights[n], O))
        assert np.array_equal(results[n, 0], as_x)
        assert np.array_equal(results[n, 1], as_o[::-1])  # the player's win is O's win


def test_exact_results_agree_with_seeded_sampling():
    weights = random_evaluators(np.random.default_rng(26), 1)[0] * 3
    opponent_x, opponent_o = perfect_policy(X, 0.1), random_policy(O)
    exact = evaluator_exact_results(weights[None], opponent_x, opponent_o)[0]
    games = 3000
    results, _ = sample_games(evaluator_policy(weights, X), opponent_o, np.random.default_rng(27), games)
    sampled = np.array([np.mean(results == X), np.mean(results == 0), np.mean(results == O)])
    assert np.all(np.abs(sampled - exact[0]) <= 4 * np.sqrt(exact[0] * (1 - exact[0]) / games) + 1e-9)
    results, _ = sample_games(opponent_x, evaluator_policy(weights, O), np.random.default_rng(28), games)
    sampled = np.array([np.mean(results == O), np.mean(results == 0), np.mean(results == X)])
    assert np.all(np.abs(sampled - exact[1]) <= 4 * np.sqrt(exact[1] * (1 - exact[1]) / games) + 1e-9)


def test_a_deterministic_opponent_gives_the_result_of_the_one_game():
    first, second = random_evaluators(np.random.default_rng(29), 2) * 3
    results = evaluator_exact_results(first[None], evaluator_policy(second, X), evaluator_policy(second, O))[0]
    as_x, as_o = coevolution_game(first, second)[0], coevolution_game(second, first)[0]
    assert np.array_equal(results[0], np.eye(3)[{X: 0, 0: 1, O: 2}[as_x]])
    assert np.array_equal(results[1], np.eye(3)[{O: 0, 0: 1, X: 2}[as_o]])


def test_progress_curve_judges_each_generations_best_network(small_run):
    opponent_x, opponent_o = perfect_policy(X), perfect_policy(O)
    curve = progress_curve(small_run, opponent_x, opponent_o, generations=[1, 5, 12])
    assert curve.shape == (3, 3, 2, 3)
    for column, g in enumerate((1, 5, 12)):
        expected = evaluator_exact_results(small_run.best_weights[:, g - 1], opponent_x, opponent_o)
        assert np.array_equal(curve[:, column], expected)
    full = progress_curve(small_run, opponent_x, opponent_o)
    assert full.shape == (3, 12, 2, 3) and np.array_equal(full[:, [0, 4, 11]], curve)
    # A perfect player never loses: the evaluators never win.
    assert np.all(full[..., 0] == 0)
    with pytest.raises(ValueError, match="generation numbers"):
        progress_curve(small_run, opponent_x, opponent_o, generations=[0])


def test_game_points_follow_three_one_zero_over_both_sides():
    players = random_evaluators(np.random.default_rng(30), 5) * 3
    results = round_robin_results(players)
    points = game_points(results)
    assert points.shape == (5, 8) and set(np.unique(points)) <= {0, 1, 3}
    decisive = np.count_nonzero(results)
    draws = 5 * 4 - decisive
    assert points.sum() == 3 * decisive + 2 * draws
    assert points[0, 0] == {X: 3, 0: 1, O: 0}[results[0, 1]]  # player 0 as X against player 1
    assert points[0, 4] == {O: 3, 0: 1, X: 0}[results[1, 0]]  # player 0 as O against player 1


def test_the_papers_table_1_needs_two_games_per_pair():
    total = sum(AL_KHATEEB_TABLE_1.values())
    assert len(AL_KHATEEB_TABLE_1) == 20 and total == 956
    # one game per pair: 190 games give 380 to 570 points; two give 760 to 1,140.
    assert not 380 <= total <= 570 and 760 <= total <= 1140


def test_welch_test_is_scipys_one_sided_unequal_variance_test():
    from scipy import stats  # here, not at the top: importing it takes about a second
    a, b = np.array([3, 3, 1, 0, 3, 1, 3]), np.array([0, 1, 1, 0, 3, 0, 0, 1])
    test = welch_test(a, b)
    reference = stats.ttest_ind(a, b, equal_var=False, alternative="greater")
    assert test.p_value == pytest.approx(reference.pvalue) and test.statistic == pytest.approx(reference.statistic)
    variance_a, variance_b = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    assert test.statistic == pytest.approx((a.mean() - b.mean()) / np.sqrt(variance_a + variance_b))
    welch_df = (variance_a + variance_b) ** 2 / (variance_a**2 / (len(a) - 1) + variance_b**2 / (len(b) - 1))
    assert test.degrees_of_freedom == pytest.approx(welch_df)
    assert welch_test(b, a).p_value == pytest.approx(1 - test.p_value)


def test_matches_are_seeded_and_counted_from_the_players_side():
    weights = random_evaluators(np.random.default_rng(31), 1)[0]
    player, opponent = evaluator_policy(weights, O), perfect_policy(X, 0.1)
    record = match_record(player, O, opponent, np.random.default_rng(5), games=40)
    assert sum(record) == 40 and record == match_record(player, O, opponent, np.random.default_rng(5), games=40)
    results, _ = sample_games(opponent, player, np.random.default_rng(5), 40)
    assert record == (int(np.sum(results == O)), int(np.sum(results == 0)), int(np.sum(results == X)))


def test_ttt_is_the_player_with_most_points_lowest_run_first(small_run):
    row, points = choose_ttt(small_run)
    assert points.shape == (3,) and points[row] == points.max()
    assert row == int(np.flatnonzero(points == points.max())[0])


@pytest.mark.slow
def test_the_command_writes_the_record_and_ttt(tmp_path, repo_root):
    out, champion = tmp_path / "run.npz", tmp_path / "ttt.json"
    args = ["al-khateeb", "--runs", "3", "--generations", "4", "--seed", "2", "--out", str(out), "--champion",
            str(champion), "--workers", "1", "--quiet", "--view", "x"]  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "ttt_helpers", *args], cwd=repo_root, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout and f"wrote {champion}" in done.stdout
    run = load_coevolution_run(out)
    settings = AlKhateebSettings(generations=4, runs=3, player=OnePlySettings(view="x"))
    assert run.settings == settings and run.seed == 2
    expected = coevolve(settings, seed=2)
    assert np.array_equal(run.weights, expected.weights)
    weights, steps, provenance = load_evaluator(champion)
    row, points = choose_ttt(expected)
    assert np.array_equal(weights, expected.weights[row, 0]) and np.array_equal(steps, expected.steps[row, 0])
    assert provenance["run"] == row and provenance["round_robin_points"] == points[row]
    assert AlKhateebSettings.from_dict(provenance["experiment"]) == settings


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "0"], "runs must be"),
        (["--generations", "x"], "whole number"),
        (["--out", "run.txt"], "ending in .npz"),
        (["--out", "missing/run.npz"], "does not exist"),
        (["--champion", "ttt.csv"], "ending in .json"),
        (["--champion", "missing/ttt.json"], "does not exist"),
        (["--workers", "0"], "--workers"),
        (["--view", "o"], "invalid choice"),
    ],
)
def test_the_command_refuses_bad_arguments_before_running(tmp_path, repo_root, args, message):
    base = {"--out": str(tmp_path / "run.npz")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value if not value.startswith("missing") else str(tmp_path / value)
    argv = ["al-khateeb", "--generations", "100000", "--runs", "20", "--quiet"]
    for flag, value in base.items():
        argv += [flag, value]
    done = subprocess.run([sys.executable, "-m", "ttt_helpers", *argv], cwd=repo_root, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and message in done.stderr
    assert "co-evolving" not in done.stderr and not (tmp_path / "run.npz").exists()
