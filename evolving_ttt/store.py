"""The sweep database: a sweep's definition and one row per finished task, in SQLite (chapter 20).

:class:`SweepStore` keeps a sweep safe against interruption. The file is an SQLite database in WAL mode with two
tables: ``sweep`` holds the sweep's definition (JSON) and ``tasks`` one row per finished task, keyed by
``(cell, seed, task)``: the cell's settings, the task's measures (JSON), its saved player (the system's player file,
as text), its wall time, the worker that ran it and when it finished. Each row is written in its own transaction as
soon as its task finishes, and a key is recorded once only (``INSERT OR IGNORE``), so a sweep killed at any point
loses at most the tasks that were running, and two processes running the same sweep never record a task twice.

Rows are checked as they are read, as every file of the project is (issue 37): :meth:`SweepStore.rows` and
:meth:`SweepStore.done` (so every table, export and status) refuse a database with a damaged row with one
``ValueError`` naming the file, the row (cell, seed, task) and the field, by the rules of :func:`check_row`.
"""

from __future__ import annotations

import json
import math
import shlex
import sqlite3
import stat
import time
from pathlib import Path

from evolving_ttt.reading import parse_json
from evolving_ttt.records import check_path

SCHEMA = """
CREATE TABLE IF NOT EXISTS sweep (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    definition TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    cell INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    task INTEGER NOT NULL,
    settings TEXT NOT NULL,
    measures TEXT NOT NULL,
    player TEXT NOT NULL,
    wall_time REAL NOT NULL,
    worker TEXT NOT NULL,
    finished TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (cell, seed, task)
);
"""
"""The two tables of a sweep database (chapter 20)."""

