"""Ling and Lam (2011), Sections 5 and 6: both networks trained for many seeds, their files, their games (chapter 17).

* :class:`LingLamConfig` holds an experiment's settings (the paper's by default); :func:`train` runs one
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
from dataclasses import asdict, dataclass, field
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
)
from evolving_ttt.ling_lam.engine import improved_ga_lockstep, traditional_ga_lockstep
from evolving_ttt.ling_lam.ga import REPLACEMENT_READINGS, GARun, ImprovedGASettings, TraditionalGASettings
from evolving_ttt.ling_lam.heuristic import heuristic_encoding
from evolving_ttt.ling_lam.network import (
    BASELINE_GENES,
    BASELINE_LAYOUT,
    HIDDEN_ORDERS,
    NETWORK_KINDS,
    NNDTF_GENES,
    NNDTF_LAYOUT,
    TRAINING_SOURCES,
    TrainingSet,
    check_genes,
    fitness,
    ling_lam_outputs,
    output_squares,
    training_positions,
)
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move
from evolving_ttt.parallel import run_shared
from evolving_ttt.records import (  # the build's run cache, shared by all systems
    cached_run,
    read_record,
)

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
class LingLamConfig:
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
        The two GAs' other settings (their ``population`` and ``iterations`` are taken from here).
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

    def __post_init__(self) -> None:
        if isinstance(self.methods, str) or not isinstance(self.methods, (tuple, list)):
            raise ValueError(f"methods must be a tuple of method names from {tuple(METHODS)}; got {self.methods!r}")
        object.__setattr__(self, "methods", tuple(self.methods))
        methods = self.methods
        if not methods or any(m not in METHODS for m in methods) or len(set(methods)) != len(methods):
            raise ValueError(f"methods must list distinct methods from {tuple(METHODS)}; got {self.methods!r}")
        check_count(self.seeds, "seeds")
        check_count(self.iterations, "iterations", 0)
        check_count(self.population, "population", 2)
        check_count(self.training_count, "training_count")
        if self.order not in HIDDEN_ORDERS:
            raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {self.order!r}")
        if self.replacement not in REPLACEMENT_READINGS:
            raise ValueError(f"replacement must be one of {REPLACEMENT_READINGS}; got {self.replacement!r}")
        if self.training_source not in TRAINING_SOURCES:
            raise ValueError(f"training_source must be one of {TRAINING_SOURCES}; got {self.training_source!r}")

    def settings(self, method: str) -> ImprovedGASettings | TraditionalGASettings:
        """The GA settings of ``method`` with this experiment's population, iterations and replacement."""
        if method not in METHODS:
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
    def from_dict(cls, record: dict) -> LingLamConfig:
        record = dict(record)
        record["improved"] = ImprovedGASettings(**record["improved"])
        record["traditional"] = TraditionalGASettings(**record["traditional"])
        if "methods" in record:
            record["methods"] = tuple(record["methods"])
        return cls(**record)


PAPER_LING_LAM = LingLamConfig()


@cache
def cached_training_positions(seed: int, count: int, source: str) -> TrainingSet:
    """:func:`~evolving_ttt.ling_lam.network.training_positions`, computed once per process."""
    return training_positions(seed, count, source)


def fitness_function(kind: str, training: TrainingSet, order: str = "simultaneous"):
    """The fitness (31) of chromosomes (k, n) of ``kind``'s network (``"nndtf"`` or ``"baseline"``), as a function."""
    if kind not in NETWORK_KINDS:
        raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {kind!r}")
    return lambda genes: fitness(ling_lam_outputs(kind, genes, training.inputs, order), training)


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
    method, config, seed
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
    config: LingLamConfig
    seed: int
    best_fitness: np.ndarray
    champions: np.ndarray
    champion_fitness: np.ndarray
    evaluations: int
    curve_step: int = 1
    population_best: np.ndarray | None = None

    @property
    def iterations(self) -> np.ndarray:
        """The iteration of each column of ``best_fitness``."""
        return np.arange(self.best_fitness.shape[1]) * self.curve_step

    def network(self, run: int | None = None) -> TrainedNetwork:
        """The trained network of run ``run`` (default: the fittest run, the first of equals)."""
        run = int(np.argmax(self.champion_fitness)) if run is None else run
        return TrainedNetwork(METHODS[self.method][0], self.champions[run], self.config.order)

    def provenance(self, run: int | None = None) -> dict:
        run = int(np.argmax(self.champion_fitness)) if run is None else run
        return {"fitness": float(self.champion_fitness[run]), "seed": self.seed, "run": run,
                "iterations": self.config.iterations, "experiment": self.config.as_dict()}  # fmt: skip


