"""Mohammadi et al. (2013): a hand-written program and what decides a double game (chapter 23).

Chapter 23 asks whether any setting of the system evolves programs that play well, and when the paper's two
unreproduced claims appear. Its first tool is a *competent* program written by hand in the paper's own language
(:func:`competent_program`): it wins when it can, blocks when it must, and otherwise takes the centre, a corner,
then an edge. :func:`bonus_test` drops such a program into a final population and counts, against every member,
the double games it wins on the board and those it wins on points, under the reading of the points that the
settings name (``bonus_role``). Under the book's reading (bonuses added to the outcome points, one point per
PLAY-AT node, no cap) a program with more nodes wins the double game whatever happens on the board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from deap import gp

from evolving_ttt.game import O, X, check_instance
from evolving_ttt.mohammadi.coevolution import (
    MohammadiSettings,
    double_game_points,
    play_double_games,
    playat_bonus_counts,
    programs_from_texts,
)
from evolving_ttt.mohammadi.programs import (
    PROGRAM_HEIGHT_LIMIT,
    TERMINAL_NAMES,
    check_program,
    parse_program,
    program_move_table,
)
from evolving_ttt.outcomes import outcome_probabilities, policy_table, random_policy
from evolving_ttt.perfect import lowest_square_player
from evolving_ttt.records import STUDIES
from evolving_ttt.tables import study_command
from evolving_ttt.verdicts import Cell, Claim, Measure, Sample, change_of, changed_keys, run_sample

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
"""The eight lines of the board, as squares (chapter 23)."""

PREFERENCES = (4, 0, 2, 6, 8, 1, 3, 5, 7)
"""The competent program's squares when there is nothing to win or block: centre, corners, edges (chapter 23)."""

NEVER = "AND(MINE(pos00), YOURS(pos00))"
"""A subtree that is NIL on every board (a square is never both the player's and the opponent's)."""


def _step(move: str) -> str:
    """``move`` followed by NIL whatever it returned: a step of a sequence that goes on unless it moved."""
    return f"AND({move}, {NEVER})"


def _sequence(steps: Sequence[str]) -> str:
    """The steps in order as a balanced tree of ORs: every step is NIL unless it moved, so OR tries the next."""
    if len(steps) == 1:
        return steps[0]
    middle = len(steps) // 2
    return f"OR({_sequence(steps[:middle])}, {_sequence(steps[middle:])})"


def competent_program_text() -> str:
    """The text of :func:`competent_program` (chapter 23)."""
    steps = []
    for test in ("MINE", "YOURS"):  # first every win, then every block
        for line in LINES:
            for target in line:
                a, b = (TERMINAL_NAMES[s] for s in line if s != target)
                steps.append(_step(f"PLAY-AT(AND(AND({test}({a}), {test}({b})), {TERMINAL_NAMES[target]}))"))
    steps += [_step(f"PLAY-AT({TERMINAL_NAMES[square]})") for square in PREFERENCES]
    return _sequence(steps)


def competent_program() -> gp.PrimitiveTree:
    """A hand-written program in the paper's language that wins, blocks, and prefers centre, corners, edges.

    It tries, in order: each of the 24 (line, square) pairs where the program holds the line's two other squares
    (a win, if the square is open), then the same 24 for the opponent's marks (a block), then the squares of
    :data:`PREFERENCES`. Each try is a PLAY-AT that is followed by NIL whatever it returns, so it works under
    either reading of PLAY-AT on a taken square, and the tries are joined by a balanced tree of ORs, so the
    program is 12 levels deep, within the paper's depth limit of 20. It moves on every board (chapter 23).
    """
    program = parse_program(competent_program_text())
    check_program(program, "the competent program", PROGRAM_HEIGHT_LIMIT)
    return program


@dataclass(frozen=True)
class BonusTest:
    """A program's double games against every member of a population (chapter 23).

    Attributes
    ----------
    won, lost : (n,) int
        Games (of 2) the program won and lost against each member.
    board_wins : (n,) bool
        Whether it won the double game on the board: more outcome points than the member.
    point_wins : (n,) bool
        Whether it won the double game as the settings decide it (``bonus_role``), holding the chain (a tie
        goes to it).
    points, member_points : (n,) float
        Its points and the member's (outcome points plus bonuses).
    """

    won: np.ndarray
    lost: np.ndarray
    board_wins: np.ndarray
    point_wins: np.ndarray
    points: np.ndarray
    member_points: np.ndarray

    def shares(self) -> dict[str, float]:
        """The shares of members it beat in both games, beat on the board, and beat on points."""
        return {"both_games": float(np.mean(self.won == 2)), "on_board": float(np.mean(self.board_wins)),
                "on_points": float(np.mean(self.point_wins))}  # fmt: skip


