"""Fogel (1993): payoffs, selection by comparison with random rivals, and one generation (chapter 5).

Read first: :func:`game_payoffs`, :func:`pick_others`, :func:`selection_points` and
:func:`generation_step_readable`; :func:`generation_step` is the batched generation the experiment runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.fogel.engine import (
    Openings,
    check_openings_apply,
    concatenate_openings,
    play_protocol_batch,
    protocol_openings,
)
from evolving_ttt.fogel.mutation import (
    N_WEIGHTS_PADDED,
    PAPER_MUTATION,
    MutationDraws,
    MutationSettings,
    mutate_network,
    mutate_population,
)
from evolving_ttt.fogel.network import Network, Population, batch_rows, concatenate_populations, network_player
from evolving_ttt.fogel_score import PAPER_PAYOFF, check_payoff
from evolving_ttt.game import check_count
from evolving_ttt.rule_base import (
    GAMES_PER_EVALUATION,
    OPPONENT_MOVES_PER_GAME,
    PAPER_RULES,
    OpponentRules,
    play_protocol,
    uniform_index,
)


@dataclass(frozen=True)
class SelectionSettings:
    """How networks are scored and which survive (chapter 5).

    Attributes
    ----------
    payoff
        Points for a win, a loss and a draw against the rule base: (+1, -10, 0) in the paper.
    comparisons
        How many other networks (distinct, chosen at random) each network is compared with: 10.
    ties_win
        ``True`` (the paper): a network earns a point against each compared network whose score is lower
        *or equal*. ``False`` (the textbook restatement): only a strictly lower score earns a point.
    """

    payoff: tuple[float, float, float] = PAPER_PAYOFF
    comparisons: int = 10
    ties_win: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "payoff", check_payoff(self.payoff))
        check_count(self.comparisons, "comparisons")
        if not isinstance(self.ties_win, (bool, np.bool_)):
            raise ValueError(f"ties_win must be True or False; got {self.ties_win!r}")


PAPER_SELECTION = SelectionSettings()
"""Scoring and selection as Fogel (1993) describes them (chapter 5)."""


def game_payoffs(results: np.ndarray, payoff: Sequence[float] = PAPER_PAYOFF) -> np.ndarray:
    """Turn game results (+1 X won, -1 O won, 0 draw) into payoffs (chapter 5)."""
    win, loss, draw = check_payoff(payoff)
    results = np.asarray(results)
    # Whole numbers (the engine's int8 results) need only a range check; other types must also be whole.
    whole = results.dtype.kind in "iu"
    outcome = results if whole else results.astype(np.int64)
    if outcome.size and (outcome.min() < -1 or outcome.max() > 1 or not (whole or np.array_equal(outcome, results))):
        raise ValueError(f"results must be +1 (X won), -1 (O won) or 0 (draw); got values {np.unique(results)}")
    return np.array([draw, win, loss])[outcome]  # a draw is entry 0, a win entry 1, a loss entry -1


def pick_others(i: int, n: int, u: np.ndarray) -> list[int]:
    """Choose ``len(u)`` distinct networks other than ``i`` among ``n`` by a partial Fisher-Yates shuffle (chapter 5).

    ``u`` holds one uniform number per pick: pick ``k`` swaps position ``k`` with a random position
    ``k + floor(u[k] * (n - 1 - k))`` of the list of candidates.
    """
    if len(u) > n - 1:
        raise ValueError(f"comparisons must be at most population size - 1 = {n - 1}; got {len(u)}")
    others = [j for j in range(n) if j != i]
    for k, uk in enumerate(u):
        j = k + int(uniform_index(uk, len(others) - k))
        others[k], others[j] = others[j], others[k]
    return others[: len(u)]


@cache
def other_networks(n: int) -> np.ndarray:
    """Row ``i`` lists the networks other than ``i`` among ``n``, in increasing order: shape ``(n, n - 1)`` (chapter 5).

    The starting lists of :func:`pick_others_batch`, in the smallest integer type that holds them.
    """
    j = np.arange(n - 1)
    table = (j[None, :] + (j[None, :] >= np.arange(n)[:, None])).astype(np.int16 if n <= 2**15 else np.int64)
    table.flags.writeable = False
    return table


def pick_others_batch(n: int, u: np.ndarray) -> np.ndarray:
    """:func:`pick_others` for every network of every population at once (chapter 5).

    ``u`` has shape ``batch + (n, q)``; the result holds network indices with the same shape. The
    shuffle runs over ``q`` steps, each one vectorized over all rows.
    """
    *batch, n_rows, q = u.shape
    if q > n - 1:
        raise ValueError(f"comparisons must be at most population size - 1 = {n - 1}; got {q}")
    rows = u.reshape(-1, q)
    others = np.tile(other_networks(n), (rows.shape[0] // n, 1))  # a fresh copy per population
    flat, start = others.reshape(-1), np.arange(0, others.size, n - 1)  # row r starts at start[r]
    # Pick k swaps position k with position k + floor(u * (n - 1 - k)): all the picks at once, then the swaps.
    there_all = start[:, None] + np.arange(q) + uniform_index(rows, np.arange(n - 1, n - 1 - q, -1))
    for k in range(q):
        here, there = start + k, there_all[:, k]
        flat[here], flat[there] = flat[there], flat[here]  # fancy indexing copies: a true swap
    return others[:, :q].reshape(*batch, n_rows, q)


def selection_points(scores: np.ndarray, opponents: np.ndarray, ties_win: bool = True) -> np.ndarray:
    """Points of each network: how many of its compared networks scored lower (or equal, if ``ties_win``) (chapter 5).

    ``scores`` has shape ``batch + (n,)`` and ``opponents`` ``batch + (n, q)`` (indices into the same population).
    """
    # One flat gather over all populations (batch_rows numbers them in the flattened scores).
    rows = batch_rows(scores.shape, opponents.reshape(*scores.shape[:-1], -1))
    theirs = np.take(scores, rows).reshape(opponents.shape)  # (..., n, q)
    beaten = scores[..., :, None] >= theirs if ties_win else scores[..., :, None] > theirs
    return beaten.sum(axis=-1)


def survivors(points: np.ndarray, tie_keys: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` networks with most points, best first; ties go by a random key, larger first (chapter 5).

    ``np.lexsort`` sorts by its last key first: increasing points, then increasing tie key; reversed,
    that is the ranking we want.
    """
    return np.lexsort((tie_keys, points), axis=-1)[..., ::-1][..., :keep]


