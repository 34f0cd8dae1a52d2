"""Fogel (1993) in the vocabulary every system speaks (:class:`evolving_ttt.systems.System`, chapter 25).

A task is one trial of :func:`~evolving_ttt.fogel.evolution.evolve`; its result is an
:class:`~evolving_ttt.fogel.evolution.EvolutionRun` holding that trial alone; the record is the merged run, and a
player is a :class:`~evolving_ttt.fogel.network.Network`. :func:`fogel_champion` is chapter 7's champion as the
arena and the play widget know it (chapter 26).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from evolving_ttt.arguments import counted, whole_number
from evolving_ttt.fogel.evolution import (
    PAPER_EXPERIMENT,
    EvolutionRun,
    FogelSettings,
    champion_provenance,
    evolve,
    load_run,
    merge_runs,
    save_run,
)
from evolving_ttt.fogel.evolution import estimated_memory as _estimated_memory
from evolving_ttt.fogel.mutation import MutationSettings
from evolving_ttt.fogel.network import (
    Network,
    load_network,
    network_move,
    network_outputs,
    population_moves,
    save_network,
    stack_networks,
)
from evolving_ttt.fogel.selection import SelectionSettings
from evolving_ttt.fogel.study import control_claims
from evolving_ttt.fogel_score import PAPER_PAYOFF, check_payoff
from evolving_ttt.game import O, X, board_tables, check_instance
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move, policy_table
from evolving_ttt.players import ArenaPlayer, Explanation, square_values
from evolving_ttt.records import DATA
from evolving_ttt.rule_base import GAMES_PER_EVALUATION, OpponentRules

name = "fogel"
command = "fogel"
command_aliases = ("evolve",)  # the command's first name, which chapters and scripts may still use
title = "Fogel (1993)"
description = "Fogel (1993): evolve 9-H-9 networks against the rule base; save every curve and final network"
Settings = FogelSettings
PAPER_SETTINGS = PAPER_EXPERIMENT
SMALL_SETTINGS = FogelSettings(parents=6, generations=4, trials=3)
"""Three short trials, for the conformance check (:func:`evolving_ttt.conformance.check_conformance`)."""


def task_count(settings: FogelSettings) -> int:
    """One task per trial."""
    return settings.trials


def run_tasks(settings: FogelSettings, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
    """Trials ``tasks`` in lockstep; one :class:`EvolutionRun` per trial, in the order of ``tasks``."""
    order = sorted(int(t) for t in tasks)
    run = evolve(settings, seed, progress, order)
    rows = {t: k for k, t in enumerate(order)}
    return [trial_of(run, rows[int(t)]) for t in tasks]


GAME_DEFINITION = (
    "one game of tic-tac-toe between a network, always X and moving first, and the rule base as O: one of the 32 "
    "games of an evaluation (chapter 3)"
)
"""What :func:`games_played` counts as a game for Fogel (1993)."""


def games_played(settings: FogelSettings, task: int = 0) -> int:
    """Games one task of ``settings`` (one trial, any ``task``) plays while it learns: generations x 2P x 32.

    Every generation each of the ``2 x parents`` networks (the parents and their offspring) plays the 32 games
    of :data:`~evolving_ttt.rule_base.GAMES_PER_EVALUATION` against the rule base, with fresh random numbers
    for the opponent's moves (:func:`~evolving_ttt.fogel.selection.generation_step`). A surviving parent plays
    32 new games as a parent in the next generation: with the paper's cycled first replies it keeps only its
    ``openings``, the first three plies of its games, which use no random number (chapter 9), never its results
    or its score. A trial stops after the last generation's selection; nothing measures its champion. The paper's
    settings: 800 x 100 x 32 = 2,560,000 games per trial. A game is :data:`GAME_DEFINITION`.
    """
    check_instance(settings, FogelSettings, "settings", "a FogelSettings")
    _check_task(settings, task)
    return settings.generations * 2 * settings.parents * GAMES_PER_EVALUATION


def _check_task(settings, task: int) -> None:
    if isinstance(task, bool) or not isinstance(task, (int, np.integer)) or not 0 <= task < task_count(settings):
        raise ValueError(f"task must be a task number from 0 to {task_count(settings) - 1}; got {task!r}")


def trial_of(run: EvolutionRun, row: int) -> EvolutionRun:
    """Row ``row`` of ``run`` as a run of that trial alone."""
    one = slice(row, row + 1)
    return EvolutionRun(
        run.settings, run.seed, (run.trial_numbers[row],), run.best_score[one], run.mean_score[one],
        run.mean_hidden[one], run.final_parents[one], run.final_points[one],
        None if run.best_networks is None else run.best_networks[one],
    )  # fmt: skip


def merge(settings: FogelSettings, seed: int, results: Sequence[EvolutionRun]) -> EvolutionRun:
    """The trials' runs stacked in order into one record."""
    return merge_runs(list(results))


