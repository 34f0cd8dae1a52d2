"""Issue 27 for Al-Khateeb (2012): the evaluator file (.json) and the co-evolution record (.npz) are read and
written carefully.

Property tests: random corruptions of a valid small file (truncation, byte flips, deleted keys or arrays, changed
types, NaN, huge numbers, deep nesting) either load to exactly what the file says (for damaged bytes: to the
original) or raise a ValueError naming the file; nothing else escapes. Plain tests: each bad input the issue
names, the savers' refusals, the memory estimate and public functions given the wrong type.
"""

import json
import re

import numpy as np
import pytest
from corruption import byte_damage, corrupt_json, damaged, json_changes, json_text, refused, same_bits
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_ttt.al_khateeb import engine as ag
from evolving_ttt.al_khateeb import evaluator as ae
from evolving_ttt.al_khateeb.engine import (
    EVALUATOR_FIELDS,
    RECORD_FIELDS,
    RECORD_FORMAT,
    CoevolutionRun,
    coevolve,
    estimated_memory,
    load_coevolution_run,
    load_evaluator,
    save_coevolution_run,
    save_evaluator,
)
from evolving_ttt.al_khateeb.evaluator import PAPER_AL_KHATEEB, AlKhateebSettings

SMALL = AlKhateebSettings(population=4, parents=2, generations=3, runs=2)
PROPERTY = settings(derandomize=True, deadline=None, database=None, max_examples=300)


# --- shared corruptions ----------------------------------------------------------------------------------------

JSON_CHANGES = json_changes([[9, 5, 3, 1], [9, 5, 3, True], [0.1] * 72, [True] * 72, ["0.1"] * 72, [-0.1] * 72])


# --- the evaluator file (JSON) --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def evaluator_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evaluator")
    rng = np.random.default_rng(27)
    weights, steps = rng.normal(size=72), rng.uniform(0.01, 0.1, size=72)
    path = folder / "ttt.json"
    save_evaluator(weights, steps, path, seed=1, run=2, experiment=SMALL.as_dict(), player=SMALL.player.as_dict())
    return path, weights, steps


def check_evaluator_file(path, other):
    """The loader refuses ``path``, or returns exactly what it says, which saves and loads back the same."""
    if refused(load_evaluator, path):
        return
    weights, steps, provenance = load_evaluator(path)
    said = json.loads(path.read_text())
    assert said["format"] == ag.EVALUATOR_FORMAT and said["version"] == 1 and said["layers"] == [9, 5, 3, 1]
    assert same_bits(weights, np.array(said["weights"], dtype=float))
    assert same_bits(steps, np.array(said["step_sizes"], dtype=float)) and np.all(steps > 0)
    assert provenance == {key: value for key, value in said.items() if key not in EVALUATOR_FIELDS}
    save_evaluator(weights, steps, other, **provenance)
    again = load_evaluator(other)
    assert same_bits(again[0], weights) and same_bits(again[1], steps) and again[2] == provenance


@pytest.mark.slow
@PROPERTY
@given(damage=byte_damage)
def test_a_damaged_evaluator_file_loads_the_same_or_is_refused(evaluator_file, damage):
    path, weights, steps = evaluator_file
    bad = path.with_name("damaged.json")
    bad.write_bytes(damaged(path.read_bytes(), damage))
    if not refused(load_evaluator, bad):
        check_evaluator_file(bad, path.with_name("again.json"))
        loaded = load_evaluator(bad)
        changed = json.loads(bad.read_text()) != json.loads(path.read_text())
        assert changed or (same_bits(loaded[0], weights) and same_bits(loaded[1], steps))


@pytest.mark.slow
@PROPERTY
@given(change=JSON_CHANGES)
def test_a_changed_evaluator_file_loads_what_it_says_or_is_refused(evaluator_file, change):
    path, _, _ = evaluator_file
    bad = path.with_name("changed.json")
    bad.write_text(json_text(corrupt_json(json.loads(path.read_text()), *change)))
    check_evaluator_file(bad, path.with_name("again.json"))


# --- the co-evolution record (.npz) ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def record_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("record")
    record = coevolve(SMALL, seed=5)
    path = folder / "record.npz"
    save_coevolution_run(record, path)
    return path, record


def put(value):
    def change(array, k):
        array = np.array(array, dtype=float) if array.dtype.kind in "biuf" else np.array(array)
        if array.size and array.dtype.kind == "f":
            array.flat[k % array.size] = value
        return array

    return change


