"""Al-Khateeb (2012) in the vocabulary every system speaks (:class:`evolving_ttt.systems.System`, chapter 25).

A task is one run of the co-evolution (:func:`~evolving_ttt.al_khateeb.engine.coevolve`); its result is a
:class:`~evolving_ttt.al_khateeb.engine.CoevolutionRun` holding that run alone; a player is an :class:`Evaluator`:
the 72 weights and step sizes of a 9-5-3-1 network and the reading of how it picks a move.
:func:`al_khateeb_ttt` is chapter 15's TTT as the arena and the play widget know it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from evolving_ttt.al_khateeb.engine import (
    CoevolutionRun,
    coevolve,
    load_coevolution_run,
    load_evaluator,
    merge_coevolution_runs,
    save_coevolution_run,
    save_evaluator,
)
from evolving_ttt.al_khateeb.engine import estimated_memory as _estimated_memory
from evolving_ttt.al_khateeb.evaluator import (
    PAPER_AL_KHATEEB,
    PAPER_ONE_PLY,
    VIEWS,
    WINNING_MOVES,
    AlKhateebSettings,
    OnePlySettings,
    move_values,
    one_ply_move,
)
from evolving_ttt.al_khateeb.results import choose_ttt, evaluator_policy, progress_curve, ttt_provenance
from evolving_ttt.al_khateeb.search import search_move, search_values
from evolving_ttt.arguments import counted, whole_number
from evolving_ttt.fogel_score import rule_base_policy
from evolving_ttt.game import O, X, check_instance
from evolving_ttt.outcomes import perfect_policy
from evolving_ttt.players import ArenaPlayer, Explanation
from evolving_ttt.records import DATA

name = "al-khateeb"
command = "al-khateeb"
title = "Al-Khateeb (2012)"
description = "Al-Khateeb (2012): co-evolve 9-5-3-1 evaluators (20 runs x 2,000 generations) and save TTT"
Settings = AlKhateebSettings
PAPER_SETTINGS = PAPER_AL_KHATEEB
SMALL_SETTINGS = AlKhateebSettings(runs=3, generations=3)
"""Three runs of three generations, for the conformance check (:func:`evolving_ttt.conformance.check_conformance`)."""


@dataclass(frozen=True, eq=False)
class Evaluator:
    """One evaluator: its 72 weights, its 72 step sizes, and how it picks a move (chapter 15)."""

    weights: np.ndarray
    steps: np.ndarray
    settings: OnePlySettings = PAPER_ONE_PLY


def task_count(settings: AlKhateebSettings) -> int:
    """One task per run."""
    return settings.runs


def run_tasks(settings: AlKhateebSettings, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
    """Runs ``tasks`` in lockstep; one :class:`CoevolutionRun` per run, in the order of ``tasks``."""
    order = sorted(int(t) for t in tasks)
    record = coevolve(settings, seed, progress, order)
    return [run_of(record, record.row(int(t))) for t in tasks]


GAME_DEFINITION = (
    "one game of tic-tac-toe between two networks of the run, played to its end: one network as X, the other as O "
    "(chapter 14)"
)
"""What :func:`games_played` counts as a game for Al-Khateeb (2012)."""


def games_played(settings: AlKhateebSettings, task: int = 0) -> int:
    """Games one task of ``settings`` (one run, any ``task``) plays while it learns, as the readable algorithm
    (:func:`~evolving_ttt.al_khateeb.robust.coevolve_general_readable`) plays them.

    Every generation a round robin: each of the ``population`` networks meets every other once as X and once as
    O, every ordered pair of two different networks once (no network plays itself), ``N (N - 1)`` games (380 for
    20 networks). With a hall of fame (chapter 21), from the second generation on every network also plays each
    of the ``hall_of_fame`` past champions drawn for that generation once as X and once as O: ``2 N H`` games
    more. So ``G N (N - 1) + (G - 1) 2 N H``; the paper's settings: 2,000 x 380 = 760,000 games per run.
    What is measured after the run (:func:`task_measures`: the champions' exact expected results against the
    perfect player and the rule base) is worked out exactly, not played, and not counted.

    The batched engine (:func:`~evolving_ttt.al_khateeb.engine.coevolve`) gives the same bits with fewer games:
    players are deterministic, so it keeps the results of the ``P (P - 1)`` games between two surviving parents
    and plays, after the first generation, only the games with a new offspring (290 of 380 in the paper).
    A game is :data:`GAME_DEFINITION`.
    """
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    _check_task(settings, task)
    n, g, h = settings.population, settings.generations, settings.hall_of_fame
    return g * n * (n - 1) + (g - 1) * 2 * n * h


def _check_task(settings, task: int) -> None:
    if isinstance(task, bool) or not isinstance(task, (int, np.integer)) or not 0 <= task < task_count(settings):
        raise ValueError(f"task must be a task number from 0 to {task_count(settings) - 1}; got {task!r}")


def run_of(record: CoevolutionRun, row: int) -> CoevolutionRun:
    """Row ``row`` of ``record`` as a record of that run alone."""
    one = slice(row, row + 1)
    return CoevolutionRun(
        record.settings, record.seed, (record.run_numbers[row],), record.totals[one], record.best_weights[one],
        record.best_ids[one], record.mean_step[one], record.weights[one], record.steps[one],
    )  # fmt: skip


def merge(settings: AlKhateebSettings, seed: int, results: Sequence[CoevolutionRun]) -> CoevolutionRun:
    """The runs stacked in order into one record."""
    return merge_coevolution_runs(list(results))


save_record, load_record = save_coevolution_run, load_coevolution_run


def record_players(record: CoevolutionRun) -> list[Evaluator]:
    """Each run's player: the network ranked first in the last generation."""
    rows = range(len(record.run_numbers))
    return [Evaluator(record.weights[r, 0], record.steps[r, 0], record.settings.player) for r in rows]


