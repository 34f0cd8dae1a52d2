"""Benchmark of Ling and Lam's fused networks against the numpy path they replaced (chapters 9 and 16).

Both of the paper's methods (the NNDTF with the improved GA, the baseline with the traditional GA) train 20 seeds for
``--iterations`` iterations in this process on the readable lockstep engine (``engine="lockstep"``, whose GA
operators are numpy calls; ``bench/ling_lam.py`` times the compiled engine against it), once as the system runs its
full experiment on one process (one share of all the runs) and once in lockstep (chapter 16's engine), each three
ways, timed side by side and alternately:

1. **fused**: the networks evaluated by the compiled kernels of ``evolving_ttt/ling_lam/fused.py`` with the portable
   functions;
2. **numpy path, portable**: the vectorized numpy networks the kernels replaced (kept below), with the portable
   ``exp``, ``tanh``, ``fixed_matmul`` and ``power``: what switching the old engine's functions alone gives;
3. **numpy path, numpy's**: the same with ``np.exp``, ``np.tanh``, ``np.matmul`` (BLAS) and ``**``: the engine
   before the portable numerics, whose bits depend on the processor.

Targets: the fused engine in at most a third of path 2's time (the speed issue) and at most 1.3 times path 3's
(the portable-numerics issue). The script prints the figures and whether each target is met; it never fails.
It also reports whether the three give the same bits here (paths 1 and 2 must: the kernels add their terms in the
same order; path 3 may not, on any processor).
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager

import numpy as np

from evolving_ttt import numerics
from evolving_ttt.ling_lam import experiment, ga, network
from evolving_ttt.ling_lam.engine import improved_ga_lockstep, traditional_ga_lockstep
from evolving_ttt.ling_lam.experiment import LingLamSettings
from evolving_ttt.ling_lam.ga import PAPER_IMPROVED_GA, PAPER_TRADITIONAL_GA
from evolving_ttt.ling_lam.network import BASELINE_LAYOUT, EXPONENT_FLOOR, N_HIDDEN, N_INPUTS, NNDTF_LAYOUT

SEEDS = 20
ROUNDS = 2


def numpy_path_transfer(f, mean, spread, exp):
    """The transfer function as the numpy path computed it, with the given ``exp``."""
    d = np.subtract(f, mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = -0.5 / np.multiply(spread, spread)
        e = np.asarray(d * d)
        e *= factor
    np.fmin(e, 0.0, out=e)
    np.maximum(e, EXPONENT_FLOOR, out=e)
    e = exp(e)
    np.subtract(1.0, e, out=e)
    return np.copysign(e, d, out=e)


def times_neighbour(link, hidden, step):
    """``link[b, j] * hidden[p, b, (j + step) % 8]``: the numpy path's shifted neighbours."""
    neighbour = np.empty_like(hidden)
    flat, shifted = hidden.reshape(-1), neighbour.reshape(-1)
    if step == 1:
        shifted[:-1], neighbour[..., -1] = flat[1:], hidden[..., 0]
    else:
        shifted[1:], neighbour[..., 0] = flat[:-1], hidden[..., -1]
    return np.multiply(neighbour, link, out=neighbour)


def numpy_path_nndtf(genes, inputs, exp, matmul):
    """The NNDTF (simultaneous order) as the numpy path computed it: board-major (P, B, 8) passes."""
    genes = genes.reshape(-1, genes.shape[-1])
    part = {name: np.ascontiguousarray(genes[:, where]) for name, where in NNDTF_LAYOUT.items()}
    v = part["input_weights"].reshape(-1, N_INPUTS, N_HIDDEN)
    sums = np.empty((len(inputs), len(genes), N_HIDDEN))
    sums.transpose(1, 0, 2)[...] = matmul(inputs, v)
    static = numpy_path_transfer(sums, part["static_mean"], part["static_spread"], exp)
    z = numpy_path_transfer(static, times_neighbour(part["mean_link"], static, 1),
                            times_neighbour(part["spread_link"], static, -1), exp)  # fmt: skip
    total = matmul(z.transpose(1, 0, 2), part["output_weights"][:, :, None])[..., 0]
    return numpy_path_transfer(total, part["output_mean"], part["output_spread"], exp)


def numpy_path_baseline(genes, inputs, tanh, matmul):
    """The baseline network as the numpy path computed it."""
    genes = genes.reshape(-1, genes.shape[-1])
    v = np.ascontiguousarray(genes[:, BASELINE_LAYOUT["input_weights"]]).reshape(-1, N_INPUTS, N_HIDDEN)
    hidden = tanh(matmul(inputs, v) + genes[:, None, BASELINE_LAYOUT["hidden_bias"]])
    w = np.ascontiguousarray(genes[:, BASELINE_LAYOUT["output_weights"]])[:, :, None]
    return tanh(matmul(hidden, w)[..., 0] + genes[:, None, BASELINE_LAYOUT["output_bias"].start])


