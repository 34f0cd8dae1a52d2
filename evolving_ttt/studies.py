"""Robustness studies: reading the sweeps of chapters 20 to 23 (introduced in chapter 20).

A study is a handful of sweeps (:mod:`evolving_ttt.sweeps`) of one system, each varying one open reading or one
setting of its paper around the paper's own setting, with many seeds per cell. Their databases are committed to
``book/data/studies/``; this module reads them back:

- :func:`~evolving_ttt.tables.study_table` one database as a table and :func:`~evolving_ttt.tables.cell_summary` its
  cells as means with 95% intervals (both in :mod:`evolving_ttt.tables`, below the systems, which read them too);
- :func:`rerun_check` re-runs recorded tasks and checks that they give the same bits, which is how a chapter
  shows, in every build, that its database is what the code computes; :func:`build_check` picks a chapter's
  cheapest tasks within a budget of seconds (``sweep check`` on the command line re-runs every task);
- :func:`plot_intervals` draws a cell summary, means with their intervals;
- :func:`at_a_glance` gathers the findings: every system's headline claims (the ``claims()`` of the systems that
  state some), each judged by the one verdict rule (:mod:`evolving_ttt.verdicts`); :func:`glance_markdown` prints
  them as the introduction's table and :func:`findings_markdown` as the Findings page and the README's blocks.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from evolving_ttt.arena import reference_players
from evolving_ttt.parallel import TaskRunner
from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import grid_cells, sweep_share
from evolving_ttt.systems import get_system, registered_systems, system_reference
from evolving_ttt.verdicts import Claim, interval_text, verdict, verdict_text

GLANCE_COLUMNS = ("paper", "claim", "paper_figure", "measure", "book", "verdict", "reason", "chapter")
"""The columns of :func:`at_a_glance`: one row per claim."""


def _same(stored: Any, found: Any) -> bool:
    """Equal to the bit: floats compared by their exact value (NaN equal to NaN), everything else by ``==``."""
    if isinstance(stored, float) and isinstance(found, float):
        return stored == found or (math.isnan(stored) and math.isnan(found))
    return type(stored) is type(found) and stored == found


def rerun_check(
    db: str | Path,
    count: int | None = 2,
    keys: Sequence[tuple[int, int, int]] | None = None,
    workers: int = 1,
    scheduler: object = None,
    progress: bool | str = False,
):
    """Re-run recorded tasks of a sweep and check that they give the same bits (chapter 20).

    Parameters
    ----------
    db
        A sweep database, such as ``th.study_path("fogel_control")``.
    count
        How many tasks to re-run when ``keys`` is not given: the first recorded, the last, and the ones evenly
        between; ``None`` re-runs every recorded task.
    keys
        The tasks ``(cell, seed, task)`` to re-run.
    workers, scheduler
        Where the tasks run (:class:`evolving_ttt.parallel.TaskRunner`): one worker (the default) runs them here,
        one after another; more run them in local processes, or on a Dask cluster.
    progress
        A bar over the tasks.

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

    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise ValueError(f"rerun_check: count must be a whole number >= 1, or None for every task; got {count!r}")
    with SweepStore(db) as store:
        definition, rows = store.definition, store.rows()
    if not rows:
        raise ValueError(f"{db}: the sweep has no recorded task to re-run")
    recorded = {(row["cell"], row["seed"], row["task"]): row for row in rows}
    if keys is None:
        order = list(recorded)
        count = len(order) if count is None else count
        picks = sorted({round(i * (len(order) - 1) / max(count - 1, 1)) for i in range(min(count, len(order)))})
        keys = [order[i] for i in picks]
    keys = [tuple(int(part) for part in key) for key in keys]
    for key in keys:
        if key not in recorded:
            raise ValueError(f"{db}: no task (cell, seed, task) = {key} is recorded")
    system = get_system(definition["system"])
    cells = grid_cells(system, definition["grid"])
    report = []

    def compare(_: int, results: list[dict]) -> None:
        for found in results:
            key, stored = tuple(found["key"]), recorded[tuple(found["key"])]
            found_measures = json.loads(json.dumps(found["measures"]))
            differ = [name for name in stored["measures"] | found_measures
                      if not _same(stored["measures"].get(name), found_measures.get(name))]  # fmt: skip
            if differ:
                raise ValueError(f"{db}: task {key} gives other values of {', '.join(sorted(differ))} than recorded")
            if found["player"] != stored["player"]:
                raise ValueError(f"{db}: task {key} gives another player than recorded")
            report.append({"cell": key[0], "seed": key[1], "task": key[2], "wall_time": found["wall_time"],
                           "same": True})  # fmt: skip

    shares = [[(cell, seed, task, cells[cell])] for cell, seed, task in keys]
    with TaskRunner(workers, scheduler) as runner:
        runner.map(partial(sweep_share, system_reference(system)), shares, progress, f"check {Path(db).name}",
                   reference_players, compare)  # fmt: skip
    order = {key: k for k, key in enumerate(keys)}
    return pd.DataFrame(sorted(report, key=lambda row: order[(row["cell"], row["seed"], row["task"])]))


