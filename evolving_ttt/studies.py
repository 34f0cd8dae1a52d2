"""Robustness studies: reading the sweeps of chapters 20 to 23 (introduced in chapter 20).

A study is a handful of sweeps (:mod:`evolving_ttt.sweeps`) of one system, each varying one open reading or one
setting of its paper around the paper's own setting, with many seeds per cell. Their databases are committed to
``book/data/studies/``; this module reads them back:

- :func:`~evolving_ttt.tables.study_table` one database as a table and :func:`~evolving_ttt.tables.cell_summary` its
  cells as means with 95% intervals (both in :mod:`evolving_ttt.tables`, below the systems, which read them too);
- :func:`rerun_check` re-runs a few recorded tasks and checks that they give the same bits, which is how a chapter
  shows, in every build, that its database is what the code computes;
- :func:`plot_intervals` draws a cell summary, means with their intervals;
- :func:`at_a_glance` gathers the introduction's table: each system's headline claims, what the book measures with
  the paper's setting, and the best its study found, from the ``glance()`` of the systems that have one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import grid_cells, run_sweep_task
from evolving_ttt.systems import get_system, registered_systems

GLANCE_COLUMNS = ("paper", "claim", "paper_figure", "book", "best", "setting", "verdict")
"""The columns of the introduction's table at a glance, and the keys of every row a system's ``glance()`` gives."""


def _same(stored: Any, found: Any) -> bool:
    """Equal to the bit: floats compared by their exact value (NaN equal to NaN), everything else by ``==``."""
    if isinstance(stored, float) and isinstance(found, float):
        return stored == found or (math.isnan(stored) and math.isnan(found))
    return type(stored) is type(found) and stored == found


def rerun_check(db: str | Path, count: int = 2, keys: Sequence[tuple[int, int, int]] | None = None):
    """Re-run recorded tasks of a sweep and check that they give the same bits (chapter 20).

    Parameters
    ----------
    db
        A sweep database, such as ``th.study_path("fogel_control")``.
    count
        How many tasks to re-run when ``keys`` is not given: the first recorded, the last, and the ones evenly
        between.
    keys
        The tasks ``(cell, seed, task)`` to re-run.

    Returns
    -------
    pandas.DataFrame
        One row per task re-run: its key, its wall time now, and ``same`` (always ``True``: any difference raises).

    Raises
    ------
    ValueError
        If a task is not recorded, or if any measure or the saved player of a re-run differs from the database.
    """
    import pandas as pd

    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"rerun_check: count must be a whole number >= 1; got {count!r}")
    with SweepStore(db) as store:
        definition, rows = store.definition, store.rows()
    if not rows:
        raise ValueError(f"{db}: the sweep has no recorded task to re-run")
    recorded = {(row["cell"], row["seed"], row["task"]): row for row in rows}
    if keys is None:
        order = list(recorded)
        picks = sorted({round(i * (len(order) - 1) / max(count - 1, 1)) for i in range(min(count, len(order)))})
        keys = [order[i] for i in picks]
    system = get_system(definition["system"])
    cells = grid_cells(system, definition["grid"])
    report = []
    for key in keys:
        key = tuple(int(part) for part in key)
        if key not in recorded:
            raise ValueError(f"{db}: no task (cell, seed, task) = {key} is recorded")
        cell, seed, task = key
        found = run_sweep_task(system.name, (cell, seed, task, cells[cell]))
        stored = recorded[key]
        found_measures = json.loads(json.dumps(found["measures"]))
        differ = [name for name in stored["measures"] | found_measures
                  if not _same(stored["measures"].get(name), found_measures.get(name))]  # fmt: skip
        if differ:
            raise ValueError(f"{db}: task {key} gives other values of {', '.join(sorted(differ))} than recorded")
        if found["player"] != stored["player"]:
            raise ValueError(f"{db}: task {key} gives another player than recorded")
        report.append({"cell": cell, "seed": seed, "task": task, "wall_time": found["wall_time"], "same": True})
    return pd.DataFrame(report)


def plot_intervals(ax, summary, x: str, measure: str, label: str | None = None, **plot_kwargs):
    """Draw a :func:`cell_summary` as means with 95% interval bars of ``measure`` against the column ``x``.

    Returns the matplotlib container of the error bars. Cells of one value (no interval) are drawn without bars.
    """
    for name in (x, measure, f"{measure}_low", f"{measure}_high"):
        if name not in summary.columns:
            raise ValueError(f"plot_intervals: the summary has no column {name!r}; make it with cell_summary")
    means = summary[measure].to_numpy(dtype=float)
    low = np.nan_to_num(means - summary[f"{measure}_low"].to_numpy(dtype=float))
    high = np.nan_to_num(summary[f"{measure}_high"].to_numpy(dtype=float) - means)
    positions = summary[x].to_numpy()
    if positions.dtype.kind not in "iuf":
        ax.set_xticks(range(len(positions)), [str(p) for p in positions])
        positions = np.arange(len(positions))
    options = {"marker": "o", "capsize": 3} | plot_kwargs
    return ax.errorbar(positions, means, yerr=[low, high], label=label, **options)


def at_a_glance():
    """The introduction's table: every registered system's headline claims, what the book measures with the
    paper's setting, and the best setting its robustness study found (chapters 20 to 23).

    Each system that has a ``glance()`` function gives its rows (dicts with the keys of :data:`GLANCE_COLUMNS`);
    systems without one give none.
    """
    import pandas as pd

    rows = []
    for system in registered_systems():
        glance = getattr(system, "glance", None)
        if glance is None:
            continue
        for row in glance():
            if not isinstance(row, dict) or set(row) != set(GLANCE_COLUMNS):
                raise ValueError(f"{system.name}: glance() rows must have exactly the keys {', '.join(GLANCE_COLUMNS)}")
            rows.append({column: str(row[column]) for column in GLANCE_COLUMNS})
    return pd.DataFrame(rows, columns=list(GLANCE_COLUMNS))


GLANCE_HEADINGS = ("paper", "headline claim", "the paper's figure", "the book, paper's setting",
                   "best found by the study", "with", "verdict")  # fmt: skip
"""The headings of the table at a glance, in the order of :data:`GLANCE_COLUMNS`."""


def glance_markdown(table=None) -> str:
    """The table at a glance (:func:`at_a_glance`) as a Markdown table, as the introduction and the README show it."""
    table = at_a_glance() if table is None else table
    lines = ["| " + " | ".join(GLANCE_HEADINGS) + " |", "|" + "---|" * len(GLANCE_HEADINGS)]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join(str(row[c]).replace("|", "/") for c in GLANCE_COLUMNS) + " |")
    return "\n".join(lines)
