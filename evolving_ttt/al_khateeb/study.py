"""Al-Khateeb (2012): reading the robustness study's sweeps (chapter 21).

The study's sweeps (one database each in ``book/data/studies/``, named ``al_khateeb_<question>.sqlite``) vary one
setting or reading at a time around the paper's, ten seeds per cell, one run per seed. This module turns them into
the numbers chapter 21 discusses:

* :func:`task_numbers` adds to every task the paper's own measure, the expected draws in 50 games against the
  perfect player as X and as O (no one wins against it, so ``draws = 100 x points``), and the champion's
  progress along the run against fixed opponents (the score of the network ranked first in the last generation
  minus that of generation 1, :func:`evolving_ttt.al_khateeb.system.task_measures`);
* :func:`study_tasks` reads one database as a table; :func:`study_cells` gives every cell of every sweep one
  row: its setting in words, means with 95% intervals, and the share of runs whose player draws at least 43 of
  50 games against perfect play (Wilson interval);
* :func:`claims` the paper's claims as the one verdict rule reads them (:mod:`evolving_ttt.verdicts`);
  :func:`~evolving_ttt.tables.study_command` prints the command that makes a database.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evolving_ttt.records import STUDIES
from evolving_ttt.statistics import mean_interval, share_interval
from evolving_ttt.store import SweepStore
from evolving_ttt.tables import cell_keys, confirmation_command, confirmations
from evolving_ttt.verdicts import Bound, Cell, Claim, Measure, change_of, run_sample

STUDY_SWEEPS = (
    "al_khateeb_readings", "al_khateeb_depth", "al_khateeb_depth_2000", "al_khateeb_hall_of_fame",
    "al_khateeb_generations", "al_khateeb_parents", "al_khateeb_step_sizes", "al_khateeb_population",
)  # fmt: skip
"""The study's databases in ``book/data/studies/``, in the order of chapter 21."""

PAPER_DRAWS = 43
"""The paper's Table 2: TTT drew 43 of 50 games against the online perfect player (chapter 15)."""

CHAMPION_POINTS = 5
"""The champion checkpoints of every task (:data:`evolving_ttt.al_khateeb.system.CHAMPION_CHECKPOINTS`)."""

SHOWN_KEYS = {"player.view": "view", "player.winning_moves": "winning moves", "player.depth": "depth",
              "hall_of_fame": "hall of fame", "generations": "generations", "parents": "parents",
              "step_sizes": "step sizes", "population": "population"}  # fmt: skip
"""How the settings are named in the chapter's tables."""


def study_file(name: str, folder: Path = STUDIES) -> Path:
    """The database of the study sweep ``name`` (one of :data:`STUDY_SWEEPS`), which must exist."""
    if name not in STUDY_SWEEPS:
        raise ValueError(f"{name!r} is not a sweep of Al-Khateeb's study; they are {', '.join(STUDY_SWEEPS)}")
    path = Path(folder) / f"{name}.sqlite"
    if not path.is_file():
        raise ValueError(f"{path} is missing; make it with: {name} in chapter 21")
    return path


def study_definition(name: str, folder: Path = STUDIES) -> dict:
    """The sweep definition stored in the study database ``name``."""
    with SweepStore(study_file(name, folder)) as store:
        return store.definition


def setting_text(definition: dict, settings: dict) -> str:
    """A cell's setting in words: every key of the grid but ``runs``, with the cell's value, paper values left out
    when the key was not swept."""
    parts = []
    for key, _ in definition["grid"]:
        if key == "runs":
            continue
        value = settings
        for part in key.split("."):
            value = value.get(part, {}) if isinstance(value, dict) else {}
        parts.append(f"{SHOWN_KEYS.get(key, key)} {value}")
    return ", ".join(parts)


def task_numbers(table):
    """A table of tasks (:func:`study_tasks`) with the study's derived measures added.

    ``draws_x`` and ``draws_o``: expected draws in 50 games against the perfect player as X and as O;
    ``draws_both``: their mean; ``progress_rule`` and ``progress_perfect``: the champion's score (P(win) - P(loss),
    mean of X and O) in the last generation minus in generation 1, against Fogel's rule base and the perfect
    player; ``first_draws_x`` and ``first_draws_o``: the expected draws per 50 of generation 1's champion, and
    ``first_draws_both`` their mean.
    """
    table = table.copy()
    table["draws_x"] = 100 * table["points_perfect_x"]
    table["draws_o"] = 100 * table["points_perfect_o"]
    table["draws_both"] = (table["draws_x"] + table["draws_o"]) / 2
    last = CHAMPION_POINTS - 1
    for opponent in ("rule", "perfect"):
        gain = [table[f"champion_{opponent}_{side}_{last}"] - table[f"champion_{opponent}_{side}_0"] for side in "xo"]
        table[f"progress_{opponent}"] = (gain[0] + gain[1]) / 2
    for side in "xo":  # against perfect play: draws = 1 - losses
        table[f"first_draws_{side}"] = 50 * (1 + table[f"champion_perfect_{side}_0"])
    table["first_draws_both"] = (table["first_draws_x"] + table["first_draws_o"]) / 2
    return table


