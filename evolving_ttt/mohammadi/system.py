"""Mohammadi et al. (2013) in the vocabulary every system speaks (:class:`evolving_ttt.systems.System`, chapter 25).

A task is one whole series of runs with the scripted judge between them
(:func:`~evolving_ttt.mohammadi.series.evolve_series`): one task per seed, since a series draws every choice from
one generator. Its result and the record are the :class:`~evolving_ttt.mohammadi.series.SeriesRecord`; a player is
a :class:`~evolving_ttt.mohammadi.programs.ProgramPlayer`, a program and the reading of what PLAY-AT returns on a
taken square.
:func:`mohammadi_champion` is chapter 19's champion as the arena and the play widget know it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from evolving_ttt.arguments import counted, whole_number
from evolving_ttt.fogel_score import rule_base_policy
from evolving_ttt.game import O, X, check_instance
from evolving_ttt.mohammadi.coevolution import (
    BONUS_ROLES,
    JUDGES,
    PAPER_MOHAMMADI,
    PLAYAT_READINGS,
    MohammadiSettings,
)
from evolving_ttt.mohammadi.judge import program_exact_results
from evolving_ttt.mohammadi.programs import (
    TAKEN_READINGS,
    ProgramPlayer,
    parse_program,
    playat_count,
    program_move,
    program_path,
    program_policy,
)
from evolving_ttt.mohammadi.series import (
    DEFAULT_PROGRAM,
    SeriesRecord,
    evolve_series,
    load_program,
    load_series,
    save_program,
    save_series,
    series_provenance,
)
from evolving_ttt.players import ArenaPlayer, Explanation

name = "mohammadi"
command = "mohammadi"
title = "Mohammadi et al. (2013)"
description = "Mohammadi et al. (2013): co-evolve programs, a judge between runs"
Settings = MohammadiSettings
PAPER_SETTINGS = PAPER_MOHAMMADI
SMALL_SETTINGS = MohammadiSettings(population=16, generations=2, runs=2, seeds_kept=2, best_candidates=4,
                                   random_candidates=4)  # fmt: skip
"""A series of two short runs of 16 programs, for the conformance check
(:func:`evolving_ttt.conformance.check_conformance`)."""


def task_count(settings: MohammadiSettings) -> int:
    """One series per seed."""
    return 1


def run_tasks(settings: MohammadiSettings, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
    """The series of ``seed`` (the one task, number 0)."""
    if any(int(t) != 0 for t in tasks):
        raise ValueError(f"a Mohammadi series is one task, number 0; got tasks {list(tasks)}")
    return [evolve_series(settings, seed, progress) for _ in tasks]


GAME_DEFINITION = (
    "one game of tic-tac-toe between two programs of the population, played to its end; a double game is two "
    "games, each program X in one of them (chapter 18)"
)
"""What :func:`games_played` counts as a game for Mohammadi et al. (2013)."""


def games_played(settings: MohammadiSettings, task: int = 0) -> int:
    """Games the one task of ``settings`` (the whole series, task 0) plays while it learns:
    runs x generations x population x group_size x 2.

    Every generation each of the ``population`` programs opens a chain of ``group_size`` double games: against the
    first member of its group, then the winner of that double game against the next member, and so on
    (:func:`~evolving_ttt.mohammadi.coevolution.tournament`). A double game is 2 games, each program X once, so a
    generation plays ``2 x population x group_size`` games; every run of the series has ``generations`` of them,
    and the series ``runs`` runs. The paper's settings (with the book's choices of generations, runs and group
    size): 4 x 15 x 128 x 4 x 2 = 61,440 games per series.

    Not counted, as they are measurements that no choice of the evolution depends on, or no games: at the end of
    every run a round robin of the final population (``population x (population - 1)`` games, the record's
    ``round_robin``, a statistic), and the judge's view of the candidates. The scripted judge plays no games: it
    works out exactly each candidate's chances of winning, drawing and losing, as X and as O, against the perfect
    and the random player (:func:`~evolving_ttt.mohammadi.judge.program_exact_results`, every line of play weighed
    by its probability) and keeps the ``seeds_kept`` that lose least; the control judges (``"random"``,
    ``"none"``) look at no game either. (In the paper a person played the candidates; how many games is not said.)
    A game is :data:`GAME_DEFINITION`.
    """
    check_instance(settings, MohammadiSettings, "settings", "a MohammadiSettings")
    if isinstance(task, bool) or not isinstance(task, (int, np.integer)) or task != 0:
        raise ValueError(f"a Mohammadi series is one task, number 0; got task {task!r}")
    return settings.runs * settings.generations * settings.population * settings.group_size * 2


def merge(settings: MohammadiSettings, seed: int, results: Sequence[SeriesRecord]) -> SeriesRecord:
    """The one series."""
    if len(results) != 1:
        raise ValueError(f"a Mohammadi record is one series; got {len(results)} task results")
    return results[0]


save_record, load_record = save_series, load_series


def record_players(record: SeriesRecord) -> list[ProgramPlayer]:
    """The series' champion."""
    return [ProgramPlayer(parse_program(record.champion()), record.settings.taken)]


