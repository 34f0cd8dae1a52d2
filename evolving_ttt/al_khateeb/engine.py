"""Al-Khateeb (2012): the batched engine, the record of an experiment and its files (chapter 14).

:func:`coevolve` runs all runs of an experiment together and gives, bit for bit, what
:func:`evolving_ttt.al_khateeb.evaluator.coevolve_readable` gives run by run (the tests check it).
Three ideas make it fast:

* **Lockstep.** The games of all runs advance one ply at a time, in one compiled loop
  (:func:`~evolving_ttt.al_khateeb.one_ply.play_new_games`): at ply k every unfinished game asks its mover for
  a move.
* **A move is worked out once.** A player is deterministic, so the move of a network on a board never
  changes. The engine keeps, per network, a table over the 19,683 board numbers of the moves it has
  already worked out; only boards it has never met are searched, those of each ply all at once
  (:func:`~evolving_ttt.al_khateeb.one_ply.search_moves`' loop, with the arithmetic of
  :func:`~evolving_ttt.al_khateeb.evaluator.evaluate_boards`). A table entry records which network wrote it,
  so an offspring that takes over a loser's place ignores what the loser left there.
* **A game is played once.** Two parents that both survive play the same games again; their results
  are kept, and each generation plays only the games with at least one new offspring (290 of 380).

A deeper search or a hall of fame (chapter 21) writes each new network's move on all 5,478 positions down at once
(:func:`evolving_ttt.al_khateeb.search.move_tables`) and plays every game by looking moves up; the champions of
past generations keep their tables for the hall of fame. The paper's one-ply setting runs the code above,
unchanged.

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
from functools import partial
from pathlib import Path

import numpy as np

from evolving_ttt.al_khateeb.evaluator import (
    EVALUATOR_LAYERS,
    EVALUATOR_WEIGHTS,
    INITIAL_STEP_SIZE,
    PAPER_AL_KHATEEB,
    AlKhateebSettings,
    OnePlySettings,
    check_weights,
    draw_coevolution,
    random_evaluators,
    rank_population,
    self_adaptive_mutation,
    trial_generators,
)
from evolving_ttt.al_khateeb.one_ply import (
    _board_rows,
    _empty_squares,
    _identity_index,
    play_new_games,
    swapped_index,
)
from evolving_ttt.al_khateeb.search import move_tables, search_positions
from evolving_ttt.game import (
    MARK_DIGIT,
    MEMORY_ESTIMATE_CAP,
    N_BOARDS,
    POWERS_OF_3,
    O,
    X,
    board_tables,
    check_count,
    check_instance,
    check_numbers,
)
from evolving_ttt.parallel import run_shared
from evolving_ttt.reading import SWEEP_PROVENANCE, Fields, check_record_format, read_npz, read_record, settings_field
from evolving_ttt.records import check_path, check_provenance, json_text, record_arrays, save_npz, write_checked
from evolving_ttt.run_cache import cached_run
from evolving_ttt.seeds import MAX_SEED, check_seed


@dataclass(frozen=True)
class CoevolutionRun:
    """The record of an experiment (chapter 14).

    Attributes
    ----------
    settings, seed
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

    settings: AlKhateebSettings
    seed: int
    run_numbers: tuple[int, ...]
    totals: np.ndarray
    best_weights: np.ndarray
    best_ids: np.ndarray
    mean_step: np.ndarray
    weights: np.ndarray
    steps: np.ndarray

    @property
    def config(self) -> AlKhateebSettings:
        """The old name of :attr:`settings`, kept for one release (read-only)."""
        return self.settings

    def players(self) -> np.ndarray:
        """Each run's player: the network ranked first in the last generation, shape ``(runs, 72)``."""
        return self.weights[:, 0]

    def row(self, run: int) -> int:
        """The row of run number ``run``."""
        if isinstance(run, bool) or not isinstance(run, (int, np.integer)) or run not in self.run_numbers:
            raise ValueError(f"run {run} is not in this record; it holds runs {list(self.run_numbers)}")
        return self.run_numbers.index(run)


