"""Al-Khateeb (2012): the batched engine, the record of an experiment and its files (chapter 14).

:func:`coevolve` runs all runs of an experiment together and gives, bit for bit, what
:func:`evolving_ttt.al_khateeb.evaluator.coevolve_readable` gives run by run (the tests check it).
Three ideas make it fast:

* **Lockstep.** The games of all runs advance one ply at a time as arrays: at ply k every unfinished
  game asks its mover for a move at once.
* **A move is worked out once.** A player is deterministic, so the move of a network on a board never
  changes. The engine keeps, per network, a table over the 19,683 board numbers of the moves it has
  already worked out; only boards it has never met are searched (all their moves judged in one call
  of :func:`evaluate_boards`). A table entry records which network wrote it, so an offspring that
  takes over a loser's place ignores what the loser left there.
* **A game is played once.** Two parents that both survive play the same games again; their results
  are kept, and each generation plays only the games with at least one new offspring (290 of 380).

:func:`run_coevolution` shares one long run between the chapters of a build (like
:func:`evolving_ttt.fogel.evolution.run_experiment`), and :func:`save_evaluator` /
:func:`load_evaluator` write and read a player in JSON.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np

from evolving_ttt.al_khateeb.evaluator import (
    EVALUATOR_WEIGHTS,
    INITIAL_STEP_SIZE,
    PAPER_AL_KHATEEB,
    WIN_VALUE,
    AlKhateebConfig,
    check_weights,
    draw_coevolution,
    evaluate_boards,
    random_evaluators,
    rank_population,
    self_adaptive_mutation,
    trial_generators,
)
from evolving_ttt.game import MARK_DIGIT, N_BOARDS, POWERS_OF_3, O, X, board_tables, check_count
from evolving_ttt.parallel import run_shared
from evolving_ttt.records import cached_run, read_record


@cache
def swapped_index() -> np.ndarray:
    """``swapped_index()[i]``: the number of board ``i`` with X and O exchanged (chapter 14).

    Board ``i`` seen by O, with O's pieces as +1, is the board numbered ``swapped_index()[i]``.
    """
    digits = (np.arange(N_BOARDS)[:, None] // POWERS_OF_3) % 3
    swapped = np.where(digits == 0, 0, 3 - digits) @ POWERS_OF_3
    swapped.flags.writeable = False
    return swapped


@cache
def _board_columns() -> np.ndarray:
    """Every board as floats, features first: shape (9, 19683)."""
    return np.ascontiguousarray(board_tables().boards.T, dtype=float)


def search_moves(weights: np.ndarray, boards: np.ndarray, mark: int, view: str, winning_moves: str) -> np.ndarray:
    """The one-ply move of network ``weights[k]`` on board number ``boards[k]``, all at once (chapter 14).

    Every board must have ``mark`` to move and the same number of empty squares (true of all boards of
    one ply). ``weights`` has shape ``(m, 72)``, ``boards`` ``(m,)``. The same moves as
    :func:`evolving_ttt.al_khateeb.evaluator.one_ply_move`, to the bit.
    """
    tables = board_tables()
    squares = tables.empty_list[boards].astype(np.int64)
    count = int(tables.n_empty[boards[0]]) if len(boards) else 0
    squares = squares[:, :count]  # (m, c): the moves of each board, lowest first
    if count <= 1:
        return squares[:, 0] if count else np.zeros(0, dtype=np.int64)
    after = boards[:, None] + MARK_DIGIT[mark] * POWERS_OF_3[squares]
    seen = swapped_index()[after] if (view == "mover" and mark == O) else after
    # Boards as (c, m, 9) and weights as (m, 72), both stored features first (see evaluate_boards):
    # move k of every board in one batch, each board with its own network.
    features_first = np.ascontiguousarray(np.asarray(weights).T).T
    values = evaluate_boards(features_first, np.moveaxis(_board_columns()[:, seen.T], 0, -1))
    if view == "x" and mark == O:
        values = -values
    if winning_moves == "rules":
        values = np.where(tables.winner[after.T] == mark, WIN_VALUE, values)
    return squares[np.arange(len(boards)), values.argmax(axis=0)]  # first of equal values: lowest square


@dataclass(frozen=True)
class CoevolutionRun:
    """The record of an experiment (chapter 14).

    Attributes
    ----------
    config, seed
        What was run.
    run_numbers
        Which runs of the configuration the rows hold.
    totals : (runs, generations, population) int16
        Every network's round-robin total (+1 a win, -1 a loss) in population order.
    best_weights : (runs, generations, 72)
        The network ranked first in each generation.
    best_ids : (runs, generations)
        Its number within its run, in order of birth (the same network has the same number).
    mean_step : (runs, generations)
        The mean step size of the population that played each generation.
    weights, steps : (runs, population, 72)
        The populations after the last generation: the ranked parents, then their offspring.
    """

    config: AlKhateebConfig
    seed: int
    run_numbers: tuple[int, ...]
    totals: np.ndarray
    best_weights: np.ndarray
    best_ids: np.ndarray
    mean_step: np.ndarray
    weights: np.ndarray
    steps: np.ndarray

    def players(self) -> np.ndarray:
        """Each run's player: the network ranked first in the last generation, shape ``(runs, 72)``."""
        return self.weights[:, 0]

    def row(self, run: int) -> int:
        """The row of run number ``run``."""
        if run not in self.run_numbers:
            raise ValueError(f"run {run} is not in this record; it holds runs {list(self.run_numbers)}")
        return self.run_numbers.index(run)


