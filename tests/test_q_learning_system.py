"""Q-learning as a system of the book (evolving_ttt.q_learning.system): its settings, its training in stretches, its
learning curve on the exact yardsticks, its player files, its command and a sweep of it.

The learner itself is checked against OpenSpiel's QLearner, to the bit, by tests/test_q_learning.py; the system's
conformance check runs with the other systems' in tests/test_systems.py."""

import json
from dataclasses import replace

import numpy as np
import pytest

from evolving_ttt.arena import measure
from evolving_ttt.cli import main
from evolving_ttt.game import O, X, board_from_index, board_from_string, board_index
from evolving_ttt.kit import task_generator
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.q_learning import (
    QLearningSettings,
    QSettings,
    checkpoint_games,
    greedy_yardsticks,
    learn,
    q_policy,
    sweep_curves,
    train_against_rule_base,
    train_self_play,
)
from evolving_ttt.q_learning import system as q_system
from evolving_ttt.records import DATA
from evolving_ttt.sweeps import parse_grid, sweep, sweep_player
from evolving_ttt.systems import get_system, player_from_file

SYSTEM = get_system("q-learning")
TINY = QLearningSettings(tasks=2, episodes=400, checkpoints=3)
UNUSUAL = QSettings(step_size=0.35, epsilon=0.3, discount=0.9)


def same_player(a, b) -> bool:
    arrays = [(a.q, b.q), (a.curve.games, b.curve.games), (a.curve.protocol_score, b.curve.protocol_score),
              (a.curve.results, b.curve.results)]  # fmt: skip
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in arrays)


# --- Settings --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"opponent": "minimax"}, "opponent must be one of rule-base, self-play; got 'minimax'"),
        ({"tasks": 0}, "tasks must be a whole number >= 1"),
        ({"episodes": 0}, "episodes must be a whole number from 1 to 1,000,000,000"),
        ({"episodes": 10**9 + 1}, "episodes must be a whole number from 1 to 1,000,000,000"),
        ({"episodes": 2.5}, "episodes must be a whole number"),
        ({"checkpoints": 0}, "checkpoints must be a whole number from 1 to 200"),
        ({"checkpoints": 201}, "checkpoints must be a whole number from 1 to 200"),
        ({"episodes": 105}, "13 checkpoints from 100 to 105 games would measure the same game count twice"),
        ({"step_size": 1.5}, "step_size must be a number from 0 to 1"),
        ({"epsilon": -0.1}, "epsilon must be a probability"),
        ({"discount": 2}, "discount must be a number from 0 to 1"),
    ],
)
def test_settings_refuse_a_bad_value_naming_it(changes, message):
    with pytest.raises(ValueError, match=message):
        replace(QLearningSettings(), **changes)


def test_the_command_and_a_sweep_refuse_a_bad_opponent_naming_the_option(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["q-learning", "--opponent", "minimax", "--out", str(tmp_path / "run.json")])
    assert "error: --opponent minimax: q-learning settings refused: opponent must be one of rule-base, self-play" in (
        capsys.readouterr().err)  # fmt: skip
    with pytest.raises(ValueError, match="--set opponent=minimax: opponent must be one of rule-base, self-play"):
        parse_grid(SYSTEM, ["opponent=rule-base,minimax"])
    assert list(tmp_path.iterdir()) == []


def test_checkpoints_are_log_spaced_whole_numbers_from_100_games():
    assert checkpoint_games(300, 3) == (100, 173, 300)
    default = QLearningSettings()  # three checkpoints a decade, from 100 to a million games
    assert checkpoint_games(default.episodes, default.checkpoints) == (
        100, 215, 464, 1000, 2154, 4641, 10_000, 21_544, 46_415, 100_000, 215_443, 464_158, 1_000_000)  # fmt: skip
    assert checkpoint_games(50, 1) == (50,) and checkpoint_games(10**9, 200)[-1] == 10**9
    with pytest.raises(ValueError, match="2 checkpoints from 50 to 50 games"):
        checkpoint_games(50, 2)


# --- Training in stretches -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mark", [X, O])
def test_training_against_the_rule_base_in_stretches_is_one_call(mark):
    whole = train_against_rule_base(557, np.random.default_rng(8), UNUSUAL, mark=mark)
    rng = np.random.default_rng(8)
    first = train_against_rule_base(300, rng, UNUSUAL, mark=mark)
    second = train_against_rule_base(257, rng, UNUSUAL, mark=mark, q=first.q, first_episode=300)
    assert second.q.tobytes() == whole.q.tobytes()
    assert np.array_equal(np.concatenate([first.results, second.results]), whole.results)
    # without first_episode the rule base's cycled first reply (as O, the learner X) starts again at square 0
    rng = np.random.default_rng(8)
    train_against_rule_base(300, rng, UNUSUAL, mark=mark)
    restarted = train_against_rule_base(257, rng, UNUSUAL, mark=mark, q=first.q)
    assert (restarted.q.tobytes() == whole.q.tobytes()) == (mark == O)


