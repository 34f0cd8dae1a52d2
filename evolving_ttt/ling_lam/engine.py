"""Many runs of the two GAs at once (chapter 16; used by chapter 17, the command line and the sweeps).

Run ``s`` draws only from its own generator, a block of iterations at a time: ``rng.random((B, D))`` gives the
same numbers as B calls of ``rng.random(D)``, so each run is, bit for bit, the readable GA's run with that
generator (tested, and checked in chapter 16), whichever of the two engines (:data:`ENGINES`) runs it:

* ``"lockstep"``, the readable lockstep: all runs advance together, the populations stacked into an array
  (S, N, n); each operator of :mod:`evolving_ttt.ling_lam.ga` works on all runs at once, and one call of
  ``evaluate`` scores every run's candidates. It takes any ``evaluate``.
* ``"compiled"``: one run after another, each block of iterations in one compiled loop
  (:mod:`evolving_ttt.ling_lam.loops`) that scores the networks itself, only as far as the GA's choice needs. It
  needs an ``evaluate`` that says which networks it scores: a
  :class:`~evolving_ttt.ling_lam.network.NetworkFitness` (:func:`~evolving_ttt.ling_lam.experiment.fitness_function`).

``"auto"`` (the default) takes the compiled engine when ``evaluate`` is a ``NetworkFitness``, else the lockstep.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from evolving_ttt.game import check_instance
from evolving_ttt.ling_lam import loops
from evolving_ttt.ling_lam.ga import (
    LOWER,
    PAPER_IMPROVED_GA,
    PAPER_TRADITIONAL_GA,
    UPPER,
    Evaluate,
    GARun,
    ImprovedGASettings,
    TraditionalGASettings,
    _progress,
    arithmetic_crossover,
    check_run_arguments,
    crossover_candidates,
    generational_draw_count,
    generational_evaluations,
    improved_draw_count,
    mutants,
    nonuniform_mutation,
    random_chromosomes,
    replace_worst,
    roulette,
    traditional_draw_count,
)
from evolving_ttt.ling_lam.network import NetworkFitness, hidden_of

DRAW_BLOCK = 500
"""Iterations whose random numbers are drawn at once."""

ENGINES = ("auto", "compiled", "lockstep")
"""The engines that run the GAs (the module's text): the same bits, at different speeds."""


def _check_generators(rngs: object) -> None:
    if isinstance(rngs, (str, bytes)) or not isinstance(rngs, Sequence) or not rngs:
        raise ValueError(f"rngs must be a non-empty list of numpy.random.Generator; got {type(rngs).__name__}")
    for rng in rngs:
        check_instance(rng, np.random.Generator, "each of rngs", "a numpy.random.Generator")


def _run_blocks(rng: np.random.Generator, iterations: int, count: int) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first iteration, draws (B, count))`` for one run, a block of :data:`DRAW_BLOCK` iterations at a time."""
    for start in range(0, iterations, DRAW_BLOCK):
        yield start, rng.random((min(DRAW_BLOCK, iterations - start), count))


def _draw_blocks(rngs: Sequence[np.random.Generator], iterations: int, count: int):
    """Yield each iteration's draws (S, count), drawn a block of iterations at a time from each run's generator."""
    for blocks in zip(*(_run_blocks(rng, iterations, count) for rng in rngs), strict=True):
        yield from np.stack([block for _, block in blocks], axis=1)  # (size, S, count)


def _compiled(evaluate: Evaluate, n_genes: int, engine: object) -> NetworkFitness | None:
    """The fitness the compiled engine scores, or ``None`` for the lockstep engine; ``ValueError`` if ``engine`` is
    not one of :data:`ENGINES`, or is ``"compiled"`` for an ``evaluate`` that is not a ``NetworkFitness``."""
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r:.60}")
    if engine == "lockstep" or (engine == "auto" and not isinstance(evaluate, NetworkFitness)):
        return None
    if not isinstance(evaluate, NetworkFitness):
        raise ValueError("engine 'compiled' needs evaluate to be a NetworkFitness (fitness_function makes one); "
                         f"got {evaluate!r:.60}")  # fmt: skip
    hidden_of(evaluate.kind, n_genes)  # the genes fit the network
    return evaluate


class _Bar:
    """The progress bar of the compiled engine: runs x iterations, advanced a block at a time (or nothing)."""

    def __init__(self, progress: bool | str, label: str, total: int) -> None:
        self.bar = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=progress if isinstance(progress, str) else label, unit="it",
                            file=sys.stderr, mininterval=3.0)  # fmt: skip

    def update(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _start(fit: NetworkFitness, n: int, rngs: Sequence[np.random.Generator], size: int, chunk: int):
    """The compiled engine's scoring arguments and each run's initial population (S, N, n) with its fitness (S, N)."""
    layout = loops.scoring(fit.training, chunk)
    network = (fit.kind == "nndtf", hidden_of(fit.kind, n), fit.order == "sequential", *layout)
    population = np.stack([random_chromosomes(rng, size, n) for rng in rngs])
    fitness = np.empty((len(rngs), size))
    for s in range(len(rngs)):
        loops.population_fitness(population[s], fitness[s], *network)
    return network, population, fitness


def _improved_compiled(fit: NetworkFitness, n: int, rngs: Sequence[np.random.Generator],
                       settings: ImprovedGASettings, bar: _Bar) -> GARun:  # fmt: skip
    """:func:`improved_ga_lockstep` on the compiled engine: each run's blocks in :func:`~.loops.improved_block`."""
    network, population, fitness = _start(fit, n, rngs, settings.population, loops.CHUNK)
    w = settings.w
    constants = (UPPER * (1 - w), LOWER * (1 - w), (UPPER + LOWER) * (1 - w), float(w), float(settings.acceptance),
                 float(settings.subset_probability), settings.replacement == "figure")  # fmt: skip
    best = np.empty((len(rngs), settings.iterations + 1))
    best[:, 0] = fitness.max(axis=1)
    for s, rng in enumerate(rngs):
        for start, draws in _run_blocks(rng, settings.iterations, improved_draw_count(n)):
            loops.improved_block(population[s], fitness[s], draws, best[s], start, *constants, *network)
            bar.update(len(draws))
    rows, top = np.arange(len(rngs)), np.argmax(fitness, axis=1)
    return GARun(best, best.copy(), population, fitness, population[rows, top], fitness[rows, top],
                 settings.population + 7 * settings.iterations)  # fmt: skip


