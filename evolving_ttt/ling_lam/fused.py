"""Ling and Lam's networks fused into compiled loops: the engine behind every fitness evaluation (chapters 9 and 16).

Training evaluates the networks hundreds of millions of times, so the engine computes them in compiled loops (numba,
without ``fastmath``) that do exactly the operations of the readable versions in
:mod:`evolving_ttt.ling_lam.network` (:func:`~evolving_ttt.ling_lam.network.nndtf_output` and
:func:`~evolving_ttt.ling_lam.network.baseline_output`), in the same order, with the portable elementary functions
of :mod:`evolving_ttt.numerics`: the outputs are the readable ones bit for bit (tested), on every processor.

* :func:`transfer_layer` applies the transfer function (7) to flat arrays in three branch-free passes (exponents,
  exponentials, signs), so that the compiler runs each pass on a whole vector register of numbers at once (a
  wider register does the same operations on more numbers: the same bits).
* :func:`nndtf_network` holds one network's hidden layer as (neurons, boards) and applies each transfer function
  to all boards at once; :func:`baseline_network` does the same for the baseline's tanh. :func:`nndtf_kernel` and
  :func:`baseline_kernel` run them on many networks; the compiled GA loops of
  :mod:`evolving_ttt.ling_lam.loops` call them on a few boards at a time.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from evolving_ttt.numerics import JIT_OPTIONS, exp_scalar, tanh_in_place

EXPONENT_FLOOR = -40.0
"""A floor for the transfer function's exponent: exp(-40) < 2^-54, so ``1 - exp(x)`` is exactly 1 for x <= -40."""

N_INPUTS = 9


@numba.njit(inline="always", **JIT_OPTIONS)
def _copy(target, source) -> None:
    """``target[k] = source[k]`` for every k of ``source`` (1-D): what ``target[:] = source`` does, without the
    shape check whose error message numba compiles into every kernel that assigns an array (seconds per kernel)."""
    for k in range(source.size):
        target[k] = source[k]


@numba.njit(**JIT_OPTIONS)
def _exponent(d: float, spread: float) -> float:
    """``max(fmin(d^2 (-0.5 / spread^2), 0), EXPONENT_FLOOR)`` without branches: the steps of ``transfer``.

    At a squared spread of 0 the factor is -inf: the exponent is -inf off the mean and nan (then 0) on it.
    """
    squared_spread = spread * spread
    e = d * d
    scaled = e * (-0.5 / (squared_spread if squared_spread != 0.0 else 1.0))
    e = (-math.inf if e > 0.0 else 0.0) if squared_spread == 0.0 else (0.0 if scaled != scaled else scaled)
    return max(e, EXPONENT_FLOOR)


@numba.njit(**JIT_OPTIONS)
def transfer_layer(f: np.ndarray, mean: np.ndarray, spread: np.ndarray, out: np.ndarray, d: np.ndarray) -> None:
    """``out[k] = transfer(f[k], mean[k], spread[k])`` for flat arrays; ``d`` is scratch space of the same size."""
    for k in range(f.size):
        d[k] = f[k] - mean[k]
        out[k] = _exponent(d[k], spread[k])
    for k in range(f.size):
        out[k] = exp_scalar(out[k])
    for k in range(f.size):
        out[k] = math.copysign(1.0 - out[k], d[k])


@numba.njit(inline="always", **JIT_OPTIONS)
def _input_sum(g: np.ndarray, columns: np.ndarray, hidden: int, j: int, out: np.ndarray) -> None:
    """``out[p] = sum_i columns[i, p] v[i, j]`` for neuron j, from 0 in order, each sum held in a register."""
    for p in range(columns.shape[1]):
        total = 0.0
        for i in range(N_INPUTS):
            total += columns[i, p] * g[i * hidden + j]
        out[p] = total


@numba.njit(inline="always", **JIT_OPTIONS)
def _input_sums(g: np.ndarray, columns: np.ndarray, hidden: int, out: np.ndarray) -> None:
    """``out[j, p] = sum_i columns[i, p] v[i, j]`` for input weights ``v[i, j]`` at ``g[i h + j]``, from 0 in order."""
    for j in range(hidden):
        _input_sum(g, columns, hidden, j, out[j])