def merge_coevolution_runs(parts: Sequence[CoevolutionRun]) -> CoevolutionRun:
    """Stack records of different runs of the same experiment and seed (chapter 14)."""
    if not isinstance(parts, Sequence) or not parts or not all(isinstance(p, CoevolutionRun) for p in parts):
        raise ValueError(f"parts must be a non-empty sequence of CoevolutionRuns; got {parts!r:.60}")
    first = parts[0]
    if any(p.settings != first.settings or p.seed != first.seed for p in parts):
        raise ValueError("only records of the same configuration and seed can be merged")
    runs = [r for p in parts for r in p.run_numbers]
    if len(set(runs)) != len(runs):
        raise ValueError(f"the records to merge hold the same run more than once: {runs}")
    fields = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")
    return CoevolutionRun(
        first.settings, first.seed, tuple(r for p in parts for r in p.run_numbers),
        *(np.concatenate([getattr(p, name) for p in parts]) for name in fields),
    )  # fmt: skip


def coevolve(
    settings: AlKhateebSettings = PAPER_AL_KHATEEB,
    seed: int = 1,
    progress: bool | str = False,
    runs: Sequence[int] | None = None,
    workers: int = 1,
    scheduler: object = None,
) -> CoevolutionRun:
    """Run the experiment: all runs together, their games in lockstep (chapter 14).

    Parameters
    ----------
    settings
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
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    check_seed(seed)
    chosen = list(range(settings.runs)) if runs is None else check_numbers(runs, "runs")
    if not chosen or any(not 0 <= r < settings.runs for r in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(f"runs must be distinct run numbers from 0 to {settings.runs - 1}; got {runs!r}")
    if check_count(workers, "workers") > 1 or scheduler is not None:
        parts = run_shared(
            partial(_coevolve_share, settings, seed), chosen, workers, scheduler, progress,
            f"{len(chosen)} runs x {settings.generations} generations",
            lambda: (board_tables(), swapped_index(), _board_rows(), _identity_index(), _empty_squares()),
        )  # fmt: skip
        return merge_coevolution_runs(parts)
    return _coevolve_together(settings, seed, chosen, progress)


def _coevolve_share(settings: AlKhateebSettings, seed: int, runs: list[int], progress) -> CoevolutionRun:
    """One worker's share of :func:`coevolve`: these runs, in this process."""
    return _coevolve_together(settings, seed, runs, progress)


def _table_games(x_tables: np.ndarray, o_tables: np.ndarray) -> np.ndarray:
    """The winners of games between players given as move tables over the positions of
    :func:`~evolving_ttt.al_khateeb.search.search_positions`: ``x_tables[k]`` plays X in game ``k`` (chapter 21)."""
    positions, tables = search_positions(), board_tables()
    board = np.zeros(len(x_tables), dtype=np.int64)
    playing = np.arange(len(x_tables))
    for ply in range(9):
        mark = X if ply % 2 == 0 else O
        movers = (x_tables if mark == X else o_tables)[playing]
        squares = movers[np.arange(len(playing)), positions.index[board[playing]]]
        board[playing] += MARK_DIGIT[mark] * POWERS_OF_3[squares]
        playing = playing[~tables.over[board[playing]]]
    return tables.winner[board]


