"""Pictures of a result file, from the command line: ``python -m ttt_helpers plot FILE --out PICTURE.png``.

:func:`plot_file` draws what a file holds, whichever system made it:

* a sweep's database (SQLite, chapter 20): one point per cell, the mean of a yardstick over the cell's tasks with
  its 95% bootstrap interval (:func:`~evolving_ttt.tables.cell_summary`);
* a run record (any system's ``save_record``): the system's curves (its optional ``record_curves``), the mean over
  the record's tasks as a line, the range of the tasks as a band.

It works from the registry alone, like everything above the systems.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evolving_ttt.records import check_path
from evolving_ttt.systems import read_by_any_system
from evolving_ttt.tables import YARDSTICKS, cell_label, cell_summary, sweep_table, swept_columns

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first bytes of every SQLite database: a sweep's, as opposed to a run record."""


def _is_database(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def plot_sweep(db: str | Path, measure: str = "points_perfect_x"):
    """A figure of every cell of the sweep in ``db``: the mean of ``measure`` with its 95% interval, and n."""
    import matplotlib.pyplot as plt

    table = sweep_table(db)
    if measure not in YARDSTICKS and measure not in table.columns:
        raise ValueError(f"--measure {measure}: the sweep has no such measure; its measures are "
                         f"{', '.join(c for c in table.columns if c in YARDSTICKS or c.islower())}")  # fmt: skip
    if not len(table):
        raise ValueError(f"{db}: no task recorded yet, nothing to plot")
    summary = cell_summary(table, [measure])
    by = swept_columns(table)
    labels = [cell_label(row, by) for _, row in summary.iterrows()]
    means = summary[measure].to_numpy(dtype=float)
    low = np.where(summary["n"] > 1, summary[f"{measure}_low"], means)
    high = np.where(summary["n"] > 1, summary[f"{measure}_high"], means)
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(labels) + 2), 4))
    positions = np.arange(len(labels))
    ax.errorbar(positions, means, yerr=[means - low, high - means], fmt="o", capsize=4, color="tab:blue")
    for x, mean, n in zip(positions, means, summary["n"], strict=True):
        ax.annotate(f"n={n}", (x, mean), textcoords="offset points", xytext=(6, 4), fontsize=8)
    ax.set_xticks(positions)
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(measure)
    ax.set_title(f"{Path(db).name}: mean of {measure} per cell, 95% bootstrap interval")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_record(path: str | Path):
    """A figure of a run record of any registered system: its curves, mean over tasks and their range."""
    import matplotlib.pyplot as plt

    system, record = read_by_any_system(path, "load_record", "a run record")
    curves = getattr(system, "record_curves", None)
    if curves is None:
        raise ValueError(f"{path} is a record of {system.name}, which draws no curves (it has no record_curves)")
    drawn = curves(record)
    fig, axes = plt.subplots(len(drawn), 1, figsize=(7, 3.2 * len(drawn)), squeeze=False)
    for ax, (label, (x, y)) in zip(axes[:, 0], drawn.items(), strict=True):
        y = np.asarray(y, dtype=float)
        if len(y) > 1:
            ax.fill_between(x, y.min(axis=0), y.max(axis=0), alpha=0.25, label=f"range of {len(y)} tasks")
        ax.plot(x, y.mean(axis=0), lw=1.2, label="mean" if len(y) > 1 else None)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(alpha=0.3)
        if len(y) > 1:
            ax.legend(fontsize=8)
    axes[0, 0].set_title(f"{Path(path).name}: {system.title}")
    axes[-1, 0].set_xlabel("generation" if system.name != "ling-lam" else "iteration")
    fig.tight_layout()
    return fig


def plot_file(path: str | Path, out, measure: str = "points_perfect_x") -> str:
    """Draw ``path`` (a sweep's database or a run record) into ``out`` (a writable binary file) as PNG; returns
    what was drawn, in a few words."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = check_path(path, "FILE")
    database = _is_database(path)
    fig = plot_sweep(path, measure) if database else plot_record(path)
    try:
        fig.savefig(out, format="png", dpi=120)
    finally:
        plt.close(fig)
    return f"{'the cells of a sweep' if database else 'the curves of a run record'} ({path.name})"
