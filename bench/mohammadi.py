"""Speed figures of Mohammadi et al.'s system (chapters 18 and 19) on this machine.

Run with ``.venv/bin/python bench/mohammadi.py`` (``make bench`` runs it too). It prints:

* the wall time of every series chapter 19 shows (six series of 4 runs x 15 generations, 128 programs), computed
  from scratch in a fresh process each time, ``--repeats`` times (default 3), with every run, the best and the
  median; the target is at most 60 s for all of them together, judged on the median;
* generations per run, games played in the chains, and games per second (exact evaluations of the candidates
  included in the time); these series use the default engine, the fast one ("bitsets");
* one 100-generation run of the paper's population of 128 (the paper's settings, one run, seed 1) with each engine
  of :data:`~evolving_ttt.mohammadi.bitsets.ENGINES`, the old ("batched") and the new ("bitsets"), each in a fresh
  process, alternately, ``--pairs`` times (default 2): every time, the best of each, their ratio (the target is at
  least 3), and whether the two engines' records are the same bit for bit (their SHA-256);
* the move tables of 30 random programs by the readable interpreter (one board at a time), the batched one (every
  board at once) and the fast engine (sets of boards as bits), side by side in one process, with the ratios.

The script prints the figures and says whether the target is met; it never fails on them.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import subprocess
import sys
import time

import numpy as np

import ttt_helpers as th
from evolving_ttt.mohammadi.bitsets import ENGINES, bitset_move_table

SERIES = {
    "no judge": {"judge": "none"},
    "scripted judge": {"judge": "perfect"},
    "random judge": {"judge": "random"},
    "no judge, any": {"judge": "none", "playat_counted": "any"},
    "scripted judge, any": {"judge": "perfect", "playat_counted": "any"},
    "no judge, nil": {"judge": "none", "taken": "nil"},
}
TARGET_SECONDS = 60.0
LONG_RUN = dataclasses.replace(th.PAPER_MOHAMMADI, generations=100, runs=1)
"""The long run timed with both engines: the paper's settings, 100 generations, one run (seed 1)."""
TARGET_RATIO = 3.0


def chapter_series() -> None:
    """Child mode: run chapter 19's series once, from scratch, and print the times as JSON."""
    times = {}
    for label, changes in SERIES.items():
        start = time.perf_counter()
        th.evolve_series(th.MohammadiSettings(**changes), seed=1, progress=False)
        times[label] = time.perf_counter() - start
    print(json.dumps(times))


def long_run(engine: str) -> None:
    """Child mode: the 100-generation run with ``engine``, from scratch; print its seconds and its record's SHA-256."""
    start = time.perf_counter()
    record = th.evolve_series(LONG_RUN, seed=1, progress=False, engine=engine)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(json.dumps(record.as_dict(), sort_keys=True).encode()).hexdigest()
    print(json.dumps({"seconds": seconds, "sha256": digest}))


def child(*arguments: str) -> dict:
    """Run this script in a fresh process with ``arguments``; the JSON it prints."""
    done = subprocess.run([sys.executable, __file__, *arguments], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(arguments)} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def interpreter_ratio(programs: int = 30) -> tuple[float, float, float]:
    """Seconds for the move tables of ``programs`` random programs: readable walk per board, batched, bitsets."""
    tables = th.board_tables()
    playable, to_move = th.playable_boards()
    sample = th.random_programs(np.random.default_rng(19), programs, 20)
    th.program_move_table(sample[0])  # warm up: the board tables, the board masks, the compiled kernel
    bitset_move_table(sample[0])
    start = time.perf_counter()
    for program in sample:
        for i, mark in zip(playable, to_move, strict=True):
            th.run_program(program, tables.boards[i], int(mark))
    readable = time.perf_counter() - start
    start = time.perf_counter()
    for program in sample:
        th.program_move_table(program)
    batched = time.perf_counter() - start
    start = time.perf_counter()
    for program in sample:
        bitset_move_table(program)
    return readable, batched, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process runs of the series (default 3)")
    parser.add_argument("--pairs", type=int, default=2, help="fresh-process 100-generation runs per engine (default 2)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--long", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        chapter_series()
        return
    if args.long:
        long_run(args.long)
        return
    settings = th.PAPER_MOHAMMADI
    games = len(SERIES) * settings.runs * settings.generations * settings.population * settings.group_size * 2
    print(f"chapter 19: {len(SERIES)} series x {settings.runs} runs x {settings.generations} generations per run, "
          f"population {settings.population}, {games:,} games in the chains")  # fmt: skip
    totals = []
    for repeat in range(args.repeats):
        times = child("--child")
        totals.append(sum(times.values()))
        parts = ", ".join(f"{label} {seconds:.1f} s" for label, seconds in times.items())
        print(f"  run {repeat + 1}: {totals[-1]:.1f} s ({parts})")
    median = float(np.median(totals))
    print(f"all {len(SERIES)} series: best {min(totals):.1f} s, median {median:.1f} s "
          f"({games / median:,.0f} games per second at the median); target <= {TARGET_SECONDS:.0f} s: "
          f"{'met' if median <= TARGET_SECONDS else 'NOT met'}")  # fmt: skip
    old, new = ENGINES
    print(f"one run of {LONG_RUN.generations} generations, population {LONG_RUN.population} (paper's settings, "
          f"seed 1), old engine ({old}) and new ({new}) alternately, each in a fresh process:")  # fmt: skip
    seconds: dict[str, list[float]] = {old: [], new: []}
    digests = set()
    for pair in range(args.pairs):
        for engine in (old, new):
            done = child("--long", engine)
            seconds[engine].append(done["seconds"])
            digests.add(done["sha256"])
        print(f"  pair {pair + 1}: {old} {seconds[old][-1]:.1f} s, {new} {seconds[new][-1]:.1f} s, "
              f"ratio {seconds[old][-1] / seconds[new][-1]:.2f}")  # fmt: skip
    ratio = min(seconds[old]) / min(seconds[new])
    print(f"best: {old} {min(seconds[old]):.1f} s, {new} {min(seconds[new]):.1f} s, ratio {ratio:.2f}; target >= "
          f"{TARGET_RATIO:.0f}: {'met' if ratio >= TARGET_RATIO else 'NOT met'}; same record from both engines: "
          f"{'yes' if len(digests) == 1 else 'NO'}")  # fmt: skip
    path = th.save_benchmark("mohammadi", {
        "full_experiment_seconds": median, "full_experiment_runs": totals,
        "long_run_batched_seconds": seconds[old], "long_run_bitsets_seconds": seconds[new], "long_run_ratio": ratio,
    })  # fmt: skip
    print(f"recorded in {path}")
    readable, batched, bitsets = interpreter_ratio()
    print(f"move tables of 30 random programs on 4,520 boards: readable {readable:.2f} s, batched {batched:.3f} s, "
          f"bitsets {bitsets:.4f} s; readable / batched {readable / batched:.0f}, batched / bitsets "
          f"{batched / bitsets:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
