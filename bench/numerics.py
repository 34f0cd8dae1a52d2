"""Benchmark of the portable numerics (evolving_ttt.numerics): what the same bits on every processor cost.

Two parts, each timed side by side, alternately, in one run of this script:

1. the functions alone on 220,000 numbers (the size of a Fogel engine call): ``numerics.exp``, ``tanh``, ``log``
   and ``fixed_matmul`` against ``np.exp``, ``np.tanh``, ``np.log`` and ``np.matmul`` on this processor;
2. each system's full experiment at the paper's settings with the portable functions and with numpy's, the switch
   made here only (the book and the package always run the portable ones): the module attributes a system's
   engine calls are replaced by numpy's for the second timing. Target: at most 1.3 times numpy's time.

Mohammadi's programs use no floating-point elementary function and are not timed here. Ling and Lam's networks run
in fused kernels that have no numpy counterpart to switch to: ``bench/ling_lam_engine.py`` times them against the
numpy code they replaced, with numpy's functions and with the portable ones. Both timings give the same bits where
numpy's functions happen to agree with the portable ones on this processor, which the script reports.
"""

import statistics
import time
from contextlib import contextmanager

import numpy as np

from evolving_ttt import numerics
from evolving_ttt.al_khateeb import evaluator
from evolving_ttt.fogel import engine, network
from evolving_ttt.systems import get_system, run_system

ROUNDS = 2
WORKERS = 1  # in this process: the switch to numpy's functions does not reach worker processes


def numpy_matmul(a, b):
    return np.matmul(a, b)


def numpy_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


NUMPY_FUNCTIONS = {
    "fogel": [(engine, "exp", np.exp), (engine, "fixed_matmul", numpy_matmul), (network, "sigmoid", numpy_sigmoid),
              (network, "fixed_matmul", numpy_matmul)],
    "al-khateeb": [(evaluator, "tanh", np.tanh), (evaluator, "exp", np.exp)],
}  # fmt: skip
"""For each system, the module attributes its engine calls and numpy's function that replaces each here."""


@contextmanager
def numpy_functions(system: str):
    """The system's code with numpy's functions instead of the portable ones, for the side-by-side timing."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in NUMPY_FUNCTIONS[system]]
    for module, name, replacement in NUMPY_FUNCTIONS[system]:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


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


def same_record(first, second) -> bool:
    """Whether two records of a system hold the same bits (arrays compared exactly, field by field)."""
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(same_record(first[k], second[k]) for k in first)
    fields = [name for name in vars(first) if isinstance(getattr(first, name), np.ndarray)]
    return all(np.array_equal(getattr(first, name), getattr(second, name)) for name in fields)


def full_runs() -> None:
    print(f"Full experiments at the paper's settings on {WORKERS} workers, median of {ROUNDS} alternating runs "
          "(s; target ratio at most 1.3):")  # fmt: skip
    for system in NUMPY_FUNCTIONS:
        times = {"portable": [], "numpy": []}
        records = {}
        for _ in range(ROUNDS):
            for which in ("portable", "numpy"):
                start = time.perf_counter()
                if which == "numpy":
                    with numpy_functions(system):
                        records[which] = run_system(system, get_system(system).PAPER_SETTINGS, 1, WORKERS, None)
                else:
                    records[which] = run_system(system, get_system(system).PAPER_SETTINGS, 1, WORKERS, None)
                times[which].append(time.perf_counter() - start)
        portable, numpy_time = statistics.median(times["portable"]), statistics.median(times["numpy"])
        same = same_record(records["portable"], records["numpy"])
        print(f"  {system:>10}: portable {portable:7.2f}  numpy {numpy_time:7.2f}  ratio {portable / numpy_time:4.2f}"
              f"  (same bits with numpy's on this processor: {same})")


if __name__ == "__main__":
    functions_alone()
    full_runs()
