"""Chapter 19: exact results, the scripted judge, series of runs, saved programs, and the judge panel by clicks."""

import json
import random
import re

import numpy as np
import pytest

from evolving_ttt.fogel_score import rule_base_policy
from evolving_ttt.game import EMPTY, O, X, is_game_over, play, player_to_move, winner
from evolving_ttt.mohammadi import coevolution as co
from evolving_ttt.mohammadi import judge as jd
from evolving_ttt.mohammadi import programs as pr
from evolving_ttt.mohammadi import series as se
from evolving_ttt.mohammadi.panel import JudgePanel, JudgeSession
from evolving_ttt.outcomes import outcome_probabilities, perfect_policy, policy_table, random_policy
from evolving_ttt.perfect import lowest_square_player

SMALL = co.MohammadiSettings(population=12, generations=3, runs=3, group_size=3, best_candidates=4,
                             random_candidates=2, seeds_kept=2)  # fmt: skip
SILENT = "OR(MINE(pos00), YOURS(pos00))"


# --- Exact results and the scripted judge ------------------------------------------------------------------------


@pytest.mark.slow
def test_exact_results_match_the_outcomes_module_for_tabulated_players():
    programs = co.random_programs(np.random.default_rng(0), 5, 10)
    for kind, policy in (("perfect", perfect_policy), (rule_base_policy, rule_base_policy), ("random", random_policy)):
        results = jd.program_exact_results(programs, kind, chunk=2)
        assert results.shape == (5, 2, 3)
        for k, program in enumerate(programs):
            player = pr.ProgramPlayer(program)
            as_x = outcome_probabilities(policy_table(player, X), policy(O))
            as_o = outcome_probabilities(policy(X), policy_table(player, O))
            assert np.allclose(results[k, 0], as_x) and np.allclose(results[k, 1], as_o[::-1])
        assert np.allclose(results.sum(axis=2), 1.0)


def test_a_program_that_never_moves_plays_as_the_lowest_square_player():
    results = jd.program_exact_results([pr.parse_program(SILENT)], "random")
    as_x = outcome_probabilities(policy_table(lowest_square_player, X), random_policy(O))
    assert np.allclose(results[0, 0], as_x)
    # Against the perfect player the lowest-square player loses every game, from both sides.
    assert np.allclose(jd.program_exact_results([pr.parse_program(SILENT)], "perfect")[0, :, 2], 1.0)


def test_scripted_judge_keeps_the_fewest_losses_then_more_random_wins_then_smaller_trees():
    perfect = np.zeros((5, 2, 3))
    perfect[:, :, 2] = [[1, 1], [0.5, 0], [0.5, 0], [0.2, 0.3], [0.5, 0]]  # losses: 2, .5, .5, .5, .5
    random_ = np.zeros((5, 2, 3))
    random_[:, :, 0] = [[1, 1], [0.4, 0.4], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]
    verdict = jd.scripted_judge(perfect, random_, sizes=[3, 3, 9, 5, 5], keep=3)
    assert verdict.order.tolist() == [3, 4, 2, 1, 0]
    assert verdict.kept.tolist() == [3, 4, 2]
    assert np.allclose(verdict.losses, [2, 0.5, 0.5, 0.5, 0.5])


def test_candidates_are_the_fittest_then_distinct_random_others():
    fitness = np.array([5.0, 9.0, 1.0, 9.0, 7.0, 0.0, 3.0, 2.0])
    chosen = jd.choose_candidates(fitness, np.random.default_rng(0), best=3, others=3)
    assert chosen[:3].tolist() == [1, 3, 4]  # ties to the lower index
    assert len(set(chosen.tolist())) == 6 and not set(chosen[3:]) & {1, 3, 4}
    with pytest.raises(ValueError, match="opponent must be one of"):
        jd.opponent_policy("human", X)
    with pytest.raises(ValueError, match="opponent must be one of"):
        jd.program_exact_results([pr.parse_program(SILENT)], 3)


# --- Series ----------------------------------------------------------------------------------------------------


