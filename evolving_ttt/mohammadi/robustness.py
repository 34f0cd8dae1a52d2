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
    MohammadiConfig,
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
from evolving_ttt.outcomes import outcome_probabilities, random_policy
from evolving_ttt.records import STUDIES

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


def bonus_test(program: gp.PrimitiveTree, population: Sequence[str], config: MohammadiConfig) -> BonusTest:
    """Drop ``program`` into ``population`` (program texts) and play a double game against every member.

    The program holds the chain (it plays X first); the games and points are those of
    :func:`~evolving_ttt.mohammadi.coevolution.play_double_games` under ``config`` (its bonuses, their size and
    ``bonus_role``) (chapter 23).
    """
    check_instance(config, MohammadiConfig, "config", "a MohammadiConfig")
    check_program(program)
    members = programs_from_texts(population)
    if not members:
        raise ValueError("population must hold at least one program text")
    programs = [program, *members]
    tables = np.stack([program_move_table(p, config.taken) for p in programs])
    counts = playat_bonus_counts(programs, config)
    others = np.arange(1, len(programs))
    games = play_double_games(tables, counts, np.zeros(len(others), dtype=int), others, config)
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
}
"""The study's sweeps, by the name of their database ``book/data/studies/mohammadi_<name>.sqlite``, with their
``--set`` arguments; every cell runs seeds 1 to 10 and varies one reading or setting around the paper's (chapter 23).
The paper's own setting (scripted judge, bonuses added) is a cell of the ``judge`` sweep."""

STUDIES_FOLDER = STUDIES
"""Where the study's databases are committed (``book/data/studies``)."""

PAPER_CELL = {"judge": "perfect", "bonus_role": "added"}
"""The cell of the ``judge`` sweep that holds the paper's setting as the book reads it (chapter 23)."""

SINGLE_ROOT_MAJORITY = 0.5
"""Claim 3 counts as shown when more than this share of a run's last generation is a single PLAY-AT at the root."""


def sweep_command(name: str) -> str:
    """The command line that runs (or resumes, or extends) the study's sweep ``name`` (chapter 23)."""
    if name not in STUDY_SWEEPS:
        raise ValueError(f"no sweep {name!r} in the study; the sweeps are {', '.join(STUDY_SWEEPS)}")
    settings = " ".join(f"--set {assignment}" for assignment in STUDY_SWEEPS[name])
    return (f".venv/bin/python -m ttt_helpers sweep run mohammadi {settings} --seeds 10 "
            f"--db book/data/studies/mohammadi_{name}.sqlite --workers 2")  # fmt: skip


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


