"""Sweeps: any setting of any system over many seeds, kept in a database, on one machine or a cluster (chapter 20).

A sweep is a system, a grid of settings and a number of seeds. The grid is the product of lists of values, one
list per setting, each setting named by its dotted path into the system's settings (``mutation.weight_spread``,
``player.view``, ``population``); every cell of the grid runs seeds 1 to N, and every (cell, seed, task) is one
task of the parallel layer (:mod:`evolving_ttt.parallel`), on local processes or a Dask cluster.

Every task measures its final player on the arena's exact yardsticks (expected points against the perfect and
the random player as X and as O, Fogel's expected protocol score against his rule base, whether it can lose) and
with its system's own headline numbers (``task_measures``), and is recorded, with its saved player, in the sweep's
SQLite database (:mod:`evolving_ttt.store`) as soon as it finishes. Running the same sweep again runs only the
tasks not yet recorded; a different sweep is refused on the same database.

:func:`sweep` does it from Python and returns the table (pandas); ``python -m ttt_helpers sweep run|status|export``
from the command line.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import socket
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from evolving_ttt.arena import measure, reference_players
from evolving_ttt.arguments import counted
from evolving_ttt.kit import kind_name, parse_setting, settings_keys, with_settings
from evolving_ttt.numerics import NUMERICS
from evolving_ttt.parallel import TaskRunner
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.store import SweepStore, seed_range
from evolving_ttt.systems import get_system, resolve_system, system_player, system_reference
from evolving_ttt.tables import YARDSTICKS, cell_label, cell_summary, sweep_table, swept_columns

SWEEP_FORMAT = "ttt-sweep"
"""The ``format`` of a sweep's definition (chapter 20)."""


# --- Keys and values ---------------------------------------------------------------------------------------------


