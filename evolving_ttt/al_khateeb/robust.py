"""Al-Khateeb (2012): the co-evolution with the settings of the robustness study, readable version (chapter 21).

Chapter 14's :func:`~evolving_ttt.al_khateeb.evaluator.coevolve_readable` runs the paper's procedure as the book
reads it. The robustness study of chapter 21 varies what the paper leaves open or fixes without saying why, and
:func:`coevolve_general_readable` runs any of those settings of
:class:`~evolving_ttt.al_khateeb.evaluator.AlKhateebSettings`, one game at a time:

* the **depth** of the players' search (``player.depth``; :mod:`evolving_ttt.al_khateeb.search`);
* the **share that breeds**: ``parents`` survive and each makes ``population / parents - 1`` offspring;
* **one step size per player** instead of one per weight (``step_sizes``): the same mutation, with one normal
  number per offspring for its step size;
* the book's remedy for cycling, not the paper's: a **hall of fame** (Rosin and Belew, 1997). Every network also
  plays ``hall_of_fame`` past champions (networks ranked first in earlier generations, drawn at random with
  replacement), once as X and once as O, and those results count in its total for selection. The recorded
  totals stay those of the round robin.

With the paper's settings it gives exactly what ``coevolve_readable`` gives, and for every setting exactly what
the engine (:func:`evolving_ttt.al_khateeb.engine.coevolve`) gives for the same seed; the tests check both.
"""

from __future__ import annotations

import numpy as np

from evolving_ttt.al_khateeb.evaluator import (
    EVALUATOR_WEIGHTS,
    INITIAL_STEP_SIZE,
    PAPER_AL_KHATEEB,
    PAPER_ONE_PLY,
    AlKhateebSettings,
    OnePlySettings,
    ReadableRun,
    coevolution_game,
    draw_coevolution,
    random_evaluators,
    rank_population,
    round_robin_results,
    round_robin_totals,
    self_adaptive_mutation,
    trial_generators,
)
from evolving_ttt.al_khateeb.search import search_move
from evolving_ttt.game import check_instance
from evolving_ttt.seeds import check_seed


def hall_of_fame_points(
    population: np.ndarray, champions: np.ndarray, settings: OnePlySettings = PAPER_ONE_PLY
) -> np.ndarray:
    """Each network's points against the champions: +1 a win, -1 a loss, one game as X and one as O against each
    (chapter 21)."""
    points = np.zeros(len(population), dtype=np.int64)
    for i, network in enumerate(population):
        for champion in champions:
            points[i] += coevolution_game(network, champion, settings, search_move)[0]  # as X: X's win is +1
            points[i] -= coevolution_game(champion, network, settings, search_move)[0]  # as O: X's win is -1
    return points


def coevolve_general_readable(
    settings: AlKhateebSettings = PAPER_AL_KHATEEB, seed: int = 1, run: int = 0
) -> ReadableRun:
    """Run number ``run`` of an experiment with any of the study's settings, one game at a time (chapter 21).

    The steps of :func:`~evolving_ttt.al_khateeb.evaluator.coevolve_readable`, with the players' search, the
    number of offspring per parent, the step sizes and the hall of fame as ``settings`` says.
    """
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    seed = check_seed(seed)
    if isinstance(run, bool) or not isinstance(run, (int, np.integer)) or not 0 <= run < settings.runs:
        raise ValueError(f"run must be a run number from 0 to {settings.runs - 1}; got {run!r}")
    rng = trial_generators(seed, settings.runs)[run]
    n, p, k, g_count = settings.population, settings.parents, settings.offspring, settings.generations
    weights = random_evaluators(rng, n)
    steps = np.full((n, EVALUATOR_WEIGHTS), INITIAL_STEP_SIZE)
    ids = np.arange(n)
    totals, best_weights = np.zeros((g_count, n), dtype=np.int64), np.zeros((g_count, EVALUATOR_WEIGHTS))
    best_ids, mean_step = np.zeros(g_count, dtype=np.int64), np.zeros(g_count)
    for g in range(g_count):
        draws = draw_coevolution(rng, settings)
        totals[g] = round_robin_totals(round_robin_results(weights, settings.player, search_move))
        mean_step[g] = steps.mean()
        fitness = totals[g].copy()
        if settings.hall_of_fame and g > 0:  # champions of earlier generations, drawn with replacement
            champions = best_weights[(draws.hall_keys * g).astype(np.int64)]
            fitness += hall_of_fame_points(weights, champions, settings.player)
        ranked = rank_population(fitness, draws.tie_keys)[:p]
        best_weights[g], best_ids[g] = weights[ranked[0]], ids[ranked[0]]
        breeders = ranked[np.arange(k) % p]  # parent i makes offspring i, i + p, i + 2p, ...
        offspring, offspring_steps = self_adaptive_mutation(
            weights[breeders], steps[breeders], draws.step_normals, draws.weight_normals
        )
        weights = np.concatenate([weights[ranked], offspring])
        steps = np.concatenate([steps[ranked], offspring_steps])
        ids = np.concatenate([ids[ranked], n + g * k + np.arange(k)])
    return ReadableRun(totals, best_weights, best_ids, mean_step, weights, steps)
