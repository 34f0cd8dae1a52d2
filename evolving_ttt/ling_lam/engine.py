"""Many runs of the two GAs in lockstep (chapter 16; used by chapter 17 and the command line).

The runs' iterations are independent, so all runs advance together: the populations are stacked into
an array (S, N, n), each operator of :mod:`evolving_ttt.ling_lam.ga` works on all runs at once, and one
call of ``evaluate`` scores every run's candidates. Run ``s`` draws only from its own generator, a block
of iterations at a time: ``rng.random((B, D))`` gives the same numbers as B calls of ``rng.random(D)``,
so each run is, bit for bit, the readable GA's run with that generator (tested, and checked in chapter 16).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evolving_ttt.game import check_instance
from evolving_ttt.ling_lam.ga import (
    PAPER_IMPROVED_GA,
    PAPER_TRADITIONAL_GA,
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

DRAW_BLOCK = 500
"""Iterations whose random numbers are drawn at once."""


def _check_generators(rngs: object) -> None:
    if isinstance(rngs, (str, bytes)) or not isinstance(rngs, Sequence) or not rngs:
        raise ValueError(f"rngs must be a non-empty list of numpy.random.Generator; got {type(rngs).__name__}")
    for rng in rngs:
        check_instance(rng, np.random.Generator, "each of rngs", "a numpy.random.Generator")


def _draw_blocks(rngs: Sequence[np.random.Generator], iterations: int, count: int):
    """Yield each iteration's draws (S, count), drawn a block of iterations at a time from each run's generator."""
    for start in range(0, iterations, DRAW_BLOCK):
        size = min(DRAW_BLOCK, iterations - start)
        block = np.stack([rng.random((size, count)) for rng in rngs], axis=1)  # (size, S, count)
        yield from block


def improved_ga_lockstep(
    evaluate: Evaluate, n_genes: int, rngs: Sequence[np.random.Generator],
    settings: ImprovedGASettings = PAPER_IMPROVED_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.improved_ga` for ``len(rngs)`` runs at once; run s uses ``rngs[s]``."""
    check_run_arguments(evaluate, n_genes, settings, ImprovedGASettings, progress)
    _check_generators(rngs)
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
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.traditional_ga` for ``len(rngs)`` runs at once; run s uses ``rngs[s]``."""
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    _check_generators(rngs)
    if settings.form == "generational":
        return generational_ga_lockstep(evaluate, n_genes, rngs, settings, progress)
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
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """:func:`~evolving_ttt.ling_lam.ga.generational_ga` for ``len(rngs)`` runs at once (chapter 22).

    Every pair of every run is spun, crossed and mutated at once: the draws of a generation, (S, pairs, per pair).
    """
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    _check_generators(rngs)
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