def _train_share(method: str, config: LingLamConfig, seed: int, runs: list[int], progress) -> GARun:
    """One worker's share of :func:`train`: these runs of ``method``, in lockstep in this process."""
    rngs = [method_generators(seed, method, config.seeds)[s] for s in runs]
    kind, algorithm = METHODS[method]
    evaluate = fitness_function(kind, config.training(), config.order)
    engine = improved_ga_lockstep if algorithm == "improved" else traditional_ga_lockstep
    return engine(evaluate, GENES[kind], rngs, config.settings(method), progress)


def train(method: str, config: LingLamConfig = PAPER_LING_LAM, seed: int = 1, progress: bool | str = False,
          workers: int = 1, scheduler: object = None) -> TrainingRun:  # fmt: skip
    """Train ``config.seeds`` networks by ``method`` (:data:`METHODS`) in lockstep, over ``workers`` processes.

    Run s draws only from its own generator (:func:`method_generators`), so the result is the same, bit
    for bit, for any number of workers, or on a Dask cluster (``scheduler``: ``"local"`` or a scheduler's
    address, see :class:`evolving_ttt.parallel.TaskRunner`). The bar follows this process's share of the runs.
    """
    config.settings(method)  # checks the method
    label = progress if isinstance(progress, str) else f"{method}: {config.seeds} runs x {config.iterations} iterations"
    parts = run_shared(partial(_train_share, method, config, seed), list(range(config.seeds)), workers, scheduler,
                       progress and label, label, config.training)  # fmt: skip
    return TrainingRun(
        method, config, int(seed), np.concatenate([p.best_fitness for p in parts]),
        np.concatenate([p.champions for p in parts]), np.concatenate([p.champion_fitness for p in parts]),
        parts[0].evaluations, 1, np.concatenate([p.population_best for p in parts]),
    )  # fmt: skip


def save_training_runs(runs: dict[str, TrainingRun], path: str | Path) -> None:
    """Write runs (one per method) to a ``.npz`` file: every curve, the trained networks and the settings."""
    arrays = {}
    for method, run in runs.items():
        arrays |= {f"{method}/config": json.dumps(run.config.as_dict()), f"{method}/seed": run.seed,
                   f"{method}/best_fitness": run.best_fitness, f"{method}/champions": run.champions,
                   f"{method}/champion_fitness": run.champion_fitness, f"{method}/evaluations": run.evaluations,
                   f"{method}/curve_step": run.curve_step}  # fmt: skip
        if run.population_best is not None:
            arrays[f"{method}/population_best"] = run.population_best
    np.savez_compressed(path, methods=json.dumps(list(runs)), **arrays)


def load_training_runs(path: str | Path) -> dict[str, TrainingRun]:
    """Read runs written by :func:`save_training_runs`."""
    with np.load(path) as data:
        return {
            method: TrainingRun(
                method,
                LingLamConfig.from_dict(json.loads(str(data[f"{method}/config"]))),
                int(data[f"{method}/seed"]),
                data[f"{method}/best_fitness"],
                data[f"{method}/champions"],
                data[f"{method}/champion_fitness"],
                int(data[f"{method}/evaluations"]),
                int(data[f"{method}/curve_step"]),
                data[f"{method}/population_best"] if f"{method}/population_best" in data else None,
            )  # fmt: skip
            for method in json.loads(str(data["methods"]))
        }


