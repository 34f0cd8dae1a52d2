"""Ling and Lam's robustness study: its sweeps read together, and the verdicts on the paper's claims (chapter 22).

The study's sweeps (``book/data/studies/ling_lam_*.sqlite``) each vary one setting or reading around the paper's
setting, one method per cell and ten seeds. This module reads them as one table (:func:`trained_networks`), labels
each cell by what it changes (:func:`setting_label`), summarises the cells with 95% intervals
(:func:`fitness_cells`), and turns them into the verdict on each of the paper's headline claims
(:func:`claim_rows`, which :func:`evolving_ttt.ling_lam.system.glance` gives to the introduction's table).
"""

from __future__ import annotations

import numpy as np

from evolving_ttt.ling_lam.experiment import PAPER_FITNESS, PAPER_LING_LAM

STUDY_NAMES = (
    "ling_lam_iterations", "ling_lam_long", "ling_lam_longest", "ling_lam_ga_form", "ling_lam_positions",
    "ling_lam_few", "ling_lam_combined", "ling_lam_few_generational", "ling_lam_hidden", "ling_lam_count",
    "ling_lam_readings",
)  # fmt: skip
"""The study's databases, in the order of chapter 22."""
PAPER_STUDY = "ling_lam_iterations"
"""The database whose 50,000-iteration cells are the paper's setting."""
NOT_A_SETTING = ("seeds", "methods")
"""Swept keys that do not change a run's settings: one run per task, and the method (a column of its own)."""
MEASURES = (
    "fitness", "fitness_all", "fitness_paper_positions", "points_perfect_x", "points_perfect_o", "points_random_x",
    "points_random_o", "fogel_score", "can_lose",
)  # fmt: skip
"""The measures every cell is summarised on."""


def _swept_keys(table) -> list[str]:
    columns = list(table.columns)
    return columns[columns.index("task") + 1 : columns.index("points_perfect_x")]


def setting_label(row: dict, keys: list[str]) -> str:
    """What a cell changes from the paper's setting, as ``key=value`` texts (``"the paper's"`` if nothing).

    ``row`` holds the cell's value of each swept key in ``keys``; the paper's value is that of
    :data:`~evolving_ttt.ling_lam.experiment.PAPER_LING_LAM`."""
    parts = []
    for key in keys:
        if key in NOT_A_SETTING:
            continue
        value, default = row[key], PAPER_LING_LAM.as_dict()
        for part in key.split("."):
            default = default[part]
        if value != default:
            parts.append(f"{key}={value:,}" if isinstance(value, (int, np.integer)) else f"{key}={value}")
    return ", ".join(parts) or "the paper's"


def trained_networks(names: tuple[str, ...] = STUDY_NAMES):
    """Every task of the study's databases as one table, with ``study``, ``setting`` (:func:`setting_label`) and
    ``evaluations``. A cell that an earlier database already holds (the same setting and method, such as the
    paper's setting, which several sweeps include) appears once, from the first."""
    import pandas as pd

    from evolving_ttt.tables import study_table

    frames, seen = [], set()
    for name in names:
        table = study_table(name)
        keys = _swept_keys(table)
        table = table.assign(study=name, setting=[setting_label(row, keys) for row in table.to_dict("records")])
        cells = set(zip(table.setting, table.method, strict=True))
        table = table[[cell not in seen for cell in zip(table.setting, table.method, strict=True)]]
        seen |= cells
        frames.append(table[["study", "setting", "method", "seed", *MEASURES, "evaluations", "wall_time"]])
    return pd.concat(frames, ignore_index=True)


def fitness_cells(table, measures: tuple[str, ...] = MEASURES):
    """One row per (study, setting, method): each measure's mean and 95% interval (``m_low``, ``m_high``), ``n``."""
    from evolving_ttt.tables import cell_summary

    return cell_summary(table, list(measures), by=["study", "setting", "method"])


def _interval(row, measure: str = "fitness") -> str:
    return f"{row[measure]:.4f} (95% {row[measure + '_low']:.4f} to {row[measure + '_high']:.4f}, n = {row['n']})"


