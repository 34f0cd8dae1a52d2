"""Speed figures of Al-Khateeb's co-evolution engine on this machine (chapter 14).

Run with ``make bench`` (or ``.venv/bin/python bench/al_khateeb.py``). It prints:

* the wall time of the full experiment (20 runs x 2,000 generations of 20 networks), in a fresh process each
  time, ``--repeats`` times (default 3), on one core and on all cores: shared machines vary from run to run, so
  it prints every run and judges the target on the median;
* the ratio of the readable per-game loop (``coevolve_readable``: one generation of one run, 380 games played
  one move at a time) to the engine (``coevolve`` on 20 runs x ``--reduced`` generations, per generation of one
  run), measured side by side, alternately, in this process.

The target in the project's issue is the full run in at most 60 s on this 2-core machine. The script prints the
figures and says whether the target is met; it never fails on it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import ttt_helpers as th

TARGET_SECONDS = 60.0


def full_run(workers: int) -> None:
    """Child mode: run the paper's experiment once and print its figures as JSON."""
    start = time.perf_counter()
    run = th.coevolve(th.PAPER_AL_KHATEEB, seed=1, workers=workers)
    print(
        json.dumps({"seconds": time.perf_counter() - start, "best_total_mean": float(run.totals[:, -1].max(1).mean())})
    )


def timed_full_runs(repeats: int, workers: int) -> list[float]:
    seconds = []
    for _ in range(repeats):
        done = subprocess.run([sys.executable, __file__, "--child", str(workers)], capture_output=True, text=True,
                              check=True)  # fmt: skip
        seconds.append(json.loads(done.stdout)["seconds"])
    return seconds


def side_by_side(reduced: int, rounds: int) -> tuple[float, float]:
    """Seconds per generation of one run: readable code and engine, measured alternately ``rounds`` times."""
    readable, engine = [], []
    settings = th.AlKhateebSettings(generations=reduced)
    one_generation = th.AlKhateebSettings(generations=1)
    for k in range(rounds):
        start = time.perf_counter()
        th.coevolve_readable(one_generation, seed=k, run=0)
        readable.append(time.perf_counter() - start)
        start = time.perf_counter()
        th.coevolve(settings, seed=k)
        engine.append((time.perf_counter() - start) / (settings.runs * reduced))
    return float(np.median(readable)), float(np.median(engine))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reduced", type=int, default=50, help="generations of the engine's side-by-side run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        full_run(args.child)
        return
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    readable, engine = side_by_side(args.reduced, args.rounds)
    print(f"readable per-game loop: {readable:.3f} s per generation of one run (380 games)")
    print(f"engine: {1000 * engine:.3f} ms per generation of one run (20 runs x {args.reduced} generations)")
    print(f"ratio: the engine is {readable / engine:,.0f} times faster")
    figures = {"engine_ratio": readable / engine}
    for workers in sorted({1, os.cpu_count() or 1}):
        seconds = timed_full_runs(args.repeats, workers)
        median = statistics.median(seconds)
        figures.update(full_experiment_seconds=median, full_experiment_runs=seconds, workers=workers)
        runs = ", ".join(f"{s:.1f}" for s in seconds)
        verdict = "met" if median <= TARGET_SECONDS else "NOT met"
        print(f"full run, 20 runs x 2,000 generations, {workers} process(es): {runs} s; median {median:.1f} s "
              f"(target <= {TARGET_SECONDS:.0f} s: {verdict})")  # fmt: skip
    print(f"recorded in {th.save_benchmark('al_khateeb', figures)} (the run on {figures['workers']} process(es))")


if __name__ == "__main__":
    main()
