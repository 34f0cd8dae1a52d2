"""The sweep database: a sweep's definition and one row per finished task, in SQLite (chapter 21).

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
from pathlib import Path

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
"""The two tables of a sweep database (chapter 21)."""

TASK_COLUMNS = ("cell", "seed", "task", "settings", "measures", "player", "wall_time", "worker", "finished")
"""The columns of the ``tasks`` table, in order."""


class SweepStore:
    """One sweep's database file (chapter 21).

    Parameters
    ----------
    path
        The SQLite file; created (with its folder checked) if it does not exist.
    definition
        The sweep's definition. A new database stores it; an existing one must hold the same definition, or
        ``ValueError`` says that the file holds another sweep. ``None`` opens an existing sweep to read it.

    Raises
    ------
    ValueError
        If the file cannot be created or opened as a sweep database, or holds another sweep.
    """

    def __init__(self, path: str | Path, definition: dict | None = None) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ValueError(f"--db {self.path}: is a directory; give a file name")
        if definition is None and not self.path.is_file():
            raise ValueError(f"--db {self.path}: no such sweep database")
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise ValueError(f"--db {self.path}: the folder {folder} does not exist")
        try:
            self.connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            self.connection.execute("PRAGMA journal_mode=WAL")
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.executescript(SCHEMA)
            stored = self.connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()
            if stored is None and definition is not None:
                text = json.dumps(definition, sort_keys=True)
                self.connection.execute("INSERT OR IGNORE INTO sweep (id, definition) VALUES (1, ?)", (text,))
                stored = self.connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()
        except sqlite3.DatabaseError as error:
            raise ValueError(f"--db {self.path}: not a sweep database ({error})") from None
        if stored is None:
            raise ValueError(f"--db {self.path}: holds no sweep")
        self.definition = json.loads(stored[0])
        if definition is not None and self.definition != json.loads(json.dumps(definition, sort_keys=True)):
            self.close()
            raise ValueError(
                f"--db {self.path} holds another sweep ({describe_definition(self.definition)}); this one is "
                f"{describe_definition(definition)}. Give another --db file, or delete this one to start again."
            )

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
            row["settings"], row["measures"] = json.loads(row["settings"]), json.loads(row["measures"])
            rows.append(row)
        return rows


def describe_definition(definition: dict) -> str:
    """A sweep's definition in one line: system, grid and seeds."""
    grid = " ".join(f"--set {key}={','.join(values)}" for key, values in definition.get("grid", []))
    return f"{definition.get('system')} {grid} --seeds {definition.get('seeds')}".replace("  ", " ")
