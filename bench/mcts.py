"""Benchmark of the book's Monte Carlo tree search against OpenSpiel's MCTSBot, and the MCTS players' yardsticks.

1. **One search**, side by side and alternately, ``--rounds`` times, at 10, 100 and 1,000 simulations on three boards
   (the empty board, X in a corner, a middle game): OpenSpiel's ``MCTSBot.step`` (uct_c = 2, one random roll-out,
   solver, its module's ``math.log`` replaced by the portable log, as ``tests/test_mcts.py`` runs it) against
   :func:`evolving_ttt.mcts.mcts_move` on the same ``RandomState`` seeds; the moves must agree. Printed per search
   in milliseconds, and the ratio.
2. **A full table**: :func:`evolving_ttt.mcts.estimate_policy` for X and for O at each budget with ``--samples``
   searches per board, in this process (seconds), and how many boards a ``boards="reachable"`` table searches.
3. With ``--arena``: each budget's player measured by :func:`evolving_ttt.arena.measure` (protocol score, results
   against the perfect and random players) with the bootstrap error of :func:`evolving_ttt.mcts.yardstick_spread`.

No target: the script prints the figures and never fails.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import types

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as spiel_mcts

from evolving_ttt import mcts
from evolving_ttt.arena import measure
from evolving_ttt.game import O, X, board_from_string, board_index, board_tables
from evolving_ttt.numerics import log_scalar

BOARDS = {"empty board": "... ... ...", "X in a corner": "X.. ... ...", "middle game": "X.O .X. ..."}
REPEATS = {10: 40, 100: 10, 1000: 2}
"""OpenSpiel searches per board and round at each budget (the book's search runs 20 times as many)."""


def spiel_state(game, index):
    board = board_tables().boards[index]
    xs, os = np.flatnonzero(board == X).tolist(), np.flatnonzero(board == O).tolist()
    state = game.new_initial_state()
    for k in range(len(xs) + len(os)):
        state.apply_action(xs[k // 2] if k % 2 == 0 else os[k // 2])
    return state


def time_openspiel(game, index, simulations, repeats, seed):
    rng = np.random.RandomState(seed)
    bot = spiel_mcts.MCTSBot(game, 2, simulations, spiel_mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = spiel_state(game, index)
    start = time.perf_counter()
    moves = [bot.step(state) for _ in range(repeats)]
    return (time.perf_counter() - start) / repeats, moves


def time_book(index, simulations, repeats, seed):
    rng = np.random.RandomState(seed)
    mark = int(board_tables().to_move[index])
    start = time.perf_counter()
    moves = [mcts.mcts_move(index, mark, simulations, rng) for _ in range(repeats)]
    return (time.perf_counter() - start) / repeats, moves


def searches(rounds: int) -> None:
    game = pyspiel.load_game("tic_tac_toe")
    spiel_mcts.math = types.SimpleNamespace(log=lambda x: log_scalar(float(x)), sqrt=math.sqrt)
    print(f"One search, ms per search, median of {rounds} alternating rounds (OpenSpiel 2.0.2 MCTSBot.step against "
          "mcts_move):")  # fmt: skip
    print(f"  {'board':<16}{'simulations':>12}{'OpenSpiel':>12}{'book':>10}{'ratio':>8}  same moves")
    for simulations, repeats in REPEATS.items():
        for name, text in BOARDS.items():
            index = board_index(board_from_string(text))
            spiel, book, same = [], [], True
            for r in range(rounds):
                seconds, spiel_moves = time_openspiel(game, index, simulations, repeats, seed=r)
                spiel.append(seconds)
                same &= spiel_moves == time_book(index, simulations, repeats, seed=r)[1]
                book.append(time_book(index, simulations, 20 * repeats, seed=r)[0])
            a, b = statistics.median(spiel), statistics.median(book)
            print(f"  {name:<16}{simulations:>12,}{1e3 * a:>12.3f}{1e3 * b:>10.3f}{a / b:>7.0f}x  {same}")


def tables(samples: int, arena: bool, replicates: int) -> None:
    print(f"\nFull policy tables, {samples} searches per board, one process (X: 2,423 boards, O: 2,097):")
    for simulations in mcts.BUDGETS:
        start = time.perf_counter()
        estimates = {mark: mcts.estimate_policy(mark, simulations, samples, seed=0) for mark in (X, O)}
        seconds = time.perf_counter() - start
        reach = {mark: len(mcts.estimate_policy(mark, simulations, samples, 0, boards="reachable").indices)
                 for mark in (X, O)}  # fmt: skip
        print(f"  {simulations:>5,} simulations: {seconds:6.1f} s for both tables; a reachable-boards table searches "
              f"{reach[X]:,} boards for X and {reach[O]:,} for O")  # fmt: skip
        if arena:
            row = measure(mcts.mcts_player(simulations, samples, seed=0))
            spread = mcts.yardstick_spread(estimates[X], estimates[O], replicates, seed=0)
            print(f"      protocol score {row.protocol_score:8.3f} +- {spread['protocol score'][1]:.3f}")
            for opponent in ("perfect", "perfect, 10% random", "random"):
                for side in ("X", "O"):
                    values, error = row.results[opponent][side], spread[f"{opponent} as {side}"][1]
                    wdl = " / ".join(f"{100 * v:6.2f} +- {100 * e:4.2f}" for v, e in zip(values, error, strict=True))
                    print(f"      against {opponent:<20} as {side}: win / draw / loss %  {wdl}")
            print(f"      can lose {row.can_lose}, mistakes/positions {row.mistakes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the one-search timing")
    parser.add_argument("--samples", type=int, default=mcts.SAMPLES, help="searches per board for the tables")
    parser.add_argument("--arena", action="store_true", help="measure each budget's player with its error")
    parser.add_argument("--replicates", type=int, default=100, help="bootstrap replicates for the error")
    args = parser.parse_args()
    mcts.mcts_counts([0], 10, 1, 0)  # compile or load the kernels before timing
    searches(args.rounds)
    tables(args.samples, args.arena, args.replicates)


if __name__ == "__main__":
    main()
