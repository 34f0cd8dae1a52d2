"""The conformance check: does a system do what the tools above the systems rely on (chapter 25)?

:func:`evolving_ttt.systems.check_system` checks that a system has every name of the vocabulary. This module runs
it: :func:`check_conformance` takes the system's own ``SMALL_SETTINGS`` and checks, in order, that its settings
round-trip and every setting can be swept, that its command builds its settings, that a task gives the same bits
alone, in any share, twice, on a local pool of two processes and on a Dask cluster, that its record and players
save and load to the same bits, that its players move only to empty squares, and that a sweep of it on any
executor records the same players. Like scikit-learn's estimator checks: every registered system passes it in
``make test``, and a new system can be checked with one call.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.game import O, X
from evolving_ttt.kit import parse_setting, setting_text, setting_value, settings_keys, with_settings
from evolving_ttt.outcomes import check_policy
from evolving_ttt.players import ArenaPlayer, Explanation
from evolving_ttt.sweeps import sweep, sweep_player
from evolving_ttt.systems import (
    System,
    check_settings,
    check_system,
    register_system,
    registered_systems,
    run_system,
    system_player,
    unregister_system,
)


class ConformanceError(ValueError):
    """A system fails the conformance check: the message names the check and what was found."""


def leaves(value: Any) -> list:
    """Every array and number inside a task's result or a record, in a fixed order, for comparing bits."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if hasattr(value, "__dataclass_fields__"):
        return [leaf for name in value.__dataclass_fields__ for leaf in leaves(getattr(value, name))]
    if hasattr(value, "arrays"):  # a Population
        return leaves(value.arrays())
    return [value]


def same_bits(first: Any, second: Any) -> bool:
    """Whether two results hold the same arrays (shape, dtype and bytes) and the same values, in the same order."""
    left, right = leaves(first), leaves(second)
    if len(left) != len(right):
        return False
    for a, b in zip(left, right, strict=True):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.asarray(a), np.asarray(b)
            if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
                return False
        elif not (a == b or (a != a and b != b)):
            return False
    return True


def _require(condition: bool, check: str, system: Any, problem: str) -> None:
    if not condition:
        raise ConformanceError(f"{getattr(system, 'name', system)!r} fails the conformance check {check!r}: {problem}")


def _settings_checks(system: Any, at: list[str]) -> Any:
    at[0] = "settings"
    for label in ("PAPER_SETTINGS", "SMALL_SETTINGS"):
        settings = getattr(system, label)
        _require(isinstance(settings, system.Settings), "settings", system, f"{label} is not a {system.Settings}")
        text = json.dumps(settings.as_dict())
        _require(system.Settings.from_dict(json.loads(text)) == settings, "settings", system,
                 f"{label}.as_dict() through JSON and Settings.from_dict gives other settings")  # fmt: skip
    small = check_settings(system, system.SMALL_SETTINGS)
    at[0] = "sweep keys"
    for key, kind in settings_keys(system.PAPER_SETTINGS).items():
        value = setting_value(small, key)
        _require(parse_setting(setting_text(value), kind) == value, "sweep keys", system,
                 f"the setting {key} = {value!r} does not read back from its text {setting_text(value)!r}")  # fmt: skip
        _require(with_settings(small, {key: value}) == small, "sweep keys", system,
                 f"setting {key} to its own value changes the settings")  # fmt: skip
    return small


def _command_checks(system: Any, folder: Path, at: list[str]) -> str:
    at[0] = "command"
    parser = argparse.ArgumentParser(prog=system.command)
    system.add_arguments(parser)
    args = parser.parse_args([])
    args.out = str(folder / "record")
    settings = check_settings(system, system.settings_from_arguments(args))
    _require(isinstance(settings, system.Settings), "command", system, "settings_from_arguments gave no Settings")
    outputs = system.extra_outputs(args)
    _require("--out" in outputs, "command", system, "extra_outputs lists no --out")
    _require(isinstance(system.describe(settings), str), "command", system, "describe gives no text")
    memory = system.estimated_memory(system.SMALL_SETTINGS, 2)
    _require(isinstance(memory, int) and memory > 0, "command", system, f"estimated_memory gave {memory!r}")
    return outputs["--out"][1] or ".out"


def _task_checks(system: Any, settings: Any, seed: int, scheduler: object, at: list[str]) -> tuple[list, Any]:
    at[0] = "tasks"
    count = system.task_count(settings)
    _require(isinstance(count, int) and count >= 1, "tasks", system, f"task_count gave {count!r}")
    tasks = list(range(count))
    together = system.run_tasks(settings, seed, tasks)
    _require(len(together) == count, "tasks", system, f"{count} tasks gave {len(together)} results")
    at[0] = "same bits twice"
    _require(same_bits(system.run_tasks(settings, seed, tasks), together), "same bits twice", system,
             "the same tasks run twice give other bits")  # fmt: skip
    at[0] = "any share"
    for task in tasks:
        _require(same_bits(system.run_tasks(settings, seed, [task])[0], together[task]), "any share", system,
                 f"task {task} alone gives other bits than with the others")  # fmt: skip
    _require(same_bits(system.run_tasks(settings, seed, tasks[::-1])[::-1], together), "any share", system,
             "the tasks in reverse order give other bits")  # fmt: skip
    at[0] = "local pool"
    record = system.merge(settings, seed, together)
    _require(same_bits(run_system(system, settings, seed, workers=2), record), "local pool", system,
             "two local processes give another record")  # fmt: skip
    if scheduler is not None:
        at[0] = "Dask"
        _require(same_bits(run_system(system, settings, seed, scheduler=scheduler), record), "Dask", system,
                 f"the Dask cluster {scheduler} gives another record")  # fmt: skip
    at[0] = "measures"
    for name, value in system.task_measures(settings, together[0]).items():
        number = isinstance(value, float) and math.isfinite(value)
        _require(isinstance(name, str) and (isinstance(value, str) or number), "measures", system,
                 f"task_measures gave {name!r}: {value!r}")  # fmt: skip
    return together, record


