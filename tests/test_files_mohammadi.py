"""Mohammadi's files and programs (issue 27): corruptions load the same content or raise ValueError; no recursion.

Two kinds of file: a series record (JSON, :func:`save_series`) and a saved program (JSON, :func:`save_program`).
Hypothesis corrupts a small valid file of each (truncation, byte flips, deleted keys, changed types, NaN,
10**400, deep nesting): the loader gives back the same content or raises ``ValueError``. A byte flip may turn a
file into another valid one (a digit of a statistic, ``pos11`` into ``pos10``): then what the loader returns must
be valid too, which the saver proves by writing it and the loader by reading it back unchanged.

Programs are read and printed with an explicit stack: random programs survive ``parse_program(str(program))``,
and programs nested deeper than :data:`PROGRAM_HEIGHT_LIMIT` (up to 100,000 levels) raise ``ValueError``
everywhere (parse, print, save, load, play, tabulate), never ``RecursionError``.
"""

import json
import re

import numpy as np
import pytest
from corruption import OTHER_TYPES, TEXT_OF, corrupted_json, json_type, value_paths
from deap import gp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evolving_ttt.mohammadi import coevolution as co
from evolving_ttt.mohammadi import programs as pr
from evolving_ttt.mohammadi import series as se
from evolving_ttt.mohammadi import system as sy

