"""Chapter 13's five full experiments, measured once and re-checked in part by every build (chapter 13).

Chapter 13 runs Fogel's experiment (20 trials x 800 generations, seed 1) under the paper's settings and under four
other readings of them (:func:`fogel_readings`), and measures every run exactly against the paper's rule base: the
plotted network of every generation, and the final parents against the paper's and the run's own rule base. That
is about two minutes of two cores, so it runs outside the build:

    python -c "import ttt_helpers as th; th.write_fogel_readings()"

writes :data:`READINGS_FILE` (:data:`READINGS_FORMAT`), which :func:`load_fogel_readings` reads with every field
checked, and :func:`recheck_fogel_readings` runs one trial of every reading again and compares all it measures
with the file, to the bit.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.drawing import tree_counts
from evolving_ttt.fogel.evolution import PAPER_EXPERIMENT, EvolutionRun, FogelSettings, evolve, run_experiment
from evolving_ttt.fogel.exact import exact_scores
from evolving_ttt.fogel.mutation import MutationSettings
from evolving_ttt.fogel.network import network_player
from evolving_ttt.fogel.selection import SelectionSettings
from evolving_ttt.fogel.trees import game_tree
from evolving_ttt.numerics import same_bits_count
from evolving_ttt.reading import Fields, read_npz, settings_field
from evolving_ttt.records import DATA, check_provenance, save_npz
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules
from evolving_ttt.seeds import check_seed

READINGS_FILE = DATA / "fogel_readings.npz"
"""The committed file of chapter 13's measurements."""

READINGS_FORMAT = "fogel-saved-readings"
"""The ``format`` of the file, an ``.npz`` archive of: ``format``, ``version`` (2), ``seed``, ``settings_K`` (reading
K's settings as JSON text, K = 0 to 4 in the order of :func:`fogel_readings`), and, stacked over the readings,
``best_score`` (readings, trials, generations): the best sampled score of every generation; ``plotted_paper``
(readings, trials, generations): the exact expected score, against the paper's rule base, of every generation's
network with the best sampled score; ``final_mean_paper``, ``final_var_paper``, ``final_mean_own`` and
``final_var_own`` (readings, trials, parents): the exact mean and variance of the protocol score of the final
parents against the paper's and the run's own rule base; ``never_loses`` (readings, trials): whether the final best
parent never loses against its own rule base. Other members are provenance. Version 1 (read too) named the settings
``config_K``."""

READINGS_VERSION = 2
"""The ``version`` :func:`write_fogel_readings` writes; :func:`load_fogel_readings` reads 1 and 2."""

MEASURES = ("best_score", "plotted_paper", "final_mean_paper", "final_var_paper", "final_mean_own", "final_var_own",
            "never_loses")  # fmt: skip
"""The measured arrays of the file, each stacked over the readings."""


def fogel_readings(baseline: FogelSettings = PAPER_EXPERIMENT) -> dict[str, FogelSettings]:
    """The paper's experiment and the four other readings of chapter 13, each changing one setting, by name."""
    return {
        "paper (baseline)": baseline,
        "rule (d) on X's lines": dataclasses.replace(baseline, rules=OpponentRules(rule_d_lines="opponent")),
        "first reply by the rules": dataclasses.replace(baseline, rules=OpponentRules(first_reply="rules")),
        "strictly-lower selection": dataclasses.replace(baseline, selection=SelectionSettings(ties_win=False)),
        "spread as variance": dataclasses.replace(baseline, mutation=MutationSettings(spread_is="variance")),
    }


def reading_measures(run: EvolutionRun) -> dict[str, np.ndarray]:
    """What the file holds of one run (recorded with its best networks), each array with the run's trials first."""
    if run.best_networks is None:
        raise ValueError("run must keep every generation's best network (record_best=True, as run_experiment does)")
    paper_mean, paper_var = exact_scores(run.final_parents)
    own_mean, own_var = (paper_mean, paper_var) if run.settings.rules == PAPER_RULES else exact_scores(
        run.final_parents, run.settings.rules)  # fmt: skip
    never = [tree_counts(game_tree(network_player(run.final_parents.network((t, 0))), run.settings.rules))["losses"]
             == 0 for t in range(len(run.trial_numbers))]  # fmt: skip
    return {
        "best_score": run.best_score, "plotted_paper": exact_scores(run.best_networks)[0],
        "final_mean_paper": paper_mean, "final_var_paper": paper_var, "final_mean_own": own_mean,
        "final_var_own": own_var, "never_loses": np.array(never, dtype=bool),
    }  # fmt: skip


