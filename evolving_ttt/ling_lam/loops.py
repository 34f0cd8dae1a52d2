"""Ling and Lam's GAs compiled whole: one run's iterations in one compiled loop, bit for bit the readable GAs.

The readable GAs of :mod:`evolving_ttt.ling_lam.ga` spend most of their time in Python and in numpy calls on small
arrays; the lockstep engine (:mod:`evolving_ttt.ling_lam.engine`) shares those calls among many runs, but a sweep
runs one run per task. Here a block of iterations runs in compiled loops (numba,
:data:`~evolving_ttt.numerics.JIT_OPTIONS`, never ``fastmath``), each operator written element by element with
exactly the floating-point operations of its numpy version in :mod:`evolving_ttt.ling_lam.ga` (``roulette``,
``crossover_candidates``, ``mutants``, ``replace_worst``, ``arithmetic_crossover``, ``nonuniform_mutation``), in the
same order, on the very numbers the readable GA draws (the engine hands each block the run's draws).

The fitness (31) is a sum of whole scores, one per training position, over their best total: whole numbers add
exactly in any order, and dividing by the same positive total keeps their order. So each network is scored a chunk
of positions at a time, the positions sorted by their best score (:class:`Scoring`), and only as far as the GA's
choice needs: a mutant until it surely cannot beat the member it would replace (:func:`_beats`); the crossover
candidates until one is surely the first of the fittest (:func:`_fittest`; the offspring's fitness is never kept).
A fitness the GA keeps is always scored whole. An NNDTF (simultaneous order) is computed from the layers of an
earlier network kept on the same chunk (:data:`REUSE`): only the static outputs and z whose genes differ in their
bits are computed again (:func:`_changes`, :func:`_nndtf_layers`), with the very operations of
:func:`~evolving_ttt.ling_lam.fused.nndtf_network`. Once the population has gathered, each crossover candidate shares
most of its neurons with the same candidate of earlier iterations, and the first mutant differs from the offspring
in one gene. A chunk scored whole (the traditional GAs') is padded to whole vector registers (:func:`_padded`). The
GA's choices, and every fitness it keeps, are the readable ones.

* :class:`Scoring`: the training positions in chunks, and the bounds;
* :func:`population_fitness`: the fitness of every chromosome of a population;
* :func:`improved_block`, :func:`traditional_block`, :func:`generational_block`: a block of iterations of one run.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numba
import numpy as np

from evolving_ttt.ling_lam.fused import N_INPUTS, SCRATCH_LAYERS, _copy, _exponent, baseline_network, nndtf_network
from evolving_ttt.ling_lam.network import TrainingSet
from evolving_ttt.numerics import JIT_OPTIONS, exp_nonpositive, power_scalar, scalar_power

LOWER, UPPER = -1.0, 1.0
"""The genes' bounds (:data:`evolving_ttt.ling_lam.ga.LOWER` and ``UPPER``)."""

CHUNK = 24
"""Positions scored between two looks at the bounds: a multiple of :data:`LANES` (16 and 32 measured slower; 20
leaves a part-filled vector register in every loop over the boards)."""

LANES = 8
"""Boards a vector register holds (8 doubles in AVX-512): a chunk scored whole is padded to a multiple of this."""

STEPS = 17
"""The columns of :attr:`~evolving_ttt.ling_lam.network.TrainingSet.score_by_step`: ``ceil(8 y) + 8``, 0 to 16."""


class Scoring(NamedTuple):
    """A training set laid out for the compiled loops.

    Attributes
    ----------
    chunks
        (C, 9, CHUNK) the encoded positions, sorted by their best score (highest first), input i of each position in
        row i; the last chunk is padded with empty boards.
    scores
        (C, CHUNK, 17) the score of each output step on each position (:attr:`TrainingSet.score_by_step`, 0 for the
        padding).
    bounds, floors
        (C + 1,) int64: ``bounds[c]`` is the sum of the best scores of the positions in chunks c onwards, ``floors[c]``
        the sum of their worst scores.
    best_total
        The denominator of (31), as a float.
    """

    chunks: np.ndarray
    scores: np.ndarray
    bounds: np.ndarray
    floors: np.ndarray
    best_total: float


