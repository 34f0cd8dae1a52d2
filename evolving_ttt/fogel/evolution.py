"""Fogel (1993): the whole experiment, its record and its files (chapters 6 and 7).

:class:`ExperimentConfig` holds the paper's settings; :func:`evolve` runs all trials together (over
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
from evolving_ttt.fogel.network import Network, Population, concatenate_populations, random_population
from evolving_ttt.fogel.opponent import GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME, PAPER_RULES, OpponentRules
from evolving_ttt.fogel.selection import (
    PAPER_SELECTION,
    GenerationDraws,
    SelectionSettings,
    draw_generation,
    generation_step,
    take_networks,
)
from evolving_ttt.game import check_count
from evolving_ttt.parallel import run_shared
from evolving_ttt.records import cached_run


@dataclass(frozen=True)
class ExperimentConfig:
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
    def from_dict(cls, data: dict) -> ExperimentConfig:
        """Inverse of :meth:`as_dict`."""
        return cls(
            parents=data["parents"], generations=data["generations"], trials=data["trials"],
            rules=OpponentRules(**data["rules"]), mutation=MutationSettings(**data["mutation"]),
            selection=SelectionSettings(**{**data["selection"], "payoff": tuple(data["selection"]["payoff"])}),
        )  # fmt: skip


PAPER_EXPERIMENT = ExperimentConfig()
"""Fogel's experiment: 50 parents, 800 generations, 20 trials, the paper's rules (chapter 6)."""


def trial_generators(seed: int, trials: int) -> list[np.random.Generator]:
    """One independent random generator per trial, spawned from ``seed`` (chapter 6).

    Trial ``t`` draws only from its own generator, so its run is the same whether it is run alone or
    alongside others.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0; got {seed!r}")
    return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(check_count(trials, "trials"))]


@dataclass(frozen=True)
class EvolutionRun:
    """The record of an experiment (chapter 6).

    Attributes
    ----------
    config, seed
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

    config: ExperimentConfig
    seed: int
    trial_numbers: tuple[int, ...]
    best_score: np.ndarray
    mean_score: np.ndarray
    mean_hidden: np.ndarray
    final_parents: Population
    final_points: np.ndarray
    best_networks: Population | None = None

    def best_network(self, trial: int = 0) -> Network:
        """The best final parent of trial number ``trial`` (the one ranked first by the last selection)."""
        if trial not in self.trial_numbers:
            raise ValueError(f"trial {trial} is not in this run; it holds trials {list(self.trial_numbers)}")
        return self.final_parents.network((self.trial_numbers.index(trial), 0))


def merge_runs(runs: Sequence[EvolutionRun]) -> EvolutionRun:
    """Stack runs of different trials of the same experiment and seed into one (chapter 6)."""
    first = runs[0]
    if any(r.config != first.config or r.seed != first.seed for r in runs):
        raise ValueError("only runs of the same configuration and seed can be merged")
    return EvolutionRun(
        first.config, first.seed, tuple(t for r in runs for t in r.trial_numbers),
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
    config: ExperimentConfig = PAPER_EXPERIMENT,
    seed: int = 1,
    progress: bool | str = False,
    trials: Sequence[int] | None = None,
    workers: int = 1,
    record_best: bool = False,
    scheduler: object = None,
) -> EvolutionRun:
    """Run ``config.trials`` independent trials of evolutionary programming together (chapter 6).

    Each generation: every parent makes one mutated offspring; all 2P networks play 32 games against
    the rule base; each is compared with ``comparisons`` others; the P with most points survive. All
    trials and all their games advance together as arrays.

    Parameters
    ----------
    config
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
    keep_freed_memory()
    all_rngs = trial_generators(seed, config.trials)
    chosen_trials = list(range(config.trials)) if trials is None else [int(t) for t in trials]
    if not chosen_trials or any(not 0 <= t < config.trials for t in chosen_trials):
        raise ValueError(f"trials must be trial numbers from 0 to {config.trials - 1}; got {trials!r}")
    if len(set(chosen_trials)) != len(chosen_trials):
        raise ValueError(f"trials must not repeat a trial number (each trial has one generator); got {trials!r}")
    if check_count(workers, "workers") > 1 or scheduler is not None:
        rule_d_lines = config.rules.rule_d_lines
        parts = run_shared(
            partial(_evolve_share, config, seed, record_best), chosen_trials, workers, scheduler, progress,
            f"{len(chosen_trials)} trials x {config.generations} generations",
            # The engine's lookup tables, built before forking, so that all processes share one copy of them.
            lambda: (engine_steps(rule_d_lines), engine_steps(), x_turn_square_codes(), endgame(rule_d_lines)),
        )  # fmt: skip
        return merge_runs(parts)
    rngs = [all_rngs[t] for t in chosen_trials]
    T, P, G, q = len(rngs), config.parents, config.generations, config.selection.comparisons
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
        step = generation_step(parents, buffer, config.rules, config.mutation, config.selection, openings)
        best[:, g] = step.scores.max(axis=-1)
        mean[:, g] = step.scores.mean(axis=-1)
        hidden[:, g] = step.scored.hidden_count.mean(axis=-1)
        if record_best:  # the network with the best sampled score (the first of equals)
            leaders.append(take_networks(step.scored, step.scores.argmax(axis=-1)[:, None]))
        parents, openings = step.parents, step.openings  # the survivors keep their openings
    final_points = np.take_along_axis(step.points, step.chosen, axis=-1)
    best_networks = concatenate_populations(leaders, axis=1) if record_best else None
    return EvolutionRun(
        config, int(seed), tuple(chosen_trials), best, mean, hidden, parents, final_points, best_networks
    )


