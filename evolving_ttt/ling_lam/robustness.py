"""Ling and Lam's robustness study: its sweeps read together, and the verdicts on the paper's claims (chapter 22).

The study's sweeps (``book/data/studies/ling_lam_*.sqlite``) each vary one setting or reading around the paper's
setting, one method per cell and ten seeds. This module reads them as one table (:func:`trained_networks`), labels
each cell by what it changes (:func:`setting_label`), summarises the cells with 95% intervals
(:func:`fitness_cells`), and states the paper's headline claims for the one verdict rule (:func:`claims`, which
:func:`evolving_ttt.ling_lam.system.claims` gives to the rule, :mod:`evolving_ttt.verdicts`).
"""

from __future__ import annotations

import numpy as np

from evolving_ttt.ling_lam.experiment import PAPER_FITNESS, PAPER_LING_LAM
from evolving_ttt.verdicts import Cell, Claim, Measure, change_of, run_sample

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


STATED_KEYS = frozenset({"iterations", "improved.iterations", "traditional.iterations", "training_count", "hidden",
                         "population", "improved.population", "traditional.population"})  # fmt: skip
"""The settings the paper states (50,000 iterations, 100 training patterns, 8 hidden neurons, population 10); the
study's other keys (the traditional GA's form, the positions' source, the readings of chapter 16) read details it
leaves open."""

FITNESS = Measure("mean fitness (31) on the network's own training positions", 0.0, 1.0, digits=4)
"""The measure of the claims on each network's fitness."""

LEAD = Measure("the NNDTF's mean fitness minus the baseline network's", -1.0, 1.0, digits=4)
"""The measure of the claim that the NNDTF is fitter."""


SETTING_WORDS = {
    "traditional.form=generational": "the traditional GA read as a generational GA with elitism",
    "training_count=25": "25 training positions instead of 100",
    "training_count=400": "400 training positions instead of 100",
    "training_source=quiet games": "training positions from quiet games",
    "training_source=uniform positions": "training positions drawn uniformly",
    "order=sequential": "hidden neurons updated in sequence",
    "replacement=figure": "replacement read from the paper's figure",
}
"""How :func:`setting_words` says a changed setting; others read ``key value`` (``hidden 4``)."""


def setting_words(label: str) -> str:
    """A cell's :func:`setting_label` in words, for the verdicts: "10,000 iterations, 25 training positions instead
    of 100" for ``iterations=10,000, training_count=25``."""
    if label == "the paper's":
        return "the paper's setting"
    parts = []
    for part in label.split(", "):
        key, _, value = part.partition("=")
        words = {"iterations": f"{value} iterations", "hidden": f"{value} hidden neurons"}
        parts.append(SETTING_WORDS.get(part, words.get(key, f"{key} {value}")))
    return ", ".join(parts)


def _study_cells():
    """Every (study, cell) of the study once, as ``(name, cell, setting, method, settings, key, runs)``, the first
    database that holds a cell giving it (as :func:`trained_networks` does)."""
    import json

    from evolving_ttt.tables import study_path, table_and_keys

    found, seen = [], set()
    for name in STUDY_NAMES:
        table, keys = table_and_keys(study_path(name))
        swept = _swept_keys(table)
        for cell, runs in table.groupby("cell", sort=True):
            setting = setting_label(runs.iloc[0].to_dict(), swept)
            method = runs["method"].iloc[0]
            if (setting, method) in seen:
                continue
            seen.add((setting, method))
            key = keys[int(cell)]
            found.append((name, int(cell), setting, method, json.loads(key), key, runs))
    return found


def _run_settings(settings: dict) -> dict:
    """A cell's settings without the keys that do not change a run (:data:`NOT_A_SETTING`)."""
    return {key: value for key, value in settings.items() if key not in NOT_A_SETTING}


def claims() -> list[Claim]:
    """Ling and Lam's headline claims for the one verdict rule (:func:`evolving_ttt.verdicts.verdict`), from the
    study's databases and their confirmations on held-out seeds (chapter 22).

    - **Each network's fitness** (0.9605 for the NNDTF, 0.9456 for the baseline, one run each in the paper): the
      mean fitness (31) of runs on their own training positions, *at least* the paper's figure.
    - **The NNDTF is fitter**: the NNDTF's mean fitness minus the baseline's, in the same setting, *above* 0.
    """
    from evolving_ttt.tables import confirmation_command, confirmations, study_path

    cells = _study_cells()
    confirmed = confirmations("ling-lam")
    paper = next(settings for name, _, setting, _, settings, _, _ in cells
                 if name == PAPER_STUDY and setting == "the paper's")  # fmt: skip
    found = []
    for method, figure in PAPER_FITNESS.items():
        evidence = []
        for name, cell, setting, cell_method, settings, key, runs in cells:
            if cell_method != method:
                continue
            extra = {}
            if key in confirmed:
                held = confirmed[key]
                extra["confirmation"] = run_sample(held, "fitness")
                if "training_" in setting:  # trained on other positions: the measure itself has changed
                    extra["note"] = (f"on the paper setting's 100 positions the same networks score "
                                     f"{held['fitness_paper_positions'].mean():.4f}")  # fmt: skip
            change = change_of(_run_settings(settings), _run_settings(paper), STATED_KEYS)
            command = confirmation_command(study_path(name), cell, f"confirm_ling_lam_{method}")
            evidence.append(Cell(setting_words(setting), change, run_sample(runs, "fitness"), confirm_command=command,
                                 **extra))  # fmt: skip
        name = "NNDTF" if method == "nndtf" else "baseline network"
        found.append(Claim(paper="Ling and Lam (2011)", claim=f"the {name} reaches fitness {figure}",
                           paper_figure=f"{figure} (one run, 50,000 iterations)", measure=FITNESS, threshold=figure,
                           direction="at least", cells=tuple(evidence), chapter="22_ling_lam_robustness"))  # fmt: skip
    pairs = []
    by_setting: dict[tuple[str, str], dict[str, object]] = {}
    for name, _, setting, method, settings, _, runs in cells:
        by_setting.setdefault((name, setting), {})[method] = (settings, runs)
    for (_, setting), methods in by_setting.items():
        if "nndtf" in methods and "baseline" in methods:
            settings, nndtf = methods["nndtf"]
            _, baseline = methods["baseline"]
            change = change_of(_run_settings(settings), _run_settings(paper), STATED_KEYS)
            sample = run_sample(nndtf, "fitness", "difference", baseline["fitness"])
            pairs.append(Cell(setting_words(setting), change, sample))
    found.append(Claim(paper="Ling and Lam (2011)", claim="the NNDTF is fitter than the baseline network",
                       paper_figure="0.9605 against 0.9456 (one run each)", measure=LEAD, threshold=0.0,
                       direction="above", cells=tuple(pairs), chapter="22_ling_lam_robustness"))  # fmt: skip
    return found