def config_text(change):
    def text(array, k):
        settings = SMALL.as_dict()
        change(settings)
        return np.array(json.dumps(settings))

    return text


ARRAY_CHANGES = [
    lambda a, k: a.astype(np.float32) if a.dtype.kind in "biuf" else a,
    lambda a, k: a.astype(np.int64) if a.dtype.kind in "biuf" else a,
    lambda a, k: a.astype(np.int8) if a.dtype.kind in "biuf" else a,
    lambda a, k: a.astype(bool) if a.dtype.kind in "biuf" else a,
    lambda a, k: a.astype(complex) if a.dtype.kind in "biuf" else a,
    lambda a, k: a.astype(str),
    lambda a, k: np.array("text"),
    lambda a, k: np.array([]),
    lambda a, k: np.array(7),
    lambda a, k: a.reshape(-1),
    lambda a, k: a[..., :-1] if a.ndim else a,
    lambda a, k: a[:-1] if a.ndim else a,
    lambda a, k: a[None],
    lambda a, k: a.T,
    lambda a, k: np.concatenate([a, a]) if a.ndim else a,
    put(np.nan), put(np.inf), put(-np.inf), put(-1), put(0), put(7), put(-7), put(1e300), put(2.5), put(-0.05),
    lambda a, k: np.full_like(a, a.flat[0]) if a.size else a,
    lambda a, k: np.full(a.shape, np.iinfo(np.int64).max) if a.dtype.kind in "iu" else a,
    lambda a, k: np.full(a.shape, -1) if a.dtype.kind in "iu" else a,
    lambda a, k: np.flip(a, -1) if a.ndim else a,
    config_text(lambda c: c.update(generations=10**400)),
    config_text(lambda c: c.update(generations=2)),
    config_text(lambda c: c.update(runs=1)),
    config_text(lambda c: c.update(population=6, parents=3)),
    config_text(lambda c: c.update(parents="2")),
    config_text(lambda c: c.update(player=[1, 2])),
    config_text(lambda c: c["player"].update(view="x")),
    config_text(lambda c: c.pop("player")),
    lambda a, k: np.array("[" * 100_000 + "]" * 100_000),
    lambda a, k: np.array('{"population": NaN}'),
    lambda a, k: np.array("not json"),
    lambda a, k: np.array(json.dumps({"parents": 6, "generations": 3, "trials": 2})),
]  # fmt: skip
array_changes = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 100), st.just(0), st.just(0)),
    st.tuples(st.just("change"), st.integers(0, 100), st.integers(0, len(ARRAY_CHANGES) - 1), st.integers(0, 10**4)),
)


def corrupt_arrays(arrays: dict, operation: str, index: int, variant: int, k: int) -> dict:
    arrays = dict(arrays)
    name = sorted(arrays)[index % len(arrays)]
    if operation == "delete":
        del arrays[name]
    else:
        arrays[name] = ARRAY_CHANGES[variant](arrays[name], k)
    return arrays


