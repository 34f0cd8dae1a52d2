"""Ling and Lam's networks fused into compiled loops: the engine behind every fitness evaluation (chapters 9 and 16).

Training evaluates the networks hundreds of millions of times, so the engine computes them in compiled loops (numba,
without ``fastmath``) that do exactly the operations of the readable versions in
:mod:`evolving_ttt.ling_lam.network` (:func:`~evolving_ttt.ling_lam.network.nndtf_output` and
:func:`~evolving_ttt.ling_lam.network.baseline_output`), in the same order, with the portable elementary functions
of :mod:`evolving_ttt.numerics`: the outputs are the readable ones bit for bit (tested), on every processor.

* :func:`transfer_layer` applies the transfer function (7) to flat arrays in three branch-free passes (exponents,
  exponentials, signs), so that the compiler runs each pass on a whole vector register of numbers at once (a
  wider register does the same operations on more numbers: the same bits).
* :func:`nndtf_kernel` holds one network's hidden layer as (neurons, boards) and applies each transfer function
  to all boards at once; :func:`baseline_kernel` does the same for the baseline's tanh.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from evolving_ttt.numerics import JIT_OPTIONS, exp_scalar, tanh_scalar

EXPONENT_FLOOR = -40.0
"""A floor for the transfer function's exponent: exp(-40) < 2^-54, so ``1 - exp(x)`` is exactly 1 for x <= -40."""

N_INPUTS = 9


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
def _input_sums(g: np.ndarray, columns: np.ndarray, hidden: int, out: np.ndarray) -> None:
    """``out[j, p] = sum_i columns[i, p] v[i, j]`` for input weights ``v[i, j]`` at ``g[i h + j]``, from 0 in order."""
    boards = columns.shape[1]
    for j in range(hidden):
        for p in range(boards):
            out[j, p] = 0.0
        for i in range(N_INPUTS):
            weight = g[i * hidden + j]
            for p in range(boards):
                out[j, p] += columns[i, p] * weight


@numba.njit(inline="always", **JIT_OPTIONS)
def _output_sums(layer: np.ndarray, g: np.ndarray, start: int, out: np.ndarray) -> None:
    """``out[p] = sum_j layer[j, p] w_j`` for output weights ``w_j`` at ``g[start + j]``, from 0 in order."""
    for p in range(layer.shape[1]):
        out[p] = 0.0
    for j in range(layer.shape[0]):
        weight = g[start + j]
        for p in range(layer.shape[1]):
            out[p] += layer[j, p] * weight


@numba.njit(**JIT_OPTIONS)
def nndtf_kernel(genes: np.ndarray, inputs: np.ndarray, hidden: int, sequential: bool, out: np.ndarray) -> None:
    """NNDTF outputs ``out[b, p]`` of networks ``genes`` (B, 14 h + 2) on encoded boards ``inputs`` (P, 9).

    The genes' layout is :func:`~evolving_ttt.ling_lam.network.nndtf_layout`'s: input weights ``v[i, j]`` at
    ``i h + j``, then the static means, static spreads, mean links, spread links and output weights (h each),
    then the output's mean and spread. Every sum starts from 0 and adds its terms in order, as Python's ``sum``
    does in the readable version.
    """
    boards = inputs.shape[0]
    columns = np.ascontiguousarray(inputs.T)  # (9, P): input i of every board
    sums, static, z = np.empty((hidden, boards)), np.empty((hidden, boards)), np.empty((hidden, boards))
    mean, spread, d = np.empty((hidden, boards)), np.empty((hidden, boards)), np.empty((hidden, boards))
    static_mean, static_spread, mean_link = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    spread_link, output_weights, output_mean = (N_INPUTS + 3) * hidden, (N_INPUTS + 4) * hidden, (N_INPUTS + 5) * hidden
    for b in range(genes.shape[0]):
        g = genes[b]
        _input_sums(g, columns, hidden, sums)  # the static transfer functions of every neuron on every board
        for j in range(hidden):
            for p in range(boards):
                mean[j, p], spread[j, p] = g[static_mean + j], g[static_spread + j]
        transfer_layer(sums.ravel(), mean.ravel(), spread.ravel(), static.ravel(), d.ravel())
        if sequential:  # neuron by neuron: a neighbour already computed gives its z, one not yet its static output
            z[:] = static
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
        transfer_layer(total, mean[0], spread[0], out[b], d[0])


@numba.njit(**JIT_OPTIONS)
def baseline_kernel(genes: np.ndarray, inputs: np.ndarray, hidden: int, out: np.ndarray) -> None:
    """Baseline outputs ``out[b, p]``: ``tanh(sum_j w_j tanh(sum_i x_i v_ij + b_j) + b_o)``, sums from 0 in order.

    The layout is :func:`~evolving_ttt.ling_lam.network.baseline_layout`'s: ``v[i, j]`` at ``i h + j``, then the h
    hidden biases, the h output weights and the output bias. As in :func:`nndtf_kernel`, one network's hidden layer
    is held as (neurons, boards), so that each tanh pass runs over all boards at once.
    """
    boards = inputs.shape[0]
    columns = np.ascontiguousarray(inputs.T)  # (9, P): input i of every board
    layer = np.empty((hidden, boards))
    total = np.empty(boards)
    hidden_bias, output_weights, output_bias = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    for b in range(genes.shape[0]):
        g = genes[b]
        _input_sums(g, columns, hidden, layer)
        for j in range(hidden):
            for p in range(boards):
                layer[j, p] = tanh_scalar(layer[j, p] + g[hidden_bias + j])
        _output_sums(layer, g, output_weights, total)  # w_j h_j equals h_j w_j: a product does not depend on order
        for p in range(boards):
            out[b, p] = tanh_scalar(total[p] + g[output_bias])
