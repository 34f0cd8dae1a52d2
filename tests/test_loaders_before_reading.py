"""Loaders check before they read (issue 37): sweep rows, ``.npz`` archives, and every field of every JSON loader.

- A sweep database's rows are checked as they are read (every key, type, finite number, and the cell, seed and
  task inside the definition): a damaged row is one ``ValueError`` naming the file, the row and the field, for
  ``sweep export``, ``sweep status``, the tables and the studies' readers alike; every committed study passes.
- ``read_npz`` checks the zip directory's sizes and every member's ``.npy`` header before it reads an array: a
  header declaring a terabyte, a zip bomb, objects, or a member of another kind are refused by name, at once.
- Every JSON loader of every system is fed each real file of ``book/data`` (and a saved player of every committed
  sweep, and a series record) with each field replaced by a value of every other JSON type: it loads the same
  thing (a free-form field changed) or raises one ``ValueError`` naming the file; nothing else escapes, and a
  field of the wrong type is never replaced by a default.
"""

import contextlib
import io
import json
import re
import shutil
import sqlite3
import struct
import tracemalloc
import zipfile
from dataclasses import fields, is_dataclass

import numpy as np
import pytest
from numpy.lib import format as npy

from evolving_ttt import archives
from evolving_ttt.al_khateeb import system as al_khateeb_system
from evolving_ttt.al_khateeb.engine import load_evaluator
from evolving_ttt.al_khateeb.saved_results import load_al_khateeb_results
from evolving_ttt.al_khateeb.study import study_tasks
from evolving_ttt.benchmarks import BENCH_RESULTS, load_benchmark
from evolving_ttt.cli import main
from evolving_ttt.curves import load_learning_curves
from evolving_ttt.fogel.network import load_network
from evolving_ttt.fogel.study import control_rows
from evolving_ttt.ling_lam.capacity import load_capacity
from evolving_ttt.ling_lam.experiment import load_runs_summary, load_trained_network
from evolving_ttt.mohammadi import system as mohammadi_system
from evolving_ttt.mohammadi.coevolution import MohammadiSettings
from evolving_ttt.mohammadi.programs import ProgramPlayer
from evolving_ttt.mohammadi.series import evolve_series, load_program, load_series, save_series
from evolving_ttt.q_learning import system as q_learning_system
from evolving_ttt.reading import read_npz
from evolving_ttt.records import DATA, STUDIES, save_npz
from evolving_ttt.store import SweepStore
from evolving_ttt.sweeps import sweep
from evolving_ttt.tables import sweep_table

# --- Sweep rows (case 9) -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fogel_sweep(tmp_path_factory):
    """The issue's sweep: Fogel, 2 generations, 1 trial, 6 parents, seed 1 (one task)."""
    db = tmp_path_factory.mktemp("sweep") / "s.sqlite"
    sweep("fogel", {"generations": [2], "trials": [1], "parents": [6]}, 1, db, workers=1, progress=False)
    return db


def _damaged_copy(source, folder, statement, name=None):
    target = folder / (name or source.name)
    shutil.copyfile(source, target)
    with sqlite3.connect(target) as connection:
        connection.execute(statement)
    connection.close()
    return target


def test_the_issues_row_without_measures_is_one_clear_error_for_export_status_and_the_table(fogel_sweep, tmp_path,
                                                                                          capsys):  # fmt: skip
    db = _damaged_copy(fogel_sweep, tmp_path, """UPDATE tasks SET measures = '{"fogel_score": NaN}'""")
    expected = f"--db {db}: the row (cell 0, seed 1, task 0): field 'measures'"
    for command in (["sweep", "export", "--db", str(db), "--csv", str(tmp_path / "out.csv")],
                    ["sweep", "status", "--db", str(db)]):  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main(command)
        assert exited.value.code == 2
        assert expected in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}"):
        sweep_table(db)
    db = _damaged_copy(fogel_sweep, tmp_path, """UPDATE tasks SET measures = '{"fogel_score": 1.5}'""", "k.sqlite")
    with pytest.raises(ValueError, match=r"k\.sqlite: the row \(cell 0, seed 1, task 0\): field "
                                         r"'measures\.points_perfect_x' is missing"):  # fmt: skip
        sweep_table(db)