def read_arrays(path) -> dict:
    with np.load(path, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


def assert_same_record(a: CoevolutionRun, b: CoevolutionRun) -> None:
    assert a.settings == b.settings and a.seed == b.seed and a.run_numbers == b.run_numbers
    for name in RECORD_FIELDS:
        assert same_bits(getattr(a, name), getattr(b, name)), name


def check_record_file(path, other):
    """The loader refuses ``path``, or returns exactly its arrays, which save and load back the same."""
    if refused(load_coevolution_run, path):
        return
    record = load_coevolution_run(path)
    said = read_arrays(path)
    stored = said["settings" if "settings" in said else "config"]  # "config" in version 1
    assert record.settings == AlKhateebSettings.from_dict(json.loads(str(stored)))
    assert record.seed == int(said["seed"]) and record.run_numbers == tuple(said["run_numbers"].tolist())
    for name in RECORD_FIELDS:
        assert np.array_equal(getattr(record, name), said[name]), name
    save_coevolution_run(record, other)
    assert_same_record(load_coevolution_run(other), record)


@pytest.mark.slow
@PROPERTY
@given(damage=byte_damage)
def test_a_damaged_record_loads_the_same_or_is_refused(record_file, damage):
    path, record = record_file
    bad = path.with_name("damaged.npz")
    bad.write_bytes(damaged(path.read_bytes(), damage))
    if not refused(load_coevolution_run, bad):
        assert_same_record(load_coevolution_run(bad), record)


@pytest.mark.slow
@PROPERTY
@given(change=array_changes)
def test_a_changed_record_loads_what_it_says_or_is_refused(record_file, change):
    path, _ = record_file
    bad = path.with_name("changed.npz")
    with open(bad, "wb") as handle:
        np.savez(handle, **corrupt_arrays(read_arrays(path), *change))
    check_record_file(bad, path.with_name("again.npz"))


# --- each case the issue names ----------------------------------------------------------------------------------


def rewrite(path, **changes):
    arrays = read_arrays(path)
    for name, value in changes.items():
        if value is None:
            arrays.pop(name)
        else:
            arrays[name] = value
    out = path.with_name("case.npz")
    with open(out, "wb") as handle:
        np.savez(handle, **arrays)
    return out


def first_set(array, value):
    array = np.array(array, dtype=type(value))
    array.flat[0] = value
    return array


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: {"mean_step": first_set(a["mean_step"], np.nan)}, "'mean_step' holds NaN"),
        (lambda a: {"best_weights": first_set(a["best_weights"], np.inf)}, "'best_weights' holds NaN or an inf"),
        (lambda a: {"totals": a["totals"][:, :-1]}, r"'totals' has shape \(2, 2, 4\); expected \(2, 3, 4\)"),
        (lambda a: {"weights": a["weights"][..., :-1]}, r"'weights' has shape \(2, 4, 71\)"),
        (lambda a: {"best_ids": a["best_ids"].T}, "'best_ids' has shape"),
        (lambda a: {"totals": a["totals"] * 0 + 7}, "'totals' holds 7, above 6"),
        (lambda a: {"totals": a["totals"] * 0 - 7}, "'totals' holds -7, below -6"),
        (lambda a: {"totals": first_set(a["totals"], 6)}, "'totals' must sum to 0"),
        (lambda a: {"totals": a["totals"] + 0.5}, "'totals' must hold whole numbers"),
        (lambda a: {"best_ids": a["best_ids"] * 0 - 1}, "'best_ids' holds -1, below 0"),
        (lambda a: {"best_ids": a["best_ids"] * 0 + 8}, "'best_ids' holds 8, above 7"),
        (lambda a: {"best_ids": a["best_ids"] * 0 + 5}, "born after the generation"),
        (lambda a: {"best_ids": a["best_ids"] * 0 + 1e300}, "'best_ids' holds 1e"),
        (lambda a: {"mean_step": a["mean_step"] * 0}, "'mean_step' holds 0.0; step sizes must be positive"),
        (lambda a: {"steps": -a["steps"]}, "'steps' holds .*; step sizes must be positive"),
        (lambda a: {"weights": a["weights"] > 0}, "'weights' must hold numbers; it holds booleans"),
        (lambda a: {"steps": None}, "'steps' is missing"),
        (lambda a: {"run_numbers": np.array([1, 1])}, "'run_numbers' must be distinct"),
        (lambda a: {"run_numbers": np.array([-1, 0])}, "'run_numbers' holds -1, below 0"),
        (lambda a: {"run_numbers": np.array([0, 2])}, "'run_numbers' holds 2, above 1"),
        (lambda a: {"seed": np.array(-5)}, "'seed' is -5"),
        (lambda a: {"seed": np.array("5")}, "'seed' must be a whole number"),
        (lambda a: {"settings": np.array("[" * 100_000 + "]" * 100_000)}, "'settings' nests too deep"),
        (lambda a: {"settings": np.array('{"runs": 1e400}')}, "'settings' holds invalid settings"),
        (lambda a: {"settings": None}, "'settings' is missing"),
        (lambda a: {"format": np.array("fogel-run")}, "'format' is 'fogel-run'; expected 'al-khateeb-run'"),
        (lambda a: {"format": np.array(3)}, "'format' must be a text"),
        (lambda a: {"version": np.array(0)}, "'version' is 0; expected 1 to 2"),
        (lambda a: {"format": None}, "'format' is missing"),
    ],
)
def test_a_bad_record_says_which_array_is_wrong(record_file, change, message):
    path, _ = record_file
    case = re.escape(str(path.with_name("case.npz")))
    with pytest.raises(ValueError, match=case + r" \(Al-Khateeb co-evolution record\): .*" + message):
        load_coevolution_run(rewrite(path, **change(read_arrays(path))))