def _legal(explain: Callable | None, system: Any) -> None:
    if explain is None:
        return
    _require(callable(explain), "players", system, "explain gives neither None nor a function")
    found = explain(np.zeros(9, dtype=np.int8), X)
    _require(isinstance(found, Explanation) and 0 <= found.move <= 8, "players", system,
             f"the explanation on the empty board is {found!r:.80}")  # fmt: skip


def _file_checks(system: Any, settings: Any, record: Any, suffix: str, folder: Path, seed: int,
                 at: list[str]) -> list:  # fmt: skip
    at[0] = "record file"
    path = folder / f"record{suffix}"
    system.save_record(record, path)
    written = path.read_bytes()
    _require(same_bits(system.load_record(path), record), "record file", system, "the record loads as other bits")
    system.save_record(system.load_record(path), path)
    _require(path.read_bytes() == written, "record file", system, "a loaded record saves as another file")
    _require(isinstance(system.summary(record), str), "record file", system, "summary gives no text")
    at[0] = "players"
    players = system.record_players(record)
    count = system.task_count(settings)
    _require(len(players) == count, "players", system, f"record_players gave {len(players)} players for {count} tasks")
    for task, player in enumerate(players):
        at[0] = "players"
        tables = system.policy_tables(player)
        for table, mark in zip(tables, (X, O), strict=True):
            try:
                check_policy(table, mark, single=True)
            except ValueError as error:
                raise ConformanceError(f"{system.name!r} fails the conformance check 'players': task {task}'s "
                                       f"player: {error}") from None  # fmt: skip
        _require(isinstance(system_player(system, player, f"task {task}"), ArenaPlayer), "players", system,
                 "system_player gave no ArenaPlayer")  # fmt: skip
        _legal(system.explain(player), system)
        at[0] = "player file"
        file = folder / f"player{task}.json"
        system.save_player(player, file, seed=seed, task=task)
        loaded, provenance = system.load_player(file)
        _require(provenance.get("seed") == seed and provenance.get("task") == task, "player file", system,
                 f"the provenance read back is {provenance!r:.80}")  # fmt: skip
        for before, after in zip(tables, system.policy_tables(loaded), strict=True):
            _require(np.array_equal(before, after), "player file", system, f"task {task}'s player moves otherwise "
                     "once saved and loaded")  # fmt: skip
    return players


def _sweep_checks(system: Any, settings: Any, players: list, folder: Path, seed: int, scheduler: object,
                  at: list[str]) -> None:  # fmt: skip
    at[0] = "sweep"
    grid = {key: [setting_text(setting_value(settings, key))] for key in settings_keys(system.PAPER_SETTINGS)
            if setting_value(settings, key) != setting_value(system.PAPER_SETTINGS, key)}  # fmt: skip
    places = [("local", 1, None)] + ([("Dask", 1, scheduler)] if scheduler is not None else [])
    for label, workers, where in places:
        db = folder / f"sweep-{label}.sqlite"
        table = sweep(system, grid, 1, db, workers, where, progress=False, first_seed=seed)
        _require(len(table) == len(players), "sweep", system, f"a sweep of one cell recorded {len(table)} tasks")
        for task, player in enumerate(players):
            swept = sweep_player(db, 0, seed, task)
            x_policy, o_policy = system.policy_tables(player)
            _require(np.array_equal(swept.x_policy, x_policy) and np.array_equal(swept.o_policy, o_policy), "sweep",
                     system, f"the {label} sweep's player of task {task} moves otherwise")  # fmt: skip


def check_conformance(system: Any, scheduler: object = None, seed: int = 5) -> list[str]:
    """Run ``system`` with its ``SMALL_SETTINGS`` through everything the tools above the systems rely on.

    Parameters
    ----------
    system
        A system (registered or not).
    scheduler
        A Dask scheduler's address, to check the same bits on a cluster too; ``None`` checks the local pool only.
    seed
        The run's seed.

    Returns
    -------
    list of str
        The checks passed, in order.

    Raises
    ------
    ConformanceError
        A ``ValueError`` naming the first check the system fails and what was found.
    """
    at = ["names"]
    try:
        return _checks(system, scheduler, seed, at)
    except ConformanceError:
        raise
    except Exception as error:  # anything else a step raised names that step
        message = " ".join(str(error).split())[:300]
        raise ConformanceError(f"{getattr(system, 'name', system)!r} fails the conformance check {at[0]!r}: "
                               f"{type(error).__name__}: {message}") from error  # fmt: skip


def _checks(system: Any, scheduler: object, seed: int, at: list[str]) -> list[str]:
    check_system(system)
    _require(isinstance(system, System), "names", system, "it is not a System (the runtime Protocol)")
    passed = ["names"]
    settings = _settings_checks(system, at)
    passed += ["settings", "sweep keys"]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        suffix = _command_checks(system, folder, at)
        passed.append("command")
        together, record = _task_checks(system, settings, seed, scheduler, at)
        passed += ["tasks", "same bits twice", "any share", "local pool"] + (["Dask"] if scheduler else [])
        passed.append("measures")
        players = _file_checks(system, settings, record, suffix, folder, seed, at)
        passed += ["record file", "players", "player file"]
        registered = system in registered_systems()
        if not registered:  # a sweep's database names its system, which its readers find in the registry
            register_system(system)
        try:
            _sweep_checks(system, settings, players, folder, seed, scheduler, at)
        finally:
            if not registered:
                unregister_system(system.name)
        passed.append("sweep")
    return passed
