"""Reliability, second pass (issue 37): each numbered case of the issue ends in exit 0 with the right file or in one
line ``error:`` with exit 2, no file or database created or changed; and the settings of every registered system
go through one validation, tried with generated values.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tempfile
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from test_cli_inputs import files, no_run, refused, run_main  # noqa: F401 - no_run is a fixture

from evolving_ttt import cli, kit, records, sweeps, systems
from evolving_ttt.game import LARGEST_SETTING


@pytest.fixture(scope="module")
def sweep_db(tmp_path_factory) -> Path:
    """A finished sweep of one tiny task."""
    folder = tmp_path_factory.mktemp("sweep")
    db = folder / "p.sqlite"
    code, _, err, escaped = run_main(["sweep", "run", "fogel", "--set", "generations=2", "--set", "trials=1",
                                      "--set", "parents=6", "--seeds", "1", "--db", str(db), "--quiet",
                                      "--workers", "1"])  # fmt: skip
    assert code == 0 and escaped is None, err
    return db


# 1. An output may not be an input, even with --force.


def test_sweep_export_refuses_to_write_its_csv_over_its_database(sweep_db, tmp_path, capsys):
    db = tmp_path / "p.csv"
    db.write_bytes(sweep_db.read_bytes())
    refused(["sweep", "export", "--db", str(db), "--csv", str(db), "--force"], capsys, "may not replace an input")
    assert db.read_bytes() == sweep_db.read_bytes()
    link = tmp_path / "link.csv"
    os.link(db, link)  # a hard link is the same file under another name
    refused(["sweep", "export", "--db", str(db), "--csv", str(link), "--force"], capsys, "may not replace an input")
    assert db.read_bytes() == sweep_db.read_bytes()
    assert files(tmp_path) == ["link.csv", "p.csv"]


def test_the_arena_refuses_to_write_its_json_over_a_file_of_the_book(capsys):
    player = records.DATA / "champion.json"
    before = player.read_bytes()
    refused(["arena", "--json", str(player), "--force"], capsys, "may not replace an input")
    assert player.read_bytes() == before


def test_same_file_sees_names_links_and_separate_files(tmp_path):
    (tmp_path / "a").write_text("a")
    (tmp_path / "b").write_text("a")
    os.link(tmp_path / "a", tmp_path / "c")
    assert records.same_file(tmp_path / "a", tmp_path / "x" / ".." / "a")
    assert records.same_file(tmp_path / "a", tmp_path / "c")
    assert not records.same_file(tmp_path / "a", tmp_path / "b")
    assert not records.same_file(tmp_path / "a", tmp_path / "missing")


# 5. A trailing slash names a folder: refused, never read as the file without it.


@pytest.mark.parametrize(
    "argv",
    [
        ["evolve", "--trials", "1", "--generations", "2", "--out", "{tmp}/out.npz/"],
        ["evolve", "--trials", "1", "--generations", "2", "--out", "{tmp}/out.npz", "--champion", "{tmp}/c.json/"],
        ["sweep", "run", "fogel", "--set", "generations=2", "--seeds", "1", "--db", "{tmp}/x.sqlite/"],
        ["sweep", "export", "--db", "{tmp}/x.sqlite/", "--csv", "{tmp}/x.csv"],
        ["sweep", "export", "--db", "{db}", "--csv", "{tmp}/x.csv/"],
        ["sweep", "status", "--db", "{tmp}/x.sqlite/"],
    ],
)
@pytest.mark.usefixtures("no_run")
def test_a_name_ending_in_a_slash_is_refused(argv, sweep_db, tmp_path, capsys):
    argv = [part.format(tmp=tmp_path, db=sweep_db) for part in argv]
    refused(argv, capsys, "ends in '/', so it names a folder")
    assert files(tmp_path) == []


def test_check_path_refuses_a_trailing_slash_from_python_too(tmp_path):
    with pytest.raises(ValueError, match="names a folder"):
        records.check_path(f"{tmp_path}/run.npz/", "path")
    assert records.check_path(tmp_path / "run.npz") == tmp_path / "run.npz"


# 13. The temporary file of any legal output name fits in its folder.


def test_a_250_character_output_name_is_written(tmp_path, capsys):
    name = "n" * 246 + ".npz"
    code, out, err, escaped = run_main(["evolve", "--trials", "1", "--generations", "2", "--parents", "6",
                                        "--workers", "1", "--quiet", "--out", str(tmp_path / name)])  # fmt: skip
    assert escaped is None and code == 0, err
    assert files(tmp_path) == [name]


def test_temporary_names_stay_short_and_distinct(tmp_path):
    long_one, long_two = tmp_path / ("a" * 250 + "1"), tmp_path / ("a" * 250 + "2")
    first, second = records.temporary_name(long_one, "7"), records.temporary_name(long_two, "7")
    assert first != second and len(first.name.encode()) < 160 and first.parent == tmp_path
    assert records.temporary_name(tmp_path / "run.npz", "7").name == ".run.npz.partial-7"



# 2, 3, 4 and 14. One validation of settings, before any file or database is made, naming the option as typed.


@pytest.mark.usefixtures("no_run")
@pytest.mark.parametrize(
    ("argv", "pattern"),
    [
        (["evolve", "--payoff", "1e308,-1e308,0"], r"argument --payoff: payoff must be three numbers from -1e\+06"),
        (["evolve", "--payoff", "1e308,1e308,1e308"], r"argument --payoff: payoff must be three numbers from"),
        (["evolve", "--payoff", "0,0,0"], r"argument --payoff: payoff must tell results apart"),
        (["mohammadi", "--seeds-kept", "0"], r"error: --seeds-kept 0: seeds_kept must be a whole number >= 1"),
        (["mohammadi", "--population", "7", "--runs", "1"], r"error: --seeds-kept 10: seeds_kept \(10\) exceeds"),
        (["al-khateeb", "--runs", "0"], r"error: --runs 0: runs must be a whole number >= 1; got 0"),
    ],
)
def test_a_refused_setting_names_its_option_and_makes_no_file(argv, pattern, tmp_path, capsys):
    refused([*argv, "--out", str(tmp_path / "out.npz")], capsys, pattern)
    assert files(tmp_path) == []


@pytest.mark.parametrize(
    ("grid", "pattern"),
    [
        (["selection.payoff=1e308/-1e308/0"], r"--set selection.payoff=1e308/-1e308/0: payoff must be three numbers"),
        (["selection.payoff=1/-10/0,1e308/1e308/1e308"], r"--set selection.payoff=1e308/1e308/1e308: payoff must"),
        (["mutation.weight_spread=1e308", "trials=1"],
         r"--set mutation.weight_spread=1e308 \(in the cell with trials=1\): weight_spread must be a number from 0"),
        (["generations=5,5"], r"--set generations=5,5: 5 and 5 are the same value"),
        (["generations=5,05,6"], r"--set generations=5,05,6: 5 and 05 are the same value"),
        (["selection.payoff=1/-10/0,1.0/-10.0/0.0"], r"1/-10/0 and 1.0/-10.0/0.0 are the same value"),
    ],
)
def test_a_refused_sweep_creates_no_database(grid, pattern, tmp_path, capsys):
    argv = ["sweep", "run", "fogel", "--seeds", "1", "--db", str(tmp_path / "s.sqlite"), "--quiet", "--workers", "1"]
    for assignment in grid:
        argv += ["--set", assignment]
    refused(argv, capsys, pattern)
    assert files(tmp_path) == []


def test_a_sweep_checks_each_cell_whole():
    al_khateeb = systems.get_system("al-khateeb")
    # 25 parents alone are refused (the paper's population is 20); with a population of 50 the cell is fine.
    with pytest.raises(ValueError, match=r"--set parents=25: .*got population 20 and parents 25"):
        sweeps.parse_grid(al_khateeb, ["parents=25"])
    for grid in (["population=50", "parents=25"], ["parents=25", "population=50"]):
        (cell,) = sweeps.grid_cells(al_khateeb, sweeps.parse_grid(al_khateeb, grid))
        assert (cell.population, cell.parents) == (50, 25)
    with pytest.raises(ValueError, match=r"--set population=20 \(in the cell with parents=25\): .*the parents must"):
        sweeps.parse_grid(al_khateeb, ["population=50,20", "parents=25"])


def test_run_system_has_no_default_settings_and_checks_what_it_is_given():
    fogel = systems.get_system("fogel")
    with pytest.raises(TypeError, match="settings"):
        systems.run_system("fogel")  # the paper's full experiment is never started by default
    with pytest.raises(ValueError, match="settings must be a FogelSettings for fogel"):
        systems.run_system("fogel", None)
    bad = fogel.PAPER_SETTINGS
    object.__setattr__(bad := dataclasses.replace(bad), "trials", 0)  # changed after its checks ran
    with pytest.raises(ValueError, match="trials must be a whole number >= 1; got 0"):
        systems.run_system("fogel", bad)


# The property: every setting of every registered system, with values of every class, through the one validation.

SETTING_TEXTS = {
    int: st.one_of(st.sampled_from(["0", "1", "2", "-1", "3", "07", "1000000000000", "1" + "0" * 30]),
                   st.integers(-5, 60).map(str)),  # fmt: skip
    float: st.one_of(st.sampled_from(["0", "1e-320", "1e308", "-1e308", "-1", "0.5", "1", "nan", "inf", "1e6",
                                      "1000001", "5e-324"]),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr)),  # fmt: skip
    bool: st.sampled_from(["true", "false", "yes", "maybe", "1", "2"]),
    str: st.one_of(st.sampled_from(["", " ", "x", "none", "random", "perfect", "std", "variance", "own", "cycle"]),
                   st.text(max_size=6)),  # fmt: skip
}


def _texts(kind) -> st.SearchStrategy[str]:
    if typing.get_origin(kind) is tuple:
        part = st.one_of(SETTING_TEXTS[float], st.sampled_from(["nndtf", "baseline", "x"]))
        return st.lists(part, min_size=1, max_size=4).map("/".join)
    return SETTING_TEXTS[kind]


def _real_numbers(settings) -> list[float]:
    """Every real number the settings hold, nested settings and tuples included."""
    found = []
    for field in dataclasses.fields(settings):
        value = getattr(settings, field.name)
        if dataclasses.is_dataclass(value):
            found += _real_numbers(value)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, float):
                found.append(item)
    return found


@pytest.mark.slow  # seconds (make test, not make test-fast)
@given(data=st.data())
@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_setting_of_every_system_is_checked_before_any_database(data, monkeypatch):
    system = data.draw(st.sampled_from(systems.registered_systems()), label="system")
    keys = kit.settings_keys(system.PAPER_SETTINGS)
    chosen = data.draw(st.lists(st.sampled_from(sorted(keys)), min_size=1, max_size=2, unique=True), label="keys")
    grid = [f"{key}={','.join(data.draw(st.lists(_texts(keys[key]), min_size=1, max_size=2), label=key))}"
            for key in chosen]  # fmt: skip
    started = []
    monkeypatch.setattr(sweeps, "sweep", lambda *args, **kwargs: started.append(args))
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "s.sqlite"
        argv = ["sweep", "run", system.name, "--seeds", "1", "--db", str(db), "--quiet", "--workers", "1"]
        code, _, err, escaped = run_main([*argv, *(part for a in grid for part in ("--set", a))])
        assert escaped is None, escaped
        if code == 2:  # refused: one line naming --set, and no database
            lines = [line for line in err.splitlines() if "error:" in line]
            assert len(lines) == 1 and "Traceback" not in err, err
            assert re.search(r"error: (--set|the sweep has|sweep \S+ on 1 worker)", lines[0]), lines[0]
            assert not db.exists() and started == []
            return
        assert code == 0 and len(started) == 1, err
        definition = sweeps.sweep_definition(system, sweeps.parse_grid(system, grid), 1)
        for cell in sweeps.grid_cells(system, definition["grid"]):
            assert systems.check_settings(system, cell) == cell
            assert all(math.isfinite(x) and abs(x) <= LARGEST_SETTING for x in _real_numbers(cell)), cell


@pytest.mark.slow  # seconds (make test, not make test-fast)
@given(data=st.data())
@hypothesis_settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_refused_option_of_a_system_command_is_named(data, monkeypatch):
    def stop(system, settings, *args, **kwargs):
        assert systems.check_settings(system, settings) == settings
        raise KeyboardInterrupt  # accepted: stop here, as Ctrl-C would

    monkeypatch.setattr(cli, "run_system", stop)
    system = data.draw(st.sampled_from(systems.registered_systems()), label="system")
    parser = cli.build_parser()
    command = next(action for action in parser._subparsers._group_actions[0].choices.items()
                   if action[0] == system.command)[1]  # fmt: skip
    own = [action for action in command._actions if action.option_strings and action.dest not in kit.COMMAND_OPTIONS
           and action.dest != "help" and action.nargs != 0 and action.choices is None]  # fmt: skip
    argv = [system.command]
    for action in data.draw(st.lists(st.sampled_from(own), min_size=1, max_size=3, unique_by=lambda a: a.dest)):
        argv += [action.option_strings[0], data.draw(st.one_of(SETTING_TEXTS[int], SETTING_TEXTS[float]))]
    with tempfile.TemporaryDirectory() as folder:
        code, _, err, escaped = run_main([*argv, "--out", str(Path(folder) / "x.npz"), "--workers", "1", "--quiet"])
        assert escaped is None, escaped
        if code == 2:
            lines = [line for line in err.splitlines() if "error:" in line]
            assert len(lines) == 1 and "Traceback" not in err, err
            assert re.search(r"error: (argument )?--[a-z]", lines[0]) or "needs about" in lines[0], lines[0]
        else:
            assert code == 130, err
        assert os.listdir(folder) == []
