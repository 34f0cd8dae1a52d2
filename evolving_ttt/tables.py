"""Sweep databases as tables (chapters 20 to 23): below the systems, so that a system's study can read its own.

:func:`sweep_table` reads any sweep database (:mod:`evolving_ttt.store`) as a pandas table, one row per task;
:func:`study_table` one of the robustness studies committed to ``book/data/studies/``; :func:`cell_summary` gives
every cell of a table as means with 95% bootstrap intervals (:func:`evolving_ttt.statistics.mean_interval`).

A cell chosen as the best of many is confirmed on held-out seeds (:data:`CONFIRMATION_SEEDS`) in a database of its
own, ``book/data/studies/confirm_<claim>.sqlite``: :func:`confirmations` finds them by the cell's settings, and
:func:`confirmation_command` prints the command that makes one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evolving_ttt.records import STUDIES
from evolving_ttt.statistics import mean_interval
from evolving_ttt.store import YARDSTICKS, SweepStore, cell_values, sweep_command


def sweep_table(db: str | Path):
    """A sweep's recorded tasks as a pandas ``DataFrame``, one row per task (chapter 20).

    Columns: ``cell``, ``seed``, ``task``, one column per swept setting (its value in the cell), the arena's
    :data:`YARDSTICKS`, the system's own measures, ``wall_time`` (seconds) and ``worker``.
    """
    with SweepStore(db) as store:
        return _table(store.definition, store.rows())


def _table(definition: dict, rows: list[dict]):
    """:func:`sweep_table` of a database's definition and checked rows."""
    import pandas as pd

    keys = [key for key, _ in definition["grid"]]
    cells = list(itertools.product(*(values for _, values in definition["grid"])))

    def value(settings: dict, key: str, cell: int) -> Any:
        # A system may leave a setting at its default out of the stored settings (Al-Khateeb's newer readings):
        # then the cell's value is the grid's text, read as a number or true/false where it is one.
        found: Any = settings
        for part in key.split("."):
            if not isinstance(found, dict) or part not in found:
                return _grid_value(cells[cell][keys.index(key)])
            found = found[part]
        return tuple(found) if isinstance(found, list) else found

    table = [{"cell": r["cell"], "seed": r["seed"], "task": r["task"],
              **{k: value(r["settings"], k, r["cell"]) for k in keys},
              **r["measures"], "wall_time": r["wall_time"], "worker": r["worker"]} for r in rows]  # fmt: skip
    columns = ["cell", "seed", "task", *keys, *YARDSTICKS]
    frame = pd.DataFrame(table)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    return frame[[*columns, *(c for c in frame.columns if c not in columns)]]


def _grid_value(text: str) -> Any:
    """A value of a sweep's grid as stored (text): a whole number, a number, true/false, or the text itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def study_path(name: str) -> Path:
    """The database ``book/data/studies/<name>.sqlite``, which must exist."""
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"a study's name is a file name without folder or suffix, such as 'fogel_control'; "
                         f"got {name!r}")  # fmt: skip
    path = STUDIES / f"{name}.sqlite"
    if not path.is_file():
        known = sorted(p.stem for p in STUDIES.glob("*.sqlite")) if STUDIES.is_dir() else []
        raise ValueError(f"no study {name!r} in {STUDIES}; the studies are {', '.join(known) or 'none'}")
    return path


def study_table(name: str):
    """One study database of ``book/data/studies/`` as a pandas table, one row per task (:func:`sweep_table`)."""
    return sweep_table(study_path(name))


def swept_columns(table) -> list[str]:
    """The swept settings of a sweep table: its columns between ``task`` and the arena's yardsticks."""
    columns = list(table.columns)
    return columns[columns.index("task") + 1 : columns.index("points_perfect_x")] if "task" in columns else []


def cell_label(row, by: Sequence[str]) -> str:
    """A cell of :func:`cell_summary` in words, ``key=value, ...`` (whole numbers without ``.0``), or "the paper's
    settings" for a sweep of nothing."""
    values = [(key, int(row[key]) if isinstance(row[key], float) and row[key].is_integer() else row[key])
              for key in by]  # fmt: skip
    return ", ".join(f"{key}={value}" for key, value in values) or "the paper's settings"


