"""Ling and Lam (2011), Sections 5 and 6: both networks trained for many seeds, their files, their games (chapter 17).

* :class:`LingLamSettings` holds an experiment's settings (the paper's by default); :func:`train` runs one
  method (``"nndtf"`` with the improved GA, ``"baseline"`` with the traditional GA) for many seeds in
  lockstep, over several processes if asked; :func:`run_training` shares a run between the chapters of
  one build (the ``TTT_RUN_CACHE`` folder, as for Fogel's runs).
* :class:`TrainedNetwork` is one trained network; :func:`save_trained_network` and
  :func:`load_trained_network` read and write it as JSON (format ``ling-lam-network``).
* :func:`network_move_table` tabulates a network's move on every board; :func:`play_from_positions` plays
  whole sets of games from given positions with such tables (the paper's Table 1).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from functools import cache, partial
from pathlib import Path

import numpy as np

from evolving_ttt.game import (
    EMPTY,
    MARK_DIGIT,
    N_BOARDS,
    POWERS_OF_3,
    O,
    X,
    board_index,
    board_tables,
    check_count,
    check_instance,
)
from evolving_ttt.ling_lam.engine import improved_ga_lockstep, traditional_ga_lockstep
from evolving_ttt.ling_lam.ga import REPLACEMENT_READINGS, GARun, ImprovedGASettings, TraditionalGASettings
from evolving_ttt.ling_lam.heuristic import heuristic_encoding
from evolving_ttt.ling_lam.network import (
    BASELINE_GENES,
    BASELINE_LAYOUT,
    HIDDEN_ORDERS,
    LAYOUT_FUNCTIONS,
    N_HIDDEN,
    NETWORK_KINDS,
    NNDTF_GENES,
    NNDTF_LAYOUT,
    TRAINING_SOURCES,
    NetworkFitness,
    TrainingSet,
    check_genes,
    gene_count,
    hidden_of,
    ling_lam_outputs,
    output_squares,
    training_positions,
)
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move
from evolving_ttt.parallel import run_shared
from evolving_ttt.reading import SWEEP_PROVENANCE, Fields, check_record_format, read_npz, read_record, settings_field
from evolving_ttt.records import check_path, check_provenance, json_text, save_npz, write_checked
from evolving_ttt.run_cache import cached_run  # the build's run cache, shared by all systems

PAPER_FITNESS = {"nndtf": 0.9605, "baseline": 0.9456}
"""The fitness the paper reports after 50,000 iterations, one run each."""
LING_LAM_TABLE_1 = {"nndtf first": (18, 3, 4), "baseline first": (13, 4, 8)}
"""The paper's Table 1: the NNDTF's wins, draws and losses in 25 games each way against the baseline."""

METHODS = {
    "nndtf": ("nndtf", "improved"),
    "baseline": ("baseline", "traditional"),
    "nndtf-traditional-ga": ("nndtf", "traditional"),
    "baseline-improved-ga": ("baseline", "improved"),
}
"""Each method's network and GA: the paper's two, and the two crossings that separate the network from the GA."""

GENES = {"nndtf": NNDTF_GENES, "baseline": BASELINE_GENES}
LAYOUTS = {"nndtf": NNDTF_LAYOUT, "baseline": BASELINE_LAYOUT}


@dataclass(frozen=True)
class LingLamSettings:
    """An experiment's settings; the defaults are the paper's, with our choices where it is silent (chapter 16).

    Attributes
    ----------
    seeds, iterations, population
        Independent runs per method (the paper made one), iterations per run, chromosomes per population.
    order
        How the NNDTF's hidden neurons read their neighbours (:data:`~evolving_ttt.ling_lam.network.HIDDEN_ORDERS`).
    replacement
        How the improved GA's Figure 7 is read (:data:`~evolving_ttt.ling_lam.ga.REPLACEMENT_READINGS`).
    training_source, training_seed, training_count
        The training positions (:func:`~evolving_ttt.ling_lam.network.training_positions`).
    improved, traditional
        The two GAs' other settings (their ``population`` and ``iterations`` are taken from here;
        ``traditional.form`` reads the baseline's GA as steady-state, the default, or generational, chapter 22).
    hidden
        Hidden neurons of both networks (the paper's 8; chapter 22 varies it).
    methods
        The methods of :data:`METHODS` an experiment trains, ``seeds`` runs each (the paper's two by default);
        :func:`train` trains one method at a time and ignores it.
    """

    seeds: int = 20
    iterations: int = 50_000
    population: int = 10
    order: str = "simultaneous"
    replacement: str = "text"
    training_source: str = "random games"
    training_seed: int = 2011
    training_count: int = 100
    improved: ImprovedGASettings = field(default_factory=ImprovedGASettings)
    traditional: TraditionalGASettings = field(default_factory=TraditionalGASettings)
    methods: tuple[str, ...] = ("nndtf", "baseline")
    hidden: int = N_HIDDEN

    def __post_init__(self) -> None:
        if isinstance(self.methods, str) or not isinstance(self.methods, (tuple, list)):
            raise ValueError(f"methods must be a tuple of method names from {tuple(METHODS)}; got {self.methods!r}")
        object.__setattr__(self, "methods", tuple(self.methods))
        methods = self.methods
        if (not methods or any(not isinstance(m, str) or m not in METHODS for m in methods)
                or len(set(methods)) != len(methods)):
            raise ValueError(f"methods must list distinct methods from {tuple(METHODS)}; got {self.methods!r}")
        check_count(self.seeds, "seeds")
        check_count(self.iterations, "iterations")
        check_count(self.population, "population", 2)
        check_count(self.training_seed, "training_seed", 0)
        check_count(self.training_count, "training_count")
        hidden = self.hidden
        if isinstance(hidden, bool) or not isinstance(hidden, (int, np.integer)) or not 1 <= hidden <= 64:
            raise ValueError(f"hidden must be a whole number of hidden neurons from 1 to 64; got {self.hidden!r}")
        check_instance(self.improved, ImprovedGASettings, "improved", "an ImprovedGASettings")
        check_instance(self.traditional, TraditionalGASettings, "traditional", "a TraditionalGASettings")
        if self.order not in HIDDEN_ORDERS:
            raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {self.order!r}")
        if self.replacement not in REPLACEMENT_READINGS:
            raise ValueError(f"replacement must be one of {REPLACEMENT_READINGS}; got {self.replacement!r}")
        if self.training_source not in TRAINING_SOURCES:
            raise ValueError(f"training_source must be one of {TRAINING_SOURCES}; got {self.training_source!r}")

    def settings(self, method: str) -> ImprovedGASettings | TraditionalGASettings:
        """The GA settings of ``method`` with this experiment's population, iterations and replacement."""
        if not isinstance(method, str) or method not in METHODS:
            raise ValueError(f"method must be one of {tuple(METHODS)}; got {method!r}")
        if METHODS[method][1] == "improved":
            return ImprovedGASettings(**{**self.improved.as_dict(), "population": self.population,
                                         "iterations": self.iterations, "replacement": self.replacement})  # fmt: skip
        return TraditionalGASettings(**{**self.traditional.as_dict(), "population": self.population,
                                        "iterations": self.iterations})  # fmt: skip

    def training(self) -> TrainingSet:
        return cached_training_positions(self.training_seed, self.training_count, self.training_source)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, record: dict) -> LingLamSettings:
        """The inverse of :meth:`as_dict`. Every setting must be given, except ``methods`` (files written before
        it existed lack it: the default), ``hidden`` and ``traditional.form`` (chapter 22's settings; files
        written before them lack them); unknown settings are an error."""
        record = _settings_fields(record, cls, "settings", optional=("methods", "hidden"))
        record["improved"] = ImprovedGASettings(**_settings_fields(record["improved"], ImprovedGASettings, "improved"))
        traditional = _settings_fields(record["traditional"], TraditionalGASettings, "traditional", optional=("form",))
        record["traditional"] = TraditionalGASettings(**traditional)
        if "methods" in record:
            if not isinstance(record["methods"], (list, tuple)):
                raise ValueError(f"methods must be a list of method names; got {record['methods']!r:.60}")
            record["methods"] = tuple(record["methods"])
        return cls(**record)


def _settings_fields(record: object, settings_type: type, name: str, optional: tuple[str, ...] = ()) -> dict:
    """``record`` as a dict after checking that it names every field of ``settings_type`` (but ``optional``)."""
    if not isinstance(record, dict):
        raise ValueError(f"{name} must be an object of settings; got {type(record).__name__}")
    known = {f.name for f in dataclass_fields(settings_type)}
    unknown = sorted(str(key) for key in set(record) - known)
    missing = sorted(known - set(record) - set(optional))
    problems = [f"unknown settings {unknown}"] if unknown else []
    problems += [f"missing settings {missing}"] if missing else []
    if problems:
        raise ValueError(f"{name}: {'; '.join(problems)}")
    return dict(record)


PAPER_LING_LAM = LingLamSettings()

LingLamConfig = LingLamSettings  # old name, kept for one release


@cache
def cached_training_positions(seed: int, count: int, source: str) -> TrainingSet:
    """:func:`~evolving_ttt.ling_lam.network.training_positions`, computed once per process."""
    return training_positions(seed, count, source)


def fitness_function(kind: str, training: TrainingSet, order: str = "simultaneous") -> NetworkFitness:
    """The fitness (31) of chromosomes (k, n) of ``kind``'s network (``"nndtf"`` or ``"baseline"``), as a function."""
    return NetworkFitness(kind, training, order)


def method_generators(seed: int, method: str, runs: int) -> list[np.random.Generator]:
    """One generator per run of ``method``: run s of seed k is the same whatever the number of runs."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0; got {seed!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}; got {method!r}")
    sequence = np.random.SeedSequence([list(METHODS).index(method), int(seed)])
    return [np.random.default_rng(s) for s in sequence.spawn(check_count(runs, "runs"))]


@dataclass(frozen=True)
class TrainingRun:
    """All runs of one method: the curves, the trained networks and the settings (chapter 17).

    Attributes
    ----------
    method, settings, seed
        What was run.
    best_fitness
        (S, T + 1) each run's best fitness so far, at the start and after every iteration (see
        :class:`~evolving_ttt.ling_lam.ga.GARun`).
    population_best
        (S, T + 1) the best fitness in each population at the same moments, or ``None`` (summary files
        keep only ``best_fitness``).
    champions, champion_fitness
        (S, n) the trained network of each run and (S,) its fitness (see :class:`~evolving_ttt.ling_lam.ga.GARun`).
    evaluations
        Fitness evaluations per run.
    curve_step
        Column k of ``best_fitness`` is iteration ``k * curve_step`` (1 for a run; more in a summary file).
    """

    method: str
    settings: LingLamSettings
    seed: int
    best_fitness: np.ndarray
    champions: np.ndarray
    champion_fitness: np.ndarray
    evaluations: int
    curve_step: int = 1
    population_best: np.ndarray | None = None

    @property
    def config(self) -> LingLamSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    @property
    def iterations(self) -> np.ndarray:
        """The iteration of each column of ``best_fitness``."""
        return np.arange(self.best_fitness.shape[1]) * self.curve_step

    def network(self, run: int | None = None) -> TrainedNetwork:
        """The trained network of run ``run`` (default: the fittest run, the first of equals)."""
        run = int(np.argmax(self.champion_fitness)) if run is None else run
        return TrainedNetwork(METHODS[self.method][0], self.champions[run], self.settings.order)  # hidden: from genes

    def provenance(self, run: int | None = None) -> dict:
        run = int(np.argmax(self.champion_fitness)) if run is None else run
        return {"fitness": float(self.champion_fitness[run]), "seed": self.seed, "run": run,
                "iterations": self.settings.iterations, "experiment": self.settings.as_dict()}  # fmt: skip


def _check_run_call(method: object, settings: object, seed: object, progress: object) -> None:
    """Raise ``ValueError`` naming the argument of :func:`train` or :func:`run_training` that is wrong."""
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}; got {method!r:.60}")
    check_instance(settings, LingLamSettings, "settings", "a LingLamSettings")
    check_count(seed, "seed", 0)
    if not isinstance(progress, (bool, str)):
        raise ValueError(f"progress must be True, False or a label (a str); got {type(progress).__name__}")


def _train_share(method: str, settings: LingLamSettings, seed: int, runs: list[int], progress,
                 engine: str = "auto") -> GARun:  # fmt: skip
    """One worker's share of :func:`train`: these runs of ``method`` in this process, on ``engine``
    (:data:`~evolving_ttt.ling_lam.engine.ENGINES`)."""
    rngs = [method_generators(seed, method, settings.seeds)[s] for s in runs]
    kind, algorithm = METHODS[method]
    evaluate = fitness_function(kind, settings.training(), settings.order)
    run = improved_ga_lockstep if algorithm == "improved" else traditional_ga_lockstep
    return run(evaluate, gene_count(kind, settings.hidden), rngs, settings.settings(method), progress, engine)


def train(method: str, settings: LingLamSettings = PAPER_LING_LAM, seed: int = 1, progress: bool | str = False,
          workers: int = 1, scheduler: object = None, engine: str = "auto") -> TrainingRun:  # fmt: skip
    """Train ``settings.seeds`` networks by ``method`` (:data:`METHODS`) in lockstep, over ``workers`` processes.

    Run s draws only from its own generator (:func:`method_generators`), so the result is the same, bit
    for bit, for any number of workers, or on a Dask cluster (``scheduler``: ``"local"`` or a scheduler's
    address, see :class:`evolving_ttt.parallel.TaskRunner`). The bar follows this process's share of the runs.
    ``engine`` (:data:`~evolving_ttt.ling_lam.engine.ENGINES`) changes the speed only, never a bit.
    """
    _check_run_call(method, settings, seed, progress)
    settings.settings(method)  # checks the method
    runs = f"{settings.seeds} runs x {settings.iterations} iterations"
    label = progress if isinstance(progress, str) else f"{method}: {runs}"
    share = partial(_train_share, method, settings, seed, engine=engine)
    parts = run_shared(share, list(range(settings.seeds)), workers, scheduler, progress and label, label,
                       settings.training)  # fmt: skip
    return TrainingRun(
        method, settings, int(seed), np.concatenate([p.best_fitness for p in parts]),
        np.concatenate([p.champions for p in parts]), np.concatenate([p.champion_fitness for p in parts]),
        parts[0].evaluations, 1, np.concatenate([p.population_best for p in parts]),
    )  # fmt: skip


TRAINING_RUNS_KIND = "Ling-Lam training runs"
TRAINING_RUNS_FORMAT, TRAINING_RUNS_VERSION = "ling-lam-training-runs", 2
RUN_ARRAYS = ("settings", "seed", "best_fitness", "champions", "champion_fitness", "evaluations", "curve_step")
"""The arrays of each method in a ``.npz`` file of training runs (``METHOD/NAME``), besides the optional
``METHOD/population_best``; the archive also holds ``methods``, the methods' names as a JSON list, ``format``
(:data:`TRAINING_RUNS_FORMAT`) and ``version`` (2). An archive without ``format`` and ``version``, written before
version 2, holds each method's settings as ``METHOD/config``; it is read too."""