def test_records_that_are_not_one_say_so(record_file, tmp_path):
    path, _ = record_file
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("hello")
    (tmp_path / "half.npz").write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    (tmp_path / "folder.npz").mkdir()
    np.save(tmp_path / "one.npy", np.arange(3))
    save_evaluator(np.zeros(72), np.full(72, 0.05), tmp_path / "ttt.json")
    for name in ("empty.npz", "text.npz", "half.npz", "folder.npz", "one.npy", "ttt.json", "missing.npz"):
        with pytest.raises(ValueError, match=re.escape(str(tmp_path / name))):
            load_coevolution_run(tmp_path / name)
    with pytest.raises(ValueError, match="no such file"):
        load_coevolution_run(tmp_path / "missing.npz")
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="flipped.npz"):
        load_coevolution_run(tmp_path / "flipped.npz")


def test_damage_that_numpy_reports_oddly_is_a_value_error_too(record_file, tmp_path):
    path, _ = record_file
    data = path.read_bytes()
    directory = data.find(b"PK\x01\x02")
    encrypted, future = bytearray(data), bytearray(data)
    encrypted[directory + 8] |= 1  # RuntimeError from zipfile: the member is encrypted
    future[directory + 6] = 0xFF  # NotImplementedError from zipfile: a zip version from the future
    for name, damaged_data in (("encrypted", encrypted), ("future", future)):
        (tmp_path / f"{name}.npz").write_bytes(bytes(damaged_data))
        with pytest.raises(ValueError, match=f"{name}.npz is not a readable Al-Khateeb co-evolution record"):
            load_coevolution_run(tmp_path / f"{name}.npz")
    with open(tmp_path / "header.npz", "wb") as handle:
        np.savez(handle, **read_arrays(path), padding=np.zeros(100_000))
    data = (tmp_path / "header.npz").read_bytes()
    end = data.find(b"}", data.find(b"{'descr'", data.find(b"padding.npy")))
    (tmp_path / "header.npz").write_bytes(data[:end] + b" " + data[end + 1 :])  # TokenError from numpy
    with pytest.raises(ValueError, match="header.npz is not a readable Al-Khateeb co-evolution record"):
        load_coevolution_run(tmp_path / "header.npz")


def test_a_record_of_the_other_system_is_named(tmp_path):
    from evolving_ttt.fogel.evolution import FogelSettings, evolve, save_run

    save_run(evolve(FogelSettings(parents=6, generations=2, trials=1), seed=1), tmp_path / "fogel.npz")
    with pytest.raises(ValueError, match="'format' is 'fogel-run'.*read it with load_run"):
        load_coevolution_run(tmp_path / "fogel.npz")
    old = {k: v for k, v in read_arrays(tmp_path / "fogel.npz").items() if k not in ("format", "version")}
    np.savez(tmp_path / "fogel0.npz", **old)  # written before records named their format
    with pytest.raises(ValueError, match="'run_numbers' is missing.*read it with load_run"):
        load_coevolution_run(tmp_path / "fogel0.npz")


def test_a_record_written_before_the_format_field_loads_the_same(record_file, tmp_path):
    path, record = record_file
    arrays = read_arrays(path)
    old = {("config" if k == "settings" else k): v for k, v in arrays.items() if k not in ("format", "version")}
    np.savez_compressed(tmp_path / "old.npz", **old)
    assert_same_record(load_coevolution_run(tmp_path / "old.npz"), record)
    assert load_coevolution_run(tmp_path / "old.npz").totals.dtype == np.int16
    assert str(read_arrays(path)["format"]) == RECORD_FORMAT and int(read_arrays(path)["version"]) == 2


def test_a_record_of_version_1_holds_its_settings_as_config_and_loads_the_same(record_file):
    # Version 2 renamed the settings' array from "config" to "settings" (one vocabulary); version 1 is still read.
    path, record = record_file
    arrays = read_arrays(path)
    assert "settings" in arrays and "config" not in arrays
    old = rewrite(path, version=np.array(1), config=arrays["settings"], settings=None)
    assert_same_record(load_coevolution_run(old), record)


