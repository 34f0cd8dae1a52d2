"""The system kit: everything a new system gets for free, so that its own code is its algorithm (chapter 25).

A system of the book speaks the small vocabulary of :class:`evolving_ttt.systems.System`. The four systems of the
papers write every name themselves (their records and commands are rich); a new system subclasses
:class:`SystemKit` and writes only what is its own:

- ``name``, ``title``, ``Settings`` (a frozen dataclass with the :class:`KitSettings` mix-in) and
  ``PAPER_SETTINGS``;
- ``run_task(settings, seed, task)``: one task, drawing only from :func:`task_generator` ``(seed, task)``, returning
  the task's player;
- where its player moves: ``square_scores(player, boards)`` (how much it wants each square of many boards at once),
  or ``move(player, board, mark)`` (one board), or ``policy_tables(player)`` (every board, as
  :mod:`evolving_ttt.outcomes` tabulates a player).

The kit gives the rest: the number of tasks (the setting ``tasks``, or the one ``tasks_setting`` names), running
tasks, a record of the players (:class:`KitRecord`) and one JSON format for records and players
(:data:`KIT_RECORD_FORMAT`, :data:`KIT_PLAYER_FORMAT`, both read back by loaders that check every field), a
command whose options are generated from the settings dataclass (the same typed keys a sweep sets,
:func:`settings_keys`), and plain defaults for the summary, the memory estimate and the play widget.

This module also holds the settings' keys and their parsing from text, which the command line and sweeps share
(:func:`settings_keys`, :func:`parse_setting`, :func:`with_settings`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from evolving_ttt.arguments import counted
from evolving_ttt.game import EMPTY, O, X, board_tables, check_count
from evolving_ttt.outcomes import POLICY_SHAPE, boards_to_move, check_policy, policy_table
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.reading import read_record
from evolving_ttt.records import check_provenance, json_text, write_checked

# --- Settings: keys, text, changes ---------------------------------------------------------------------------------


def settings_keys(settings: Any) -> dict[str, type]:
    """Every setting of a settings dataclass by its dotted path, with its type (chapter 20).

    Nested settings (``mutation``, ``player``, ...) are opened: their fields are ``mutation.weight_spread``, ...
    """
    keys = {}
    hints = typing.get_type_hints(type(settings))
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if dataclasses.is_dataclass(value):
            keys |= {f"{field.name}.{key}": kind for key, kind in settings_keys(value).items()}
        else:
            keys[field.name] = hints[field.name]
    return keys


def parse_setting(text: str, kind: Any) -> Any:
    """The value of a setting of type ``kind`` written as ``text`` (tuples as values separated by ``/``).

    Raises
    ------
    ValueError
        Saying what the text should be (``expected a whole number``).
    """
    origin = typing.get_origin(kind)
    if origin is tuple:
        parts = [part.strip() for part in text.split("/")]
        items = typing.get_args(kind)
        if len(items) == 2 and items[1] is Ellipsis:
            return tuple(parse_setting(part, items[0]) for part in parts)
        if len(parts) != len(items):
            raise ValueError(f"expected {len(items)} values separated by '/'")
        return tuple(parse_setting(part, item) for part, item in zip(parts, items, strict=True))
    if kind is bool:
        lowered = text.strip().lower()
        if lowered not in ("true", "false", "yes", "no", "1", "0"):
            raise ValueError("expected true or false")
        return lowered in ("true", "yes", "1")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected a whole number") from None
    if kind is float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError("expected a number") from None
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
        return value
    if kind is str:
        return text.strip()
    raise ValueError(f"settings of type {kind} cannot be set from the command line")


def setting_text(value: Any) -> str:
    """A setting's value as :func:`parse_setting` reads it (tuples joined by ``/``)."""
    if isinstance(value, tuple):
        return "/".join(setting_text(item) for item in value)
    return str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, float) else str(value)


def kind_name(kind: Any) -> str:
    """A setting's type in words (``a whole number``)."""
    if typing.get_origin(kind) is tuple:
        return "values separated by '/'"
    return {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}.get(kind, str(kind))