FUNCTIONS = {
    "numpy path, portable": {"exp": numerics.exp, "tanh": numerics.tanh, "matmul": numerics.fixed_matmul,
                             "power": numerics.power, "scalar_power": numerics.scalar_power},
    "numpy path, numpy's": {"exp": np.exp, "tanh": np.tanh, "matmul": np.matmul,
                            "power": lambda r, e: r**e, "scalar_power": lambda b, e: b**e},
}  # fmt: skip


def numpy_path_outputs(functions):
    """``ling_lam_outputs`` on the numpy path with the given functions (the paper's simultaneous order)."""

    def outputs(kind, genes, inputs, order="simultaneous"):
        if order != "simultaneous":
            raise ValueError("the numpy path of this benchmark has the paper's simultaneous order only")
        if kind == "nndtf":
            return numpy_path_nndtf(np.asarray(genes, dtype=float), inputs, functions["exp"], functions["matmul"])
        return numpy_path_baseline(np.asarray(genes, dtype=float), inputs, functions["tanh"], functions["matmul"])

    return outputs


@contextmanager
def engine_path(path: str):
    """The package's networks and mutation powers replaced by the numpy path's with the given functions."""
    if path == "fused":
        yield
        return
    functions = FUNCTIONS[path]
    saved = network.ling_lam_outputs, ga.power, ga.scalar_power
    network.ling_lam_outputs = numpy_path_outputs(functions)
    ga.power, ga.scalar_power = functions["power"], functions["scalar_power"]
    try:
        yield
    finally:
        network.ling_lam_outputs, ga.power, ga.scalar_power = saved


def full_experiment(path: str, iterations: int):
    """The paper's two methods x 20 seeds as the system runs them on one process (one share: every run of a method
    in lockstep), on the lockstep engine, in this process."""
    settings = LingLamSettings(iterations=iterations)
    start = time.perf_counter()
    with engine_path(path):
        champions = {method: experiment.train(method, settings, 1, engine="lockstep").champions
                     for method in settings.methods}  # fmt: skip
    return time.perf_counter() - start, champions


def lockstep(path: str, iterations: int):
    """Both methods, 20 seeds in lockstep (the engine of chapter 16's first look), in this process."""
    training = network.training_positions()
    improved = ga.ImprovedGASettings(**{**PAPER_IMPROVED_GA.as_dict(), "iterations": iterations})
    traditional = ga.TraditionalGASettings(**{**PAPER_TRADITIONAL_GA.as_dict(), "iterations": iterations})
    start = time.perf_counter()
    with engine_path(path):
        nndtf = experiment.fitness_function("nndtf", training)
        baseline = experiment.fitness_function("baseline", training)
        first = improved_ga_lockstep(nndtf, network.NNDTF_GENES, [np.random.default_rng(s) for s in range(SEEDS)],
                                     improved, engine="lockstep")  # fmt: skip
        second = traditional_ga_lockstep(baseline, network.BASELINE_GENES,
                                         [np.random.default_rng(s) for s in range(SEEDS)], traditional,
                                         engine="lockstep")  # fmt: skip
    return time.perf_counter() - start, {"nndtf": first.champions, "baseline": second.champions}


def compare(label: str, run, iterations: int) -> None:
    """Time the three paths alternately, ROUNDS times, and print the medians and the two ratios."""
    paths = ("fused", "numpy path, portable", "numpy path, numpy's")
    times, champions = {path: [] for path in paths}, {}
    for _ in range(ROUNDS):
        for path in paths:
            seconds, champions[path] = run(path, iterations)
            times[path].append(seconds)
    print(f"{label}, both methods x {SEEDS} seeds x {iterations:,} iterations, one process, median of {ROUNDS} "
          "alternating runs:")  # fmt: skip
    median = {path: statistics.median(times[path]) for path in paths}
    for path in paths:
        same = all(np.array_equal(champions[path][k], champions["fused"][k]) for k in champions["fused"])
        print(f"  {path:>22}: {median[path]:7.2f} s  (same networks as fused: {same})")
    speed = median["fused"] / median["numpy path, portable"]
    cost = median["fused"] / median["numpy path, numpy's"]
    print(f"  fused / numpy path with portable functions: {speed:.2f} (target at most 0.33: "
          f"{'met' if speed <= 1 / 3 else 'NOT met'})")  # fmt: skip
    print(f"  fused / numpy path with numpy's functions: {cost:.2f} (target at most 1.3: "
          f"{'met' if cost <= 1.3 else 'NOT met'})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2_000, help="iterations per run (default 2,000)")
    args = parser.parse_args()
    lockstep("fused", 50)  # compile or load the kernels before timing
    compare("The full experiment as the system runs it on one process", full_experiment, args.iterations)
    compare("The lockstep engine (chapter 16)", lockstep, args.iterations)


if __name__ == "__main__":
    main()
