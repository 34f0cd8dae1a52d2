"""Robustness studies (evolving_ttt.studies, evolving_ttt.tables, the intervals of evolving_ttt.statistics):
summaries with 95% intervals, re-runs checked to the bit, the introduction's table, the committed databases."""

import math
import sqlite3

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from evolving_ttt import studies, tables
from evolving_ttt.fogel import study as fogel_study
from evolving_ttt.fogel.network import random_population
from evolving_ttt.rule_base import PAPER_RULES, OpponentRules
from evolving_ttt.statistics import mean_interval, share_interval, t_interval
from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import sweep
from evolving_ttt.systems import register_system, registered_systems, unregister_system

SMALL = {"parents": [6], "generations": [4, 6], "trials": [1]}


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    db = tmp_path_factory.mktemp("study") / "small.sqlite"
    table = sweep("fogel", SMALL, seeds=3, db=db, workers=1, progress=False)
    return db, table


def test_the_t_interval_is_students_and_needs_finite_numbers():
    mean, low, high = t_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5
    # t(3) = 3.182446..., sd = 1.290994..., sqrt(4) = 2
    assert math.isclose(high - mean, 3.182446305284263 * 1.2909944487358056 / 2, rel_tol=1e-12)
    assert math.isclose(mean - low, high - mean, rel_tol=1e-12)
    assert t_interval([0.75])[0] == 0.75 and all(math.isnan(v) for v in t_interval([0.75])[1:])
    for bad in ([], [1.0, float("nan")], [[1.0, 2.0]], ["a"]):
        with pytest.raises(ValueError, match="finite numbers"):
            mean_interval(bad)


def test_the_share_interval_is_wilsons_and_stays_within_zero_and_one():
    share, low, high = share_interval(43, 50)
    assert share == 0.86 and round(low, 4) == 0.7381 and round(high, 4) == 0.9305
    assert share_interval(0, 10)[1] == 0.0 and 0 < share_interval(0, 10)[2] < 0.31
    assert share_interval(10, 10)[2] == 1.0 and 0.69 < share_interval(10, 10)[1] < 1
    for k, n in ((3, 2), (-1, 5), (1, 0), (1.5, 3), (True, 3)):
        with pytest.raises(ValueError, match="share_interval"):
            share_interval(k, n)


def test_cell_summary_groups_by_the_swept_settings_with_intervals(small_sweep):
    _, table = small_sweep
    summary = tables.cell_summary(table, ["fogel_score", "points_random_x"])
    assert list(summary["generations"]) == [4, 6] and list(summary["n"]) == [3, 3]
    for generations, row in summary.set_index("generations").iterrows():
        values = table.loc[table["generations"] == generations, "fogel_score"].to_numpy()
        assert row["fogel_score"] == pytest.approx(values.mean(), rel=1e-14)
        assert values.min() <= row["fogel_score_low"] <= row["fogel_score"] <= row["fogel_score_high"] <= values.max()
    with pytest.raises(ValueError, match="no column 'speed'"):
        tables.cell_summary(table, ["speed"])
    with pytest.raises(ValueError, match="one or more measures"):
        tables.cell_summary(table, [])


def test_a_rerun_gives_the_recorded_bits_and_any_changed_bit_is_caught(small_sweep, tmp_path):
    db, table = small_sweep
    report = studies.rerun_check(db, count=3)
    assert list(zip(report["cell"], report["seed"], report["task"], strict=True)) == [(0, 1, 0), (0, 3, 0), (1, 3, 0)]
    assert studies.rerun_check(db, keys=[(1, 2, 0)])["same"].all()
    with pytest.raises(ValueError, match=r"no task .* \(0, 9, 0\)"):
        studies.rerun_check(db, keys=[(0, 9, 0)])
    # A measure changed by one unit in the last place, then a player changed by one character: both are caught.
    changed = tmp_path / "changed.sqlite"
    changed.write_bytes(db.read_bytes())
    with sqlite3.connect(changed) as connection:
        (measures,) = connection.execute("SELECT measures FROM tasks WHERE cell=0 AND seed=1").fetchone()
        score = table.loc[(table["cell"] == 0) & (table["seed"] == 1), "fogel_score"].item()
        bumped = measures.replace(repr(score), repr(float(np.nextafter(score, 99))))
        assert bumped != measures
        connection.execute("UPDATE tasks SET measures = ? WHERE cell=0 AND seed=1", (bumped,))
    with pytest.raises(ValueError, match="other values of fogel_score"):
        studies.rerun_check(changed, keys=[(0, 1, 0)])
    with sqlite3.connect(changed) as connection:
        connection.execute("UPDATE tasks SET player = player || ' ' WHERE cell=1 AND seed=2")
    with pytest.raises(ValueError, match="another player"):
        studies.rerun_check(changed, keys=[(1, 2, 0)])
    with pytest.raises(ValueError, match="count"):
        studies.rerun_check(db, count=0)
    # Every task (count=None) on two local processes: the rows come back in the order of the keys.
    every = studies.rerun_check(db, count=None, workers=2)
    assert list(zip(every["cell"], every["seed"], strict=True)) == [(c, s) for c in (0, 1) for s in (1, 2, 3)]