AL_KHATEEB_READINGS = STUDIES / "al_khateeb_readings.sqlite"  # 4 cells (view x winning_moves), 10 seeds, 1 task
ROW = "cell = 0 AND seed = 1 AND task = 0"


@pytest.mark.parametrize(
    ("change", "row", "field"),
    [
        (f"""UPDATE tasks SET measures = '{{"fogel_score": NaN}}' WHERE {ROW}""", (0, 1, 0), "measures"),
        (f"UPDATE tasks SET measures = json_remove(measures, '$.can_lose') WHERE {ROW}", (0, 1, 0),
         "measures.can_lose"),
        (f"UPDATE tasks SET measures = json_set(measures, '$.points_random_o', '0.5') WHERE {ROW}", (0, 1, 0),
         "measures.points_random_o"),
        (f"UPDATE tasks SET measures = json_set(measures, '$.fogel_score', json('null')) WHERE {ROW}", (0, 1, 0),
         "measures.fogel_score"),
        (f"UPDATE tasks SET measures = json_set(measures, '$.can_lose', json('true')) WHERE {ROW}", (0, 1, 0),
         "measures.can_lose"),
        (f"UPDATE tasks SET measures = json_set(measures, '$.mean_step_last', json('[1]')) WHERE {ROW}", (0, 1, 0),
         "measures.mean_step_last"),
        (f"UPDATE tasks SET measures = json_set(measures, '$.fogel_score', 1e999) WHERE {ROW}", (0, 1, 0),
         "measures"),
        (f"UPDATE tasks SET measures = json_remove(measures, '$.best_total_last') WHERE {ROW}", (0, 1, 0),
         "measures.best_total_last"),
        (f"UPDATE tasks SET measures = '[1, 2]' WHERE {ROW}", (0, 1, 0), "measures"),
        (f"UPDATE tasks SET measures = 'not JSON' WHERE {ROW}", (0, 1, 0), "measures"),
        (f"""UPDATE tasks SET settings = '"x"' WHERE {ROW}""", (0, 1, 0), "settings"),
        (f"UPDATE tasks SET settings = json_set(settings, '$.player.view', 'x') WHERE {ROW}", (0, 1, 0),
         "settings.player.view"),
        (f"UPDATE tasks SET settings = json_set(settings, '$.player', 5) WHERE {ROW}", (0, 1, 0), "settings.player"),
        (f"UPDATE tasks SET cell = 9 WHERE {ROW}", (9, 1, 0), "cell"),
        (f"UPDATE tasks SET cell = 'a' WHERE {ROW}", ("a", 1, 0), "cell"),
        (f"UPDATE tasks SET seed = 11 WHERE {ROW}", (0, 11, 0), "seed"),
        (f"UPDATE tasks SET seed = 0 WHERE {ROW}", (0, 0, 0), "seed"),
        (f"UPDATE tasks SET task = -1 WHERE {ROW}", (0, 1, -1), "task"),
        (f"UPDATE tasks SET task = 0.5 WHERE {ROW}", (0, 1, 0.5), "task"),
        (f"UPDATE tasks SET wall_time = 'slow' WHERE {ROW}", (0, 1, 0), "wall_time"),
        (f"UPDATE tasks SET wall_time = -1 WHERE {ROW}", (0, 1, 0), "wall_time"),
        (f"UPDATE tasks SET worker = x'00' WHERE {ROW}", (0, 1, 0), "worker"),
        (f"UPDATE tasks SET finished = x'00' WHERE {ROW}", (0, 1, 0), "finished"),
        (f"UPDATE tasks SET player = '' WHERE {ROW}", (0, 1, 0), "player"),
        (f"UPDATE tasks SET player = x'7b7d' WHERE {ROW}", (0, 1, 0), "player"),
    ],
)  # fmt: skip
def test_a_damaged_row_is_one_value_error_naming_the_file_the_row_and_the_field(tmp_path, change, row, field):
    db = _damaged_copy(AL_KHATEEB_READINGS, tmp_path, change)
    cell, seed, task = (repr(part) for part in row)
    message = f"--db {db}: the row (cell {cell}, seed {seed}, task {task}): field {field!r}"
    with SweepStore(db) as store:
        for read in (store.rows, store.done):
            with pytest.raises(ValueError) as error:
                read()
            assert message in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError, match=re.escape(message)):
        sweep_table(db)
    with pytest.raises(ValueError, match=re.escape(message)):  # the study's own reader (chapter 21)
        study_tasks("al_khateeb_readings", tmp_path)