def bonus_test(program: gp.PrimitiveTree, population: Sequence[str], settings: MohammadiSettings) -> BonusTest:
    """Drop ``program`` into ``population`` (program texts) and play a double game against every member.

    The program holds the chain (it plays X first); the games and points are those of
    :func:`~evolving_ttt.mohammadi.coevolution.play_double_games` under ``settings`` (its bonuses, their size and
    ``bonus_role``) (chapter 23).
    """
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    check_program(program)
    members = programs_from_texts(population)
    if not members:
        raise ValueError("population must hold at least one program text")
    programs = [program, *members]
    tables = np.stack([program_move_table(p, settings.taken) for p in programs])
    counts = playat_bonus_counts(programs, settings)
    others = np.arange(1, len(programs))
    games = play_double_games(tables, counts, np.zeros(len(others), dtype=int), others, settings)
    own = double_game_points(games.a_results[:, 0], games.a_results[:, 1])
    theirs = double_game_points(games.b_results[:, 0], games.b_results[:, 1])
    return BonusTest(
        won=(games.a_results > 0).sum(axis=1), lost=(games.a_results < 0).sum(axis=1), board_wins=own > theirs,
        point_wins=np.asarray(games.a_wins), points=games.a_points, member_points=games.b_points,
    )  # fmt: skip


# --- Reading the study's databases (chapter 23) -----------------------------------------------------------------------

STUDY_SWEEPS = {
    "judge": ("judge=none,perfect,random", "bonus_role=added,tie_break"),
    "crossover": ("crossover_root=true",),
    "any": ("playat_counted=any",),
    "bonus_size": ("playat_bonus=0,5",),
    "seeds_kept": ("seeds_kept=1,40",),
    "population": ("population=512",),
    "generations": ("generations=40",),
    "judge_long": ("judge=none,perfect,random", "bonus_role=added,tie_break", "generations=100"),
    "judge_512": ("judge=none,perfect,random", "bonus_role=added,tie_break", "population=512"),
}
"""The study's sweeps, by the name of their database ``book/data/studies/mohammadi_<name>.sqlite``, with their
``--set`` arguments; every cell runs seeds 1 to 10 and varies one reading or setting around the paper's (chapter 23).
The paper's own setting (scripted judge, bonuses added) is a cell of the ``judge`` sweep; ``judge_long`` crosses the
same judges and readings over runs of 100 generations, ``judge_512`` with a population of 512."""

STUDIES_FOLDER = STUDIES
"""Where the study's databases are committed (``book/data/studies``)."""

JUDGE_SWEEPS = ("judge", "judge_long", "judge_512")
"""The sweeps that cross the judges with the readings of the bonus, each a pair of cells (with and without the
scripted judge) for the claim that the judge helps, per reading (chapter 23)."""

PAPER_CELL = {"judge": "perfect", "bonus_role": "added"}
"""The cell of the ``judge`` sweep that holds the paper's setting as the book reads it (chapter 23)."""

SINGLE_ROOT_MAJORITY = 0.5
"""Claim 3 counts as shown when more than this share of a run's last generation is a single PLAY-AT at the root."""


def sweep_command(name: str) -> str:
    """The command line that runs (or resumes, or extends) the study's sweep ``name`` (chapter 23)."""
    if name not in STUDY_SWEEPS:
        raise ValueError(f"no sweep {name!r} in the study; the sweeps are {', '.join(STUDY_SWEEPS)}")
    return study_command(f"mohammadi_{name}")


@cache
def random_player_points() -> tuple[float, float]:
    """Expected points per game (1 a win, 1/2 a draw) of the uniformly random player against itself, as X and as O.

    The line a player must clear to be better than random (chapter 23): about 0.649 as X and 0.351 as O.
    """
    x_wins, draw, o_wins = outcome_probabilities(random_policy(X), random_policy(O))
    return float(x_wins + draw / 2), float(o_wins + draw / 2)


def add_verdict_columns(table):
    """The study table with ``beats_random`` (the champion scores more against the random player than a random
    player does, as X and as O), ``never_loses`` (it cannot lose to any opponent from either side) and
    ``points_random`` / ``points_perfect`` (means of its two sides) (chapter 23)."""
    x_line, o_line = random_player_points()
    table = table.copy()
    table["beats_random"] = ((table["points_random_x"] > x_line) & (table["points_random_o"] > o_line)).astype(float)
    table["never_loses"] = 1.0 - table["can_lose"]
    table["points_random"] = (table["points_random_x"] + table["points_random_o"]) / 2
    table["points_perfect"] = (table["points_perfect_x"] + table["points_perfect_o"]) / 2
    return table