_METHOD_LIST = re.compile(r'\[\s*(?:"[a-z-]+"(?:\s*,\s*"[a-z-]+")*)?\s*\]')


def _check_runs(runs: object, labels: str) -> None:
    if not isinstance(runs, dict) or not runs:
        raise ValueError(f"runs must be a non-empty dict from {labels} to TrainingRun; got {runs!r:.60}")
    for label, run in runs.items():
        if not isinstance(label, str):
            raise ValueError(f"runs must be keyed by {labels} (texts); got the key {label!r:.40}")
        check_instance(run, TrainingRun, f"runs[{label!r}]", "a TrainingRun (train returns one)")


def _training_run(fields: Fields, name: Callable[[str], str], method: str, settings: LingLamSettings,
                  curve_step: int) -> TrainingRun:  # fmt: skip
    """A run's fields, checked against its settings: the loaders' rules (and so the savers')."""
    if settings.iterations % curve_step:
        raise fields.fail(name("curve_step"), f"is {curve_step}; it must divide the {settings.iterations} iterations")
    seeds, points = settings.seeds, settings.iterations // curve_step + 1
    seed = fields.integer(name("seed"), 0)
    evaluations = fields.integer(name("evaluations"), 0)
    best = fields.numbers(name("best_fitness"), (seeds, points), 0.0, 1.0)
    if np.any(np.diff(best, axis=1) < 0):
        raise fields.fail(name("best_fitness"), "falls somewhere; it is the best fitness so far")
    champions = fields.numbers(name("champions"), (seeds, gene_count(METHODS[method][0], settings.hidden)), -1.0, 1.0)
    champion_fitness = fields.numbers(name("champion_fitness"), (seeds,), 0.0, 1.0)
    if not np.array_equal(champion_fitness, best[:, -1]):
        raise fields.fail(name("champion_fitness"), "differs from the last column of best_fitness")
    population_best = None
    if fields.has(name("population_best")):
        population_best = fields.numbers(name("population_best"), (seeds, points), 0.0, 1.0)
        if np.any(population_best > best):
            raise fields.fail(name("population_best"), "exceeds the best fitness so far")
    return TrainingRun(method, settings, seed, best, champions, champion_fitness, evaluations, curve_step,
                       population_best)  # fmt: skip