FAST = settings(max_examples=150, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
TINY = co.MohammadiSettings(population=8, generations=2, runs=2, group_size=2, initial_depth=5, depth_limit=8,
                            best_candidates=2, random_candidates=1, seeds_kept=1)  # fmt: skip
LIMIT = pr.PROGRAM_HEIGHT_LIMIT
DEEP = 100_000


class Quiet(dict):
    """A dict that hypothesis prints briefly when a test fails (the files are long)."""

    def __repr__(self) -> str:
        return f"<{', '.join(self)}>"


@pytest.fixture(scope="module")
def record():
    return se.evolve_series(TINY, seed=4, progress=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("mohammadi_files")


@pytest.fixture(scope="module")
def files(record, folder):
    se.save_series(record, folder / "series.json")
    champion = pr.parse_program(record.champion())
    se.save_program(champion, folder / "program.json", **se.series_provenance(record))
    return Quiet(series=(folder / "series.json").read_bytes(), program=(folder / "program.json").read_bytes())


def content(kind, loaded):
    if kind == "series":
        return json.dumps(loaded.as_dict(), sort_keys=True)  # 1 and 1.0 differ in the text: types are compared
    program, provenance = loaded
    return pr.program_to_text(program), json.dumps(provenance, sort_keys=True)


LOAD = {"series": se.load_series, "program": se.load_program}


def resave(kind, loaded, path):
    if kind == "series":
        se.save_series(loaded, path)
    else:
        se.save_program(loaded[0], path, **loaded[1])


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def originals(files, folder):
    return Quiet({kind: content(kind, LOAD[kind](_write(folder / f"original-{kind}", raw)))
                  for kind, raw in files.items()})  # fmt: skip


def outcome(kind, data: bytes, folder, original) -> str:
    """Load ``data`` as a ``kind`` file: "refused" (ValueError naming the file), "same", or "valid" (another
    valid file, which the saver writes and the loader reads back unchanged). Anything else fails the test."""
    path = _write(folder / f"corrupt-{kind}", data)
    try:
        loaded = LOAD[kind](path)
    except ValueError as error:
        assert str(path) in str(error)
        return "refused"
    if content(kind, loaded) == original:
        return "same"
    again = folder / f"again-{kind}"
    resave(kind, loaded, again)
    assert content(kind, LOAD[kind](again)) == content(kind, loaded)
    return "valid"


# --- Truncation and byte flips --------------------------------------------------------------------------------------


@FAST
@given(data=st.data(), kind=st.sampled_from(["series", "program"]))
def test_a_truncated_file_is_refused(files, folder, originals, data, kind):
    raw = files[kind]
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    expected = ("refused", "same") if raw[cut:].isspace() else ("refused",)
    assert outcome(kind, raw[:cut], folder, originals[kind]) in expected


@FAST
@given(data=st.data(), kind=st.sampled_from(["series", "program"]))
def test_flipped_bytes_load_the_same_another_valid_file_or_are_refused(files, folder, originals, data, kind):
    raw = bytearray(files[kind])
    for _ in range(data.draw(st.integers(1, 3), label="flips")):
        where = data.draw(st.integers(0, len(raw) - 1), label="where")
        raw[where] ^= data.draw(st.integers(1, 255), label="bits")
    assert outcome(kind, bytes(raw), folder, originals[kind]) in ("refused", "same", "valid")


# --- Keys deleted, values of another type, NaN, huge numbers, deep nesting ----------------------------------------



@pytest.fixture(scope="module")
def paths(files):
    return Quiet({kind: value_paths(json.loads(raw)) for kind, raw in files.items()})


@FAST
@given(data=st.data(), kind=st.sampled_from(["series", "program"]))
def test_corrupted_fields_are_refused(files, folder, originals, paths, data, kind):
    path = data.draw(st.sampled_from(paths[kind]), label="path")
    how = data.draw(st.sampled_from(["delete", "type", "nan", "huge", "deep"]), label="corruption")
    value = json.loads(files[kind])
    for key in path:
        value = value[key]
    replacement = None
    if how == "type":
        choices = [name for name in OTHER_TYPES if name != json_type(value)]
        replacement = OTHER_TYPES[data.draw(st.sampled_from(choices), label="type")]
    result = outcome(kind, corrupted_json(files[kind], path, how, replacement), folder, originals[kind])
    provenance = kind == "program" and path[0] == "provenance"
    if how in TEXT_OF:  # NaN, 10**400 and 100,000 levels are refused wherever they are
        assert result == "refused"
    elif provenance and (len(path) > 1 or how == "delete"):  # the caller's own fields, or no provenance at all
        assert result in ("valid", "refused")
    elif how == "delete" and "kept" in path and len(path) == 4:  # one kept candidate fewer: still a valid record
        assert result == "valid"
    else:
        assert result in ("refused", "same")  # same: a change the format cannot see (true for 1 in "version")


# --- Programs: the text round trip, and no recursion on depth -------------------------------------------------------

TERMINALS = st.sampled_from(pr.TERMINAL_NAMES)


def program_texts(children):
    return st.one_of(*[st.lists(children, min_size=arity, max_size=arity).map(
        lambda arguments, name=name: f"{name}({', '.join(arguments)})") for name, arity in pr.FUNCTION_ARITIES.items()])


PROGRAMS = st.recursive(TERMINALS, program_texts, max_leaves=60)


@FAST
@given(text=PROGRAMS, spacing=st.lists(st.sampled_from(["", " ", "\n", "\t  "]), min_size=1, max_size=5))
def test_programs_survive_parse_and_print(text, spacing):
    program = pr.parse_program(text)
    assert pr.program_to_text(program) == str(program) == text
    assert pr.parse_program(pr.program_to_text(program)) == program
    assert pr.check_program(program) is program and pr.program_height(program) == program.height
    tokens = re.findall(r"[A-Za-z][A-Za-z0-9_-]*|[(),]", text)
    spaced = "".join(token + spacing[k % len(spacing)] for k, token in enumerate(tokens))
    assert pr.program_to_text(pr.parse_program(spaced)) == text


@FAST
@example(text="OR(pos00) pos01)", edits=[]).via("a ')' where a ',' belongs")
@example(text="OR(pos00, pos01, pos02)", edits=[]).via("a ',' where a ')' belongs")
@example(text="OPEN(pos00)pos01", edits=[]).via("a token after the whole program")
@example(text="OR(OPEN(pos00,, pos01)", edits=[]).via("a ',' where a ')' belongs, then a ','")
@example(text="PLAY-AT(pos3)", edits=[]).via("an unknown name")
@example(text="OPEN pos00", edits=[]).via("a function without its '('")
@example(text="PLAY-AT(pos00(pos01))", edits=[]).via("a terminal with arguments")
@given(text=PROGRAMS, edits=st.lists(st.tuples(st.one_of(st.just(-1), st.integers(0, 10**6)), st.integers(0, 3),
                                             st.sampled_from(["(", ")", ",", " ", "pos00", "OR", "PLAY-AT", "x", "1"])),
                                   max_size=3))  # fmt: skip
def test_the_quick_reader_reads_a_text_exactly_when_the_explaining_reader_does(text, edits):
    """parse_program reads with _read_program and only falls back on _explain_program (which keeps the tokens'
    places for its error) when that refuses: both must accept the same texts, with the same nodes."""
    for at, cut, piece in edits:  # texts a few edits away from a program: some still programs, most not
        at = len(text) if at < 0 else at % (len(text) + 1)  # -1: at the end
        text = text[:at] + piece + text[at + cut :]
    quick = pr._read_program(text)
    try:
        explained = pr._explain_program(text)
    except ValueError:
        explained = None
    assert quick == explained


def nested(functions: list[str], depth: int) -> str:
    """A program ``depth`` functions deep: the pattern ``functions`` repeated, each nesting in its first argument."""
    opening, closing = [], []
    for k in range(depth):
        name = functions[k % len(functions)]
        opening.append(f"{name}(")
        closing.append(", pos01" * (pr.FUNCTION_ARITIES[name] - 1) + ")")
    return "".join(opening) + "pos00" + "".join(reversed(closing))


@settings(max_examples=40, derandomize=True, deadline=None)
@given(functions=st.lists(st.sampled_from(list(pr.FUNCTION_ARITIES)), min_size=1, max_size=4),
       depth=st.one_of(st.integers(LIMIT + 1, 2 * LIMIT), st.integers(2 * LIMIT, DEEP)))  # fmt: skip
def test_programs_deeper_than_the_limit_are_refused_not_a_recursion_error(functions, depth):
    with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
        pr.parse_program(nested(functions, depth))


@settings(max_examples=20, derandomize=True, deadline=None)
@given(functions=st.lists(st.sampled_from(list(pr.FUNCTION_ARITIES)), min_size=1, max_size=4),
       depth=st.integers(LIMIT - 3, LIMIT))  # fmt: skip
def test_programs_up_to_the_limit_are_read_printed_and_played(functions, depth):
    program = pr.parse_program(nested(functions, depth))
    assert program.height == depth and pr.program_to_text(program) == nested(functions, depth)
    board = np.zeros(9, dtype=np.int8)
    assert pr.run_program(program, board, 1) in (None, *range(9))
    table = pr.program_move_table(program)
    assert table.shape == (19683,) and pr.ProgramPlayer(program)(board) in range(9)


def deep_tree(depth: int) -> gp.PrimitiveTree:
    """A tree of ``depth`` PLAY-AT nodes above a terminal, made without text."""
    return gp.PrimitiveTree([pr.PRIMITIVES.mapping["PLAY-AT"]] * depth + [pr.PRIMITIVES.mapping["pos11"]])


@pytest.mark.slow
def test_a_tree_too_deep_is_printed_in_linear_time_but_refused_everywhere_else(folder):
    tree = deep_tree(DEEP)
    text = pr.program_to_text(tree)  # printing needs no recursion and no limit
    assert text == "PLAY-AT(" * DEEP + "pos11" + ")" * DEEP
    board = np.zeros(9, dtype=np.int8)
    for call in (lambda: pr.parse_program(text), lambda: pr.check_program(tree), lambda: pr.run_program(tree, board, 1),
                 lambda: pr.program_move(tree, board, 1), lambda: pr.program_move_table(tree),
                 lambda: pr.program_policy(tree, 1), lambda: pr.prune_program(tree), lambda: pr.ProgramPlayer(tree),
                 lambda: pr.program_path(tree, board, 1), lambda: se.save_program(tree, folder / "deep.json"),
                 lambda: se.save_program(text, folder / "deep.json"),
                 lambda: co.double_game(tree, deep_tree(1)), lambda: pr.program_lines(tree)):  # fmt: skip
        with pytest.raises(ValueError, match=f"deeper than {LIMIT} levels"):
            call()
    assert not (folder / "deep.json").exists()


@pytest.mark.slow
def test_loading_a_champion_nested_100000_deep_is_a_clear_error(folder, files):
    record = json.loads(files["program"])
    path = _write(folder / "deep-champion.json", json.dumps({**record, "program": nested(["PLAY-AT"], DEEP)}).encode())
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}: program text: the program is deeper than {LIMIT}"):
        se.load_program(path)
    from evolving_ttt.mohammadi.system import mohammadi_champion  # the arena's way in

    with pytest.raises(ValueError, match="deeper than"):
        mohammadi_champion(path)
    series = json.loads(files["series"])
    series["runs"][0]["population"][3] = nested(["OPEN", "IF"], DEEP)
    path = _write(folder / "deep-series.json", json.dumps(series).encode())
    with pytest.raises(ValueError, match=r"population.*program 3: program text: the program is deeper"):
        se.load_series(path)


def test_malformed_trees_are_refused_by_name():
    mapping = pr.PRIMITIVES.mapping
    for nodes, message in (([], "empty"), ([mapping["AND"], mapping["pos00"]], "incomplete"),
                           ([mapping["pos00"], mapping["pos01"]], "after its complete tree"),
                           ([mapping["OPEN"], "pos00"], "not one of the book's")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            pr.program_move_table(gp.PrimitiveTree(nodes))


# --- The series file: its format and the cases the issue names ---------------------------------------------------


def test_the_series_file_has_a_format_and_a_version_and_old_files_are_refused(files, folder, record):
    data = json.loads(files["series"])
    assert data["format"] == se.SERIES_FORMAT == "mohammadi-series" and data["version"] == 2
    old = {key: value for key, value in data.items() if key not in ("format", "version")}
    path = _write(folder / "old-series.json", json.dumps(old).encode())
    with pytest.raises(ValueError, match='not a series record written by save_series: it needs "format"'):
        se.load_series(path)
    path = _write(folder / "v3.json", json.dumps({**data, "version": 3}).encode())
    with pytest.raises(ValueError, match="unsupported version 3; this code reads versions 1 to 2"):
        se.load_series(path)


def test_a_series_file_of_version_1_holds_its_settings_as_config_and_loads_the_same(files, folder, record):
    # Version 2 renamed the settings' field from "config" to "settings" (one vocabulary); version 1 is still read.
    data = json.loads(files["series"])
    old = {("config" if key == "settings" else key): value for key, value in data.items()} | {"version": 1}
    loaded = se.load_series(_write(folder / "v1-series.json", json.dumps(old).encode()))
    assert loaded.settings == record.settings and loaded.as_dict() == record.as_dict()
    for version, wrong, right in ((2, "config", "settings"), (1, "settings", "config")):
        changed = {key: value for key, value in data.items() if key != "settings"}
        changed |= {"version": version, wrong: data["settings"]}
        path = _write(folder / f"wrong-{version}.json", json.dumps(changed).encode())
        with pytest.raises(ValueError, match=f"field '{wrong}' is not a field of version {version}: its settings "
                                             f"are under '{right}'"):  # fmt: skip
            se.load_series(path)


def test_a_missing_series_file_is_a_value_error(folder):
    with pytest.raises(ValueError, match=f"{re.escape(str(folder / 'nothing.json'))} could not be read"):
        se.load_series(folder / "nothing.json")


def test_series_fields_are_checked_against_the_settings(files, folder):
    data = json.loads(files["series"])
    run = data["runs"][0]
    cases = [
        (("seed",), -1, "seed"), (("seed",), 1.5, "seed.*whole number"),
        (("settings", "population"), 9, "population.*must be a list of the 9"),
        (("settings", "depth_limit"), 500, "depth_limit must be at most 100"),
        (("statistics", "no_playat"), [0.5] * 3, r"no_playat.*shape \(3,\); expected \(4,\)"),
        (("statistics", "no_move_rate"), [1.5] * 4, "above 1.0"),
        (("statistics", "mean_size"), [1, 2, True, 3], "only numbers"),
        (("runs",), [], "1 to 2 runs"), (("runs",), data["runs"] * 2, "1 to 2 runs"),
        (("runs", 0, "heights"), [0] * 8, "does not match the programs' heights"),
        (("runs", 0, "fitness"), [-1.0] * 8, "below 0.0"),
        (("runs", 0, "wins"), [1.5] * 8, "whole numbers"),
        (("runs", 0, "round_robin"), [15.0] * 8, "above 14"),
        (("runs", 0, "candidates"), [0, 0, 1], "twice"), (("runs", 0, "candidates"), [0, 1, 8], "0 to 7"),
        (("runs", 0, "kept"), [3], "0 to 2"), (("runs", 0, "judge_order"), [0, 1], "must hold 3"),
        (("runs", 0, "results", "perfect"), [[[0.5, 0.5, 0.5]] * 2] * 3, "sum to 1"),
        (("runs", 0, "results"), {"perfect": run["results"]["perfect"]}, "opponents"),
        (("runs", 0, "population", 2), "PLAY-AT(pos33)", "population.*program 2: program text"),
        (("runs", 0, "surplus"), 1, "'surplus' is not a field of a run"),
        (("surplus",), 1, "'surplus' is not a field of a series record"),
    ]
    for path, value, message in cases:
        changed = json.loads(files["series"])
        holder = changed
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = value
        with pytest.raises(ValueError, match=message):
            se.load_series(_write(folder / "bad-series.json", json.dumps(changed).encode()))


def test_save_series_writes_whole_at_exactly_the_path_and_never_what_load_series_refuses(record, folder):
    out = folder / "saved" / "series.txt"
    out.parent.mkdir()
    se.save_series(record, out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["series.txt"]
    assert se.load_series(out).as_dict() == record.as_dict()
    before = out.read_bytes()
    for field, value, message in (("seed", float("nan"), "not plain JSON"), ("seed", -3, "seed"),
                                  ("seed", 10**40, "more than 30 digits")):  # fmt: skip
        broken = se.SeriesRecord(record.settings, record.seed, record.statistics, record.runs)
        setattr(broken, field, value)
        with pytest.raises(ValueError, match=message):
            se.save_series(broken, out)
        assert out.read_bytes() == before and sorted(p.name for p in out.parent.iterdir()) == ["series.txt"]
    last = record.runs[-1]
    kept = last.kept
    try:
        last.kept = [0, 0]
        with pytest.raises(ValueError, match="kept.*twice"):
            se.save_series(record, out)
    finally:
        last.kept = kept
    with pytest.raises(ValueError, match="record must be a SeriesRecord"):
        se.save_series(record.as_dict(), out)


def test_save_program_keeps_provenance_apart_and_refuses_what_load_program_refuses(folder):
    program = pr.parse_program("PLAY-AT(OR(OPEN(pos11), pos00))")
    path = folder / "program.txt"
    se.save_program(program, path, format="not mine", version=9)  # provenance cannot override the format's fields
    data = json.loads(path.read_text())
    assert (data["format"], data["version"]) == (se.PROGRAM_FORMAT, 1)
    assert se.load_program(path)[1] == {"format": "not mine", "version": 9}
    before = path.read_bytes()
    for call, message in ((lambda: se.save_program(program, path, score=float("nan")), "not plain JSON"),
                          (lambda: se.save_program(program, path, note=object()), "not plain JSON"),
                          (lambda: se.save_program(program, path, seed=10**400), "more than 30 digits"),
                          (lambda: se.save_program("PLAY-AT(", path), "expected a function"),
                          (lambda: se.save_program(None, path), "program must be a program")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            call()
        assert path.read_bytes() == before
    assert not list(folder.glob(".*partial*"))


def test_a_program_keeps_its_series_settings_as_settings_and_an_older_one_as_config_still_loads(folder, repo_root):
    # The provenance's older name for the series' settings, "config", is still read (the committed champion holds
    # it); the savers write "settings", a name version 1 already had, so the version stays 1 (one vocabulary).
    committed = json.loads((repo_root / "book" / "data" / "mohammadi_champion.json").read_text())
    assert committed["version"] == se.PROGRAM_VERSION == 1 and "config" in committed["provenance"]
    series_settings = committed["provenance"]["config"]
    old = _write(folder / "old-program.json", json.dumps(committed).encode())
    assert sy.load_player(old)[0].taken == series_settings["taken"] == co.PAPER_MOHAMMADI.taken
    provenance = {key: value for key, value in committed["provenance"].items() if key != "config"}
    se.save_program(committed["program"], folder / "new-program.json", **provenance, settings=series_settings)
    data = json.loads((folder / "new-program.json").read_text())
    assert data["version"] == 1 and data["provenance"]["settings"] == series_settings
    assert "config" not in data["provenance"]
    assert sy.mohammadi_champion(folder / "new-program.json").training == sy.mohammadi_champion(old).training
    for name in ("config", "settings"):  # both names are checked as settings
        with pytest.raises(ValueError, match=f"{name}.*depth_limit must be at most 100"):
            se.load_program(_write(folder / "bad.json", json.dumps(
                {**committed, "provenance": {name: {**series_settings, "depth_limit": 500}}}).encode()))  # fmt: skip


def test_the_depth_limit_of_a_series_cannot_exceed_what_the_book_reads_back():
    assert co.MohammadiSettings(initial_depth=LIMIT, depth_limit=LIMIT).depth_limit == LIMIT
    with pytest.raises(ValueError, match=f"depth_limit must be at most {LIMIT}"):
        co.MohammadiSettings(depth_limit=LIMIT + 1)
    with pytest.raises(ValueError, match="max_depth must be at most"):
        co.random_programs(np.random.default_rng(0), 1, LIMIT + 1)
    with pytest.raises(ValueError, match=r"missing settings \['taken'\]"):
        co.MohammadiSettings.from_dict({k: v for k, v in co.PAPER_MOHAMMADI.as_dict().items() if k != "taken"})


def test_the_committed_champion_passes_every_check(repo_root):
    program, provenance = se.load_program(repo_root / "book" / "data" / "mohammadi_champion.json")
    assert pr.check_program(program) is program and program.height <= LIMIT
    assert co.MohammadiSettings.from_dict(provenance["config"]).judge == "perfect"
