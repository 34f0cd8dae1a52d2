"""Al-Khateeb's robustness study (chapter 21): the deeper search, the general co-evolution, its settings."""

import json

import numpy as np
import pandas as pd
import pytest

from evolving_ttt.al_khateeb import study, system
from evolving_ttt.al_khateeb.engine import coevolve, load_coevolution_run, save_coevolution_run
from evolving_ttt.al_khateeb.evaluator import (
    MAX_DEPTH,
    WIN_VALUE,
    AlKhateebSettings,
    OnePlySettings,
    coevolve_readable,
    draw_coevolution,
    evaluate_boards,
    move_values,
    one_ply_move,
    one_ply_player,
    random_evaluators,
    round_robin_results,
)
from evolving_ttt.al_khateeb.results import evaluator_moves, evaluator_policy
from evolving_ttt.al_khateeb.robust import coevolve_general_readable, hall_of_fame_points
from evolving_ttt.al_khateeb.search import (
    alpha_beta,
    leaf_value,
    minimax_value,
    move_tables,
    search_move,
    search_player,
    search_positions,
    search_tables,
    search_values,
)
from evolving_ttt.game import O, X, board_from_string, board_tables, play
from evolving_ttt.outcomes import boards_to_move, policy_table
from evolving_ttt.records import STUDIES
from evolving_ttt.tables import study_command

READINGS = [OnePlySettings(view, wins) for view in ("mover", "x") for wins in ("evaluator", "rules")]
RECORD = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")


def deeper(settings: OnePlySettings, depth: int) -> OnePlySettings:
    return OnePlySettings(settings.view, settings.winning_moves, depth)


@pytest.fixture(scope="module")
def networks():
    return random_evaluators(np.random.default_rng(2112), 4)


def sample_boards(rng, mark, count):
    return board_tables().boards[rng.choice(boards_to_move(mark), count, replace=False)]


def test_the_positions_are_the_5478_of_play_with_their_children():
    positions = search_positions()
    tables = board_tables()
    assert len(positions.numbers) == 5478
    assert np.array_equal(positions.index[positions.numbers], np.arange(5478))
    p = positions.index[0]  # the empty board: nine children, each with one X
    assert np.all(positions.children[p] >= 0)
    assert np.all((positions.boards[positions.children[p]] == X).sum(axis=1) == 1)
    assert np.all(positions.children[positions.over] == -1)
    open_squares = tables.empty[positions.numbers] & ~positions.over[:, None]
    assert np.array_equal(positions.children >= 0, open_squares)


@pytest.mark.slow
@pytest.mark.parametrize("settings", READINGS)
def test_depth_one_is_the_books_one_ply_player(networks, settings):
    rng = np.random.default_rng(5)
    for mark in (X, O):
        for board in sample_boards(rng, mark, 25):
            for weights in networks[:2]:
                moves, values = search_values(weights, board, settings)
                one_ply_moves, one_ply_values = move_values(weights, board, settings)
                assert moves == one_ply_moves and np.array_equal(values, one_ply_values)
                assert search_move(weights, board, settings) == one_ply_move(weights, board, settings)
        positions = search_positions()
        tables = search_tables(networks, mark, settings)[:, positions.index[boards_to_move(mark)]]
        assert np.array_equal(tables, evaluator_moves(networks, mark, settings))


@pytest.mark.slow
@pytest.mark.parametrize("depth", [2, 3, 4])
@pytest.mark.parametrize("settings", READINGS)
def test_the_table_wise_search_makes_the_readable_moves(networks, settings, depth):
    settings = deeper(settings, depth)
    rng = np.random.default_rng(depth)
    positions = search_positions()
    for mark in (X, O):
        tables = search_tables(networks[:2], mark, settings)
        for board in sample_boards(rng, mark, 12):
            number = positions.index[int((board % 3) @ 3 ** np.arange(9))]
            for k in range(2):
                moves, values = search_values(networks[k], board, settings)
                assert search_move(networks[k], board, settings) == moves[int(np.argmax(values))]
                assert tables[k, number] == moves[int(np.argmax(values))]


