"""Ling and Lam's files (issue 27): every corruption of a valid file loads the same content or raises ValueError.

Three kinds of file: the training runs (``.npz``, :func:`save_training_runs`), the summary of runs (JSON,
:func:`save_runs_summary`) and a trained network (JSON, :func:`save_trained_network`). For each, hypothesis
corrupts a small valid file (truncation, byte flips, deleted keys or arrays, changed types, NaN, 10**400, deep
nesting) and the loader must give back the same content or raise ``ValueError``. A byte flip may also turn the
file into another valid one (a digit of a number, a letter of a provenance key): then what the loader returns
must itself be valid, which the saver proves by writing it and the loader by reading it back unchanged.
The plain tests below pin each case the issue names.
"""

import dataclasses
import io
import json
import re
import zipfile

import numpy as np
import pytest
from corruption import OTHER_TYPES, SENTINEL, TEXT_OF, corrupted_json, json_type, value_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolving_ttt.ling_lam import experiment as ex
from evolving_ttt.ling_lam.ga import ImprovedGASettings, TraditionalGASettings

FAST = settings(max_examples=200, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
CONFIG = ex.LingLamSettings(seeds=2, iterations=4, training_count=20)
DEEP = 100_000


# --- The files, and what they load to --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs():
    return {method: ex.train(method, CONFIG, seed=5) for method in ("nndtf", "baseline")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("ling_lam_files")


class Quiet(dict):
    """A dict that hypothesis prints briefly when a test fails (the files are long)."""

    def __repr__(self) -> str:
        return f"<{', '.join(self)}>"


@pytest.fixture(scope="module")
def files(runs, folder):
    """The original bytes of a valid file of each kind."""
    ex.save_training_runs(runs, folder / "runs.npz")
    ex.save_runs_summary(runs, folder / "summary.json", curve_step=2, command="a test")
    best = runs["nndtf"]
    ex.save_trained_network(best.network(), folder / "network.json", **best.provenance(), note="a test")
    return Quiet({kind: (folder / name).read_bytes() for kind, name in
                  (("npz", "runs.npz"), ("summary", "summary.json"), ("network", "network.json"))})  # fmt: skip


def array_content(array):
    return None if array is None else (array.dtype.str, array.shape, array.tobytes())


def runs_content(runs):
    return {label: (run.method, run.settings, run.seed, run.evaluations, run.curve_step,
                    *(array_content(a) for a in (run.best_fitness, run.champions, run.champion_fitness,
                                                 run.population_best)))
            for label, run in runs.items()}  # fmt: skip


def content(kind, loaded):
    """What a loader returned, in a form that compares exactly (dtypes and bits of the arrays)."""
    if kind == "npz":
        return runs_content(loaded)
    if kind == "summary":
        runs, provenance = loaded
        return runs_content(runs), json.dumps(provenance, sort_keys=True)
    network, provenance = loaded
    return network.kind, network.order, array_content(network.genes), json.dumps(provenance, sort_keys=True)


LOAD = {"npz": ex.load_training_runs, "summary": ex.load_runs_summary, "network": ex.load_trained_network}


def resave(kind, loaded, path):
    """Write what a loader returned with the kind's saver (which checks it by the loader's rules)."""
    if kind == "npz":
        ex.save_training_runs(loaded, path)
    elif kind == "summary":
        runs, provenance = loaded
        ex.save_runs_summary(runs, path, next(iter(runs.values())).curve_step, **provenance)
    else:
        ex.save_trained_network(loaded[0], path, **loaded[1])


def outcome(kind, data: bytes, folder, original) -> str:
    """Load ``data`` as a ``kind`` file: "refused" (ValueError), "same", or "valid" (another valid file).

    Anything else escaping the loader fails the test; so does a different content that the saver and the
    loader do not carry through unchanged.
    """
    path = folder / f"corrupt-{kind}"
    path.write_bytes(data)
    try:
        loaded = LOAD[kind](path)
    except ValueError as error:
        assert str(path) in str(error)  # the message names the file
        return "refused"
    if content(kind, loaded) == original:
        return "same"
    again = folder / f"again-{kind}"
    resave(kind, loaded, again)
    assert content(kind, LOAD[kind](again)) == content(kind, loaded)
    return "valid"


@pytest.fixture(scope="module")
def originals(files, folder):
    return Quiet({kind: content(kind, LOAD[kind](_write(folder / f"original-{kind}", data)))
                  for kind, data in files.items()})  # fmt: skip


def _write(path, data):
    path.write_bytes(data)
    return path


def test_training_runs_written_before_version_2_hold_their_settings_as_config_and_load_the_same(files, folder):
    # Version 2 added format and version and renamed METHOD/config to METHOD/settings (one vocabulary).
    arrays = npz_arrays(files["npz"])
    assert str(arrays["format"]) == ex.TRAINING_RUNS_FORMAT and int(arrays["version"]) == 2
    assert {"nndtf/settings", "baseline/settings"} <= set(arrays) and not any("config" in name for name in arrays)
    old = {name.replace("/settings", "/config"): value for name, value in arrays.items()
           if name not in ("format", "version")}  # fmt: skip
    loaded = ex.load_training_runs(_write(folder / "old-runs.npz", npz_bytes(old)))
    assert runs_content(loaded) == runs_content(ex.load_training_runs(_write(folder / "runs-v2.npz", files["npz"])))
    for changes, wrong, right in (({"nndtf/config": arrays["nndtf/settings"]}, "nndtf/config", "nndtf/settings"),
                                  (old | {"baseline/settings": old["baseline/config"]}, "baseline/settings",
                                   "baseline/config")):  # fmt: skip
        base = arrays if wrong.endswith("config") else {}
        path = _write(folder / "wrong-runs.npz", npz_bytes({**base, **changes}))
        with pytest.raises(ValueError, match=f"field '{wrong}' is not a field of version .: its settings are under "
                                             f"'{right}'"):  # fmt: skip
            ex.load_training_runs(path)


# --- Corruptions common to every file: truncation and byte flips ------------------------------------------------


@FAST
@given(data=st.data(), kind=st.sampled_from(["npz", "summary", "network"]))
def test_a_truncated_file_is_refused(files, folder, originals, data, kind):
    raw = files[kind]
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    # Only the final newline of a JSON file can go without changing its content.
    assert outcome(kind, raw[:cut], folder, originals[kind]) in (("refused", "same") if raw[cut:].isspace()
                                                                 else ("refused",))  # fmt: skip


@FAST
@given(data=st.data(), kind=st.sampled_from(["npz", "summary", "network"]))
def test_flipped_bytes_load_the_same_another_valid_file_or_are_refused(files, folder, originals, data, kind):
    raw = bytearray(files[kind])
    for _ in range(data.draw(st.integers(1, 3), label="flips")):
        where = data.draw(st.integers(0, len(raw) - 1), label="where")
        raw[where] ^= data.draw(st.integers(1, 255), label="bits")
    result = outcome(kind, bytes(raw), folder, originals[kind])
    if kind == "npz":  # the archive's checksums catch a changed array
        assert result in ("refused", "same")


# --- The .npz file: arrays deleted, of another type or shape, NaN, huge, nested ------------------------------------


def npz_arrays(raw: bytes) -> dict:
    with np.load(io.BytesIO(raw)) as loaded:
        return {name: loaded[name] for name in loaded.files}


def npz_bytes(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def changed(array: np.ndarray, how: str) -> np.ndarray:
    if how == "bool":
        return array.astype(bool) if array.dtype.kind != "U" else np.array(True)
    if how == "text":
        return array.astype(str)
    if how == "int":
        return array.astype(np.int64) if array.dtype.kind != "U" else np.array(7)
    if how == "float":
        return array.astype(float) if array.dtype.kind != "U" else np.array(7.5)
    if how == "flat":
        return array.reshape(-1)[:-1] if array.size > 1 else np.array([array.item()] * 2)
    return array[None]  # "axis": one axis more


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_npz_corrupted_arrays_are_refused(files, folder, originals, data):
    arrays = npz_arrays(files["npz"])
    name = data.draw(st.sampled_from(sorted(arrays)), label="array")
    how = data.draw(st.sampled_from(["delete", "bool", "text", "int", "float", "flat", "axis", "nan", "huge",
                                     "deep"]), label="corruption")  # fmt: skip
    array = arrays[name]
    if how == "delete":
        del arrays[name]
    elif how == "nan":
        arrays[name] = np.full(array.shape, np.nan) if array.dtype.kind != "U" else np.array("NaN")
    elif how == "huge":  # no .npz number can be 10**400: a float becomes inf, a JSON text holds the digits
        huge = np.array(str(array).replace("4", "1" + "0" * 400).replace("[", "[1" + "0" * 400 + ", "))
        arrays[name] = np.full(array.shape, np.inf) if array.dtype.kind != "U" else huge
    elif how == "deep":
        arrays[name] = np.array("[" * DEEP + "]" * DEEP)
    else:
        arrays[name] = changed(array, how)
    result = outcome("npz", npz_bytes(arrays), folder, originals["npz"])
    if how == "delete" and name.endswith("/population_best"):  # optional: summaries of runs have none
        assert result == "valid"
    elif name in arrays and arrays[name].dtype == array.dtype and np.array_equal(arrays[name], array):
        assert result == "same"  # the "change" changed nothing (an int array made int)
    else:
        assert result == "refused"


def test_npz_files_that_are_not_archives_of_runs_are_refused(files, folder, originals, runs):
    for raw in (b"", b"not an archive", files["summary"], npz_bytes({"x": np.zeros(3)})):
        assert outcome("npz", raw, folder, originals["npz"]) == "refused"
    single = io.BytesIO()
    np.save(single, np.zeros(3))
    assert outcome("npz", single.getvalue(), folder, originals["npz"]) == "refused"
    pickled = io.BytesIO()
    np.savez(pickled, methods=np.array([{"a": 1}], dtype=object))
    path = _write(folder / "pickled.npz", pickled.getvalue())
    with pytest.raises(ValueError, match="pickled"):
        ex.load_training_runs(path)
    arrays = npz_arrays(files["npz"])
    arrays["methods"] = np.array('["nndtf"]')  # a method dropped from the list: its arrays are left over
    assert outcome("npz", npz_bytes(arrays), folder, originals["npz"]) == "refused"
    arrays["stray"] = np.zeros(2)
    assert outcome("npz", npz_bytes(arrays), folder, originals["npz"]) == "refused"


# --- The JSON files: keys deleted, values of another type, NaN, huge numbers, deep nesting ---------------------------


FREE_PROVENANCE = {"summary": {"command"}, "network": {"note"}}
"""Top-level fields whose content is the caller's (anything JSON): a change there is another valid file."""
OPTIONAL = {"network": {"fitness", "seed", "run", "iterations", "experiment"}}
"""Top-level provenance the loader checks when present, and which may be left out."""


@pytest.mark.slow
@FAST
@given(data=st.data(), kind=st.sampled_from(["summary", "network"]))
def test_json_corruptions_of_the_formats_own_fields_are_refused(files, folder, originals, data, kind):
    record = json.loads(files[kind])
    path = data.draw(st.sampled_from(value_paths(record)), label="path")
    how = data.draw(st.sampled_from(["delete", "type", "nan", "huge", "deep"]), label="corruption")
    value = record
    for key in path:
        value = value[key]
    replacement = None
    if how == "type":
        choices = [name for name in OTHER_TYPES if name != json_type(value)]
        replacement = OTHER_TYPES[data.draw(st.sampled_from(choices), label="type")]
    if how == "delete" and isinstance(path[-1], int) and len(path) > 1 and path[-2] == "methods":
        return  # a list element of "methods" (in the experiment settings): the list is still a valid list
    result = outcome(kind, corrupted_json(files[kind], path, how, replacement), folder, originals[kind])
    free = path[0] in FREE_PROVENANCE.get(kind, set())
    if how in TEXT_OF:  # NaN, 10**400 and 100,000 levels are refused wherever they are
        assert result == "refused"
    elif free or (how == "delete" and (path[0] in OPTIONAL.get(kind, set()) and len(path) == 1
                                       or kind == "summary" and path[0] == "methods" and len(path) == 2)):  # fmt: skip
        assert result in ("valid", "refused")  # the caller's provenance, an optional field, or a whole run
    else:
        assert result in ("refused", "same")  # same: a change the format cannot see (true for 1 in "version")


# --- The cases the issue names ---------------------------------------------------------------------------------------


def test_curve_step_zero_negative_or_not_dividing_is_refused_not_a_division_by_zero(files, folder):
    record = json.loads(files["summary"])
    for step, message in ((0, r"curve_step.*expected 1 to"), (-2, r"curve_step.*expected 1 to"),
                          (3, "must divide the 4 iterations"), (True, "must be a whole number"),
                          (2.0, "must be a whole number")):  # fmt: skip
        path = _write(folder / "step.json", json.dumps({**record, "curve_step": step}).encode())
        with pytest.raises(ValueError, match=message):
            ex.load_runs_summary(path)
    arrays = npz_arrays(files["npz"])
    for step in (0, -1):
        path = _write(folder / "step.npz", npz_bytes({**arrays, "nndtf/curve_step": np.array(step)}))
        with pytest.raises(ValueError, match="curve_step"):
            ex.load_training_runs(path)


def test_weights_as_huge_numbers_texts_or_booleans_are_refused(files, folder):
    record = json.loads(files["network"])
    for genes, message in ((SENTINEL, "more than 30 digits"), (["0.5"] * 114, "only numbers"),
                           ([True] * 114, "only numbers"), ([0.1] * 113 + [False], "only numbers"),
                           ([0.1] * 113 + [None], "only numbers"), ("0.5", "list 1 deep")):  # fmt: skip
        text = json.dumps({**record, "genes": genes}).replace(json.dumps(SENTINEL), "[" + "1" + "0" * 400 + "]")
        path = _write(folder / "weights.json", text.encode())
        with pytest.raises(ValueError, match=message):
            ex.load_trained_network(path)
    summary = json.loads(files["summary"])
    summary["methods"]["nndtf"]["champions"][0][3] = True
    with pytest.raises(ValueError, match="champions.*only numbers"):
        ex.load_runs_summary(_write(folder / "weights.json", json.dumps(summary).encode()))


def test_deep_nesting_is_refused_in_every_file(files, folder):
    deep = "[" * DEEP + "]" * DEEP
    for kind in ("summary", "network"):
        record = json.loads(files[kind])
        record["genes" if kind == "network" else "curve_step"] = SENTINEL
        path = _write(folder / f"deep-{kind}.json", json.dumps(record).replace(json.dumps(SENTINEL), deep).encode())
        with pytest.raises(ValueError, match="nests deeper"):
            LOAD[kind](path)
    arrays = npz_arrays(files["npz"])
    path = _write(folder / "deep.npz", npz_bytes({**arrays, "baseline/settings": np.array(deep)}))
    with pytest.raises(ValueError, match="baseline/settings.*nests too deep"):
        ex.load_training_runs(path)


def test_curves_with_nan_the_wrong_shape_or_outside_0_1_and_negative_counts_are_refused(files, folder, runs):
    arrays = npz_arrays(files["npz"])
    best = arrays["nndtf/best_fitness"]
    cases = {
        "nndtf/best_fitness": [(np.where(np.arange(best.size).reshape(best.shape) == 3, np.nan, best), "NaN"),
                               (best[:, :-1], r"shape \(2, 4\); expected \(2, 5\)"), (best[:1], "shape"),
                               (best * 0 + 1.5, "above 1.0"), (best - 2, "below 0.0"),
                               (np.where(np.arange(5) == 1, best - 0.01, best), "falls somewhere")],
        "nndtf/champion_fitness": [(arrays["nndtf/champion_fitness"] * 0.5, "differs from the last column")],
        "nndtf/champions": [(arrays["nndtf/champions"] + 2, "above 1.0"),
                            (arrays["nndtf/champions"][:, :89], r"shape \(2, 89\)")],
        "baseline/population_best": [(arrays["baseline/best_fitness"] + 0.01, "exceeds the best fitness so far")],
        "nndtf/evaluations": [(np.array(-1), "expected 0 to"), (np.array(3.5), "whole number")],
        "nndtf/seed": [(np.array(-4), "expected 0 to"), (np.array(np.nan), "whole number")],
    }  # fmt: skip
    for name, changes in cases.items():
        for value, message in changes:
            path = _write(folder / "bad.npz", npz_bytes({**arrays, name: value}))
            with pytest.raises(ValueError, match=f"{name}.*{message}" if "/" in name else message):
                ex.load_training_runs(path)
    summary = json.loads(files["summary"])
    entry = summary["methods"]["baseline"]
    for field, value, message in (("evaluations", -5, "evaluations.*expected 0"), ("seed", -1, "seed"),
                                  ("champion_fitness", [1.5, 0.5], "above 1.0"),
                                  ("best_fitness", [[0.5, 0.5]] * 2, r"shape \(2, 2\); expected \(2, 3\)"),
                                  ):  # fmt: skip
        summary["methods"]["baseline"] = {**entry, field: value}
        path = _write(folder / "bad.json", json.dumps(summary).encode())
        with pytest.raises(ValueError, match=message):
            ex.load_runs_summary(path)


def test_missing_empty_truncated_and_other_files_name_the_file(folder, files):
    for path in (folder / "missing.npz", folder / "missing.json"):
        for load in LOAD.values():
            with pytest.raises(ValueError, match=f"{re.escape(str(path))} could not be read"):
                load(path)
    empty = _write(folder / "empty", b"")
    for load in LOAD.values():
        with pytest.raises(ValueError, match=f"{re.escape(str(empty))} is not"):
            load(empty)
    with pytest.raises(ValueError, match="not a readable Ling-Lam training runs"):
        ex.load_training_runs(_write(folder / "summary-as-npz.npz", files["summary"]))
    with pytest.raises(ValueError, match="not a Ling-Lam network"):
        ex.load_trained_network(_write(folder / "summary-as-network.json", files["summary"]))


def test_settings_in_files_must_be_complete_and_valid(files, folder):
    record = json.loads(files["summary"])
    experiment = record["methods"]["nndtf"]["experiment"]
    for change, message in (({"iterations": 0}, "iterations must be a whole number >= 1"),
                            ({"training_seed": "x"}, "training_seed"),
                            ({"colour": 3}, r"unknown settings \['colour'\]"),
                            ({"improved": {**experiment["improved"], "w": 2}}, "w must be a probability"),
                            ({"traditional": {**experiment["traditional"], "shape": "5"}}, "shape must be a"),
                            ({"improved": {"w": 0.1}}, "improved: missing settings")):  # fmt: skip
        record["methods"]["nndtf"]["experiment"] = {**experiment, **change}
        with pytest.raises(ValueError, match=message):
            ex.load_runs_summary(_write(folder / "settings.json", json.dumps(record).encode()))
    del experiment["population"]
    record["methods"]["nndtf"]["experiment"] = experiment
    with pytest.raises(ValueError, match=r"missing settings \['population'\]"):
        ex.load_runs_summary(_write(folder / "settings.json", json.dumps(record).encode()))


def test_the_network_files_layout_and_known_provenance_are_checked(files, folder):
    record = json.loads(files["network"])
    for change, message in (({"layout": {"input_weights": [0, 72]}}, "layout"), ({"fitness": 1.5}, "fitness"),
                            ({"fitness": "0.9"}, "fitness"), ({"run": -1}, "run"), ({"iterations": 0}, "iterations"),
                            ({"experiment": {"seeds": 2}}, "experiment.*missing settings"),
                            ({"order": "backwards"}, "order"), ({"kind": ["nndtf"]}, "kind")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            ex.load_trained_network(_write(folder / "n.json", json.dumps({**record, **change}).encode()))


# --- The savers ---------------------------------------------------------------------------------------------------


def test_savers_write_exactly_the_path_given_whole_and_atomically(runs, folder):
    out = folder / "saved" / "run.txt"
    out.parent.mkdir()
    ex.save_training_runs(runs, out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["run.txt"]  # no run.txt.npz, no temporary left
    assert runs_content(ex.load_training_runs(out)) == runs_content(runs)
    before = out.read_bytes()
    broken = {"nndtf": dataclasses.replace(runs["nndtf"], seed=-1)}
    with pytest.raises(ValueError, match="was not written.*seed"):
        ex.save_training_runs(broken, out)
    assert out.read_bytes() == before and sorted(p.name for p in out.parent.iterdir()) == ["run.txt"]
    with pytest.raises(ValueError, match="folder .* does not exist"):
        ex.save_training_runs(runs, folder / "nowhere" / "run.npz")


def test_savers_refuse_what_their_loaders_would_refuse(runs, folder):
    run = runs["nndtf"]
    path = folder / "refused.json"
    cases = [
        (lambda: ex.save_runs_summary(runs, path, curve_step=0), "curve_step"),
        (lambda: ex.save_runs_summary(runs, path, curve_step=-2), "curve_step"),
        (lambda: ex.save_runs_summary(runs, path, curve_step=3), "divide"),
        (lambda: ex.save_runs_summary(runs, path, 2, format="mine"), r"provenance may not set .*'format'"),
        (lambda: ex.save_runs_summary(runs, path, 2, version=2), "version"),
        (lambda: ex.save_runs_summary(runs, path, 2, methods={}), "methods"),
        (lambda: ex.save_runs_summary(runs, path, 2, note=float("nan")), "not plain JSON"),
        (lambda: ex.save_runs_summary(runs, path, 2, note=10**400), "more than 30 digits"),
        (lambda: ex.save_runs_summary(runs, path, 2, note=object()), "not plain JSON"),
        (lambda: ex.save_trained_network(run.network(), path, kind="baseline"), "'kind'"),
        (lambda: ex.save_trained_network(run.network(), path, genes=[0.0]), "'genes'"),
        (lambda: ex.save_trained_network(run.network(), path, format="x", version=2), "'format', 'version'"),
        (lambda: ex.save_trained_network(run.network(), path, fitness=2.0), "fitness"),
        (lambda: ex.save_trained_network(run.network(), path, seed=float("nan")), "not plain JSON"),
        (lambda: ex.save_training_runs({"baseline": run}, folder / "r.npz"), "keyed by their method"),
        (lambda: ex.save_training_runs({}, folder / "r.npz"), "non-empty dict"),
    ]
    for save, message in cases:
        with pytest.raises(ValueError, match=message):
            save()
        assert not path.exists() and not list(folder.glob(".*partial*"))
    network = run.network()
    network.genes[0] = np.nan  # a frozen dataclass, but its array can still be changed in place
    with pytest.raises(ValueError, match="genes must lie in"):
        ex.save_trained_network(network, path)


def test_a_summary_of_a_summary_keeps_every_other_point(runs, folder):
    ex.save_runs_summary(runs, folder / "every-2.json", curve_step=2, command="first")
    sampled, provenance = ex.load_runs_summary(folder / "every-2.json")
    ex.save_runs_summary(sampled, folder / "every-4.json", curve_step=4, **provenance)
    again, _ = ex.load_runs_summary(folder / "every-4.json")
    assert np.array_equal(again["nndtf"].best_fitness, runs["nndtf"].best_fitness[:, ::4])
    with pytest.raises(ValueError, match="multiple of the curve_step"):
        ex.save_runs_summary(sampled, folder / "every-1.json", curve_step=1)


def test_the_committed_files_pass_every_check(repo_root):
    data = repo_root / "book" / "data"
    for name in ("ling_lam_runs.json", "ling_lam_readings.json"):
        runs, provenance = ex.load_runs_summary(data / name)
        assert runs and all(run.best_fitness.shape[0] == run.settings.seeds for run in runs.values())
    for kind in ("nndtf", "baseline"):
        network, provenance = ex.load_trained_network(data / f"ling_lam_{kind}.json")
        assert network.kind == kind and 0 <= provenance["fitness"] <= 1


def test_settings_refuse_zero_iterations_and_wrong_types():
    for make, message in ((lambda: ex.LingLamSettings(iterations=0), "iterations must be a whole number >= 1"),
                          (lambda: ImprovedGASettings(iterations=0), "iterations"),
                          (lambda: TraditionalGASettings(iterations=0), "iterations"),
                          (lambda: TraditionalGASettings(shape=float("inf")), "shape"),
                          (lambda: ex.LingLamSettings(improved={}), "improved must be an ImprovedGASettings"),
                          (lambda: ex.LingLamSettings.from_dict("x"), "settings must be an object")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            make()


def test_the_npz_holds_each_runs_arrays_under_its_method(files):
    with zipfile.ZipFile(io.BytesIO(files["npz"])) as archive:
        names = sorted(archive.namelist())
    assert "methods.npy" in names and "nndtf/best_fitness.npy" in names and "baseline/population_best.npy" in names