@pytest.mark.parametrize("version, wrong, right", [(2, "config", "settings"), (1, "settings", "config")])
def test_a_record_with_the_other_versions_name_for_its_settings_is_refused(record_file, version, wrong, right):
    path, _ = record_file
    changes = {"version": np.array(version), "settings": None, wrong: read_arrays(path)["settings"]}
    with pytest.raises(ValueError, match=rf"\(Al-Khateeb co-evolution record\): field '{wrong}' is not a field of "
                                         rf"version {version}: its settings are under '{right}'"):  # fmt: skip
        load_coevolution_run(rewrite(path, **changes))


def test_save_coevolution_run_writes_exactly_the_name_given_whole_and_checked(record_file, tmp_path):
    _, record = record_file
    save_coevolution_run(record, tmp_path / "record.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.txt"]
    assert_same_record(load_coevolution_run(tmp_path / "record.txt"), record)
    before = (tmp_path / "record.txt").read_bytes()
    fields = {name: getattr(record, name) for name in RECORD_FIELDS}

    def changed(**changes):
        return CoevolutionRun(record.settings, record.seed, record.run_numbers, **{**fields, **changes})

    broken = [
        changed(mean_step=fields["mean_step"] * np.nan),
        changed(steps=-fields["steps"]),
        changed(totals=fields["totals"][:, :1]),
        changed(weights=[[1, 2], [3]]),
        CoevolutionRun(record.settings, -1, record.run_numbers, **fields),
        CoevolutionRun(record.settings, record.seed, (1, 1), **fields),
    ]
    for bad in broken:
        with pytest.raises(ValueError, match="record.txt was not written"):
            save_coevolution_run(bad, tmp_path / "record.txt")
        assert (tmp_path / "record.txt").read_bytes() == before
    with pytest.raises(ValueError, match="run must be a CoevolutionRun"):
        save_coevolution_run("record", tmp_path / "other.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.txt"]


# --- evaluator files: each case the issue names ---------------------------------------------------------------


def evaluator_record(tmp_path):
    path = tmp_path / "ttt.json"
    save_evaluator(np.linspace(-1, 1, 72), np.full(72, 0.05), path, seed=1)
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (lambda r: json_text({**r, "weights": ["@BIGINT@"] * 72}), "more than 30 digits"),
        (lambda r: json_text({**r, "weights": ["@E400@"] * 72}), "too large"),
        (lambda r: json_text({**r, "step_sizes": ["@NAN@"] * 72}), "the number NaN is not allowed"),
        (lambda r: json_text({**r, "weights": ["@DEEP@"] * 72}), "nests deeper than 200"),
        (lambda r: json_text({**r, "run": "@DEEP201@"}), "nests deeper than 200"),
        (lambda r: json_text({**r, "weights": [str(v) for v in r["weights"]]}), "must hold numbers only; it holds str"),
        (lambda r: json_text({**r, "weights": [True] * 72}), "must hold numbers only; it holds bool"),
        (lambda r: json_text({**r, "step_sizes": [1] * 71 + [False]}), "must hold numbers only; it holds bool"),
        (lambda r: json_text({**r, "weights": [[0.5]] * 72}), "must be a 1-dimensional array"),
        (lambda r: json_text({**r, "step_sizes": [0.0] * 72}), "step sizes must be positive"),
        (lambda r: json_text({**r, "layers": [9.0, 5, 3, 1]}), "'layers' must be"),
        (lambda r: json_text({**r, "version": True}), "'version' must be a whole number"),
        (lambda r: json_text({**r, "format": "fogel-ttt-network"}), 'it needs "format": "al-khateeb-evaluator"'),
        (lambda r: json_text([r]), "is not an evaluator file"),
        (lambda r: "", "not valid JSON"),
        (lambda r: json_text(r)[:-30], "not valid JSON"),
    ],
)
def test_a_bad_evaluator_file_says_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text(evaluator_record(tmp_path)))
    with pytest.raises(ValueError, match=message) as error:
        load_evaluator(path)
    assert "bad.json" in str(error.value)


def test_text_and_boolean_weights_are_refused_alike_by_both_player_files(tmp_path):
    from evolving_ttt.fogel.network import load_network, random_network, save_network

    save_network(random_network(np.random.default_rng(1)), tmp_path / "net.json")
    save_evaluator(np.zeros(72), np.full(72, 0.05), tmp_path / "ttt.json")
    for value, kind in (("0.5", "str"), (True, "bool")):
        network = json.loads((tmp_path / "net.json").read_text())
        network["output_bias"][0] = value
        (tmp_path / "net2.json").write_text(json.dumps(network))
        evaluator = json.loads((tmp_path / "ttt.json").read_text())
        evaluator["weights"][0] = value
        (tmp_path / "ttt2.json").write_text(json.dumps(evaluator))
        for load, name, field in ((load_network, "net2.json", "output_bias"), (load_evaluator, "ttt2.json", "weights")):
            with pytest.raises(ValueError, match=f"{name} .*: field '{field}' must hold numbers only; it holds {kind}"):
                load(tmp_path / name)


