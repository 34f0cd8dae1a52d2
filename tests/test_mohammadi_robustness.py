"""Chapter 23: the readings of the Mohammadi study (bonus role, crossover at the root), the hand-written program,
the bonus test, the series' measures and the rows at a glance."""

import dataclasses
import random

import numpy as np
import pytest

from evolving_ttt.game import EMPTY, O, X
from evolving_ttt.mohammadi import coevolution as co
from evolving_ttt.mohammadi import programs as pr
from evolving_ttt.mohammadi import robustness as rb
from evolving_ttt.mohammadi import series as se
from evolving_ttt.mohammadi import system as ms
from evolving_ttt.mohammadi.judge import program_exact_results

SMALL = co.MohammadiSettings(population=12, generations=3, runs=2, group_size=3, best_candidates=4,
                             random_candidates=2, seeds_kept=2)  # fmt: skip
BUSY = "AND(PLAY-AT(pos00), AND(PLAY-AT(pos01), AND(PLAY-AT(pos02), AND(PLAY-AT(pos10), PLAY-AT(pos11)))))"


def _balanced(leaves: list[str]) -> str:
    if len(leaves) == 1:
        return leaves[0]
    middle = len(leaves) // 2
    return f"AND({_balanced(leaves[:middle])}, {_balanced(leaves[middle:])})"


MANY = _balanced(["PLAY-AT(pos00)"] * 128)
"""128 PLAY-ATs on one square: one move a game, and far more PLAY-AT nodes than the competent program's 57."""


# --- Settings ----------------------------------------------------------------------------------------------------


def test_the_new_settings_default_to_the_books_reading_and_files_without_them_still_load():
    assert co.PAPER_MOHAMMADI.bonus_role == "added" and co.PAPER_MOHAMMADI.crossover_root is False
    old = {k: v for k, v in co.PAPER_MOHAMMADI.as_dict().items() if k not in co.LATER_SETTINGS}
    assert co.MohammadiSettings.from_dict(old) == co.PAPER_MOHAMMADI
    changed = co.MohammadiSettings(bonus_role="tie_break", crossover_root=True)
    assert co.MohammadiSettings.from_dict(changed.as_dict()) == changed
    with pytest.raises(ValueError, match=r"missing settings \['judge'\]"):
        co.MohammadiSettings.from_dict({k: v for k, v in old.items() if k != "judge"})


@pytest.mark.parametrize(("changes", "message"), [
    ({"bonus_role": "instead"}, "bonus_role must be one of"),
    ({"bonus_role": None}, "bonus_role must be one of"),
    ({"crossover_root": 1}, "crossover_root must be True or False"),
    ({"crossover_root": "yes"}, "crossover_root must be True or False"),
    ({"playat_bonus": -1.0}, "playat_bonus must be a number from 0 to 1e\\+06"),
    ({"move_bonus": 1e308}, "move_bonus must be a number from 0 to 1e\\+06; got 1e\\+308"),
    ({"seeds_kept": 0}, "seeds_kept must be a whole number >= 1; got 0"),
])  # fmt: skip
def test_bad_readings_are_refused(changes, message):
    with pytest.raises(ValueError, match=message):
        co.MohammadiSettings(**changes)


def test_holder_wins_refuses_an_unknown_role():
    with pytest.raises(ValueError, match="bonus_role must be one of"):
        co.holder_wins(1.0, 0.0, (1, 1), (-1, -1), "both")


# --- The two readings of the bonus ---------------------------------------------------------------------------------


def test_tie_break_lets_the_outcome_decide_and_the_bonus_only_break_ties():
    # a won both games (20 outcome points) but has fewer points than b, whose bonus is large.
    a_points, b_points = np.array([22.0, 12.0, 2.0]), np.array([30.0, 12.0, 5.0])
    a_results = np.array([[1, 1], [0, 0], [0, 0]])
    b_results = -a_results
    added = co.holder_wins(a_points, b_points, a_results, b_results, "added")
    tie_break = co.holder_wins(a_points, b_points, a_results, b_results, "tie_break")
    assert added.tolist() == [False, True, False]
    assert tie_break.tolist() == [True, True, False]  # outcome first; equal outcomes: the bonus, a tie to a


