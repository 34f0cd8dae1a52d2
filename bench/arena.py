"""Benchmark of the arena (book/24_arena.ipynb): load every player of the book and measure all of them.

Prints the wall time of building the catalogue from the files in book/data (tabulating every player on every
board, both sides) and of the full arena (every yardstick of every player and the round robin), in a fresh
process each time, so that nothing is cached. Target: the full arena in at most 30 seconds on the 2-core machine.
"""

import statistics
import subprocess
import sys

CODE = """
import time
t0 = time.perf_counter()
from evolving_ttt import arena
players = arena.catalogue()
t1 = time.perf_counter()
report = arena.arena_report(players)
t2 = time.perf_counter()
print(len(players), t1 - t0, t2 - t1)
"""


def main() -> None:
    runs = []
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True).stdout.split()
        runs.append((int(out[0]), float(out[1]), float(out[2])))
    players = runs[0][0]
    load = [r[1] for r in runs]
    measure = [r[2] for r in runs]
    total = [a + b for a, b in zip(load, measure, strict=True)]
    print(f"arena: {players} players, 3 fresh processes")
    print(f"  loading and tabulating every player: {', '.join(f'{t:.2f}' for t in load)} s")
    print(f"  every yardstick and the round robin:  {', '.join(f'{t:.2f}' for t in measure)} s")
    print(f"  full arena: median {statistics.median(total):.2f} s (target: at most 30 s)")


if __name__ == "__main__":
    main()