@numba.njit(inline="always", **JIT_OPTIONS)
def _output_sums(layer: np.ndarray, g: np.ndarray, start: int, out: np.ndarray) -> None:
    """``out[p] = sum_j layer[j, p] w_j`` for output weights ``w_j`` at ``g[start + j]``, from 0 in order."""
    for p in range(layer.shape[1]):
        out[p] = 0.0
    for j in range(layer.shape[0]):
        weight = g[start + j]
        for p in range(layer.shape[1]):
            out[p] += layer[j, p] * weight


SCRATCH_LAYERS = 6
"""Scratch arrays (hidden, boards) one NNDTF needs: input sums, static outputs, z, means, spreads, differences."""


@numba.njit(**JIT_OPTIONS)
def nndtf_network(g: np.ndarray, columns: np.ndarray, hidden: int, sequential: bool, scratch: np.ndarray,
                  out: np.ndarray) -> None:  # fmt: skip
    """One NNDTF's outputs ``out[p]`` (genes ``g``) on the boards ``columns`` (9, P), input i of board p in row i.

    ``scratch`` is (:data:`SCRATCH_LAYERS`, hidden, P) working space. The genes' layout is
    :func:`~evolving_ttt.ling_lam.network.nndtf_layout`'s: input weights ``v[i, j]`` at ``i h + j``, then the static
    means, static spreads, mean links, spread links and output weights (h each), then the output's mean and spread.
    Every sum starts from 0 and adds its terms in order, as Python's ``sum`` does in the readable version. Each board
    is computed on its own (the same operations whatever the other boards), so any subset of boards gives the same
    outputs as the whole set.
    """
    boards = columns.shape[1]
    sums, static, z, mean, spread, d = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5]
    static_mean, static_spread, mean_link = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    spread_link, output_weights, output_mean = (N_INPUTS + 3) * hidden, (N_INPUTS + 4) * hidden, (N_INPUTS + 5) * hidden
    _input_sums(g, columns, hidden, sums)  # the static transfer functions of every neuron on every board
    for j in range(hidden):
        for p in range(boards):
            mean[j, p], spread[j, p] = g[static_mean + j], g[static_spread + j]
    transfer_layer(sums.ravel(), mean.ravel(), spread.ravel(), static.ravel(), d.ravel())
    if sequential:  # neuron by neuron: a neighbour already computed gives its z, one not yet its static output
        for j in range(hidden):  # z = static
            _copy(z[j], static[j])
        for j in range(hidden):
            after, before = (j + 1) % hidden, (j - 1) % hidden
            for p in range(boards):
                mean[0, p], spread[0, p] = g[mean_link + j] * z[after, p], g[spread_link + j] * z[before, p]
            transfer_layer(static[j], mean[0], spread[0], z[j], d[0])
    else:  # every neuron at once, from its neighbours' static outputs
        for j in range(hidden):
            after, before = (j + 1) % hidden, (j - 1) % hidden
            for p in range(boards):
                mean[j, p] = g[mean_link + j] * static[after, p]
                spread[j, p] = g[spread_link + j] * static[before, p]
        transfer_layer(static.ravel(), mean.ravel(), spread.ravel(), z.ravel(), d.ravel())
    total = sums[0]  # reused: the output neuron's input sum on every board
    _output_sums(z, g, output_weights, total)
    for p in range(boards):
        mean[0, p], spread[0, p] = g[output_mean], g[output_mean + 1]
    transfer_layer(total, mean[0], spread[0], out, d[0])