def test_rows_that_record_different_measures_are_refused_naming_both_rows(tmp_path):
    change = "UPDATE tasks SET measures = json_set(measures, '$.extra', 1) WHERE cell = 2 AND seed = 4"
    db = _damaged_copy(AL_KHATEEB_READINGS, tmp_path, change)
    message = (
        r"al_khateeb_readings\.sqlite: the row \(cell 0, seed 1, task 0\): field 'measures\.extra' is "
        r"missing, which the row \(cell 2, seed 4, task 0\) records"
    )
    with pytest.raises(ValueError, match=message):
        SweepStore(db).rows()
    change = "UPDATE tasks SET measures = json_set(measures, '$.mean_step_last', 'big') WHERE cell = 3 AND seed = 9"
    db = _damaged_copy(AL_KHATEEB_READINGS, tmp_path, change, "text.sqlite")
    with pytest.raises(ValueError, match=r"the row \(cell 3, seed 9, task 0\): field 'measures\.mean_step_last' is "
                                         r"'big', a text, where"):  # fmt: skip
        SweepStore(db).rows()


def test_fogels_control_study_reader_gets_the_same_clear_error(tmp_path):
    assert control_rows("fogel_spread", STUDIES)  # the committed study reads
    db = _damaged_copy(STUDIES / "fogel_spread.sqlite", tmp_path, "UPDATE tasks SET measures = '{}' WHERE seed = 3")
    with pytest.raises(ValueError, match=rf"{re.escape(str(db))}: the row \(cell 0, seed 3, task 0\): field "
                                         r"'measures\.points_perfect_x' is missing"):  # fmt: skip
        control_rows("fogel_spread", tmp_path)


@pytest.mark.parametrize("db", sorted(STUDIES.glob("*.sqlite")), ids=lambda path: path.stem)
def test_every_committed_study_passes_the_checks_of_every_row(db):
    with SweepStore(db) as store:
        rows = store.rows()
        assert rows and store.done() == {(row["cell"], row["seed"], row["task"]) for row in rows}
    assert len(sweep_table(db)) == len(rows)


# --- .npz archives (case 10) ---------------------------------------------------------------------------------------


def _npy_header(shape, descr="<f8"):
    buffer = io.BytesIO()
    npy.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.fixture
def no_array_read(monkeypatch):
    """Fails the test if any array is read (the checks must refuse the archive first)."""
    reads = []
    monkeypatch.setattr(npy, "read_array", lambda *args, **kwargs: reads.append(args) or np.zeros(0))
    yield
    assert reads == [], "an array was read before the archive was refused"


def test_a_header_declaring_a_terabyte_is_refused_before_any_array_is_read(tmp_path, no_array_read):
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fine.npy", _npy_header((3,)) + bytes(24))
        archive.writestr("huge.npy", _npy_header((10**12,)) + bytes(64))  # the issue's MemoryError
    with pytest.raises(ValueError, match=r"huge\.npz is not a readable run \(\.npz\): member 'huge\.npy': its "
                                         r"header declares float64 of shape \(1000000000000,\)"):  # fmt: skip
        read_npz(path, "run")


