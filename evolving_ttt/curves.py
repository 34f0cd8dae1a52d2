"""Learning curves by games played: every system's players on the same exact yardsticks (chapter 27).

A *curve study* is a sweep database ``book/data/studies/curves_*.sqlite`` (:mod:`evolving_ttt.sweeps`) that runs one
system at several lengths of training (Fogel's generations, Ling and Lam's iterations, ...) over seeds 1 to 20. Each
of its tasks trained for a number of games, which the system itself counts (``games_played(settings, task)``: the
games one task plays while it learns; Ling and Lam's GA plays none and counts the positions it looked at), and left
a player, which the sweep saved. A system whose one task measures its own player as it learns (Q-learning's
checkpoints) says so with ``learning_curve(player)``, a list of ``(games, measures)``; its task then gives a point
per checkpoint. Nothing here names a system: the databases say which system ran, and the registry does the rest.

Every point is measured exactly, by the tables of :mod:`evolving_ttt.outcomes`:

``fogel_score``
    Fogel's expected 32-game protocol score as X against his rule base (ceiling 29.78, chapter 10);
``losses_rule_base``
    the expected number of those 32 games lost (0 exactly when the player never loses to the rule base);
``loss_perfect_x``, ``loss_perfect_o``
    the chance of losing to the perfect player as X and as O (0 exactly when it never does);
``points_random_x``, ``points_random_o``
    expected points against the uniformly random player (1 a win, 1/2 a draw).

:func:`write_learning_curves` measures every point of every curve study and writes them to one file
(:data:`CURVES_FORMAT`, ``book/data/studies/learning_curves.json``); :func:`load_learning_curves` reads it back and
checks every field; :func:`recheck_points` measures some points again from the databases, as the chapter does in
the build. :func:`curve_summary` gives each method's mean and share of runs at every length with their 95% intervals
(:mod:`evolving_ttt.statistics`), and :func:`games_until` the fewest games after which most runs' players never
lose, decided as the one verdict rule decides a claim (:meth:`evolving_ttt.verdicts.Claim.gives`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.fogel_score import protocol_score
from evolving_ttt.game import O, X
from evolving_ttt.outcomes import outcome_probabilities, perfect_policy, random_policy
from evolving_ttt.players import ArenaPlayer
from evolving_ttt.reading import read_json
from evolving_ttt.records import check_provenance, json_text, write_checked
from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import grid_cells, load_saved_player
from evolving_ttt.systems import get_system, system_player
from evolving_ttt.tables import STUDIES
from evolving_ttt.verdicts import Bound, Claim, Measure, Sample, interval_text

CURVES_PREFIX = "curves_"
"""The name every curve study's database starts with."""

CURVES_FILE = STUDIES / "learning_curves.json"
"""The committed file of every curve study's points."""

CURVES_FORMAT = "ttt-learning-curves"
"""The ``format`` of the points file: ``{"format", "version": 1, "measures": [...], "points": [{"study",
"system", "method", "cell", "seed", "task", "games", MEASURE: value, ...}, ...], ...provenance}``; ``games`` a
whole number >= 1, each measure a finite number in its range (:data:`CURVE_MEASURES`)."""

CURVE_MEASURES = {
    "fogel_score": (-320.0, 32.0),
    "losses_rule_base": (0.0, 32.0),
    "loss_perfect_x": (0.0, 1.0),
    "loss_perfect_o": (0.0, 1.0),
    "points_random_x": (0.0, 1.0),
    "points_random_o": (0.0, 1.0),
}
"""Every measure of a point, with its range."""

NEVER_LOSES = {
    "the rule base (as X)": "losses_rule_base",
    "the perfect player as X": "loss_perfect_x",
    "the perfect player as O": "loss_perfect_o",
}
"""The questions "after how many games does the player never lose to ...", each with the measure that is 0 exactly
when it never does."""