def _evolve_share(config: ExperimentConfig, seed: int, record_best: bool, trials: list[int], progress) -> EvolutionRun:
    """One worker's share of :func:`evolve`: these trials, in this process."""
    return evolve(config, seed, progress, trials, 1, record_best)


def estimated_memory(config: ExperimentConfig, workers: int = 1) -> int:
    """A generous estimate of the peak memory, in bytes, that :func:`evolve` needs for ``config`` (chapter 6).

    Fitted to measured peaks on the project machine (Python 3.11, numpy 2.4): about 60 MB of interpreter
    and tables per process, 20 kB per parent and trial for the games of a generation, and the table of
    selection rivals (:func:`evolving_ttt.fogel.selection.other_networks`), which grows with the square of the
    population: about 40 bytes per parent squared per process. The command line refuses runs whose estimate
    exceeds most of the machine's memory instead of failing with a ``MemoryError`` part way.
    """
    processes = max(1, min(int(workers), config.trials))
    trials_per_process = -(-config.trials // processes)
    per_process = 60e6 + 20e3 * trials_per_process * config.parents + 40.0 * config.parents**2
    return int(processes * per_process)


POPULATION_FIELDS = ("hidden_weights", "hidden_bias", "output_weights", "output_bias", "hidden_count")
"""The arrays of a :class:`Population`, in order (chapter 6)."""


def save_run(run: EvolutionRun, path: str | Path) -> None:
    """Write a run to a ``.npz`` file: every recorded curve, the final networks and the configuration (chapter 6)."""
    populations = {"final": run.final_parents, "best": run.best_networks}
    arrays = {
        f"{prefix}_{name}": array
        for prefix, population in populations.items()
        if population is not None
        for name, array in zip(POPULATION_FIELDS, population.arrays(), strict=True)
    }
    np.savez_compressed(
        path,
        config=json.dumps(run.config.as_dict()),
        seed=run.seed,
        trial_numbers=np.array(run.trial_numbers),
        best_score=run.best_score,
        mean_score=run.mean_score,
        mean_hidden=run.mean_hidden,
        final_points=run.final_points,
        **arrays,
    )


def load_run(path: str | Path) -> EvolutionRun:
    """Read a run written by :func:`save_run` (chapter 6)."""
    with np.load(path) as data:

        def population(prefix: str) -> Population | None:
            if f"{prefix}_hidden_count" not in data:
                return None
            return Population(*(data[f"{prefix}_{name}"] for name in POPULATION_FIELDS))

        return EvolutionRun(
            config=ExperimentConfig.from_dict(json.loads(str(data["config"]))),
            seed=int(data["seed"]),
            trial_numbers=tuple(int(t) for t in data["trial_numbers"]),
            best_score=data["best_score"],
            mean_score=data["mean_score"],
            mean_hidden=data["mean_hidden"],
            final_parents=population("final"),
            final_points=data["final_points"],
            best_networks=population("best"),
        )


def run_experiment(
    config: ExperimentConfig = PAPER_EXPERIMENT, seed: int = 1, progress: bool | str = True, workers: int | None = None
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

    workers = workers if workers is not None else (os.cpu_count() or 1)
    return cached_run(
        "run", {"config": config.as_dict(), "seed": int(seed)}, ".npz",
        lambda: evolve(config, seed=seed, progress=progress, workers=workers, record_best=True), save_run, load_run,
    )  # fmt: skip


def champion_provenance(run: EvolutionRun, trial: int = 0) -> dict:
    """The provenance recorded with a run's champion: experiment, seed, trial and generation (chapter 7)."""
    return {
        "description": f"Best final parent of trial {trial} (ranked first by the last selection)",
        "seed": run.seed,
        "trial": trial,
        "generation": run.config.generations,
        "experiment": run.config.as_dict(),
    }