def _traditional_compiled(fit: NetworkFitness, n: int, rngs: Sequence[np.random.Generator],
                          settings: TraditionalGASettings, bar: _Bar) -> GARun:  # fmt: skip
    """:func:`traditional_ga_lockstep` on the compiled engine (:func:`~.loops.traditional_block` and
    :func:`~.loops.generational_block`); every child's fitness is kept, so every position is scored, in one chunk."""
    network, population, fitness = _start(fit, n, rngs, settings.population, len(fit.training.inputs))
    exponents = loops.mutation_exponents(settings.iterations, float(settings.shape))
    S, T, generational = len(rngs), settings.iterations, settings.form == "generational"
    rates = float(settings.crossover), float(settings.mutation)
    best, population_best = np.empty((S, T + 1)), np.empty((S, T + 1))
    best[:, 0] = population_best[:, 0] = fitness.max(axis=1)
    rows, top = np.arange(S), np.argmax(fitness, axis=1)
    champions, champion_fitness = population[rows, top], fitness[rows, top]
    count = generational_draw_count(n, settings.population) if generational else traditional_draw_count(n)
    for s, rng in enumerate(rngs):
        for start, draws in _run_blocks(rng, T, count):
            powers = exponents[start : start + len(draws)]
            if generational:
                loops.generational_block(population[s], fitness[s], draws, powers, best[s], start, *rates, *network)
            else:
                loops.traditional_block(population[s], fitness[s], draws, powers, best[s], population_best[s],
                                        champions[s], champion_fitness[s : s + 1], start, *rates, *network)  # fmt: skip
            bar.update(len(draws))
    if generational:
        top = np.argmax(fitness, axis=1)
        return GARun(best, best.copy(), population, fitness, population[rows, top], fitness[rows, top],
                     generational_evaluations(settings))  # fmt: skip
    return GARun(best, population_best, population, fitness, champions, champion_fitness,
                 settings.population + 2 * settings.iterations)  # fmt: skip


