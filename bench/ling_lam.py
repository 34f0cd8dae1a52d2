"""Speed figures of Ling and Lam's training engine on this machine (chapters 16-17).

Run with ``make bench`` (or ``.venv/bin/python bench/ling_lam.py``). It prints:

* the time per iteration of the readable improved GA (one run) and of the lockstep engine (20 runs), measured
  side by side in this process, and the ratio of their throughputs (runs x iterations per second); the same for
  the traditional GA;
* the wall time of the full experiment, both of the paper's methods x ``--seeds`` seeds x ``--iterations``
  iterations on all cores, in a fresh process, with its peak memory and the mean fitness reached.

The project's target is the full experiment (2 methods x 20 seeds x 50,000 iterations) in at most 60 s on the
2-core machine. The script prints the figures and says whether the target is met; it never fails on it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

import ttt_helpers as th

TARGET_SECONDS = 60.0


def full_run(seeds: int, iterations: int, workers: int) -> None:
    """Child mode: train both methods once and print the figures as JSON."""
    config = th.LingLamConfig(seeds=seeds, iterations=iterations)
    figures = {}
    for method in ("nndtf", "baseline"):
        start = time.perf_counter()
        run = th.train(method, config, seed=1, workers=workers)
        figures[method] = {"seconds": time.perf_counter() - start, "mean_fitness": float(run.champion_fitness.mean())}
    figures["peak_mb"] = max(resource.getrusage(who).ru_maxrss / 1024
                             for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))  # fmt: skip
    print(json.dumps(figures))


def per_iteration(iterations: int = 300) -> None:
    """Readable GA (one run) against the lockstep engine (20 runs), side by side."""
    training = th.training_positions()
    cases = [
        ("improved GA, NNDTF", th.improved_ga, th.improved_ga_lockstep, th.ImprovedGASettings(iterations=iterations),
         th.fitness_function("nndtf", training), th.NNDTF_GENES),
        ("traditional GA, baseline", th.traditional_ga, th.traditional_ga_lockstep,
         th.TraditionalGASettings(iterations=iterations), th.fitness_function("baseline", training), th.BASELINE_GENES),
    ]  # fmt: skip
    for label, readable, lockstep, settings, evaluate, genes in cases:
        warm_up = type(settings)(**{**settings.as_dict(), "iterations": 5})  # load the compiled kernels first
        readable(evaluate, genes, np.random.default_rng(0), warm_up)
        lockstep(evaluate, genes, [np.random.default_rng(s) for s in range(20)], warm_up)
        start = time.perf_counter()
        readable(evaluate, genes, np.random.default_rng(0), settings)
        one = (time.perf_counter() - start) / iterations
        start = time.perf_counter()
        lockstep(evaluate, genes, [np.random.default_rng(s) for s in range(20)], settings)
        twenty = (time.perf_counter() - start) / iterations
        print(f"{label:>26}: readable {one * 1e3:.3f} ms per iteration (1 run), lockstep {twenty * 1e3:.3f} ms "
              f"(20 runs): {20 * one / twenty:.1f} x the throughput")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        full_run(args.seeds, args.iterations, args.workers)
        return
    print(f"machine: {os.cpu_count()} cores, numpy {np.__version__}")
    per_iteration()
    command = [sys.executable, __file__, "--child", "--seeds", str(args.seeds), "--iterations", str(args.iterations),
               "--workers", str(args.workers)]  # fmt: skip
    start = time.perf_counter()
    figures = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    total = time.perf_counter() - start
    for method in ("nndtf", "baseline"):
        print(f"full run, {method}: {args.seeds} seeds x {args.iterations:,} iterations on {args.workers} processes: "
              f"{figures[method]['seconds']:.1f} s, mean fitness {figures[method]['mean_fitness']:.4f}")  # fmt: skip
    seconds = figures["nndtf"]["seconds"] + figures["baseline"]["seconds"]
    print(f"full run, both methods: {seconds:.1f} s of training ({total:.1f} s with start-up); "
          f"peak memory {figures['peak_mb']:.0f} MB")  # fmt: skip
    if args.seeds == 20 and args.iterations == 50_000:
        verdict = "met" if seconds <= TARGET_SECONDS else "NOT met"
        print(f"target: both methods x 20 seeds x 50,000 iterations in at most {TARGET_SECONDS:.0f} s: {verdict}")
        figures = {"full_experiment_seconds": seconds, "with_start_up_seconds": total, "workers": args.workers,
                   "peak_mb": figures["peak_mb"]}  # fmt: skip
        print(f"recorded in {th.save_benchmark('ling_lam', figures)}")


if __name__ == "__main__":
    main()
