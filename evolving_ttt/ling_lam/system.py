"""Ling and Lam (2011) in the vocabulary every system speaks (:class:`evolving_ttt.systems.System`, chapter 25).

A task is one run of one method: task ``k`` is run ``k // M`` of method ``methods[k % M]`` of the settings'
``M`` methods, so that the methods' runs are shared out evenly. Its result is a :class:`LingLamTask`; the record
is a dict of :class:`~evolving_ttt.ling_lam.experiment.TrainingRun` by method, as
:func:`~evolving_ttt.ling_lam.experiment.save_training_runs` writes it; a player is a
:class:`~evolving_ttt.ling_lam.experiment.TrainedNetwork`. :func:`ling_lam_players` are chapter 17's players.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from evolving_ttt.arguments import counted, whole_number
from evolving_ttt.game import O, X, check_instance
from evolving_ttt.ling_lam.experiment import (
    METHODS,
    PAPER_LING_LAM,
    SUMMARY_CURVE_STEP,
    LingLamSettings,
    TrainedNetwork,
    TrainingRun,
    _train_share,
    load_trained_network,
    load_training_runs,
    network_policy,
    save_runs_summary,
    save_trained_network,
    save_training_runs,
)
from evolving_ttt.ling_lam.experiment import estimated_memory as _estimated_memory
from evolving_ttt.ling_lam.ga import REPLACEMENT_READINGS, generational_evaluations
from evolving_ttt.ling_lam.heuristic import heuristic_encoding, heuristic_move, heuristic_policy, square_scores
from evolving_ttt.ling_lam.network import (
    GRID_NUMBERS,
    HIDDEN_ORDERS,
    TRAINING_SOURCES,
    TrainingSet,
    all_x_positions,
    fitness,
    ling_lam_outputs,
)
from evolving_ttt.players import ArenaPlayer, Explanation, square_values
from evolving_ttt.records import DATA

name = "ling-lam"
command = "ling-lam"
title = "Ling and Lam (2011)"
description = "Ling and Lam (2011): train the NNDTF and the baseline network for many seeds"
Settings = LingLamSettings
PAPER_SETTINGS = PAPER_LING_LAM
SMALL_SETTINGS = LingLamSettings(seeds=2, iterations=20)
"""Two runs of 20 iterations per method, for the conformance check
(:func:`evolving_ttt.conformance.check_conformance`)."""


@dataclass(frozen=True, eq=False)
class LingLamTask:
    """One run of one method: its curves, its trained network and that network's fitness."""

    method: str
    run: int
    best_fitness: np.ndarray
    population_best: np.ndarray
    champion: np.ndarray
    champion_fitness: float
    evaluations: int


def task_count(settings: LingLamSettings) -> int:
    """``seeds`` runs of each method."""
    return settings.seeds * len(settings.methods)


def task_of(settings: LingLamSettings, task: int) -> tuple[str, int]:
    """Task ``task`` as ``(method, run)``."""
    return settings.methods[task % len(settings.methods)], task // len(settings.methods)


