"""Speed figures of Ling and Lam's training engines on this machine (chapters 16-17).

Run with ``make bench`` (or ``.venv/bin/python bench/ling_lam.py``). It prints, for the two engines of
``evolving_ttt/ling_lam/engine.py`` (the readable lockstep, ``engine="lockstep"``, whose GA operators are numpy calls
on all runs at once; and the compiled engine, ``engine="compiled"``, the default, whose GA iterations run in the
compiled loops of ``evolving_ttt/ling_lam/loops.py``):

* the time per iteration and run of the readable GA, and of each engine running one run at a time (as a sweep task
  does) and 20 runs at once, measured side by side in this process, alternately (``--rounds`` times, the best kept),
  for the improved GA with the NNDTF and the traditional GA with the baseline;
* where the compiled baseline's time goes: the portable tanh's cost per number either way, and one run's
  microseconds per iteration in each tenth of the run;
* the wall time of the full experiment, both of the paper's methods x ``--seeds`` seeds x ``--iterations``
  iterations as the system runs it (``workers`` processes, each with its share of the runs), once on each engine,
  each in a fresh process, alternately (``--repeats`` times), with the peak memory and the mean fitness reached;
  and the ratio of the two (the medians). The lockstep engine runs there as the old path: with the baseline kernel
  that computes every tanh whole (:func:`whole_tanh_baseline_kernel`).

The project's targets: the full experiment (2 methods x 20 seeds x 50,000 iterations) in at most 60 s on the
2-core machine, and in at most a third of the lockstep engine's time. The script prints whether they are met; it
never fails on them. Both engines must train the same networks: the script checks that the mean fitness agrees.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from functools import partial

import numba
import numpy as np

import ttt_helpers as th
from evolving_ttt import numerics
from evolving_ttt.ling_lam import loops, network
from evolving_ttt.ling_lam.engine import improved_ga_lockstep, traditional_ga_lockstep
from evolving_ttt.ling_lam.fused import N_INPUTS, _input_sums, _output_sums
from evolving_ttt.numerics import tanh_scalar

TARGET_SECONDS = 60.0
TARGET_RATIO = 3.0
ENGINES = ("lockstep", "compiled")


@numba.njit(nogil=True, error_model="numpy")  # not cached: numba would miss a change to numerics.py
def whole_tanh_baseline_kernel(genes: np.ndarray, inputs: np.ndarray, hidden: int, out: np.ndarray) -> None:
    """``fused.baseline_kernel`` as the portable-numerics issue left it: every tanh computed whole, both of
    ``tanh_scalar``'s ways (the same bits as the kernel of today, which computes only the way each number needs)."""
    columns = np.ascontiguousarray(inputs.T)
    layer = np.empty((hidden, inputs.shape[0]))
    hidden_bias, output_weights, output_bias = N_INPUTS * hidden, (N_INPUTS + 1) * hidden, (N_INPUTS + 2) * hidden
    for b in range(genes.shape[0]):
        _input_sums(genes[b], columns, hidden, layer)
        for j in range(hidden):
            for p in range(inputs.shape[0]):
                layer[j, p] = tanh_scalar(layer[j, p] + genes[b, hidden_bias + j])
        _output_sums(layer, genes[b], output_weights, out[b])
        for p in range(inputs.shape[0]):
            out[b, p] = tanh_scalar(out[b, p] + genes[b, output_bias])


def full_run(seeds: int, iterations: int, workers: int, engine: str) -> None:
    """Child mode: train both methods once on ``engine`` and print the figures as JSON.

    The lockstep engine runs as the portable-numerics issue left it, the old path of the project's target: its
    baseline networks through :func:`whole_tanh_baseline_kernel` (compiled before the clock starts).
    """
    if engine == "lockstep":
        genes, inputs = np.zeros((1, th.BASELINE_GENES)), np.zeros((1, N_INPUTS))
        whole_tanh_baseline_kernel(genes, inputs, network.hidden_of("baseline", th.BASELINE_GENES), np.empty((1, 1)))
        network.baseline_kernel = whole_tanh_baseline_kernel  # what NetworkFitness calls on the lockstep engine
    settings = th.LingLamSettings(seeds=seeds, iterations=iterations)
    figures = {}
    for method in ("nndtf", "baseline"):
        start = time.perf_counter()
        run = th.train(method, settings, seed=1, workers=workers, engine=engine)
        figures[method] = {"seconds": time.perf_counter() - start, "mean_fitness": float(run.champion_fitness.mean())}
    figures["peak_mb"] = max(resource.getrusage(who).ru_maxrss / 1024
                             for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))  # fmt: skip
    print(json.dumps(figures))


