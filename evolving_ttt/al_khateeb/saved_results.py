"""Chapter 15's long measurements, saved once and re-checked in part by every build (chapter 15).

Chapter 15 measures, exactly, the best network of every 20th generation of the paper's experiment (20 runs x
2,000 generations, seed 1) against two yardsticks, and runs the experiment under the three other readings of the
paper for 1,000 generations each. Together that is over a minute of two cores, so it runs outside the build:

    python -c "import ttt_helpers as th; th.write_al_khateeb_results()"

writes :data:`RESULTS_FILE` (:data:`RESULTS_FORMAT`), which :func:`load_al_khateeb_results` reads with every field
checked. The chapter computes the paper's run itself (chapter 14 needs it too) and :func:`recheck_al_khateeb_results`
computes a sample of the saved numbers again from it, and re-runs one run of every other reading, to the bit.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.al_khateeb.engine import coevolve, run_coevolution
from evolving_ttt.al_khateeb.evaluator import (
    PAPER_AL_KHATEEB,
    VIEWS,
    WINNING_MOVES,
    AlKhateebSettings,
    OnePlySettings,
)
from evolving_ttt.al_khateeb.results import progress_curve
from evolving_ttt.fogel_score import rule_base_policy
from evolving_ttt.game import O, X
from evolving_ttt.numerics import same_bits_count
from evolving_ttt.outcomes import perfect_policy
from evolving_ttt.reading import Fields, read_json, settings_field
from evolving_ttt.records import DATA, check_provenance, json_text, write_checked
from evolving_ttt.seeds import check_seed

RESULTS_FILE = DATA / "al_khateeb_results.json"
"""The committed file of chapter 15's long measurements."""

RESULTS_FORMAT = "al-khateeb-saved-results"
"""The ``format`` of the file: ``{"format", "version": 2, "settings": the paper run's settings, "seed",
"checkpoints": [1, 20, 40, ...], "curve_perfect" and "curve_rule_base": (runs, checkpoints, 2, 3) exact (win,
draw, loss) probabilities of each run's best network of each checkpoint as X and as O, "reading_generations",
and "players_VIEW_WINNING-MOVES" (runs, 72) for each reading other than the run's: the final players of a run of
that reading, ...provenance}``. Version 1 (read too) held the settings as ``"config"``."""

RESULTS_VERSION = 2
"""The ``version`` :func:`write_al_khateeb_results` writes; :func:`load_al_khateeb_results` reads 1 and 2."""

PROGRESS_EVERY = 20
"""The progress curve takes the best network of every 20th generation (and of the first)."""

READING_GENERATIONS = 1000
"""The length of the runs of the other readings."""

YARDSTICK_FIELDS = {"the perfect player": "curve_perfect", "Fogel's rule base": "curve_rule_base"}
"""The progress curve's yardsticks, by name, with the field that holds each curve."""

_OWN_FIELDS = ("format", "version", "settings", "config", "seed", "checkpoints", "reading_generations",
               *YARDSTICK_FIELDS.values())  # fmt: skip


def progress_checkpoints(generations: int) -> np.ndarray:
    """The generations the progress curve measures: the first and every :data:`PROGRESS_EVERY` th."""
    return np.r_[1, np.arange(PROGRESS_EVERY, generations + 1, PROGRESS_EVERY)].astype(np.int64)


def progress_yardsticks() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each yardstick's policy tables (as X, as O): the perfect player and Fogel's rule base (with its 10% random
    moves), by the names of :data:`YARDSTICK_FIELDS`."""
    return {
        "the perfect player": (perfect_policy(X), perfect_policy(O)),
        "Fogel's rule base": (rule_base_policy(X), rule_base_policy(O)),
    }


def other_readings(reading: OnePlySettings) -> list[OnePlySettings]:
    """The readings of the player other than ``reading``, in the order of ``VIEWS`` x ``WINNING_MOVES``."""
    every = [OnePlySettings(view, winning_moves) for view in VIEWS for winning_moves in WINNING_MOVES]
    return [other for other in every if other != reading]


def reading_field(reading: OnePlySettings) -> str:
    """The field of the final players of a reading: ``players_{view}_{winning_moves}``."""
    return f"players_{reading.view}_{reading.winning_moves}"


def reading_config(settings: AlKhateebSettings, reading: OnePlySettings, generations: int) -> AlKhateebSettings:
    """The experiment ``settings`` under the reading ``reading``, ``generations`` long."""
    return dataclasses.replace(settings, generations=generations, player=reading)


@dataclass(frozen=True)
class SavedResults:
    """What :func:`load_al_khateeb_results` reads: the paper run's settings and seed, the checkpoints, each
    yardstick's curve by name, the readings' length and each other reading's final players."""

    settings: AlKhateebSettings
    seed: int
    checkpoints: np.ndarray
    curves: dict[str, np.ndarray]
    reading_generations: int
    readings: dict[OnePlySettings, np.ndarray]

    @property
    def config(self) -> AlKhateebSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings


def write_al_khateeb_results(path: str | Path = RESULTS_FILE, settings: AlKhateebSettings = PAPER_AL_KHATEEB,
                             seed: int = 1, reading_generations: int = READING_GENERATIONS,
                             workers: int | None = None, progress: bool = True, **provenance: Any) -> Path:  # fmt: skip
    """Run and measure everything :data:`RESULTS_FORMAT` holds and write it to ``path`` (about two minutes on
    two cores for the paper's settings). ``provenance`` adds free fields (a command, a date)."""
    check_provenance(provenance, _OWN_FIELDS, "a saved-results file")
    seed = check_seed(seed)
    if not 1 <= reading_generations <= settings.generations:
        raise ValueError(f"reading_generations must be from 1 to {settings.generations}; got {reading_generations}")
    run = run_coevolution(settings, seed=seed, progress=progress, workers=workers)
    checkpoints = progress_checkpoints(settings.generations)
    document: dict[str, Any] = {
        "format": RESULTS_FORMAT, "version": RESULTS_VERSION, "settings": settings.as_dict(), "seed": seed,
        "checkpoints": checkpoints.tolist(), "reading_generations": reading_generations,
    }  # fmt: skip
    for name, tables in progress_yardsticks().items():
        document[YARDSTICK_FIELDS[name]] = progress_curve(run, *tables, generations=checkpoints).tolist()
    for reading in other_readings(settings.player):
        other = reading_config(settings, reading, reading_generations)
        label = f"{reading.view}, {reading.winning_moves}" if progress else False
        document[reading_field(reading)] = run_coevolution(other, seed, label, workers).players().tolist()
    document.update(provenance)
    return write_checked(path, json_text(document, path, indent=None), load_al_khateeb_results, "saved results")


def load_al_khateeb_results(path: str | Path = RESULTS_FILE) -> SavedResults:
    """The file at ``path`` (:data:`RESULTS_FORMAT`), every field checked.

    Raises
    ------
    ValueError
        Naming the file and the field that is missing or wrong, and what it should be.
    """
    fields = Fields(path, read_json(path), "saved Al-Khateeb results")
    if fields.text("format") != RESULTS_FORMAT:
        raise fields.fail("format", f"must be {RESULTS_FORMAT!r}")
    version = fields.integer("version", 1, RESULTS_VERSION)
    settings = fields.settings(settings_field(fields, version, 2), AlKhateebSettings)
    seed = fields.integer("seed", 0)
    checkpoints = fields.array("checkpoints", "i", (None,), 1, settings.generations)
    if not np.array_equal(checkpoints, progress_checkpoints(settings.generations)):
        raise fields.fail("checkpoints", f"must be generation 1 and every {PROGRESS_EVERY}th to {settings.generations}")
    curves = {}
    for name, field in YARDSTICK_FIELDS.items():
        curve = fields.numbers(field, (settings.runs, len(checkpoints), 2, 3), 0.0, 1.0)
        if not np.allclose(curve.sum(axis=-1), 1.0, rtol=0, atol=1e-9):
            raise fields.fail(field, "must hold (win, draw, loss) probabilities that sum to 1")
        curves[name] = curve
    reading_generations = fields.integer("reading_generations", 1, settings.generations)
    readings = {reading: fields.numbers(reading_field(reading), (settings.runs, 72))
                for reading in other_readings(settings.player)}  # fmt: skip
    return SavedResults(settings, seed, checkpoints, curves, reading_generations, readings)


@dataclass(frozen=True)
class Recheck:
    """What :func:`recheck_al_khateeb_results` computed again: numbers compared and how many were the same bits,
    and the time it took."""

    curve_values: int
    curve_same: int
    players: int
    players_same: int
    seconds: float

    @property
    def all_same(self) -> bool:
        return self.curve_same == self.curve_values and self.players_same == self.players

    def text(self) -> str:
        return (f"progress curves: {self.curve_same:,} of {self.curve_values:,} numbers the same bits; "
                f"other readings: {self.players_same} of {self.players} final players the same bits")  # fmt: skip


def recheck_al_khateeb_results(saved: SavedResults, run, checkpoints: int = 5, runs: tuple[int, ...] = (0,)) -> Recheck:
    """Compute part of ``saved`` again: the curves at ``checkpoints`` evenly spaced checkpoints (the first and the
    last among them) from ``run``, the paper run the file was made from; and the final players of ``runs`` of each
    other reading, run alone. ``ValueError`` if ``run`` is not that run."""
    if run.settings != saved.settings or run.seed != saved.seed:
        raise ValueError("run must be the run the saved results were made from: "
                         f"{saved.settings.as_dict()} with seed {saved.seed}")  # fmt: skip
    if not 1 <= checkpoints <= len(saved.checkpoints):
        raise ValueError(f"checkpoints must be from 1 to {len(saved.checkpoints)}; got {checkpoints}")
    start = time.perf_counter()
    chosen = np.unique(np.linspace(0, len(saved.checkpoints) - 1, checkpoints).round().astype(int))
    values = same = 0
    for name, tables in progress_yardsticks().items():
        again = progress_curve(run, *tables, generations=saved.checkpoints[chosen])
        values += again.size
        same += same_bits_count(again, saved.curves[name][:, chosen])
    players = players_same = 0
    for reading, finals in saved.readings.items():
        settings = reading_config(saved.settings, reading, saved.reading_generations)
        again = coevolve(settings, seed=saved.seed, runs=list(runs)).players()
        players += len(runs)
        players_same += sum(same_bits_count(again[k], finals[r]) == finals[r].size for k, r in enumerate(runs))
    return Recheck(values, same, players, players_same, time.perf_counter() - start)