def _coevolve_together(settings: AlKhateebSettings, seed: int, chosen: list[int], progress: bool | str):
    rngs = [trial_generators(seed, settings.runs)[r] for r in chosen]
    R, N, P, G, W = len(chosen), settings.population, settings.parents, settings.generations, EVALUATOR_WEIGHTS
    K, H = settings.offspring, settings.hall_of_fame
    view, winning_moves = settings.player.view, settings.player.winning_moves
    # Networks live in fixed places ("slots"); network (r, s) is row r * N + s of the flat arrays.
    weights = np.stack([random_evaluators(rng, N) for rng in rngs])  # (R, N, 72) by slot
    steps = np.full((R, N, W), INITIAL_STEP_SIZE)
    ids = np.tile(np.arange(N, dtype=np.int32), (R, 1))  # each slot's network number (order of birth in its run)
    order = np.tile(np.arange(N), (R, 1))  # the slot of each place in the population order
    is_new = np.ones((R, N), dtype=bool)
    # The paper's one-ply player works out a move when a network first meets a board (chapter 14). A deeper search,
    # or a hall of fame, writes each new network's move on every position down at once instead (chapter 21).
    whole_tables = settings.player.depth > 1 or H > 0
    if whole_tables:
        slot_tables = move_tables(weights.reshape(R * N, W), settings.player).reshape(R, N, -1)
        champion_tables = np.zeros((R, G if H else 0, slot_tables.shape[-1]), dtype=np.int8)
    else:
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
        if whole_tables:
            results[run, x_slot[pairing], o_slot[pairing]] = _table_games(
                slot_tables[run, x_slot[pairing]], slot_tables[run, o_slot[pairing]]
            )
        else:
            # Lockstep, one ply at a time; a board a network meets for the first time is searched (one_ply.py).
            results[run, x_slot[pairing], o_slot[pairing]] = play_new_games(
                run * N + x_slot[pairing], run * N + o_slot[pairing], flat_weights, flat_ids, known_moves, known_by,
                view, winning_moves,
            )  # fmt: skip
        by_slot = results.sum(axis=2, dtype=np.int64) - results.sum(axis=1, dtype=np.int64)
        totals[:, g] = np.take_along_axis(by_slot, order, axis=1)
        mean_step[:, g] = [steps[r, order[r]].mean() for r in range(R)]  # in population order, as the readable code
        draws = [draw_coevolution(rng, settings) for rng in rngs]
        fitness = totals[:, g].astype(np.int64)
        if H and g > 0:  # every network also plays H champions of earlier generations, as X and as O
            picked = (np.stack([d.hall_keys for d in draws]) * g).astype(np.int64)  # (R, H) generation numbers
            slot = np.repeat(order[:, :, None], H, axis=2)  # (R, N, H) in population order
            run_of = np.broadcast_to(rows[:, :, None], slot.shape)
            ours = slot_tables[run_of, slot].reshape(R * N * H, -1)
            theirs = champion_tables[run_of, np.broadcast_to(picked[:, None, :], slot.shape)].reshape(R * N * H, -1)
            as_x, as_o = _table_games(ours, theirs), _table_games(theirs, ours)
            fitness += (as_x.astype(np.int64) - as_o).reshape(R, N, H).sum(axis=2)
        ranked = rank_population(fitness, np.stack([d.tie_keys for d in draws]))
        parent_slots = np.take_along_axis(order, ranked[:, :P], axis=1)
        free_slots = np.take_along_axis(order, ranked[:, P:], axis=1)  # the losers' places go to the offspring
        best_weights[:, g] = weights[rows[:, 0], parent_slots[:, 0]]
        best_ids[:, g] = ids[rows[:, 0], parent_slots[:, 0]]
        if H:
            champion_tables[:, g] = slot_tables[rows[:, 0], parent_slots[:, 0]]
        breeders = parent_slots[:, np.arange(K) % P]  # parent i makes offspring i, i + P, i + 2P, ...
        offspring, offspring_steps = self_adaptive_mutation(
            weights[rows, breeders], steps[rows, breeders],
            np.stack([d.step_normals for d in draws]), np.stack([d.weight_normals for d in draws]),
        )  # fmt: skip
        weights[rows, free_slots], steps[rows, free_slots] = offspring, offspring_steps
        ids[rows, free_slots] = N + g * K + np.arange(K)
        if whole_tables:
            slot_tables[rows, free_slots] = move_tables(offspring.reshape(R * K, W), settings.player).reshape(R, K, -1)
        is_new[:] = False
        is_new[rows, free_slots] = True
        order = np.concatenate([parent_slots, free_slots], axis=1)
    return CoevolutionRun(
        settings, int(seed), tuple(chosen), totals, best_weights, best_ids, mean_step,
        weights[rows, order], steps[rows, order],
    )  # fmt: skip


RECORD_FIELDS = ("totals", "best_weights", "best_ids", "mean_step", "weights", "steps")
"""The arrays of a :class:`CoevolutionRun`, in order (chapter 14)."""

RECORD_FORMAT = "al-khateeb-run"
"""The ``format`` array of a record written by :func:`save_coevolution_run` (chapter 14)."""

RECORD_VERSION = 2
"""The ``version`` of the record format that :func:`save_coevolution_run` writes (chapter 14); the loader reads 1 and
2, which differ only in the name of the settings' array (``config`` in version 1, ``settings`` in version 2)."""

RECORD_KIND = "Al-Khateeb co-evolution record"


def _positive(fields: Fields, name: str, shape: tuple[int, ...]) -> np.ndarray:
    array = fields.numbers(name, shape)
    if array.size and array.min() <= 0:
        raise fields.fail(name, f"holds {array.min()}; step sizes must be positive")
    return array