@dataclass(frozen=True)
class BuildCheck:
    """What :func:`build_check` re-ran of a chapter's studies, and what it left to the command line.

    Attributes
    ----------
    reruns
        One row per task re-run: ``study``, ``cell``, ``seed``, ``task``, ``recorded`` (the wall time the database
        holds, in seconds) and ``same`` (always ``True``: any difference raises).
    left
        The studies not re-run, each with the recorded wall time of its cheapest task.
    seconds
        The budget: the most recorded wall time the tasks re-run may add up to.
    """

    reruns: Any
    left: dict[str, float]
    seconds: float

    def text(self) -> str:
        """The report a chapter prints: every task re-run, then the studies left and the command that checks one."""
        lines = [f"{row.study}: task (cell {row.cell}, seed {row.seed}, task {row.task}) re-run, same bits: "
                 f"{bool(row.same)} (recorded {row.recorded:.1f} s)" for row in self.reruns.itertuples()]  # fmt: skip
        lines.append(f"{len(self.reruns)} tasks of {self.reruns['study'].nunique()} databases, "
                     f"{self.reruns['recorded'].sum():.1f} s recorded (budget {self.seconds:g} s)")  # fmt: skip
        if self.left:
            cheapest = ", ".join(f"{name} ({seconds:.1f} s)" for name, seconds in self.left.items())
            lines += textwrap.wrap(f"left to the command line (their cheapest task recorded): {cheapest}", 116,
                                   subsequent_indent="    ", break_on_hyphens=False)  # fmt: skip
            lines.append(f"every task of one: python -m ttt_helpers sweep check --db {STUDIES_FOLDER}/NAME.sqlite")
        return "\n".join(lines)


BUILD_CHECK_SECONDS = 30.0
"""The most recorded wall time the tasks a study chapter re-runs in every build may add up to (:func:`build_check`)."""

STUDIES_FOLDER = "book/data/studies"
"""Where the committed study databases are, as a command run from the project's folder names them."""


def build_check(names: Sequence[str], seconds: float, keys: dict[str, Sequence[tuple[int, int, int]]] | None = None):
    """Re-run, within a budget, the cheapest recorded task of each of a chapter's studies (chapters 21 to 23).

    The tasks named in ``keys`` (a study's name to its tasks) are always re-run. Then each other study's cheapest
    task, by the wall time its database records, is taken in the order of that time, as long as the recorded
    times of all the tasks taken stay within ``seconds``. The choice depends only on the committed databases, so
    a build re-runs the same tasks on every machine. The studies left out are named with their cheapest task's
    time; ``python -m ttt_helpers sweep check --db DB`` re-runs every task of one (on all cores, or a cluster).

    Returns
    -------
    BuildCheck

    Raises
    ------
    ValueError
        If a name is not a study, a key not recorded, ``seconds`` not positive, or a re-run differs.
    """
    import pandas as pd

    from evolving_ttt.tables import study_path, study_table

    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
        raise ValueError(f"build_check: seconds must be a number > 0; got {seconds!r}")
    keys = dict(keys or {})
    unknown = sorted(set(keys) - set(names))
    if unknown:
        raise ValueError(f"build_check: keys names studies not in names: {', '.join(unknown)}")
    chosen: dict[str, list[tuple[int, int, int]]] = {}
    spent, cheapest = 0.0, {}
    for name in names:
        table = study_table(name)
        times = {(int(c), int(s), int(t)): float(w) for c, s, t, w in
                 zip(table["cell"], table["seed"], table["task"], table["wall_time"], strict=True)}  # fmt: skip
        for key in keys.get(name, []):
            key = tuple(int(part) for part in key)
            if key not in times:
                raise ValueError(f"{name}: no task (cell, seed, task) = {key} is recorded")
            chosen.setdefault(name, []).append(key)
            spent += times[key]
        if name not in keys:
            key = min(times, key=lambda k: (times[k], k))
            cheapest[name] = (times[key], key)
    left = {}
    for name, (cost, key) in sorted(cheapest.items(), key=lambda item: (item[1][0], item[0])):
        if spent + cost <= seconds:
            chosen[name] = [key]
            spent += cost
        else:
            left[name] = cost
    rows = []
    for name in names:
        if name not in chosen:
            continue
        table = study_table(name).set_index(["cell", "seed", "task"])
        report = rerun_check(study_path(name), keys=chosen[name])
        for row in report.itertuples():
            recorded = float(table.loc[(row.cell, row.seed, row.task), "wall_time"])
            rows.append({"study": name, "cell": row.cell, "seed": row.seed, "task": row.task, "recorded": recorded,
                         "same": bool(row.same)})  # fmt: skip
    return BuildCheck(pd.DataFrame(rows), left, float(seconds))


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