def test_self_play_in_stretches_is_one_call():
    whole = train_self_play(601, np.random.default_rng(9), UNUSUAL)
    rng = np.random.default_rng(9)
    first = train_self_play(1, rng, UNUSUAL)
    second = train_self_play(600, rng, UNUSUAL, q=first.q)
    assert second.q.tobytes() == whole.q.tobytes()
    assert np.array_equal(np.concatenate([first.results, second.results]), whole.results)


@pytest.mark.slow  # seconds (make test, not make test-fast)
@pytest.mark.parametrize("opponent", ["rule-base", "self-play"])
def test_a_tasks_table_does_not_depend_on_its_checkpoints_or_its_pieces(opponent, monkeypatch):
    settings = replace(TINY, opponent=opponent)
    few = learn(replace(settings, checkpoints=1), 3, 1)
    many = learn(replace(settings, checkpoints=6), 3, 1)
    monkeypatch.setattr(q_system, "TRAINING_CHUNK", 37)
    pieces = learn(settings, 3, 1)
    assert few.q.tobytes() == many.q.tobytes() == pieces.q.tobytes()
    assert few.curve.protocol_score[-1] == many.curve.protocol_score[-1] == pieces.curve.protocol_score[-1]
    assert np.array_equal(few.curve.results[-1], many.curve.results[-1])
    assert not few.q.flags.writeable and np.any(few.q)


# --- The learning curve ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("opponent", ["rule-base", "self-play"])
def test_each_checkpoint_holds_the_arenas_exact_yardsticks_of_the_greedy_player_then(opponent):
    player = learn(replace(TINY, opponent=opponent), 3, 1)
    assert player.curve.games.tolist() == [100, 200, 400] and player.games == 400
    # the table after 200 games, trained again independently: X's 100 games, then O's 100, each from its own
    # child of the task's generator (or 200 games of self-play from the task's generator)
    rng = task_generator(3, 1)
    if opponent == "rule-base":
        x_stream, o_stream = rng.spawn(2)
        q = train_against_rule_base(100, x_stream, mark=X).q
        q = train_against_rule_base(100, o_stream, mark=O, q=q).q
    else:
        q = train_self_play(200, rng).q
    row = measure(ArenaPlayer("again", "test", "", q_policy(q, X), q_policy(q, O)))
    assert player.curve.protocol_score[1] == row.protocol_score
    for name, opponent_name, side in [("perfect_x", "perfect", "X"), ("perfect_o", "perfect", "O"),
                                      ("random_x", "random", "X"), ("random_o", "random", "O")]:  # fmt: skip
        assert tuple(player.curve.result(name)[1]) == row.results[opponent_name][side], name
    score, results = greedy_yardsticks(player.q)
    assert score == player.curve.protocol_score[-1] and results.tobytes() == player.curve.results[-1].tobytes()


def test_task_measures_are_the_final_checkpoints_and_the_sweeps_own_yardsticks_agree():
    player = learn(TINY, 2, 0)
    measures = SYSTEM.task_measures(TINY, player)
    row = measure(ArenaPlayer("p", "test", "", *SYSTEM.policy_tables(player)))
    assert measures["protocol_score"] == row.protocol_score
    assert measures["points_perfect_x"] == row.results["perfect"]["X"][0] + 0.5 * row.results["perfect"]["X"][1]
    assert measures["loss_perfect_o"] == row.results["perfect"]["O"][2]
    assert measures["boards_valued"] == float(np.any(player.q != 0, axis=1).sum())
    assert all(isinstance(v, float) for v in measures.values())


# --- Files -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_player():
    return learn(TINY, 4, 0)


def test_a_player_file_round_trips_to_the_bit_one_row_a_line(tiny_player, tmp_path):
    path = tmp_path / "player.json"
    SYSTEM.save_player(tiny_player, path, seed=4, task=0)
    loaded, provenance = SYSTEM.load_player(path)
    assert same_player(loaded, tiny_player) and provenance == {"seed": 4, "task": 0}
    text = path.read_text()
    SYSTEM.save_player(loaded, path, seed=4, task=0)
    assert path.read_text() == text
    data = json.loads(text)
    assert data["format"] == "ttt-kit-player" and data["system"] == "q-learning"
    rows = data["player"]["q"]
    assert [row[0] for row in rows] == np.flatnonzero(np.any(tiny_player.q != 0, axis=1)).tolist()
    assert all(len(row) == 10 and row[1:] == tiny_player.q[row[0]].tolist() for row in rows)
    assert f"\n   {json.dumps(rows[1])},\n" in text  # a row on one line, its floats as Python writes them
    assert player_from_file(path).system == SYSTEM.title