def record_curves(record: SeriesRecord) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The series' best and mean fitness per generation, runs one after another (points per double game,
    bonuses included), for ``python -m ttt_helpers plot``."""
    curves = {}
    for name in ("best_fitness", "mean_fitness"):
        values = np.asarray(record.statistics[name], dtype=float)[None, :]
        curves[f"{name.replace('_', ' ')} of the generation (points per double game)"] = (
            np.arange(1, values.shape[1] + 1), values)  # fmt: skip
    return curves


def task_measures(settings: MohammadiSettings, result: SeriesRecord) -> dict[str, float]:
    """The series' own numbers (chapters 23 and 25).

    The champion's fitness, PLAY-AT nodes and nodes, and whether it is a single PLAY-AT at its root; the last
    generation's mean fitness, PLAY-AT nodes and nodes, and its shares of programs with a PLAY-AT root and with a
    single PLAY-AT at the root (``single_root_max``: the largest such share of any generation of the series); the
    spread and mean of the last run's round-robin wins; and the playability of the last run's fittest programs
    (the ``best_candidates`` the judge sees first, whoever judges): their mean expected points per game (1 a win,
    1/2 a draw, both sides averaged) against the perfect and the random player.
    """
    last = result.runs[-1]
    index = int(last.candidates[series_provenance(result)["candidate"]])
    champion = parse_program(last.population[index])
    measures = {
        "champion_fitness": float(last.fitness[index]),
        "champion_playats": float(playat_count(champion)),
        "mean_fitness_last": float(result.curve("mean_fitness")[-1, -1]),
        "mean_playats_last": float(result.curve("mean_playats")[-1, -1]),
        "champion_size": float(len(champion)),
        "champion_single_root": float(champion[0].name == "PLAY-AT" and playat_count(champion) == 1),
        "mean_size_last": float(result.curve("mean_size")[-1, -1]),
        "root_playat_last": float(result.curve("root_playat")[-1, -1]),
        "single_root_last": float(result.curve("single_root_playat")[-1, -1]),
        "single_root_max": float(result.curve("single_root_playat").max()),
        "round_robin_mean_last": float(last.round_robin.mean()),
        "round_robin_std_last": float(last.round_robin.std()),
    }
    fittest = settings.best_candidates
    if fittest:
        for opponent in ("perfect", "random"):
            outcomes = last.results[opponent][:fittest]
            measures[f"fittest_points_{opponent}"] = float((outcomes[:, :, 0] + outcomes[:, :, 1] / 2).mean())
    return measures


def save_player(player: ProgramPlayer, path: str | Path, **provenance) -> None:
    """:func:`~evolving_ttt.mohammadi.series.save_program`, with the player's reading."""
    save_program(player.program, path, **{"taken": player.taken, **provenance})