@pytest.mark.slow
@pytest.mark.parametrize("role", co.BONUS_ROLES)
def test_batched_chains_agree_with_the_readable_ones_under_each_reading(role):
    settings = dataclasses.replace(co.PAPER_MOHAMMADI, bonus_role=role, playat_bonus=3.0)
    rng = np.random.default_rng(7)
    programs = co.random_programs(rng, 40, 8) + [rb.competent_program(), pr.parse_program(BUSY)]
    tables = np.stack([pr.program_move_table(p) for p in programs])
    counts = co.playat_bonus_counts(programs, settings)
    groups = co.sample_groups(rng, len(programs), settings.group_size)
    batched = co.tournament(tables, counts, groups, settings)
    assert np.array_equal(batched.winners, co.tournament_readable(programs, groups, settings))


def test_the_readings_choose_differently_on_a_real_population():
    rng = np.random.default_rng(3)
    programs = co.random_programs(rng, 60, 8) + [rb.competent_program()] * 5 + [pr.parse_program(MANY)] * 5
    tables = np.stack([pr.program_move_table(p) for p in programs])
    groups = co.sample_groups(rng, len(programs), 4)
    winners = {}
    for role in co.BONUS_ROLES:
        settings = dataclasses.replace(co.PAPER_MOHAMMADI, bonus_role=role)
        winners[role] = co.tournament(tables, co.playat_bonus_counts(programs, settings), groups, settings).winners
    assert not np.array_equal(winners["added"], winners["tie_break"])
    competent, many = set(range(60, 65)), set(range(65, 70))
    count = {role: {name: sum(w in group for w in pool.tolist()) for name, group in (("competent", competent),
                                                                               ("many", many))}
             for role, pool in winners.items()}  # fmt: skip
    assert count["tie_break"]["competent"] > count["added"]["competent"]
    assert count["added"]["many"] > count["tie_break"]["many"]


# --- Crossover at the root ------------------------------------------------------------------------------------------


def test_crossover_at_the_root_changes_roots_and_the_default_never_does():
    parents = co.random_programs(np.random.default_rng(11), 60, 10)
    for crossover_root in (False, True):
        settings = dataclasses.replace(co.PAPER_MOHAMMADI, crossover=1.0, mutation=0.0, crossover_root=crossover_root)
        changed = 0
        for seed in range(5):
            children = co.vary(parents, np.random.default_rng(seed), settings)
            changed += sum(c[0].name != p[0].name for c, p in zip(children, parents, strict=True))
            assert all(pr.program_height(c) <= settings.depth_limit for c in children)
        assert (changed > 0) == crossover_root


def test_crossover_anywhere_swaps_whole_trees_when_both_roots_are_picked():
    first, second = pr.parse_program("PLAY-AT(pos11)"), pr.parse_program("OPEN(pos00)")
    seen = set()
    state = random.getstate()
    try:
        for seed in range(40):
            random.seed(seed)
            a, b = co.crossover_anywhere(pr.parse_program(str(first)), pr.parse_program(str(second)))
            seen.add((pr.program_to_text(a), pr.program_to_text(b)))
    finally:
        random.setstate(state)
    assert ("OPEN(pos00)", "PLAY-AT(pos11)") in seen  # both roots picked: the trees swap
    assert ("PLAY-AT(pos00)", "OPEN(pos11)") in seen  # both leaves picked


def test_the_default_reading_gives_the_same_series_as_before():
    # The record of the default settings does not depend on the new code paths: the explicit defaults give the
    # same bits as the paper's settings.
    explicit = dataclasses.replace(SMALL, bonus_role="added", crossover_root=False)
    assert se.evolve_series(explicit, 3, False).as_dict() == se.evolve_series(SMALL, 3, False).as_dict()
    other = dataclasses.replace(SMALL, bonus_role="tie_break", crossover_root=True)
    assert se.evolve_series(other, 3, False).as_dict() != se.evolve_series(SMALL, 3, False).as_dict()


# --- The hand-written program and the bonus test ---------------------------------------------------------------------


