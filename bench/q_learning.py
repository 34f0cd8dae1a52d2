"""Benchmark of the Q-learner's compiled training loops against the readable ones (evolving_ttt.q_learning).

1. **Training**, side by side and alternately, ``--rounds`` times: ``--games`` games against the rule base (the
   learner as X) and of self-play, by the readable Python loops of ``learner`` and by the compiled loops of
   ``engine``, from the same seeds; the Q-tables must be the same bits. Printed in microseconds a game, and the
   ratio (the median of the rounds).
2. **One task of the curve study** (``curves_q_learning``: a million games against the rule base, the greedy player
   measured exactly at 13 checkpoints), as the system now runs it, in seconds, split into training and measuring.

No target: the script prints the figures and never fails.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from evolving_ttt.q_learning import engine, learner, system
from evolving_ttt.q_learning.player import greedy_protocol_losses, greedy_yardsticks


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000, help="games per training run (default 20,000)")
    parser.add_argument("--rounds", type=int, default=3, help="side-by-side rounds (default 3)")
    args = parser.parse_args()
    engine.fast_train_self_play(10, np.random.default_rng(0))  # compiled (or loaded from numba's cache) first
    engine.fast_train_against_rule_base(10, np.random.default_rng(0))
    pairs = {"against the rule base": (learner.train_against_rule_base, engine.fast_train_against_rule_base),
             "self-play": (learner.train_self_play, engine.fast_train_self_play)}  # fmt: skip
    print(f"1. Training, {args.games:,} games, {args.rounds} rounds side by side (microseconds a game)")
    for name, (readable, compiled) in pairs.items():
        ratios, slow, fast = [], [], []
        for round_ in range(args.rounds):
            a, seconds_a = timed(readable, args.games, np.random.default_rng(round_))
            b, seconds_b = timed(compiled, args.games, np.random.default_rng(round_))
            if not np.array_equal(a.q.view(np.uint64), b.q.view(np.uint64)):
                raise SystemExit(f"{name}: the compiled loop's Q-table differs from the readable loop's")
            slow.append(seconds_a * 1e6 / args.games)
            fast.append(seconds_b * 1e6 / args.games)
            ratios.append(seconds_a / seconds_b)
        print(f"   {name:<22} readable {statistics.median(slow):7.2f}   compiled {statistics.median(fast):6.3f}"
              f"   ratio {statistics.median(ratios):6.1f}  (same bits)")  # fmt: skip
    for opponent in system.OPPONENTS:
        settings = system.QLearningSettings(tasks=1, opponent=opponent)
        player, task_seconds = timed(system.learn, settings, 20, 0)
        start = time.perf_counter()
        for _ in range(settings.checkpoints):
            greedy_yardsticks(player.q)
            greedy_protocol_losses(player.q)
        measuring = time.perf_counter() - start
        print(
            f"2. One curve-study task, {opponent} ({settings.episodes:,} games, {settings.checkpoints} "
            f"checkpoints): {task_seconds:.1f} s, of which measuring the checkpoints about {measuring:.1f} s"
        )


if __name__ == "__main__":
    main()