def test_a_missing_or_unreadable_evaluator_file_says_so(tmp_path):
    with pytest.raises(ValueError, match="missing.json could not be read"):
        load_evaluator(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="could not be read"):
        load_evaluator(tmp_path)
    (tmp_path / "latin.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(ValueError, match="latin.json is not valid JSON"):
        load_evaluator(tmp_path / "latin.json")


@pytest.mark.parametrize("field", EVALUATOR_FIELDS)
def test_provenance_cannot_override_the_format_fields(tmp_path, field):
    with pytest.raises(ValueError, match=rf"may not set the format's own field\(s\) \['{field}'\]"):
        save_evaluator(np.zeros(72), np.full(72, 0.05), tmp_path / "ttt.json", **{field: 1})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("weights", "steps", "provenance", "message"),
    [
        (np.zeros(72), np.full(72, -0.05), {}, "steps must be positive"),
        (np.zeros(72), np.zeros(72), {}, "steps must be positive"),
        (np.full(72, np.nan), np.full(72, 0.05), {}, "weights must be finite"),
        (np.zeros(71), np.full(72, 0.05), {}, "shape"),
        (["a"] * 72, np.full(72, 0.05), {}, "weights must be an array of 72 numbers"),
        (np.zeros(72), np.full(72, 0.05), {"seed": float("nan")}, "Out of range float values"),
        (np.zeros(72), np.full(72, 0.05), {"seed": 10**400}, "more than 30 digits"),
        (np.zeros(72), np.full(72, 0.05), {"experiment": PAPER_AL_KHATEEB}, "not JSON serializable"),
        (np.zeros(72), np.full(72, 0.05), {"deep": json.loads("[" * 300 + "]" * 300)}, "nests deeper than 200"),
    ],
)
def test_save_evaluator_refuses_what_load_evaluator_would_refuse_and_keeps_the_old_file(
    tmp_path, weights, steps, provenance, message
):
    path = tmp_path / "ttt.json"
    save_evaluator(np.zeros(72), np.full(72, 0.05), path, seed=1)
    before = path.read_text()
    with pytest.raises(ValueError, match=message):
        save_evaluator(weights, steps, path, **provenance)
    assert path.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["ttt.json"]


