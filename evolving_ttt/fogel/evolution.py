"""Fogel (1993): the whole experiment, its record and its files (chapters 6 and 7).

:class:`FogelSettings` holds the paper's settings; :func:`evolve` runs all trials together (over
several processes if asked); :func:`save_run`, :func:`load_run` and :func:`run_experiment` store a
run and share it between the chapters of one build.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np

from evolving_ttt.fogel.engine import endgame, engine_steps, x_turn_square_codes
from evolving_ttt.fogel.mutation import N_WEIGHTS_PADDED, PAPER_MUTATION, MutationDraws, MutationSettings
from evolving_ttt.fogel.network import (
    MAX_HIDDEN,
    MIN_HIDDEN,
    Network,
    Population,
    concatenate_populations,
    hidden_slot_mask,
    random_population,
)
from evolving_ttt.fogel.selection import (
    PAPER_SELECTION,
    GenerationDraws,
    SelectionSettings,
    draw_generation,
    generation_step,
    take_networks,
)
from evolving_ttt.game import MEMORY_ESTIMATE_CAP, check_count, check_instance, check_numbers
from evolving_ttt.parallel import run_shared
from evolving_ttt.reading import Fields, check_record_format, read_npz, settings_field
from evolving_ttt.records import check_path, record_arrays, save_npz
from evolving_ttt.rule_base import GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME, PAPER_RULES, OpponentRules
from evolving_ttt.run_cache import cached_run
from evolving_ttt.seeds import MAX_SEED, check_seed, trial_generators


@dataclass(frozen=True)
class FogelSettings:
    """Everything that defines one experiment; the defaults are Fogel (1993) (chapter 6).

    Attributes
    ----------
    parents
        Parents per population (50); each generation scores them and their 50 offspring.
    generations
        Generations per trial (800).
    trials
        Independent trials (20).
    rules, mutation, selection
        The opponent, mutation and selection settings (see chapters 3-5).
    """

    parents: int = 50
    generations: int = 800
    trials: int = 20
    rules: OpponentRules = PAPER_RULES
    mutation: MutationSettings = PAPER_MUTATION
    selection: SelectionSettings = PAPER_SELECTION

    def __post_init__(self) -> None:
        check_count(self.parents, "parents")
        check_count(self.generations, "generations")
        check_count(self.trials, "trials")
        for name, kind in (("rules", OpponentRules), ("mutation", MutationSettings), ("selection", SelectionSettings)):
            if not isinstance(getattr(self, name), kind):
                raise ValueError(f"{name} must be a {kind.__name__}; got {getattr(self, name)!r}")
        if self.selection.comparisons > 2 * self.parents - 1:
            raise ValueError(
                f"comparisons ({self.selection.comparisons}) must be at most 2 * parents - 1 = {2 * self.parents - 1}"
            )

    def as_dict(self) -> dict:
        """A JSON-friendly description of the configuration."""
        return {
            "parents": self.parents, "generations": self.generations, "trials": self.trials,
            "rules": vars(self.rules).copy(), "mutation": vars(self.mutation).copy(),
            "selection": {**vars(self.selection), "payoff": list(self.selection.payoff)},
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: dict) -> FogelSettings:
        """Inverse of :meth:`as_dict`; ``ValueError`` saying what is wrong if ``data`` is not such a description."""
        check_instance(data, dict, "data", "a dict written by FogelSettings.as_dict")
        try:
            return cls(
                parents=data["parents"], generations=data["generations"], trials=data["trials"],
                rules=OpponentRules(**data["rules"]), mutation=MutationSettings(**data["mutation"]),
                selection=SelectionSettings(**{**data["selection"], "payoff": tuple(data["selection"]["payoff"])}),
            )  # fmt: skip
        except KeyError as error:
            raise ValueError(f"not an experiment configuration: it lacks {error}") from None
        except (TypeError, AttributeError) as error:
            raise ValueError(f"not an experiment configuration: {error}") from None


PAPER_EXPERIMENT = FogelSettings()
"""Fogel's experiment: 50 parents, 800 generations, 20 trials, the paper's rules (chapter 6)."""

ExperimentConfig = FogelSettings  # old name, kept for one release


@dataclass(frozen=True)
class EvolutionRun:
    """The record of an experiment (chapter 6).

    Attributes
    ----------
    settings, seed
        What was run.
    trial_numbers
        Which trials of the configuration the rows hold (all of them, unless a subset was asked for).
    best_score, mean_score, mean_hidden : (trials, generations)
        Per trial and generation: the best and the mean sampled score of the 2P scored networks, and
        their mean number of hidden nodes.
    final_parents : Population, batch (trials, parents)
        Each trial's parents after the last selection, best first.
    final_points : (trials, parents)
        Their selection points in the last generation.
    best_networks : Population with batch (trials, generations), or None
        With ``record_best``: each generation's network with the best sampled score.
    """

    settings: FogelSettings
    seed: int
    trial_numbers: tuple[int, ...]
    best_score: np.ndarray
    mean_score: np.ndarray
    mean_hidden: np.ndarray
    final_parents: Population
    final_points: np.ndarray
    best_networks: Population | None = None

    @property
    def config(self) -> FogelSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    def best_network(self, trial: int = 0) -> Network:
        """The best final parent of trial number ``trial`` (the one ranked first by the last selection)."""
        if isinstance(trial, bool) or not isinstance(trial, (int, np.integer)) or trial not in self.trial_numbers:
            raise ValueError(f"trial {trial} is not in this run; it holds trials {list(self.trial_numbers)}")
        return self.final_parents.network((self.trial_numbers.index(trial), 0))


def merge_runs(runs: Sequence[EvolutionRun]) -> EvolutionRun:
    """Stack runs of different trials of the same experiment and seed into one (chapter 6)."""
    if not isinstance(runs, Sequence) or not runs or not all(isinstance(r, EvolutionRun) for r in runs):
        raise ValueError(f"runs must be a non-empty sequence of EvolutionRuns; got {runs!r:.60}")
    first = runs[0]
    if any(r.settings != first.settings or r.seed != first.seed for r in runs):
        raise ValueError("only runs of the same configuration and seed can be merged")
    if len({r.best_networks is None for r in runs}) > 1:
        raise ValueError("only runs that all kept, or all did not keep, every generation's best network can be merged")
    trials = [t for r in runs for t in r.trial_numbers]
    if len(set(trials)) != len(trials):
        raise ValueError(f"the runs to merge hold the same trial more than once: {trials}")
    return EvolutionRun(
        first.settings, first.seed, tuple(t for r in runs for t in r.trial_numbers),
        *(np.concatenate([getattr(r, name) for r in runs]) for name in ("best_score", "mean_score", "mean_hidden")),
        concatenate_populations([r.final_parents for r in runs]), np.concatenate([r.final_points for r in runs]),
        None if runs[0].best_networks is None else concatenate_populations([r.best_networks for r in runs]),
    )  # fmt: skip


@cache
def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse instead of returning it to the system at once (chapter 9).

    Every generation allocates and frees the same large temporary arrays. By default glibc hands blocks
    this big back to the operating system, and the next generation takes page faults to get them back:
    about a quarter of the run time, all of it spent in the kernel. Raising the two thresholds keeps the
    memory in the process. Returns whether the setting took effect (only on Linux with glibc).
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # mallopt parameter numbers from glibc's malloc.h
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30) and libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError):
        return False


def evolve(
    settings: FogelSettings = PAPER_EXPERIMENT,
    seed: int = 1,
    progress: bool | str = False,
    trials: Sequence[int] | None = None,
    workers: int = 1,
    record_best: bool = False,
    scheduler: object = None,
) -> EvolutionRun:
    """Run ``settings.trials`` independent trials of evolutionary programming together (chapter 6).

    Each generation: every parent makes one mutated offspring; all 2P networks play 32 games against
    the rule base; each is compared with ``comparisons`` others; the P with most points survive. All
    trials and all their games advance together as arrays.

    Parameters
    ----------
    settings
        The experiment (default: the paper's).
    seed
        Seed of the whole run; trial ``t`` uses the ``t``-th generator of :func:`trial_generators`.
    progress
        Show a text progress bar (tqdm, on standard error) over generations; a string is used as its label.
        With several workers the bar follows this process's share of the trials.
    trials
        Run only these trial numbers (default: all); trial ``t`` gives the same result either way.
    workers
        Processes to share the trials between (at most one per trial). Each trial draws from its own
        generator, so the result is the same, bit for bit, for any number of workers.
    record_best
        Keep every generation's best-scoring network (for chapter 12).
    scheduler
        Run the trials on a Dask cluster instead: ``"local"`` starts one on this machine, an address such as
        ``"tcp://10.0.0.5:8786"`` uses a running one (see :class:`evolving_ttt.parallel.TaskRunner`). The
        result is the same bits.
    """
    check_instance(settings, FogelSettings, "settings", "a FogelSettings")
    keep_freed_memory()
    all_rngs = trial_generators(seed, settings.trials)
    chosen_trials = list(range(settings.trials)) if trials is None else check_numbers(trials, "trials")
    if not chosen_trials or any(not 0 <= t < settings.trials for t in chosen_trials):
        raise ValueError(f"trials must be trial numbers from 0 to {settings.trials - 1}; got {trials!r}")
    if len(set(chosen_trials)) != len(chosen_trials):
        raise ValueError(f"trials must not repeat a trial number (each trial has one generator); got {trials!r}")
    if check_count(workers, "workers") > 1 or scheduler is not None:
        rule_d_lines = settings.rules.rule_d_lines
        parts = run_shared(
            partial(_evolve_share, settings, seed, record_best), chosen_trials, workers, scheduler, progress,
            f"{len(chosen_trials)} trials x {settings.generations} generations",
            # The engine's lookup tables, built before forking, so that all processes share one copy of them.
            lambda: (engine_steps(rule_d_lines), engine_steps(), x_turn_square_codes(), endgame(rule_d_lines)),
        )  # fmt: skip
        return merge_runs(parts)
    rngs = [all_rngs[t] for t in chosen_trials]
    T, P, G, q = len(rngs), settings.parents, settings.generations, settings.selection.comparisons
    parents = random_population(rngs[0], P).reshape(1, P)
    parents = concatenate_populations([parents] + [random_population(r, P).reshape(1, P) for r in rngs[1:]])
    n = 2 * P
    buffer = GenerationDraws(
        MutationDraws(np.empty((T, P, N_WEIGHTS_PADDED)), np.empty((T, P, 3))),
        np.empty((T, n, GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME)), np.empty((T, n, q)), np.empty((T, n)),
    )  # fmt: skip
    trial_buffers = [buffer[t] for t in range(T)]  # each trial's views into the stacked buffer
    best, mean, hidden = (np.empty((T, G)) for _ in range(3))
    leaders: list[Population] = []
    steps, openings = range(G), None
    if progress:
        from tqdm import tqdm  # the text bar, which also reads well in a rendered page

        label = progress if isinstance(progress, str) else f"{T} trials x {G} generations"
        steps = tqdm(steps, desc=label, unit="gen", file=sys.stderr, mininterval=3.0)
    for g in steps:
        for rng, trial_buffer in zip(rngs, trial_buffers, strict=True):
            draw_generation(rng, P, q, out=trial_buffer)
        step = generation_step(parents, buffer, settings.rules, settings.mutation, settings.selection, openings)
        best[:, g] = step.scores.max(axis=-1)
        mean[:, g] = step.scores.mean(axis=-1)
        hidden[:, g] = step.scored.hidden_count.mean(axis=-1)
        if record_best:  # the network with the best sampled score (the first of equals)
            leaders.append(take_networks(step.scored, step.scores.argmax(axis=-1)[:, None]))
        parents, openings = step.parents, step.openings  # the survivors keep their openings
    final_points = np.take_along_axis(step.points, step.chosen, axis=-1)
    best_networks = concatenate_populations(leaders, axis=1) if record_best else None
    return EvolutionRun(
        settings, int(seed), tuple(chosen_trials), best, mean, hidden, parents, final_points, best_networks
    )


def _evolve_share(settings: FogelSettings, seed: int, record_best: bool, trials: list[int], progress) -> EvolutionRun:
    """One worker's share of :func:`evolve`: these trials, in this process."""
    return evolve(settings, seed, progress, trials, 1, record_best)


RECORDED_NETWORK_BYTES = 8 * (N_WEIGHTS_PADDED + 1)
"""Bytes of one padded network kept in a run's record (199 weights and biases, and its hidden count)."""


def estimated_memory(settings: FogelSettings, workers: int = 1, record_best: bool = False) -> int:
    """A generous estimate of the peak memory, in bytes, that :func:`evolve` needs for ``settings`` (chapter 6).

    Fitted to measured peaks on the project machine (Python 3.11, numpy 2.4): about 60 MB of interpreter
    and tables per process, 20 kB per parent and trial for the games of a generation, and the table of
    selection rivals (:func:`evolving_ttt.fogel.selection.other_networks`), which grows with the square of the
    population: about 40 bytes per parent squared per process. The record grows with the generations: three
    curves of 8 bytes per trial and generation and, with ``record_best``, each generation's best network
    (:data:`RECORDED_NETWORK_BYTES`); it is counted three times (where it is made, the pieces workers send
    back or the list of networks before it is joined, and the joined record). The command line refuses runs
    whose estimate exceeds most of the machine's memory instead of failing with a ``MemoryError`` part way.
    The estimate is capped at :data:`MEMORY_ESTIMATE_CAP`.
    """
    check_instance(settings, FogelSettings, "settings", "a FogelSettings")
    processes = max(1, min(check_count(workers, "workers"), settings.trials))
    trials_per_process = -(-settings.trials // processes)
    parents = settings.parents
    per_process = 60_000_000 + 20_000 * trials_per_process * parents + 40 * parents**2
    per_trial_and_generation = 3 * 8 + (RECORDED_NETWORK_BYTES if record_best else 0)
    record = 3 * settings.trials * settings.generations * per_trial_and_generation
    return min(processes * per_process + record, MEMORY_ESTIMATE_CAP)  # whole numbers: no float overflow


POPULATION_FIELDS = ("hidden_weights", "hidden_bias", "output_weights", "output_bias", "hidden_count")
"""The arrays of a :class:`Population`, in order (chapter 6)."""

RUN_FORMAT = "fogel-run"
"""The ``format`` array of a run record written by :func:`save_run` (chapter 6)."""

RUN_VERSION = 2
"""The ``version`` of the run record format that :func:`save_run` writes (chapter 6); :func:`load_run` reads 1 and 2,
which differ only in the name of the settings' array (``config`` in version 1, ``settings`` in version 2)."""

RUN_KIND = "Fogel run record"

_PADDED_SHAPES = {"hidden_weights": (MAX_HIDDEN, 9), "hidden_bias": (MAX_HIDDEN,), "output_weights": (9, MAX_HIDDEN),
                  "output_bias": (9,)}  # fmt: skip


def _read_population(fields: Fields, prefix: str, batch: tuple[int, ...]) -> Population:
    """The population stored as the arrays ``{prefix}_hidden_weights`` ... ``{prefix}_hidden_count``."""
    counts = fields.array(f"{prefix}_hidden_count", "i", batch, MIN_HIDDEN, MAX_HIDDEN)
    arrays = {name: fields.numbers(f"{prefix}_{name}", batch + shape) for name, shape in _PADDED_SHAPES.items()}
    unused = ~hidden_slot_mask(counts)
    for name, values in (("hidden_weights", arrays["hidden_weights"][unused]),
                         ("hidden_bias", arrays["hidden_bias"][unused]),
                         ("output_weights", np.swapaxes(arrays["output_weights"], -1, -2)[unused])):  # fmt: skip
        if np.any(values != 0):
            raise fields.fail(f"{prefix}_{name}", "holds weights in hidden slots beyond hidden_count; they must be 0")
    return Population(*arrays.values(), counts)


def _read_run(fields: Fields) -> EvolutionRun:
    """The run held by ``fields``, every array checked against the configuration (the rules of :func:`load_run`)."""
    hint = " (an Al-Khateeb record: read it with load_coevolution_run)" if fields.has("run_numbers") else ""
    version = check_record_format(fields, RUN_FORMAT, RUN_VERSION, hint, oldest=1)
    if not fields.has("trial_numbers") and hint:
        raise fields.fail("trial_numbers", f"is missing: this is not a {RUN_KIND}{hint}")
    settings = fields.settings(settings_field(fields, version, 2), FogelSettings)
    seed = fields.integer("seed", 0, MAX_SEED)
    trials = fields.array("trial_numbers", "i", (None,), 0, settings.trials - 1)
    if trials.size == 0 or len(set(trials.tolist())) != trials.size:
        raise fields.fail("trial_numbers", f"must be distinct trial numbers, at least one; got {trials.tolist()}")
    T, G, P = trials.size, settings.generations, settings.parents
    payoff = settings.selection.payoff
    margin = 1e-9 * GAMES_PER_EVALUATION * max(1.0, *(abs(v) for v in payoff))  # rounding of a sum of 32 payoffs
    low, high = GAMES_PER_EVALUATION * min(payoff) - margin, GAMES_PER_EVALUATION * max(payoff) + margin
    best_score, mean_score = (fields.numbers(name, (T, G), low, high) for name in ("best_score", "mean_score"))
    mean_hidden = fields.numbers("mean_hidden", (T, G), MIN_HIDDEN, MAX_HIDDEN)
    final_points = fields.array("final_points", "i", (T, P), 0, settings.selection.comparisons)
    final_parents = _read_population(fields, "final", (T, P))
    recorded = any(fields.has(f"best_{name}") for name in POPULATION_FIELDS)
    best_networks = _read_population(fields, "best", (T, G)) if recorded else None
    return EvolutionRun(settings, seed, tuple(trials.tolist()), best_score, mean_score, mean_hidden, final_parents,
                        final_points, best_networks)  # fmt: skip


def save_run(run: EvolutionRun, path: str | Path) -> None:
    """Write a run to a ``.npz`` file at exactly ``path``, whole or not at all: every recorded curve, the final
    networks and the configuration (chapter 6); the format is described in :func:`load_run`.

    Raises
    ------
    ValueError
        If ``run`` is not an :class:`EvolutionRun` or breaks a rule of the format (a NaN in a curve, a curve
        of the wrong shape, a score outside the payoffs' range...): nothing is written then.
    """
    check_instance(run, EvolutionRun, "run", "an EvolutionRun")
    check_instance(run.settings, FogelSettings, "run.settings", "a FogelSettings")
    path = check_path(path)
    values = {"format": RUN_FORMAT, "version": RUN_VERSION, "settings": json.dumps(run.settings.as_dict()),
              "seed": run.seed, "trial_numbers": run.trial_numbers, "best_score": run.best_score,
              "mean_score": run.mean_score, "mean_hidden": run.mean_hidden,
              "final_points": run.final_points}  # fmt: skip
    for prefix, population in (("final", run.final_parents), ("best", run.best_networks)):
        if population is not None:
            check_instance(population, Population, f"run's {prefix} networks", "a Population")
            arrays = zip(POPULATION_FIELDS, population.arrays(), strict=True)
            values.update({f"{prefix}_{name}": array for name, array in arrays})
    arrays = record_arrays(path, values, "run")
    try:
        _read_run(Fields(path, arrays, RUN_KIND))
    except ValueError as error:
        raise ValueError(f"{path} was not written, as its loader would refuse it: {error}") from None
    save_npz(path, arrays, RUN_KIND)


def load_run(path: str | Path) -> EvolutionRun:
    """Read a run written by :func:`save_run`, checking every array (chapter 6).

    The format: an ``.npz`` archive (no pickled objects) of the arrays ``format`` (the text ``"fogel-run"``),
    ``version`` (2), ``settings`` (the JSON text of :meth:`FogelSettings.as_dict`), ``seed`` (a whole number
    from 0 to 2**63 - 1), ``trial_numbers`` (T distinct trial numbers of the configuration), ``best_score``,
    ``mean_score`` (T x generations, within 32 times the lowest and highest payoff), ``mean_hidden``
    (T x generations, from 1 to 10), ``final_points`` (T x parents whole numbers from 0 to the comparisons),
    the final parents as ``final_hidden_weights`` (T x parents x 10 x 9), ``final_hidden_bias`` (... x 10),
    ``final_output_weights`` (... x 9 x 10), ``final_output_bias`` (... x 9) and ``final_hidden_count``
    (T x parents, from 1 to 10; the hidden slots beyond it hold zeros), and, if the run kept them, every
    generation's best network as the same five arrays with the prefix ``best_`` and batch (T, generations).
    Every number is finite. A record of version 1 holds the settings as ``config`` instead, and so does a record
    without ``format`` and ``version`` (version 0, written before they were added); both are read. A record that
    holds its settings under the other version's name is refused. Other arrays are ignored.

    Raises
    ------
    ValueError
        Naming the file and the array, if the file is missing, empty, damaged or not an ``.npz`` archive, or an
        array is missing or has the wrong type, shape or values.
    """
    path = check_path(path)
    return _read_run(Fields(path, read_npz(path, RUN_KIND), RUN_KIND))


def run_experiment(
    settings: FogelSettings = PAPER_EXPERIMENT, seed: int = 1, progress: bool | str = True, workers: int | None = None
) -> EvolutionRun:
    """A full experiment as the chapters run it: all cores, every generation's best network kept (chapter 6).

    This is :func:`evolve` with ``record_best=True``. Several chapters need the same runs (the paper's
    experiment with seed 1, for instance). When the environment variable ``TTT_RUN_CACHE`` names a folder,
    a finished run is saved there under a name derived from its configuration and seed, and a later call
    with the same arguments reads it back instead of running again. ``make book`` and ``make test`` point
    the variable at a folder they empty first, so each build computes every run exactly once. Without the
    variable (a reader running a chapter) the run is always computed.
    """
    import os

    check_instance(settings, FogelSettings, "settings", "a FogelSettings")
    seed = check_seed(seed)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    check_count(workers, "workers")
    return cached_run(
        "run", {"settings": settings.as_dict(), "seed": seed}, ".npz",
        lambda: evolve(settings, seed=seed, progress=progress, workers=workers, record_best=True), save_run, load_run,
    )  # fmt: skip


def champion_provenance(run: EvolutionRun, trial: int = 0) -> dict:
    """The provenance recorded with a run's champion: experiment, seed, trial and generation (chapter 7)."""
    check_instance(run, EvolutionRun, "run", "an EvolutionRun")
    run.best_network(trial)  # ValueError unless the run holds this trial
    return {
        "description": f"Best final parent of trial {trial} (ranked first by the last selection)",
        "seed": run.seed,
        "trial": trial,
        "generation": run.settings.generations,
        "experiment": run.settings.as_dict(),
    }