MOST_RUNS = 0.5
"""A method *gets there* at a length of training when the share of its runs whose player never loses lies, with its
whole 95% interval, above this (most runs, beyond doubt on 20 seeds: at least 15 of 20)."""


# --- Measuring a point ---------------------------------------------------------------------------------------------


def point_measures(x_policy: np.ndarray, o_policy: np.ndarray) -> dict[str, float]:
    """The measures of :data:`CURVE_MEASURES` of a player given as its two policy tables, exactly."""
    perfect_o = outcome_probabilities(x_policy, perfect_policy(O))
    perfect_x = outcome_probabilities(perfect_policy(X), o_policy)
    random_o = outcome_probabilities(x_policy, random_policy(O))
    random_x = outcome_probabilities(random_policy(X), o_policy)
    return {
        "fogel_score": protocol_score(x_policy),
        "losses_rule_base": protocol_score(x_policy, payoff=(0.0, 1.0, 0.0)),
        "loss_perfect_x": float(perfect_o[2]),
        "loss_perfect_o": float(perfect_x[0]),
        "points_random_x": float(random_o[0] + 0.5 * random_o[1]),
        "points_random_o": float(random_x[2] + 0.5 * random_x[1]),
    }


def player_measures(player: ArenaPlayer) -> dict[str, float]:
    """:func:`point_measures` of an arena player."""
    return point_measures(player.x_policy, player.o_policy)


# --- The curve studies ---------------------------------------------------------------------------------------------


def curve_studies(folder: str | Path = STUDIES) -> list[Path]:
    """Every curve study's database in ``folder``, in order of name."""
    return sorted(Path(folder).glob(f"{CURVES_PREFIX}*.sqlite"))


def _method(system: Any, grid: Sequence, cell_values: Sequence[str], budget_keys: set[str]) -> str:
    """A method's name: the system's title, and the settings swept over several values that do not set the length
    of training."""
    others = [f"{key}={value}" for (key, texts), value in zip(grid, cell_values, strict=True)
              if key not in budget_keys and len(texts) > 1]  # fmt: skip
    return ", ".join([system.title, *others])


def _budget_keys(system: Any, grid: Sequence, cells: Sequence[Any]) -> set[str]:
    """The swept settings that change the games a task plays: the study's lengths of training."""
    combos = list(itertools.product(*(values for _, values in grid)))
    keys = set()
    for k, (key, _) in enumerate(grid):
        for a, b in itertools.combinations(range(len(combos)), 2):
            differ = [i for i in range(len(grid)) if combos[a][i] != combos[b][i]]
            if differ == [k] and system.games_played(cells[a]) != system.games_played(cells[b]):
                keys.add(key)
                break
    return keys


def study_points(db: str | Path, progress: bool = False) -> list[dict]:
    """Every point of one curve study: one per task, or one per checkpoint for a system that measures its own
    player as it learns (``learning_curve``), each with its method, seed, games and :data:`CURVE_MEASURES`."""
    db = Path(db)
    with SweepStore(db) as store:
        definition, rows = store.definition, store.rows()
    system = get_system(definition["system"])
    if not hasattr(system, "games_played"):
        raise ValueError(f"{db.name}: the system {system.name!r} does not count its games (games_played)")
    grid = definition["grid"]
    cells = grid_cells(system, grid)
    values = list(itertools.product(*(texts for _, texts in grid)))
    budget = _budget_keys(system, grid, cells)
    points = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(rows), desc=db.name, unit="player")
    for row in rows:
        cell, seed, task = row["cell"], row["seed"], row["task"]
        base = {"study": db.stem, "system": system.name, "method": _method(system, grid, values[cell], budget),
                "cell": cell, "seed": seed, "task": task}  # fmt: skip
        points += [{**base, **point} for point in _task_points(system, cells[cell], task, row["player"])]
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return points


