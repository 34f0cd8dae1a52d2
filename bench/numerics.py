"""Benchmark of the portable numerics (evolving_ttt.numerics): what the same bits on every processor cost.

Two parts, each timed side by side, alternately, in one run of this script:

1. the functions alone on 220,000 numbers (the size of a Fogel engine call): ``numerics.exp``, ``tanh``, ``log``
   and ``fixed_matmul`` against ``np.exp``, ``np.tanh``, ``np.log`` and ``np.matmul`` on this processor;
2. each system's full experiment at the paper's settings with the portable functions and with numpy's, the switch
   made here only (the book and the package always run the portable ones): the module attributes a system's
   engine calls are replaced by numpy's for the second timing. Target: at most 1.3 times numpy's time.

Only the systems that run on the portable functions are timed in part 2 (Fogel's; Mohammadi's programs use no
floating-point elementary function). Both timings give the same bits where numpy's functions happen to agree
with the portable ones on this processor, which the script reports.
"""

import statistics
import time
from contextlib import contextmanager

import numpy as np

from evolving_ttt import numerics
from evolving_ttt.fogel import engine, network
from evolving_ttt.fogel.evolution import PAPER_EXPERIMENT
from evolving_ttt.systems import run_system

ROUNDS = 3
WORKERS = 2


def numpy_matmul(a, b):
    return np.matmul(a, b)


@contextmanager
def numpy_functions():
    """Fogel's engine and network with numpy's exp, sigmoid and matrix product instead of the portable ones."""
    saved = engine.exp, engine.fixed_matmul, network.sigmoid, network.fixed_matmul
    engine.exp, engine.fixed_matmul = np.exp, numpy_matmul
    network.sigmoid, network.fixed_matmul = (lambda x: 1.0 / (1.0 + np.exp(-np.asarray(x, float)))), numpy_matmul
    try:
        yield
    finally:
        engine.exp, engine.fixed_matmul, network.sigmoid, network.fixed_matmul = saved


def time_call(function, repeats: int = 20) -> float:
    function()
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) / repeats


def functions_alone() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20_000, 11)) * 3
    positive = np.abs(x) + 1e-3
    a, b = rng.normal(size=(50, 400, 11)), rng.normal(size=(50, 11, 9))
    pairs = (("exp", lambda: numerics.exp(x), lambda: np.exp(x)),
             ("tanh", lambda: numerics.tanh(x), lambda: np.tanh(x)),
             ("log", lambda: numerics.log(positive), lambda: np.log(positive)),
             ("matmul (50, 400, 11) @ (50, 11, 9)", lambda: numerics.fixed_matmul(a, b),
              lambda: np.matmul(a, b)))  # fmt: skip
    print("The functions alone, 220,000 numbers (ms per call; ratio portable / numpy):")
    for name, portable, numpy_version in pairs:
        mine, theirs = time_call(portable), time_call(numpy_version)
        print(f"  {name:38s} portable {1e3 * mine:7.3f}  numpy {1e3 * theirs:7.3f}  ratio {mine / theirs:5.2f}")


def full_runs() -> None:
    times = {"portable": [], "numpy": []}
    records = {}
    for _ in range(ROUNDS):
        for which in ("portable", "numpy"):
            start = time.perf_counter()
            if which == "numpy":
                with numpy_functions():
                    records[which] = run_system("fogel", PAPER_EXPERIMENT, 1, 1, None)
            else:
                records[which] = run_system("fogel", PAPER_EXPERIMENT, 1, 1, None)
            times[which].append(time.perf_counter() - start)
    portable, numpy_time = statistics.median(times["portable"]), statistics.median(times["numpy"])
    same = all(np.array_equal(getattr(records["portable"], name), getattr(records["numpy"], name))
               for name in ("best_score", "mean_score"))  # fmt: skip
    print("Full experiments at the paper's settings, one process, median of "
          f"{ROUNDS} alternating runs (s; target ratio at most 1.3):")  # fmt: skip
    print(f"  Fogel (1993), 20 trials x 800 generations: portable {portable:6.2f}  numpy {numpy_time:6.2f}  "
          f"ratio {portable / numpy_time:4.2f}  (same bits with numpy's on this processor: {same})")


if __name__ == "__main__":
    functions_alone()
    full_runs()