SUMMARISED = ("draws_x", "draws_o", "draws_both", "progress_rule", "progress_perfect", "points_random_x",
              "points_random_o", "fogel_score", "first_draws_x", "first_draws_o")  # fmt: skip
"""The measures :func:`study_cells` summarises."""


def study_tasks(name: str, folder: Path = STUDIES):
    """The tasks of the study sweep ``name`` as a pandas table, one row per task: ``cell``, ``seed``, ``setting``
    (the cell's setting in words), every recorded measure, and the measures of :func:`task_numbers`."""
    import pandas as pd

    with SweepStore(study_file(name, folder)) as store:
        definition, rows = store.definition, store.rows()
    table = pd.DataFrame([{"cell": row["cell"], "seed": row["seed"], "task": row["task"],
                           "setting": setting_text(definition, row["settings"]), **row["measures"],
                           "wall_time": row["wall_time"]} for row in rows])  # fmt: skip
    return task_numbers(table)


def study_cells(names=STUDY_SWEEPS, folder: Path = STUDIES):
    """Every cell of the study's sweeps as one row (chapter 21).

    Columns: ``study``, ``cell``, ``setting`` (words), ``n`` (runs), for each measure of :data:`SUMMARISED` the
    mean with its 95% bootstrap interval (``m``, ``m_low``, ``m_high``), and ``reach``, ``reach_low``, ``reach_high``:
    the share of runs whose final player draws at least :data:`PAPER_DRAWS` of 50 games against perfect play as
    X, with its Wilson interval.
    """
    import pandas as pd

    rows = []
    for name in names:
        table = study_tasks(name, folder)
        for cell, runs in table.groupby("cell", sort=True):
            row = {"study": name, "cell": int(cell), "setting": runs["setting"].iloc[0], "n": len(runs)}
            for measure in SUMMARISED:
                row[measure], row[f"{measure}_low"], row[f"{measure}_high"] = mean_interval(runs[measure].to_numpy())
            reach = share_interval(int((runs["draws_x"] >= PAPER_DRAWS - 1e-9).sum()), len(runs))
            row["reach"], row["reach_low"], row["reach_high"] = reach
            rows.append(row)
    return pd.DataFrame(rows)


STATED_KEYS = frozenset({"generations", "parents", "population"})
"""The settings the paper states (2,000 generations, a population of 20, 10 parents); the others of the study are
readings of details it leaves open (chapter 21)."""

DRAWS = Measure("expected draws in 50 games against perfect play, the mean of X and O", 0.0, 50.0, digits=1)
"""The measure of the paper's Table 2 claim (43 draws of 50)."""

PROGRESS = Measure("the champion's gain against the rule base, last generation minus first", -2.0, 2.0, digits=3)
"""The measure of the claim that co-evolution makes progress (P(win) - P(loss), mean of X and O)."""


def _confirmation_name(claim: str) -> str:
    return f"confirm_al_khateeb_{claim}"