def _task_points(system: Any, settings: Any, task: int, player_text: str) -> list[dict]:
    """The games and :data:`CURVE_MEASURES` of one task's saved player: one point, or one per checkpoint of a system
    with ``learning_curve``."""
    player = load_saved_player(system, player_text)
    if hasattr(system, "learning_curve"):
        return [{"games": int(games), **{m: float(measures[m]) for m in CURVE_MEASURES}}
                for games, measures in system.learning_curve(player)]  # fmt: skip
    measured = player_measures(system_player(system, player, f"{system.name} task {task}"))
    return [{"games": int(system.games_played(settings, task)), **measured}]


def write_learning_curves(path: str | Path = CURVES_FILE, folder: str | Path = STUDIES, progress: bool = False,
                          **provenance: Any) -> int:  # fmt: skip
    """Measure every point of every curve study in ``folder`` and write them to ``path`` (:data:`CURVES_FORMAT`).

    Returns the number of points. Raises ``ValueError`` if ``folder`` holds no curve study, or if ``path`` is one
    of the databases read."""
    studies = curve_studies(folder)
    if not studies:
        raise ValueError(f"{folder}: no curve study ({CURVES_PREFIX}*.sqlite) to read")
    if Path(path).resolve() in {db.resolve() for db in studies}:
        raise ValueError(f"{path} is a curve study this reads; write the points to another file")
    check_provenance(provenance, ("format", "version", "measures", "points"), "a learning-curves file")
    points = [point for db in studies for point in study_points(db, progress)]
    document = {"format": CURVES_FORMAT, "version": 1, "measures": list(CURVE_MEASURES), "points": points,
                **provenance}  # fmt: skip
    write_checked(path, json_text(document, path, indent=None), load_learning_curves, "learning curves")
    return len(points)


def load_learning_curves(path: str | Path = CURVES_FILE):
    """The points file as a pandas ``DataFrame``, one row per point, after checking every field.

    Raises
    ------
    ValueError
        Naming the field that is missing or wrong, and what it should be.
    """
    import pandas as pd

    document = read_json(path)
    where = Path(path).name
    if not isinstance(document, dict) or document.get("format") != CURVES_FORMAT:
        raise ValueError(f"{where}: format must be {CURVES_FORMAT!r}")
    if document.get("version") != 1:
        raise ValueError(f"{where}: version must be 1; got {document.get('version')!r}")
    if document.get("measures") != list(CURVE_MEASURES):
        raise ValueError(f"{where}: measures must be {list(CURVE_MEASURES)}")
    points = document.get("points")
    if not isinstance(points, list) or not points:
        raise ValueError(f"{where}: points must be a non-empty list")
    for k, point in enumerate(points):
        _check_point(point, f"{where}: points[{k}]")
    return pd.DataFrame(points)


def _check_point(point: Any, where: str) -> None:
    if not isinstance(point, dict):
        raise ValueError(f"{where} must be an object")
    for name in ("study", "system", "method"):
        if not isinstance(point.get(name), str) or not point[name]:
            raise ValueError(f"{where}: {name} must be a non-empty text")
    for name, low in (("cell", 0), ("seed", 0), ("task", 0), ("games", 1)):
        value = point.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{where}: {name} must be a whole number >= {low}; got {value!r}")
    for name, (low, high) in CURVE_MEASURES.items():
        value = point.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{where}: {name} must be a finite number; got {value!r}")
        if not low - 1e-9 <= value <= high + 1e-9:
            raise ValueError(f"{where}: {name} must lie from {low:g} to {high:g}; got {value!r}")
    extra = sorted(set(point) - {"study", "system", "method", "cell", "seed", "task", "games", *CURVE_MEASURES})
    if extra:
        raise ValueError(f"{where}: unknown field {extra[0]!r}")