def _training_runs(path: Path, data: dict[str, np.ndarray]) -> dict[str, TrainingRun]:
    """The runs in the arrays of a ``.npz`` file (as :func:`~evolving_ttt.reading.read_npz` gives them), checked."""
    fields = Fields(path, data, TRAINING_RUNS_KIND)
    version = check_record_format(fields, TRAINING_RUNS_FORMAT, TRAINING_RUNS_VERSION)  # 0: before version 2
    listed = fields.text("methods")
    if not _METHOD_LIST.fullmatch(listed):
        raise fields.fail("methods", "must be a JSON list of method names")
    methods = json.loads(listed)
    if not methods or any(m not in METHODS for m in methods) or len(set(methods)) != len(methods):
        raise fields.fail("methods", f"must list distinct methods from {tuple(METHODS)}; it lists {methods}")
    named = {m: settings_field(fields, version, 2, prefix=f"{m}/") for m in methods}
    expected = {"methods", "format", "version", *named.values()}
    expected |= {f"{m}/{a}" for m in methods for a in (*RUN_ARRAYS[1:], "population_best")}
    unknown = sorted(set(data) - expected)
    if unknown:
        raise fields.fail(unknown[0], f"belongs to no method listed in 'methods' ({methods})")
    runs = {}
    for method in methods:
        settings = fields.settings(named[method], LingLamSettings)
        curve_step = fields.integer(f"{method}/curve_step", 1)
        runs[method] = _training_run(fields, lambda n, m=method: f"{m}/{n}", method, settings, curve_step)
    return runs