def write_fogel_readings(path: str | Path = READINGS_FILE, seed: int = 1,
                         readings: dict[str, FogelSettings] | None = None, workers: int | None = None,
                         progress: bool = True, **provenance: Any) -> Path:  # fmt: skip
    """Run every reading (default :func:`fogel_readings`) with ``seed``, measure it and write ``path``
    (:data:`READINGS_FORMAT`); ``provenance`` adds free members (a command, a date)."""
    check_provenance(provenance, ("format", "version", "seed", *MEASURES), "a saved-readings file")
    seed = check_seed(seed)
    readings = fogel_readings() if readings is None else readings
    every = list(readings.values())
    if len({(c.trials, c.generations, c.parents) for c in every}) != 1:
        raise ValueError("every reading must have the same trials, generations and parents, to be stacked")
    measured = [reading_measures(run_experiment(settings, seed, progress and name, workers))
                for name, settings in readings.items()]  # fmt: skip
    arrays: dict[str, Any] = {"format": np.array(READINGS_FORMAT), "version": np.array(READINGS_VERSION),
                              "seed": np.array(seed)}  # fmt: skip
    arrays |= {f"settings_{k}": np.array(json.dumps(settings.as_dict())) for k, settings in enumerate(every)}
    arrays |= {name: np.stack([m[name] for m in measured]) for name in MEASURES}
    arrays |= {name: np.array(str(value)) for name, value in provenance.items()}
    save_npz(path, arrays, "saved readings")
    load_fogel_readings(path, readings)
    return Path(path)


@dataclass(frozen=True)
class SavedReadings:
    """What :func:`load_fogel_readings` reads: the seed, each reading's settings by name, and each measure by name,
    a dict from reading name to its array (trials first)."""

    seed: int
    settings: dict[str, FogelSettings]
    measures: dict[str, dict[str, np.ndarray]]

    @property
    def configs(self) -> dict[str, FogelSettings]:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    def __getitem__(self, measure: str) -> dict[str, np.ndarray]:
        return self.measures[measure]


def load_fogel_readings(path: str | Path = READINGS_FILE,
                        readings: dict[str, FogelSettings] | None = None) -> SavedReadings:  # fmt: skip
    """The file at ``path`` (:data:`READINGS_FORMAT`), every member checked; its readings must be ``readings``
    (default :func:`fogel_readings`), in that order.

    Raises
    ------
    ValueError
        Naming the file and the member that is missing or wrong, and what it should be.
    """
    readings = fogel_readings() if readings is None else readings
    fields = Fields(path, read_npz(path, "saved readings"), "saved Fogel readings")
    if fields.text("format") != READINGS_FORMAT:
        raise fields.fail("format", f"must be {READINGS_FORMAT!r}")
    version = fields.integer("version", 1, READINGS_VERSION)
    seed = fields.integer("seed", 0)
    for k, settings in enumerate(readings.values()):
        name = settings_field(fields, version, 2, suffix=f"_{k}")
        if fields.settings(name, FogelSettings) != settings:
            raise fields.fail(name, f"must be the settings of the reading {list(readings)[k]!r}")
    if fields.has(name := settings_field(fields, version, 2, suffix=f"_{len(readings)}")):
        raise fields.fail(name, f"is one reading too many; the file holds {len(readings)}")
    first = next(iter(readings.values()))
    shape_tg = (len(readings), first.trials, first.generations)
    shape_tp = (len(readings), first.trials, first.parents)
    games = 32  # the protocol's score over 32 games: from -320 (every game lost, -10 each) to 32 (every game won)
    stacked = {
        "best_score": fields.array("best_score", "f", shape_tg, -10 * games, games),
        "plotted_paper": fields.array("plotted_paper", "f", shape_tg, -10 * games, games),
        "final_mean_paper": fields.array("final_mean_paper", "f", shape_tp, -10 * games, games),
        "final_var_paper": fields.array("final_var_paper", "f", shape_tp, 0),
        "final_mean_own": fields.array("final_mean_own", "f", shape_tp, -10 * games, games),
        "final_var_own": fields.array("final_var_own", "f", shape_tp, 0),
        "never_loses": fields.array("never_loses", "b", shape_tg[:2]),
    }
    measures = {name: dict(zip(readings, array, strict=True)) for name, array in stacked.items()}
    return SavedReadings(seed, dict(readings), measures)


@dataclass(frozen=True)
class Recheck:
    """What :func:`recheck_fogel_readings` computed again: numbers compared, how many were the same bits, and the
    time it took."""

    values: int
    same: int
    seconds: float

    @property
    def all_same(self) -> bool:
        return self.same == self.values

    def text(self) -> str:
        return f"{self.same:,} of {self.values:,} saved numbers computed again, the same bits"


def recheck_fogel_readings(saved: SavedReadings, trials: tuple[int, ...] = (0,)) -> Recheck:
    """Run ``trials`` of every reading again, alone, measure them as :func:`reading_measures` does, and compare every
    number with ``saved``, bit for bit."""
    start = time.perf_counter()
    values = same = 0
    for name, settings in saved.settings.items():
        run = evolve(settings, seed=saved.seed, trials=list(trials), record_best=True)
        for measure, again in reading_measures(run).items():
            kept = saved[measure][name][list(trials)]
            values += again.size
            same += same_bits_count(again, kept)
    return Recheck(values, same, time.perf_counter() - start)

