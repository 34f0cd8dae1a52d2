"""Fogel (1993): mutation of weights and of the number of hidden nodes (chapter 4).

Read first: :class:`MutationSettings`, :func:`draw_mutation` and :func:`mutate_network`, the readable
mutation of one network. :func:`mutate_population` is its batched twin, driven by the same random
numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from evolving_ttt.fogel.network import MAX_HIDDEN, MIN_HIDDEN, Network, Population, hidden_slot_mask
from evolving_ttt.game import check_number, check_probability
from evolving_ttt.rule_base import uniform_index

N_WEIGHTS_PADDED = MAX_HIDDEN * 9 + MAX_HIDDEN + 9 * MAX_HIDDEN + 9
"""Number of weights and biases of a padded network: 199 (chapter 4)."""


@dataclass(frozen=True)
class MutationSettings:
    """How an offspring is made from its parent (chapter 4).

    Attributes
    ----------
    weight_spread
        Spread of the Gaussian noise added to every weight and bias: 0.05 in the paper.
    spread_is
        ``"std"`` (the default, the paper's wording): ``weight_spread`` is the standard deviation.
        ``"variance"``: it is the variance, so the standard deviation is its square root (one reading
        of the textbook restatement, which writes N(0, 0.5) and calls 0.05 a variance).
    structure_change_probability
        Chance that the hidden layer gains or loses a node: 0.5 in the paper.
    """

    weight_spread: float = 0.05
    spread_is: str = "std"
    structure_change_probability: float = 0.5

    def __post_init__(self) -> None:
        check_number(self.weight_spread, "weight_spread")
        if self.spread_is not in ("std", "variance"):
            raise ValueError(f"spread_is must be 'std' or 'variance'; got {self.spread_is!r}")
        check_probability(self.structure_change_probability, "structure_change_probability")

    @property
    def sigma(self) -> float:
        """The standard deviation of the weight noise."""
        return float(self.weight_spread if self.spread_is == "std" else math.sqrt(self.weight_spread))


PAPER_MUTATION = MutationSettings()
"""Mutation exactly as Fogel (1993) describes it (chapter 4)."""


@dataclass(frozen=True)
class MutationDraws:
    """The random numbers one mutation uses, for a batch of parents of shape ``B`` (chapter 4).

    Attributes
    ----------
    noise : B + (199,)
        Standard normal numbers for the padded weights, in the order hidden weights (10 x 9), hidden
        biases (10), output weights (9 x 10), output biases (9). Unused slots' numbers are drawn and ignored.
    structure : B + (3,)
        Uniform numbers: does the hidden layer change (< p), add (< 0.5) or delete, and which node goes.
    """

    noise: np.ndarray
    structure: np.ndarray

    def noise_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The noise split into arrays shaped like the padded hidden weights and biases, output weights and biases."""
        batch = self.noise.shape[:-1]
        cuts = np.cumsum([MAX_HIDDEN * 9, MAX_HIDDEN, 9 * MAX_HIDDEN])
        hw, hb, ow, ob = np.split(self.noise, cuts, axis=-1)
        return hw.reshape(*batch, MAX_HIDDEN, 9), hb, ow.reshape(*batch, 9, MAX_HIDDEN), ob


def draw_mutation(rng: np.random.Generator, batch: int | tuple[int, ...]) -> MutationDraws:
    """Draw the random numbers for mutating a batch of parents (chapter 4)."""
    batch = (batch,) if isinstance(batch, (int, np.integer)) else tuple(batch)
    return MutationDraws(noise=rng.standard_normal((*batch, N_WEIGHTS_PADDED)), structure=rng.random((*batch, 3)))


def structure_decisions(
    hidden_count: np.ndarray, structure: np.ndarray, probability: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decide, from three uniform numbers per network, whether it grows, shrinks, and which node goes (chapter 4).

    A change happens with ``probability``; it is an addition or a deletion with equal chance; it is
    dropped when it would take H below 1 or above 10. The deleted node is ``floor(u * H)``.
    """
    hidden_count = np.asarray(hidden_count)
    change = structure[..., 0] < probability
    add = structure[..., 1] < 0.5
    grow = change & add & (hidden_count < MAX_HIDDEN)
    shrink = change & ~add & (hidden_count > MIN_HIDDEN)
    doomed = uniform_index(structure[..., 2], hidden_count)
    return grow, shrink, doomed


def mutate_network(parent: Network, draws: MutationDraws, settings: MutationSettings = PAPER_MUTATION) -> Network:
    """The readable mutation of one network, with one parent's draws (chapter 4).

    1. Every weight and bias gets ``sigma * z`` added, ``z`` standard normal.
    2. Maybe the hidden layer changes: a new node starts with all its weights and bias at 0; a deleted node
       is removed and the nodes after it move up one place.
    The parent is not modified.
    """
    h = parent.hidden_count
    sigma = settings.sigma
    z_hw, z_hb, z_ow, z_ob = draws.noise_parts()
    hw = parent.hidden_weights + sigma * z_hw[:h]
    hb = parent.hidden_bias + sigma * z_hb[:h]
    ow = parent.output_weights + sigma * z_ow[:, :h]
    ob = parent.output_bias + sigma * z_ob
    grow, shrink, doomed = (bool(a) if a.dtype == bool else int(a) for a in structure_decisions(
        np.array(h), draws.structure, settings.structure_change_probability))  # fmt: skip
    if grow:
        hw, hb = np.vstack([hw, np.zeros((1, 9))]), np.append(hb, 0.0)
        ow = np.hstack([ow, np.zeros((9, 1))])
    elif shrink:
        hw, hb, ow = np.delete(hw, doomed, axis=0), np.delete(hb, doomed), np.delete(ow, doomed, axis=1)
    return Network(hw, hb, ow, ob)


@cache
def used_parameters() -> np.ndarray:
    """Which of the 199 padded parameters a network with H hidden nodes uses: row H of an (11, 199) table (chapter 4).

    The columns follow the noise order of :class:`MutationDraws`; the output biases are always used.
    """
    used = hidden_slot_mask(np.arange(MAX_HIDDEN + 1))  # (H, slot)
    table = np.concatenate(
        [np.repeat(used, 9, axis=1), used, np.tile(used, 9), np.ones((MAX_HIDDEN + 1, 9), dtype=bool)], axis=1
    )
    table.flags.writeable = False
    return table


@cache
def deletion_gathers() -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """How deleting hidden node ``d`` moves the hidden weights, hidden biases and output weights (chapter 4).

    For each of the three arrays, flattened per network: ``source[d, p]``, the position that position ``p``
    takes its number from (slot ``k`` takes slot ``k`` before node ``d`` and slot ``k + 1`` from it on),
    and ``used[H, p]``, 1.0 where a network with ``H`` nodes uses position ``p`` and 0.0 elsewhere.
    """
    slot, column = np.arange(MAX_HIDDEN), np.arange(9)
    source = np.minimum(slot + (slot >= slot[:, None]), MAX_HIDDEN - 1)  # (deleted node, slot)
    used = hidden_slot_mask(np.arange(MAX_HIDDEN + 1)).astype(float)  # (H, slot)
    gathers = (
        ((9 * source[:, :, None] + column).reshape(MAX_HIDDEN, -1), np.repeat(used, 9, axis=1)),  # (10, 9) per network
        (source, used),  # (10,)
        ((MAX_HIDDEN * column[:, None] + source[:, None, :]).reshape(MAX_HIDDEN, -1), np.tile(used, 9)),  # (9, 10)
    )
    for array in (a for pair in gathers for a in pair):
        array.flags.writeable = False
    return gathers


def mutate_population(
    parents: Population, draws: MutationDraws, settings: MutationSettings = PAPER_MUTATION
) -> Population:
    """Mutation of a whole padded population at once; bit for bit what :func:`mutate_network` does (chapter 4).

    Noise is added to used parameters only: it is multiplied by sigma where :func:`used_parameters` marks
    a parameter as used and by 0 elsewhere. A deletion is a gather over the shrinking networks only
    (:func:`deletion_gathers`), which is ``np.delete`` for all of them in one ``np.take`` per array.
    """
    sigma = settings.sigma
    scale = np.take(np.where(used_parameters(), sigma, 0.0), parents.hidden_count, axis=0)  # B + (199,)
    z_hw, z_hb, z_ow, z_ob = MutationDraws(draws.noise * scale, draws.structure).noise_parts()
    hw = parents.hidden_weights + z_hw
    hb = parents.hidden_bias + z_hb
    ow = parents.output_weights + z_ow
    ob = parents.output_bias + z_ob
    grow, shrink, doomed = structure_decisions(
        parents.hidden_count, draws.structure, settings.structure_change_probability
    )
    hidden_count = parents.hidden_count + grow - shrink
    # A new node is slot H, which is already all zeros: growing only changes the count.
    rows = np.flatnonzero(shrink.ravel())
    if rows.size:
        deleted, left = doomed.ravel()[rows], hidden_count.ravel()[rows]
        for weights, (source, used) in zip((hw, hb, ow), deletion_gathers(), strict=True):
            table = weights.reshape(shrink.size, -1)  # a view: the sums above are new, contiguous arrays
            width = table.shape[1]
            table[rows] = np.take(table, width * rows[:, None] + source[deleted]) * used[left]
    return Population(hw, hb, ow, ob, hidden_count)


def mutate(parents: Population, rng: np.random.Generator, settings: MutationSettings = PAPER_MUTATION) -> Population:
    """One offspring per parent, drawing the random numbers from ``rng`` (chapter 4)."""
    return mutate_population(parents, draw_mutation(rng, parents.shape), settings)