def study_tables() -> dict:
    """Every study database that is committed, by sweep name, as tables with :func:`add_verdict_columns` and a
    ``setting`` column naming the cell (``"judge=none, bonus_role=added"``) (chapter 23)."""
    from evolving_ttt.tables import study_table

    tables = {}
    for name, assignments in STUDY_SWEEPS.items():
        try:
            table = study_table(f"mohammadi_{name}")
        except ValueError:  # not (yet) run
            continue
        if table.empty:
            continue
        keys = [assignment.split("=")[0] for assignment in assignments]
        table = add_verdict_columns(table)
        labels = [
            ", ".join(f"{k}={v}" for k, v in zip(keys, row, strict=True)) for row in table[keys].itertuples(False)
        ]
        table["setting"] = labels
        tables[name] = table
    return tables


def study_summary(measures: Sequence[str], tables: dict | None = None):
    """One row per cell of every committed sweep: ``sweep``, ``setting``, each measure's mean with its 95% t
    interval (``m``, ``m_low``, ``m_high``) and ``n`` (:func:`evolving_ttt.studies.cell_summary`) (chapter 23).

    ``tables`` are the tables of :func:`study_tables` (read again if not given)."""
    import pandas as pd

    from evolving_ttt.tables import cell_summary

    rows = []
    for name, table in (study_tables() if tables is None else tables).items():
        summary = cell_summary(table, list(measures), by=["setting"])
        summary.insert(0, "sweep", name)
        rows.append(summary)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


@cache
def lowest_square_points() -> tuple[float, float]:
    """Expected points per game against the uniformly random player, as X and as O, of the player that takes the
    lowest empty square: what a program that never moves plays, since the engine then moves for it (chapter 23).
    About 0.802 as X and 0.459 as O, above the random player's own line (:func:`random_player_points`)."""
    x_wins, draw, _ = outcome_probabilities(policy_table(lowest_square_player, X), random_policy(O))
    _, draw_o, o_wins = outcome_probabilities(random_policy(X), policy_table(lowest_square_player, O))
    return float(x_wins + draw / 2), float(o_wins + draw_o / 2)


STATED_KEYS = frozenset({"population", "generations", "runs", "seeds_kept", "judge"})
"""The settings the paper states (a population of 128, 4 runs of 15 generations, 10 programs kept, the scripted
judge); the others of the study (how the bonuses count and decide, crossover at the root) read details it leaves
open (chapter 23)."""

JUDGE_GAIN = Measure("points a game against perfect play of the 20 fittest programs, with the scripted judge minus "
                     "without", -1.0, 1.0, digits=3)  # fmt: skip
SINGLE_ROOT = Measure("share of the last generation that is a single PLAY-AT at the root (mean of runs)", 0.0, 1.0,
                      digits=3)  # fmt: skip
ABOVE_LOWEST = Measure("share of runs whose champion takes more points from the random player than a program that "
                       "never moves, as X and as O", 0.0, 1.0, unit="%")  # fmt: skip


SETTING_WORDS = {
    "bonus_role=tie_break": "bonuses that only break ties",
    "bonus_role=added": "bonuses added to the outcome points",
    "crossover_root=True": "crossover that may pick the root",
    "playat_counted=any": "one PLAY-AT bonus for having any",
    "playat_bonus=0.0": "no PLAY-AT bonus",
    "playat_bonus=5.0": "a PLAY-AT bonus of 5",
    "seeds_kept=1": "1 program kept between runs instead of 10",
    "seeds_kept=40": "40 programs kept between runs instead of 10",
    "population=512": "a population of 512 instead of 128",
    "generations=40": "40 generations a run instead of 15",
    "generations=100": "100 generations a run instead of 15",
}
"""The study's cells in words, for the verdicts (chapter 23)."""


def _cells(tables: dict):
    """Every cell of the committed sweeps as ``(sweep, setting, settings, key, runs)``, in the order of
    :data:`STUDY_SWEEPS` and of the cells."""
    import json

    from evolving_ttt.tables import cell_keys, study_path

    found = []
    for name, table in tables.items():
        keys = cell_keys(study_path(f"mohammadi_{name}"))
        for cell, runs in table.groupby("cell", sort=True):
            key = keys[int(cell)]
            found.append((name, runs["setting"].iloc[0], json.loads(key), key, runs))
    return found