def test_a_series_reproduces_from_its_seed_and_records_every_generation():
    first = se.evolve_series(SMALL, seed=4, progress=False)
    second = se.evolve_series(SMALL, seed=4, progress=False)
    assert first.as_dict() == second.as_dict()
    assert se.evolve_series(SMALL, seed=5, progress=False).as_dict() != first.as_dict()
    for name in se.GENERATION_STATISTICS:
        assert first.curve(name).shape == (3, 3)
    assert len(first.runs) == 3
    for run in first.runs:
        assert len(run.population) == 12 and run.candidates.shape == (6,)
        assert set(run.results) == set(jd.OPPONENTS)
        assert len(run.kept) == 2 and run.kept == run.judge_order[:2]
        assert np.all(run.heights <= SMALL.depth_limit)
        assert run.round_robin.sum() <= 12 * 11 * 2 / 2 + 1e-9  # at most one winner per game


def test_the_next_run_starts_from_the_kept_programs_and_new_random_ones():
    series = se.Coevolution(SMALL, seed=2)
    record = series.run()
    kept = series.judge()
    series.reseed(kept)
    texts = [pr.program_to_text(p) for p in series.population]
    assert texts[:2] == [record.population[record.candidates[k]] for k in kept]
    assert len(texts) == 12
    with pytest.raises(ValueError, match="kept must list candidate positions"):
        series.reseed([6])
    with pytest.raises(ValueError, match="twice"):
        series.reseed([1, 1])


def test_without_a_judge_the_population_carries_on_between_runs():
    settings = co.MohammadiSettings(**{**SMALL.as_dict(), "judge": "none"})
    series = se.Coevolution(settings, seed=3)
    series.run()
    before = [pr.program_to_text(p) for p in series.population]
    assert series.judge() == []
    series.reseed(None)
    assert [pr.program_to_text(p) for p in series.population] == before
    record = se.evolve_series(settings, seed=3, progress=False)
    assert record.champion() == record.runs[-1].population[record.runs[-1].candidates[0]]


def test_series_records_save_load_and_are_shared_through_the_run_cache(tmp_path, monkeypatch):
    record = se.evolve_series(SMALL, seed=1, progress=False)
    path = tmp_path / "series.json"
    se.save_series(record, path)
    assert se.load_series(path).as_dict() == record.as_dict()
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a series record"):
        se.load_series(tmp_path / "bad.json")
    monkeypatch.setenv("TTT_RUN_CACHE", str(tmp_path / "cache"))
    cached = se.run_series(SMALL, seed=1, progress=False)
    assert cached.as_dict() == record.as_dict()
    assert len(list((tmp_path / "cache").glob("mohammadi-*.json"))) == 1
    assert se.run_series(SMALL, seed=1, progress=False).as_dict() == record.as_dict()  # read back


