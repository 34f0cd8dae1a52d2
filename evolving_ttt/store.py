"""The sweep database: a sweep's definition and one row per finished task, in SQLite (chapter 20).

:class:`SweepStore` keeps a sweep safe against interruption. The file is an SQLite database in WAL mode with two
tables: ``sweep`` holds the sweep's definition (JSON) and ``tasks`` one row per finished task, keyed by
``(cell, seed, task)``: the cell's settings, the task's measures (JSON), its saved player (the system's player file,
as text), its wall time, the worker that ran it and when it finished. Each row is written in its own transaction as
soon as its task finishes, and a key is recorded once only (``INSERT OR IGNORE``), so a sweep killed at any point
loses at most the tasks that were running, and two processes running the same sweep never record a task twice.
"""

from __future__ import annotations

import json
import sqlite3
import stat
import time
from pathlib import Path

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
        """The keys ``(cell, seed, task)`` of every recorded task."""
        return {tuple(row) for row in self.connection.execute("SELECT cell, seed, task FROM tasks")}

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
        """Every recorded task as a dict of :data:`TASK_COLUMNS`, settings and measures decoded, in key order."""
        found = self.connection.execute(f"SELECT {', '.join(TASK_COLUMNS)} FROM tasks ORDER BY cell, seed, task")
        rows = []
        for values in found:
            row = dict(zip(TASK_COLUMNS, values, strict=True))
            try:
                row["settings"], row["measures"] = json.loads(row["settings"]), json.loads(row["measures"])
            except (TypeError, ValueError, RecursionError):
                raise ValueError(f"--db {self.path}: the row of task {values[:3]} is damaged") from None
            if not isinstance(row["settings"], dict) or not isinstance(row["measures"], dict):
                raise ValueError(f"--db {self.path}: the row of task {values[:3]} is damaged")
            rows.append(row)
        return rows


OLD_NUMERICS = "numpy's functions (before the portable numerics)"
"""What a sweep database without a ``numerics`` entry was made with."""


def _checked_definition(definition: object) -> dict:
    """A stored definition, if it has the form :func:`evolving_ttt.sweeps.sweep_definition` gives it."""
    if not isinstance(definition, dict) or not isinstance(definition.get("system"), str):
        raise ValueError("no system")
    seeds, grid = definition.get("seeds"), definition.get("grid")
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1 or not isinstance(grid, list):
        raise ValueError("no seeds or grid")
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


def describe_definition(definition: dict) -> str:
    """A sweep's definition in one line: system, grid and seeds."""
    grid = " ".join(f"--set {key}={','.join(values)}" for key, values in definition.get("grid", []))
    return f"{definition.get('system')} {grid} --seeds {definition.get('seeds')}".replace("  ", " ")