def _read_coevolution_run(fields: Fields) -> CoevolutionRun:
    """The record held by ``fields``, every array checked (the rules of :func:`load_coevolution_run`)."""
    hint = " (a Fogel run: read it with load_run)" if fields.has("trial_numbers") else ""
    version = check_record_format(fields, RECORD_FORMAT, RECORD_VERSION, hint, oldest=1)
    if not fields.has("run_numbers") and hint:
        raise fields.fail("run_numbers", f"is missing: this is not an {RECORD_KIND}{hint}")
    settings = fields.settings(settings_field(fields, version, 2), AlKhateebSettings)
    seed = fields.integer("seed", 0, MAX_SEED)
    runs = fields.array("run_numbers", "i", (None,), 0, settings.runs - 1)
    if runs.size == 0 or len(set(runs.tolist())) != runs.size:
        raise fields.fail("run_numbers", f"must be distinct run numbers, at least one; got {runs.tolist()}")
    R, G, N, K, W = runs.size, settings.generations, settings.population, settings.offspring, EVALUATOR_WEIGHTS
    games = 2 * (N - 1)  # every network plays every other once as X and once as O
    totals = fields.array("totals", "i", (R, G, N), -games, games)
    if np.any(totals.sum(axis=-1) != 0):
        raise fields.fail("totals", "must sum to 0 over each generation's population (every game has one winner)")
    best_weights = fields.numbers("best_weights", (R, G, W))
    best_ids = fields.array("best_ids", "i", (R, G), 0, N + K * (G - 1) - 1)
    born = N + K * np.arange(G)  # the networks that played generation g are numbered below N + g * K
    if np.any(best_ids >= born):
        raise fields.fail("best_ids", "holds the number of a network born after the generation it was ranked in")
    mean_step = _positive(fields, "mean_step", (R, G))
    weights = fields.numbers("weights", (R, N, W))
    steps = _positive(fields, "steps", (R, N, W))
    totals = totals.astype(np.int16) if games <= np.iinfo(np.int16).max else totals  # as coevolve records them
    return CoevolutionRun(settings, seed, tuple(runs.tolist()), totals, best_weights, best_ids, mean_step, weights,
                          steps)  # fmt: skip


def save_coevolution_run(run: CoevolutionRun, path: str | Path) -> None:
    """Write a record to a ``.npz`` file at exactly ``path``, whole or not at all: its configuration, seed, run
    numbers and arrays (chapter 14); the format is described in :func:`load_coevolution_run`.

    Raises
    ------
    ValueError
        If ``run`` is not a :class:`CoevolutionRun` or breaks a rule of the format (a NaN, an array of the wrong
        shape, a step size that is not positive...): nothing is written then.
    """
    check_instance(run, CoevolutionRun, "run", "a CoevolutionRun")
    check_instance(run.settings, AlKhateebSettings, "run.settings", "an AlKhateebSettings")
    path = check_path(path)
    values = {"format": RECORD_FORMAT, "version": RECORD_VERSION, "settings": json.dumps(run.settings.as_dict()),
              "seed": run.seed, "run_numbers": run.run_numbers,
              **{name: getattr(run, name) for name in RECORD_FIELDS}}  # fmt: skip
    arrays = record_arrays(path, values, "record")
    try:
        _read_coevolution_run(Fields(path, arrays, RECORD_KIND))
    except ValueError as error:
        raise ValueError(f"{path} was not written, as its loader would refuse it: {error}") from None
    save_npz(path, arrays, RECORD_KIND)


def load_coevolution_run(path: str | Path) -> CoevolutionRun:
    """Read a record written by :func:`save_coevolution_run`, checking every array (chapter 14).

    The format: an ``.npz`` archive (no pickled objects) of the arrays ``format`` (the text
    ``"al-khateeb-run"``), ``version`` (2), ``settings`` (the JSON text of :meth:`AlKhateebSettings.as_dict`),
    ``seed`` (a whole number from 0 to 2**63 - 1), ``run_numbers`` (R distinct run numbers of the
    configuration), ``totals`` (R x generations x population whole numbers, each within +-2 (population - 1)
    and summing to 0 over a generation), ``best_weights`` (R x generations x 72), ``best_ids`` (R x generations;
    in generation g below population + g x offspring, the offspring being population - parents), ``mean_step``
    (R x generations, positive), ``weights`` and ``steps`` (R x population x 72; steps positive). Every number
    is finite. A record of version 1 holds the settings as ``config`` instead, and so does a record without
    ``format`` and ``version`` (version 0, written before they were added); both are read. A record that holds its
    settings under the other version's name is refused. Other arrays are ignored.

    Raises
    ------
    ValueError
        Naming the file and the array, if the file is missing, empty, damaged or not an ``.npz`` archive, or an
        array is missing or has the wrong type, shape or values.
    """
    path = check_path(path)
    return _read_coevolution_run(Fields(path, read_npz(path, RECORD_KIND), RECORD_KIND))