def save_training_runs(runs: dict[str, TrainingRun], path: str | Path) -> None:
    """Write runs (one per method, keyed by the method) to a ``.npz`` file: every curve, the networks, the settings.

    Written whole or not at all, at exactly ``path`` (no ``.npz`` is added). The arrays are first checked by
    :func:`load_training_runs`' rules: runs the loader would refuse raise ``ValueError`` and write nothing.
    """
    _check_runs(runs, "methods")
    path = check_path(path)
    arrays = {"format": TRAINING_RUNS_FORMAT, "version": TRAINING_RUNS_VERSION, "methods": json.dumps(list(runs))}
    for method, run in runs.items():
        if run.method != method:
            raise ValueError(f"runs must be keyed by their method; the run under {method!r} is a {run.method!r} run")
        arrays |= {f"{method}/settings": json.dumps(run.settings.as_dict()), f"{method}/seed": run.seed,
                   f"{method}/best_fitness": run.best_fitness, f"{method}/champions": run.champions,
                   f"{method}/champion_fitness": run.champion_fitness, f"{method}/evaluations": run.evaluations,
                   f"{method}/curve_step": run.curve_step}  # fmt: skip
        if run.population_best is not None:
            arrays[f"{method}/population_best"] = run.population_best
    try:
        arrays = {name: np.asarray(value) for name, value in arrays.items()}
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} was not written: a run holds something that is not an array ({error})") from None
    try:
        _training_runs(path, arrays)
    except ValueError as error:
        raise ValueError(f"{path} was not written: its loader would refuse it ({error})") from None
    save_npz(path, arrays, TRAINING_RUNS_KIND)