def test_saved_programs_load_back_and_bad_files_say_what_is_wrong(tmp_path):
    program = pr.parse_program("PLAY-AT(OR(OPEN(pos11), pos00))")
    path = tmp_path / "champion.json"
    se.save_program(program, path, seed=1, how="test")
    loaded, provenance = se.load_program(path)
    assert pr.program_to_text(loaded) == "PLAY-AT(OR(OPEN(pos11), pos00))" and provenance == {"seed": 1, "how": "test"}
    cases = {
        "not json": "is not valid JSON",
        json.dumps({"format": "fogel-ttt-network"}): "is not a saved program",
        json.dumps({"format": se.PROGRAM_FORMAT, "version": 3, "program": "pos11"}): "unsupported version 3",
        json.dumps({"format": se.PROGRAM_FORMAT, "version": 1}): '"program" must be',
        json.dumps({"format": se.PROGRAM_FORMAT, "version": 1, "program": "PLAY-AT(pos11"}): "closing PLAY-AT",
        json.dumps({"format": se.PROGRAM_FORMAT, "version": 1, "program": "pos11", "provenance": 3}): "provenance",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            se.load_program(path)
    with pytest.raises(ValueError, match="could not be read"):
        se.load_program(tmp_path / "missing.json")


def test_the_committed_champion_loads_and_its_provenance_matches_the_chapter_series(repo_root):
    program, provenance = se.load_program(repo_root / "book/data/mohammadi_champion.json")
    assert len(program) >= 2 and pr.playat_count(program) >= 1
    settings = co.MohammadiSettings.from_dict(provenance["config"])
    assert settings.judge == "perfect" and provenance["seed"] >= 0
    assert provenance["losses_to_perfect"] == pytest.approx(
        jd.program_exact_results([program], "perfect")[0, :, 2].sum(), abs=1e-9
    )


# --- The judge panel, driven by clicks ------------------------------------------------------------------------


def button_board(panel):
    marks = {"X": X, "O": O, " ": EMPTY}
    return np.array([marks[b.description] for b in panel.squares], dtype=np.int8)


def check_panel(panel):
    """The panel shows exactly its session, and nothing went wrong."""
    session = panel.session
    assert np.array_equal(button_board(panel), session.board)
    assert panel.status.value == f"<b>{session.status}</b>"
    assert panel.candidate.value == session.selected and panel.side.value == session.human
    assert [box.value for box in panel.keep] == [k in session.kept for k in range(len(session.candidates))]
    assert f"<b>Run {session.run_number}</b>" in panel.summary.value
    assert "Something went wrong" not in session.status
    # The board is a legal position of a game between the person and the selected program.
    replay = np.zeros(9, dtype=np.int8)
    player = pr.ProgramPlayer(session.candidates[session.selected])
    for square in session.moves:
        if player_to_move(replay) != session.human:
            assert square == player(replay)  # the program's moves are the program's
        replay = play(replay, square)
    assert np.array_equal(replay, session.board)


def test_a_whole_judging_round_by_clicks():
    panel = JudgePanel(JudgeSession(SMALL, seed=6))
    session = panel.session
    check_panel(panel)
    assert session.run_number == 1 and len(panel.keep) == 6
    # The person plays O by default: the program has opened.
    assert len(session.moves) == 1 and session.board[session.moves[0]] == X
    # Play candidate 0 to the end, clicking the lowest empty square each time.
    while not is_game_over(session.board):
        square = int(np.flatnonzero(session.board == EMPTY)[0])
        panel.squares[square].click()
        check_panel(panel)
    tally = session.tally[0]
    result = winner(session.board)
    assert tally == {"human": int(result == O), "program": int(result == X), "draws": int(result == EMPTY)}
    panel.squares[0].click()  # after the end: nothing happens, and the status says so
    assert session.status == "The game is over. Press New game to play again."
    # Switch to candidate 3 as X, click a taken square, start over.
    panel.candidate.value = 3
    panel.side.value = X
    check_panel(panel)
    assert session.selected == 3 and session.moves == [] and session.status == "Your move."
    panel.squares[4].click()
    check_panel(panel)
    panel.squares[4].click()
    assert session.status == "Square 4 is taken. Choose an empty square."
    panel.new_game.click()
    assert session.moves == []
    # Tick two candidates, untick one, tick another, start the next run.
    for k, value in ((1, True), (3, True), (1, False), (5, True)):
        panel.keep[k].value = value
        check_panel(panel)
    assert session.kept == {3, 5}
    kept_texts = [pr.program_to_text(session.candidates[k]) for k in (3, 5)]
    panel.next_run.click()
    check_panel(panel)
    assert session.run_number == 2 and session.kept == set() and len(panel.keep) == 6
    first = session.series.record.runs[0]
    assert first.kept == [3, 5] and [first.population[first.candidates[k]] for k in (3, 5)] == kept_texts
    assert session.status.startswith("Run 2 finished, seeded with 2 kept programs.")


def test_the_kept_programs_seed_the_next_run():
    session = JudgeSession(SMALL, seed=7)
    session.keep(0)
    session.keep(2)
    texts = [pr.program_to_text(session.candidates[k]) for k in (0, 2)]
    # The run replaces the population through variation, so check the reseeded population before it runs.
    recorded = []
    original_run = session.series.run

    def spy(progress=None):
        recorded.append([pr.program_to_text(p) for p in session.series.population[:2]])
        return original_run(progress)

    session.series.run = spy
    session.next_run()
    assert recorded == [texts]


@pytest.mark.slow
def test_random_click_sequences_never_break_the_panel():
    panel = JudgePanel(JudgeSession(SMALL, seed=8))
    rng = random.Random(0)
    for _ in range(300):
        action = rng.randrange(6)
        if action <= 2:
            panel.squares[rng.randrange(9)].click()
        elif action == 3:
            panel.candidate.value = rng.randrange(len(panel.session.candidates))
        elif action == 4:
            panel.keep[rng.randrange(len(panel.keep))].value = rng.random() < 0.5
        else:
            choice = rng.randrange(10)
            if choice == 0:
                panel.next_run.click()
            elif choice < 4:
                panel.side.value = rng.choice([X, O])
            else:
                panel.new_game.click()
        check_panel(panel)
    # Bad calls on the session change nothing and explain themselves.
    session = panel.session
    assert not session.click(9) and "no square 9" in session.status
    assert not session.select(99) and "no candidate 99" in session.status
    assert not session.set_side(0) and "You can play X" in session.status
    assert not session.keep(-1)


# --- The command line ------------------------------------------------------------------------------------------


def test_mohammadi_command_writes_the_series_and_the_champion(tmp_path, capsys):
    from evolving_ttt.cli import main

    out, champion = tmp_path / "series.json", tmp_path / "champion.json"
    args = ["mohammadi", "--runs", "2", "--generations", "2", "--population", "24", "--seed", "3",
            "--seeds-kept", "4", "--out", str(out), "--champion", str(champion), "--quiet"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "2 runs x 2 generations, population 24, perfect judge, seed 3" in printed.err
    record = se.load_series(out)
    expected = se.evolve_series(record.settings, seed=3, progress=False)
    assert record.as_dict() == expected.as_dict()  # the command runs exactly the library's series
    assert record.settings.best_candidates == 20 and record.settings.random_candidates == 4
    program, provenance = se.load_program(champion)
    assert pr.program_to_text(program) == expected.champion()
    assert provenance == se.series_provenance(expected)
    assert f"wrote {champion}" in printed.out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "{missing}/series.json"], "the folder .* does not exist"),
        (["--out", "{tmp}"], "is a directory"),
        (["--out", "{tmp}/s.json", "--champion", "{missing}/c.json"], "--champion .* does not exist"),
        (["--out", "{tmp}/s.json", "--runs", "0"], "runs must be a whole number >= 1"),
        (["--out", "{tmp}/s.json", "--population", "30", "--seeds-kept", "40"], "seeds_kept .* exceeds"),
        (["--out", "{tmp}/s.json", "--judge", "human"], "invalid choice: 'human'"),
        (["--out", "{tmp}/s.json", "--generations", "-2"], "expected a whole number >= 0"),
    ],
)
def test_mohammadi_command_checks_its_arguments_before_running(tmp_path, capsys, args, message):
    from evolving_ttt.cli import main

    args = [a.format(tmp=tmp_path, missing=tmp_path / "nowhere") for a in args]
    with pytest.raises(SystemExit) as stop:
        main(["mohammadi", "--quiet", *args])
    assert stop.value.code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "s.json").exists()


def test_the_panel_shows_the_selected_candidate_pruned():
    panel = JudgePanel(JudgeSession(SMALL, seed=9))
    for k in (0, 3):
        panel.candidate.value = k
        text = panel.session.pruned_text(k)
        pruned = pr.parse_program(text)
        assert np.array_equal(pr.program_move_table(pruned), pr.program_move_table(panel.session.candidates[k]))
        assert text[:200] in panel.program.value and panel.session.candidate_label(k) in panel.program.value


@pytest.mark.slow
def test_the_champion_as_a_move_function_for_either_side():
    program, provenance = se.load_program(se.DEFAULT_PROGRAM)
    settings = co.MohammadiSettings.from_dict(provenance["config"])
    player = pr.ProgramPlayer(program, settings.taken)
    for mark in (X, O):
        table = policy_table(lambda board, mark=mark: pr.program_move(program, board, mark, settings.taken), mark)
        assert np.array_equal(table, pr.program_policy(program, mark, settings.taken))
        assert np.array_equal(table, policy_table(player, mark))
    assert se.series_games(settings) == 4 * 15 * 128 * 4 * 2