def test_the_competent_program_is_within_the_depth_limit_moves_everywhere_and_never_loses_as_x():
    program = rb.competent_program()
    assert pr.program_height(program) <= co.PAPER_MOHAMMADI.depth_limit
    playable, _ = pr.playable_boards()
    for taken in pr.TAKEN_READINGS:
        assert np.all(pr.program_move_table(program, taken)[playable] >= 0)
        perfect = program_exact_results([program], "perfect", taken=taken)[0]
        assert perfect[0, 2] == 0.0 and perfect[0, 1] == 1.0
        assert program_exact_results([program], "random", taken=taken)[0, :, 0].min() > 0.8


@pytest.mark.parametrize(("board", "mark", "expected"), [
    ("XX. OO. ...", X, 2),  # win before block
    ("XX. O.. O..", O, 2),  # block
    ("X.. ... ...", O, 4),  # centre
    ("... .X. ...", O, 0),  # a corner
])  # fmt: skip
def test_the_competent_program_wins_blocks_then_prefers_centre_and_corners(board, mark, expected):
    cells = [{"X": X, "O": O, ".": EMPTY}[c] for c in board.replace(" ", "")]
    assert pr.run_program(rb.competent_program(), np.array(cells, dtype=np.int8), mark) == expected


def test_bonus_test_separates_the_board_from_the_points():
    population = [MANY, BUSY]
    added = rb.bonus_test(rb.competent_program(), population, co.PAPER_MOHAMMADI)
    tie_break = rb.bonus_test(rb.competent_program(), population,
                              dataclasses.replace(co.PAPER_MOHAMMADI, bonus_role="tie_break"))  # fmt: skip
    for result in (added, tie_break):
        assert result.won.tolist() == [2, 2] and result.lost.tolist() == [0, 0]
        assert result.board_wins.tolist() == [True, True]
    assert added.point_wins.tolist() == [False, True]  # the busy tree outscores two lost games with its bonus
    assert added.member_points[0] > added.points[0]
    assert tie_break.point_wins.tolist() == [True, True]
    assert added.points.tolist() == tie_break.points.tolist()  # the points are the same; only the decision differs
    assert added.shares() == {"both_games": 1.0, "on_board": 1.0, "on_points": 0.5}
    smaller = rb.bonus_test(rb.competent_program(), population, dataclasses.replace(co.PAPER_MOHAMMADI,
                                                                                     playat_bonus=0.1))  # fmt: skip
    assert smaller.point_wins.tolist() == [True, True]  # a small bonus no longer outweighs the board


def test_bonus_test_refuses_bad_input():
    with pytest.raises(ValueError, match="at least one program"):
        rb.bonus_test(rb.competent_program(), [], co.PAPER_MOHAMMADI)
    with pytest.raises(ValueError, match="MohammadiSettings"):
        rb.bonus_test(rb.competent_program(), [BUSY], {"bonus_role": "added"})
    with pytest.raises(ValueError, match="program"):
        rb.bonus_test("PLAY-AT(pos11)", [BUSY], co.PAPER_MOHAMMADI)


# --- The series' measures -------------------------------------------------------------------------------------------


def test_task_measures_are_in_range_and_agree_with_the_record():
    record = se.evolve_series(SMALL, 2, False)
    measures = ms.task_measures(SMALL, record)
    for name in ("root_playat_last", "single_root_last", "single_root_max", "champion_single_root",
                 "fittest_points_perfect", "fittest_points_random"):  # fmt: skip
        assert 0.0 <= measures[name] <= 1.0, name
    assert measures["single_root_max"] >= measures["single_root_last"]
    assert measures["round_robin_mean_last"] == record.runs[-1].round_robin.mean()
    champion = pr.parse_program(record.champion())
    assert measures["champion_size"] == len(champion)
    perfect = record.runs[-1].results["perfect"][: SMALL.best_candidates]
    assert np.isclose(measures["fittest_points_perfect"], (perfect[:, :, 0] + perfect[:, :, 1] / 2).mean())
    none = ms.task_measures(dataclasses.replace(SMALL, best_candidates=0), record)
    assert "fittest_points_perfect" not in none


