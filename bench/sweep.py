"""Benchmark of sweeps (evolving_ttt.sweeps): what the store and the executor cost per task, and two workers' speed-up.

1. The store: one task recorded per transaction in a fresh SQLite database (WAL), 2,000 times.
2. The executor: 2,000 tasks that do nothing, one per share as a sweep sends them, on two local worker processes
   and on a running two-worker Dask LocalCluster.
3. A real sweep of Fogel trials (8 of the paper's trials of 800 generations, seeds 1 to 8) on one worker and on
   two, side by side, after a small sweep that imports and tabulates what every sweep needs once per process:
   the share of the one-worker sweep's wall time that is not spent in its tasks, and two workers' speed-up.

Targets: under 5 ms per task for the store and the executor, and under 2% of a sweep of Fogel trials.
"""

import logging
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

from evolving_ttt.parallel import TaskRunner
from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import sweep

TASKS = 2000
GRID = ["trials=1"]  # the paper's trials: 50 parents, 800 generations
SEEDS = 8


def nothing(share, progress):
    return [None for _ in share]


def per_task(seconds: float, count: int) -> str:
    return f"{1000 * seconds / count:.2f} ms per task"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        with SweepStore(folder / "store.sqlite", {"system": "bench", "grid": [], "seeds": 1}) as store:
            start = time.perf_counter()
            for k in range(TASKS):
                store.record((0, k, 0), {"trials": 1}, {"score": 0.5 * k}, "{}" * 500, 0.1, "bench:1")
            store_time = time.perf_counter() - start
        shares = [[k] for k in range(TASKS)]
        with TaskRunner(workers=2) as runner:
            start = time.perf_counter()
            runner.map(nothing, shares, on_result=lambda k, r: None)
            local_time = time.perf_counter() - start
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.ERROR) as c:
            with TaskRunner(scheduler=c.scheduler_address) as runner:
                runner.map(nothing, shares[:50], on_result=lambda k, r: None)  # warm the workers up
                start = time.perf_counter()
                runner.map(nothing, shares, on_result=lambda k, r: None)
                dask_time = time.perf_counter() - start
        sweep("fogel", ["generations=2", "parents=6", "trials=1"], 2, folder / "warm.sqlite", 1, progress=False)
        totals, tables = {}, {}
        for workers in (1, 2):
            start = time.perf_counter()
            tables[workers] = sweep("fogel", GRID, SEEDS, folder / f"fogel{workers}.sqlite", workers, progress=False)
            totals[workers] = time.perf_counter() - start
    in_tasks = tables[1]["wall_time"].sum()
    overhead = totals[1] - in_tasks
    print(f"sweep overhead: the store and the executor, {TASKS} tasks each")
    print(f"  store (one transaction per task, WAL): {per_task(store_time, TASKS)}")
    print(f"  executor, two local worker processes: {per_task(local_time, TASKS)}")
    print(f"  executor, a running two-worker Dask LocalCluster: {per_task(dask_time, TASKS)}")
    print("  target: under 5 ms per task")
    print(f"a sweep of Fogel trials: {SEEDS} of the paper's trials (--set {' --set '.join(GRID)} --seeds {SEEDS})")
    print(f"  one worker: {totals[1]:.2f} s, of which {in_tasks:.2f} s in the tasks (run and measured); the rest, "
          f"{overhead:.2f} s, is {100 * overhead / totals[1]:.2f}% (target: under 2%)")  # fmt: skip
    print(f"  two workers: {totals[2]:.2f} s: a speed-up of {totals[1] / totals[2]:.2f}")
    same = tables[1].drop(columns=["wall_time", "worker"]).equals(tables[2].drop(columns=["wall_time", "worker"]))
    print(f"  same table on one and two workers: {same}")


if __name__ == "__main__":
    main()