def run_coevolution(
    settings: AlKhateebSettings = PAPER_AL_KHATEEB,
    seed: int = 1,
    progress: bool | str = True,
    workers: int | None = None,
) -> CoevolutionRun:
    """The experiment as the chapters run it: all cores, shared within a build (chapter 14).

    When the environment variable ``TTT_RUN_CACHE`` names a folder, the finished record is saved there
    under a name derived from its configuration and seed, and a later call with the same arguments
    reads it instead of running again (as :func:`evolving_ttt.fogel.evolution.run_experiment` does).
    """
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    seed = check_seed(seed)
    workers = workers if workers is not None else (os.cpu_count() or 1)
    check_count(workers, "workers")
    key = {"system": "al-khateeb", "settings": settings.as_dict(), "seed": seed}
    return cached_run(
        "al-khateeb", key, ".npz", lambda: coevolve(settings, seed=seed, progress=progress, workers=workers),
        save_coevolution_run, load_coevolution_run,
    )  # fmt: skip


EVALUATOR_FORMAT = "al-khateeb-evaluator"
"""The ``format`` field of a saved evaluator file (chapter 15)."""

EVALUATOR_VERSION = 1
"""The ``version`` of the evaluator file format that this code writes and reads (chapter 15)."""

EVALUATOR_FIELDS = ("format", "version", "layers", "weights", "step_sizes")
"""The fields of an evaluator file; any other field is provenance (chapter 15)."""

EVALUATOR_PROVENANCE = {
    "counts": ("run", "generation", "round_robin_points", *SWEEP_PROVENANCE), "texts": ("description",),
    "settings": {"experiment": AlKhateebSettings, "settings": AlKhateebSettings},
}  # fmt: skip
"""The provenance fields of an evaluator file that :func:`load_evaluator` checks when present
(:meth:`~evolving_ttt.reading.Fields.provenance`): those of the book's TTT (chapter 15) and of a sweep's task;
``player``, the reading a saved player plays with, is checked too."""


def save_evaluator(weights: np.ndarray, steps: np.ndarray, path: str | Path, /, **provenance) -> None:
    """Save one evaluator as JSON, written whole at exactly ``path``: its 72 weights and 72 step sizes, and where
    it came from (chapter 15).

    The file holds ``format`` (``"al-khateeb-evaluator"``), ``version`` (1), ``layers`` ([9, 5, 3, 1]),
    ``weights`` and ``step_sizes`` (72 numbers each, in the order of
    :func:`evolving_ttt.al_khateeb.evaluator.evaluator_layers`: the 9 x 5 input weights row by row,
    5 biases, 5 x 3 weights, 3 biases, 3 weights, 1 bias), and any keyword arguments as provenance,
    for instance the seed, run, generation and configuration. Floats keep all their digits, so loading
    gives back the same numbers bit for bit.

    Raises
    ------
    ValueError
        If the weights or step sizes are not 72 finite numbers (step sizes positive), a provenance keyword is
        one of the format's own fields (:data:`EVALUATOR_FIELDS`), or the file would not load
        (:func:`load_evaluator`): a provenance value that is not JSON, NaN, a number too large or nested too
        deep. Nothing is written then.
    """
    weights, steps = check_weights(weights), check_weights(steps, "steps")
    if weights.shape != (EVALUATOR_WEIGHTS,) or steps.shape != (EVALUATOR_WEIGHTS,):
        raise ValueError(f"save one evaluator: weights and steps of shape (72,); got {weights.shape}, {steps.shape}")
    if np.any(steps <= 0):
        raise ValueError(f"steps must be positive; got {steps.min()}")
    path = check_path(path)
    check_provenance(provenance, EVALUATOR_FIELDS, "an evaluator")
    record = {"format": EVALUATOR_FORMAT, "version": EVALUATOR_VERSION, "layers": list(EVALUATOR_LAYERS),
              "weights": weights.tolist(), "step_sizes": steps.tolist(), **provenance}  # fmt: skip
    write_checked(path, json_text(record, path), load_evaluator, "evaluator file")