def setting_value(settings: Any, key: str) -> Any:
    """The value of the setting at dotted path ``key`` (``mutation.weight_spread``) of a settings dataclass."""
    for part in key.split("."):
        settings = getattr(settings, part)
    return settings


def with_setting(settings: Any, key: str, value: Any) -> Any:
    """``settings`` with the setting at dotted path ``key`` replaced by ``value``; the settings check it."""
    return with_settings(settings, {key: value})


def with_settings(settings: Any, changes: dict[str, Any]) -> Any:
    """``settings`` with every setting of ``changes`` (``{dotted path: value}``) replaced at once, so that the
    settings check the whole result (population 50 with 25 parents), never a mixture of old and new values."""
    nested: dict[str, dict[str, Any]] = {}
    direct: dict[str, Any] = {}
    for key, value in changes.items():
        head, _, rest = key.partition(".")
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    for head, inner in nested.items():
        direct[head] = with_settings(getattr(settings, head), inner)
    return dataclasses.replace(settings, **direct)


def settings_from_dict(kind: type, data: object, where: str = "settings") -> Any:
    """The settings dataclass ``kind`` from the plain dictionary ``as_dict`` made (nested settings and tuples
    included).

    Raises
    ------
    ValueError
        Naming the key that is missing, unknown or refused by the settings' own checks.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be an object of {kind.__name__}'s fields; got {type(data).__name__}")
    fields = {field.name: field for field in dataclasses.fields(kind)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(f"{where}: {kind.__name__} has no setting {unknown[0]!r}; its settings are "
                         f"{', '.join(fields)}")  # fmt: skip
    hints = typing.get_type_hints(kind)
    values = {}
    for name, value in data.items():
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            value = settings_from_dict(hint, value, f"{where}.{name}")
        elif typing.get_origin(hint) is tuple and isinstance(value, list):
            value = tuple(value)
        values[name] = value
    try:
        return kind(**values)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{where} refused: {error}") from None


class KitSettings:
    """A mix-in for a system's settings dataclass: ``as_dict`` and ``from_dict`` (the names sweeps and records use),
    and a check of every field of type ``int``, ``float``, ``bool`` or ``str`` against its type when the settings are
    made (a whole number for ``int``, a finite number for ``float``, kept as a ``float``)."""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for field in dataclasses.fields(self):
            value, kind = getattr(self, field.name), hints.get(field.name)
            whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
            if kind is int and not whole:
                raise ValueError(f"{field.name} must be a whole number; got {value!r:.40}")
            if kind is float:
                if not (whole or isinstance(value, (float, np.floating))) or not math.isfinite(value):
                    raise ValueError(f"{field.name} must be a number; got {value!r:.40}")
                object.__setattr__(self, field.name, float(value))
            if kind is bool and not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{field.name} must be true or false; got {value!r:.40}")
            if kind is str and not isinstance(value, str):
                raise ValueError(f"{field.name} must be a text; got {value!r:.40}")

    def as_dict(self) -> dict:
        """The settings as a plain dictionary (nested settings as dictionaries)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Any:
        """The settings ``as_dict`` gave; ``ValueError`` naming a missing, unknown or refused key."""
        return settings_from_dict(cls, data)


def task_generator(seed: int, task: int) -> np.random.Generator:
    """Task ``task``'s own generator of a run with ``seed``: child ``task`` of ``SeedSequence(seed)``, as
    ``SeedSequence(seed).spawn(task + 1)[task]`` gives it, so that a task draws the same numbers in any share."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(int(task),)))


# --- The kit ---------------------------------------------------------------------------------------------------------


KIT_RECORD_FORMAT = "ttt-kit-record"
"""The ``format`` of a kit system's record: ``{"format", "version": 1, "system", "settings", "seed", "players"}``,
``players`` the final player of every task, in task order, as the system's ``player_to_json`` writes it."""

KIT_PLAYER_FORMAT = "ttt-kit-player"
"""The ``format`` of a kit system's player file: ``{"format", "version": 1, "system", "player", ...provenance}``."""