def load_training_runs(path: str | Path) -> dict[str, TrainingRun]:
    """Read runs written by :func:`save_training_runs`, checking every array.

    Raises
    ------
    ValueError
        Naming the file and the array: a missing, empty, truncated or damaged file, a method that is not
        known, settings that are not valid, a curve whose shape does not follow the settings (seeds, and
        iterations / curve_step + 1 points), fitness outside [0, 1] or not finite, a negative count, or genes
        outside [-1, 1].
    """
    path = check_path(path)
    return _training_runs(path, read_npz(path, TRAINING_RUNS_KIND))


def run_training(method: str, settings: LingLamSettings = PAPER_LING_LAM, seed: int = 1, progress: bool | str = True,
                 workers: int | None = None) -> TrainingRun:  # fmt: skip
    """:func:`train` on all cores, shared between the chapters of one build (chapter 17).

    As with Fogel's ``run_experiment``: when the environment variable ``TTT_RUN_CACHE`` names a folder,
    a finished run is saved there under a name derived from its method, settings and seed, and a later
    call with the same arguments reads it back.
    """
    _check_run_call(method, settings, seed, progress)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    return cached_run(
        "ling-lam", {"method": method, "settings": settings.as_dict(), "seed": int(seed)}, ".npz",
        lambda: train(method, settings, seed, progress, workers),
        lambda run, path: save_training_runs({method: run}, path), lambda path: load_training_runs(path)[method],
    )  # fmt: skip


RUNS_FILE_FORMAT = "ling-lam-runs"
"""The ``format`` field of a summary of training runs (JSON)."""