def run_training(method: str, config: LingLamConfig = PAPER_LING_LAM, seed: int = 1, progress: bool | str = True,
                 workers: int | None = None) -> TrainingRun:  # fmt: skip
    """:func:`train` on all cores, shared between the chapters of one build (chapter 17).

    As with Fogel's ``run_experiment``: when the environment variable ``TTT_RUN_CACHE`` names a folder,
    a finished run is saved there under a name derived from its method, settings and seed, and a later
    call with the same arguments reads it back.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    return cached_run(
        "ling-lam", {"method": method, "config": config.as_dict(), "seed": int(seed)}, ".npz",
        lambda: train(method, config, seed, progress, workers),
        lambda run, path: save_training_runs({method: run}, path), lambda path: load_training_runs(path)[method],
    )  # fmt: skip


RUNS_FILE_FORMAT = "ling-lam-runs"
"""The ``format`` field of a summary of training runs (JSON)."""


SUMMARY_CURVE_STEP = 500
"""Iterations between the points of the curves kept in a summary file (``ling-lam --data-dir``)."""


def save_runs_summary(
    runs: dict[str, TrainingRun], path: str | Path, curve_step: int = SUMMARY_CURVE_STEP, **provenance
) -> None:
    """Save the record of full training runs as JSON, small enough for the book's data folder.

    ``runs`` maps a label (the method's name, or for instance the reading it tests) to a run. Fields:
    ``format`` (``"ling-lam-runs"``), ``version`` (1), ``curve_step``, the provenance given as keyword
    arguments (for instance the command that made the runs), and ``methods``: for each label its ``method``
    (:data:`METHODS`), ``experiment`` (the settings), ``seed``, ``evaluations`` per run,
    ``champion_fitness`` (one per run), ``champions`` (the trained networks' genes, one list per run) and
    ``best_fitness`` (per run, the best fitness so far at iterations 0, curve_step, 2 curve_step, ...).
    Numbers are written with all their digits, so loading gives back the same values bit for bit.
    """
    curve_step = check_count(curve_step, "curve_step")
    methods = {}
    for label, run in runs.items():
        if run.curve_step != 1:
            raise ValueError("save_runs_summary needs full runs (curve_step 1)")
        if run.config.iterations % curve_step:
            raise ValueError(f"curve_step {curve_step} must divide the {run.config.iterations} iterations")
        methods[label] = {"method": run.method, "experiment": run.config.as_dict(), "seed": run.seed,
                          "evaluations": run.evaluations,
                           "champion_fitness": run.champion_fitness.tolist(), "champions": run.champions.tolist(),
                           "best_fitness": run.best_fitness[:, ::curve_step].tolist()}  # fmt: skip
    record = {"format": RUNS_FILE_FORMAT, "version": 1, "curve_step": curve_step, **provenance, "methods": methods}
    Path(path).write_text(json.dumps(record) + "\n")


def load_runs_summary(path: str | Path) -> tuple[dict[str, TrainingRun], dict]:
    """Load a file written by :func:`save_runs_summary`: the runs by label (curves sampled) and the provenance.

    Raises
    ------
    ValueError
        If the file is not JSON or not such a file, or a field is missing or inconsistent, saying which.
    """
    path = Path(path)
    record = read_record(path, RUNS_FILE_FORMAT, "a Ling-Lam runs file")
    if not isinstance(record.get("methods"), dict) or not isinstance(record.get("curve_step"), int):
        raise ValueError(f"{path} needs the fields methods (an object) and curve_step (a whole number)")
    runs = {}
    for label, entry in record["methods"].items():
        try:
            missing = [k for k in ("method", "experiment", "seed", "evaluations", "champion_fitness", "champions",
                                   "best_fitness") if k not in entry]  # fmt: skip
            if missing:
                raise ValueError(f"lacks the field(s) {missing}")
            method = entry["method"]
            if method not in METHODS:
                raise ValueError(f"unknown method {method!r}")
            config = LingLamConfig.from_dict(entry["experiment"])
            champions = check_genes(np.array(entry["champions"], dtype=float), GENES[METHODS[method][0]], "champions")
            fitness_values = np.array(entry["champion_fitness"], dtype=float)
            curves = np.array(entry["best_fitness"], dtype=float)
            points = config.iterations // record["curve_step"] + 1
            if champions.shape[0] != config.seeds or fitness_values.shape != (config.seeds,):
                raise ValueError(f"needs {config.seeds} champions and fitnesses (one per seed)")
            if curves.shape != (config.seeds, points):
                raise ValueError(f"best_fitness must have shape ({config.seeds}, {points}); got {curves.shape}")
            runs[label] = TrainingRun(method, config, int(entry["seed"]), curves, champions, fitness_values,
                                       int(entry["evaluations"]), record["curve_step"])  # fmt: skip
        except (TypeError, ValueError, KeyError) as error:
            raise ValueError(f"{path}, {label}: {error}") from None
    provenance = {k: v for k, v in record.items() if k not in ("format", "version", "curve_step", "methods")}
    return runs, provenance


NETWORK_FILE_FORMAT = "ling-lam-network"
"""The ``format`` field of a trained network's JSON file."""


@dataclass(frozen=True)
class TrainedNetwork:
    """A trained network: its kind (``"nndtf"`` or ``"baseline"``), its genes, and the NNDTF's hidden order."""

    kind: str
    genes: np.ndarray
    order: str = "simultaneous"

    def __post_init__(self) -> None:
        if self.kind not in NETWORK_KINDS:
            raise ValueError(f"kind must be one of {NETWORK_KINDS}; got {self.kind!r}")
        if self.order not in HIDDEN_ORDERS:
            raise ValueError(f"order must be one of {HIDDEN_ORDERS}; got {self.order!r}")
        object.__setattr__(self, "genes", check_genes(self.genes, GENES[self.kind]).copy())

    def outputs(self, inputs: np.ndarray) -> np.ndarray:
        return ling_lam_outputs(self.kind, self.genes, inputs, self.order)

    def move(self, board: np.ndarray) -> int:
        """The network's move for the player to move (O sees the colours swapped)."""
        return int(network_move_table(self)[board_index(np.asarray(board))])


def save_trained_network(network: TrainedNetwork, path: str | Path, **provenance) -> None:
    """Save a trained network as JSON.

    Fields: ``format`` (``"ling-lam-network"``), ``version`` (1), ``kind``, ``order`` (the NNDTF's hidden
    order), ``layout`` (each parameter's ``[start, stop)`` in the gene list), ``genes`` (114 numbers for an
    NNDTF, 89 for the baseline, all in [-1, 1], written with all their digits), and the provenance given
    as keyword arguments (fitness, seed, run, iterations, experiment).
    """
    record = {
        "format": NETWORK_FILE_FORMAT, "version": 1, "kind": network.kind, "order": network.order,
        "layout": {name: [where.start, where.stop] for name, where in LAYOUTS[network.kind].items()},
        "genes": network.genes.tolist(), **provenance,
    }  # fmt: skip
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def load_trained_network(path: str | Path) -> tuple[TrainedNetwork, dict]:
    """Load a network saved by :func:`save_trained_network`; return it and the file's provenance.

    Raises
    ------
    ValueError
        If the file is not JSON or not such a file, or a field is missing or wrong, saying which.
    """
    path = Path(path)
    record = read_record(path, NETWORK_FILE_FORMAT, "a Ling-Lam network file")
    missing = [name for name in ("kind", "order", "genes") if name not in record]
    if missing:
        raise ValueError(f"{path} lacks the field(s) {missing}")
    if record["kind"] not in NETWORK_KINDS:
        raise ValueError(f"{path}: kind must be one of {NETWORK_KINDS}; got {record['kind']!r}")
    try:
        genes = np.array(record["genes"], dtype=float)
        network = TrainedNetwork(record["kind"], genes, record["order"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: {error}") from None
    provenance = {k: v for k, v in record.items() if k not in ("format", "version", "kind", "order", "layout", "genes")}
    return network, provenance


def network_move_table(network: TrainedNetwork) -> np.ndarray:
    """The network's move on every base-3 board index, for the player to move (-1 on finished or illegal boards).

    The mover sees the board with the colours swapped when it is O, so a network trained as X plays O.
    """
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


def estimated_memory(config: LingLamConfig, methods: int = 2) -> int:
    """A generous estimate of the peak memory, in bytes, of training ``methods`` methods for ``config`` (chapter 17).

    Fitted to measured peaks on the project machine: about 60 MB of interpreter and tables, and per seed 2.7 MB
    for its populations and positions and 100 bytes per iteration for its curves, for each method held at the
    end. The command line refuses runs whose estimate exceeds most of the machine's memory.
    """
    return int(60e6 + methods * config.seeds * (2.7e6 + 100 * config.iterations))
