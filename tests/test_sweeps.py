"""Sweeps (evolving_ttt.sweeps, evolving_ttt.store): keys and grids, the database, resuming after a crash,
concurrent runners, and a sweep on a Dask LocalCluster equal to the local one."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from evolving_ttt.arena import measure
from evolving_ttt.cli import main
from evolving_ttt.fogel.evolution import FogelSettings
from evolving_ttt.kit import settings_keys
from evolving_ttt.numerics import NUMERICS
from evolving_ttt.store import SweepStore, describe_definition
from evolving_ttt.sweeps import (
    grid_cells,
    parse_grid,
    remeasure,
    sweep,
    sweep_definition,
    sweep_player,
    sweep_tasks,
)
from evolving_ttt.systems import get_system
from evolving_ttt.tables import YARDSTICKS, sweep_table

FOGEL = get_system("fogel")
# A small grid: 2 cells x 4 seeds x 1 trial = 8 tasks, under a second each.
SMALL = ["parents=6", "generations=4,6", "trials=1"]
VARIABLE = ["wall_time", "worker"]  # the only columns that may differ between two runs of one sweep


def fixed(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns=VARIABLE).reset_index(drop=True)


def test_every_setting_has_a_dotted_key_with_its_type():
    keys = settings_keys(FOGEL.PAPER_SETTINGS)
    assert keys["mutation.weight_spread"] is float and keys["parents"] is int
    assert keys["selection.ties_win"] is bool and keys["rules.rule_d_lines"] is str
    assert set(settings_keys(get_system("al-khateeb").PAPER_SETTINGS)) >= {"player.view", "population"}
    assert "methods" in settings_keys(get_system("ling-lam").PAPER_SETTINGS)


def test_the_issues_example_is_two_cells_of_three_seeds_of_one_trial():
    grid = parse_grid(FOGEL, ["mutation.weight_spread=0.02,0.05", "generations=60", "trials=1"])
    cells = grid_cells(FOGEL, grid)
    assert [c.mutation.weight_spread for c in cells] == [0.02, 0.05]
    assert all(c.generations == 60 and c.trials == 1 and c.parents == 50 for c in cells)
    tasks = sweep_tasks(FOGEL, sweep_definition(FOGEL, grid, 3))
    assert tasks == [(c, s, 0) for c in (0, 1) for s in (1, 2, 3)]


def test_values_of_every_type_parse_and_the_grid_is_their_product_first_key_slowest():
    grid = parse_grid(FOGEL, ["selection.payoff=1/-10/0,1/-1/0", "selection.ties_win=true,false", "parents=6"])
    cells = grid_cells(FOGEL, grid)
    assert [(c.selection.payoff, c.selection.ties_win) for c in cells] == [
        ((1.0, -10.0, 0.0), True), ((1.0, -10.0, 0.0), False), ((1.0, -1.0, 0.0), True), ((1.0, -1.0, 0.0), False)
    ]  # fmt: skip
    ling_lam = get_system("ling-lam")
    (cell,) = grid_cells(ling_lam, parse_grid(ling_lam, ["methods=nndtf/baseline-improved-ga"]))
    assert cell.methods == ("nndtf", "baseline-improved-ga") and ling_lam.task_count(cell) == 40


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("mutation.foo=1", r"--set mutation.foo: fogel has no setting 'mutation.foo'; its settings are parents, "),
        ("parents=two", r"--set parents=two: expected a whole number \(the setting is a whole number\)"),
        ("parents=0", r"--set parents=0: parents must be a whole number >= 1; got 0"),
        ("mutation.weight_spread=nan", r"--set mutation.weight_spread=nan: expected a finite number"),
        ("rules.rule_d_lines=theirs", r"--set rules.rule_d_lines=theirs: .*rule_d_lines"),
        ("selection.payoff=1/2", r"--set selection.payoff=1/2: expected 3 values separated by '/'"),
        ("selection.ties_win=maybe", r"--set selection.ties_win=maybe: expected true or false"),
        ("generations=", r"--set generations=: give one or more values separated by commas"),
        ("generations=5,,6", r"give one or more values separated by commas"),
        ("generations", r"expected KEY=V1,V2,..."),
    ],
)
def test_a_bad_key_or_value_is_one_clear_line(assignment, message):
    with pytest.raises(ValueError, match=message):
        parse_grid(FOGEL, [assignment])


def test_a_key_given_twice_and_a_bad_seed_count_are_refused():
    with pytest.raises(ValueError, match="the key is given twice"):
        parse_grid(FOGEL, ["trials=1", "trials=2"])
    with pytest.raises(ValueError, match="--seeds must be a whole number >= 1"):
        sweep_definition(FOGEL, [], 0)


def test_a_sweep_records_every_task_once_and_a_second_run_adds_nothing(tmp_path):
    db = tmp_path / "s.sqlite"
    table = sweep("fogel", SMALL, 4, db, workers=2, progress=False)
    assert len(table) == 8 and list(table.columns[:6]) == ["cell", "seed", "task", "parents", "generations", "trials"]
    assert set(YARDSTICKS) <= set(table.columns) and "best_score_last" in table.columns
    assert table["generations"].tolist() == [4] * 4 + [6] * 4 and table["seed"].tolist() == [1, 2, 3, 4] * 2
    # every task's result is the system's own task, measured on the arena's yardsticks
    settings = FogelSettings(parents=6, generations=6, trials=1)
    run = FOGEL.run_tasks(settings, 3, [0])[0]
    row = table[(table.cell == 1) & (table.seed == 3)].iloc[0]
    assert row["best_score_last"] == run.best_score[0, -1]
    player = sweep_player(db, 1, 3, 0)
    assert np.array_equal(player.x_policy, FOGEL.policy_tables(run.best_network(0))[0])
    assert measure(player).protocol_score == row["fogel_score"]
    before = {r["finished"] for r in SweepStore(db).rows()}
    again = sweep("fogel", SMALL, 4, db, workers=1, progress=False)
    assert fixed(again).equals(fixed(table))
    assert {r["finished"] for r in SweepStore(db).rows()} == before  # nothing ran again


def test_a_different_sweep_on_the_same_database_is_refused(tmp_path):
    db = tmp_path / "s.sqlite"
    sweep("fogel", ["parents=6", "generations=2", "trials=1"], 1, db, workers=1, progress=False)
    with pytest.raises(ValueError, match="holds another sweep .* Give another --db file"):
        sweep("fogel", ["parents=6", "generations=3", "trials=1"], 1, db, workers=1, progress=False)
    with pytest.raises(ValueError, match="holds another sweep"):
        sweep("fogel", ["parents=6", "generations=2", "trials=1"], 2, db, workers=1, progress=False)
    (tmp_path / "junk.sqlite").write_text("not a database at all" * 100)
    with pytest.raises(ValueError, match="not a sweep database"):
        sweep_table(tmp_path / "junk.sqlite")
    with pytest.raises(ValueError, match="no such sweep database"):
        sweep_table(tmp_path / "missing.sqlite")


def test_a_sweep_made_with_other_numerics_is_never_resumed_with_these(tmp_path):
    db = tmp_path / "s.sqlite"
    sweep("fogel", ["parents=6", "generations=2", "trials=1"], 1, db, workers=1, progress=False)
    with SweepStore(db) as store:
        assert store.definition["numerics"] == NUMERICS
    connection = sqlite3.connect(db)
    stored = json.loads(connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()[0])
    del stored["numerics"]  # as a database made before the portable numerics is
    connection.execute("UPDATE sweep SET definition = ? WHERE id = 1", (json.dumps(stored, sort_keys=True),))
    connection.commit()
    connection.close()
    with pytest.raises(ValueError, match=r"made with other numerics \(numpy's functions .*\); this code computes with "
                                         r"portable-1, and the two do not mix"):  # fmt: skip
        sweep("fogel", ["parents=6", "generations=2", "trials=1"], 1, db, workers=1, progress=False)


def test_remeasure_copies_a_sweep_with_its_yardsticks_measured_again(tmp_path):
    db, copy = tmp_path / "s.sqlite", tmp_path / "copy.sqlite"
    sweep("fogel", ["parents=6", "generations=2", "trials=1"], 2, db, workers=1, progress=False)
    connection = sqlite3.connect(db)
    stored = json.loads(connection.execute("SELECT definition FROM sweep WHERE id = 1").fetchone()[0])
    del stored["numerics"]  # as a database made before the portable numerics is
    connection.execute("UPDATE sweep SET definition = ? WHERE id = 1", (json.dumps(stored, sort_keys=True),))
    measures = json.loads(connection.execute("SELECT measures FROM tasks WHERE seed = 1").fetchone()[0])
    right = measures["fogel_score"]
    measures["fogel_score"] = right + 1e-9  # a yardstick computed otherwise
    connection.execute("UPDATE tasks SET measures = ? WHERE seed = 1", (json.dumps(measures),))
    connection.commit()
    connection.close()
    assert remeasure(db, copy, numerics=NUMERICS) == 2
    kept = tmp_path / "kept.sqlite"
    assert remeasure(db, kept) == 2
    with SweepStore(db) as source, SweepStore(copy) as target, SweepStore(kept) as same_record:
        assert target.definition == {**source.definition, "numerics": NUMERICS}
        assert same_record.definition == source.definition  # no numerics recorded unless given
        before, after = source.rows(), target.rows()
    assert before[0]["measures"]["fogel_score"] == right + 1e-9 and after[0]["measures"]["fogel_score"] == right
    assert [r["player"] for r in before] == [r["player"] for r in after]
    assert after[1]["measures"] == before[1]["measures"]  # nothing else moved
    with pytest.raises(ValueError, match="exists: remeasure writes a new database and replaces none"):
        remeasure(db, copy)


def command(db, *extra):
    return [sys.executable, "-m", "ttt_helpers", "sweep", "run", "fogel", *(a for s in SMALL for a in ("--set", s)),
            "--seeds", "4", "--db", str(db), "--quiet", *extra]  # fmt: skip


def recorded(db) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as connection:
            return connection.execute("SELECT count(*) FROM tasks").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_a_sweep_killed_part_way_resumes_to_the_table_of_an_uninterrupted_one(tmp_path, repo_root):
    whole = fixed(sweep("fogel", SMALL, 4, tmp_path / "whole.sqlite", workers=1, progress=False))
    db = tmp_path / "killed.sqlite"
    process = subprocess.Popen(command(db, "--workers", "1"), cwd=repo_root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 120
    while recorded(db) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partway = recorded(db)
    assert 2 <= partway < 8, "the sweep was not killed part way"
    done = subprocess.run(command(db, "--workers", "2"), cwd=repo_root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "8 of 8 tasks done"
    assert fixed(sweep_table(db)).equals(whole)


@pytest.mark.slow
def test_two_runners_on_one_database_record_every_task_once(tmp_path, repo_root):
    whole = fixed(sweep("fogel", SMALL, 4, tmp_path / "whole.sqlite", workers=1, progress=False))
    db = tmp_path / "shared.sqlite"
    runners = [subprocess.Popen(command(db, "--workers", "1"), cwd=repo_root, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(2)]  # fmt: skip
    outputs = [runner.communicate(timeout=300) for runner in runners]
    assert [runner.returncode for runner in runners] == [0, 0], outputs
    assert recorded(db) == 8
    assert fixed(sweep_table(db)).equals(whole)


@pytest.mark.slow
def test_a_sweep_on_a_two_worker_dask_cluster_equals_the_local_one(tmp_path, dask_address):
    local = fixed(sweep("fogel", SMALL, 2, tmp_path / "local.sqlite", workers=2, progress=False))
    remote = sweep("fogel", SMALL, 2, tmp_path / "dask.sqlite", scheduler=dask_address, progress=False)
    assert fixed(remote).equals(local)
    assert remote["worker"].nunique() == 2 and os.getpid() not in {int(w.split(":")[1]) for w in remote["worker"]}


def test_the_commands_status_and_export(tmp_path, capsys):
    db, csv = tmp_path / "s.sqlite", tmp_path / "s.csv"
    with pytest.raises(SystemExit):
        main(["sweep", "status", "--db", str(db)])
    assert "no such sweep database" in capsys.readouterr().err
    assert main(["sweep", "run", "fogel", "--set", "parents=6", "--set", "generations=2", "--set", "trials=1,2",
                 "--seeds", "2", "--db", str(db), "--quiet", "--workers", "1"]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip() == "6 of 6 tasks done"
    assert main(["sweep", "status", "--db", str(db)]) == 0
    assert capsys.readouterr().out.strip() == "6 of 6 tasks done"
    assert main(["sweep", "export", "--db", str(db), "--csv", str(csv)]) == 0
    exported = pd.read_csv(csv)
    assert len(exported) == 6 and exported["trials"].tolist() == [1, 1, 2, 2, 2, 2]
    assert np.allclose(exported["fogel_score"], sweep_table(db)["fogel_score"], rtol=0, atol=1e-12)
    with pytest.raises(SystemExit):
        main(["sweep", "run", "fogel", "--set", "mutation.foo=1", "--seeds", "1", "--db", str(tmp_path / "n.sqlite")])
    err = capsys.readouterr().err
    assert "fogel has no setting 'mutation.foo'" in err and "Traceback" not in err
    assert not (tmp_path / "n.sqlite").exists()
    with pytest.raises(SystemExit):
        main(["sweep", "run", "chess", "--seeds", "1", "--db", str(db)])
    assert "invalid choice: 'chess'" in capsys.readouterr().err


def test_held_out_seeds_run_from_the_first_seed_and_are_their_own_sweep(tmp_path):
    grid = ["parents=6", "generations=2", "trials=1"]
    low = sweep("fogel", grid, 2, tmp_path / "low.sqlite", workers=1, progress=False)
    held = sweep("fogel", grid, 2, tmp_path / "held.sqlite", workers=1, progress=False, first_seed=1001)
    assert sorted(held["seed"]) == [1001, 1002] and sorted(low["seed"]) == [1, 2]
    assert held["fogel_score"].tolist() != low["fogel_score"].tolist()
    with SweepStore(tmp_path / "held.sqlite") as store:
        assert store.definition["first_seed"] == 1001 and "--first-seed 1001" in describe_definition(store.definition)
    with SweepStore(tmp_path / "low.sqlite") as store:
        assert "first_seed" not in store.definition  # the sweeps made before it keep their definition
    again = sweep("fogel", grid, 2, tmp_path / "held.sqlite", workers=1, progress=False, first_seed=1001)
    assert again["fogel_score"].tolist() == held["fogel_score"].tolist()
    with pytest.raises(ValueError, match="holds another sweep"):
        sweep("fogel", grid, 2, tmp_path / "held.sqlite", workers=1, progress=False)
    for bad in (0, -3, True, 1.5):
        with pytest.raises(ValueError, match="--first-seed must be a whole number"):
            sweep("fogel", grid, 2, tmp_path / "bad.sqlite", workers=1, progress=False, first_seed=bad)


def test_every_studys_command_makes_the_sweep_its_committed_database_holds():
    import shlex

    from evolving_ttt.records import STUDIES
    from evolving_ttt.tables import study_command

    for path in sorted(STUDIES.glob("*.sqlite")):
        words = shlex.split(study_command(path.stem))
        assert words[:5] == ["python", "-m", "ttt_helpers", "sweep", "run"]
        system = get_system(words[5])
        options = dict(zip(words[6::2], words[7::2], strict=True))
        assignments = [value for option, value in zip(words[6::2], words[7::2], strict=True) if option == "--set"]
        first = int(options.get("--first-seed", 1))
        made = sweep_definition(system, parse_grid(system, assignments), int(options["--seeds"]), first)
        with SweepStore(path) as store:
            stored = store.definition
        assert {**made, "numerics": None} == {**stored, "numerics": None}, path.name
        assert options["--db"] == f"book/data/studies/{path.name}"