def _interval(row, measure: str, digits: int = 3, share: bool = False) -> str:
    """``mean [low, high]``; a share's t interval is clipped to [0, 1]."""
    low, high = row[measure + "_low"], row[measure + "_high"]
    if share:
        low, high = max(low, 0.0), min(high, 1.0)
    return f"{row[measure]:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def glance_rows() -> list[dict]:
    """The study's rows for the introduction's table at a glance (:func:`evolving_ttt.mohammadi.system.glance`).

    Three headline claims, each with what the paper says, what the book measures with the paper's setting (mean
    and 95% interval over 10 seeds), the best the study found, the setting that gave it, and the verdict, all
    formatted from the committed databases (chapter 23). Empty if the ``judge`` sweep is not committed.
    """
    from evolving_ttt.statistics import share_interval

    measures = ["fittest_points_perfect", "fittest_points_random", "mean_fitness_last", "single_root_last",
                "mean_playats_last", "beats_random", "never_loses", "points_random"]  # fmt: skip
    summary = study_summary(measures)
    if summary.empty or "judge" not in set(summary["sweep"]):
        return []
    paper_label = ", ".join(f"{k}={v}" for k, v in PAPER_CELL.items())
    cells = summary.set_index("setting")
    paper = cells.loc[paper_label]

    # Claim 1: the judge improves playability. Each bonus reading: the scripted judge against no judge.
    judged = {}
    for role in ("added", "tie_break"):
        with_judge = cells.loc[f"judge=perfect, bonus_role={role}"]
        without = cells.loc[f"judge=none, bonus_role={role}"]
        above = with_judge["fittest_points_perfect_low"] > without["fittest_points_perfect_high"]
        judged[role] = (with_judge, without, above)
    better = [role for role, (_, _, above) in judged.items() if above]
    gain = {
        role: judged[role][0]["fittest_points_perfect"] - judged[role][1]["fittest_points_perfect"] for role in judged
    }
    best_role = max(gain, key=gain.get)
    with_judge, without, _ = judged[best_role]
    play_verdict = ("holds" if "added" in better else f"holds only under bonus_role={better[0]}" if better
                    else "does not hold under any setting tried")  # fmt: skip
    first = {
        "paper": "Mohammadi et al. (2013)",
        "claim": "the judge makes the programs play better, fitness about the same",
        "paper_figure": "playability improved 'drastically' (no number given)",
        "book": (f"fittest 20 against perfect play: {_interval(judged['added'][0], 'fittest_points_perfect')} points a "
                 f"game with the scripted judge, {_interval(judged['added'][1], 'fittest_points_perfect')} without"),
        "best": (f"{_interval(with_judge, 'fittest_points_perfect')} with the judge, "
                 f"{_interval(without, 'fittest_points_perfect')} without"),
        "setting": f"bonus_role={best_role}",
        "verdict": play_verdict,
    }  # fmt: skip

    # Claim 2: with the judge, trees shrink to a single PLAY-AT at the root.
    top = summary.loc[summary["single_root_last"].idxmax()]
    root_verdict = ("holds" if paper["single_root_last"] > SINGLE_ROOT_MAJORITY else
                    f"holds only under {top['setting']}" if top["single_root_last"] > SINGLE_ROOT_MAJORITY
                    else "does not hold under any setting tried")  # fmt: skip
    second = {
        "paper": "Mohammadi et al. (2013)",
        "claim": "with the judge, trees shrink to a single PLAY-AT at the root",
        "paper_figure": "a single PLAY-AT, at the root (no number given)",
        "book": (f"share of the last generation that is one PLAY-AT at the root: "
                 f"{_interval(paper, 'single_root_last', 2, True)}; {paper['mean_playats_last']:.0f} PLAY-AT nodes "
                 "a program"),
        "best": f"{_interval(top, 'single_root_last', 2, True)} of the last generation",
        "setting": f"{top['setting']} ({top['sweep']} sweep)",
        "verdict": root_verdict,
    }  # fmt: skip

    # Claim 3 (the question of chapter 23): programs that beat the random player and never lose.
    tables = study_tables()
    counts = []
    for name, table in tables.items():
        for setting, group in table.groupby("setting", sort=False):
            both = int(((group["beats_random"] == 1) & (group["never_loses"] == 1)).sum())
            beat = int(group["beats_random"].sum())
            counts.append((both, beat / len(group), group["points_random"].mean(), beat, len(group), setting, name))
    both, _, _, beat, n, setting, name = max(counts)
    paper_table = tables["judge"][tables["judge"]["setting"] == paper_label]
    paper_beat, paper_n = int(paper_table["beats_random"].sum()), len(paper_table)
    paper_never = int(paper_table["never_loses"].sum())
    share, low, high = share_interval(paper_beat, paper_n)
    best_share, best_low, best_high = share_interval(beat, n)
    good_verdict = ("holds" if paper_never and paper_beat else f"holds only under {setting}" if both
                    else "does not hold under any setting tried")  # fmt: skip
    third = {
        "paper": "Mohammadi et al. (2013)",
        "claim": "co-evolved programs play well: beat the random player, draw against perfect play",
        "paper_figure": "programs that play the game (no yardstick given)",
        "book": (f"champions better than a random player on both sides: {paper_beat} of {paper_n} seeds "
                 f"({share:.0%} [{low:.0%}, {high:.0%}]); never losing: {paper_never} of {paper_n}"),
        "best": (f"better than random: {beat} of {n} ({best_share:.0%} [{best_low:.0%}, {best_high:.0%}]); "
                 f"also never losing: {both} of {n}"),
        "setting": f"{setting} ({name} sweep)",
        "verdict": good_verdict,
    }  # fmt: skip
    return [first, second, third]
