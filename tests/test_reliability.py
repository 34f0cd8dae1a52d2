"""Reliability, second pass (issue 37): each numbered case of the issue ends in exit 0 with the right file or in one
line ``error:`` with exit 2, no file or database created or changed; and the settings of every registered system
go through one validation, tried with generated values.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_cli_inputs import files, no_run, refused, run_main  # noqa: F401 - no_run is a fixture

from evolving_ttt import records


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