def test_alpha_beta_is_exact_inside_its_window_and_a_bound_outside(networks):
    rng = np.random.default_rng(9)
    settings = OnePlySettings(depth=3)
    for board in sample_boards(rng, X, 10):
        exact = minimax_value(networks[0], board, 3, X, settings)
        assert alpha_beta(networks[0], board, 3, X, settings) == exact
        assert alpha_beta(networks[0], board, 3, X, settings, exact - 1e-3, exact + 1e-3) == exact
        assert alpha_beta(networks[0], board, 3, X, settings, exact + 1e-3, np.inf) <= exact + 1e-3
        assert alpha_beta(networks[0], board, 3, X, settings, -np.inf, exact - 1e-3) >= exact - 1e-3


def test_leaves_are_judged_for_the_searching_side(networks):
    board = board_from_string("X O X . O . . . .")
    assert leaf_value(networks[0], board, O, OnePlySettings()) == float(evaluate_boards(networks[0], -board))
    assert leaf_value(networks[0], board, O, OnePlySettings("x")) == -float(evaluate_boards(networks[0], board))


def test_the_rules_find_wins_and_block_losses_two_plies_deep():
    zero = np.zeros(72)
    rules2 = OnePlySettings(winning_moves="rules", depth=2)
    board = board_from_string("X X . O O . . . .")  # X wins on 2
    assert search_move(zero, board, rules2) == 2
    board = board_from_string("X . . O O . X . .")  # X to move must block O on 5
    assert search_move(zero, board, rules2) == 5
    assert minimax_value(zero, play(board, 0 + 1), 1, X, rules2) == -WIN_VALUE
    # Left to the evaluator, the all-zero network sees every board alike and plays the lowest square.
    assert search_move(zero, board, OnePlySettings(depth=2)) == 1


@pytest.mark.slow
def test_a_deep_player_is_tabulated_by_its_search(networks):
    settings = OnePlySettings("x", "rules", 2)
    player = search_player(networks[1], O, settings)
    assert np.array_equal(policy_table(player, O), evaluator_policy(networks[1], O, settings))
    both = move_tables(networks[:1], settings)[0]
    positions = search_positions()
    assert np.all((both >= 0) == ~positions.over)
    with pytest.raises(ValueError, match="side is to move"):
        player(np.zeros(9, dtype=np.int8))


