"""Benchmark of the executor (evolving_ttt.parallel): Fogel's full experiment on local processes and on Dask.

The full experiment (20 trials x 800 generations, the paper's settings) runs on the default local process pool of
two workers, and on a Dask LocalCluster of two single-threaded worker processes that is already running (its
start-up is timed apart). The two alternate, twice each, in one run of this script, since the machine's speed
drifts; the figure is the ratio of the Dask wall time to the local one (target: at most 1.15). Both give the same
bits, which the script checks.
"""

import logging
import statistics
import time

import numpy as np
from distributed import Client, LocalCluster

from evolving_ttt.fogel.evolution import PAPER_EXPERIMENT
from evolving_ttt.systems import run_system

ROUNDS = 2
WORKERS = 2


def main() -> None:
    start = time.perf_counter()
    cluster = LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)  # fmt: skip
    Client(cluster).close()
    startup = time.perf_counter() - start
    times = {"local": [], "dask": []}
    records = {}
    try:
        for _ in range(ROUNDS):
            for where, scheduler in (("local", None), ("dask", cluster.scheduler_address)):
                start = time.perf_counter()
                records[where] = run_system("fogel", PAPER_EXPERIMENT, 1, WORKERS, scheduler)
                times[where].append(time.perf_counter() - start)
    finally:
        cluster.close()
    same = all(np.array_equal(getattr(records["local"], name), getattr(records["dask"], name))
               for name in ("best_score", "mean_score", "mean_hidden", "final_points"))  # fmt: skip
    local, dask = sum(times["local"]), sum(times["dask"])
    print(f"executor: Fogel's full experiment ({PAPER_EXPERIMENT.trials} trials x {PAPER_EXPERIMENT.generations} "
          f"generations), {WORKERS} workers, {ROUNDS} rounds alternating")  # fmt: skip
    print(f"  Dask LocalCluster start-up (apart): {startup:.2f} s")
    print(f"  local process pool: {', '.join(f'{t:.2f}' for t in times['local'])} s")
    print(f"  running Dask cluster: {', '.join(f'{t:.2f}' for t in times['dask'])} s")
    print(f"  ratio Dask / local: {dask / local:.3f} (median run {statistics.median(times['dask']):.2f} s against "
          f"{statistics.median(times['local']):.2f} s; target: at most 1.15)")  # fmt: skip
    print(f"  same bits on both: {same}")


if __name__ == "__main__":
    main()