save_record, load_record = save_run, load_run


def record_players(record: EvolutionRun) -> list[Network]:
    """The best final parent of every trial."""
    return [record.best_network(t) for t in record.trial_numbers]


def record_curves(record: EvolutionRun) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each trial's best score per generation (sampled: 32 games), for ``python -m ttt_helpers plot``."""
    generations = np.arange(1, record.best_score.shape[1] + 1)
    return {"best score of the generation (32 sampled games)": (generations, record.best_score)}


def task_measures(settings: FogelSettings, result: EvolutionRun) -> dict[str, float]:
    """The trial's best and mean sampled score in its last generation, and its final parents' mean hidden nodes."""
    return {"best_score_last": float(result.best_score[0, -1]), "mean_score_last": float(result.mean_score[0, -1]),
            "mean_hidden_last": float(result.mean_hidden[0, -1])}  # fmt: skip


def save_player(player: Network, path: str | Path, **provenance) -> None:
    """:func:`~evolving_ttt.fogel.network.save_network`."""
    save_network(player, path, **provenance)


load_player = load_network


def policy_tables(player: Network) -> tuple[np.ndarray, np.ndarray]:
    """The network's move on every board, as X and (through the colour swap) as O: every board where the side is
    to move in one batch (:func:`~evolving_ttt.fogel.network.population_moves`), the same moves as
    :func:`readable_policy_tables` asks of :func:`~evolving_ttt.fogel.network.network_move` board by board."""
    check_instance(player, Network, "player", "a Network (th.load_network reads one from a file)")
    population, boards = stack_networks([player]), board_tables().boards
    tables = []
    for mark in (X, O):
        rows = boards_to_move(mark)
        moves = population_moves(population, (mark * boards[rows])[None])[0]  # as O, the colours swapped
        table = np.zeros(POLICY_SHAPE)
        table[rows, moves] = 1.0
        tables.append(table)
    return tables[0], tables[1]


def readable_policy_tables(player: Network) -> tuple[np.ndarray, np.ndarray]:
    """:func:`policy_tables` board by board, as chapter 11 tabulates any player."""
    return tuple(policy_table(lambda board, mark=mark: network_move(player, board, mark), mark) for mark in (X, O))


def explain(player: Network) -> Callable[[np.ndarray, int], Explanation]:
    """The network's nine outputs, and the square it plays (chapter 26)."""

    def explanation(board: np.ndarray, mark: int) -> Explanation:
        move = network_move(player, board, mark)
        side = "" if mark == X else " (as O it sees the board with the colours swapped)"
        return Explanation(
            square_values(board, network_outputs(player, board, mark)),
            "output",
            f"The network's nine outputs{side}; it plays its strongest empty square, {move}.",
            move,
        )

    return explanation


def fogel_champion(path: str | Path = DATA / "champion.json") -> ArenaPlayer:
    """Fogel's champion network from its file; as O it plays through the colour swap (chapter 26)."""
    network, provenance = load_network(path)
    training = "50 parents + 50 offspring x 32 games x 800 generations = 2,560,000 games per trial"
    x_policy, o_policy = policy_tables(network)
    return ArenaPlayer("Fogel champion", title, f"9-{network.hidden_count}-9 network, seed {provenance.get('seed')}",
                       x_policy, o_policy, training, explain(network))  # fmt: skip


def book_players() -> tuple[ArenaPlayer, ...]:
    """Chapter 7's champion."""
    return (fogel_champion(),)


# --- The command: python -m ttt_helpers evolve ... (chapter 7) ------------------------------------------------