def _fitter_comparisons(table) -> dict[tuple[str, str], dict]:
    """The NNDTF against the baseline network in every setting where both were trained on the same positions.

    A cell of both methods compares within itself; a reading of the baseline's GA alone (a ``traditional.form``
    cell trained on the paper's positions) is set against the NNDTF at the paper's setting. For each: ``lead``
    (the difference of the mean fitnesses), ``share`` of pairs of runs the NNDTF wins, ``pairs``, and ``apart``
    (the NNDTF's 95% interval entirely above the baseline's).
    """
    from evolving_ttt.tables import cell_summary

    paper = (table.study == PAPER_STUDY) & (table.setting == "the paper's")
    found = {}
    for (study, setting), group in table.groupby(["study", "setting"]):
        nndtf = group[group.method == "nndtf"]
        baseline = group[group.method == "baseline"]
        if len(baseline) and not len(nndtf) and "traditional.form" in setting and "training_" not in setting:
            nndtf = table[paper & (table.method == "nndtf")]
        if not len(nndtf) or not len(baseline):
            continue
        a, b = nndtf.fitness.to_numpy(), baseline.fitness.to_numpy()
        summary = {m: cell_summary(part, ["fitness"], by=["method"]).iloc[0] for m, part in (("n", nndtf),
                                                                                          ("b", baseline))}  # fmt: skip
        found[study, setting] = {"lead": float(a.mean() - b.mean()), "share": float((a[:, None] > b[None, :]).mean()),
                                 "pairs": len(a) * len(b),
                                 "apart": bool(summary["n"].fitness_low > summary["b"].fitness_high)}  # fmt: skip
    return found


def claim_rows(table=None) -> list[dict]:
    """The verdict on each headline claim of the paper, from the study's databases (chapter 22).

    For each network's fitness (0.9605, 0.9456): the mean at the paper's setting, and the cell with the highest
    mean fitness (31) on its own training positions over every setting tried; "holds" if the paper's setting's
    interval reaches the paper's value, "holds only under S" if another cell's does, "does not hold" otherwise.
    For "the NNDTF is fitter than the baseline" (:func:`_fitter_comparisons`): it holds in a setting when the
    NNDTF's 95% interval lies above the baseline's; the rows give the NNDTF's lead in mean fitness and the share of
    pairs of runs it wins, at the paper's setting and where the lead is smallest.
    """
    table = trained_networks() if table is None else table
    cells = fitness_cells(table)
    paper = cells[(cells.study == PAPER_STUDY) & (cells.setting == "the paper's")].set_index("method")
    rows = []
    for method, figure in PAPER_FITNESS.items():
        mine = cells[cells.method == method]
        best = mine.loc[mine.fitness.idxmax()]
        here = paper.loc[method]
        if here.fitness_high >= figure:
            verdict = "holds"
        elif best.fitness_high >= figure:
            verdict = f"holds only under {best.setting}"
        else:
            verdict = "does not hold under any setting tried"
        name = "NNDTF" if method == "nndtf" else "baseline network"
        rows.append({"paper": "Ling and Lam (2011)", "claim": f"the {name} reaches fitness {figure}",
                     "paper_figure": f"{figure} (one run, 50,000 iterations)", "book": _interval(here),
                     "best": _interval(best), "setting": best.setting, "verdict": verdict})  # fmt: skip
    comparisons = _fitter_comparisons(table)
    paper_row = comparisons[PAPER_STUDY, "the paper's"]
    closest = min(comparisons, key=lambda key: comparisons[key]["lead"])
    failing = sorted(setting for (_, setting), found in comparisons.items() if not found["apart"])
    verdict = "holds" if not failing else f"holds only under other settings than {'; '.join(failing)}"
    least = comparisons[closest]
    rows.append({"paper": "Ling and Lam (2011)", "claim": "the NNDTF is fitter than the baseline network",
                 "paper_figure": "0.9605 against 0.9456 (one run each)",
                 "book": f"lead {paper_row['lead']:+.4f}; NNDTF fitter in {paper_row['share']:.0%} of "
                         f"{paper_row['pairs']} pairs of runs",
                 "best": f"smallest lead {least['lead']:+.4f}, NNDTF fitter in {least['share']:.0%} of pairs "
                         f"({len(comparisons)} settings compared)",
                 "setting": closest[1], "verdict": verdict})  # fmt: skip
    return rows