def claims() -> list[Claim]:
    """Mohammadi et al.'s headline claims for the one verdict rule (:func:`evolving_ttt.verdicts.verdict`), from the
    study's databases and their confirmations on held-out seeds (chapter 23); none before the ``judge`` sweep is
    committed.

    - **The judge improves playability**: points a game against perfect play of the 20 fittest programs of the last
      run, with the scripted judge minus without, *above* 0, for each reading of the bonus.
    - **Trees shrink to a single PLAY-AT at the root**: the mean share of the last generation that is one, *above*
      one half, in every cell with the scripted judge.
    - **The programs play the game**: the share of runs whose champion takes more points from the random player, as
      X and as O, than a program that never moves (:func:`lowest_square_points`), *above* one half.
    """
    from evolving_ttt.tables import confirmation_command, confirmations, study_path

    tables = study_tables()
    if "judge" not in tables:
        return []
    cells = _cells(tables)
    confirmed = confirmations("mohammadi")
    paper = next(settings for name, setting, settings, _, _ in cells
                 if name == "judge" and setting == ", ".join(f"{k}={v}" for k, v in PAPER_CELL.items()))  # fmt: skip
    x_line, o_line = lowest_square_points()

    def above_lowest(runs) -> Sample:
        return run_sample(runs, (runs["points_random_x"] > x_line) & (runs["points_random_o"] > o_line), "share")

    def mean_of(measure: str):
        return lambda runs: run_sample(runs, measure)

    judged = []
    for sweep in JUDGE_SWEEPS:
        for role in ("added", "tie_break"):
            pair = {}
            for name, _, settings, key, runs in cells:
                if name == sweep and settings["bonus_role"] == role and settings["judge"] in ("perfect", "none"):
                    pair[settings["judge"]] = (settings, key, runs)
            if len(pair) < 2:
                continue
            extra = {}
            if pair["perfect"][1] in confirmed and pair["none"][1] in confirmed:
                extra["confirmation"] = _gain(confirmed[pair["perfect"][1]], confirmed[pair["none"][1]])
            change = change_of(pair["perfect"][0], paper, STATED_KEYS)
            both = [int(pair[judge][2]["cell"].iloc[0]) for judge in ("perfect", "none")]
            command = confirmation_command(study_path(f"mohammadi_{sweep}"), both, f"confirm_mohammadi_{sweep}")
            words = ", ".join([SETTING_WORDS[f"bonus_role={role}"], *_changed_words(pair["perfect"][0], paper,
                                                                                    skip=("bonus_role",))])
            judged.append(Cell(words, change, _gain(pair["perfect"][2], pair["none"][2]), confirm_command=command,
                               **extra))  # fmt: skip

    def judged_cells(sample, confirm: str) -> tuple[Cell, ...]:
        found, seen = [], set()
        for name, _, settings, key, runs in cells:
            if settings["judge"] != "perfect" or key in seen:  # the scripted judge's cells, each setting once
                continue
            seen.add(key)
            extra = {"confirmation": sample(confirmed[key])} if key in confirmed else {}
            command = confirmation_command(study_path(f"mohammadi_{name}"), int(runs["cell"].iloc[0]), confirm)
            change = change_of(settings, paper, STATED_KEYS)
            words = "the paper's setting" if change == "paper" else ", ".join(_changed_words(settings, paper))
            found.append(Cell(words, change, sample(runs),
                              confirm_command=command, **extra))  # fmt: skip
        return tuple(found)

    return [
        Claim(paper="Mohammadi et al. (2013)", claim="the judge makes the programs play better",
              paper_figure="playability improved 'drastically' (no number given)", measure=JUDGE_GAIN,
              threshold=0.0, direction="above", cells=tuple(judged), chapter="23_mohammadi_robustness"),
        Claim(paper="Mohammadi et al. (2013)", claim="with the judge, trees shrink to a single PLAY-AT at the root",
              paper_figure="a single PLAY-AT, at the root (no number given)", measure=SINGLE_ROOT,
              threshold=SINGLE_ROOT_MAJORITY, direction="above",
              cells=judged_cells(mean_of("single_root_last"), "confirm_mohammadi_root"),
              chapter="23_mohammadi_robustness"),
        Claim(paper="Mohammadi et al. (2013)",
              claim="co-evolved programs play the game better than one that never moves",
              paper_figure="programs that play the game (no yardstick given)", measure=ABOVE_LOWEST, threshold=0.5,
              direction="above", cells=judged_cells(above_lowest, "confirm_mohammadi_play"),
              chapter="23_mohammadi_robustness"),
    ]  # fmt: skip


def _changed_words(settings: dict, paper: dict, skip: Sequence[str] = ()) -> list[str]:
    """The settings a cell changes from the paper's, each in words (:data:`SETTING_WORDS`), in the order of its keys."""
    changed = [key for key in changed_keys(settings, paper) if key not in skip]
    return [SETTING_WORDS.get(f"{key}={settings[key]}", f"{key}={settings[key]}") for key in changed]


def _gain(with_judge, without) -> Sample:
    return run_sample(with_judge, "fittest_points_perfect", "difference", without["fittest_points_perfect"])