def claims(folder: Path = STUDIES) -> list[Claim]:
    """Al-Khateeb's headline claims for the one verdict rule (:func:`evolving_ttt.verdicts.verdict`), from the
    study's databases in ``folder`` and their confirmations on held-out seeds; none when the study is missing.

    - **Draws against perfect play** (Table 2, 43 of 50): the expected draws in 50 games against the perfect
      player, the mean of X and O, *at least* 43. Its control is the same runs' champion of generation 1, a
      network that has not evolved: if it draws as often, the search draws, not evolution.
    - **Progress**: the champion's gain against Fogel's rule base, last generation minus first, *above* 0.
    """
    if not all((Path(folder) / f"{name}.sqlite").is_file() for name in STUDY_SWEEPS):
        return []
    confirmed = confirmations("al-khateeb", folder)
    paper_settings = None
    draws, progress = [], []
    for name in STUDY_SWEEPS:
        table = study_tasks(name, folder)
        keys = cell_keys(study_file(name, folder))
        for cell, runs in table.groupby("cell", sort=True):
            key = keys[int(cell)]
            settings = json.loads(key)
            if paper_settings is None:  # the first cell of the readings sweep is the paper's setting
                paper_settings = settings
            change = change_of(settings, paper_settings, STATED_KEYS)
            extra = {}
            if key in confirmed:
                held_out = task_numbers(confirmed[key])
                extra = {"confirmation": run_sample(held_out, "draws_both"),
                         "confirmation_control": run_sample(held_out, "first_draws_both"),
                         "note": (f"as X {held_out['draws_x'].mean():.1f} draws and as O "
                                  f"{held_out['draws_o'].mean():.1f}; generation 1's champions of the same runs "
                                  f"{held_out['first_draws_x'].mean():.1f} as X and "
                                  f"{held_out['first_draws_o'].mean():.1f} as O")}  # fmt: skip
                progress_extra = {"confirmation": run_sample(held_out, "progress_rule")}
            else:
                progress_extra = {}
            setting = runs["setting"].iloc[0]
            draws.append(Cell(setting, change, run_sample(runs, "draws_both"),
                              control=run_sample(runs, "first_draws_both"),
                              confirm_command=confirmation_command(study_file(name, folder), int(cell),
                                                                   _confirmation_name("draws")), **extra))  # fmt: skip
            progress.append(Cell(setting, change, run_sample(runs, "progress_rule"),
                                 confirm_command=confirmation_command(study_file(name, folder), int(cell),
                                                                      _confirmation_name("progress")),
                                 **progress_extra))  # fmt: skip
    return [
        table3_claim(),
        Claim(paper="Al-Khateeb (2012)", claim="the evolved player draws most games against perfect play",
              paper_figure=f"{PAPER_DRAWS} of 50 draws against perfect play (Table 2)", measure=DRAWS,
              threshold=float(PAPER_DRAWS), direction="at least", cells=tuple(draws),
              control="the same runs' champions of generation 1, before evolution,",
              chapter="21_al_khateeb_robustness"),
        Claim(paper="Al-Khateeb (2012)", claim="co-evolution makes progress towards good play",
              paper_figure="a 'reasonably good' player after 2,000 generations (no learning curve)",
              measure=PROGRESS, threshold=0.0, direction="above", cells=tuple(progress),
              chapter="21_al_khateeb_robustness"),
    ]  # fmt: skip


WINS = Measure("expected wins in 50 games against a perfect player that moves at random one time in ten", 0.0, 50.0,
               digits=1)  # fmt: skip
"""The measure of the paper's Table 3 (28 wins of 50)."""


def table3_claim() -> Claim:
    """The paper's Table 3 as a claim the one verdict rule judges by its bound alone (chapter 15): 28 wins in 50
    against the nearly perfect player need more than any player can expect, even under the bound most favourable to
    the player (:func:`evolving_ttt.al_khateeb.bounds.table3_bounds`)."""
    from evolving_ttt.al_khateeb.bounds import table3_bounds

    found = table3_bounds()
    best, favourable = found.best_expected_wins, found.favourable_expected_wins
    reason = (f"the best reply to that opponent expects {best['X']:.2f} wins as X and {best['O']:.2f} as O; even "
              f"if its ties and random moves all fell the player's way, {favourable['X']:.2f} as X; 28 or more wins "
              f"at the best reply's rate as X have probability {found.tail_probability:.1e}")  # fmt: skip
    return Claim(paper="Al-Khateeb (2012)", claim="the evolved player wins most games against a nearly perfect player",
                 paper_figure=f"{found.paper_wins} wins, {found.paper_draws} draws, {found.paper_losses} losses of "
                              f"{found.games} (Table 3)",
                 measure=WINS, threshold=float(found.paper_wins), direction="at least",
                 bound=Bound(max(favourable.values()), reason), chapter="15_al_khateeb_results")  # fmt: skip


def champion_curves(name: str, cell: int) -> np.ndarray:
    """The champion's score against the rule base and the perfect player along the runs of one cell, shape
    ``(2 opponents (rule, perfect), 2 sides (X, O), runs, checkpoints)``."""
    table = study_tasks(name)
    runs = table[table["cell"] == cell]
    return np.array([[[runs[f"champion_{opponent}_{side}_{k}"].to_numpy() for k in range(CHAMPION_POINTS)]
                      for side in "xo"] for opponent in ("rule", "perfect")]).transpose(0, 1, 3, 2)  # fmt: skip