# --- The command line and the rows at a glance -----------------------------------------------------------------------


def test_the_command_line_sets_the_new_readings():
    import argparse

    parser = argparse.ArgumentParser()
    ms.add_arguments(parser)
    default = ms.settings_from_arguments(parser.parse_args([]))
    assert (default.bonus_role, default.crossover_root) == ("added", False)
    other = ms.settings_from_arguments(parser.parse_args(["--bonus-role", "tie_break", "--crossover-root"]))
    assert (other.bonus_role, other.crossover_root) == ("tie_break", True)
    with pytest.raises(SystemExit):
        parser.parse_args(["--bonus-role", "sometimes"])


def test_sweep_commands_name_their_databases_and_unknown_sweeps_are_refused():
    for name in rb.STUDY_SWEEPS:
        command = rb.sweep_command(name)
        assert f"mohammadi_{name}.sqlite" in command and "--seeds 10" in command
    with pytest.raises(ValueError, match="no sweep 'depth'"):
        rb.sweep_command("depth")


def test_random_player_points_and_verdict_columns():
    import pandas as pd

    x_line, o_line = rb.random_player_points()
    assert abs(x_line + o_line - 1.0) < 1e-12 and 0.64 < x_line < 0.66
    table = pd.DataFrame({"points_random_x": [0.9, 0.9, 0.5], "points_random_o": [0.5, 0.3, 0.5],
                          "points_perfect_x": [0.5, 0.0, 0.5], "points_perfect_o": [0.5, 0.0, 0.0],
                          "can_lose": [0.0, 1.0, 1.0]})  # fmt: skip
    marked = rb.add_verdict_columns(table)
    assert marked["beats_random"].tolist() == [1.0, 0.0, 0.0]
    assert marked["never_loses"].tolist() == [1.0, 0.0, 0.0]
    assert marked["points_perfect"].tolist() == [0.5, 0.0, 0.25]


def test_the_claims_compare_with_a_program_that_never_moves():
    x_line, o_line = rb.lowest_square_points()
    random_x, random_o = rb.random_player_points()
    assert 0.80 < x_line < 0.81 and 0.45 < o_line < 0.47 and x_line > random_x and o_line > random_o
    found = ms.claims()
    if not (rb.STUDIES_FOLDER / "mohammadi_judge.sqlite").is_file():
        assert found == []
        return
    judge, root, play = found
    # One cell per reading of the bonus in each sweep that crosses the judges: the paper's length and population, then
    # 100 generations, then a population of 512.
    assert [cell.setting for cell in judge.cells] == [
        "bonuses added to the outcome points", "bonuses that only break ties",
        "bonuses added to the outcome points, 100 generations a run instead of 15",
        "bonuses that only break ties, 100 generations a run instead of 15",
        "bonuses added to the outcome points, a population of 512 instead of 128",
        "bonuses that only break ties, a population of 512 instead of 128",
    ][: len(judge.cells)]  # fmt: skip
    assert len(judge.cells) == 2 * sum(f"mohammadi_{name}" in {p.stem for p in rb.STUDIES_FOLDER.glob("*.sqlite")}
                                       for name in rb.JUDGE_SWEEPS)  # fmt: skip
    changes = ["paper", "open reading", *["stated setting"] * 4]
    assert [cell.change for cell in judge.cells] == changes[: len(judge.cells)]
    assert all(cell.sample.kind == "difference" for cell in judge.cells)
    tables = rb.study_tables()
    paper = tables["judge"][tables["judge"]["setting"] == "judge=perfect, bonus_role=added"]
    hits = (paper["points_random_x"] > x_line) & (paper["points_random_o"] > o_line)
    assert play.cells[0].change == "paper" and sum(play.cells[0].sample.values) == hits.sum()
    # every setting with the scripted judge once, though the population sweep and judge_512 both run one of them
    judged = {key for _, _, settings, key, _ in rb._cells(tables) if settings["judge"] == "perfect"}
    assert len(root.cells) == len(play.cells) == len(judged)
    assert [cell.setting for cell in root.cells].count("a population of 512 instead of 128") == 1
