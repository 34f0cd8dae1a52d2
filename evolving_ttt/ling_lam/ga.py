"""Ling and Lam (2011), Section 4: the improved genetic algorithm, and the traditional one of the baseline (chapter 16).

Both work on chromosomes of genes in [-1, 1] and maximize a fitness given as a function ``evaluate``
(chromosomes (k, n) -> fitness (k,)). Each iteration draws a fixed number of uniform numbers from the
run's generator, all at once (:func:`improved_draw_count`, :func:`traditional_draw_count`), so that the
lockstep engine of :mod:`evolving_ttt.ling_lam.engine` can draw many iterations ahead and still use the
very same numbers.

The operators are written for any leading batch axes, so that the readable GAs here (one run, a Python
loop over iterations) and the lockstep engine (many runs at once) share them:

* :func:`roulette`, the roulette-wheel choice of equations (21)-(22);
* :func:`crossover_candidates`, the four candidates (23)-(26); :func:`mutants`, the three mutants of (30);
  :func:`replace_worst`, the replacement of Figure 7;
* :func:`arithmetic_crossover` and :func:`nonuniform_mutation` for the traditional GA.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from evolving_ttt.game import check_count, check_instance, check_number, check_probability
from evolving_ttt.numerics import power, scalar_power

LOWER, UPPER = -1.0, 1.0
"""The bounds of every gene (the paper's para_min and para_max)."""

REPLACEMENT_READINGS = ("text", "figure")
"""How Figure 7 is read: after the accepted best mutant, do the second and third mutants still get their chance?

``text`` (our choice, the paper's prose): no, the three mutants compete one by one only when the random
number is at least p_a. ``figure`` (the pseudocode's indentation): yes, in both branches.
"""

TRADITIONAL_FORMS = ("steady-state", "generational")
"""How the baseline's "traditional GA" is read (chapter 22).

``steady-state`` (our reading of Figure 6, chapters 16-17): each iteration two parents make two children, which
replace the parents whatever their fitness; no elitism. ``generational`` (the textbook GA): each iteration (a
generation) makes a whole new population by roulette, crossover and mutation, and the best member of the old
population replaces the least fit child (elitism). One generation costs ``population`` evaluations, one
steady-state iteration 2.
"""

Evaluate = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ImprovedGASettings:
    """The improved GA's settings; the defaults are the paper's (population 10, w = 0.1, p_a = 0.5).

    ``subset_probability`` is the chance that a gene is in the second mutant's random subset (the paper
    says only "some randomly chosen"); ``replacement`` is one of :data:`REPLACEMENT_READINGS`.
    """

    population: int = 10
    iterations: int = 50_000
    w: float = 0.1
    acceptance: float = 0.5
    subset_probability: float = 0.5
    replacement: str = "text"

    def __post_init__(self) -> None:
        check_count(self.population, "population", 2)
        check_count(self.iterations, "iterations")
        check_probability(self.w, "w")
        check_probability(self.acceptance, "acceptance (p_a)")
        check_probability(self.subset_probability, "subset_probability")
        if self.replacement not in REPLACEMENT_READINGS:
            raise ValueError(f"replacement must be one of {REPLACEMENT_READINGS}; got {self.replacement!r}")

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TraditionalGASettings:
    """The baseline's GA: roulette, arithmetic crossover (p_c = 0.8), non-uniform mutation (p_m = 0.1, shape 5).

    One iteration follows the paper's Figure 6: two parents are chosen, crossed with probability
    ``crossover``, every gene of both children mutated with probability ``mutation``, and the children
    replace their parents. ``form`` (:data:`TRADITIONAL_FORMS`, chapter 22) reads it instead as a
    generational GA with elitism, whose iterations are generations.
    """

    population: int = 10
    iterations: int = 50_000
    crossover: float = 0.8
    mutation: float = 0.1
    shape: float = 5.0
    form: str = "steady-state"

    def __post_init__(self) -> None:
        check_count(self.population, "population", 2)
        check_count(self.iterations, "iterations")
        check_probability(self.crossover, "crossover (p_c)")
        check_probability(self.mutation, "mutation (p_m)")
        check_number(self.shape, "shape")
        if self.form not in TRADITIONAL_FORMS:
            raise ValueError(f"form must be one of {TRADITIONAL_FORMS}; got {self.form!r}")

    def as_dict(self) -> dict:
        return asdict(self)


PAPER_IMPROVED_GA = ImprovedGASettings()
PAPER_TRADITIONAL_GA = TraditionalGASettings()


def improved_draw_count(n_genes: int) -> int:
    """Uniform numbers per improved-GA iteration: 2 spins, 2 for the first mutant, 3 n for the others, 1 to accept."""
    return 5 + 3 * n_genes


def traditional_draw_count(n_genes: int) -> int:
    """Uniform numbers one traditional-GA iteration uses: 2 spins, 2 for the crossover, 3 per gene of each child."""
    return 4 + 6 * n_genes


def generational_draw_count(n_genes: int, population: int) -> int:
    """Uniform numbers one generation of the generational GA uses: a traditional iteration's per pair of children."""
    return (population + 1) // 2 * traditional_draw_count(n_genes)


def generational_evaluations(settings: TraditionalGASettings) -> int:
    """Fitness evaluations of a traditional-GA run: 2 per iteration, or ``population`` per generation."""
    per = settings.population if settings.form == "generational" else 2
    return settings.population + per * settings.iterations


def _genes_from_uniform(u: np.ndarray) -> np.ndarray:
    """Genes uniform in [-1, 1) from numbers uniform in [0, 1): the initial population's and the mutants' new values."""
    return LOWER + (UPPER - LOWER) * u


def random_chromosomes(rng: np.random.Generator, count: int, n_genes: int) -> np.ndarray:
    """``count`` chromosomes with genes uniform in [-1, 1) (the initial population)."""
    return _genes_from_uniform(rng.random((count, n_genes)))


def roulette(fitness: np.ndarray, u: np.ndarray | float) -> np.ndarray:
    """Roulette-wheel choice (21)-(22): index i with q_{i-1} < d <= q_i for d = 1 - u in (0, 1]; (...,).

    Computed without dividing: the wheel is the running sum of the fitnesses, d is scaled by their total,
    and the chosen index is the number of running sums below d (the last index if rounding leaves d above all).
    """
    fitness = np.asarray(fitness, dtype=float)
    running = np.cumsum(fitness, axis=-1)
    d = (1.0 - np.asarray(u, dtype=float)) * running[..., -1]
    return np.minimum((running < d[..., None]).sum(axis=-1), fitness.shape[-1] - 1)


def crossover_candidates(first: np.ndarray, second: np.ndarray, w: float) -> np.ndarray:
    """The four candidates (23)-(26) of two parents (..., n) -> (..., 4, n), clipped to the bounds against rounding.

    The mean of the parents; a pull towards the upper bound through their maximum; towards the lower bound
    through their minimum; and the mean of the bounds and of the parents, weighted by ``1 - w`` and ``w``.
    """
    high, low, both = np.maximum(first, second), np.minimum(first, second), first + second
    candidates = np.empty(high.shape[:-1] + (4, high.shape[-1]))
    np.multiply(both, 0.5, out=candidates[..., 0, :])  # (x + y) / 2: halving is exact either way
    np.add(UPPER * (1 - w), high * w, out=candidates[..., 1, :])
    np.add(LOWER * (1 - w), low * w, out=candidates[..., 2, :])
    np.divide((UPPER + LOWER) * (1 - w) + both * w, 2, out=candidates[..., 3, :])
    return np.clip(candidates, LOWER, UPPER, out=candidates)


def mutants(offspring: np.ndarray, draws: np.ndarray, subset_probability: float = 0.5) -> np.ndarray:
    """The three mutants of (30) from an offspring (..., n) and an iteration's draws (..., 5 + 3 n) -> (..., 3, n).

    Each changed gene gets a new value uniform in [-1, 1), that is a change uniform over all those that
    keep the gene in bounds. The first mutant changes one gene (chosen uniformly), the second a random
    subset (each gene with probability ``subset_probability``), the third every gene.
    """
    n = offspring.shape[-1]
    children = np.empty(offspring.shape[:-1] + (3, n))
    one, subset, every = children[..., 0, :], children[..., 1, :], children[..., 2, :]
    gene = np.minimum((draws[..., 2] * n).astype(int), n - 1)
    one[...] = offspring
    np.copyto(one, _genes_from_uniform(draws[..., 3:4]), where=np.arange(n) == gene[..., None])
    subset[...] = offspring
    picked = draws[..., 4 : 4 + n] < subset_probability
    np.copyto(subset, _genes_from_uniform(draws[..., 4 + n : 4 + 2 * n]), where=picked)
    every[...] = _genes_from_uniform(draws[..., 4 + 2 * n : 4 + 3 * n])
    return children


def replace_worst(
    population: np.ndarray, fitness: np.ndarray, candidates: np.ndarray, candidate_fitness: np.ndarray,
    u: np.ndarray, acceptance: float, replacement: str = "text",
) -> None:  # fmt: skip
    """Figure 7's replacement, in place, for populations (S, N, n) with fitness (S, N) and mutants (S, 3, n).

    With probability ``acceptance`` (u < p_a) the fittest mutant replaces the least fit member whatever its
    fitness; otherwise each mutant in turn replaces the least fit member of the updated population if it is
    strictly fitter. Ties go to the lowest index (argmax and argmin keep the first). ``replacement`` is one
    of :data:`REPLACEMENT_READINGS`.
    """
    rows = np.arange(len(population))
    accept = np.asarray(u) < acceptance
    worst = np.argmin(fitness, axis=1)
    best = np.argmax(candidate_fitness, axis=1)
    r, w, b = rows[accept], worst[accept], best[accept]
    population[r, w], fitness[r, w] = candidates[r, b], candidate_fitness[r, b]
    for k in range(3):
        worst = np.argmin(fitness, axis=1)
        active = ~accept if (k == 0 or replacement == "text") else np.ones_like(accept)
        better = active & (candidate_fitness[:, k] > fitness[rows, worst])
        r, w = rows[better], worst[better]
        population[r, w], fitness[r, w] = candidates[r, k], candidate_fitness[r, k]


def arithmetic_crossover(first: np.ndarray, second: np.ndarray, coin: np.ndarray, a: np.ndarray, probability: float):
    """Two children (..., 2, n): ``a p1 + (1 - a) p2`` and ``(1 - a) p1 + a p2`` if coin < p_c, else copies."""
    a, cross = np.asarray(a)[..., None], (np.asarray(coin) < probability)[..., None]
    children = np.stack([
        np.where(cross, a * first + (1 - a) * second, first),
        np.where(cross, (1 - a) * first + a * second, second),
    ], axis=-2)  # fmt: skip
    return np.clip(children, LOWER, UPPER)


def nonuniform_mutation(children: np.ndarray, draws: np.ndarray, iteration: int, settings: TraditionalGASettings):
    """Michalewicz's non-uniform mutation of children (..., 2, n), using draws (..., 6 n) -> (..., 2, n).

    Each gene mutates with probability p_m: up by ``(1 - x) (1 - r^((1 - t/T)^b))`` or down by
    ``(x + 1) (1 - r^((1 - t/T)^b))`` (a fair coin), r uniform and b the shape; the steps shrink to 0 as the
    iteration t reaches T.
    """
    shape = children.shape
    coins, r, up = (draws[..., k * 2 * shape[-1] : (k + 1) * 2 * shape[-1]].reshape(shape) for k in range(3))
    # The portable powers (evolving_ttt.numerics): ``**`` calls the C library's pow, chosen by processor.
    shrink = 1.0 - power(r, scalar_power(1.0 - iteration / settings.iterations, float(settings.shape)))
    moved = np.where(up < 0.5, children + (UPPER - children) * shrink, children - (children - LOWER) * shrink)
    return np.clip(np.where(coins < settings.mutation, moved, children), LOWER, UPPER)


@dataclass(frozen=True)
class GARun:
    """One or more runs of a GA (leading axis: the runs).

    Attributes
    ----------
    best_fitness
        (S, T + 1) the best fitness so far, at the start and after each iteration: the fitness of the
        trained network had the run stopped there (the final column is ``champion_fitness``).
    population_best
        (S, T + 1) the best fitness in the population at the same moments. For the improved GA it is
        ``best_fitness``; the traditional GA can lose its best, so its population's best can fall.
    population, fitness
        (S, N, n) and (S, N): the final populations.
    champions, champion_fitness
        (S, n) and (S,): the trained network of each run and its fitness. For the improved GA it is the
        fittest of the final population (the first of equals; its best fitness never falls, since only the
        least fit member is ever replaced). For the traditional GA, whose children replace their parents
        whatever their fitness, it is the fittest chromosome ever in the population (the first of equals).
    evaluations
        Fitness evaluations per run.
    """

    best_fitness: np.ndarray
    population_best: np.ndarray
    population: np.ndarray
    fitness: np.ndarray
    champions: np.ndarray
    champion_fitness: np.ndarray
    evaluations: int


def check_run_arguments(evaluate: object, n_genes: object, settings: object, settings_type: type,
                        progress: object) -> None:
    """Raise ``ValueError`` naming the argument of a GA run that has the wrong type (:func:`improved_ga` and kin)."""
    if not callable(evaluate):
        raise ValueError(f"evaluate must be a function from chromosomes (k, n) to fitness (k,); got {evaluate!r:.60}")
    check_count(n_genes, "n_genes")
    article = "an" if settings_type.__name__[0] in "AEIOU" else "a"
    check_instance(settings, settings_type, "settings", f"{article} {settings_type.__name__}")
    if not isinstance(progress, (bool, str)):
        raise ValueError(f"progress must be True, False or a label (a str); got {type(progress).__name__}")


def _progress(steps, progress: bool | str, label: str):
    if not progress:
        return steps
    from tqdm import tqdm

    return tqdm(steps, desc=progress if isinstance(progress, str) else label, unit="it", file=sys.stderr,
                mininterval=3.0)  # fmt: skip


def improved_ga(
    evaluate: Evaluate, n_genes: int, rng: np.random.Generator,
    settings: ImprovedGASettings = PAPER_IMPROVED_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """Readable improved GA (Figure 7): one run, one iteration at a time.

    Each iteration: two parents by roulette; the fittest of the four crossover candidates is the offspring;
    its three mutants compete for the places of the least fit members (:func:`replace_worst`).
    """
    check_run_arguments(evaluate, n_genes, settings, ImprovedGASettings, progress)
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    population = random_chromosomes(rng, settings.population, n_genes)
    fitness = evaluate(population)
    best = np.empty(settings.iterations + 1)
    best[0] = fitness.max()
    for t in _progress(range(settings.iterations), progress, "improved GA"):
        draws = rng.random(improved_draw_count(n_genes))
        first, second = roulette(fitness, draws[0]), roulette(fitness, draws[1])
        candidates = crossover_candidates(population[first], population[second], settings.w)
        offspring = candidates[np.argmax(evaluate(candidates))]
        children = mutants(offspring, draws, settings.subset_probability)
        replace_worst(population[None], fitness[None], children[None], evaluate(children)[None],
                      draws[-1:], settings.acceptance, settings.replacement)  # fmt: skip
        best[t + 1] = fitness.max()
    top = int(np.argmax(fitness))
    return GARun(best[None], best[None].copy(), population[None], fitness[None], population[top][None],
                 fitness[top][None], settings.population + 7 * settings.iterations)  # fmt: skip


def traditional_ga(
    evaluate: Evaluate, n_genes: int, rng: np.random.Generator,
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """Readable traditional GA (Figure 6): roulette, arithmetic crossover, non-uniform mutation, replacing the parents.

    If the roulette picks the same member twice, the second child takes its place.
    """
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    if settings.form == "generational":
        return generational_ga(evaluate, n_genes, rng, settings, progress)
    population = random_chromosomes(rng, settings.population, n_genes)
    fitness = evaluate(population)
    best, population_best = np.empty(settings.iterations + 1), np.empty(settings.iterations + 1)
    best[0] = population_best[0] = fitness.max()
    top = int(np.argmax(fitness))
    champion, champion_fitness = population[top].copy(), fitness[top]
    for t in _progress(range(settings.iterations), progress, "traditional GA"):
        draws = rng.random(traditional_draw_count(n_genes))
        first, second = int(roulette(fitness, draws[0])), int(roulette(fitness, draws[1]))
        children = arithmetic_crossover(population[first], population[second], draws[2], draws[3], settings.crossover)
        children = nonuniform_mutation(children, draws[4:], t + 1, settings)
        children_fitness = evaluate(children)
        for slot, k in ((first, 0), (second, 1)):
            population[slot], fitness[slot] = children[k], children_fitness[k]
        population_best[t + 1] = fitness.max()
        k = int(np.argmax(children_fitness))
        if children_fitness[k] > champion_fitness:
            champion, champion_fitness = children[k].copy(), children_fitness[k]
        best[t + 1] = champion_fitness
    return GARun(best[None], population_best[None], population[None], fitness[None], champion[None],
                 np.array([champion_fitness]), settings.population + 2 * settings.iterations)  # fmt: skip


def generational_ga(
    evaluate: Evaluate, n_genes: int, rng: np.random.Generator,
    settings: TraditionalGASettings = PAPER_TRADITIONAL_GA, progress: bool | str = False,
) -> GARun:  # fmt: skip
    """Readable generational GA with elitism, the ``"generational"`` reading of Figure 6 (chapter 22).

    Each generation t: ``ceil(N / 2)`` pairs of parents by roulette on the old population, each pair crossed and
    mutated exactly as one steady-state iteration does (the same operators and draws per pair); the first N
    children are the new population, and the best member of the old one (the first of equals) replaces the least
    fit child. The best fitness never falls, so the trained network is the fittest of the final population.
    """
    check_run_arguments(evaluate, n_genes, settings, TraditionalGASettings, progress)
    check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
    size, per_pair = settings.population, traditional_draw_count(n_genes)
    population = random_chromosomes(rng, size, n_genes)
    fitness = evaluate(population)
    best = np.empty(settings.iterations + 1)
    best[0] = fitness.max()
    for t in _progress(range(settings.iterations), progress, "generational GA"):
        draws = rng.random(generational_draw_count(n_genes, size))
        children = []
        for k in range(0, len(draws), per_pair):
            d = draws[k : k + per_pair]
            first, second = int(roulette(fitness, d[0])), int(roulette(fitness, d[1]))
            pair = arithmetic_crossover(population[first], population[second], d[2], d[3], settings.crossover)
            children.append(nonuniform_mutation(pair, d[4:], t + 1, settings))
        children = np.concatenate(children)[:size]
        children_fitness = evaluate(children)
        elite, worst = int(np.argmax(fitness)), int(np.argmin(children_fitness))
        children[worst], children_fitness[worst] = population[elite], fitness[elite]
        population, fitness = children, children_fitness
        best[t + 1] = fitness.max()
    top = int(np.argmax(fitness))
    return GARun(best[None], best[None].copy(), population[None], fitness[None], population[top][None],
                 fitness[top][None], generational_evaluations(settings))  # fmt: skip