@numba.njit(**JIT_OPTIONS)
def nndtf_update(g: np.ndarray, columns: np.ndarray, hidden: int, gene: int, scratch: np.ndarray,
                 out: np.ndarray) -> None:  # fmt: skip
    """:func:`nndtf_network` (simultaneous order) for a network that differs in gene ``gene`` only from one whose
    static outputs and z ``scratch[1]`` and ``scratch[2]`` hold on these boards: only what the gene changes is
    computed again, with the very operations of :func:`nndtf_network`, so the outputs are its outputs bit for bit.

    An input weight ``v[i, j]``, neuron j's static mean or spread change its static output, and so z of j and of its
    two neighbours (which read it); a link of neuron j changes z of j; every gene changes the output.
    """
    boards = columns.shape[1]
    sums, static, z, mean, spread, d = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4], scratch[5]
    static_mean, static_spread, mean_link = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    spread_link, output_weights, output_mean = (N_INPUTS + 3) * hidden, (N_INPUTS + 4) * hidden, (N_INPUTS + 5) * hidden
    j = gene % hidden
    if gene < mean_link:  # neuron j's static output, then z of j - 1, j and j + 1
        _input_sum(g, columns, hidden, j, sums[0])
        for p in range(boards):
            mean[0, p], spread[0, p] = g[static_mean + j], g[static_spread + j]
        transfer_layer(sums[0], mean[0], spread[0], static[j], d[0])
        first, last = j - 1, j + 1
    elif gene < output_weights:  # a link of neuron j: z of j
        first, last = j, j
    else:
        first, last = 0, -1
    for k in range(first, last + 1):
        m = k % hidden
        after, before = (m + 1) % hidden, (m - 1) % hidden
        for p in range(boards):
            mean[0, p] = g[mean_link + m] * static[after, p]
            spread[0, p] = g[spread_link + m] * static[before, p]
        transfer_layer(static[m], mean[0], spread[0], z[m], d[0])
    total = sums[0]
    _output_sums(z, g, output_weights, total)
    for p in range(boards):
        mean[0, p], spread[0, p] = g[output_mean], g[output_mean + 1]
    transfer_layer(total, mean[0], spread[0], out, d[0])


@numba.njit(**JIT_OPTIONS)
def nndtf_kernel(genes: np.ndarray, inputs: np.ndarray, hidden: int, sequential: bool, out: np.ndarray) -> None:
    """NNDTF outputs ``out[b, p]`` of networks ``genes`` (B, 14 h + 2) on encoded boards ``inputs`` (P, 9).

    One :func:`nndtf_network` per network, the hidden layer held as (neurons, boards).
    """
    columns = np.ascontiguousarray(inputs.T)  # (9, P): input i of every board
    scratch = np.empty((SCRATCH_LAYERS, hidden, inputs.shape[0]))
    for b in range(genes.shape[0]):
        nndtf_network(genes[b], columns, hidden, sequential, scratch, out[b])


@numba.njit(**JIT_OPTIONS)
def baseline_network(g: np.ndarray, columns: np.ndarray, hidden: int, layer: np.ndarray, out: np.ndarray) -> None:
    """One baseline network's outputs ``out[p]``: ``tanh(sum_j w_j tanh(sum_i x_i v_ij + b_j) + b_o)``, sums from 0 in
    order, on the boards ``columns`` (9, P); ``layer`` is (hidden, P) working space.

    The layout is :func:`~evolving_ttt.ling_lam.network.baseline_layout`'s: ``v[i, j]`` at ``i h + j``, then the h
    hidden biases, the h output weights and the output bias. As in :func:`nndtf_network`, the hidden layer is held as
    (neurons, boards), so that each tanh pass runs over all boards at once.
    """
    boards = columns.shape[1]
    hidden_bias, output_weights, output_bias = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    places, far_values = np.empty(boards, dtype=np.int64), np.empty(boards)  # tanh_in_place's scratch space
    _input_sums(g, columns, hidden, layer)
    for j in range(hidden):
        for p in range(boards):
            layer[j, p] += g[hidden_bias + j]
        tanh_in_place(layer[j], places, far_values)
    _output_sums(layer, g, output_weights, out)  # w_j h_j equals h_j w_j: a product does not depend on order
    for p in range(boards):
        out[p] += g[output_bias]
    tanh_in_place(out, places, far_values)


@numba.njit(**JIT_OPTIONS)
def baseline_kernel(genes: np.ndarray, inputs: np.ndarray, hidden: int, out: np.ndarray) -> None:
    """Baseline outputs ``out[b, p]`` of networks ``genes`` (B, 11 h + 1) on encoded boards ``inputs`` (P, 9)."""
    columns = np.ascontiguousarray(inputs.T)  # (9, P): input i of every board
    layer = np.empty((hidden, inputs.shape[0]))
    for b in range(genes.shape[0]):
        baseline_network(genes[b], columns, hidden, layer, out[b])