SUMMARY_CURVE_STEP = 500
"""Iterations between the points of the curves kept in a summary file (``ling-lam --data-dir``)."""


RUNS_FIELDS = ("format", "version", "curve_step", "methods")
"""The fields of a summary file of its own; any other top-level field is provenance."""

RUN_ENTRY_FIELDS = ("method", "experiment", "seed", "evaluations", "champion_fitness", "champions", "best_fitness")
"""The fields of each run of a summary file."""


def save_runs_summary(
    runs: dict[str, TrainingRun], path: str | Path, curve_step: int = SUMMARY_CURVE_STEP, **provenance
) -> None:
    """Save the record of full training runs as JSON, small enough for the book's data folder.

    ``runs`` maps a label (the method's name, or for instance the reading it tests) to a run (a full run, or a
    run read from a summary whose ``curve_step`` divides this one). Fields:
    ``format`` (``"ling-lam-runs"``), ``version`` (1), ``curve_step``, the provenance given as keyword
    arguments (for instance the command that made the runs; it may not use the four names of the format's own
    fields), and ``methods``: for each label its ``method``
    (:data:`METHODS`), ``experiment`` (the settings), ``seed``, ``evaluations`` per run,
    ``champion_fitness`` (one per run), ``champions`` (the trained networks' genes, one list per run) and
    ``best_fitness`` (per run, the best fitness so far at iterations 0, curve_step, 2 curve_step, ...).
    Numbers are written with all their digits, so loading gives back the same values bit for bit. Written
    whole or not at all, at exactly ``path``, once :func:`load_runs_summary` has read it back.
    """
    _check_runs(runs, "labels")
    path = check_path(path)
    curve_step = check_count(curve_step, "curve_step")
    check_provenance(provenance, RUNS_FIELDS, "a runs file")
    methods = {}
    for label, run in runs.items():
        if curve_step % run.curve_step:
            raise ValueError(f"curve_step {curve_step} must be a multiple of the curve_step of run {label!r} "
                             f"({run.curve_step}; a full run has 1)")  # fmt: skip
        if run.settings.iterations % curve_step:
            raise ValueError(f"curve_step {curve_step} must divide the {run.settings.iterations} iterations")
        methods[label] = {"method": run.method, "experiment": run.settings.as_dict(), "seed": run.seed,
                          "evaluations": run.evaluations,
                           "champion_fitness": run.champion_fitness.tolist(), "champions": run.champions.tolist(),
                           "best_fitness": run.best_fitness[:, :: curve_step // run.curve_step].tolist()}  # fmt: skip
    record = {"format": RUNS_FILE_FORMAT, "version": 1, "curve_step": curve_step, **provenance, "methods": methods}
    write_checked(path, json_text(record, path, indent=None), load_runs_summary, "Ling-Lam runs file")


def load_runs_summary(path: str | Path) -> tuple[dict[str, TrainingRun], dict]:
    """Load a file written by :func:`save_runs_summary`: the runs by label (curves sampled) and the provenance.

    The provenance the book writes is checked when present: ``command`` and ``description`` texts, ``commands``
    a list of texts.

    Raises
    ------
    ValueError
        Naming the file and the field: not JSON, not such a file, another version, a missing field, an
        unknown method, invalid settings, a curve_step below 1 or not dividing the iterations, a curve whose
        shape does not follow the settings, fitness outside [0, 1], a negative count, or genes outside [-1, 1].
    """
    path = check_path(path)
    kind = "a Ling-Lam runs file"
    record = read_record(path, RUNS_FILE_FORMAT, kind)
    top = Fields(path, record, kind)
    curve_step = top.integer("curve_step", 1)
    entries = top.get("methods")
    if not isinstance(entries, dict) or not entries:
        raise top.fail("methods", "must be a non-empty object from labels to runs")
    runs = {}
    for label, entry in entries.items():
        fields = Fields(path, entry, f"{kind}, {label}")
        unknown = sorted(set(fields.data) - set(RUN_ENTRY_FIELDS))
        if unknown:
            raise fields.fail(unknown[0], "is not a field of a run")
        method = fields.text("method", tuple(METHODS))
        settings = fields.config("experiment", LingLamSettings)
        runs[label] = _training_run(fields, lambda n: n, method, settings, curve_step)
    top.provenance(texts=("command", "description"))
    top.optional(top.texts, "commands")
    provenance = {k: v for k, v in record.items() if k not in RUNS_FIELDS}
    return runs, provenance


NETWORK_FILE_FORMAT = "ling-lam-network"
"""The ``format`` field of a trained network's JSON file."""


@dataclass(frozen=True)
class TrainedNetwork:
    """A trained network: its kind (``"nndtf"`` or ``"baseline"``), its genes, and the NNDTF's hidden order.

    The number of hidden neurons (:attr:`hidden`) follows from the number of genes (114 and 89 for the paper's 8).
    """

    kind: str
    genes: np.ndarray
    order: str = "simultaneous"

    def __post_init__(self) -> None:
        if self.kind not in NETWORK_KINDS:
            raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {self.kind!r}")
        if self.order not in HIDDEN_ORDERS:
            raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {self.order!r}")
        count = np.shape(self.genes)[-1] if np.ndim(self.genes) == 1 else -1
        hidden = hidden_of(self.kind, count) if count >= 1 else N_HIDDEN  # a wrong shape fails in check_genes
        object.__setattr__(self, "genes", check_genes(self.genes, gene_count(self.kind, hidden)).copy())

    @property
    def hidden(self) -> int:
        """The network's hidden neurons."""
        return hidden_of(self.kind, len(self.genes))

    def outputs(self, inputs: np.ndarray) -> np.ndarray:
        return ling_lam_outputs(self.kind, self.genes, inputs, self.order)

    def move(self, board: np.ndarray) -> int:
        """The network's move for the player to move (O sees the colours swapped)."""
        return int(network_move_table(self)[board_index(np.asarray(board))])


NETWORK_FIELDS = ("format", "version", "kind", "order", "layout", "genes")
"""The fields of a network file of its own; any other field is provenance."""


def _layout_record(kind: str, hidden: int = N_HIDDEN) -> dict[str, list[int]]:
    return {name: [where.start, where.stop] for name, where in LAYOUT_FUNCTIONS[kind](hidden).items()}


def save_trained_network(network: TrainedNetwork, path: str | Path, **provenance) -> None:
    """Save a trained network as JSON.

    Fields: ``format`` (``"ling-lam-network"``), ``version`` (1), ``kind``, ``order`` (the NNDTF's hidden
    order), ``layout`` (each parameter's ``[start, stop)`` in the gene list), ``genes`` (114 numbers for an
    NNDTF, 89 for the baseline, all in [-1, 1], written with all their digits), and the provenance given
    as keyword arguments (fitness, seed, run, iterations, experiment; it may not use the names of the six
    fields above). Written whole or not at all, at exactly ``path``, once :func:`load_trained_network` has
    read it back.
    """
    check_instance(network, TrainedNetwork, "network", "a TrainedNetwork")
    check_genes(network.genes, gene_count(network.kind, network.hidden), "network.genes")  # it can change after
    path = check_path(path)
    check_provenance(provenance, NETWORK_FIELDS, "a network file")
    record = {
        "format": NETWORK_FILE_FORMAT, "version": 1, "kind": network.kind, "order": network.order,
        "layout": _layout_record(network.kind, network.hidden), "genes": np.asarray(network.genes).tolist(),
        **provenance,
    }  # fmt: skip
    write_checked(path, json_text(record, path), load_trained_network, "Ling-Lam network file")


def load_trained_network(path: str | Path) -> tuple[TrainedNetwork, dict]:
    """Load a network saved by :func:`save_trained_network`; return it and the file's provenance.

    The provenance that :meth:`TrainingRun.provenance` and a sweep write is checked when present: ``fitness`` in
    [0, 1], ``seed``, ``run``, ``iterations``, ``sweep_cell`` and ``task`` whole numbers, ``experiment`` and
    ``settings`` objects of valid settings, ``description`` a text.

    Raises
    ------
    ValueError
        Naming the file and the field: not JSON, not such a file, another version, a missing field, an
        unknown kind or order, a layout that is not the kind's, genes that are not numbers (texts and
        true/false included), not finite, outside [-1, 1] or not as many as the kind has.
    """
    path = check_path(path)
    kind_name = "a Ling-Lam network file"
    record = read_record(path, NETWORK_FILE_FORMAT, kind_name)
    fields = Fields(path, record, kind_name)
    kind = fields.text("kind", NETWORK_KINDS)
    order = fields.text("order", HIDDEN_ORDERS)
    layout = fields.get("layout")
    stop = layout.get("input_weights") if isinstance(layout, dict) else None
    hidden = stop[1] // 9 if isinstance(stop, list) and len(stop) == 2 and isinstance(stop[1], int) else 0
    if not 1 <= hidden <= 64 or layout != _layout_record(kind, hidden):
        raise fields.fail("layout", f"is not the layout of a {kind} network, such as {_layout_record(kind)}")
    genes = fields.numbers("genes", (gene_count(kind, hidden),), -1.0, 1.0)
    if fields.has("fitness"):
        fields.number("fitness", 0.0, 1.0)
    fields.optional(fields.integer, "iterations", 1)
    fields.provenance(counts=("run", *SWEEP_PROVENANCE), texts=("description",), settings={"settings": LingLamSettings})
    provenance = {k: v for k, v in record.items() if k not in NETWORK_FIELDS}
    if fields.has("experiment"):  # every setting, those a file written before they existed lacks at their default
        provenance["experiment"] = json.loads(json.dumps(fields.config("experiment", LingLamSettings).as_dict()))
    return TrainedNetwork(kind, genes, order), provenance


def network_move_table(network: TrainedNetwork) -> np.ndarray:
    """The network's move on every base-3 board index, for the player to move (-1 on finished or illegal boards).

    The mover sees the board with the colours swapped when it is O, so a network trained as X plays O.
    """
    check_instance(network, TrainedNetwork, "network", "a TrainedNetwork (load_trained_network gives one)")
    return _move_table(network.kind, network.genes.tobytes(), network.order)


@cache
def _move_table(kind: str, genes_bytes: bytes, order: str) -> np.ndarray:
    tables = board_tables()
    playable = np.flatnonzero(tables.legal & ~tables.over)
    own = tables.boards[playable] * tables.to_move[playable, None]  # the mover as X
    genes = np.frombuffer(genes_bytes)
    moves = np.full(N_BOARDS, -1, dtype=np.int8)
    moves[playable] = output_squares(ling_lam_outputs(kind, genes, heuristic_encoding(own), order), own)
    moves.flags.writeable = False
    return moves


def network_policy(network: TrainedNetwork, mark: int) -> np.ndarray:
    """A trained network as a policy table (19683, 9) for ``mark`` (see :mod:`evolving_ttt.outcomes`)."""
    check_instance(network, TrainedNetwork, "network", "a TrainedNetwork (load_trained_network gives one)")
    rows = boards_to_move(mark)
    table = np.zeros(POLICY_SHAPE)
    table[rows, network_move_table(network)[rows]] = 1.0
    return table


def play_from_positions(x_moves: np.ndarray, o_moves: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """Play every game from boards (G, 9) to the end with two move tables; return the winners (G,): 1, 0 or -1.

    ``x_moves`` and ``o_moves`` are tables like :func:`network_move_table`'s, giving X's and O's moves. All games
    advance together, one ply at a time.
    """
    tables = board_tables()
    index = np.asarray(board_index(np.asarray(boards)), dtype=np.int64).reshape(-1)
    if not tables.legal[index].all():
        raise ValueError("every starting board must be legal")
    for _ in range(9):
        playing = ~tables.over[index]
        if not playing.any():
            break
        i = index[playing]
        mover = tables.to_move[i]
        square = np.where(mover == X, x_moves[i], o_moves[i])
        if (square < 0).any() or (tables.boards[i, square] != EMPTY).any():
            raise ValueError("a move table gave no move or an occupied square")
        digit = np.where(mover == X, MARK_DIGIT[X], MARK_DIGIT[O])
        index[playing] = i + digit * POWERS_OF_3[square]
    return tables.winner[index].astype(int)


def two_by_two_positions() -> np.ndarray:
    """All 756 boards with two X's and two O's (X to move): the starting positions of the paper's Table 1."""
    tables = board_tables()
    keep = ((tables.boards == X).sum(axis=1) == 2) & ((tables.boards == O).sum(axis=1) == 2)
    return tables.boards[keep]


def estimated_memory(settings: LingLamSettings, methods: int = 2) -> int:
    """A generous estimate of the peak memory, in bytes, of training ``methods`` methods for ``settings`` (chapter 17).

    Fitted to measured peaks on the project machine: about 60 MB of interpreter and tables, and per seed 2.7 MB
    for its populations and positions and 100 bytes per iteration for its curves, for each method held at the
    end. The command line refuses runs whose estimate exceeds most of the machine's memory.
    """
    check_instance(settings, LingLamSettings, "settings", "a LingLamSettings")
    check_count(methods, "methods")
    return int(60e6 + methods * settings.seeds * (2.7e6 + 100 * settings.iterations))