def test_the_build_check_takes_the_cheapest_tasks_within_its_budget(small_sweep, monkeypatch):
    db, table = small_sweep
    # Three studies that are one small sweep, read with known recorded times: the keys given first, then each
    # study's cheapest task in the order of its time, while the sum stays within the budget.
    times = {"a": [5.0, 1.0, 9.0, 2.0, 2.0, 2.0], "b": [3.0, 0.5, 4.0, 4.0, 4.0, 4.0], "c": [7.0] * 6}

    def study_table(name):
        found = table.copy()
        found["wall_time"] = times[name]
        return found

    monkeypatch.setattr(tables, "study_table", study_table)
    monkeypatch.setattr(tables, "study_path", lambda name: db)
    check = studies.build_check(["a", "b", "c"], seconds=7.2, keys={"c": [(1, 3, 0)]})
    keys = list(zip(check.reruns["study"], check.reruns["cell"], check.reruns["seed"], strict=True))
    assert keys == [("c", 1, 3)] and check.left == {"b": 0.5, "a": 1.0} and check.reruns["same"].all()
    check = studies.build_check(["a", "b", "c"], seconds=9.0)
    keys = list(zip(check.reruns["study"], check.reruns["cell"], check.reruns["seed"], strict=True))
    assert keys == [("a", 0, 2), ("b", 0, 2), ("c", 0, 1)] and check.left == {}
    assert list(check.reruns["recorded"]) == [1.0, 0.5, 7.0]
    text = check.text()
    assert "a: task (cell 0, seed 2, task 0) re-run, same bits: True (recorded 1.0 s)" in text
    assert "3 tasks of 3 databases, 8.5 s recorded (budget 9 s)" in text and "left to" not in text
    left = studies.build_check(["a", "b", "c"], seconds=7.0, keys={"c": [(0, 1, 0)]}).text()
    assert "left to the command line (their cheapest task recorded): b (0.5 s), a (1.0 s)\nevery task" in left
    for bad, message in ((0, "seconds"), (-1.0, "seconds"), ("9", "seconds")):
        with pytest.raises(ValueError, match=message):
            studies.build_check(["a"], seconds=bad)
    with pytest.raises(ValueError, match="not in names: d"):
        studies.build_check(["a"], seconds=9.0, keys={"d": [(0, 1, 0)]})
    with pytest.raises(ValueError, match=r"no task .* \(0, 9, 0\)"):
        studies.build_check(["a"], seconds=9.0, keys={"a": [(0, 9, 0)]})


def test_plot_intervals_draws_means_with_their_bars(small_sweep):
    _, table = small_sweep
    summary = tables.cell_summary(table, ["fogel_score"])
    ax = Figure().subplots()
    bars = studies.plot_intervals(ax, summary, "generations", "fogel_score")
    line = bars.lines[0]
    assert list(line.get_xdata()) == [4, 6] and list(line.get_ydata()) == list(summary["fogel_score"])
    with pytest.raises(ValueError, match="cell_summary"):
        studies.plot_intervals(ax, table, "generations", "fogel_score")


def test_study_names_are_checked():
    for bad in ("", "../x", "a/b", ".hidden"):
        with pytest.raises(ValueError, match="file name"):
            tables.study_path(bad)
    with pytest.raises(ValueError, match="no study 'no_such_study'"):
        tables.study_path("no_such_study")