def all_claims() -> list[Claim]:
    """Every registered system's headline claims (the optional ``claims()`` of a system), in the book's order."""
    found = []
    for system in registered_systems():
        stated = getattr(system, "claims", None)
        for claim in stated() if stated is not None else ():
            if not isinstance(claim, Claim):
                raise ValueError(f"{system.name}: claims() must give evolving_ttt.verdicts.Claim objects; got "
                                 f"{type(claim).__name__}")  # fmt: skip
            found.append(claim)
    return found


def systems_without_claims() -> list[str]:
    """The titles of the registered systems that state no claims (they have no ``claims()``): the table at a glance
    has no row for them, and says so under the table (:func:`glance_markdown`, :func:`findings_markdown`)."""
    return [system.title for system in registered_systems() if getattr(system, "claims", None) is None]


def _no_claims_note() -> list[str]:
    silent = systems_without_claims()
    return [f"Registered systems that state no claims to judge: {', '.join(silent)}."] if silent else []


def at_a_glance(claims: Sequence[Claim] | None = None):
    """The findings: every registered system's headline claims (or ``claims``, as :func:`all_claims` gave them),
    judged by the one verdict rule (:func:`evolving_ttt.verdicts.verdict`), one row each, with the columns of
    :data:`GLANCE_COLUMNS`.

    ``book`` is what the paper's own setting gives (or, for a claim judged by a bound, the bound); ``verdict`` the
    rule's category; ``reason`` why, with the interval it rests on (held-out seeds for a setting chosen as the best of
    many); ``chapter`` the chapter that shows it.
    """
    import pandas as pd

    rows = []
    for claim in all_claims() if claims is None else claims:
        found = verdict(claim)
        paper = next((cell for cell in claim.cells if cell.change == "paper"), None)
        if paper is not None:
            book = interval_text(claim.measure, paper.sample)
        else:  # a claim judged by its bound alone
            book = f"at most {claim.measure.text(claim.bound.value)}, the best any player can do"
        rows.append({"paper": claim.paper, "claim": claim.claim, "paper_figure": claim.paper_figure,
                     "measure": claim.measure.name, "book": book, "verdict": found.category,
                     "reason": verdict_text(claim, found).split(": ", 1)[1], "chapter": claim.chapter})  # fmt: skip
    return pd.DataFrame(rows, columns=list(GLANCE_COLUMNS))


GLANCE_HEADINGS = ("paper", "claim", "the paper's figure", "the book, paper's setting", "verdict")
"""The headings of the table at a glance (the first columns of :data:`GLANCE_COLUMNS` but ``measure``)."""


def glance_markdown(table=None) -> str:
    """The table at a glance (:func:`at_a_glance`) as a Markdown table of five columns, as the introduction shows
    it: paper, claim, the paper's figure, what the paper's setting gives in the book, and the verdict."""
    table = at_a_glance() if table is None else table
    columns = ("paper", "claim", "paper_figure", "book", "verdict")
    lines = ["| " + " | ".join(GLANCE_HEADINGS) + " |", "|" + "---|" * len(GLANCE_HEADINGS)]
    for _, row in table.iterrows():
        lines.append("| " + " | ".join(str(row[c]).replace("|", "/") for c in columns) + " |")
    return "\n\n".join(["\n".join(lines), *_no_claims_note()])


def findings_markdown(table=None, link: str = "{{doc}}`{chapter}`") -> str:
    """The findings (:func:`at_a_glance`) as Markdown blocks, one per claim: the claim, the paper's figure, the
    book's figure under the paper's setting, the verdict in the rule's words and why, and the chapter that shows it
    (``link`` is a format string of ``chapter``: a MyST cross-reference in the book, a link to the notebook in the
    README)."""
    table = at_a_glance() if table is None else table
    blocks = []
    for _, row in table.iterrows():
        blocks.append("\n".join([
            f"**{row['paper']}: {row['claim']}.** *{row['verdict'].capitalize()}.*",
            "",
            f"- The paper: {row['paper_figure']}.",
            f"- The measure: {row['measure']}.",
            f"- The book, at the paper's setting: {row['book']}.",
            f"- Why: {row['reason']}.",
            f"- Shown in: {link.format(chapter=row['chapter'])}.",
        ]))  # fmt: skip
    return "\n\n".join([*blocks, *_no_claims_note()])
