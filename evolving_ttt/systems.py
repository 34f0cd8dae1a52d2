"""One vocabulary for every system of the book, and the registry that lists them (chapters 6 and 25).

The four systems were built from four papers, and each chapter teaches its own readable names (``evolve``,
``run_coevolution``, ``train``, ``evolve_series``). Everything that sits above the systems (the command line, the
arena, the play widget, the page's board, sweeps) speaks to them through the one small interface :class:`System`
instead, and finds them in one registry. A system is any object with these names; each system package has a
module ``system`` that provides them at module level (``evolving_ttt.fogel.system``, ...).

Adding a system is one subpackage and one line in :data:`BUILT_IN` (or, from outside the package, one call of
:func:`register_system`). A reader's own player joins the arena's catalogue and the play widget with
:func:`register_player` (chapter 25).

The vocabulary, one word per idea, as every tool above the systems uses it:

settings
    One system's choices for a run, a frozen dataclass (``Settings``): the paper's (``PAPER_SETTINGS``), or any
    other. The systems' own classes keep their chapters' names (``FogelSettings``, ``AlKhateebSettings``,
    ``LingLamSettings``, ``MohammadiSettings``; the older ``ExperimentConfig``, ``AlKhateebConfig``,
    ``LingLamConfig`` and ``MohammadiConfig`` remain as aliases for one release); the registry calls each the
    system's ``Settings``. A record holds its settings as ``settings``, and a file stores them under that name.
task
    The unit of work a run is split into, with its own generator spawned from the run's seed: a task gives the same
    bits alone or with others, on any executor. Fogel's task is a trial, Al-Khateeb's a run, Ling and Lam's one
    seed of one method, Mohammadi's a whole series.
record
    What a run leaves: the merged results of its tasks, saved by ``save_record`` in the system's format
    (``EvolutionRun``, ``CoevolutionRun``, Ling and Lam's ``TrainingRun`` per method, ``SeriesRecord``).
player
    A task's final player as its system keeps it (a network, an evaluator, a program), saved by ``save_player``;
    as the arena and the play widget know it, an :class:`~evolving_ttt.players.ArenaPlayer` (policy tables).
study
    A sweep (:mod:`evolving_ttt.sweeps`) of settings over seeds, committed as a database in ``book/data/studies``:
    its command comes from :func:`evolving_ttt.tables.study_command`, its claims are judged by the one verdict rule.

The generic operations built on the interface: :func:`run_tasks` (some tasks, on any executor),
:func:`run_system` (the whole experiment, merged into the system's record) and :func:`system_player` (a saved
player as an :class:`~evolving_ttt.players.ArenaPlayer`).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from evolving_ttt.game import check_instance
from evolving_ttt.parallel import run_shared
from evolving_ttt.players import ArenaPlayer, Explanation
from evolving_ttt.seeds import check_seed


@runtime_checkable
class System(Protocol):
    """What every system provides, by these names (chapter 25).

    Attributes
    ----------
    name, command, title, description
        The registry's key (``"fogel"``), the command line's subcommand (``"evolve"``), the paper
        (``"Fogel (1993)"``, also every player's ``system``), and one line for the command line's help.
    Settings, PAPER_SETTINGS, SMALL_SETTINGS
        The settings dataclass (with ``as_dict`` and ``from_dict``), the paper's settings, and settings small enough
        for the conformance check to run in seconds (:func:`evolving_ttt.conformance.check_conformance`).

    A system may also provide the names of :data:`OPTIONAL_NAMES`: ``claims()``, its papers' headline claims for the
    one verdict rule (the findings say which registered systems state none), ``record_curves`` and
    ``command_aliases``. :class:`evolving_ttt.kit.SystemKit` gives every name but a system's own algorithm.
    """

    name: str
    command: str
    title: str
    description: str
    Settings: type
    PAPER_SETTINGS: Any
    SMALL_SETTINGS: Any

    def task_count(self, settings: Any) -> int:
        """How many independent tasks (trials, runs, seeds, series) ``settings`` asks for."""

    def run_tasks(self, settings: Any, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
        """The results of tasks ``tasks`` of ``settings`` and ``seed``, run together in this process.

        Task ``t`` draws only from its own generator: its result is the same bits in any share of tasks.
        """

    def merge(self, settings: Any, seed: int, results: Sequence[Any]) -> Any:
        """The system's record of the task results ``results`` (in task order)."""

    def save_record(self, record: Any, path: str | Path) -> None:
        """Write a record to exactly ``path`` (no suffix added), whole or not at all."""

    def load_record(self, path: str | Path) -> Any:
        """Read a record written by ``save_record``; ``ValueError`` if it is not one."""

    def record_players(self, record: Any) -> list:
        """The final player of every task of ``record``, in task order."""

    def task_measures(self, settings: Any, result: Any) -> dict[str, float | str]:
        """The system's own headline numbers of one task's result (for sweeps: Fogel's last best score, ...)."""

    def save_player(self, player: Any, path: str | Path, **provenance: Any) -> None:
        """Write one player (and where it came from) to a JSON file."""

    def load_player(self, path: str | Path) -> tuple[Any, dict]:
        """Read a player written by ``save_player``: ``(player, provenance)``; ``ValueError`` if it is not one."""

    def policy_tables(self, player: Any) -> tuple[np.ndarray, np.ndarray]:
        """The player's policy tables as X and as O, shape (19683, 9) each (:mod:`evolving_ttt.outcomes`)."""

    def explain(self, player: Any) -> Callable[[np.ndarray, int], Explanation] | None:
        """Why the player moves where it does (for the play widget), or ``None``."""

    def book_players(self) -> tuple[ArenaPlayer, ...]:
        """The system's players saved in ``book/data``, for the arena and the play widget."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The system's own options of its command (``--seed``, ``--out``, ``--workers``, ... are common)."""

    def settings_from_arguments(self, args: argparse.Namespace) -> Any:
        """The settings the parsed options ask for; ``ValueError`` naming a bad option."""

    def extra_outputs(self, args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
        """Every file the command writes, by option, as ``(path, suffix)``; made before the run (chapter 7).

        ``suffix`` is the ending the name must have (``".json"``), or ``None`` for any name. The record (``"--out"``,
        written by ``save_record``) is listed to require its format's suffix; every other entry is a file that
        ``write_outputs`` writes. The command refuses, before the run, a name without its suffix, two options
        naming one file, and an existing file without ``--force``.
        """

    def estimated_memory(self, settings: Any, workers: int) -> int:
        """A generous estimate of the run's peak memory in bytes, on ``workers`` local processes.

        It grows with every size of the settings (population, generations, runs, ...), so that the command refuses
        a run too large for the machine before anything is allocated.
        """

    def describe(self, settings: Any) -> str:
        """The run in a few words (``"20 trials x 800 generations, 50 parents"``)."""

    def summary(self, record: Any) -> str:
        """What the command prints about a finished record."""

    def write_outputs(self, record: Any, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
        """Write every file of ``extra_outputs`` but ``--out`` to ``paths[option]``; return, by option, what it
        holds in a few words.

        ``paths`` are temporary files beside the targets: the command puts them in place once every output is
        written (or removes them on an error or an interruption, leaving the old files as they were), and prints
        ``wrote TARGET: WORDS`` for each. A saver must write exactly the path it is given.
        """


OPTIONAL_NAMES = ("record_curves", "command_aliases", "claims")
"""Names a system may provide: ``record_curves(record)`` -> ``{label: (x, y)}``, the curves of a record (``y`` one
row per task) that ``python -m ttt_helpers plot`` draws (:mod:`evolving_ttt.plots`); ``command_aliases``, other
names of its command (Fogel's ``evolve``); ``claims()`` -> its papers' headline claims as
:class:`evolving_ttt.verdicts.Claim`, which the one verdict rule judges (:func:`evolving_ttt.studies.at_a_glance`)."""


def command_names(system: Any) -> tuple[str, ...]:
    """Every name of ``system``'s command: its ``command`` and its ``command_aliases``, if any."""
    return (system.command, *getattr(system, "command_aliases", ()))

REQUIRED_NAMES = (*System.__annotations__, *(name for name in vars(System) if not name.startswith("_")))
"""Every name a system must provide (the attributes and methods of :class:`System`)."""

BUILT_IN = (
    "evolving_ttt.fogel.system",
    "evolving_ttt.al_khateeb.system",
    "evolving_ttt.ling_lam.system",
    "evolving_ttt.mohammadi.system",
    "evolving_ttt.q_learning.system",
)
"""The book's systems, in the order of the book: one line each."""

_SYSTEMS: dict[str, Any] = {}
_PLAYERS: dict[str, ArenaPlayer] = {}
_VERSION = [0]  # counts changes to the registry, so that the arena's catalogue knows when to rebuild
_LOADED = [False]


def _load_built_in() -> None:
    """Register the book's systems the first time the registry is asked for anything."""
    if not _LOADED[0]:
        _LOADED[0] = True
        for module in BUILT_IN:
            register_system(importlib.import_module(module))


def check_system(system: Any) -> Any:
    """Raise ``ValueError`` unless ``system`` provides every name of :class:`System` (chapter 25)."""
    missing = [name for name in REQUIRED_NAMES if not hasattr(system, name)]
    if missing:
        raise ValueError(f"a system must provide {', '.join(REQUIRED_NAMES)}; {system!r} lacks {', '.join(missing)}")
    for name in ("name", "command", "title", "description"):
        if not isinstance(getattr(system, name), str) or not getattr(system, name):
            raise ValueError(f"a system's {name} must be a non-empty string; got {getattr(system, name)!r}")
    return system


def register_system(system: Any) -> Any:
    """Add ``system`` to the registry: its command, its players in the arena and the play widget (chapter 25).

    Raises
    ------
    ValueError
        If it lacks a name of :class:`System`, or its name or command is taken by another system.
    """
    check_system(system)
    _load_built_in()
    for other in _SYSTEMS.values():
        shared = set(command_names(other)) & set(command_names(system))
        if other is not system and (other.name == system.name or shared):
            raise ValueError(
                f"a system named {system.name!r} or with the command {system.command!r} is already registered"
            )
    _SYSTEMS[system.name] = system
    _VERSION[0] += 1
    return system


def unregister_system(name: str) -> None:
    """Remove the system ``name`` from the registry (``ValueError`` if there is none)."""
    _load_built_in()
    if name not in _SYSTEMS:
        raise ValueError(f"no system named {name!r}; the registry has {list(_SYSTEMS)}")
    del _SYSTEMS[name]
    _VERSION[0] += 1


def registered_systems() -> tuple[Any, ...]:
    """Every registered system: the book's four (:data:`BUILT_IN`), then any registered later."""
    _load_built_in()
    return tuple(_SYSTEMS.values())


def get_system(name: str) -> Any:
    """The registered system called ``name`` (or whose command is ``name``).

    Raises
    ------
    ValueError
        Naming the systems there are.
    """
    for system in registered_systems():
        if name == system.name or name in command_names(system):
            return system
    raise ValueError(f"no system named {name!r}; the systems are {', '.join(s.name for s in registered_systems())}")


def system_reference(system: Any) -> Any:
    """What a worker process needs to find ``system`` (:func:`resolve_system`), local or on a Dask cluster.

    A system that is a module is named by its module's name and file (``"module:NAME@PATH"``): a worker imports
    it by name, or from the file where the name is not importable (a module beside a notebook, on a cluster
    that shares the file system). Any other system is the object itself, pickled to the worker with its class:
    by reference for the package's classes, by value for a class from outside it (cloudpickle's
    ``register_pickle_by_value``), so that workers need not import its module.
    """
    check_system(system)
    if isinstance(system, ModuleType):
        return f"module:{system.__name__}@{getattr(system, '__file__', '') or ''}"
    module = sys.modules.get(type(system).__module__)
    if module is None or module.__name__.startswith("evolving_ttt."):
        return system
    try:
        import cloudpickle
    except ImportError:  # no Dask: local workers are forked, and have the module already
        return system
    if module.__name__ != "__main__":  # cloudpickle sends a notebook's classes by value already
        cloudpickle.register_pickle_by_value(module)
    try:
        return _SentByValue(cloudpickle.dumps(system))
    finally:
        if module.__name__ != "__main__":
            cloudpickle.unregister_pickle_by_value(module)


class _SentByValue:
    """A system pickled by cloudpickle with its class, kept as bytes wherever it travels (a Dask scheduler unpickles
    and pickles a task again on its way to a worker); :func:`resolve_system` unpickles it where it runs."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def __reduce__(self) -> tuple:
        return _SentByValue, (self.payload,)

    def system(self) -> Any:
        import cloudpickle

        return cloudpickle.loads(self.payload)


def resolve_system(reference: Any) -> Any:
    """The system a :func:`system_reference` (or a registered system's name) names, in this process: a Dask worker
    starts with the book's four systems only, so a module is imported and an object is used as it was sent,
    without registering either."""
    if isinstance(reference, str) and reference.startswith("module:"):
        name, _, path = reference.removeprefix("module:").partition("@")
        try:
            return check_system(importlib.import_module(name))
        except ImportError:
            if not path:
                raise
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        return check_system(sys.modules[name])
    if isinstance(reference, _SentByValue):
        return check_system(reference.system())
    return get_system(reference) if isinstance(reference, str) else check_system(reference)


def register_player(player: ArenaPlayer) -> ArenaPlayer:
    """Add a reader's own player to the arena's catalogue and the play widget's opponents (chapter 25).

    A player registered again under the same name replaces the first.
    """
    check_instance(player, ArenaPlayer, "player", "an ArenaPlayer (see table_player)")
    _load_built_in()
    _PLAYERS[player.name] = player
    _VERSION[0] += 1
    return player


def unregister_player(name: str) -> None:
    """Remove the registered player ``name`` (``ValueError`` if there is none)."""
    if name not in _PLAYERS:
        raise ValueError(f"no registered player named {name!r}; there are {list(_PLAYERS)}")
    del _PLAYERS[name]
    _VERSION[0] += 1


def registered_players() -> tuple[ArenaPlayer, ...]:
    """The players registered with :func:`register_player`, in order."""
    return tuple(_PLAYERS.values())


def registry_version() -> int:
    """A number that changes whenever a system or player is registered or removed."""
    _load_built_in()
    return _VERSION[0]


# --- The generic operations ----------------------------------------------------------------------------


def check_settings(system: Any, settings: Any) -> Any:
    """The one check of a system's settings before any work starts (issue 37): ``settings`` must be the system's
    ``Settings``, and are built again so that the system's own checks run on the values they hold now.

    The command line, every cell of a sweep and :func:`run_tasks` go through the system's ``Settings``, so a value
    is refused the same way wherever it comes from.

    Raises
    ------
    ValueError
        Naming the system and what was given, or the setting the system's checks refuse.
    """
    if not isinstance(settings, system.Settings) or not dataclasses.is_dataclass(settings):
        raise ValueError(f"settings must be a {system.Settings.__name__} for {system.name} (the paper's are its "
                         f"PAPER_SETTINGS); got {type(settings).__name__} {settings!r:.60}")  # fmt: skip
    try:
        return dataclasses.replace(settings)
    except (TypeError, OverflowError) as error:
        raise ValueError(f"{system.name} settings refused: {error}") from None


def _run_share(run: Callable, settings: Any, seed: int, tasks: list[int], progress: bool | str) -> list:
    return list(run(settings, seed, tasks, progress))


def run_tasks(
    system: Any,
    settings: Any,
    seed: int,
    tasks: Sequence[int] | None = None,
    workers: int | None = 1,
    scheduler: object = None,
    progress: bool | str = False,
) -> list:
    """The results of ``tasks`` (default: all) of ``system`` with ``settings`` and ``seed``, in task order.

    The tasks are shared out by :func:`evolving_ttt.parallel.run_shared`: on ``workers`` local processes, or on a
    Dask cluster (``scheduler="local"`` or a scheduler's address). Every task's result is the same bits on any
    executor.
    """
    check_system(system)
    settings = check_settings(system, settings)
    seed = check_seed(seed)
    count = system.task_count(settings)
    chosen = list(range(count)) if tasks is None else [int(t) for t in tasks]
    if not chosen or any(not 0 <= t < count for t in chosen) or len(set(chosen)) != len(chosen):
        raise ValueError(f"tasks must be distinct task numbers from 0 to {count - 1}; got {tasks!r}")
    label = f"{system.name}: {len(chosen)} tasks"
    work = partial(_run_share, system.run_tasks, settings, seed)
    parts = run_shared(work, chosen, workers, scheduler, progress, label)
    return [result for part in parts for result in part]


def run_system(
    system: Any,
    settings: Any,
    seed: int = 1,
    workers: int | None = 1,
    scheduler: object = None,
    progress: bool | str = False,
) -> Any:
    """Every task of ``system`` with ``settings`` (``system.PAPER_SETTINGS`` for the paper's full experiment, which
    may take hours: it is never a default), merged into the system's record (chapter 25)."""
    system = get_system(system) if isinstance(system, str) else check_system(system)
    results = run_tasks(system, settings, seed, None, workers, scheduler, progress)
    return system.merge(settings, check_seed(seed), results)


def player_from_file(path: str | Path, name: str | None = None) -> ArenaPlayer:
    """The player saved in ``path`` by any registered system's ``save_player``, as an
    :class:`~evolving_ttt.players.ArenaPlayer` named ``name`` (default: the file's name without its suffix).

    Every system's ``load_player`` is tried in the registry's order; the first that reads the file wins.

    Raises
    ------
    ValueError
        If no system reads it, with what each said (the file's own format field first).
    """
    path = Path(path)
    system, (player, provenance) = read_by_any_system(path, "load_player", "a player")
    training = provenance.get("training", "") if isinstance(provenance, dict) else ""
    return system_player(system, player, name or path.stem, f"loaded from {path}",
                         training if isinstance(training, str) else "")  # fmt: skip


def read_by_any_system(path: str | Path, loader: str, what: str) -> tuple[Any, Any]:
    """``(system, what it read)``: the first registered system whose ``loader`` (``"load_player"``,
    ``"load_record"``) reads ``path``, in the registry's order.

    Raises
    ------
    ValueError
        If none reads it, saying what each said (once, when all said the same: the file is no such file at all).
    """
    reasons = []
    for system in registered_systems():
        try:
            return system, getattr(system, loader)(path)
        except ValueError as error:
            reasons.append((system.name, " ".join(str(error).split())[:160]))
    if len({reason for _, reason in reasons}) == 1:
        raise ValueError(f"{path} is not {what} saved by any system of the book: {reasons[0][1]}")
    raise ValueError(f"{path} is not {what} saved by any system of the book; "
                     + "; ".join(f"{name}: {reason}" for name, reason in reasons))  # fmt: skip


def system_player(
    system: Any, player: Any, name: str, description: str = "", training: str = ""
) -> ArenaPlayer:
    """One of ``system``'s players as an :class:`~evolving_ttt.players.ArenaPlayer` (chapter 25)."""
    x_policy, o_policy = system.policy_tables(player)
    return ArenaPlayer(name, system.title, description, x_policy, o_policy, training, system.explain(player))