class _Claiming:
    """A registered system's module stand-in: the Fogel module's names plus ``claims``."""

    def __init__(self, found):
        import evolving_ttt.fogel.system as fogel

        self.__dict__.update(
            {name: getattr(fogel, name) for name in dir(fogel) if not name.startswith("__") and name != "claims"}
        )
        self.name, self.command, self.command_aliases, self.found = "claiming", "claiming", (), found

    def claims(self):
        return self.found


@pytest.mark.slow
def test_at_a_glance_judges_the_claims_of_every_system_and_checks_them():
    from evolving_ttt.verdicts import Cell, Claim, Measure, Sample

    base = studies.at_a_glance()
    assert list(base.columns) == list(studies.GLANCE_COLUMNS)
    measure = Measure("share of runs", 0.0, 1.0, unit="%")
    claim = Claim("Test (2026)", "a test claim", "all of them", measure, 0.5, "above",
                  (Cell("the paper's", "paper", Sample("share", (1.0,) * 20, "1 to 20")),))  # fmt: skip
    register_system(_Claiming([claim]))
    try:
        table = studies.at_a_glance()
        assert len(table) == len(base) + 1 and table.iloc[-1]["verdict"] == "reproduces"
        assert "20 of 20 runs" in table.iloc[-1]["book"]
    finally:
        unregister_system("claiming")
    register_system(_Claiming([{"paper": "Test"}]))
    try:
        with pytest.raises(ValueError, match="claiming: claims"):
            studies.at_a_glance()
    finally:
        unregister_system("claiming")
    assert "claiming" not in {system.name for system in registered_systems()}


@pytest.mark.parametrize("path", sorted(tables.STUDIES.glob("*.sqlite")), ids=lambda p: p.name)
def test_committed_study_databases_are_small_complete_sweeps(path):
    # The largest, curves_q_learning, keeps 40 Q-tables of about 5,000 rows each (about 17 MB)
    assert path.stat().st_size < 20 * 2**20, f"{path.name} is over 20 MB"
    with SweepStore(path) as store:
        rows = store.rows()
        seeds = store.definition["seeds"]
        first = store.definition.get("first_seed", 1)
    assert seeds >= 10 and rows
    if path.name.startswith("confirm_"):  # held-out seeds: 20 of them, none of which chose the cell
        assert (first, seeds) == tables.CONFIRMATION_SEEDS
    table = pd.DataFrame(rows)
    assert table.groupby("cell")["seed"].nunique().eq(seeds).all(), f"{path.name}: a cell has missing seeds"


def test_a_sweep_table_reads_settings_a_system_leaves_out_at_their_default(tmp_path):
    # Al-Khateeb stores its newer readings (search depth, hall of fame) only where they differ from the paper's,
    # so the cell of depth 1 has no stored depth: the table takes the grid's value.
    grid = {"player.depth": [1, 2], "generations": [2], "runs": [1]}
    table = sweep("al-khateeb", grid, seeds=2, db=tmp_path / "depth.sqlite", workers=1, progress=False)
    assert table["player.depth"].tolist() == [1, 1, 2, 2]
    assert table["generations"].tolist() == [2, 2, 2, 2]
    with SweepStore(tmp_path / "depth.sqlite") as store:
        stored = [row["settings"]["player"] for row in store.rows()]
    assert "depth" not in stored[0] and stored[2]["depth"] == 2
    summary = tables.cell_summary(table, ["points_perfect_x"])
    assert summary["player.depth"].tolist() == [1, 2] and summary["n"].tolist() == [2, 2]


@pytest.mark.slow  # seconds (make test, not make test-fast)
def test_never_loses_many_is_the_tree_of_never_loses():
    # The control study's networks (every fifth) and random ones, under the paper's rules and the two other readings
    # of the rule base: the walk over move tables gives the readable tree's answer for every one.
    with SweepStore(tables.study_path("fogel_population")) as store:
        texts = [row["player"] for row in store.rows()][::5]
    networks = [fogel_study.network_from_text(text) for text in texts]
    population = random_population(np.random.default_rng(20), 12)
    networks += [population.network(i) for i in range(12)]
    for rules in (PAPER_RULES, OpponentRules(first_reply="rules"), OpponentRules(rule_d_lines="opponent")):
        expected = [fogel_study.never_loses(network, rules) for network in networks]
        assert fogel_study.never_loses_many(networks, rules) == expected
        assert any(expected) and not all(expected)
    assert fogel_study.never_loses_many([]) == []
    with pytest.raises(ValueError, match="rules"):
        fogel_study.never_loses_many(networks, rules="paper")