def test_a_record_round_trips_and_its_curves_are_drawn(tmp_path):
    record = SYSTEM.merge(TINY, 4, SYSTEM.run_tasks(TINY, 4, [0, 1]))
    path = tmp_path / "run.json"
    SYSTEM.save_record(record, path)
    loaded = SYSTEM.load_record(path)
    assert loaded.settings == TINY and loaded.seed == 4
    assert all(same_player(a, b) for a, b in zip(loaded.players, record.players, strict=True))
    curves = SYSTEM.record_curves(loaded)
    assert all(x.tolist() == [100, 200, 400] and y.shape == (2, 3) for x, y in curves.values())
    data = json.loads(path.read_text())
    curve = data["players"][1]["curve"]  # a player's own curve of 2 checkpoints, not the settings' 3
    data["players"][1]["curve"] = {name: [values[0], values[-1]] for name, values in curve.items()}
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"field 'players\[1\].curve.games' must be the settings' checkpoints"):
        SYSTEM.load_record(path)


FINISHED = int(board_index(board_from_string("XXX OO. ...")))  # board 229: X has won, nobody is to move


@pytest.mark.parametrize(
    ("corrupt", "message"),
    [
        (lambda p: p.pop("curve"), r"field 'player.curve' is missing"),
        (lambda p: p.update(extra=1), r"field 'player' has no field 'extra'"),
        (lambda p: p.update(q={}), r"field 'player.q' must be a list of rows"),
        (lambda p: p["q"][0].__setitem__(0, "abc"), r"field 'player.q\[0\]' must be a board index from 0 to 19682"),
        (lambda p: p["q"][0].__setitem__(0, 19683), r"field 'player.q\[0\]' must be a board index from 0 to 19682"),
        (lambda p: p["q"][0].__setitem__(0, True), r"field 'player.q\[0\]' must be a board index"),
        (lambda p: p["q"][0].__setitem__(0, 0.0), r"field 'player.q\[0\]' must be a board index"),
        (lambda p: p["q"][0].pop(), r"field 'player.q\[0\]' must be a board index from 0 to 19682 and 9 finite"),
        (lambda p: p["q"][0].__setitem__(9, "x"), r"field 'player.q\[0\]' must be a board index .* 9 finite"),
        (lambda p: p["q"][0].__setitem__(9, True), r"field 'player.q\[0\]' must be a board index .* 9 finite"),
        (lambda p: p["q"].insert(1, p["q"][0]), r"field 'player.q\[1\]': the board indices must increase"),
        (lambda p: p.update(q=[[FINISHED] + [0.0] * 9]), r"field 'player.q\[0\]': board 229 is one on which no"),
        (lambda p: p["q"][0].__setitem__(1, 1.5), r"field 'player.q\[0\]' must hold values from -1 to 1"),
        (lambda p: p.update(q=[[1, 0.5] + [0.0] * 8]), r"field 'player.q\[0\]': board 1 has a value on square 0"),
        (lambda p: p["curve"].update(extra=[]), r"field 'player.curve' has no field 'extra'"),
        (lambda p: p["curve"].update(games=[100, 100, 400]), r"field 'player.curve.games' must be increasing"),
        (lambda p: p["curve"].update(games=[]), r"field 'player.curve.games' must be increasing"),
        (lambda p: p["curve"].update(games=[100, 200.0, 400]), r"field 'player.curve.games'"),
        (lambda p: p["curve"].update(games=[7, 200, 400]), r"field 'player.curve.games' must be the checkpoints of"),
        (lambda p: p["curve"]["protocol_score"].pop(), r"field 'player.curve.protocol_score' must be 3 scores"),
        (lambda p: p["curve"]["protocol_score"].__setitem__(0, 33.0), r"field 'player.curve.protocol_score'"),
        (lambda p: p["curve"]["perfect_o"][2].__setitem__(0, 0.5), r"field 'player.curve.perfect_o' must be 3"),
        (lambda p: p["curve"]["random_x"].__setitem__(1, [0.5, 0.5]), r"field 'player.curve.random_x'"),
        (lambda p: p["curve"]["perfect_x"][0].__setitem__(0, -0.25), r"field 'player.curve.perfect_x'"),
    ],
)
def test_the_player_loader_names_the_corrupted_field(tiny_player, tmp_path, corrupt, message):
    path = tmp_path / "player.json"
    SYSTEM.save_player(tiny_player, path, seed=4)
    data = json.loads(path.read_text())
    corrupt(data["player"])
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"{path} \(q-learning player\): {message}"):
        SYSTEM.load_player(path)