def take_networks(population: Population, index: np.ndarray) -> Population:
    """The networks at ``index`` (shape ``batch + (k,)``) of each population in the batch (chapter 5)."""
    rows = batch_rows(population.shape, index)  # one flat gather per array
    return Population(*(np.take(a, rows, axis=0) for a in population.reshape(-1).arrays()))


@dataclass(frozen=True)
class GenerationDraws:
    """Every random number one generation of one or many trials uses (chapter 5).

    With ``P`` parents and batch shape ``B`` (for instance ``(trials,)``):

    Attributes
    ----------
    mutation : MutationDraws with batch ``B + (P,)``
    games : B + (2P, 32, 4)
        One uniform number per possible O move of every game of every network.
    comparisons : B + (2P, q)
        Uniform numbers for choosing each network's ``q`` compared networks.
    ties : B + (2P,)
        Random keys that break ties in points.
    """

    mutation: MutationDraws
    games: np.ndarray
    comparisons: np.ndarray
    ties: np.ndarray

    def __getitem__(self, key) -> GenerationDraws:
        return GenerationDraws(
            MutationDraws(self.mutation.noise[key], self.mutation.structure[key]),
            self.games[key], self.comparisons[key], self.ties[key],
        )  # fmt: skip


def draw_generation(
    rng: np.random.Generator, parents: int, comparisons: int = 10, out: GenerationDraws | None = None
) -> GenerationDraws:
    """Draw one generation's random numbers for one trial, in a fixed order (chapter 5).

    With ``out`` (arrays of the right shapes) the numbers are written into it, so many trials can fill
    one stacked buffer without copies; the numbers are the same either way.
    """
    n = 2 * parents
    shapes = ((parents, N_WEIGHTS_PADDED), (parents, 3), (n, GAMES_PER_EVALUATION, OPPONENT_MOVES_PER_GAME),
              (n, comparisons), (n,))  # fmt: skip
    if out is None:
        arrays = [np.empty(shape) for shape in shapes]
    else:
        arrays = [out.mutation.noise, out.mutation.structure, out.games, out.comparisons, out.ties]
    rng.standard_normal(out=arrays[0])
    for array in arrays[1:]:
        rng.random(out=array)
    return GenerationDraws(MutationDraws(arrays[0], arrays[1]), *arrays[2:])