def merge_coevolution_runs(parts: Sequence[CoevolutionRun]) -> CoevolutionRun:
    """Stack records of different runs of the same experiment and seed (chapter 14)."""
    first = parts[0]
    if any(p.config != first.config or p.seed != first.seed for p in parts):
        raise ValueError("only records of the same configuration and seed can be merged")
    fields = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")
    return CoevolutionRun(
        first.config, first.seed, tuple(r for p in parts for r in p.run_numbers),
        *(np.concatenate([getattr(p, name) for p in parts]) for name in fields),
    )  # fmt: skip


def coevolve(
    config: AlKhateebConfig = PAPER_AL_KHATEEB,
    seed: int = 1,
    progress: bool | str = False,
    runs: Sequence[int] | None = None,
    workers: int = 1,
    scheduler: object = None,
) -> CoevolutionRun:
    """Run the experiment: all runs together, their games in lockstep (chapter 14).

    Parameters
    ----------
    config
        The experiment (default: the paper's).
    seed
        Seed of the whole experiment; run ``r`` draws only from generator ``r`` of
        :func:`evolving_ttt.al_khateeb.evaluator.trial_generators`, so it gives the same result alone or
        with others, on any number of workers.
    progress
        Show a text progress bar over generations (a string is used as its label).
    runs
        Run only these run numbers (default: all).
    workers
        Processes to share the runs between.
    scheduler
        A Dask cluster to run on instead (``"local"`` or a scheduler's address; see
        :class:`evolving_ttt.parallel.TaskRunner`); the result is the same bits.
    """
    chosen = list(range(config.runs)) if runs is None else [int(r) for r in runs]
    if not chosen or any(not 0 <= r < config.runs for r in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(f"runs must be distinct run numbers from 0 to {config.runs - 1}; got {runs!r}")
    if check_count(workers, "workers") > 1 or scheduler is not None:
        parts = run_shared(
            partial(_coevolve_share, config, seed), chosen, workers, scheduler, progress,
            f"{len(chosen)} runs x {config.generations} generations",
            lambda: (board_tables(), swapped_index(), _board_columns()),  # built before forking, shared
        )  # fmt: skip
        return merge_coevolution_runs(parts)
    return _coevolve_together(config, seed, chosen, progress)


def _coevolve_share(config: AlKhateebConfig, seed: int, runs: list[int], progress) -> CoevolutionRun:
    """One worker's share of :func:`coevolve`: these runs, in this process."""
    return _coevolve_together(config, seed, runs, progress)


def _coevolve_together(config: AlKhateebConfig, seed: int, chosen: list[int], progress: bool | str):
    rngs = [trial_generators(seed, config.runs)[r] for r in chosen]
    R, N, P, G, W = len(chosen), config.population, config.parents, config.generations, EVALUATOR_WEIGHTS
    view, winning_moves = config.player.view, config.player.winning_moves
    tables = board_tables()
    # Networks live in fixed places ("slots"); network (r, s) is row r * N + s of the flat arrays.
    weights = np.stack([random_evaluators(rng, N) for rng in rngs])  # (R, N, 72) by slot
    steps = np.full((R, N, W), INITIAL_STEP_SIZE)
    ids = np.tile(np.arange(N, dtype=np.int32), (R, 1))  # each slot's network number (order of birth in its run)
    order = np.tile(np.arange(N), (R, 1))  # the slot of each place in the population order
    is_new = np.ones((R, N), dtype=bool)
    # Per network and board number: the move worked out, and the number of the network that wrote it.
    known_moves = np.zeros(R * N * N_BOARDS, dtype=np.int8)
    known_by = np.full(R * N * N_BOARDS, -1, dtype=np.int32)
    results = np.zeros((R, N, N), dtype=np.int8)  # winner of slot i (X) against slot j (O)
    x_slot, o_slot = np.nonzero(~np.eye(N, dtype=bool))  # the 380 pairings
    totals = np.zeros((R, G, N), dtype=np.int16)
    best_weights, best_ids, mean_step = np.zeros((R, G, W)), np.zeros((R, G), dtype=np.int64), np.zeros((R, G))
    rows = np.arange(R)[:, None]
    generations = range(G)
    if progress:
        from tqdm import tqdm

        label = progress if isinstance(progress, str) else f"{R} runs x {G} generations"
        generations = tqdm(generations, desc=label, unit="gen", file=sys.stderr, mininterval=3.0)
    for g in generations:
        flat_weights, flat_ids = weights.reshape(R * N, W), ids.ravel()
        # Only games with a new network: the others were played, with the same result, before.
        run, pairing = np.nonzero(is_new[:, x_slot] | is_new[:, o_slot])
        game_x, game_o = run * N + x_slot[pairing], run * N + o_slot[pairing]
        board = np.zeros(len(run), dtype=np.int64)
        playing = np.arange(len(run))
        for ply in range(9):
            mark = X if ply % 2 == 0 else O
            mover = (game_x if mark == X else game_o)[playing]
            key = mover * N_BOARDS + board[playing]
            unknown = known_by[key] != flat_ids[mover]
            if unknown.any():
                new_keys = np.unique(key[unknown])
                networks = new_keys // N_BOARDS
                known_moves[new_keys] = search_moves(
                    flat_weights[networks], new_keys % N_BOARDS, mark, view, winning_moves
                )
                known_by[new_keys] = flat_ids[networks]
            board[playing] += MARK_DIGIT[mark] * POWERS_OF_3[known_moves[key]]
            playing = playing[~tables.over[board[playing]]]
        results[run, x_slot[pairing], o_slot[pairing]] = tables.winner[board]
        by_slot = results.sum(axis=2, dtype=np.int64) - results.sum(axis=1, dtype=np.int64)
        totals[:, g] = np.take_along_axis(by_slot, order, axis=1)
        mean_step[:, g] = [steps[r, order[r]].mean() for r in range(R)]  # in population order, as the readable code
        draws = [draw_coevolution(rng, config) for rng in rngs]
        ranked = rank_population(totals[:, g], np.stack([d.tie_keys for d in draws]))
        parent_slots = np.take_along_axis(order, ranked[:, :P], axis=1)
        free_slots = np.take_along_axis(order, ranked[:, P:], axis=1)  # the losers' places go to the offspring
        best_weights[:, g] = weights[rows[:, 0], parent_slots[:, 0]]
        best_ids[:, g] = ids[rows[:, 0], parent_slots[:, 0]]
        offspring, offspring_steps = self_adaptive_mutation(
            weights[rows, parent_slots], steps[rows, parent_slots],
            np.stack([d.step_normals for d in draws]), np.stack([d.weight_normals for d in draws]),
        )  # fmt: skip
        weights[rows, free_slots], steps[rows, free_slots] = offspring, offspring_steps
        ids[rows, free_slots] = N + g * P + np.arange(P)
        is_new[:] = False
        is_new[rows, free_slots] = True
        order = np.concatenate([parent_slots, free_slots], axis=1)
    return CoevolutionRun(
        config, int(seed), tuple(chosen), totals, best_weights, best_ids, mean_step,
        weights[rows, order], steps[rows, order],
    )  # fmt: skip


RECORD_FIELDS = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")
"""The arrays of a :class:`CoevolutionRun`, in order (chapter 14)."""


def save_coevolution_run(run: CoevolutionRun, path: str | Path) -> None:
    """Write a record to a ``.npz`` file: its configuration, seed, run numbers and arrays (chapter 14)."""
    np.savez_compressed(
        path, config=json.dumps(run.config.as_dict()), seed=run.seed, run_numbers=np.array(run.run_numbers),
        **{name: getattr(run, name) for name in RECORD_FIELDS},
    )  # fmt: skip


def load_coevolution_run(path: str | Path) -> CoevolutionRun:
    """Read a record written by :func:`save_coevolution_run` (chapter 14).

    Raises
    ------
    ValueError
        If the file is not such a record, saying what is missing.
    """
    try:
        data = np.load(path)
    except (OSError, EOFError, ValueError) as error:
        raise ValueError(f"{path} could not be read as a .npz file: {error}") from None
    with data:
        missing = [name for name in ("config", "seed", "run_numbers", *RECORD_FIELDS) if name not in data]
        if missing:
            raise ValueError(f"{path} is not a co-evolution record: it lacks {missing}")
        return CoevolutionRun(
            AlKhateebConfig.from_dict(json.loads(str(data["config"]))), int(data["seed"]),
            tuple(int(r) for r in data["run_numbers"]), *(data[name] for name in RECORD_FIELDS),
        )  # fmt: skip


def run_coevolution(
    config: AlKhateebConfig = PAPER_AL_KHATEEB,
    seed: int = 1,
    progress: bool | str = True,
    workers: int | None = None,
) -> CoevolutionRun:
    """The experiment as the chapters run it: all cores, shared within a build (chapter 14).

    When the environment variable ``TTT_RUN_CACHE`` names a folder, the finished record is saved there
    under a name derived from its configuration and seed, and a later call with the same arguments
    reads it instead of running again (as :func:`evolving_ttt.fogel.evolution.run_experiment` does).
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    key = {"system": "al-khateeb", "config": config.as_dict(), "seed": int(seed)}
    return cached_run(
        "al-khateeb", key, ".npz", lambda: coevolve(config, seed=seed, progress=progress, workers=workers),
        save_coevolution_run, load_coevolution_run,
    )  # fmt: skip


EVALUATOR_FORMAT = "al-khateeb-evaluator"
"""The ``format`` field of a saved evaluator file (chapter 15)."""


def save_evaluator(weights: np.ndarray, steps: np.ndarray, path: str | Path, **provenance) -> None:
    """Save one evaluator as JSON: its 72 weights and 72 step sizes, and where it came from (chapter 15).

    The file holds ``format`` (``"al-khateeb-evaluator"``), ``version`` (1), ``layers`` ([9, 5, 3, 1]),
    ``weights`` and ``step_sizes`` (72 numbers each, in the order of
    :func:`evolving_ttt.al_khateeb.evaluator.evaluator_layers`: the 9 x 5 input weights row by row,
    5 biases, 5 x 3 weights, 3 biases, 3 weights, 1 bias), and any keyword arguments as provenance,
    for instance the seed, run, generation and configuration. Floats keep all their digits, so loading
    gives back the same numbers bit for bit.
    """
    weights, steps = check_weights(weights), check_weights(steps, "steps")
    if weights.shape != (EVALUATOR_WEIGHTS,) or steps.shape != (EVALUATOR_WEIGHTS,):
        raise ValueError(f"save one evaluator: weights and steps of shape (72,); got {weights.shape}, {steps.shape}")
    record = {"format": EVALUATOR_FORMAT, "version": 1, "layers": [9, 5, 3, 1],
              "weights": weights.tolist(), "step_sizes": steps.tolist(), **provenance}  # fmt: skip
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def load_evaluator(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load an evaluator saved by :func:`save_evaluator`: ``(weights, step sizes, provenance)`` (chapter 15).

    Raises
    ------
    ValueError
        If the file cannot be read, is not JSON, is not an evaluator file, or holds arrays of the wrong
        length or with values that are not finite numbers (step sizes must also be positive), saying which.
    """
    path = Path(path)
    record = read_record(path, EVALUATOR_FORMAT, "an evaluator file")
    if record.get("layers") != [9, 5, 3, 1]:
        raise ValueError(f"{path}: layers must be [9, 5, 3, 1]; got {record.get('layers')!r}")
    arrays = []
    for name in ("weights", "step_sizes"):
        values = record.get(name)
        if (not isinstance(values, list) or len(values) != EVALUATOR_WEIGHTS
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):  # fmt: skip
            raise ValueError(f"{path}: {name} must be a list of {EVALUATOR_WEIGHTS} numbers")
        array = np.array(values, dtype=float)
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{path}: {name} must be finite numbers")
        arrays.append(array)
    if np.any(arrays[1] <= 0):
        raise ValueError(f"{path}: step_sizes must be positive")
    provenance = {k: v for k, v in record.items() if k not in ("format", "version", "layers", "weights", "step_sizes")}
    return arrays[0], arrays[1], provenance


def estimated_memory(config: AlKhateebConfig) -> int:
    """A generous estimate of the peak memory, in bytes, of :func:`coevolve` for ``config`` (chapter 14).

    Fitted to measured peaks on the project machine: about 60 MB of interpreter and tables, 2.7 MB per run for
    its move tables and populations, and 1 kB per run and generation for the record. The command line refuses
    runs whose estimate exceeds most of the machine's memory instead of failing part way.
    """
    return int(60e6 + config.runs * (2.7e6 + 1e3 * config.generations))