def per_iteration(iterations: int, rounds: int) -> dict[str, float]:
    """Microseconds per iteration and run: the readable GA, and each engine on 1 run and on 20, side by side."""
    training = th.training_positions()
    cases = [
        ("nndtf", th.improved_ga, improved_ga_lockstep, th.ImprovedGASettings(iterations=iterations),
         th.fitness_function("nndtf", training), th.NNDTF_GENES),
        ("baseline", th.traditional_ga, traditional_ga_lockstep, th.TraditionalGASettings(iterations=iterations),
         th.fitness_function("baseline", training), th.BASELINE_GENES),
    ]  # fmt: skip
    figures = {}
    for method, readable, engine_run, settings, evaluate, genes in cases:
        warm_up = type(settings)(**{**settings.as_dict(), "iterations": 5})  # load the compiled code first
        for engine in ENGINES:
            engine_run(evaluate, genes, [np.random.default_rng(0)], warm_up, engine=engine)
        ways = {"readable": (None, 1)}  # each way: (engine, runs)
        ways.update({f"{engine}, {runs} run{'s' * (runs > 1)}": (engine, runs)
                     for runs in (1, 20) for engine in ENGINES})  # fmt: skip
        times = {way: [] for way in ways}
        for _ in range(rounds):
            for way, (engine, runs) in ways.items():
                rngs = [np.random.default_rng(s) for s in range(runs)]
                run = (partial(readable, evaluate, genes, rngs[0], settings) if engine is None
                       else partial(engine_run, evaluate, genes, rngs, settings, engine=engine))  # fmt: skip
                start = time.perf_counter()
                run()
                times[way].append(time.perf_counter() - start)
        micro = {way: min(seconds) / iterations / (20 if "20" in way else 1) * 1e6 for way, seconds in times.items()}
        print(f"{method}: microseconds per iteration and run, {iterations:,} iterations from the start, best of "
              f"{rounds}:")  # fmt: skip
        for way, value in micro.items():
            print(f"  {way:>20}: {value:7.1f}")
        for runs in ("1 run", "20 runs"):
            ratio = micro[f"lockstep, {runs}"] / micro[f"compiled, {runs}"]
            print(f"  compiled engine, {runs}: {ratio:.1f} x the lockstep engine's speed")
        names = {way: way.replace(", ", "_").replace(" ", "_") for way in micro}
        figures.update({f"{method}_{names[way]}_us": value for way, value in micro.items()})
    return figures