def load_evaluator(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """Load an evaluator saved by :func:`save_evaluator`: ``(weights, step sizes, provenance)`` (chapter 15).

    The format (version 1) is a JSON object with ``format`` ``"al-khateeb-evaluator"``, ``version`` 1,
    ``layers`` ``[9, 5, 3, 1]``, ``weights`` (72 numbers) and ``step_sizes`` (72 positive numbers), every number
    a finite JSON number (not a text, not a boolean). Every other field is provenance and is returned as it is;
    the fields the book's savers write are checked when present (:data:`EVALUATOR_PROVENANCE`), and ``player``
    must be a reading of :class:`~evolving_ttt.al_khateeb.evaluator.OnePlySettings` (an object such as
    ``{"view": "mover", "winning_moves": "evaluator"}``): a player loaded from the file plays with it, or with its
    ``experiment``'s, so a reading of the wrong type is refused rather than replaced by the book's.

    Raises
    ------
    ValueError
        Naming the file and the field, if the file cannot be read, is not JSON (or holds NaN, numbers too
        large for a float, nesting deeper than 200), is not an evaluator file of version 1, or a field is
        missing or has the wrong type, length or values.
    """
    path = check_path(path)
    record = read_record(path, EVALUATOR_FORMAT, "an evaluator file", EVALUATOR_VERSION)
    fields = Fields(path, record, "evaluator file")
    fields.integer("version", EVALUATOR_VERSION, EVALUATOR_VERSION)  # not true, not 1.0
    layers = fields.get("layers")
    if (not isinstance(layers, list) or any(isinstance(n, bool) or not isinstance(n, int) for n in layers)
            or layers != list(EVALUATOR_LAYERS)):  # fmt: skip
        raise fields.fail("layers", f"must be [9, 5, 3, 1]; got {layers!r:.60}")
    weights = fields.numbers("weights", (EVALUATOR_WEIGHTS,))
    steps = fields.numbers("step_sizes", (EVALUATOR_WEIGHTS,))
    if np.any(steps <= 0):
        raise fields.fail("step_sizes", f"holds {steps.min()}; step sizes must be positive")
    fields.provenance(**EVALUATOR_PROVENANCE)
    reading = fields.optional(fields.mapping, "player")
    if reading is not None:
        try:
            OnePlySettings(**reading)
        except (TypeError, ValueError) as error:
            raise fields.fail("player", f"is not a player's reading (view, winning_moves, depth): {error}") from None
    provenance = {k: v for k, v in record.items() if k not in EVALUATOR_FIELDS}
    return weights, steps, provenance


def estimated_memory(settings: AlKhateebSettings, workers: int = 1) -> int:
    """A generous estimate of the peak memory, in bytes, of :func:`coevolve` for ``settings`` (chapter 14).

    Fitted to measured peaks on the project machine: about 60 MB of interpreter and tables per process, 135 kB
    per network of every run for its move tables (2.7 MB per run of 20), 80 bytes per pairing of a run for the
    games of a generation, and the record, which grows with the generations: per run and generation the
    totals (2 bytes a network), the best network, its number and the mean step size (592 bytes), counted twice
    with one process (the record and its pieces) and four times with several (the workers' pieces, their
    copies sent back, the joined record). A deeper search or a hall of fame (chapter 21) adds the search's tables
    and, per run, every champion's moves on the 5,478 positions. The command line refuses runs whose estimate
    exceeds most of the machine's memory instead of failing part way. The estimate is capped at
    :data:`evolving_ttt.fogel.evolution.MEMORY_ESTIMATE_CAP`.
    """
    check_instance(settings, AlKhateebSettings, "settings", "an AlKhateebSettings")
    processes = max(1, min(check_count(workers, "workers"), settings.runs))
    n, generations, runs = settings.population, settings.generations, settings.runs
    per_run = 135_000 * n + 80 * n**2
    record = runs * generations * (2 * n + 8 * (EVALUATOR_WEIGHTS + 2)) * (2 if processes == 1 else 4)
    if settings.hall_of_fame:  # every champion's moves on the 5,478 positions, and the games against them
        per_run += generations * 5_478 + 200_000 * n * settings.hall_of_fame
    if settings.player.depth > 1 or settings.hall_of_fame:  # the tables of the search: 16 networks at a time
        per_run += 16 * 5_479 * 9 * 8 * 3
    return min(processes * 60_000_000 + runs * per_run + record, MEMORY_ESTIMATE_CAP)  # whole numbers: no overflow