def record_curves(record: CoevolutionRun) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each run's best round-robin total per generation, for ``python -m ttt_helpers plot``."""
    best = record.totals.max(axis=2)
    games = 2 * (record.settings.population - 1)
    return {f"best round-robin total of the generation (of {games} games)": (np.arange(1, best.shape[1] + 1), best)}


CHAMPION_CHECKPOINTS = 5
"""How many generations of a run the sweeps measure the champion (the network ranked first) at: the first, the
last and evenly between (chapter 21)."""


def champion_generations(generations: int) -> np.ndarray:
    """The generations (counted from 1) at which :func:`task_measures` measures a run's champion (chapter 21)."""
    steps = np.linspace(0, generations, CHAMPION_CHECKPOINTS)
    return np.maximum(1, np.round(steps).astype(np.int64))


@cache
def _champion_yardsticks() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {"perfect": (perfect_policy(X), perfect_policy(O)), "rule": (rule_base_policy(X), rule_base_policy(O))}


def task_measures(settings: AlKhateebSettings, result: CoevolutionRun) -> dict[str, float]:
    """The run's own numbers (chapters 14 and 21).

    ``best_total_last`` and ``mean_step_last``: the round-robin total of the network ranked first and the
    population's mean step size, in the last generation. ``champion_{opponent}_{side}_{k}``: the exact expected
    result per game, P(win) - P(loss), of the network ranked first in generation
    ``champion_generations(generations)[k]`` against the perfect player (``perfect``) and Fogel's rule base
    (``rule``), as X (``x``) and as O (``o``): the learning curve of chapter 15, at five points of every run.
    """
    measures = {"best_total_last": float(result.totals[0, -1].max()),
                "mean_step_last": float(result.mean_step[0, -1])}  # fmt: skip
    for opponent, tables in _champion_yardsticks().items():
        curve = progress_curve(result, *tables, generations=champion_generations(settings.generations))[0]
        for k, point in enumerate(curve):
            for side, name in enumerate("xo"):
                measures[f"champion_{opponent}_{name}_{k}"] = float(point[side, 0] - point[side, 2])
    return measures


def save_player(player: Evaluator, path: str | Path, **provenance) -> None:
    """:func:`~evolving_ttt.al_khateeb.engine.save_evaluator`, with the player's reading."""
    save_evaluator(player.weights, player.steps, path, **{"player": player.settings.as_dict(), **provenance})


def load_player(path: str | Path) -> tuple[Evaluator, dict]:
    """An evaluator file; its reading is the file's ``player`` (or its experiment's), else the book's."""
    weights, steps, provenance = load_evaluator(path)
    experiment = provenance.get("experiment")
    reading = provenance.get("player", experiment.get("player", {}) if isinstance(experiment, dict) else {})
    try:
        settings = OnePlySettings(**reading) if isinstance(reading, dict) else PAPER_ONE_PLY
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: player: {error}") from None
    return Evaluator(weights, steps, settings), provenance


def policy_tables(player: Evaluator) -> tuple[np.ndarray, np.ndarray]:
    """The one-ply player's policy tables as X and as O."""
    return evaluator_policy(player.weights, X, player.settings), evaluator_policy(player.weights, O, player.settings)