def baseline_time(iterations: int) -> None:
    """Where the compiled baseline's time goes: the portable tanh's two ways per number, and one run's iterations
    by tenth of the run (the non-uniform mutation's steps shrink as a run goes on, and the weights with them)."""
    near, far = np.linspace(-0.24, 0.24, 20_000), np.linspace(0.3, 3.0, 20_000)  # in the cache
    places, far_values = np.empty(near.size, dtype=np.int64), np.empty(near.size)
    cost = {}
    for name, values in (("below 0.25 (the series alone)", near), ("above 0.25 (the quotient)", far)):
        numerics.tanh_in_place(values.copy(), places, far_values)  # compiled before the clock starts
        seconds = []
        for _ in range(50):
            copy = values.copy()
            start = time.perf_counter()
            numerics.tanh_in_place(copy, places, far_values)
            seconds.append(time.perf_counter() - start)
        cost[name] = min(seconds) / values.size * 1e9
    print("portable tanh, ns per number in numerics.tanh_in_place: "
          + "; ".join(f"{name} {value:.1f}" for name, value in cost.items()))  # fmt: skip
    settings = th.TraditionalGASettings(iterations=iterations)
    evaluate, block, times = th.fitness_function("baseline", th.training_positions()), loops.traditional_block, []

    def timed(*arguments) -> None:
        start = time.perf_counter()
        block(*arguments)
        times.append(time.perf_counter() - start)

    loops.traditional_block = timed
    try:
        traditional_ga_lockstep(evaluate, th.BASELINE_GENES, [np.random.default_rng(1)], settings, engine="compiled")
    finally:
        loops.traditional_block = block
    parts = np.array_split(np.array(times) / (iterations / len(times)) * 1e6, min(10, len(times)))
    print(f"baseline, compiled engine, one run of {iterations:,} iterations: microseconds per iteration in each of "
          f"{len(parts)} equal parts of the run: {', '.join(f'{part.mean():.1f}' for part in parts)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1, help="full runs on each engine, alternately (default 1)")
    parser.add_argument("--per-iteration", type=int, default=2_000, help="iterations of the per-iteration figures")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the per-iteration figures (default 2)")
    parser.add_argument("--child", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        full_run(args.seeds, args.iterations, args.workers, args.child)
        return
    print(f"machine: {os.cpu_count()} cores, numpy {np.__version__}")
    figures = per_iteration(args.per_iteration, args.rounds)
    baseline_time(args.iterations)
    runs = {engine: [] for engine in ENGINES}
    for _ in range(args.repeats):
        for engine in ENGINES:
            command = [sys.executable, __file__, "--child", engine, "--seeds", str(args.seeds), "--iterations",
                       str(args.iterations), "--workers", str(args.workers)]  # fmt: skip
            start = time.perf_counter()
            child = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            child["total"] = time.perf_counter() - start
            child["training"] = child["nndtf"]["seconds"] + child["baseline"]["seconds"]
            runs[engine].append(child)
            print(f"full run on the {engine} engine, {args.seeds} seeds x {args.iterations:,} iterations on "
                  f"{args.workers} processes: nndtf {child['nndtf']['seconds']:.1f} s (mean fitness "
                  f"{child['nndtf']['mean_fitness']:.4f}), baseline {child['baseline']['seconds']:.1f} s (mean fitness "
                  f"{child['baseline']['mean_fitness']:.4f}); both {child['training']:.1f} s of training "
                  f"({child['total']:.1f} s with start-up), peak memory {child['peak_mb']:.0f} MB",
                  flush=True)  # fmt: skip
    median = {engine: statistics.median(run["training"] for run in runs[engine]) for engine in ENGINES}
    ratio = median["lockstep"] / median["compiled"]
    same = all(run[m]["mean_fitness"] == runs["compiled"][0][m]["mean_fitness"]
               for engine in ENGINES for run in runs[engine] for m in ("nndtf", "baseline"))  # fmt: skip
    print(f"full run, both methods, median: lockstep engine {median['lockstep']:.1f} s, compiled engine "
          f"{median['compiled']:.1f} s: {ratio:.2f} x as fast (the same networks: {same})")  # fmt: skip
    if args.seeds == 20 and args.iterations == 50_000:
        seconds = median["compiled"]
        print(f"target: both methods x 20 seeds x 50,000 iterations in at most {TARGET_SECONDS:.0f} s: "
              f"{'met' if seconds <= TARGET_SECONDS else 'NOT met'}; in at most a third of the lockstep engine's "
              f"time: {'met' if ratio >= TARGET_RATIO else 'NOT met'}")  # fmt: skip
        compiled = runs["compiled"]
        figures.update({
            "full_experiment_seconds": seconds, "full_experiment_runs": [run["training"] for run in compiled],
            "with_start_up_seconds": statistics.median(run["total"] for run in compiled),
            "lockstep_seconds": median["lockstep"],
            "lockstep_runs": [run["training"] for run in runs["lockstep"]], "speed_up": ratio,
            "workers": args.workers, "peak_mb": max(run["peak_mb"] for run in compiled),
            "lockstep_peak_mb": max(run["peak_mb"] for run in runs["lockstep"]),
        })  # fmt: skip
        print(f"recorded in {th.save_benchmark('ling_lam', figures)}")


if __name__ == "__main__":
    main()