COMMAND_OPTIONS = ("seed", "out", "workers", "scheduler", "quiet", "force", "command", "system")
"""The names every system's parsed command holds (:mod:`evolving_ttt.cli`: its options ``--seed`` to ``--force``, and
the command and system chosen): no setting of a kit system may take one."""


@dataclasses.dataclass(frozen=True)
class KitRecord:
    """A kit system's record: its settings, the run's seed and the final player of every task, in task order."""

    settings: Any
    seed: int
    players: tuple


class SystemKit:
    """The base of a new system: subclass it, name it, give its settings, ``run_task`` and ``move`` (chapter 25).

    Every other name of :class:`evolving_ttt.systems.System` has a default here, which a subclass may replace.
    An instance is the system: ``th.register_system(MySystem())``.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    Settings: ClassVar[type]
    PAPER_SETTINGS: ClassVar[Any]
    tasks_setting: ClassVar[str] = "tasks"
    """The setting that counts the tasks (:meth:`task_count`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [n for n in ("name", "title", "Settings", "PAPER_SETTINGS") if not hasattr(cls, n)]
        if cls.run_task is SystemKit.run_task:
            missing.append("run_task")
        if (cls.square_scores, cls.move, cls.policy_tables) == (SystemKit.square_scores, SystemKit.move,
                                                                 SystemKit.policy_tables):
            missing.append("square_scores, move or policy_tables")
        if missing:
            raise ValueError(f"a SystemKit system must define {', '.join(missing)}; {cls.__name__} does not")
        if not dataclasses.is_dataclass(cls.Settings) or not isinstance(cls.PAPER_SETTINGS, cls.Settings):
            raise ValueError(f"{cls.__name__}: Settings must be a dataclass and PAPER_SETTINGS one of its values")
        taken = sorted(set(settings_keys(cls.PAPER_SETTINGS)) & set(COMMAND_OPTIONS))
        if taken:
            raise ValueError(f"{cls.__name__}: a setting may not be called {taken[0]!r}: every command holds "
                             f"{taken[0]} already; the names taken are {', '.join(COMMAND_OPTIONS)}")  # fmt: skip

    # The names and the settings ----------------------------------------------------------------------------

    @property
    def command(self) -> str:
        """The command line's subcommand: the system's name."""
        return self.name

    @property
    def description(self) -> str:
        """One line for the command line's help: the title."""
        return self.title

    @property
    def SMALL_SETTINGS(self) -> Any:  # noqa: N802 (the name every system gives its small settings)
        """Settings small enough for the conformance check (:func:`evolving_ttt.conformance.check_conformance`):
        the paper's, unless the system says otherwise."""
        return self.PAPER_SETTINGS

    def task_count(self, settings: Any) -> int:
        """The setting named by ``tasks_setting``: a whole number >= 1."""
        return check_count(getattr(settings, self.tasks_setting), self.tasks_setting)

    # The work -----------------------------------------------------------------------------------------------

    def run_task(self, settings: Any, seed: int, task: int) -> Any:
        """Task ``task`` of a run with ``seed``: its final player. Draw only from ``task_generator(seed, task)``."""
        raise NotImplementedError

    def run_tasks(self, settings: Any, seed: int, tasks: Sequence[int], progress: bool | str = False) -> list:
        """``run_task`` of every task of ``tasks``, in order."""
        return [self.run_task(settings, seed, int(task)) for task in tasks]

    def merge(self, settings: Any, seed: int, results: Sequence[Any]) -> KitRecord:
        """The settings, the seed and the tasks' players (:class:`KitRecord`)."""
        return KitRecord(settings, int(seed), tuple(results))

    def record_players(self, record: KitRecord) -> list:
        """Every task's player, in task order."""
        return list(record.players)

    def task_measures(self, settings: Any, result: Any) -> dict[str, float | str]:
        """No headline numbers of the system's own: sweeps record the arena's yardsticks."""
        return {}

    # The player ---------------------------------------------------------------------------------------------

    def square_scores(self, player: Any, boards: np.ndarray) -> np.ndarray:
        """How much ``player`` wants each square of each board of ``boards`` (shape (n, 9), the mover's marks +1 and
        the opponent's -1), shape (n, 9): it plays the empty square it scores highest (the lowest of ties)."""
        raise NotImplementedError

    def move(self, player: Any, board: np.ndarray, mark: int) -> int:
        """The square ``player`` plays on ``board`` as ``mark`` (by default from ``square_scores``)."""
        scores = np.asarray(self.square_scores(player, (mark * np.asarray(board))[None]), dtype=float)[0]
        return int(np.argmax(np.where(np.asarray(board) == EMPTY, scores, -np.inf)))

    def policy_tables(self, player: Any) -> tuple[np.ndarray, np.ndarray]:
        """The player's move on every board as X and as O: from ``square_scores`` on all boards at once, or from
        ``move`` board by board."""
        if type(self).square_scores is SystemKit.square_scores:
            return tuple(policy_table(lambda board, mark=mark: self.move(player, board, mark), mark) for mark in (X, O))
        boards, tables = board_tables().boards, []
        for mark in (X, O):
            rows = boards_to_move(mark)
            scores = np.asarray(self.square_scores(player, mark * boards[rows]), dtype=float)
            if scores.shape != (len(rows), 9):
                raise ValueError(f"square_scores must give shape ({len(rows)}, 9) for {len(rows)} boards; got "
                                 f"{scores.shape}")  # fmt: skip
            table = np.zeros(POLICY_SHAPE)
            table[rows, np.argmax(np.where(boards[rows] == EMPTY, scores, -np.inf), axis=1)] = 1.0
            tables.append(table)
        return tables[0], tables[1]

    def explain(self, player: Any) -> Callable | None:
        """No explanation for the play widget."""
        return None

    def book_players(self) -> tuple[ArenaPlayer, ...]:
        """No saved players in the arena."""
        return ()

    def player_to_json(self, player: Any) -> Any:
        """The player as plain JSON: an array as nested lists of numbers (the default), else the player as it is."""
        return np.asarray(player).tolist() if isinstance(player, np.ndarray) else player

    def player_from_json(self, data: Any) -> Any:
        """The player ``player_to_json`` wrote: a finite float array (the default); ``ValueError`` if it is not."""
        try:
            array = np.array(data, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("the player must be an array of numbers") from None
        if array.ndim == 0 or not np.all(np.isfinite(array)):
            raise ValueError(f"the player must be an array of finite numbers; got shape {array.shape}")
        return array

    def _player_from_json(self, data: Any, path: Path) -> Any:
        try:
            player = self.player_from_json(data)
            for policy, mark in zip(self.policy_tables(player), (X, O), strict=True):
                check_policy(policy, mark, single=True)
        except (ValueError, TypeError, IndexError) as error:
            raise ValueError(f"{path} ({self.name} player): {error}") from None
        return player

    def save_player(self, player: Any, path: str | Path, **provenance: Any) -> None:
        """One player and its provenance in :data:`KIT_PLAYER_FORMAT`, read back before it is put in place."""
        own = ("format", "version", "system", "player")
        check_provenance(provenance, own, f"a {self.name} player")
        data = {"format": KIT_PLAYER_FORMAT, "version": 1, "system": self.name,
                "player": self.player_to_json(player), **provenance}  # fmt: skip
        write_checked(path, json_text(data, path), self.load_player, f"{self.name} player")

    def load_player(self, path: str | Path) -> tuple[Any, dict]:
        """``(player, provenance)`` from a file of :meth:`save_player`; ``ValueError`` naming what is wrong."""
        data = read_record(path, KIT_PLAYER_FORMAT, f"a player of a kit system ({self.name})")
        if data.get("system") != self.name:
            raise ValueError(f"{path} is a player of {data.get('system')!r:.40}, not of {self.name}")
        if "player" not in data:
            raise ValueError(f"{path} ({self.name} player): field 'player' is missing")
        provenance = {k: v for k, v in data.items() if k not in ("format", "version", "system", "player")}
        return self._player_from_json(data["player"], Path(path)), provenance

    # The record ---------------------------------------------------------------------------------------------

    def save_record(self, record: KitRecord, path: str | Path) -> None:
        """The record in :data:`KIT_RECORD_FORMAT` at exactly ``path``, read back before it is put in place."""
        data = {"format": KIT_RECORD_FORMAT, "version": 1, "system": self.name, "settings": record.settings.as_dict(),
                "seed": record.seed, "players": [self.player_to_json(p) for p in record.players]}  # fmt: skip
        write_checked(path, json_text(data, path), self.load_record, f"{self.name} record")

    def load_record(self, path: str | Path) -> KitRecord:
        """A record of :meth:`save_record`; ``ValueError`` naming the field that is wrong."""
        data = read_record(path, KIT_RECORD_FORMAT, f"a record of a kit system ({self.name})")
        if data.get("system") != self.name:
            raise ValueError(f"{path} is a record of {data.get('system')!r:.40}, not of {self.name}")
        for field in ("settings", "seed", "players"):
            if field not in data:
                raise ValueError(f"{path} ({self.name} record): field {field!r} is missing")
        settings = settings_from_dict(self.Settings, data["settings"], f"{path}: settings")
        try:
            count = self.task_count(settings)
        except ValueError as error:
            raise ValueError(f"{path}: settings refused: {error}") from None
        seed, players = data["seed"], data["players"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"{path} ({self.name} record): field 'seed' must be a whole number >= 0; got {seed!r:.40}")
        if not isinstance(players, list) or len(players) != count:
            raise ValueError(f"{path} ({self.name} record): field 'players' must list {count} players, one per task")
        return KitRecord(settings, seed, tuple(self._player_from_json(p, Path(path)) for p in players))

    # The command --------------------------------------------------------------------------------------------

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One option per setting, by its dotted path (``--tasks``, ``--mutation.spread``), typed as sweeps type
        them (:func:`settings_keys`); the default is the paper's value."""
        for key, kind in settings_keys(self.PAPER_SETTINGS).items():
            default = setting_value(self.PAPER_SETTINGS, key)
            parser.add_argument(f"--{key.replace('_', '-')}", dest=key, default=default,
                                type=_setting_type(key, kind), metavar=key.rpartition(".")[2].upper(),
                                help=f"the setting {key}: {kind_name(kind)}")  # fmt: skip

    def settings_from_arguments(self, args: argparse.Namespace) -> Any:
        """The paper's settings with every option's value (the settings check them together)."""
        changes = {key: getattr(args, key) for key in settings_keys(self.PAPER_SETTINGS)}
        try:
            return with_settings(self.PAPER_SETTINGS, changes)
        except (TypeError, ValueError, OverflowError) as error:
            raise ValueError(f"{self.name} settings refused: {error}") from None

    def extra_outputs(self, args: argparse.Namespace) -> dict[str, tuple[Path, str | None]]:
        """The record (``--out``, ``.json``)."""
        return {"--out": (Path(args.out), ".json")}

    def write_outputs(self, record: KitRecord, args: argparse.Namespace, paths: dict[str, Path]) -> dict[str, str]:
        """No files but the record."""
        return {}

    def estimated_memory(self, settings: Any, workers: int) -> int:
        """200 MB per local process: the board tables and a few policy tables."""
        return 200_000_000 * max(int(workers), 1)

    def describe(self, settings: Any) -> str:
        """The number of tasks."""
        return counted(self.task_count(settings), "task")

    def summary(self, record: KitRecord) -> str:
        """How many players the record holds."""
        return f"{counted(len(record.players), 'player')}, one per task"


def _setting_type(key: str, kind: Any) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return parse_setting(text, kind)
        except ValueError as error:
            raise argparse.ArgumentTypeError(f"{error} for {key}; got {text[:60]!r}") from None

    parse.__name__ = kind_name(kind)
    return parse