def small_configs():
    deep = OnePlySettings("x", "rules", 3)
    return [
        AlKhateebSettings(population=6, parents=2, generations=4, runs=2),
        AlKhateebSettings(population=6, parents=3, generations=4, runs=2, step_sizes="player"),
        AlKhateebSettings(population=6, parents=3, generations=5, runs=2, hall_of_fame=3),
        AlKhateebSettings(population=4, parents=2, generations=3, runs=2, player=OnePlySettings(depth=2)),
        AlKhateebSettings(population=4, parents=1, generations=2, runs=1, player=deep, hall_of_fame=2),
        AlKhateebSettings(population=4, parents=2, generations=1, runs=1, player=OnePlySettings(depth=4)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("settings", small_configs(), ids=lambda c: json.dumps(c.as_dict()))
def test_the_engine_runs_every_setting_as_the_readable_code(settings):
    engine = coevolve(settings, seed=23)
    for run in range(settings.runs):
        readable = coevolve_general_readable(settings, 23, run)
        for name in RECORD:
            assert np.array_equal(getattr(engine, name)[run], getattr(readable, name)), name


@pytest.mark.slow
def test_the_general_readable_code_is_chapter_14s_with_the_papers_settings():
    settings = AlKhateebSettings(population=6, parents=3, generations=4, runs=2)
    for run in range(2):
        general, paper = coevolve_general_readable(settings, 31, run), coevolve_readable(settings, 31, run)
        assert all(np.array_equal(getattr(general, name), getattr(paper, name)) for name in RECORD)
    population = random_evaluators(np.random.default_rng(3), 5)
    assert np.array_equal(round_robin_results(population, move=search_move), round_robin_results(population))


def test_hall_of_fame_points_count_both_sides(networks):
    points = hall_of_fame_points(networks[:2], networks[2:], OnePlySettings(winning_moves="rules"))
    results = round_robin_results(networks, OnePlySettings(winning_moves="rules"), search_move)
    expected = [sum(int(results[i, j]) - int(results[j, i]) for j in (2, 3)) for i in (0, 1)]
    assert points.tolist() == expected


def test_the_hall_of_fame_changes_the_run_and_the_parents_the_offspring():
    base = AlKhateebSettings(population=6, parents=3, generations=6, runs=1)
    hall = AlKhateebSettings(population=6, parents=3, generations=6, runs=1, hall_of_fame=4)
    a, b = coevolve(base, seed=3), coevolve(hall, seed=3)
    assert np.array_equal(a.totals[:, 0], b.totals[:, 0]) and not np.array_equal(a.best_ids, b.best_ids)
    few = coevolve(AlKhateebSettings(population=6, parents=2, generations=3, runs=1), seed=3)
    assert few.best_ids.max() < 6 + 4 * 2  # four offspring a generation, numbered in order of birth


def test_one_step_size_per_player_keeps_each_networks_steps_equal():
    run = coevolve(AlKhateebSettings(population=6, parents=3, generations=5, runs=1, step_sizes="player"), seed=4)
    assert np.all(run.steps[0] == run.steps[0][:, :1])
    assert not np.all(run.steps[0] == run.steps[0][0, 0])


def test_the_draws_follow_the_settings_and_keep_the_papers_stream():
    rng, again = np.random.default_rng(8), np.random.default_rng(8)
    paper = draw_coevolution(rng)
    assert np.array_equal(paper.tie_keys, again.random(20))
    assert np.array_equal(paper.step_normals, again.standard_normal((10, 72)))
    assert np.array_equal(paper.weight_normals, again.standard_normal((10, 72))) and paper.hall_keys.size == 0
    settings = AlKhateebSettings(population=20, parents=5, step_sizes="player", hall_of_fame=7)
    draws = draw_coevolution(np.random.default_rng(8), settings)
    assert draws.step_normals.shape == (15, 1) and draws.weight_normals.shape == (15, 72)
    assert draws.hall_keys.shape == (7,)


def test_settings_are_checked_and_written_only_when_not_the_papers():
    assert "depth" not in OnePlySettings().as_dict()
    assert OnePlySettings(depth=3).as_dict()["depth"] == 3
    assert set(AlKhateebSettings().as_dict()) == {"population", "parents", "generations", "runs", "player"}
    settings = AlKhateebSettings(population=20, parents=4, step_sizes="player", hall_of_fame=5,
                                 player=OnePlySettings(depth=2))  # fmt: skip
    assert AlKhateebSettings.from_dict(json.loads(json.dumps(settings.as_dict()))) == settings
    assert settings.offspring == 16 and not settings.is_paper_procedure() and AlKhateebSettings().is_paper_procedure()
    for bad in (0, MAX_DEPTH + 1, True, 2.0, "2"):
        with pytest.raises(ValueError, match="depth"):
            OnePlySettings(depth=bad)
    for population, parents in ((20, 3), (20, 20), (20, 40)):
        with pytest.raises(ValueError, match="divide the population"):
            AlKhateebSettings(population=population, parents=parents)
    with pytest.raises(ValueError, match="step_sizes"):
        AlKhateebSettings(step_sizes="network")
    with pytest.raises(ValueError, match="hall_of_fame"):
        AlKhateebSettings(hall_of_fame=-1)


def test_one_ply_code_refuses_what_it_cannot_do(networks):
    board = np.zeros(9, dtype=np.int8)
    for call in (lambda: one_ply_move(networks[0], board, OnePlySettings(depth=2)),
                 lambda: move_values(networks[0], board, OnePlySettings(depth=2)),
                 lambda: one_ply_player(networks[0], X, OnePlySettings(depth=2)),
                 lambda: round_robin_results(networks, OnePlySettings(depth=2))):  # fmt: skip
        with pytest.raises(ValueError, match="search_move"):
            call()
    with pytest.raises(ValueError, match="coevolve_general_readable"):
        coevolve_readable(AlKhateebSettings(population=6, parents=2, generations=2, runs=1))
    with pytest.raises(ValueError, match="run"):
        coevolve_general_readable(AlKhateebSettings(population=4, parents=2, generations=1, runs=1), 1, 1)
    with pytest.raises(ValueError, match="weights"):
        search_tables(networks[0], X)


def test_records_of_the_general_settings_load_back(tmp_path):
    settings = AlKhateebSettings(population=6, parents=2, generations=3, runs=1, hall_of_fame=2,
                                 player=OnePlySettings(depth=2))  # fmt: skip
    run = coevolve(settings, seed=6)
    save_coevolution_run(run, tmp_path / "run.npz")
    back = load_coevolution_run(tmp_path / "run.npz")
    assert back.settings == settings and all(np.array_equal(getattr(back, n), getattr(run, n)) for n in RECORD)


def test_task_measures_follow_the_champion_along_the_run():
    settings = AlKhateebSettings(population=4, parents=2, generations=8, runs=1, player=OnePlySettings(depth=2))
    assert system.champion_generations(8).tolist() == [1, 2, 4, 6, 8]
    assert system.champion_generations(2000).tolist() == [1, 500, 1000, 1500, 2000]
    result = system.run_tasks(settings, 2, [0])[0]
    measures = system.task_measures(settings, result)
    champion = [k for k in measures if k.startswith("champion_")]
    assert len(champion) == 2 * 2 * 5
    assert all(-1 <= measures[k] <= 0 for k in champion if "perfect" in k)  # no one beats the perfect player
    player = system.record_players(result)[0]
    assert player.settings.depth == 2
    explanation = system.explain(player)(np.zeros(9, dtype=np.int8), X)
    assert "2 plies" in explanation.label


# --- The study's databases read back (evolving_ttt.al_khateeb.study) ---------------------------------------------


def test_study_names_and_files_are_checked(tmp_path):
    with pytest.raises(ValueError, match="not a sweep of Al-Khateeb"):
        study.study_file("fogel_population")
    with pytest.raises(ValueError, match="missing"):
        study.study_file("al_khateeb_depth", tmp_path)
    assert study.claims(tmp_path) == []


def test_task_numbers_turn_points_into_the_papers_draws_and_the_champions_progress():
    row = {"points_perfect_x": 0.25, "points_perfect_o": 0.125}
    for opponent in ("rule", "perfect"):
        for side in "xo":
            for k in range(study.CHAMPION_POINTS):
                row[f"champion_{opponent}_{side}_{k}"] = -0.5 + 0.1 * k if side == "x" else -0.2
    numbers = study.task_numbers(pd.DataFrame([row])).iloc[0]
    assert numbers["draws_x"] == 25 and numbers["draws_o"] == 12.5 and numbers["draws_both"] == 18.75
    assert numbers["progress_rule"] == pytest.approx(0.2) and numbers["first_draws_x"] == 25
    assert numbers["first_draws_o"] == 40


def test_settings_are_named_in_words():
    definition = {"grid": [["runs", ["1"]], ["player.depth", ["2", "3"]], ["hall_of_fame", ["10"]]]}
    settings = {"runs": 1, "player": {"view": "mover", "depth": 3}, "hall_of_fame": 10}
    assert study.setting_text(definition, settings) == "depth 3, hall of fame 10"


@pytest.mark.skipif(not all((STUDIES / f"{n}.sqlite").is_file() for n in study.STUDY_SWEEPS),
                    reason="the study's databases are not in book/data/studies")  # fmt: skip
def test_claims_read_their_numbers_from_the_databases():
    table3, draws, progress = study.claims()
    assert table3.bound.value < table3.threshold and not table3.cells
    cells = study.study_cells()
    paper = cells.iloc[0]
    assert paper["study"] == "al_khateeb_readings" and paper["setting"] == "view mover, winning moves evaluator"
    assert draws.cells[0].change == "paper" and draws.cells[0].setting == paper["setting"]
    assert np.mean(draws.cells[0].sample.values) == pytest.approx(paper["draws_both"])
    assert np.mean(progress.cells[0].sample.values) == pytest.approx(paper["progress_rule"])
    assert len(draws.cells) == len(cells) and (cells["n"] == 10).all()
    assert draws.threshold == 43 and progress.threshold == 0 and draws.control
    deep = [cell for cell in draws.cells if cell.setting == "depth 4, winning moves rules"]
    assert deep[0].change == "open reading" and deep[0].confirmation.n == 20
    assert study_command("al_khateeb_depth").startswith("python -m ttt_helpers sweep run al-khateeb --set runs=1")