def load_player(path: str | Path) -> tuple[ProgramPlayer, dict]:
    """A program file; its reading is the provenance's ``taken`` (or its series' settings'), else ``"square"``."""
    program, provenance = load_program(path)
    taken = provenance.get("taken", _series_settings(provenance).get("taken", "square"))
    if taken not in TAKEN_READINGS:
        raise ValueError(f"{path}: taken must be one of {TAKEN_READINGS}; got {taken!r}")
    return ProgramPlayer(program, taken), provenance


def _series_settings(provenance: dict) -> dict:
    """The series' settings in a program's provenance: ``settings``, else ``config`` (the older name, which the
    book's committed champion holds), else none."""
    return provenance.get("settings", provenance.get("config", {}))


def policy_tables(player: ProgramPlayer) -> tuple[np.ndarray, np.ndarray]:
    """The program's move on every board, as X and as O (the lowest empty square where it places no mark)."""
    return program_policy(player.program, X, player.taken), program_policy(player.program, O, player.taken)


def explain(player: ProgramPlayer) -> Callable[[np.ndarray, int], Explanation]:
    """The path through the program to the PLAY-AT that moved (chapter 26)."""

    def explanation(board: np.ndarray, mark: int) -> Explanation:
        move = program_move(player.program, board, mark, player.taken)
        return Explanation(np.full(9, np.nan), "none: a program does not score squares",
                           f"Path through the program: {program_path(player.program, board, mark)}.", move)  # fmt: skip

    return explanation


def mohammadi_champion(path: str | Path = DEFAULT_PROGRAM) -> ArenaPlayer:
    """Mohammadi's champion program, on either side (chapters 18, 19); the lowest empty square where it is silent."""
    player, provenance = load_player(path)
    settings = _series_settings(provenance)
    runs, generations = settings.get("runs"), settings.get("generations")
    training = (f"{runs} runs x {generations} generations of fitnessless co-evolution, 128 programs, and a judge"
                if runs and generations else "fitnessless co-evolution and a judge")  # fmt: skip
    return ArenaPlayer("Mohammadi champion", title, f"a program of {len(player.program)} nodes",
                       *policy_tables(player), training, explain(player))  # fmt: skip


def claims() -> list:
    """The paper's three headline claims for the one verdict rule, read from chapter 23's committed sweep databases
    (:func:`evolving_ttt.mohammadi.robustness.claims`)."""
    from evolving_ttt.mohammadi.robustness import claims as study_claims

    return study_claims()


def book_players() -> tuple[ArenaPlayer, ...]:
    """Chapter 19's champion."""
    return (mohammadi_champion(),)


# --- The command: python -m ttt_helpers mohammadi ... (chapter 19) --------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The series' size, the judge, the readings of chapter 19, and ``--champion``."""
    default = PAPER_MOHAMMADI
    parser.add_argument("--runs", type=whole_number, default=default.runs,
                        help="runs in the series; the judge keeps seeds between two runs")  # fmt: skip
    parser.add_argument("--generations", type=whole_number, default=default.generations, help="generations per run")
    parser.add_argument("--population", type=whole_number, default=default.population,
                        help="programs in the one population")  # fmt: skip
    parser.add_argument("--judge", choices=JUDGES, default=default.judge,
                        help="who keeps the seeds of the next run: the scripted judge (perfect), a random pick, "
                             "or nobody (the population carries on)")  # fmt: skip
    parser.add_argument("--seeds-kept", type=whole_number, default=default.seeds_kept,
                        help="programs the judge keeps for the next run (the paper's N)")  # fmt: skip
    parser.add_argument("--playat-counted", choices=PLAYAT_READINGS, default=default.playat_counted,
                        help="the PLAY-AT bonus is paid per PLAY-AT node (each) or once for any")  # fmt: skip
    parser.add_argument("--taken", choices=TAKEN_READINGS, default=default.taken,
                        help="what PLAY-AT returns on an occupied square: the square (default) or NIL")  # fmt: skip
    parser.add_argument("--bonus-role", choices=BONUS_ROLES, default=default.bonus_role,
                        help="bonuses added to the outcome points (default) or only breaking ties")  # fmt: skip
    parser.add_argument("--crossover-root", action="store_true",
                        help="crossover may pick the root of a parent (chapter 23)")  # fmt: skip
    parser.add_argument("--champion", help="also save the champion program to this JSON file")