def _zeros_member(archive, name, size):
    """A member ``name`` of ``size`` bytes of float64 zeros, deflated a mebibyte at a time."""
    with archive.open(name, "w", force_zip64=True) as member:
        member.write(_npy_header((size // 8,)))
        chunk = bytes(2**20)
        for start in range(0, size, len(chunk)):
            member.write(chunk[: size - start])


def _deflated(path):
    return zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)


def test_a_zip_bomb_is_refused_from_its_directory_without_expanding_it(tmp_path, no_array_read):
    path = tmp_path / "bomb.npz"
    with _deflated(path) as archive:
        _zeros_member(archive, "zeros.npy", archives.NPZ_RATIO_FLOOR + 2**20)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"bomb\.npz is not a readable run \(\.npz\): member 'zeros\.npy' would "
                                             r"expand [\d,]+ bytes to [\d,]+, 1,0\d\d times"):  # fmt: skip
            read_npz(path, "run")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20


def test_a_bomb_of_many_small_members_is_refused_as_a_whole(tmp_path, no_array_read):
    path = tmp_path / "many.npz"
    members = archives.NPZ_RATIO_FLOOR // 2**21 + 2  # each 2 MiB, together beyond the floor
    with _deflated(path) as archive:
        for k in range(members):
            _zeros_member(archive, f"zeros{k}.npy", 2**21)
    message = (
        r"many\.npz is not a readable run \(\.npz\): its [\d,]+ bytes would expand to [\d,]+, [\d,]+ "
        r"times; .* the largest member is 'zeros\d+\.npy'"
    )
    with pytest.raises(ValueError, match=message):
        read_npz(path, "run")


def _zip_declaring(path, name, payload, file_size):
    """A zip file of one deflated member whose directory says it expands to ``file_size`` bytes (zip64 fields):
    ``payload`` is never decompressed by a reader that checks the directory first."""
    name = name.encode()
    zip64 = struct.pack("<HHQQ", 1, 16, file_size, len(payload))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 8, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(zip64))
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF,
                          len(name), len(zip64), 0, 0, 0, 0, 0)  # fmt: skip
    head = local + name + zip64 + payload
    directory = central + name + zip64
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(directory), len(head), 0)
    path.write_bytes(head + directory + end)


def test_arrays_beyond_the_expanded_limit_are_refused_from_the_directory(tmp_path, no_array_read):
    path = tmp_path / "five.npz"
    expanded = archives.NPZ_EXPANDED_LIMIT + 2**30
    payload = np.random.default_rng(1).bytes(expanded // archives.NPZ_RATIO_LIMIT + 2**20)  # an ordinary ratio
    _zip_declaring(path, "big.npy", payload, expanded)
    assert zipfile.ZipFile(path).infolist()[0].file_size == expanded
    with pytest.raises(ValueError, match=rf"five\.npz is not a readable run \(\.npz\): its arrays would expand to "
                                         rf"{expanded:,} bytes, more than .* member 'big\.npy'"):  # fmt: skip
        read_npz(path, "run")


def test_a_member_whose_header_does_not_match_its_declared_size_is_refused(tmp_path, no_array_read):
    path = tmp_path / "short.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", _npy_header((1000,)) + bytes(80))
    with pytest.raises(ValueError, match=r"member 'x\.npy': its header declares float64 of shape \(1000,\), 8,000 "
                                         r"bytes of data, but the member holds 80"):  # fmt: skip
        read_npz(path, "run")


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda a: a.writestr("x.npy", _npy_header((2,), "|O") + bytes(16)), "member 'x.npy' holds pickled objects"),
        (lambda a: a.writestr("x.npy", _npy_header((2,), [("a", "<f8")]) + bytes(16)), "member 'x.npy' holds"),
        (lambda a: a.writestr("x.npy", _npy_header((2,), "<M8[s]") + bytes(16)), "member 'x.npy' holds datetime64"),
        (lambda a: a.writestr("notes.txt", b"hello"), "member 'notes.txt' is not an array (.npy)"),
        (lambda a: (a.writestr("x.npy", _npy_header((1,)) + bytes(8)), a.writestr("x.npy", _npy_header((1,))
                    + bytes(8))), "member 'x.npy' appears twice"),
        (lambda a: a.writestr("x.npy", _npy_header((1,)) + bytes(8), zipfile.ZIP_BZIP2),
         "member 'x.npy' is encrypted or compressed by a method numpy does not write"),
        (lambda a: a.writestr("x.npy", _npy_header((1,)) + bytes(8), zipfile.ZIP_LZMA), "zip method 14"),
    ],
)  # fmt: skip
def test_members_no_record_holds_are_refused_by_name_before_any_array_is_read(tmp_path, no_array_read, write, message):
    path = tmp_path / "odd.npz"
    warns = pytest.warns(UserWarning, match="Duplicate") if "twice" in message else contextlib.nullcontext()
    with warns, zipfile.ZipFile(path, "w") as archive:
        write(archive)
    with pytest.raises(ValueError, match=r"odd\.npz is not a readable run \(\.npz\): .*" + re.escape(message)):
        read_npz(path, "run")