def _payoff_argument(text: str) -> tuple[float, float, float]:
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected three numbers win,loss,draw such as 1,-10,0; got {text[:60]!r}")
    try:
        return check_payoff(values)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error} (from {text[:60]!r})") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The experiment's size, the paper's open readings, and ``--champion``."""
    parser.add_argument("--trials", type=whole_number, default=PAPER_EXPERIMENT.trials,
                        help="independent evolutions, each from its own seed")  # fmt: skip
    parser.add_argument("--generations", type=whole_number, default=PAPER_EXPERIMENT.generations,
                        help="generations per trial")  # fmt: skip
    parser.add_argument("--parents", type=whole_number, default=PAPER_EXPERIMENT.parents,
                        help="networks kept each generation; each makes one offspring")  # fmt: skip
    parser.add_argument("--payoff", type=_payoff_argument, default=PAPER_PAYOFF,
                        help="points for a win, a loss and a draw against the rule base, as win,loss,draw")  # fmt: skip
    parser.add_argument("--rule-d", choices=("own", "opponent"), default="own",
                        help="rule (d) develops lines holding an O (own, the paper) or an X (opponent)")  # fmt: skip
    parser.add_argument("--first-reply", choices=("cycle", "rules"), default="cycle",
                        help="O's first reply visits all eight squares (the paper) or follows the rules")  # fmt: skip
    parser.add_argument("--strict-selection", action="store_true",
                        help="earn a selection point only against strictly lower scores (the textbook)")  # fmt: skip
    parser.add_argument("--spread-is", choices=("std", "variance"), default="std",
                        help="0.05 is the standard deviation (the paper) or the variance of the weight "
                        "noise")  # fmt: skip
    parser.add_argument("--champion", help="also save the best network of trial 0 to this JSON file")


def settings_from_arguments(args: argparse.Namespace) -> FogelSettings:
    """The experiment the options ask for; a population too small for the selection's comparisons names
    ``--parents`` (the comparisons are not an option)."""
    comparisons = SelectionSettings().comparisons
    if args.parents >= 1 and 2 * args.parents - 1 < comparisons:
        raise ValueError(
            f"--parents {args.parents}: each of the 2 x {args.parents} networks of a generation is compared with "
            f"{comparisons} others, so --parents must be at least {(comparisons + 2) // 2}"
        )
    return FogelSettings(
        parents=args.parents, generations=args.generations, trials=args.trials,
        rules=OpponentRules(rule_d_lines=args.rule_d, first_reply=args.first_reply),
        mutation=MutationSettings(spread_is=args.spread_is),
        selection=SelectionSettings(payoff=args.payoff, ties_win=not args.strict_selection),
    )  # fmt: skip


def extra_outputs(args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
    """The run record (``--out``, ``.npz``) and, with ``--champion``, the best network of trial 0 (``.json``)."""
    outputs = {"--out": (Path(args.out), ".npz")}
    if args.champion:
        outputs["--champion"] = (Path(args.champion), ".json")
    return outputs


def estimated_memory(settings: FogelSettings, workers: int) -> int:
    """:func:`~evolving_ttt.fogel.evolution.estimated_memory`: population, trials, generations and workers."""
    return _estimated_memory(settings, workers)


def describe(settings: FogelSettings) -> str:
    return (f"{counted(settings.trials, 'trial')} x {counted(settings.generations, 'generation')}, "
            f"{counted(settings.parents, 'parent')}")  # fmt: skip


def summary(record: EvolutionRun) -> str:
    final = record.best_score[:, -1]
    payoff, games = record.settings.selection.payoff, GAMES_PER_EVALUATION
    return (f"mean best score in the last generation {final.mean():.2f} (trials range {final.min():g} to "
            f"{final.max():g}; sampled: the points of {games} random games against the rule base, from "
            f"{games * min(payoff):g} to {games * max(payoff):g}; `evaluate` gives a network's exact expected "
            "score)")  # fmt: skip


def write_outputs(record: EvolutionRun, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
    """``--champion``: the best network of trial 0, with its provenance."""
    if "--champion" not in paths:
        return {}
    champion = record.best_network(0)
    save_network(champion, paths["--champion"], **champion_provenance(record, 0))
    return {"--champion": f"best network of trial 0 ({champion.hidden_count} hidden nodes)"}


def claims() -> list:
    """Fogel's claims for the one verdict rule, from the control study of chapter 20
    (:func:`~evolving_ttt.fogel.study.control_claims`)."""
    return control_claims()