def cell_summary(table, measures: Sequence[str], by: Sequence[str] | None = None):
    """Every cell of a sweep table as the mean of each measure with its 95% bootstrap interval (BCa), which stays
    within the values, so within the measure's range.

    Parameters
    ----------
    table
        A table of :func:`study_table` or :func:`~evolving_ttt.sweeps.sweep_table`.
    measures
        Columns to summarise, such as ``["points_perfect_x", "fogel_score"]``.
    by
        The columns that define a group; by default the swept settings (the columns between ``task`` and the
        arena's yardsticks), so one row per cell.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then for each measure ``m``: ``m`` (the mean), ``m_low`` and ``m_high``, then ``n``.
    """
    import pandas as pd

    columns = list(table.columns)
    by = swept_columns(table) if by is None else list(by)
    for name in [*by, *measures]:
        if name not in columns:
            raise ValueError(f"cell_summary: the table has no column {name!r}; its columns are {', '.join(columns)}")
    if not measures:
        raise ValueError("cell_summary: name one or more measures to summarise")
    rows = []
    groups = table.groupby(by, sort=False, dropna=False) if by else [((), table)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key, strict=True))
        for measure in measures:
            row[measure], row[f"{measure}_low"], row[f"{measure}_high"] = mean_interval(group[measure].to_numpy())
        row["n"] = len(group)
        rows.append(row)
    return pd.DataFrame(rows)


CONFIRMATION_SEEDS = (1001, 20)
"""The held-out seeds of a confirmation: 20 seeds from 1001, none of which chose the cell (seeds 1 to 20 did)."""


def settings_key(settings: dict) -> str:
    """A cell's full settings as one text (sorted JSON), to find the same cell in two databases."""
    return json.dumps(settings, sort_keys=True)


def cell_keys(db: str | Path) -> dict[int, str]:
    """The :func:`settings_key` of every cell recorded in a sweep database, by cell."""
    with SweepStore(db) as store:
        return _keys(store.rows())


def _keys(rows: list[dict]) -> dict[int, str]:
    return {row["cell"]: settings_key(row["settings"]) for row in rows}


def table_and_keys(db: str | Path) -> tuple[Any, dict[int, str]]:
    """:func:`sweep_table` and :func:`cell_keys` of one database, its rows read once."""
    with SweepStore(db) as store:
        rows = store.rows()
        return _table(store.definition, rows), _keys(rows)


def confirmations(system: str, folder: Path = STUDIES) -> dict[str, Any]:
    """Every confirmation of ``system`` committed in ``folder`` (``confirm_*.sqlite``), as tables of its tasks keyed
    by the cell's :func:`settings_key`, each with a ``database`` column naming the file."""
    found = {}
    for path in sorted(Path(folder).glob("confirm_*.sqlite")):
        with SweepStore(path) as store:
            if store.definition["system"] != system:
                continue
        table, keys = table_and_keys(path)
        for cell, key in keys.items():
            found[key] = table[table["cell"] == cell].assign(database=path.stem)
    return found


def confirmation_command(db: str | Path, cells: int | Sequence[int], name: str) -> str:
    """The command that confirms ``cells`` (one cell or several) of the sweep ``db`` on :data:`CONFIRMATION_SEEDS`,
    into ``book/data/studies/<name>.sqlite``: each key of the sweep's grid with the values those cells take, in the
    grid's order."""
    with SweepStore(db) as store:
        definition = store.definition
    chosen = [cell_values(definition["grid"], cell) for cell in ([cells] if isinstance(cells, int) else cells)]
    grid = [[key, [v for v in options if any(values[k] == v for values in chosen)]]
            for k, (key, options) in enumerate(definition["grid"])]  # fmt: skip
    first, count = CONFIRMATION_SEEDS
    confirmation = {"system": definition["system"], "grid": grid, "seeds": count, "first_seed": first}
    return sweep_command(confirmation, f"book/data/studies/{name}.sqlite", workers=None)


def study_command(name: str, workers: int | None = 2) -> str:
    """The command line that makes (or resumes) the committed study database ``name`` (:func:`study_path`), read
    from the definition the database holds (chapters 20 to 23)."""
    with SweepStore(study_path(name)) as store:
        definition = store.definition
    return sweep_command(definition, f"book/data/studies/{name}.sqlite", workers)