def run_tasks(settings: LingLamSettings, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
    """The tasks' runs, each method's in lockstep; one :class:`LingLamTask` per task, in the order of ``tasks``."""
    found = {}
    for method in settings.methods:
        runs = sorted(run for m, run in (task_of(settings, int(t)) for t in tasks) if m == method)
        if runs:
            label = progress and (progress if isinstance(progress, str) else f"{method}: {len(runs)} runs")
            share = _train_share(method, settings, seed, runs, label)
            for k, run in enumerate(runs):
                found[method, run] = LingLamTask(
                    method, run, share.best_fitness[k], share.population_best[k], share.champions[k],
                    float(share.champion_fitness[k]), share.evaluations,
                )  # fmt: skip
    return [found[task_of(settings, int(t))] for t in tasks]


GAME_DEFINITION = (
    "none: Ling and Lam's networks play no game while they learn. A GA trains a network to imitate the heuristic "
    "on training_count fixed positions with X to move; what games_played counts instead is a position "
    "looked at: one network's output on one training position, scored by the heuristic (equation (31))"
)
"""What :func:`games_played` counts for Ling and Lam (2011): positions looked at, since there are no games."""


def fitness_evaluations(settings: LingLamSettings, task: int = 0) -> int:
    """Fitness evaluations (equation (31), one network on all ``training_count`` positions) of one task of
    ``settings``: run ``task // M`` of method ``methods[task % M]``, counted in the readable GA's terms
    (:mod:`evolving_ttt.ling_lam.ga`).

    Both GAs first evaluate the ``population`` chromosomes of the initial population. Then each iteration of the
    improved GA (Figure 7, the NNDTF's method) evaluates 7 networks: the 4 crossover candidates (23)-(26) and the 3
    mutants of (30); each iteration of the traditional GA (Figure 6, the baseline's) evaluates its 2 children, or,
    read as a generational GA (``traditional.form``, chapter 22), each generation evaluates ``population``
    children. So ``population + 7 x iterations`` or ``population + 2 x iterations``
    (``population + population x iterations`` generational): 350,010 for the NNDTF and 100,010 for the baseline
    with the paper's settings. The crossed methods count by their GA. (The task's ``evaluations``.)
    """
    check_instance(settings, LingLamSettings, "settings", "a LingLamSettings")
    if isinstance(task, bool) or not isinstance(task, (int, np.integer)) or not 0 <= task < task_count(settings):
        raise ValueError(f"task must be a task number from 0 to {task_count(settings) - 1}; got {task!r}")
    method, _ = task_of(settings, int(task))
    ga = settings.settings(method)
    if METHODS[method][1] == "improved":
        return ga.population + 7 * ga.iterations
    return generational_evaluations(ga)


def positions_looked_at(settings: LingLamSettings, task: int = 0) -> int:
    """Training positions one task of ``settings`` looks at while it learns: its :func:`fitness_evaluations` x
    ``training_count`` (each evaluation runs the network on every training position and scores its move).

    The paper's settings: 350,010 x 100 = 35,001,000 for the NNDTF (improved GA) and 100,010 x 100 = 10,001,000
    for the baseline (traditional GA). Task ``k`` is a run of method ``methods[k % M]``: with the paper's two
    methods, even tasks are the NNDTF's and odd ones the baseline's. The compiled engine gives the same bits
    looking at fewer positions (it stops scoring a network once the GA's choice is sure,
    :mod:`evolving_ttt.ling_lam.loops`); these are the readable GA's. Nothing measured after the run is counted.
    """
    return fitness_evaluations(settings, task) * settings.training_count


def games_played(settings: LingLamSettings, task: int = 0) -> int:
    """NOT games: the training positions one task of ``settings`` looks at, :func:`positions_looked_at`.

    Ling and Lam's system plays no game of tic-tac-toe while it learns (:data:`GAME_DEFINITION`): a GA fits a
    network to the heuristic's choices on ``training_count`` fixed positions, collected once before any task
    (:func:`~evolving_ttt.ling_lam.network.training_positions`: from seeded random games in the book's reading;
    the same for every task, and not counted). The number a comparison by games needs is taken here as the positions
    looked at, the one unit of experience the method has: 35,001,000 for a paper NNDTF run, 10,001,000 for a
    baseline run. Read it as positions, never as games.
    """
    return positions_looked_at(settings, task)


def merge(settings: LingLamSettings, seed: int, results: Sequence[LingLamTask]) -> dict[str, TrainingRun]:
    """Each method's runs, in run order, as a :class:`TrainingRun`."""
    record = {}
    for method in settings.methods:
        mine = sorted((r for r in results if r.method == method), key=lambda r: r.run)
        if mine:
            record[method] = TrainingRun(
                method, settings, int(seed), np.stack([r.best_fitness for r in mine]),
                np.stack([r.champion for r in mine]), np.array([r.champion_fitness for r in mine]),
                mine[0].evaluations, 1, np.stack([r.population_best for r in mine]),
            )  # fmt: skip
    return record


save_record, load_record = save_training_runs, load_training_runs


def record_curves(record: dict[str, TrainingRun]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each method's best fitness (31) so far, run by run, for ``python -m ttt_helpers plot``."""
    return {f"{method}: best fitness (31) so far": (np.arange(run.best_fitness.shape[1]) * run.curve_step,
                                                      run.best_fitness)  # fmt: skip
            for method, run in record.items()}  # fmt: skip


def record_players(record: dict[str, TrainingRun]) -> list[TrainedNetwork]:
    """The trained network of every task, in task order (run by run, each run's methods in order)."""
    methods = list(record)
    runs = len(record[methods[0]].champion_fitness) if methods else 0
    return [record[method].network(run) for run in range(runs) for method in methods]


def task_measures(settings: LingLamSettings, result: LingLamTask) -> dict[str, float | str]:
    """The method, the fitness (31) of the trained network on its training positions, the same on all 2,201
    positions with X to move (``fitness_all``) and on the paper-setting positions (``fitness_paper_positions``,
    100 from random games), and the run's fitness evaluations (chapters 17 and 22)."""
    kind = METHODS[result.method][0]
    paper = PAPER_LING_LAM.training()
    outputs_all = ling_lam_outputs(kind, result.champion, all_x_positions_cached().inputs, settings.order)
    outputs_paper = ling_lam_outputs(kind, result.champion, paper.inputs, settings.order)
    return {"method": result.method, "fitness": result.champion_fitness,
            "fitness_all": float(fitness(outputs_all, all_x_positions_cached())),
            "fitness_paper_positions": float(fitness(outputs_paper, paper)),
            "evaluations": float(result.evaluations)}  # fmt: skip


@cache
def all_x_positions_cached() -> TrainingSet:
    """:func:`~evolving_ttt.ling_lam.network.all_x_positions`, computed once per process."""
    return all_x_positions()


def save_player(player: TrainedNetwork, path: str | Path, **provenance) -> None:
    """:func:`~evolving_ttt.ling_lam.experiment.save_trained_network`."""
    save_trained_network(player, path, **provenance)


load_player = load_trained_network


def policy_tables(player: TrainedNetwork) -> tuple[np.ndarray, np.ndarray]:
    """The network's move on every board, as X and (with the colours swapped) as O."""
    return network_policy(player, X), network_policy(player, O)


def explain(player: TrainedNetwork) -> Callable[[np.ndarray, int], Explanation]:
    """The network's output, the grid number it points at, and the square nearest to it (chapter 26)."""

    def explanation(board: np.ndarray, mark: int) -> Explanation:
        output = float(player.outputs(heuristic_encoding((np.asarray(board) * mark)[None]))[0])
        target = 5 + 4 * output
        move = player.move(board)
        distance = -np.abs(GRID_NUMBERS - target)
        return Explanation(square_values(board, distance), "minus the distance of the grid number to 5 + 4y",
                           f"The network's output is y = {output:.3f}, grid number 5 + 4y = {target:.2f}; it "
                           f"plays the empty square whose grid number is closest: square {move} (grid "
                           f"number {GRID_NUMBERS[move]}).", move)  # fmt: skip

    return explanation


def ling_lam_players(data: str | Path = DATA) -> tuple[ArenaPlayer, ...]:
    """Ling and Lam's heuristic (the teacher), and the trained NNDTF and baseline network (chapters 16 and 17).

    All three score squares for X; as O they see the board with the colours swapped.
    """
    data = Path(data)

    def heuristic_explain(board: np.ndarray, mark: int) -> Explanation:
        move = heuristic_move(board, mark)
        return Explanation(square_values(board, square_scores(board, mark)), "heuristic score",
                           f"The heuristic adds up the scores of the lines through each empty square; it plays the "
                           f"highest, square {move}.", move)  # fmt: skip

    policies = heuristic_policy(X), heuristic_policy(O)
    heuristic = ArenaPlayer("Ling-Lam heuristic", title, "the move-scoring heuristic of Section 2",
                            *policies, "designed by hand", heuristic_explain)  # fmt: skip
    players = [heuristic]
    for label, file in (("Ling-Lam NNDTF", "ling_lam_nndtf.json"), ("Ling-Lam baseline", "ling_lam_baseline.json")):
        network, provenance = load_trained_network(data / file)
        genes = "114-gene 9-8-1 NNDTF" if network.kind == "nndtf" else "89-gene 9-8-1 tanh network"
        players.append(ArenaPlayer(
            label, title, f"{genes}, fitness {provenance.get('fitness', float('nan')):.4f}", *policy_tables(network),
            f"{provenance.get('iterations', 0):,} GA iterations imitating the heuristic on 100 positions",
            explain(network),
        ))  # fmt: skip
    return tuple(players)


def book_players() -> tuple[ArenaPlayer, ...]:
    """The heuristic and chapter 17's two trained networks."""
    return ling_lam_players()


# --- The command: python -m ttt_helpers ling-lam ... (chapter 17) ---------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Seeds, iterations, methods, the readings of chapter 17, and ``--data-dir``."""
    parser.add_argument("--seeds", type=whole_number, default=PAPER_LING_LAM.seeds,
                        help="runs per method, each from its own seed (the paper reports one run)")  # fmt: skip
    parser.add_argument("--iterations", type=whole_number, default=PAPER_LING_LAM.iterations,
                        help="iterations of each run's GA")  # fmt: skip
    parser.add_argument("--methods", default="nndtf,baseline",
                        help=f"comma-separated, from {', '.join(METHODS)} (default nndtf,baseline)")  # fmt: skip
    parser.add_argument("--order", choices=HIDDEN_ORDERS, default=PAPER_LING_LAM.order,
                        help="how the hidden neurons read their neighbours (default simultaneous)")  # fmt: skip
    parser.add_argument("--replacement", choices=REPLACEMENT_READINGS, default=PAPER_LING_LAM.replacement,
                        help="Figure 7 read as the paper's text (default) or its pseudocode")  # fmt: skip
    parser.add_argument("--training-source", choices=TRAINING_SOURCES, default=PAPER_LING_LAM.training_source,
                        help="where the 100 training positions come from (chapter 22)")  # fmt: skip
    parser.add_argument("--data-dir", help="also write ling_lam_runs.json and the fittest network of each method "
                        "(ling_lam_<method>.json) into this folder, as in book/data")  # fmt: skip


def settings_from_arguments(args: argparse.Namespace) -> LingLamSettings:
    """The training the options ask for; ``--iterations 0`` is refused, as every command refuses a run of nothing."""
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods or any(m not in METHODS for m in methods) or len(set(methods)) != len(methods):
        raise ValueError(f"--methods must list distinct methods from {', '.join(METHODS)}; got {args.methods!r}")
    if args.iterations < 1:
        raise ValueError(f"--iterations must be a whole number >= 1; got {args.iterations} (that would train nothing)")
    settings = LingLamSettings(seeds=args.seeds, iterations=args.iterations, order=args.order,
                               replacement=args.replacement, training_source=args.training_source,
                               methods=tuple(methods))  # fmt: skip
    if args.data_dir:
        if not Path(args.data_dir).is_dir():
            what = "not a folder" if Path(args.data_dir).exists() else "no such folder"
            raise ValueError(f"--data-dir {args.data_dir}: {what}")
        if settings.iterations % SUMMARY_CURVE_STEP:
            raise ValueError(
                f"--data-dir keeps every {SUMMARY_CURVE_STEP}th point of the curves: "
                f"--iterations must be a multiple of {SUMMARY_CURVE_STEP}"
            )
    return settings


def extra_outputs(args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
    """The record (``--out``, ``.npz``) and, with ``--data-dir``, ``ling_lam_runs.json`` and the fittest network of
    each method, ``ling_lam_<method>.json``, in that folder."""
    outputs = {"--out": (Path(args.out), ".npz")}
    if args.data_dir:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        for name in ["runs", *methods]:
            outputs[f"--data-dir ({name})"] = (Path(args.data_dir) / f"ling_lam_{name}.json", ".json")
    return outputs


def estimated_memory(settings: LingLamSettings, workers: int) -> int:
    return _estimated_memory(settings, len(settings.methods))


def describe(settings: LingLamSettings) -> str:
    return (f"{', '.join(settings.methods)}; {counted(settings.seeds, 'seed')} x "
            f"{counted(settings.iterations, 'iteration')}")  # fmt: skip


def summary(record: dict[str, TrainingRun]) -> str:
    lines = [f"trained {', '.join(record)}"]
    for method, run in record.items():
        f = run.champion_fitness
        lines.append(f"  {method}: fitness of the trained networks: mean {f.mean():.4f}, "
                     f"range {f.min():.4f} to {f.max():.4f}")  # fmt: skip
    return "\n".join(lines)


def write_outputs(record: dict[str, TrainingRun], args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
    """``--data-dir``: the runs' summary (the curves every 500th iteration) and each method's fittest network."""
    if "--data-dir (runs)" not in paths:
        return {}
    arguments = sys.argv[2:] if sys.argv[1:2] == ["ling-lam"] else None
    command_line = "python -m ttt_helpers ling-lam " + " ".join(arguments) if arguments is not None else "ling-lam"
    save_runs_summary(record, paths["--data-dir (runs)"], SUMMARY_CURVE_STEP, command=command_line)
    written = {"--data-dir (runs)": f"{', '.join(record)}: every run's network, fitness and curve"}
    for method, run in record.items():
        save_trained_network(run.network(), paths[f"--data-dir ({method})"], **run.provenance())
        written[f"--data-dir ({method})"] = f"the fittest of the {run.settings.seeds} {method} runs"
    return written


def claims() -> list:
    """Ling and Lam's claims for the one verdict rule, from chapter 22's study
    (:func:`evolving_ttt.ling_lam.robustness.claims`); none before the study's databases exist."""
    from evolving_ttt.ling_lam.robustness import STUDY_NAMES
    from evolving_ttt.ling_lam.robustness import claims as study_claims
    from evolving_ttt.records import STUDIES

    if not all((STUDIES / f"{name}.sqlite").is_file() for name in STUDY_NAMES):
        return []
    return study_claims()