def explain(player: Evaluator) -> Callable[[np.ndarray, int], Explanation]:
    """The evaluator's value of the board after each legal move (chapter 26)."""

    def explanation(board: np.ndarray, mark: int) -> Explanation:
        if player.settings.depth > 1:  # a deeper search (chapter 21)
            moves, values = search_values(player.weights, board, player.settings)
            move = search_move(player.weights, board, player.settings)
            shown = np.full(9, np.nan)
            shown[moves] = values
            return Explanation(shown, f"minimax value of the move, {player.settings.depth} plies deep",
                               f"The player searches {player.settings.depth} plies ahead and judges the boards at "
                               f"the end with the evaluator; it plays the best, square {move}.", move)  # fmt: skip
        moves, values = move_values(player.weights, board, player.settings)
        move = one_ply_move(player.weights, board, player.settings)
        shown = np.full(9, np.nan)
        shown[moves] = values
        return Explanation(shown, "evaluator's value of the board after the move",
                           f"The evaluator judges the board after each legal move, seen from the mover's side; "
                           f"it plays the best, square {move}.", move)  # fmt: skip

    return explanation


def al_khateeb_ttt(path: str | Path = DATA / "al_khateeb_ttt.json") -> ArenaPlayer:
    """Al-Khateeb's TTT: the co-evolved 9-5-3-1 evaluator with a one-ply search, on either side (chapters 14, 15)."""
    player, provenance = load_player(path)
    experiment = provenance.get("experiment") if isinstance(provenance.get("experiment"), dict) else {}
    runs, generations = experiment.get("runs", 20), experiment.get("generations", 2000)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in (runs, generations)):
        raise ValueError(f"{path}: the provenance's experiment must give whole numbers of runs and generations")
    training = f"{runs} runs x {generations:,} generations x 380 round-robin games = {runs * generations * 380:,} games"
    return ArenaPlayer("Al-Khateeb TTT", title, f"9-5-3-1 tanh evaluator, run {provenance.get('run')}, one-ply search",
                       *policy_tables(player), training, explain(player))  # fmt: skip


def claims() -> list:
    """Al-Khateeb's claims for the one verdict rule, from the study of chapter 21
    (:func:`evolving_ttt.al_khateeb.study.claims`)."""
    from evolving_ttt.al_khateeb.study import claims as study_claims

    return study_claims()


def book_players() -> tuple[ArenaPlayer, ...]:
    """Chapter 15's TTT."""
    return (al_khateeb_ttt(),)


# --- The command: python -m ttt_helpers al-khateeb ... (chapter 15) -------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The experiment's size, the readings of chapter 14, and ``--champion``."""
    parser.add_argument("--runs", type=whole_number, default=PAPER_AL_KHATEEB.runs,
                        help="independent co-evolutions, each from its own seed")  # fmt: skip
    parser.add_argument("--generations", type=whole_number, default=PAPER_AL_KHATEEB.generations,
                        help="generations per run")  # fmt: skip
    parser.add_argument("--champion", help="also save TTT, the winner of the final round robin, to this JSON file")
    parser.add_argument("--view", choices=VIEWS, default="mover",
                        help="boards seen from the mover's side (default) or always from X's")  # fmt: skip
    parser.add_argument("--winning-moves", choices=WINNING_MOVES, default="evaluator",
                        help="a winning move is judged by the network (default) or taken by the rules")  # fmt: skip


def settings_from_arguments(args: argparse.Namespace) -> AlKhateebSettings:
    return AlKhateebSettings(generations=args.generations, runs=args.runs,
                             player=OnePlySettings(view=args.view, winning_moves=args.winning_moves))  # fmt: skip


def extra_outputs(args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
    """The record (``--out``, ``.npz``) and, with ``--champion``, TTT (``.json``)."""
    outputs = {"--out": (Path(args.out), ".npz")}
    if args.champion:
        outputs["--champion"] = (Path(args.champion), ".json")
    return outputs


def estimated_memory(settings: AlKhateebSettings, workers: int) -> int:
    """:func:`~evolving_ttt.al_khateeb.engine.estimated_memory`: runs, population, generations and workers."""
    return _estimated_memory(settings, workers)


def describe(settings: AlKhateebSettings) -> str:
    return (f"{counted(settings.runs, 'run')} x {counted(settings.generations, 'generation')}, "
            f"{counted(settings.population, 'network')}")  # fmt: skip


def summary(record: CoevolutionRun) -> str:
    best = record.totals[:, -1].max(axis=1)
    return (f"best round-robin total in the last generation {best.mean():.2f} on average "
            f"(runs range {best.min()} to {best.max()}, out of 38)")  # fmt: skip


def write_outputs(record: CoevolutionRun, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
    """``--champion``: TTT, the winner of the final round robin, with its provenance."""
    if "--champion" not in paths:
        return {}
    row, points = choose_ttt(record)
    save_evaluator(record.weights[row, 0], record.steps[row, 0], paths["--champion"],
                   **ttt_provenance(record, row, points))  # fmt: skip
    return {"--champion": f"TTT is the player of run {record.run_numbers[row]}, {points[row]} points in the final "
                          "round robin"}  # fmt: skip
