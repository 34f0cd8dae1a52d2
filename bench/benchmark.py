"""Speed and memory figures of the evolution engine on this machine.

Run with ``make bench`` (or ``.venv/bin/python bench/benchmark.py``). It prints:

* games per second of the batched engine (one generation's workload: 20 populations of 100 networks, 32 games each)
  and of the readable per-game loop (``play_protocol`` with ``network_player``), and their ratio;
* the wall time of the full experiment (20 trials x 800 generations, all cores), each time in a fresh process,
  ``--repeats`` times (default 3): shared machines vary from run to run, so it prints every run, the best and
  the median, and judges the target on the median;
* the peak resident memory of that process and of its worker processes (the largest over the runs);
* the ratio of the readable per-game generation step to the engine, per trial and generation.

The targets in the project's issue are: the full run in at most 15 s, at least 300 times the per-game loop, and a
peak memory under 200 MB. The script prints the figures and says which targets are met; it never fails on them.
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


def peak_megabytes(who: int) -> float:
    """Peak resident set size in MB of this process (RUSAGE_SELF) or its largest finished child (RUSAGE_CHILDREN)."""
    return resource.getrusage(who).ru_maxrss / 1024  # ru_maxrss is in kilobytes on Linux


def full_run(trials: int, generations: int, workers: int) -> None:
    """Child mode: run the experiment once and print its figures as JSON."""
    settings = th.FogelSettings(trials=trials, generations=generations)
    start = time.perf_counter()
    run = th.evolve(settings, seed=1, workers=workers)
    seconds = time.perf_counter() - start
    figures = {
        "seconds": seconds,
        "main_peak_mb": peak_megabytes(resource.RUSAGE_SELF),
        "worker_peak_mb": peak_megabytes(resource.RUSAGE_CHILDREN) if workers > 1 else 0.0,
        "final_mean_best": float(run.best_score[:, -1].mean()),
    }
    print(json.dumps(figures))


def engine_games_per_second(repeats: int = 5) -> float:
    """Games per second of ``play_protocol_batch`` on one generation's workload (2,000 networks x 32 games)."""
    rng = np.random.default_rng(0)
    population = th.random_population(rng, 2000)
    uniforms = rng.random((2000, th.GAMES_PER_EVALUATION, th.OPPONENT_MOVES_PER_GAME))
    th.play_protocol_batch(population, uniforms)  # warm up: builds the lookup tables
    start = time.perf_counter()
    for _ in range(repeats):
        th.play_protocol_batch(population, uniforms)
    return repeats * 2000 * th.GAMES_PER_EVALUATION / (time.perf_counter() - start)


def readable_games_per_second(networks: int = 20) -> float:
    """Games per second of the readable loop on ``networks`` random networks x 32 games."""
    rng = np.random.default_rng(1)
    population = th.random_population(rng, networks)
    uniforms = rng.random((networks, th.GAMES_PER_EVALUATION, th.OPPONENT_MOVES_PER_GAME))
    start = time.perf_counter()
    for i in range(networks):
        th.play_protocol(th.network_player(population.network(i)), uniforms[i])
    return networks * th.GAMES_PER_EVALUATION / (time.perf_counter() - start)


def readable_generation_seconds() -> float:
    """Seconds for one generation of one trial (50 parents) by the readable step."""
    rng = np.random.default_rng(2)
    parents = th.random_population(rng, 50)
    draws = th.draw_generation(rng, 50)
    start = time.perf_counter()
    th.generation_step_readable([parents.network(i) for i in range(50)], draws)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--generations", type=int, default=800)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=3, help="full runs to time (default 3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        full_run(args.trials, args.generations, args.workers)
        return

    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, numpy {np.__version__}")
    engine = engine_games_per_second()
    readable = readable_games_per_second()
    print(f"engine:   {engine:12,.0f} games/s (2,000 networks x 32 games per call)")
    print(f"readable: {readable:12,.0f} games/s (play_protocol with network_player)")
    print(f"ratio:    {engine / readable:12,.0f} x")

    command = [sys.executable, __file__, "--child", "--trials", str(args.trials),
               "--generations", str(args.generations), "--workers", str(args.workers)]  # fmt: skip
    runs = []
    for _ in range(max(1, args.repeats)):
        child = subprocess.run(command, capture_output=True, text=True, check=True)
        runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    seconds = sorted(run["seconds"] for run in runs)
    median = float(np.median(seconds))
    figures = {
        "seconds": median,
        "main_peak_mb": max(run["main_peak_mb"] for run in runs),
        "worker_peak_mb": max(run["worker_peak_mb"] for run in runs),
        "final_mean_best": runs[0]["final_mean_best"],
    }
    if len({run["final_mean_best"] for run in runs}) != 1:
        raise RuntimeError("the full runs did not reproduce one another")
    step = readable_generation_seconds()
    trial_generations = args.trials * args.generations
    engine_step = figures["seconds"] / trial_generations
    print(f"\nfull run: {args.trials} trials x {args.generations} generations on {args.workers} worker(s)")
    each = ", ".join(f"{x:.1f}" for x in seconds)
    print(f"  wall time:            {median:8.1f} s, median of {len(runs)} runs ({each} s)")
    print(f"                        {1000 * engine_step:8.2f} ms per trial-generation")
    print(f"  peak memory:          {figures['main_peak_mb']:8.0f} MB main process, "
          f"{figures['worker_peak_mb']:.0f} MB largest worker")  # fmt: skip
    print(f"  mean best score at the last generation: {figures['final_mean_best']:.2f}")
    print(f"readable generation step: {step:.2f} s per trial-generation (50 parents, 100 networks x 32 games)")
    ratio = step / engine_step
    print(f"  full run at that pace:  {step * trial_generations / 60:8.1f} min; engine ratio {ratio:,.0f} x")

    total_peak = figures["main_peak_mb"] + figures["worker_peak_mb"]
    print("\ntargets:")
    verdict = "met" if median <= 15 else "NOT met"
    print(f"  full run <= 15 s:        {verdict} (median {median:.1f} s, best {seconds[0]:.1f} s)")
    print(f"  >= 300 x the loop:       {'met' if ratio >= 300 else 'NOT met'} ({ratio:,.0f} x)")
    print(f"  peak memory < 200 MB:    {'met' if total_peak < 200 else 'NOT met'} ({total_peak:.0f} MB in all)")
    if (args.trials, args.generations) == (20, 800):
        figures = {"full_experiment_seconds": median, "full_experiment_runs": seconds, "workers": args.workers,
                   "peak_mb": total_peak, "engine_ratio": ratio}  # fmt: skip
        print(f"recorded in {th.save_benchmark('benchmark', figures)}")


if __name__ == "__main__":
    main()