def scoring(training: TrainingSet, chunk: int = CHUNK) -> Scoring:
    """``training`` in chunks of ``chunk`` positions, the most valuable first (:class:`Scoring`)."""
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk must be a whole number of positions >= 1; got {chunk!r}")
    best = training.score_by_step.max(axis=1)
    order = np.argsort(-best, kind="stable")
    count = -(-len(order) // chunk)
    inputs = np.zeros((count * chunk, N_INPUTS))
    scores = np.zeros((count * chunk, STEPS), dtype=np.int64)
    inputs[: len(order)], scores[: len(order)] = training.inputs[order], training.score_by_step[order]
    chunks = np.ascontiguousarray(inputs.reshape(count, chunk, N_INPUTS).transpose(0, 2, 1))
    per_chunk = [part.reshape(count, chunk).sum(axis=1) for part in (scores.max(axis=1), scores.min(axis=1))]
    sums = [np.concatenate([np.cumsum(part[::-1])[::-1], [0]]).astype(np.int64) for part in per_chunk]
    return Scoring(chunks, scores.reshape(count, chunk, STEPS), *sums, float(training.best_total))


@numba.njit(inline="always", **JIT_OPTIONS)
def _moves_score(scores, c, outputs) -> int:
    """The summed scores of the moves of ``outputs`` on the positions of chunk ``c``: the step of output y is
    :func:`~evolving_ttt.ling_lam.network.output_steps`' ``ceil(8 y)``, clipped to [-8, 8]."""
    total = 0
    for p in range(outputs.size):
        step = math.ceil(8.0 * outputs[p])
        total += scores[c, p, int(min(max(step, -8.0), 8.0)) + 8]
    return total


@numba.njit(inline="always", **JIT_OPTIONS)
def _chunk_score(g, nndtf, hidden, sequential, chunks, scores, c, scratch, outputs) -> int:
    """The summed scores of the moves of network ``g`` on the positions of chunk ``c``."""
    if nndtf:
        nndtf_network(g, chunks[c], hidden, sequential, scratch, outputs)
    else:
        baseline_network(g, chunks[c], hidden, scratch[0], outputs)
    return _moves_score(scores, c, outputs)


@numba.njit(inline="always", **JIT_OPTIONS)
def _transfer(f: float, mean: float, spread: float) -> float:
    """:func:`~evolving_ttt.ling_lam.fused.transfer_layer`'s three passes on one number: the same operations."""
    d = f - mean
    return math.copysign(1.0 - exp_nonpositive(_exponent(d, spread)), d)  # the exponent is in [-40, 0]


STATIC, DYNAMIC = 1, 2
"""The flags of ``changed[j]`` (:func:`_nndtf_layers`): neuron j's static output, its z, must be computed."""


@numba.njit(**JIT_OPTIONS)
def _nndtf_layers(g, columns, hidden, changed, static, z, outputs) -> None:
    """:func:`~evolving_ttt.ling_lam.fused.nndtf_network` (simultaneous order) on the boards ``columns`` (9, P), with
    the very operations of its three layers, except that only the static outputs (``static``, (hidden, P)) and z
    (``z``) that ``changed`` flags (:data:`STATIC`, :data:`DYNAMIC`) are computed: the others are kept from a network
    whose genes they depend on are the same. Each neuron's loop runs over the boards (a vector register of boards at
    a time); every sum starts from 0 and adds its terms in order."""
    boards = columns.shape[1]
    static_mean, static_spread, mean_link = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    spread_link, output_weights, output_mean = (N_INPUTS + 3) * hidden, (N_INPUTS + 4) * hidden, (N_INPUTS + 5) * hidden
    for j in range(hidden):
        if changed[j] & STATIC:
            mean, spread = g[static_mean + j], g[static_spread + j]
            for p in range(boards):
                total = 0.0
                for i in range(N_INPUTS):
                    total += columns[i, p] * g[i * hidden + j]
                static[j, p] = _transfer(total, mean, spread)
    for j in range(hidden):
        if changed[j] & DYNAMIC:
            after, before = (j + 1) % hidden, (j - 1) % hidden
            link_mean, link_spread = g[mean_link + j], g[spread_link + j]
            for p in range(boards):
                z[j, p] = _transfer(static[j, p], link_mean * static[after, p], link_spread * static[before, p])
    for p in range(boards):
        outputs[p] = 0.0
    for j in range(hidden):
        weight = g[output_weights + j]
        for p in range(boards):
            outputs[p] += z[j, p] * weight
    mean, spread = g[output_mean], g[output_mean + 1]
    for p in range(boards):
        outputs[p] = _transfer(outputs[p], mean, spread)


@numba.njit(inline="always", **JIT_OPTIONS)
def _changes(g, kept, neuron, kind, changed) -> None:
    """``changed[j]``: what of neuron j must be computed for the NNDTF ``g`` from the layers of the NNDTF ``kept``
    (then ``kept`` becomes ``g``). A gene counts as changed unless its bits are the same. Gene i belongs to neuron
    ``neuron[i]`` and changes ``kind[i]`` of it (:func:`gene_roles`); a changed static output changes z of the
    neuron and of its two neighbours too."""
    hidden = changed.size
    for j in range(hidden):
        changed[j] = 0
    bits, kept_bits = g.view(np.int64), kept.view(np.int64)
    for i in range(g.size):
        if bits[i] != kept_bits[i]:
            kept_bits[i] = bits[i]
            changed[neuron[i]] |= kind[i]
    for j in range(hidden):  # marking z leaves the flags STATIC as they are
        if changed[j] & STATIC:
            changed[j - 1 if j else hidden - 1] |= DYNAMIC
            changed[j] |= DYNAMIC
            changed[j + 1 if j + 1 < hidden else 0] |= DYNAMIC


@numba.njit(**JIT_OPTIONS)
def gene_roles(hidden: int) -> tuple[np.ndarray, np.ndarray]:
    """For each gene of an NNDTF with ``hidden`` neurons: its neuron, and what of it the gene changes
    (:data:`STATIC`: an input weight, the static mean or spread; :data:`DYNAMIC`: a link; 0: an output gene)."""
    n = (N_INPUTS + 5) * hidden + 2
    neuron, kind = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i in range((N_INPUTS + 4) * hidden):
        neuron[i], kind[i] = i % hidden, STATIC if i < (N_INPUTS + 2) * hidden else DYNAMIC
    return neuron, kind


class Memory(NamedTuple):
    """The layers :func:`improved_block` keeps (:data:`REUSE`).

    Attributes
    ----------
    layers
        (slots, 2, hidden, P): in each slot, the static outputs and z of an NNDTF on the boards of one chunk.
    kept
        (slots, n): the genes of that NNDTF (nan: none yet).
    neuron, kind
        :func:`gene_roles`.
    changed
        (hidden,) int64: the flags of :func:`_changes`.
    """

    layers: np.ndarray
    kept: np.ndarray
    neuron: np.ndarray
    kind: np.ndarray
    changed: np.ndarray


PLAIN, KEEP, REUSE = 0, 1, 2
"""What :func:`_score_next` does besides scoring (``reuse[0]``), for an NNDTF in the simultaneous order. Each
network is computed in a slot of ``memory`` (its static outputs and z on one chunk) whose network's genes are in
the same row of ``kept``: only what the genes that differ change is computed again (:func:`_changes`). With
:data:`KEEP` (the crossover candidates) candidate k on chunk c takes slot k C + c (C chunks), which holds the
candidate k of an earlier iteration: in a population that has gathered, most of its neurons are the same. With
:data:`REUSE` the first mutant takes the slots of candidate ``reuse[1]``, which it differs from in one gene. Any
other network (:data:`PLAIN`, the other mutants) is computed whole, in the last slot."""


@numba.njit(inline="always", **JIT_OPTIONS)
def _score_next(k, genes, done, partial, nndtf, hidden, sequential, chunks, scores, scratch, outputs, memory,
                reuse) -> None:  # fmt: skip
    """Score the next chunk of ``genes[k]`` into ``partial[k]`` and ``done[k]`` (:data:`REUSE` for the roles).

    An NNDTF in the simultaneous order is computed in a slot of ``memory`` (:class:`Memory`), any other network by
    :func:`_chunk_score` in ``scratch``. Compiled into its callers (``inline="always"``, as are :func:`_beats`,
    :func:`_fittest`, :func:`_changes` and :func:`_moves_score`): a call that passes arrays counts references to
    them, which cost about a tenth of the improved GA's time.
    """
    c, count = done[k], chunks.shape[0]
    if not nndtf or sequential:
        partial[k] += _chunk_score(genes[k], nndtf, hidden, sequential, chunks, scores, c, scratch, outputs)
        done[k] += 1
        return
    kept, changed = memory.kept, memory.changed
    slot = memory.layers.shape[0] - 1
    if reuse[0] == KEEP:
        slot = k * count + c
    elif reuse[0] == REUSE and k == 0:
        slot = reuse[1] * count + c
    if slot < memory.layers.shape[0] - 1:
        _changes(genes[k], kept[slot], memory.neuron, memory.kind, changed)
    else:
        changed[:] = STATIC | DYNAMIC
    _nndtf_layers(genes[k], chunks[c], hidden, changed, memory.layers[slot, 0], memory.layers[slot, 1], outputs)
    partial[k] += _moves_score(scores, c, outputs)
    done[k] += 1


@numba.njit(inline="always", **JIT_OPTIONS)
def _beats(k, threshold, genes, done, partial, nndtf, hidden, sequential, chunks, scores, bounds, best_total,
           scratch, outputs, memory, reuse) -> bool:  # fmt: skip
    """Whether the fitness of ``genes[k]`` exceeds ``threshold``; if it does, ``partial[k]`` is its whole score.

    ``done[k]`` chunks of its positions are scored so far, their scores summed in ``partial[k]``. More are scored
    only while the best fitness the rest could give, ``(partial + bounds[done]) / best_total``, exceeds the
    threshold: division by a positive number keeps the order, so a bound at or below the threshold means the
    fitness is too. With ``threshold = -inf`` every chunk is scored (the exact fitness).
    """
    while True:
        if float(partial[k] + bounds[done[k]]) / best_total <= threshold:
            return False
        if done[k] == chunks.shape[0]:
            return True
        _score_next(k, genes, done, partial, nndtf, hidden, sequential, chunks, scores, scratch, outputs, memory,
                    reuse)  # fmt: skip


@numba.njit(inline="always", **JIT_OPTIONS)
def _whole_fitness(g, nndtf, hidden, sequential, chunks, scores, best_total, scratch, outputs) -> float:
    """The fitness (31) of network ``g``, every position scored: the summed scores over the best total."""
    total = 0
    for c in range(chunks.shape[0]):
        total += _chunk_score(g, nndtf, hidden, sequential, chunks, scores, c, scratch, outputs)
    return float(total) / best_total


@numba.njit(inline="always", **JIT_OPTIONS)
def _fitness_of_all(population, out, nndtf, hidden, sequential, chunks, scores, best_total, scratch, outputs) -> None:
    for m in range(population.shape[0]):
        out[m] = _whole_fitness(population[m], nndtf, hidden, sequential, chunks, scores, best_total, scratch, outputs)


@numba.njit(**JIT_OPTIONS)
def population_fitness(population, out, nndtf, hidden, sequential, chunks, scores, bounds, floors,
                       best_total) -> None:  # fmt: skip
    """``out[m]``: the fitness (31) of every chromosome of ``population`` (M, n), every position scored."""
    scratch, outputs = np.empty((SCRATCH_LAYERS, hidden, chunks.shape[2])), np.empty(chunks.shape[2])
    _fitness_of_all(population, out, nndtf, hidden, sequential, chunks, scores, best_total, scratch, outputs)


@numba.njit(**JIT_OPTIONS)
def _roulette(fitness, u) -> int:
    """:func:`~evolving_ttt.ling_lam.ga.roulette`: the running sums in order, d = (1 - u) total, how many below d."""
    total = 0.0
    for i in range(fitness.size):
        total += fitness[i]
    d, running, below = (1.0 - u) * total, 0.0, 0
    for i in range(fitness.size):  # the same running sums again
        running += fitness[i]
        if running < d:
            below += 1
    return min(below, fitness.size - 1)


@numba.njit(**JIT_OPTIONS)
def _first_max(values) -> int:
    """``np.argmax``: the first of equals."""
    top = 0
    for i in range(1, values.size):
        if values[i] > values[top]:
            top = i
    return top


@numba.njit(**JIT_OPTIONS)
def _first_min(values) -> int:
    """``np.argmin``: the first of equals."""
    low = 0
    for i in range(1, values.size):
        if values[i] < values[low]:
            low = i
    return low


@numba.njit(**JIT_OPTIONS)
def _clip(x: float) -> float:
    return min(max(x, LOWER), UPPER)


@numba.njit(inline="always", **JIT_OPTIONS)
def _fittest(genes, count, done, partial, nndtf, hidden, sequential, chunks, scores, bounds, floors, best_total,
             scratch, outputs, memory, reuse, work) -> int:  # fmt: skip
    """``np.argmax`` of the fitness of ``genes[:count]`` (the first of equals), each scored only as far as it takes.

    Each fitness lies between ``(partial + floors[done]) / best_total`` and ``(partial + bounds[done]) / best_total``.
    Candidate k is out once another one, j, is surely fitter: k's highest below j's lowest, or equal to it with j
    before k (then k is at most equal to an earlier one). Until one is left, the candidate with the fewest chunks
    scored (the first of those) scores its next chunk; when all are scored the first of the fittest is left.
    ``work`` is (3, count) scratch space.
    """
    high, low, alive = work[0], work[1], work[2]
    for k in range(count):
        high[k] = float(partial[k] + bounds[done[k]]) / best_total
        low[k] = float(partial[k] + floors[done[k]]) / best_total
        alive[k] = True
    while True:
        left, next_k = 0, -1
        for k in range(count):
            if alive[k]:
                for j in range(count):
                    if alive[j] and j != k and (high[k] < low[j] or (high[k] <= low[j] and j < k)):
                        alive[k] = False
                        break
            if alive[k]:
                left += 1
                if next_k < 0 or done[k] < done[next_k]:
                    next_k = k
        if left == 1:
            return next_k
        _score_next(next_k, genes, done, partial, nndtf, hidden, sequential, chunks, scores, scratch, outputs, memory,
                    reuse)  # fmt: skip
        high[next_k] = float(partial[next_k] + bounds[done[next_k]]) / best_total
        low[next_k] = float(partial[next_k] + floors[done[next_k]]) / best_total


@numba.njit(**JIT_OPTIONS)
def improved_block(population, fitness, draws, best, start, up, down, middle, w, acceptance, subset_probability,
                   figure, nndtf, hidden, sequential, chunks, scores, bounds, floors, best_total) -> None:  # fmt: skip
    """Iterations ``start .. start + len(draws) - 1`` of one improved-GA run (Figure 7), in place.

    ``population`` (N, n) and ``fitness`` (N,) are the run's; ``draws`` (B, 5 + 3 n) the iterations' uniform
    numbers; ``best[start + i + 1]`` receives the best fitness after iteration ``start + i``. ``up``, ``down`` and
    ``middle`` are :func:`~evolving_ttt.ling_lam.ga.crossover_candidates`' constants ``UPPER (1 - w)``,
    ``LOWER (1 - w)`` and ``(UPPER + LOWER) (1 - w)``; ``figure`` is the ``"figure"`` reading of the replacement.
    """
    n, count, chunk = population.shape[1], chunks.shape[0], chunks.shape[2]
    candidates, children = np.empty((4, n)), np.empty((3, n))
    done, partial = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
    scratch, outputs = np.empty((SCRATCH_LAYERS, hidden, chunk)), np.empty(chunk)
    incremental = nndtf and not sequential  # networks computed from kept layers: the simultaneous order
    slots = 4 * count + 1 if incremental else 1
    memory = Memory(np.empty((slots, 2, hidden, chunk)), np.full((slots, n), np.nan), *gene_roles(hidden),
                    np.empty(hidden, np.int64))  # fmt: skip
    reuse, work = np.zeros(2, dtype=np.int64), np.empty((3, 4))
    for i in range(draws.shape[0]):
        d = draws[i]
        first, second = _roulette(fitness, d[0]), _roulette(fitness, d[1])
        for g in range(n):  # crossover_candidates (23)-(26)
            x, y = population[first, g], population[second, g]
            high, low, both = (x if x >= y else y), (x if x <= y else y), x + y
            candidates[0, g] = _clip(both * 0.5)
            candidates[1, g] = _clip(up + high * w)
            candidates[2, g] = _clip(down + low * w)
            candidates[3, g] = _clip((middle + both * w) / 2.0)
        accept = d[4 + 3 * n] < acceptance  # replace_worst (Figure 7)
        # _fittest and _beats are compiled into this loop (inline="always"), so each is called from one place, in
        # the loops over stage and step below: a second call of each would compile their code twice.
        reuse[0], accepted = (KEEP if incremental else PLAIN), -1
        for stage in range(2):  # the crossover candidates' fittest, then, if accepted, the mutants' fittest
            done[:], partial[:] = 0, 0
            if stage == 1 and not accept:
                break
            fittest = _fittest(candidates if stage == 0 else children, 4 - stage, done, partial, nndtf, hidden,
                               sequential, chunks, scores, bounds, floors, best_total, scratch, outputs, memory, reuse,
                               work)  # fmt: skip
            if stage == 1:
                accepted = fittest
                continue
            offspring = candidates[fittest]
            gene = min(int(d[2] * n), n - 1)  # mutants (30)
            for g in range(n):
                children[0, g] = offspring[g]
                children[1, g] = (LOWER + (UPPER - LOWER) * d[4 + n + g] if d[4 + g] < subset_probability
                                  else offspring[g])  # fmt: skip
                children[2, g] = LOWER + (UPPER - LOWER) * d[4 + 2 * n + g]
            children[0, gene] = LOWER + (UPPER - LOWER) * d[3]
            reuse[0], reuse[1] = (REUSE if incremental else PLAIN), fittest
        for step in range(-1, 3):  # the accepted mutant joins the population, then each mutant k = step competes
            worst = _first_min(fitness)
            if step < 0:
                if not accept:
                    continue
                k, threshold = accepted, -math.inf  # its whole score: it replaces the worst member
            else:
                k, threshold = step, fitness[worst]
                if accept and not (k > 0 and figure):  # with "figure", mutants 1 and 2 compete even after one joined
                    continue
            if _beats(k, threshold, children, done, partial, nndtf, hidden, sequential, chunks, scores, bounds,
                      best_total, scratch, outputs, memory, reuse):  # fmt: skip
                _copy(population[worst], children[k])
                fitness[worst] = float(partial[k]) / best_total
        best[start + i + 1] = fitness[_first_max(fitness)]


@numba.njit(**JIT_OPTIONS)
def _pair(population, fitness, d, exponent, crossover, mutation, out, mutating, powers) -> None:
    """Two children ``out`` (2, n) of one steady-state iteration from its draws ``d`` (4 + 6 n): two spins, the
    :func:`~evolving_ttt.ling_lam.ga.arithmetic_crossover`, the :func:`~evolving_ttt.ling_lam.ga.nonuniform_mutation`
    with the exponent ``(1 - t/T)^b`` (a power only for the genes that mutate: their places gathered in ``mutating``
    and their powers computed in one loop, on vector registers, into ``powers``, both (2 n,) scratch space);
    returns the parents' indices."""
    n = population.shape[1]
    first, second = _roulette(fitness, d[0]), _roulette(fitness, d[1])
    a, cross = d[3], d[2] < crossover
    for g in range(n):
        x, y = population[first, g], population[second, g]
        out[0, g] = _clip(a * x + (1 - a) * y if cross else x)
        out[1, g] = _clip((1 - a) * x + a * y if cross else y)
    count = 0
    for place in range(2 * n):  # child place // n, gene place % n: the coin
        if d[4 + place] < mutation:
            mutating[count] = place
            count += 1
    for m in range(count):  # then r
        powers[m] = power_scalar(d[4 + 2 * n + mutating[m]], exponent)
    for m in range(count):  # and the direction
        place = mutating[m]
        c, g = place // n, place % n
        x, shrink = out[c, g], 1.0 - powers[m]
        moved = x + (UPPER - x) * shrink if d[4 + 4 * n + place] < 0.5 else x - (x - LOWER) * shrink
        out[c, g] = _clip(moved)
    return first, second


@numba.njit(**JIT_OPTIONS)
def _padded(chunks, scores):
    """``chunks`` and ``scores`` with each chunk padded with empty boards (inputs 0, every score 0) to a multiple
    of :data:`LANES`, so that the network's loops over the boards run on whole vector registers (a board's result
    does not depend on the others; a padding board adds 0 to any score)."""
    count, _, boards = chunks.shape
    wide = -(-boards // LANES) * LANES
    padded, padded_scores = np.zeros((count, N_INPUTS, wide)), np.zeros((count, wide, STEPS), dtype=scores.dtype)
    for c in range(count):
        for i in range(N_INPUTS):
            _copy(padded[c, i], chunks[c, i])
        for p in range(boards):
            _copy(padded_scores[c, p], scores[c, p])
    return padded, padded_scores


@numba.njit(**JIT_OPTIONS)
def traditional_block(population, fitness, draws, exponents, best, population_best, champion, champion_fitness,
                      start, crossover, mutation, nndtf, hidden, sequential, chunks, scores, bounds, floors,
                      best_total) -> None:  # fmt: skip
    """Iterations ``start ..`` of one steady-state traditional-GA run (Figure 6), in place.

    ``exponents[i]`` is iteration ``start + i``'s ``(1 - t/T)^b`` (t counted from 1); ``champion`` (n,) and
    ``champion_fitness`` (1,) are the fittest chromosome ever and its fitness; ``best`` and ``population_best``
    receive the curves of :class:`~evolving_ttt.ling_lam.ga.GARun`.
    """
    n = population.shape[1]
    children, children_fitness = np.empty((2, n)), np.empty(2)
    mutating, powers = np.empty(2 * n, dtype=np.int64), np.empty(2 * n)
    chunks, scores = _padded(chunks, scores)  # every position is scored
    scratch, outputs = np.empty((SCRATCH_LAYERS, hidden, chunks.shape[2])), np.empty(chunks.shape[2])
    for i in range(draws.shape[0]):
        d = draws[i]
        first, second = _pair(population, fitness, d, exponents[i], crossover, mutation, children, mutating, powers)
        _fitness_of_all(children, children_fitness, nndtf, hidden, sequential, chunks, scores, best_total, scratch,
                        outputs)  # fmt: skip
        _copy(population[first], children[0])
        fitness[first] = children_fitness[0]
        _copy(population[second], children[1])  # wins a slot picked twice
        fitness[second] = children_fitness[1]
        population_best[start + i + 1] = fitness[_first_max(fitness)]
        k = _first_max(children_fitness)
        if children_fitness[k] > champion_fitness[0]:
            _copy(champion, children[k])
            champion_fitness[0] = children_fitness[k]
        best[start + i + 1] = champion_fitness[0]


@numba.njit(**JIT_OPTIONS)
def generational_block(population, fitness, draws, exponents, best, start, crossover, mutation, nndtf, hidden,
                       sequential, chunks, scores, bounds, floors, best_total) -> None:  # fmt: skip
    """Generations ``start ..`` of one generational-GA run (chapter 22), in place: ``ceil(N / 2)`` pairs a generation,
    each made as one steady-state iteration makes its two children; the best of the old population replaces the
    least fit of the first N children."""
    size, n = population.shape
    pairs = (size + 1) // 2
    per_pair = draws.shape[1] // pairs
    children, children_fitness = np.empty((2 * pairs, n)), np.empty(size)
    mutating, powers = np.empty(2 * n, dtype=np.int64), np.empty(2 * n)
    chunks, scores = _padded(chunks, scores)  # every position is scored
    scratch, outputs = np.empty((SCRATCH_LAYERS, hidden, chunks.shape[2])), np.empty(chunks.shape[2])
    for i in range(draws.shape[0]):
        for k in range(pairs):
            _pair(population, fitness, draws[i, k * per_pair : (k + 1) * per_pair], exponents[i], crossover,
                  mutation, children[2 * k : 2 * k + 2], mutating, powers)  # fmt: skip
        _fitness_of_all(children[:size], children_fitness, nndtf, hidden, sequential, chunks, scores, best_total,
                        scratch, outputs)  # fmt: skip
        elite, worst = _first_max(fitness), _first_min(children_fitness)
        _copy(children[worst], population[elite])
        children_fitness[worst] = fitness[elite]
        for m in range(size):
            _copy(population[m], children[m])
        _copy(fitness, children_fitness)
        best[start + i + 1] = fitness[_first_max(fitness)]


@functools.lru_cache(maxsize=8)
def mutation_exponents(iterations: int, shape: float) -> np.ndarray:
    """The non-uniform mutation's exponents ``(1 - t/T)^b`` for t = 1 .. T (read-only), as
    :func:`~evolving_ttt.ling_lam.ga.nonuniform_mutation` computes them (:func:`~evolving_ttt.numerics.scalar_power`,
    in decimal), once per process for each number of iterations and shape. The settings keep the shape b in
    [0, 1e6], so every exponent is a number in [0, 1], as :func:`~evolving_ttt.numerics.power` requires."""
    exponents = np.array([scalar_power(1.0 - t / iterations, shape) for t in range(1, iterations + 1)])
    exponents.flags.writeable = False
    return exponents