@dataclass(frozen=True)
class GenerationResult:
    """What one generation step returns (chapter 5).

    Attributes
    ----------
    parents : Population, batch ``B + (P,)``
        The survivors, best first.
    scores : B + (2P,)
        Sampled 32-game scores of the parents (first P) and offspring (last P) before selection.
    points : B + (2P,)
        Selection points of each of them.
    chosen : B + (P,)
        Indices (into parents + offspring) of the survivors, best first.
    scored : Population, batch ``B + (2P,)``
        The parents and offspring that were scored, in the order of ``scores``.
    openings : Openings, batch ``B + (P,)``, or None
        The survivors' :class:`Openings`, for the next step (None unless the first reply cycles).
    """

    parents: Population
    scores: np.ndarray
    points: np.ndarray
    chosen: np.ndarray
    scored: Population
    openings: Openings | None = None


def generation_step_readable(
    parents: list[Network],
    draws: GenerationDraws,
    rules: OpponentRules = PAPER_RULES,
    mutation: MutationSettings = PAPER_MUTATION,
    selection: SelectionSettings = PAPER_SELECTION,
) -> tuple[list[Network], np.ndarray, np.ndarray, np.ndarray]:
    """One generation of one trial, one network and one game at a time (chapter 5).

    Returns ``(new_parents, scores, points, chosen)`` as in :class:`GenerationResult`.
    """
    P = len(parents)
    offspring = [mutate_network(p, draws[i].mutation, mutation) for i, p in enumerate(parents)]
    everyone = parents + offspring
    scores = np.array([
        game_payoffs(play_protocol(network_player(net), draws.games[i], rules), selection.payoff).sum()
        for i, net in enumerate(everyone)
    ])  # fmt: skip
    points = np.array([
        sum(scores[i] >= scores[j] if selection.ties_win else scores[i] > scores[j]
            for j in pick_others(i, 2 * P, draws.comparisons[i]))
        for i in range(2 * P)
    ])  # fmt: skip
    order = sorted(range(2 * P), key=lambda i: (-points[i], -draws.ties[i]))
    chosen = np.array(order[:P])
    return [everyone[i] for i in chosen], scores, points, chosen


def generation_step(
    parents: Population,
    draws: GenerationDraws,
    rules: OpponentRules = PAPER_RULES,
    mutation: MutationSettings = PAPER_MUTATION,
    selection: SelectionSettings = PAPER_SELECTION,
    openings: Openings | None = None,
) -> GenerationResult:
    """One generation of many trials at once: mutate, score, compare, select (chapter 5).

    ``parents`` has batch shape ``B + (P,)`` and ``draws`` batch shape ``B``. With cycled first replies,
    ``openings`` may hold the parents' :class:`Openings` from the previous step's result; only the
    offspring's are then played (chapter 9). The result is the same either way.
    """
    P = parents.shape[-1]
    offspring = mutate_population(parents, draws.mutation, mutation)
    everyone = concatenate_populations([parents, offspring], axis=-1)
    known = None
    check_openings_apply(rules, openings)
    if rules.first_reply == "cycle":
        known = concatenate_openings([openings if openings is not None else protocol_openings(parents),
                                      protocol_openings(offspring)])  # fmt: skip
    scores = game_payoffs(play_protocol_batch(everyone, draws.games, rules, known), selection.payoff).sum(axis=-1)
    opponents = pick_others_batch(2 * P, draws.comparisons)
    points = selection_points(scores, opponents, selection.ties_win)
    chosen = survivors(points, draws.ties, P)
    return GenerationResult(
        take_networks(everyone, chosen), scores, points, chosen, everyone, None if known is None else known.take(chosen)
    )