def recheck_points(table, keys: Sequence[tuple[str, int, int, int]], folder: str | Path = STUDIES) -> int:
    """Measure the points of the tasks ``(study, cell, seed, task)`` again from their databases, and raise
    ``ValueError`` unless every measure is the same, bit for bit, as in ``table`` (:func:`load_learning_curves`).
    Returns the number of points compared."""
    compared = 0
    for study, cell, seed, task in keys:
        found = [p for p in study_points_of_task(Path(folder) / f"{study}.sqlite", cell, seed, task)]
        stored = table[(table.study == study) & (table.cell == cell) & (table.seed == seed) & (table.task == task)]
        if len(found) != len(stored) or not found:
            raise ValueError(f"{study}: task {(cell, seed, task)} has {len(stored)} points stored, {len(found)} now")
        for point, (_, row) in zip(found, stored.iterrows(), strict=True):
            for name in ("games", *CURVE_MEASURES):
                if point[name] != row[name]:
                    raise ValueError(f"{study}: task {(cell, seed, task)} gives {name} = {point[name]!r}, "
                                     f"stored {row[name]!r}")  # fmt: skip
            compared += 1
    return compared


def study_points_of_task(db: Path, cell: int, seed: int, task: int) -> list[dict]:
    """The points of one task of a curve study, measured now (as :func:`study_points` measures them)."""
    with SweepStore(db) as store:
        definition = store.definition
        found = store.connection.execute(
            "SELECT player FROM tasks WHERE cell = ? AND seed = ? AND task = ?", (cell, seed, task)
        ).fetchone()
    if found is None:
        raise ValueError(f"{db}: no task (cell {cell}, seed {seed}, task {task}) recorded")
    system = get_system(definition["system"])
    return _task_points(system, grid_cells(system, definition["grid"])[cell], task, found[0])


# --- Summaries --------------------------------------------------------------------------------------------------


def curve_summary(table):
    """Each method at each length of training: ``n`` runs, the mean Fogel score with its 95% bootstrap interval,
    and for each question of :data:`NEVER_LOSES` the share of runs whose player never loses, with its 95% Wilson
    interval (columns ``never_<measure>``, ``..._low``, ``..._high``)."""
    import pandas as pd

    rows = []
    for (method, games), runs in table.groupby(["method", "games"], sort=True):
        score = Sample("mean", tuple(runs["fogel_score"]), "").interval()
        row = {"method": method, "system": runs["system"].iloc[0], "games": int(games), "n": len(runs),
               "fogel_score": score[0], "fogel_score_low": score[1], "fogel_score_high": score[2]}  # fmt: skip
        for measure in NEVER_LOSES.values():
            share = Sample("share", tuple(float(v == 0.0) for v in runs[measure]), "").interval()
            row |= {f"never_{measure}": share[0], f"never_{measure}_low": share[1],
                    f"never_{measure}_high": share[2]}  # fmt: skip
        rows.append(row)
    return pd.DataFrame(rows)


NEVER_LOSES_CLAIM = Measure("share of runs whose player never loses", 0.0, 1.0, unit="%")
"""The measure of :func:`games_until`: a share of runs, from 0 to 1."""


def games_until(table, measure: str) -> dict[str, tuple[int | None, str]]:
    """For each method, the fewest games after which most of its runs' players never lose on ``measure`` (a measure
    of :data:`NEVER_LOSES`), and the share at that length in words.

    A length *gives* it when the share's whole 95% Wilson interval lies above :data:`MOST_RUNS`, as the one verdict
    rule decides whether a cell gives a claim (:meth:`evolving_ttt.verdicts.Claim.gives`); the answer is the first
    length from which every longer one gives it too, so that one lucky length cannot answer alone. ``None`` (with
    the share at the longest length) when no such length was tried.
    """
    if measure not in NEVER_LOSES.values():
        raise ValueError(f"measure must be one of {', '.join(NEVER_LOSES.values())}; got {measure!r}")
    answers = {}
    for method, runs in table.groupby("method", sort=False):
        lengths = sorted(runs["games"].unique())
        seeds = f"{runs['seed'].min()} to {runs['seed'].max()}"
        samples = {g: Sample("share", tuple(float(v == 0.0) for v in runs[runs.games == g][measure]), seeds)
                   for g in lengths}  # fmt: skip
        gives = {g: _gives(samples[g]) for g in lengths}
        first = next((g for k, g in enumerate(lengths) if all(gives[h] for h in lengths[k:])), None)
        shown = samples[first if first is not None else lengths[-1]]
        answers[method] = (None if first is None else int(first), interval_text(NEVER_LOSES_CLAIM, shown))
    return answers