def parse_grid(system: Any, assignments: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``--set KEY=V1,V2,...`` texts as ``[(key, [value texts])]``, every cell of their product checked whole by
    the system's settings (chapter 20).

    Raises
    ------
    ValueError
        One line naming the key and the value and saying what is allowed: an unknown key (with the known ones),
        a value of the wrong type, a value given twice, or a cell the system's settings refuse (the value that is
        refused alone, or the cell's values together).
    """
    keys = settings_keys(system.PAPER_SETTINGS)
    grid: list[tuple[str, list[str]]] = []
    for assignment in assignments:
        key, equals, values = assignment.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ValueError(f"--set {assignment!r}: expected KEY=V1,V2,... such as mutation.weight_spread=0.02,0.05")
        if key not in keys:
            raise ValueError(f"--set {key}: {system.name} has no setting {key!r}; its settings are {', '.join(keys)}")
        if any(key == other for other, _ in grid):
            raise ValueError(f"--set {key}: the key is given twice; list all its values in one --set")
        texts = [text.strip() for text in values.split(",")]
        if not values.strip() or any(not text for text in texts):
            raise ValueError(f"--set {key}={values}: give one or more values separated by commas")
        parsed: dict[Any, str] = {}
        for text in texts:
            try:
                value = parse_setting(text, keys[key])
            except (ValueError, TypeError) as error:
                raise ValueError(f"--set {key}={text}: {error} (the setting is {kind_name(keys[key])})") from None
            if value in parsed:
                raise ValueError(f"--set {key}={values}: {parsed[value]} and {text} are the same value, so the grid "
                                 "would run the same cell twice; give each value once")  # fmt: skip
            parsed[value] = text
        grid.append((key, texts))
    if math.prod(len(texts) for _, texts in grid) <= MAX_SWEEP_TASKS:  # a larger grid is refused by its size
        grid_cells(system, grid)
    return grid


def grid_cells(system: Any, grid: Sequence[tuple[str, Sequence[str]]]) -> list[Any]:
    """The settings of every cell of ``grid``: the product of its value lists, in order, the first key slowest.

    Each cell is built whole from the paper's settings and checked by the system's settings; a cell they refuse
    is one ``ValueError`` naming the cell's values (``--set KEY=VALUE: ...`` for a grid of one setting).
    """
    keys = settings_keys(system.PAPER_SETTINGS)
    cells = []
    for texts in itertools.product(*(values for _, values in grid)):
        changes = {}
        for (key, _), text in zip(grid, texts, strict=True):
            try:
                changes[key] = parse_setting(text, keys[key])
            except (KeyError, TypeError, ValueError) as error:  # a grid read from a database is checked here
                raise ValueError(f"the grid's {key}={text} is not a setting of {system.name}: {error}") from None
        try:
            cells.append(with_settings(system.PAPER_SETTINGS, changes))
        except (TypeError, ValueError, OverflowError) as error:
            raise _cell_refused(system, grid, texts, error) from None
    return cells


def _cell_refused(system: Any, grid, texts, error: Exception) -> ValueError:
    """The error of a refused cell: its one value (and the setting's kind), or all of its values together."""
    if len(grid) == 1:
        key = grid[0][0]
        return ValueError(f"--set {key}={texts[0]}: {error} (the setting is "
                          f"{kind_name(settings_keys(system.PAPER_SETTINGS)[key])})")  # fmt: skip
    values = [(key, text) for (key, _), text in zip(grid, texts, strict=True)]
    named = [(hit.start(), k) for k, (key, _) in enumerate(values)
             if (hit := re.search(rf"\b{re.escape(key.rpartition('.')[2])}\b", str(error)))]  # fmt: skip
    if named:  # the setting the message names first
        key, text = values[min(named)[1]]
        others = ", ".join(f"{other}={value}" for other, value in values if other != key)
        return ValueError(f"--set {key}={text} (in the cell with {others}): {error}")
    together = ", ".join(f"{key}={text}" for key, text in values)
    return ValueError(f"--set: the cell {together} is refused: {error}")


def sweep_definition(system: Any, grid: Sequence[tuple[str, Sequence[str]]], seeds: int, first_seed: int = 1) -> dict:
    """What defines a sweep, as stored in its database: the system, the grid, the number of seeds (and the first,
    when it is not 1), and the numerics its results are made with (:data:`evolving_ttt.numerics.NUMERICS`), so that
    no sweep resumes with others."""
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"--seeds must be a whole number >= 1; got {seeds!r}")
    if isinstance(first_seed, bool) or not isinstance(first_seed, int) or not 1 <= first_seed <= LARGEST_FIRST_SEED:
        raise ValueError(f"--first-seed must be a whole number from 1 to {LARGEST_FIRST_SEED:,}; got {first_seed!r}")
    definition = {"format": SWEEP_FORMAT, "version": 1, "system": system.name,
                  "grid": [[key, list(values)] for key, values in grid], "seeds": seeds,
                  "numerics": NUMERICS}  # fmt: skip
    if first_seed != 1:  # left out otherwise, so that the sweeps made before it existed keep their definition
        definition["first_seed"] = first_seed
    return definition


LARGEST_FIRST_SEED = 1_000_000_000
"""The largest first seed of a sweep (seeds are spawned into generators; any whole number would do)."""


MAX_SWEEP_TASKS = 1_000_000
"""The most tasks one sweep may have (a million rows of a database; far more than a machine runs in a day)."""


def check_sweep_size(system: Any, definition: dict) -> list[Any]:
    """The settings of every cell of the sweep ``definition``, after checking that it has at most
    :data:`MAX_SWEEP_TASKS` tasks (counted before any list of them is made); ``ValueError`` otherwise."""
    cells = math.prod(len(values) for _, values in definition["grid"])
    seeds = definition["seeds"]
    if cells * seeds > MAX_SWEEP_TASKS:
        raise ValueError(f"the sweep has {cells:,} cells x {seeds:,} seeds, more than {MAX_SWEEP_TASKS:,} tasks; "
                         "sweep fewer values or seeds")  # fmt: skip
    settings = grid_cells(system, definition["grid"])
    tasks = seeds * sum(system.task_count(cell) for cell in settings)
    if tasks > MAX_SWEEP_TASKS:
        raise ValueError(f"the sweep has {tasks:,} tasks (its cells' tasks x {seeds:,} seeds), more than "
                         f"{MAX_SWEEP_TASKS:,}; sweep fewer values, tasks or seeds")  # fmt: skip
    return settings


def sweep_tasks(system: Any, definition: dict) -> list[tuple[int, int, int]]:
    """Every task of a sweep as ``(cell, seed, task)``: every seed of :func:`~evolving_ttt.store.seed_range` in every
    cell, every task of each."""
    cells = grid_cells(system, definition["grid"])
    return [(cell, seed, task) for cell, settings in enumerate(cells)
            for seed in seed_range(definition) for task in range(system.task_count(settings))]  # fmt: skip


# --- One task, on a worker -----------------------------------------------------------------------------------------


def yardsticks(player: ArenaPlayer) -> dict[str, float]:
    """The arena's measures of :data:`~evolving_ttt.tables.YARDSTICKS` for one player."""
    row = measure(player)

    def points(opponent: str, side: str) -> float:
        win, draw, _ = row.results[opponent][side]
        return win + 0.5 * draw

    return {
        "points_perfect_x": points("perfect", "X"), "points_perfect_o": points("perfect", "O"),
        "points_random_x": points("random", "X"), "points_random_o": points("random", "O"),
        "fogel_score": row.protocol_score, "can_lose": float(row.can_lose["X"] or row.can_lose["O"]),
    }  # fmt: skip


def reference_yardsticks():
    """The arena's yardsticks (:func:`yardsticks`) of three reference players, the lines a study's players are read
    against (chapters 20 to 23): the uniformly random player, the player that takes the lowest empty square (what a
    program that never moves plays, since the engine then moves for it), and the perfect player.

    Returns
    -------
    pandas.DataFrame
        One row per player (``player``), one column per yardstick.
    """
    import pandas as pd

    from evolving_ttt.perfect import lowest_square_player
    from evolving_ttt.players import table_player

    players = {player.name: player for player in reference_players()}
    lowest = table_player("lowest empty square", "reference", "the lowest empty square",
                          lambda board, mark: lowest_square_player(board))  # fmt: skip
    rows = [{"player": name, **yardsticks(player)}
            for name, player in (("random", players["random"]), ("lowest empty square", lowest),
                                 ("perfect", players["perfect"]))]  # fmt: skip
    return pd.DataFrame(rows)


def task_yardsticks(system: Any, player: Any) -> dict[str, float]:
    """The yardsticks of one task's player (:func:`yardsticks`), as a sweep records them."""
    return yardsticks(system_player(system, player, f"{system.name} task"))


def run_sweep_task(system: Any, item: tuple[int, int, int, Any]) -> dict:
    """Run and measure one task ``(cell, seed, task, settings)``: what a worker sends back (chapter 20).

    ``system`` is a system's name or its :func:`~evolving_ttt.systems.system_reference`, which lets a worker of a
    Dask cluster load a system registered from outside the package."""
    start = time.perf_counter()
    system = resolve_system(system)
    cell, seed, task, settings = item
    result = system.run_tasks(settings, seed, [task])[0]
    player = system.record_players(system.merge(settings, seed, [result]))[0]
    measures = {**task_yardsticks(system, player), **system.task_measures(settings, result)}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "player.json"
        system.save_player(player, path, sweep_cell=cell, seed=seed, task=task, settings=settings.as_dict())
        text = path.read_text()
    return {"key": (cell, seed, task), "settings": settings.as_dict(), "measures": measures, "player": text,
            "wall_time": time.perf_counter() - start, "worker": f"{socket.gethostname()}:{os.getpid()}"}  # fmt: skip


def remeasure(source: str | Path, target: str | Path, numerics: str | None = None) -> int:
    """Copy the sweep ``source`` to the new database ``target`` with every task's yardsticks measured again.

    The arena's yardsticks (:func:`yardsticks`) are a function of a task's saved player alone, so a change to how
    they are computed (such as the portable numerics, chapter 9) needs no run to be made again: each stored player
    is loaded and measured with the current code. The system's own task measures, the players, the settings and
    the wall times are copied unchanged. The copy's definition keeps the source's record of the numerics its runs
    were made with, unless ``numerics`` is given: give :data:`~evolving_ttt.numerics.NUMERICS` only where the runs
    themselves give the same bits with the current code, which :func:`evolving_ttt.studies.rerun_check` shows on
    the copy. Returns the number of tasks copied.

    Raises
    ------
    ValueError
        If ``target`` exists (no output replaces an input) or ``source`` is not a sweep database.
    """
    source, target = Path(source), Path(target)
    if target.exists():
        raise ValueError(f"{target} exists: remeasure writes a new database and replaces none")
    with SweepStore(source) as store:
        definition, rows = store.definition, store.rows()
    system = get_system(definition["system"])
    if numerics is not None:
        definition = {**definition, "numerics": numerics}
    with SweepStore(target, definition) as copy:
        for row in rows:
            player = load_saved_player(system, row["player"])
            measures = {**row["measures"], **task_yardsticks(system, player)}
            copy.record((row["cell"], row["seed"], row["task"]), row["settings"], measures, row["player"],
                        row["wall_time"], row["worker"])  # fmt: skip
    return len(rows)


def sweep_share(system: Any, share: list, progress: bool | str) -> list[dict]:
    """Run the tasks ``(cell, seed, task, settings)`` of ``share`` on a worker (:func:`run_sweep_task`); ``system``
    is a name or a :func:`~evolving_ttt.systems.system_reference`."""
    system = resolve_system(system)  # once per share: a system sent by value is unpickled here
    return [run_sweep_task(system, item) for item in share]


# --- The sweep ----------------------------------------------------------------------------------------------------


def status_line(store: SweepStore) -> str:
    """``N of M tasks done`` for the sweep in ``store``."""
    system = get_system(store.definition["system"])
    cells = check_sweep_size(system, store.definition)
    total = store.definition["seeds"] * sum(system.task_count(cell) for cell in cells)
    return f"{len(store.done()):,} of {counted(total, 'task')} done"


def sweep(
    system: Any,
    grid: dict[str, Sequence[Any]] | Sequence[str],
    seeds: int,
    db: str | Path,
    workers: int | None = None,
    scheduler: object = None,
    progress: bool = True,
    first_seed: int = 1,
):
    """Run a sweep, or the part of it not yet in ``db``, and return its table (chapter 20).

    Parameters
    ----------
    system
        A registered system or its name (``"fogel"``).
    grid
        ``{"mutation.weight_spread": [0.02, 0.05], "trials": [1]}``, or the command line's ``["KEY=V1,V2", ...]``.
    seeds
        How many seeds every cell runs: ``first_seed`` to ``first_seed + seeds - 1``.
    db
        The SQLite file that keeps the sweep; created if missing. A file holding another sweep is refused.
    workers, scheduler
        Where the tasks run (:class:`evolving_ttt.parallel.TaskRunner`): local processes, or a Dask cluster.
    progress
        A bar over the tasks, with the estimated time left.
    first_seed
        The first seed (1 by default). Held-out seeds, such as 1001 to 1020, confirm a cell that seeds 1 to 10 chose.

    Returns
    -------
    pandas.DataFrame
        One row per task: see :func:`sweep_table`.
    """
    system = get_system(system) if isinstance(system, str) else system
    if isinstance(grid, dict):
        grid = [f"{key}={','.join(str(v) for v in values)}" for key, values in grid.items()]
    definition = sweep_definition(system, parse_grid(system, list(grid)), seeds, first_seed)
    cells = check_sweep_size(system, definition)
    with SweepStore(db, definition) as store:
        done = store.done()
        missing = [key for key in sweep_tasks(system, definition) if key not in done]
        items = [[(cell, seed, task, cells[cell])] for cell, seed, task in missing]

        def record(k: int, results: list[dict]) -> None:
            for found in results:
                store.record(found["key"], found["settings"], found["measures"], found["player"],
                             found["wall_time"], found["worker"])  # fmt: skip

        with TaskRunner(workers, scheduler) as runner:
            # The reference players are tabulated once, before the local workers are forked.
            work = partial(sweep_share, system_reference(system))
            runner.map(work, items, progress, f"sweep {system.name}", reference_players, record)
        if progress:
            print(status_line(store))
    return sweep_table(db)


def sweep_summary(db: str | Path) -> str:
    """Every cell of the sweep in ``db`` as text: the mean of each of the arena's yardsticks over the cell's tasks,
    with its 95% bootstrap interval, and the number of tasks (``python -m ttt_helpers sweep summary``)."""
    table = sweep_table(db)
    if not len(table):
        return f"{db}: no task recorded yet"
    measures = [m for m in YARDSTICKS if m in table.columns]
    summary, by = cell_summary(table, measures), swept_columns(table)
    lines = []
    for _, row in summary.iterrows():
        cell = cell_label(row, by)
        count = int(row["n"])
        lines.append(f"{cell} ({counted(count, 'task')}):")
        for m in measures:
            if count == 1:
                interval = "one task: no interval"
            elif row[m + "_low"] == row[m + "_high"]:
                interval = f"the same in all {count} tasks"
            else:
                interval = f"95% interval {row[m + '_low']:.4f} to {row[m + '_high']:.4f}"
            lines.append(f"  {m:<17} {row[m]:>9.4f}   {interval}")
    lines.append("points_*: expected points per game (1 a win, 1/2 a draw, 0 a loss) against the perfect or the "
                 "random player as X or as O; fogel_score: the expected score of Fogel's 32-game protocol as X "
                 "(from -320 to 32); can_lose: the share of the cell's players that some opponent can beat; all "
                 "exact for each player, averaged over the cell's tasks.")  # fmt: skip
    return "\n".join(lines)


def sweep_player(db: str | Path, cell: int, seed: int, task: int) -> ArenaPlayer:
    """The saved final player of one task of a sweep, ready to measure or to play (chapter 20)."""
    with SweepStore(db) as store:
        system = get_system(store.definition["system"])
        found = store.connection.execute(
            "SELECT player FROM tasks WHERE cell = ? AND seed = ? AND task = ?", (cell, seed, task)
        ).fetchone()
    if found is None:
        raise ValueError(f"{db}: no task (cell {cell}, seed {seed}, task {task}) recorded")
    player = load_saved_player(system, found[0])
    return system_player(system, player, f"{system.name} cell {cell} seed {seed} task {task}")


def load_saved_player(system: Any, text: str) -> Any:
    """A task's player from the text of its player file as a sweep keeps it, read by the system's own loader
    (with all its checks), as the system's player, not yet an arena player."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "player.json"
        path.write_text(text)
        player, _ = system.load_player(path)
    return player