OPEN_TIMEOUT = 60.0
"""Seconds a sweep database is tried again while another process holds it locked."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

TASK_COLUMNS = ("cell", "seed", "task", "settings", "measures", "player", "wall_time", "worker", "finished")
"""The columns of the ``tasks`` table, in order."""

YARDSTICKS = (
    "points_perfect_x", "points_perfect_o", "points_random_x", "points_random_o", "fogel_score", "can_lose",
)  # fmt: skip
"""The arena's measures of every task's final player: expected points per game (1 a win, 1/2 a draw) against the
perfect and the random player as X and as O, Fogel's expected protocol score as X (at most 32), and whether it can
lose from either side (1 or 0). Every row of a sweep records them."""


class SweepStore:
    """One sweep's database file (chapter 20).

    Parameters
    ----------
    path
        The SQLite file; created (with its folder checked) if it does not exist. An empty file is an empty database
        (as SQLite has it, and as a second process sees a database the first is making); any other file that is not
        an SQLite database, or is one of another program, is refused and left as it was.
    definition
        The sweep's definition. A new database stores it; an existing one must hold the same definition, or
        ``ValueError`` says that the file holds another sweep. ``None`` opens an existing sweep to read it.

    Raises
    ------
    ValueError
        If the file cannot be created or opened as a sweep database, or holds another sweep.
    """

    def __init__(self, path: str | Path, definition: dict | None = None) -> None:
        self.path = check_path(path, "--db")
        try:
            kind = self.path.stat().st_mode if self.path.exists() else None
        except OSError as error:
            raise ValueError(f"--db {self.path}: {error.strerror or error}") from None
        if kind is not None and stat.S_ISDIR(kind):
            raise ValueError(f"--db {self.path}: is a directory; give a file name")
        if kind is not None and not stat.S_ISREG(kind):
            raise ValueError(f"--db {self.path}: is not a regular file (a device, FIFO or socket)")
        if definition is None and kind is None:
            raise ValueError(f"--db {self.path}: no such sweep database")
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise ValueError(f"--db {self.path}: the folder {folder} does not exist")
        if kind is not None:
            _check_sqlite_header(self.path)
        deadline = time.monotonic() + OPEN_TIMEOUT
        while True:
            try:
                stored = self._open(definition)
                break
            except sqlite3.OperationalError as error:  # another process is creating the same database
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise ValueError(f"--db {self.path}: cannot be opened ({error})") from None
                time.sleep(0.05)
        if stored is None:
            self.close()
            raise ValueError(f"--db {self.path}: holds no sweep")
        try:
            self.definition = _checked_definition(json.loads(stored[0]) if isinstance(stored[0], str) else None)
        except (ValueError, RecursionError):
            self.close()
            raise ValueError(f"--db {self.path}: not a sweep database (its definition is damaged)") from None
        if definition is not None and self.definition != json.loads(json.dumps(definition, sort_keys=True)):
            self.close()
            made, wanted = self.definition.get("numerics", OLD_NUMERICS), definition.get("numerics", OLD_NUMERICS)
            if made != wanted and {**self.definition, "numerics": wanted} == json.loads(json.dumps(definition)):
                raise ValueError(
                    f"--db {self.path} holds this sweep made with other numerics ({made}); this code computes with "
                    f"{wanted}, and the two do not mix. Give another --db file to run the sweep again."
                )
            raise ValueError(
                f"--db {self.path} holds another sweep ({describe_definition(self.definition)}); this one is "
                f"{describe_definition(definition)}. Give another --db file, or delete this one to start again."
            )

    def _open(self, definition: dict | None) -> tuple | None:
        """Connect, check the tables, create them for a new sweep; the stored definition's row. An
        ``sqlite3.OperationalError`` saying the database is locked is left to the caller, which tries again: SQLite
        does not wait for every lock (two processes making the same new database in WAL mode meet one)."""
        try:
            self.connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        except sqlite3.Error as error:
            raise ValueError(f"--db {self.path}: cannot be created or opened ({error})") from None
        try:
            tables = {row[0] for row in self.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "sweep" not in tables and (definition is None or tables):
                raise ValueError(f"--db {self.path}: holds no sweep" + ("; give a new file" if tables else ""))
            if definition is not None:
                self.connection.execute("PRAGMA journal_mode=WAL")
                self.connection.execute("PRAGMA synchronous=NORMAL")
                self.connection.executescript(SCHEMA)
            stored = self.connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()
            if stored is None and definition is not None:
                text = json.dumps(definition, sort_keys=True)
                self.connection.execute("INSERT OR IGNORE INTO sweep (id, definition) VALUES (1, ?)", (text,))
                stored = self.connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()
            return stored
        except sqlite3.OperationalError as error:
            self.connection.close()
            if "locked" in str(error):
                raise
            reason = "cannot be created or written" if "unable to open" in str(error) else "not a sweep database"
            raise ValueError(f"--db {self.path}: {reason} ({error})") from None
        except sqlite3.DatabaseError as error:
            self.connection.close()
            raise ValueError(f"--db {self.path}: not a sweep database ({error})") from None
        except ValueError:
            self.connection.close()
            raise

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def done(self) -> set[tuple[int, int, int]]:
        """The keys ``(cell, seed, task)`` of every recorded task, every row checked (:func:`check_row`; the
        players' texts are checked to be texts, not read)."""
        return {(row["cell"], row["seed"], row["task"]) for row in self._checked_rows(with_players=False)}

    def record(
        self, key: tuple[int, int, int], settings: dict, measures: dict, player: str, wall_time: float, worker: str
    ) -> bool:
        """Record one finished task in its own transaction; ``False`` if the key was already recorded."""
        cursor = self.connection.execute(
            "INSERT OR IGNORE INTO tasks (cell, seed, task, settings, measures, player, wall_time, worker) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*map(int, key), json.dumps(settings, sort_keys=True), json.dumps(measures), player, wall_time, worker),
        )
        return cursor.rowcount == 1

    def rows(self) -> list[dict]:
        """Every recorded task as a dict of :data:`TASK_COLUMNS`, settings and measures decoded, in key order.

        Raises
        ------
        ValueError
            Naming the file, the row (cell, seed, task) and the field, if a row breaks a rule of :func:`check_row`.
        """
        return self._checked_rows(with_players=True)

    def _checked_rows(self, with_players: bool) -> list[dict]:
        """The rows, each checked; without the players' texts, ``player`` is whether the row holds one."""
        has_player = "typeof(player) = 'text' AND length(player) > 0"
        columns = ", ".join(has_player if column == "player" and not with_players else column
                            for column in TASK_COLUMNS)  # fmt: skip
        try:
            found = self.connection.execute(f"SELECT {columns} FROM tasks ORDER BY cell, seed, task").fetchall()
        except sqlite3.DatabaseError as error:
            raise ValueError(f"--db {self.path}: its tasks cannot be read ({error})") from None
        rows = [check_row(self.path, self.definition, dict(zip(TASK_COLUMNS, values, strict=True)), with_players)
                for values in found]  # fmt: skip
        check_measure_names(self.path, rows)
        return rows


def _row_name(row: dict) -> str:
    return f"the row (cell {row['cell']!r:.20}, seed {row['seed']!r:.20}, task {row['task']!r:.20})"


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _same_value(found: object, text: str) -> bool:
    """Whether a stored setting is the grid's value ``text`` as the sweep's parser reads it (a number, a text,
    true/false as true, yes, 1..., a tuple as values separated by '/')."""
    text = text.strip()
    if isinstance(found, bool):
        return text.lower() in (("true", "yes", "1") if found else ("false", "no", "0"))
    if isinstance(found, (int, float)):
        try:
            return float(text) == found
        except ValueError:
            return False
    if isinstance(found, list):
        parts = text.split("/")
        return len(parts) == len(found) and all(_same_value(f, part) for f, part in zip(found, parts, strict=True))
    return isinstance(found, str) and found == text


def cell_values(grid: list, cell: int) -> list[str]:
    """The grid's value texts of cell number ``cell``, the first key slowest (as the sweep numbers its cells)."""
    values = []
    for _, options in reversed(grid):
        cell, position = divmod(cell, len(options))
        values.append(options[position])
    return values[::-1]


def check_row(path: Path, definition: dict, row: dict, with_player: bool = True) -> dict:
    """One row of ``tasks`` (a dict of :data:`TASK_COLUMNS`) checked, with its settings and measures decoded.

    The rules: ``cell`` is a cell of the definition's grid, ``seed`` one of its seeds (:func:`seed_range`), ``task``
    a whole number from 0; ``settings`` a JSON object whose swept settings, where it states them, hold the cell's
    values; ``measures`` a JSON object (no NaN or infinities) with every one of :data:`YARDSTICKS` as a finite
    number and every other measure a finite number or a text; ``player`` a non-empty text (the system's player file;
    its loader checks it when a task's player is loaded); ``wall_time`` a finite number of seconds from 0;
    ``worker`` and ``finished`` texts. Without ``with_player``, ``row["player"]`` is only whether the row holds such
    a text (1 or 0, as SQLite tells it without reading the text).

    Raises
    ------
    ValueError
        ``--db FILE: the row (cell C, seed S, task T): field 'F' ...``, for the first rule a row breaks.
    """
    name = _row_name(row)

    def fail(field: str, problem: str) -> ValueError:
        return ValueError(f"--db {path}: {name}: field {field!r} {problem}")

    grid = definition["grid"]
    cells = math.prod(len(values) for _, values in grid)
    if not _whole(row["cell"]) or not 0 <= row["cell"] < cells:
        raise fail("cell", f"is {row['cell']!r:.40}; the sweep's grid has cells 0 to {cells - 1}")
    seeds = seed_range(definition)
    if not _whole(row["seed"]) or row["seed"] not in seeds:
        raise fail("seed", f"is {row['seed']!r:.40}; the sweep runs seeds {seeds[0]} to {seeds[-1]}")
    if not _whole(row["task"]) or row["task"] < 0:
        raise fail("task", f"is {row['task']!r:.40}; a task is a whole number from 0")
    decoded = dict(row)
    for field in ("settings", "measures"):
        try:
            decoded[field] = parse_json(row[field])
        except ValueError as error:
            raise fail(field, f"is damaged: {error}") from None
        if not isinstance(decoded[field], dict):
            raise fail(field, f"must be a JSON object; it holds {type(decoded[field]).__name__}")
    for (key, _), text in zip(grid, cell_values(grid, row["cell"]), strict=True):
        found: object = decoded["settings"]
        parts = key.split(".")
        for depth, part in enumerate(parts):
            if found is not _ABSENT and not isinstance(found, dict):
                raise fail(".".join(["settings", *parts[:depth]]), f"is {found!r:.40}; expected an object of settings")
            found = found.get(part, _ABSENT) if isinstance(found, dict) else _ABSENT
        if found is not _ABSENT and not _same_value(found, text):
            raise fail(f"settings.{key}", f"is {found!r:.40}; the row's cell has {key}={text}")
    measures = decoded["measures"]
    for key in YARDSTICKS:
        if key not in measures:
            raise fail(f"measures.{key}", "is missing (every task records the arena's yardsticks)")
    for key, value in measures.items():
        if not _finite(value) and (key in YARDSTICKS or not isinstance(value, str)):
            kind = "a finite number" if key in YARDSTICKS else "a finite number or a text"
            raise fail(f"measures.{key}", f"is {value!r:.40}; expected {kind}")
    player = row["player"]
    if (player != 1) if not with_player else (not isinstance(player, str) or not player):
        raise fail("player", "must be the text of the task's player file")
    if not _finite(row["wall_time"]) or row["wall_time"] < 0:
        raise fail("wall_time", f"is {row['wall_time']!r:.40}; expected a finite number of seconds from 0")
    for field in ("worker", "finished"):
        if not isinstance(row[field], str):
            raise fail(field, f"is {row[field]!r:.40}; expected a text")
    return decoded


_ABSENT = object()


def check_measure_names(path: Path, rows: list[dict]) -> None:
    """``ValueError`` unless every row records the same measures, each a number in every row or a text in every
    row (a system's task measures are the same for every task)."""
    if not rows:
        return
    first = rows[0]
    kinds = {key: isinstance(value, str) for key, value in first["measures"].items()}
    for row in rows[1:]:
        measures = row["measures"]
        for key in sorted(set(kinds) | set(measures)):
            if key not in measures or key not in kinds:
                lacking, having = (row, first) if key not in measures else (first, row)
                raise ValueError(f"--db {path}: {_row_name(lacking)}: field 'measures.{key}' is missing, which "
                                 f"{_row_name(having)} records")  # fmt: skip
            if isinstance(measures[key], str) != kinds[key]:
                raise ValueError(f"--db {path}: {_row_name(row)}: field 'measures.{key}' is "
                                 f"{measures[key]!r:.40}, a {'text' if not kinds[key] else 'number'}, where "
                                 f"{_row_name(first)} records a {'text' if kinds[key] else 'number'}")  # fmt: skip


OLD_NUMERICS = "numpy's functions (before the portable numerics)"
"""What a sweep database without a ``numerics`` entry was made with."""


def seed_range(definition: dict) -> range:
    """The seeds every cell of a sweep runs: ``first_seed`` (1 unless the definition names another) and the
    ``seeds - 1`` after it. A sweep of held-out seeds, such as 1001 to 1020, confirms a cell chosen on seeds 1 to 10
    (chapter 20)."""
    first = definition.get("first_seed", 1)
    return range(first, first + definition["seeds"])


def _checked_definition(definition: object) -> dict:
    """A stored definition, if it has the form :func:`evolving_ttt.sweeps.sweep_definition` gives it."""
    if not isinstance(definition, dict) or not isinstance(definition.get("system"), str):
        raise ValueError("no system")
    seeds, grid = definition.get("seeds"), definition.get("grid")
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1 or not isinstance(grid, list):
        raise ValueError("no seeds or grid")
    first = definition.get("first_seed", 1)
    if isinstance(first, bool) or not isinstance(first, int) or first < 1 or "first_seed" in definition and first == 1:
        raise ValueError("a damaged first seed")
    for cell in grid:
        if not isinstance(cell, list) or len(cell) != 2 or not isinstance(cell[0], str):
            raise ValueError("a damaged grid")
        if not isinstance(cell[1], list) or not cell[1] or not all(isinstance(value, str) for value in cell[1]):
            raise ValueError("a damaged grid")
    return definition


def _check_sqlite_header(path: Path) -> None:
    """``ValueError`` unless ``path`` is empty or begins as an SQLite database does (checked before SQLite opens it,
    so that no other file is ever changed)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as error:
        raise ValueError(f"--db {path}: cannot be read ({error.strerror or error})") from None
    if head and head != SQLITE_HEADER:
        raise ValueError(f"--db {path}: not a sweep database (not an SQLite file)")


def sweep_command(definition: dict, db: str | Path, workers: int | None = 2) -> str:
    """The command line that makes the sweep ``definition`` in ``db`` (or resumes it): ``python -m ttt_helpers sweep
    run`` with every key of its grid, its seeds and its first seed, each value quoted for the shell where it needs to
    be. The one writer of a study's command (chapters 20 to 23 and every confirmation)."""
    grid = " ".join("--set " + shlex.quote(f"{key}={','.join(values)}") for key, values in definition["grid"])
    first = f" --first-seed {definition['first_seed']}" if definition.get("first_seed", 1) != 1 else ""
    parts = [f"python -m ttt_helpers sweep run {definition['system']}", grid, f"--seeds {definition['seeds']}{first}",
             f"--db {shlex.quote(str(db))}", f"--workers {workers}" if workers else ""]  # fmt: skip
    return " ".join(part for part in parts if part)


def describe_definition(definition: dict) -> str:
    """A sweep's definition in one line: system, grid and seeds."""
    grid = " ".join(f"--set {key}={','.join(values)}" for key, values in definition.get("grid", []))
    first = f" --first-seed {definition['first_seed']}" if "first_seed" in definition else ""
    return f"{definition.get('system')} {grid} --seeds {definition.get('seeds')}{first}".replace("  ", " ")