def test_save_npz_writes_no_archive_that_read_npz_would_refuse(tmp_path):
    path = tmp_path / "run.npz"
    huge = np.broadcast_to(np.zeros(1), (archives.NPZ_EXPANDED_LIMIT // 8 + 1,))  # 4 GiB on paper, 8 bytes in memory
    with pytest.raises(ValueError, match=r"run\.npz was not written: its arrays hold [\d,]+ bytes, more than"):
        save_npz(path, {"x": huge}, "run")
    with pytest.raises(ValueError, match=r"run\.npz was not written: read_npz would refuse it \(.*pickled objects"):
        save_npz(path, {"x": np.array([{"a": 1}], dtype=object)}, "run")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left
    save_npz(path, {"x": np.zeros((20, 50_001)), "y": np.arange(3)}, "run")  # a flat curve, as Ling-Lam's
    assert read_npz(path, "run")["x"].shape == (20, 50_001)


# --- Every field of every JSON loader (case 11) ---------------------------------------------------------------------


def test_the_issues_examples_are_refused_naming_the_file_and_the_field(tmp_path):
    program = json.loads((DATA / "mohammadi_champion.json").read_text())
    path = tmp_path / "program.json"
    path.write_text(json.dumps({**program, "provenance": {**program["provenance"], "config": [1, 2]}}))
    with pytest.raises(ValueError, match=r"program\.json \(saved program, provenance\): field 'config' must be an "
                                         r"object; it is a list"):  # fmt: skip
        mohammadi_system.load_player(path)
    evaluator = json.loads((DATA / "al_khateeb_ttt.json").read_text())
    path = tmp_path / "evaluator.json"
    path.write_text(json.dumps({**evaluator, "player": 5}))
    with pytest.raises(ValueError, match=r"evaluator\.json \(evaluator file\): field 'player' must be an object; it "
                                         r"is a number 5"):  # fmt: skip
        al_khateeb_system.load_player(path)
    path.write_text(json.dumps({**evaluator, "player": {"view": "x", "depth": True}}))
    with pytest.raises(ValueError, match=r"evaluator\.json \(evaluator file\): field 'player' is not a player's "
                                         r"reading .*depth"):  # fmt: skip
        al_khateeb_system.load_player(path)


def _first(loaded):
    return loaded[0]


LOADERS = {
    "fogel-ttt-network": [(load_network, _first)],
    "al-khateeb-evaluator": [(load_evaluator, lambda loaded: loaded[:2]), (al_khateeb_system.load_player, _first)],
    "mohammadi-ttt-program": [(load_program, _first), (mohammadi_system.load_player, _first)],
    "mohammadi-series": [(load_series, None)],
    "ling-lam-network": [(load_trained_network, _first)],
    "ling-lam-runs": [(load_runs_summary, _first)],
    "ling-lam-capacity": [(load_capacity, None)],
    "ttt-benchmark": [(lambda path: load_benchmark(path.stem, path.parent), None)],
    "ttt-kit-player": [(q_learning_system.load_player, _first)],
    "ttt-learning-curves": [(load_learning_curves, lambda frame: frame.to_dict("list"))],
    "al-khateeb-saved-results": [(load_al_khateeb_results, None)],
}  # fmt: skip
"""Every JSON loader by the format it reads, with the part of what it returns that it reads from the file (``None``:
all of it); the rest (provenance) is returned as the file has it."""

OTHER_TYPES = {"list": [1], "object": {"a": 1}, "text": "x", "number": 7, "null": None, "true/false": True}
"""A value of every JSON type."""
MARKER = "\u0000 the field under test \u0000"
"""Put in a field before the file's text is made, then replaced by each value: no file of the book holds it."""


def json_type(value):
    if isinstance(value, bool) or value is None:
        return "true/false" if value is not None else "null"
    return {int: "number", float: "number", str: "text", list: "list", dict: "object"}[type(value)]


def field_paths(document):
    """The path of every field of a JSON document: every key of every object and the first item of every list.
    Of an object whose values are objects with the same keys (labels to runs, say), only the first is opened."""
    paths, stack = [], [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            children = list(value.items())
            paths += [(*path, key) for key, _ in children]
            alike = len(children) > 1 and all(isinstance(v, dict) and v.keys() == children[0][1].keys()
                                              for _, v in children)  # fmt: skip
            stack += [((*path, key), item) for key, item in (children[:1] if alike else children)]
        elif isinstance(value, list) and value:
            paths.append((*path, 0))
            stack.append(((*path, 0), value[0]))
    return paths


def content(value):
    """What a loader returned, comparable with ``==``: arrays by their bits, dataclasses by their fields."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, ProgramPlayer):
        return str(value.program), value.taken
    if is_dataclass(value):
        return type(value).__name__, tuple((f.name, content(getattr(value, f.name))) for f in fields(value))
    if isinstance(value, dict):
        return tuple(sorted((str(key), content(item)) for key, item in value.items()))
    if isinstance(value, list) and type(value) is not list:  # a program (DEAP's PrimitiveTree)
        return str(value)
    if isinstance(value, (list, tuple)):
        return tuple(content(item) for item in value)
    return type(value).__name__, value


def still_valid(record, path, value):
    """Whether the change is one the format allows: a benchmark's figure is a number or a list of numbers."""
    numbers = isinstance(value, (int, float)) and not isinstance(value, bool)
    listed = isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                       for v in value)  # fmt: skip
    return record["format"] == "ttt-benchmark" and path[:1] == ("figures",) and len(path) == 2 and (numbers or listed)


@pytest.fixture(scope="module")
def saved_files(tmp_path_factory):
    """A series record (Mohammadi's saver) and the saved player of the last cell of every committed sweep."""
    folder = tmp_path_factory.mktemp("saved")
    tiny = MohammadiSettings(population=8, generations=2, runs=2, group_size=2, initial_depth=5, depth_limit=8,
                             best_candidates=2, random_candidates=1, seeds_kept=1)  # fmt: skip
    save_series(evolve_series(tiny, seed=4, progress=False), folder / "series.json")
    found = {"series.json": folder / "series.json"}
    for db in sorted(STUDIES.glob("*.sqlite")):
        with SweepStore(db) as store:
            row = store.rows()[-1]
        found[f"player_{db.stem}.json"] = folder / f"player_{db.stem}.json"
        found[f"player_{db.stem}.json"].write_text(row["player"])
    return found


REAL_FILES = sorted(DATA.rglob("*.json")) + sorted(BENCH_RESULTS.glob("*.json"))
SAVED = ["series.json", *(f"player_{db.stem}.json" for db in sorted(STUDIES.glob("*.sqlite")))]


def test_every_json_file_of_the_book_has_a_loader_in_this_test():
    assert sorted({json.loads(path.read_text()).get("format") for path in REAL_FILES} - set(LOADERS)) == []


@pytest.mark.slow
@pytest.mark.parametrize("source", [*REAL_FILES, *SAVED], ids=lambda s: getattr(s, "name", s))
def test_every_field_of_another_type_loads_the_same_or_is_one_value_error_naming_the_file(source, saved_files,
                                                                                         tmp_path):  # fmt: skip
    source = saved_files[source] if isinstance(source, str) else source
    record = json.loads(source.read_text())
    target = tmp_path / source.name  # the same name: a benchmark is loaded by its name
    problems = []
    texts = {}  # each field's path -> the file's text with a marker in that field, made once for every type and loader
    for path in field_paths(record):
        holder = record
        for key in path[:-1]:
            holder = holder[key]
        kept, holder[path[-1]] = holder[path[-1]], MARKER
        texts[path] = kept, json.dumps(record)
        holder[path[-1]] = kept
    for load, part in LOADERS[record["format"]]:
        view = lambda loaded, part=part: content(part(loaded) if part else loaded)  # noqa: E731
        original = view(load(source))
        for path, (kept, text) in texts.items():
            for kind, value in OTHER_TYPES.items():
                if kind == json_type(kept):
                    continue
                target.write_text(text.replace(json.dumps(MARKER), json.dumps(value)))
                where = f"{getattr(load, '__module__', '')}.{getattr(load, '__name__', '')}: {list(path)} = {value!r}"
                try:
                    if view(load(target)) != original and not still_valid(record, path, value):
                        problems.append(f"{where}: loads, and what it reads changed (a default put in its place?)")
                except ValueError as error:
                    if target.name not in str(error):
                        problems.append(f"{where}: a ValueError that does not name the file: {error}")
                except Exception as error:  # noqa: BLE001 - anything else escaping is the failure looked for
                    problems.append(f"{where}: {type(error).__name__}: {error}")
    assert problems == []