def test_the_greedy_player_explains_its_move_by_the_learned_values(tiny_player):
    explain = SYSTEM.explain(tiny_player)
    empty = np.zeros(9, dtype=np.int8)
    found = explain(empty, X)
    assert found.label == "Q-value" and np.array_equal(found.values, tiny_player.q[0])
    assert found.move in np.flatnonzero(q_policy(tiny_player.q, X)[0])
    unseen = next(i for i in range(1, 19683) if not np.any(tiny_player.q[i]) and q_policy(tiny_player.q, O)[i].any())
    assert "never valued this board" in explain(board_from_index(unseen), O).text


# --- The command, a sweep and the book's players ---------------------------------------------------------------


def test_the_command_writes_the_record_and_task_0s_player_with_its_command(tmp_path, capsys):
    record_path, player_path = tmp_path / "run.json", tmp_path / "player.json"
    argv = ["q-learning", "--tasks", "2", "--episodes", "300", "--checkpoints", "3", "--opponent", "self-play",
            "--seed", "4", "--out", str(record_path), "--player", str(player_path), "--quiet",
            "--workers", "1"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"wrote {record_path}: 2 players, one per task, after 300 games each" in out
    assert f"wrote {player_path}: task 0's player, protocol score" in out
    record = SYSTEM.load_record(record_path)
    assert record.seed == 4 and record.settings == QLearningSettings(tasks=2, episodes=300, checkpoints=3,
                                                                     opponent="self-play")  # fmt: skip
    player, provenance = SYSTEM.load_player(player_path)
    assert same_player(player, record.players[0]) and same_player(player, learn(record.settings, 4, 0))
    command = "python -m ttt_helpers q-learning --tasks 2 --opponent self-play --episodes 300 --checkpoints 3"
    assert provenance["command"] == f"{command} --seed 4 --out {record_path} --player {player_path}"
    assert provenance["seed"] == 4 and provenance["task"] == 0 and provenance["settings"] == record.settings.as_dict()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["player.json", "run.json"]


def test_a_sweep_of_both_opponents_records_each_tasks_player_and_curve(tmp_path):
    db = tmp_path / "q.sqlite"
    grid = ["opponent=rule-base,self-play", "tasks=1", "episodes=200", "checkpoints=2"]
    table = sweep(SYSTEM, grid, 2, db, workers=1, progress=False)
    assert len(table) == 4 and sorted(set(table["opponent"])) == ["rule-base", "self-play"]
    assert (table["fogel_score"] == table["protocol_score"]).all()  # the sweep's yardstick and the curve's, same bits
    curves = sweep_curves(db)
    assert len(curves) == 8 and sorted(set(curves["games"])) == [100, 200]
    last = curves[curves["games"] == 200].sort_values(["cell", "seed"]).reset_index(drop=True)
    assert np.array_equal(last["points_perfect_x"], table.sort_values(["cell", "seed"])["points_perfect_x"])
    player = learn(QLearningSettings(tasks=1, episodes=200, checkpoints=2, opponent="self-play"), 2, 0)
    swept = sweep_player(db, 1, 2, 0)
    assert np.array_equal(swept.x_policy, q_policy(player.q, X))
    assert np.array_equal(swept.o_policy, q_policy(player.q, O))


def test_the_books_players_are_the_default_settings_greedy_players_with_their_curves():
    players = SYSTEM.book_players()
    assert [p.name for p in players] == ["Q-learning (rule base)", "Q-learning (self-play)"]
    for (_, file), opponent in zip(q_system.BOOK_PLAYERS, ("rule-base", "self-play"), strict=True):
        player, provenance = SYSTEM.load_player(DATA / file)
        settings = QLearningSettings.from_dict(provenance["settings"])
        assert settings == replace(QLearningSettings(), tasks=1, opponent=opponent)
        assert provenance["seed"] == 1 and provenance["task"] == 0
        out = provenance["command"].split("--out ")[1].split()[0]  # the run's record, wherever it was written
        assert provenance["command"] == q_system.SYSTEM.command_line(settings, 1, out, f"book/data/{file}")
        assert player.games == settings.episodes
        score, results = greedy_yardsticks(player.q)
        assert score == player.curve.protocol_score[-1] and results.tobytes() == player.curve.results[-1].tobytes()


@pytest.mark.slow
@pytest.mark.parametrize("file", [file for _, file in q_system.BOOK_PLAYERS])
def test_the_books_players_are_made_again_to_the_bit(file):
    saved, provenance = SYSTEM.load_player(DATA / file)
    settings = QLearningSettings.from_dict(provenance["settings"])
    assert same_player(learn(settings, provenance["seed"], provenance["task"]), saved)