def settings_from_arguments(args: argparse.Namespace) -> MohammadiSettings:
    return MohammadiSettings(
        runs=args.runs, generations=args.generations, population=args.population, judge=args.judge,
        seeds_kept=args.seeds_kept, playat_counted=args.playat_counted, taken=args.taken,
        bonus_role=args.bonus_role, crossover_root=bool(args.crossover_root),
        best_candidates=min(20, args.population), random_candidates=min(20, max(args.population - 20, 0)),
    )  # fmt: skip


def extra_outputs(args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
    """The series (``--out``, ``.json``) and, with ``--champion``, the champion program (``.json``)."""
    outputs = {"--out": (Path(args.out), ".json")}
    if args.champion:
        outputs["--champion"] = (Path(args.champion), ".json")
    return outputs


def estimated_memory(settings: MohammadiSettings, workers: int) -> int:
    """A generous estimate of a series' peak memory in bytes (chapter 19); it counts population, generations and
    runs.

    Measured peaks on the project machine (2 generations): 85 MB with 64 programs, 111 MB with 256 and 154 MB with
    1,024, about 80 MB and 70 kB per program (its move table over 19,683 boards and its tree); the estimate allows
    100 MB and 100 kB per program. The round robin that ends every run plays every pair of programs at once, about
    60 bytes a pair measured (3,000 programs: 470 MB), allowed 100. The record keeps every run's final population
    as texts and its candidates' results, allowed 20 kB per program and run, and ten statistics per generation,
    allowed 1 kB per generation of the series. A series is one task: ``workers`` does not change it.
    """
    population, runs = settings.population, settings.runs
    record = runs * (20_000 * population + 1_000 * settings.generations)
    return 100_000_000 + 100_000 * population + 100 * population**2 + record


def describe(settings: MohammadiSettings) -> str:
    return (f"{counted(settings.runs, 'run')} x {counted(settings.generations, 'generation')}, population "
            f"{settings.population}, {settings.judge} judge")  # fmt: skip


def summary(record: SeriesRecord) -> str:
    lines = []
    for number, run in enumerate(record.runs, start=1):
        best = run.results["perfect"][:, :, 2].sum(axis=1).min()
        lines.append(f"  run {number}: mean fitness {run.fitness.mean():.1f} (points over each program's "
                     f"{record.settings.group_size} double games against a random chain, bonuses included); "
                     f"fewest expected losses to the perfect player among the candidates {best:.3f} of 2 games "
                     "(exact)")  # fmt: skip
    champion = parse_program(record.champion())
    provenance = series_provenance(record)
    rule_base = program_exact_results([champion], rule_base_policy, taken=record.settings.taken)[0]
    lines.append(f"champion ({provenance['chosen_as']}): {len(champion)} nodes, {playat_count(champion)} PLAY-AT")
    wins, losses = rule_base[:, 0].sum(), rule_base[:, 2].sum()
    lines.append(f"  expected losses to the perfect player {provenance['losses_to_perfect']:.3f} of 2 games; "
                 f"against the rule base: wins {wins:.3f}, losses {losses:.3f}")  # fmt: skip
    return "the series:\n" + "\n".join(lines)


def write_outputs(record: SeriesRecord, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
    """``--champion``: the series' champion program, with its provenance."""
    if "--champion" not in paths:
        return {}
    provenance = series_provenance(record)
    save_program(parse_program(record.champion()), paths["--champion"], **provenance)
    return {"--champion": f"the champion, chosen as {provenance['chosen_as']}"}