MOST_RUNS_RULE = Claim("learning curves", "most runs' players never lose", "", NEVER_LOSES_CLAIM, MOST_RUNS,
                       "above", bound=Bound(1.0, "a share is at most 1"))  # fmt: skip
"""The question of :func:`games_until` as a claim of the one verdict rule, whose test decides each length."""


def _gives(sample: Sample) -> bool:
    """Whether the share's whole 95% interval lies above :data:`MOST_RUNS`, by the verdict rule's test."""
    return MOST_RUNS_RULE.gives(sample)


def learning_glance(table):
    """The chapter's table at a glance: for each method, the answer of :func:`games_until` to each question of
    :data:`NEVER_LOSES` (``games`` or ``None``, and the share in words), and its mean Fogel score at its longest
    training with the 95% interval.

    Returns
    -------
    pandas.DataFrame
        One row per method, in the order of the points: ``method``, ``system``, ``longest`` (games), for each
        question ``<measure>`` (the games, or ``None``) and ``<measure>_share`` (words), then ``fogel_score``,
        ``fogel_score_low`` and ``fogel_score_high`` at the longest training. The games are pandas' nullable
        whole numbers (``pd.NA`` where the method does not get there).
    """
    import pandas as pd

    summary = curve_summary(table)
    rows = []
    for method in dict.fromkeys(table["method"]):
        last = summary[summary["method"] == method].iloc[-1]
        row = {"method": method, "system": last["system"], "longest": int(last["games"])}
        for measure in NEVER_LOSES.values():
            games, words = games_until(table[table["method"] == method], measure)[method]
            row |= {measure: games, f"{measure}_share": words}
        row |= {name: float(last[name]) for name in ("fogel_score", "fogel_score_low", "fogel_score_high")}
        rows.append(row)
    glance = pd.DataFrame(rows)
    for measure in NEVER_LOSES.values():  # whole numbers of games, or missing (pandas' nullable integers)
        glance[measure] = pd.array([row[measure] for row in rows], dtype="Int64")
    return glance


def learning_markdown(glance, ceiling: float, link: str = "{{doc}}`{chapter}`") -> str:
    """:func:`learning_glance` as the Findings page's Markdown: one line per method (chapter 27)."""
    lines = ["**Evolution beside learning and search: games played until most runs' players never lose** "
             f"(shown in {link.format(chapter='27_learning_and_search')}).", ""]  # fmt: skip
    for row in glance.itertuples(index=False):
        answers = []
        for words, measure in NEVER_LOSES.items():
            games = getattr(row, measure)
            answers.append(f"{words}: not within {row.longest:,}" if _missing(games)
                           else f"{words}: {int(games):,} games")  # fmt: skip
        unit = " (positions looked at, not games)" if row.system == "ling-lam" else ""
        lines.append(f"- {row.method}{unit}: {'; '.join(answers)}. Fogel's score at {row.longest:,}: "
                     f"{row.fogel_score:.2f} (95% interval {row.fogel_score_low:.2f} to {row.fogel_score_high:.2f}; "
                     f"ceiling {ceiling:.2f}).")  # fmt: skip
    return "\n".join(lines)


def _missing(value: Any) -> bool:
    """Whether ``value`` is a missing number (``None``, NaN or pandas' ``NA``)."""
    import pandas as pd

    return value is None or bool(pd.isna(value))