def _with_bar(run: Callable, fit: Any, n_genes: int, rngs: Sequence[np.random.Generator], settings: Any,
              progress: bool | str, name: str) -> GARun:  # fmt: skip
    """``run(fit, n_genes, rngs, settings, bar)``: a compiled engine's runs, with a bar over all their iterations."""
    total = len(rngs) * settings.iterations
    bar = _Bar(progress, f"{name}, {len(rngs)} runs x {settings.iterations} iterations", total)
    try:
        return run(fit, n_genes, rngs, settings, bar)
    finally:
        bar.close()


def improved_ga_lockstep(
    evaluate: Evaluate, n_genes: int, rngs: Sequence[np.random.Generator],
    settings: ImprovedGASettings = PAPER_IMPROVED_GA, progress: bool | str = False, engine: str = "auto",
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.improved_ga` for ``len(rngs)`` runs at once; run s uses ``rngs[s]``.

    ``engine`` is one of :data:`ENGINES`: ``"auto"`` runs the compiled engine for a ``NetworkFitness``.
    """
    check_run_arguments(evaluate, n_genes, settings, ImprovedGASettings, progress)
    _check_generators(rngs)
    fit = _compiled(evaluate, n_genes, engine)
    if fit is not None:
        return _with_bar(_improved_compiled, fit, n_genes, rngs, settings, progress, "improved GA")
    S, N, n = len(rngs), settings.population, n_genes
    rows = np.arange(S)
    population = np.stack([random_chromosomes(rng, N, n) for rng in rngs])
    fitness = evaluate(population.reshape(S * N, n)).reshape(S, N)
    best = np.empty((S, settings.iterations + 1))
    best[:, 0] = fitness.max(axis=1)
    draws = _draw_blocks(rngs, settings.iterations, improved_draw_count(n))
    label = f"improved GA, {S} runs x {settings.iterations} iterations"
    for t in _progress(range(settings.iterations), progress, label):
        d = next(draws)
        first, second = roulette(fitness[:, None, :], d[:, :2]).T  # both spins at once
        candidates = crossover_candidates(population[rows, first], population[rows, second], settings.w)
        candidate_fitness = evaluate(candidates.reshape(S * 4, n)).reshape(S, 4)
        offspring = candidates[rows, np.argmax(candidate_fitness, axis=1)]
        children = mutants(offspring, d, settings.subset_probability)
        children_fitness = evaluate(children.reshape(S * 3, n)).reshape(S, 3)
        replace_worst(population, fitness, children, children_fitness, d[:, -1], settings.acceptance,
                      settings.replacement)  # fmt: skip
        best[:, t + 1] = fitness.max(axis=1)
    top = np.argmax(fitness, axis=1)
    return GARun(best, best.copy(), population, fitness, population[rows, top], fitness[rows, top],
                 settings.population + 7 * settings.iterations)  # fmt: skip


def traditional_ga_lockstep(
    evaluate: Evaluate, n_genes: int, rngs: Sequence[np.random.Generator],
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False, engine: str = "auto",
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.traditional_ga` for ``len(rngs)`` runs at once; run s uses ``rngs[s]``.

    ``engine`` is one of :data:`ENGINES`: ``"auto"`` runs the compiled engine for a ``NetworkFitness``.
    """
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    _check_generators(rngs)
    fit = _compiled(evaluate, n_genes, engine)
    if fit is not None:
        return _with_bar(_traditional_compiled, fit, n_genes, rngs, settings, progress, f"{settings.form} GA")
    if settings.form == "generational":
        return generational_ga_lockstep(evaluate, n_genes, rngs, settings, progress, "lockstep")
    S, N, n = len(rngs), settings.population, n_genes
    rows = np.arange(S)
    population = np.stack([random_chromosomes(rng, N, n) for rng in rngs])
    fitness = evaluate(population.reshape(S * N, n)).reshape(S, N)
    best, population_best = np.empty((S, settings.iterations + 1)), np.empty((S, settings.iterations + 1))
    best[:, 0] = population_best[:, 0] = fitness.max(axis=1)
    top = np.argmax(fitness, axis=1)
    champions, champion_fitness = population[rows, top], fitness[rows, top]
    draws = _draw_blocks(rngs, settings.iterations, traditional_draw_count(n))
    label = f"traditional GA, {S} runs x {settings.iterations} iterations"
    for t in _progress(range(settings.iterations), progress, label):
        d = next(draws)
        first, second = roulette(fitness[:, None, :], d[:, :2]).T  # both spins at once
        children = arithmetic_crossover(population[rows, first], population[rows, second], d[:, 2], d[:, 3],
                                        settings.crossover)  # fmt: skip
        children = nonuniform_mutation(children, d[:, 4:], t + 1, settings)
        children_fitness = evaluate(children.reshape(S * 2, n)).reshape(S, 2)
        for slot, k in ((first, 0), (second, 1)):  # the second child wins a slot picked twice
            population[rows, slot], fitness[rows, slot] = children[:, k], children_fitness[:, k]
        population_best[:, t + 1] = fitness.max(axis=1)
        k = np.argmax(children_fitness, axis=1)
        better = children_fitness[rows, k] > champion_fitness
        champions[better], champion_fitness[better] = children[rows, k][better], children_fitness[rows, k][better]
        best[:, t + 1] = champion_fitness
    return GARun(best, population_best, population, fitness, champions, champion_fitness,
                 settings.population + 2 * settings.iterations)  # fmt: skip


def generational_ga_lockstep(
    evaluate: Evaluate, n_genes: int, rngs: Sequence[np.random.Generator],
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False, engine: str = "auto",
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.generational_ga` for ``len(rngs)`` runs at once (chapter 22).

    Every pair of every run is spun, crossed and mutated at once: the draws of a generation, (S, pairs, per pair).
    ``engine`` is one of :data:`ENGINES`, as for :func:`traditional_ga_lockstep`.
    """
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    _check_generators(rngs)
    if _compiled(evaluate, n_genes, engine) is not None:
        settings = TraditionalGASettings(**{**settings.as_dict(), "form": "generational"})
        return traditional_ga_lockstep(evaluate, n_genes, rngs, settings, progress, engine)
    S, N, n = len(rngs), settings.population, n_genes
    pairs, rows = (N + 1) // 2, np.arange(S)
    population = np.stack([random_chromosomes(rng, N, n) for rng in rngs])
    fitness = evaluate(population.reshape(S * N, n)).reshape(S, N)
    best = np.empty((S, settings.iterations + 1))
    best[:, 0] = fitness.max(axis=1)
    draws = _draw_blocks(rngs, settings.iterations, generational_draw_count(n, N))
    label = f"generational GA, {S} runs x {settings.iterations} generations"
    for t in _progress(range(settings.iterations), progress, label):
        d = next(draws).reshape(S, pairs, -1)
        spins = roulette(fitness[:, None, None, :], d[:, :, :2])  # (S, pairs, 2)
        first, second = population[rows[:, None], spins[..., 0]], population[rows[:, None], spins[..., 1]]
        children = arithmetic_crossover(first, second, d[:, :, 2], d[:, :, 3], settings.crossover)
        children = nonuniform_mutation(children, d[:, :, 4:], t + 1, settings).reshape(S, 2 * pairs, n)[:, :N]
        children_fitness = evaluate(children.reshape(S * N, n)).reshape(S, N)
        elite, worst = np.argmax(fitness, axis=1), np.argmin(children_fitness, axis=1)
        children[rows, worst], children_fitness[rows, worst] = population[rows, elite], fitness[rows, elite]
        population, fitness = children, children_fitness
        best[:, t + 1] = fitness.max(axis=1)
    top = np.argmax(fitness, axis=1)
    return GARun(best, best.copy(), population, fitness, population[rows, top], fitness[rows, top],
                 generational_evaluations(settings))  # fmt: skip
