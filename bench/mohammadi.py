"""Speed figures of Mohammadi et al.'s system (chapters 18 and 19) on this machine.

Run with ``.venv/bin/python bench/mohammadi.py`` (``make bench`` runs it too). It prints:

* the wall time of every series chapter 19 shows (six series of 4 runs x 15 generations, 128 programs), computed
  from scratch in a fresh process each time, ``--repeats`` times (default 3), with every run, the best and the
  median; the target is at most 60 s for all of them together, judged on the median;
* generations per run, games played in the chains, and games per second (exact evaluations of the candidates
  included in the time);
* the ratio of the readable interpreter (one board at a time) to the batched one (every board at once) on the move
  tables of 30 random programs, both timed side by side in one process.

The script prints the figures and says whether the target is met; it never fails on them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

import ttt_helpers as th

SERIES = {
    "no judge": {"judge": "none"},
    "scripted judge": {"judge": "perfect"},
    "random judge": {"judge": "random"},
    "no judge, any": {"judge": "none", "playat_counted": "any"},
    "scripted judge, any": {"judge": "perfect", "playat_counted": "any"},
    "no judge, nil": {"judge": "none", "taken": "nil"},
}
TARGET_SECONDS = 60.0


def chapter_series() -> None:
    """Child mode: run chapter 19's series once, from scratch, and print the times as JSON."""
    times = {}
    for label, changes in SERIES.items():
        start = time.perf_counter()
        th.evolve_series(th.MohammadiConfig(**changes), seed=1, progress=False)
        times[label] = time.perf_counter() - start
    print(json.dumps(times))


def interpreter_ratio(programs: int = 30) -> tuple[float, float]:
    """Seconds for the move tables of ``programs`` random programs: readable walk per board, batched walk."""
    tables = th.board_tables()
    playable, to_move = th.playable_boards()
    sample = th.random_programs(np.random.default_rng(19), programs, 20)
    start = time.perf_counter()
    for program in sample:
        for i, mark in zip(playable, to_move, strict=True):
            th.run_program(program, tables.boards[i], int(mark))
    readable = time.perf_counter() - start
    start = time.perf_counter()
    for program in sample:
        th.program_move_table(program)
    return readable, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process runs of the series (default 3)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        chapter_series()
        return
    config = th.PAPER_MOHAMMADI
    games = len(SERIES) * config.runs * config.generations * config.population * config.group_size * 2
    print(f"chapter 19: {len(SERIES)} series x {config.runs} runs x {config.generations} generations per run, "
          f"population {config.population}, {games:,} games in the chains")  # fmt: skip
    totals = []
    for repeat in range(args.repeats):
        done = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, check=True)
        times = json.loads(done.stdout)
        totals.append(sum(times.values()))
        parts = ", ".join(f"{label} {seconds:.1f} s" for label, seconds in times.items())
        print(f"  run {repeat + 1}: {totals[-1]:.1f} s ({parts})")
    median = float(np.median(totals))
    print(f"all {len(SERIES)} series: best {min(totals):.1f} s, median {median:.1f} s "
          f"({games / median:,.0f} games per second at the median); target <= {TARGET_SECONDS:.0f} s: "
          f"{'met' if median <= TARGET_SECONDS else 'NOT met'}")  # fmt: skip
    path = th.save_benchmark("mohammadi", {"full_experiment_seconds": median, "full_experiment_runs": totals})
    print(f"recorded in {path}")
    readable, batched = interpreter_ratio()
    print(f"move tables of 30 random programs on 4,520 boards: readable {readable:.2f} s, batched {batched:.3f} s, "
          f"ratio {readable / batched:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