def test_save_evaluator_writes_exactly_the_name_given(tmp_path):
    save_evaluator(np.ones(72), np.full(72, 0.5), tmp_path / "ttt.txt", run=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ttt.txt"]
    weights, steps, provenance = load_evaluator(tmp_path / "ttt.txt")
    assert np.array_equal(weights, np.ones(72)) and np.array_equal(steps, np.full(72, 0.5)) and provenance == {"run": 3}


def test_the_committed_ttt_loads_and_saves_to_the_same_text(repo_root, tmp_path):
    path = repo_root / "book" / "data" / "al_khateeb_ttt.json"
    weights, steps, provenance = load_evaluator(path)
    assert provenance["seed"] == 1 and provenance["run"] == 9 and weights.shape == steps.shape == (72,)
    save_evaluator(weights, steps, tmp_path / "ttt.json", **provenance)
    assert (tmp_path / "ttt.json").read_text() == path.read_text()


# --- the memory estimate and the types of arguments -------------------------------------------------------------


def test_the_memory_estimate_counts_generations_population_and_workers():
    paper = estimated_memory(PAPER_AL_KHATEEB)
    assert 100e6 < paper < 250e6
    assert estimated_memory(AlKhateebSettings(generations=10**9)) > 1e12
    assert estimated_memory(AlKhateebSettings(generations=20_000)) - paper > 20 * 18_000 * 600
    assert estimated_memory(AlKhateebSettings(population=2000, parents=1000)) > 20 * 2000 * 100_000
    assert estimated_memory(PAPER_AL_KHATEEB, workers=8) > paper + 7 * 60e6
    assert estimated_memory(AlKhateebSettings(generations=10**400)) == ag.MEMORY_ESTIMATE_CAP


def test_al_khateeb_with_a_billion_generations_is_refused_by_the_estimate(tmp_path, monkeypatch, capsys):
    import evolving_ttt.cli as cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the run started although the memory estimate should refuse it")

    monkeypatch.setattr(cli, "run_system", must_not_run)
    with pytest.raises(SystemExit) as stop:
        cli.main(["al-khateeb", "--quiet", "--generations", str(10**9), "--out", str(tmp_path / "run.npz")])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and "memory" in error


WEIGHTS = np.zeros(72)
BOARD = np.zeros(9, dtype=np.int8)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: ae.check_weights("abc"), "weights"),
        (lambda: ae.check_weights(object()), "weights"),
        (lambda: ae.evaluator_layers(None), "weights"),
        (lambda: ae.evaluate_boards(WEIGHTS, "x"), "boards"),
        (lambda: ae.random_evaluators(None, 2), "rng"),
        (lambda: ae.move_values(WEIGHTS, BOARD, "x"), "settings"),
        (lambda: ae.one_ply_move(WEIGHTS, BOARD, None), "settings"),
        (lambda: ae.one_ply_player(WEIGHTS, 1, "x"), "settings"),
        (lambda: ae.self_adaptive_mutation("a", "b", "c", "d"), "weights"),
        (lambda: ae.coevolution_game(None, WEIGHTS), "weights"),
        (lambda: ae.coevolution_game(WEIGHTS, WEIGHTS, "x"), "settings"),
        (lambda: ae.round_robin_results(WEIGHTS), "population"),
        (lambda: ae.round_robin_results(np.zeros((2, 72)), "x"), "settings"),
        (lambda: ae.round_robin_totals(None), "results"),
        (lambda: ae.rank_population(None, None), "totals"),
        (lambda: ae.draw_coevolution(None), "rng"),
        (lambda: ae.draw_coevolution(np.random.default_rng(), "config"), "config"),
        (lambda: ae.coevolve_readable("config"), "config"),
        (lambda: ae.coevolve_readable(SMALL, run="0"), "run"),
        (lambda: AlKhateebSettings.from_dict("config"), "record"),
        (lambda: coevolve("config"), "config"),
        (lambda: coevolve(SMALL, seed="1"), "seed"),
        (lambda: coevolve(SMALL, runs=1), "runs"),
        (lambda: coevolve(SMALL, runs=[None]), "runs"),
        (lambda: ag.merge_coevolution_runs([]), "parts"),
        (lambda: ag.merge_coevolution_runs([None]), "parts"),
        (lambda: save_coevolution_run(None, "record.npz"), "run"),
        (lambda: load_coevolution_run(None), "path"),
        (lambda: ag.run_coevolution("config"), "config"),
        (lambda: ag.run_coevolution(SMALL, seed=-1), "seed"),
        (lambda: save_evaluator(WEIGHTS, np.full(72, 0.05), None), "path"),
        (lambda: load_evaluator(None), "path"),
        (lambda: estimated_memory("config"), "config"),
        (lambda: estimated_memory(SMALL, "2"), "workers"),
    ],
)
def test_public_functions_given_the_wrong_type_raise_a_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=re.escape(argument)):
        call()


@pytest.mark.parametrize(
    "experiment",
    ["x", [1], {"runs": "a", "generations": 3}, {"runs": 2, "generations": True}, None,
     {**PAPER_AL_KHATEEB.as_dict(), "player": 5}],
)  # fmt: skip
def test_the_arena_player_refuses_an_experiment_of_the_wrong_type_rather_than_show_the_books(tmp_path, experiment):
    # Issue 37: the provenance's experiment, where present, is the experiment's settings; a text, a list or settings
    # of the wrong types are refused by the loader, never replaced by the book's sizes.
    from evolving_ttt.al_khateeb.system import al_khateeb_ttt
    from evolving_ttt.records import DATA

    record = json.loads((DATA / "al_khateeb_ttt.json").read_text())
    path = tmp_path / "ttt.json"
    path.write_text(json.dumps({**record, "experiment": experiment}))
    with pytest.raises(ValueError, match=r"ttt\.json \(evaluator file\): field 'experiment'"):
        al_khateeb_ttt(path)
    path.write_text(json.dumps({key: value for key, value in record.items() if key != "experiment"}))
    assert al_khateeb_ttt(path).training.startswith("20 runs x 2,000 generations")  # absent: the book's sizes
