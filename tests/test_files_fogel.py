"""Issue 27 for Fogel (1993): the network file (.json) and the run record (.npz) are read and written carefully.

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

from evolving_ttt.fogel import evolution as fe
from evolving_ttt.fogel import network as fn
from evolving_ttt.fogel.evolution import (
    POPULATION_FIELDS,
    RUN_FORMAT,
    EvolutionRun,
    FogelSettings,
    estimated_memory,
    evolve,
    load_run,
    save_run,
)
from evolving_ttt.fogel.network import NETWORK_FIELDS, Network, load_network, random_network, save_network

WEIGHTS = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")
SMALL = FogelSettings(parents=6, generations=3, trials=2)
PROPERTY = settings(derandomize=True, deadline=None, database=None, max_examples=300)


# --- shared corruptions ----------------------------------------------------------------------------------------

JSON_CHANGES = json_changes([11, [True] * 9, ["1"] * 9, [0.1] * 9, [[0.1] * 9] * 10])


# --- the network file (JSON) ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def network_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("network")
    network = random_network(np.random.default_rng(27))
    path = folder / "net.json"
    save_network(network, path, seed=3, trial=1, note="small", experiment=SMALL.as_dict())
    return path, network


def check_network_file(path, other):
    """The loader refuses ``path``, or returns exactly what it says, which saves and loads back the same."""
    if refused(load_network, path):
        return
    network, provenance = load_network(path)
    said = json.loads(path.read_text())
    assert said["format"] == fn.NETWORK_FORMAT and said["version"] == 1 and said["hidden_count"] == network.hidden_count
    for name in WEIGHTS:
        assert same_bits(getattr(network, name), np.array(said[name], dtype=float)), name
    assert provenance == {key: value for key, value in said.items() if key not in NETWORK_FIELDS}
    save_network(network, other, **provenance)
    again, again_provenance = load_network(other)
    assert all(same_bits(getattr(again, n), getattr(network, n)) for n in WEIGHTS) and again_provenance == provenance


@pytest.mark.slow
@PROPERTY
@given(damage=byte_damage)
def test_a_damaged_network_file_loads_the_same_or_is_refused(network_file, damage):
    path, network = network_file
    bad = path.with_name("damaged.json")
    bad.write_bytes(damaged(path.read_bytes(), damage))
    if not refused(load_network, bad):
        loaded, _ = load_network(bad)
        check_network_file(bad, path.with_name("again.json"))
        changed = json.loads(bad.read_text()) != json.loads(path.read_text())
        assert changed or all(same_bits(getattr(loaded, n), getattr(network, n)) for n in WEIGHTS)


@pytest.mark.slow
@PROPERTY
@given(change=JSON_CHANGES)
def test_a_changed_network_file_loads_what_it_says_or_is_refused(network_file, change):
    path, _ = network_file
    bad = path.with_name("changed.json")
    bad.write_text(json_text(corrupt_json(json.loads(path.read_text()), *change)))
    check_network_file(bad, path.with_name("again.json"))


# --- the run record (.npz) ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    run = evolve(SMALL, seed=4, record_best=True)
    path = folder / "run.npz"
    save_run(run, path)
    return path, run


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
    put(np.nan),
    put(np.inf),
    put(-np.inf),
    put(-1),
    put(0),
    put(11),
    put(33),
    put(-321),
    put(1e300),
    put(2.5),
    lambda a, k: np.full_like(a, a.flat[0]) if a.size else a,
    lambda a, k: np.full(a.shape, np.iinfo(np.int64).max) if a.dtype.kind in "iu" else a,
    lambda a, k: np.full(a.shape, -1) if a.dtype.kind in "iu" else a,
    config_text(lambda c: c.update(generations=10**400)),
    config_text(lambda c: c.update(generations=4)),
    config_text(lambda c: c.update(trials=1)),
    config_text(lambda c: c.update(parents="6")),
    config_text(lambda c: c.update(rules=[1, 2])),
    config_text(lambda c: c["selection"].update(payoff=[1, -1, 0.5])),
    config_text(lambda c: c.pop("mutation")),
    lambda a, k: np.array("[" * 100_000 + "]" * 100_000),
    lambda a, k: np.array('{"parents": NaN}'),
    lambda a, k: np.array("not json"),
    lambda a, k: np.array(
        json.dumps(
            {
                "population": 4,
                "parents": 2,
                "generations": 3,
                "runs": 2,
                "player": {"view": "mover", "winning_moves": "evaluator"},
            }
        )
    ),  # fmt: skip
]
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


def check_run_file(path, other):
    """The loader refuses ``path``, or returns exactly its arrays, which save and load back the same."""
    if refused(load_run, path):
        return None
    run = load_run(path)
    said = read_arrays(path)
    stored = said["settings" if "settings" in said else "config"]  # "config" in version 1
    assert run.settings == FogelSettings.from_dict(json.loads(str(stored)))
    assert run.seed == int(said["seed"]) and run.trial_numbers == tuple(said["trial_numbers"].tolist())
    for name in ("best_score", "mean_score", "mean_hidden", "final_points"):
        assert np.array_equal(getattr(run, name), said[name]), name
    for prefix, population in (("final", run.final_parents), ("best", run.best_networks)):
        if population is None:
            assert not any(f"{prefix}_{name}" in said for name in POPULATION_FIELDS)
            continue
        for name, array in zip(POPULATION_FIELDS, population.arrays(), strict=True):
            assert np.array_equal(array, said[f"{prefix}_{name}"]), name
    save_run(run, other)
    assert_same_run(load_run(other), run)
    return run


def assert_same_run(a: EvolutionRun, b: EvolutionRun) -> None:
    assert a.settings == b.settings and a.seed == b.seed and a.trial_numbers == b.trial_numbers
    for name in ("best_score", "mean_score", "mean_hidden", "final_points"):
        assert same_bits(getattr(a, name), getattr(b, name)), name
    assert (a.best_networks is None) == (b.best_networks is None)
    for x, y in ((a.final_parents, b.final_parents), (a.best_networks, b.best_networks)):
        if x is not None:
            assert all(same_bits(p, q) for p, q in zip(x.arrays(), y.arrays(), strict=True))


@pytest.mark.slow
@PROPERTY
@given(damage=byte_damage)
def test_a_damaged_run_record_loads_the_same_or_is_refused(run_file, damage):
    path, run = run_file
    bad = path.with_name("damaged.npz")
    bad.write_bytes(damaged(path.read_bytes(), damage))
    if not refused(load_run, bad):
        assert_same_run(load_run(bad), run)


@pytest.mark.slow
@PROPERTY
@given(change=array_changes)
def test_a_changed_run_record_loads_what_it_says_or_is_refused(run_file, change):
    path, _ = run_file
    bad = path.with_name("changed.npz")
    with open(bad, "wb") as handle:
        np.savez(handle, **corrupt_arrays(read_arrays(path), *change))
    check_run_file(bad, path.with_name("again.npz"))


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


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: {"best_score": np.where(np.arange(3) == 1, np.nan, a["best_score"])}, "'best_score' holds NaN"),
        (lambda a: {"mean_score": a["mean_score"][:, :-1]}, r"'mean_score' has shape \(2, 2\); expected \(2, 3\)"),
        (lambda a: {"mean_hidden": a["mean_hidden"].T}, "'mean_hidden' has shape"),
        (lambda a: {"best_score": a["best_score"] * 0 + 33}, "'best_score' holds 33.0, above 32"),
        (lambda a: {"mean_score": a["mean_score"] * 0 - 400}, "'mean_score' holds .*, below -320"),
        (lambda a: {"mean_hidden": a["mean_hidden"] * 0}, "'mean_hidden' holds 0.0, below 1"),
        (lambda a: {"final_points": a["final_points"] * 0 - 1}, "'final_points' holds -1, below 0"),
        (lambda a: {"final_points": a["final_points"] + 0.5}, "'final_points' must hold whole numbers"),
        (lambda a: {"final_hidden_count": a["final_hidden_count"] * 0}, "'final_hidden_count' holds 0, below 1"),
        (lambda a: {"best_hidden_count": a["best_hidden_count"] + 10}, "'best_hidden_count' holds .*, above 10"),
        (lambda a: {"final_hidden_weights": a["final_hidden_weights"] + 1}, "beyond hidden_count; they must be 0"),
        (lambda a: {"best_output_bias": None}, "'best_output_bias' is missing"),
        (lambda a: {"final_output_bias": None}, "'final_output_bias' is missing"),
        (lambda a: {"trial_numbers": np.array([0, 0])}, "'trial_numbers' must be distinct"),
        (lambda a: {"trial_numbers": np.array([-1, 0])}, "'trial_numbers' holds -1, below 0"),
        (lambda a: {"trial_numbers": np.array([0, 2])}, "'trial_numbers' holds 2, above 1"),
        (lambda a: {"seed": np.array(-4)}, "'seed' is -4"),
        (lambda a: {"seed": np.array(4.0)}, "'seed' must be a whole number"),
        (lambda a: {"settings": np.array("[" * 100_000 + "]" * 100_000)}, "'settings' nests too deep"),
        (lambda a: {"settings": np.array('{"parents": 1e400}')}, "'settings' holds invalid settings"),
        (lambda a: {"settings": None}, "'settings' is missing"),
        (lambda a: {"format": np.array("al-khateeb-run")}, "'format' is 'al-khateeb-run'; expected 'fogel-run'"),
        (lambda a: {"version": np.array(3)}, "'version' is 3; expected 1 to 2"),
        (lambda a: {"version": None}, "'version' is missing"),
        (lambda a: {"best_score": a["best_score"].astype(str)}, "'best_score' must hold numbers"),
    ],
)
def test_a_bad_run_record_says_which_array_is_wrong(run_file, change, message):
    path, _ = run_file
    with pytest.raises(ValueError, match=re.escape(str(path.with_name("case.npz"))) + r" \(Fogel run record\): .*"
                       + message):  # fmt: skip
        load_run(rewrite(path, **change(read_arrays(path))))


def test_run_records_that_are_not_one_say_so(run_file, tmp_path):
    path, run = run_file
    (tmp_path / "empty.npz").write_bytes(b"")
    (tmp_path / "text.npz").write_text("hello")
    (tmp_path / "half.npz").write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    (tmp_path / "folder.npz").mkdir()
    np.save(tmp_path / "one.npy", np.arange(3))
    save_network(random_network(np.random.default_rng(1)), tmp_path / "net.json")
    for name in ("empty.npz", "text.npz", "half.npz", "folder.npz", "one.npy", "net.json", "missing.npz"):
        with pytest.raises(ValueError, match=re.escape(str(tmp_path / name))):
            load_run(tmp_path / name)
    with pytest.raises(ValueError, match="no such file"):
        load_run(tmp_path / "missing.npz")
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="flipped.npz"):
        load_run(tmp_path / "flipped.npz")


def numpy_oddities(data: bytes) -> dict[str, bytes]:
    """Damage numpy and zipfile report with other exceptions than a ValueError: a member flagged encrypted
    (RuntimeError), a zip version from the future (NotImplementedError), an array header cut short (TokenError)."""
    directory = data.find(b"PK\x01\x02")
    encrypted, future = bytearray(data), bytearray(data)
    encrypted[directory + 8] |= 1
    future[directory + 6] = 0xFF
    return {"encrypted": bytes(encrypted), "future": bytes(future)}


def test_damage_that_numpy_reports_oddly_is_a_value_error_too(run_file, tmp_path):
    path, _ = run_file
    for name, data in numpy_oddities(path.read_bytes()).items():
        (tmp_path / f"{name}.npz").write_bytes(data)
        with pytest.raises(ValueError, match=f"{name}.npz is not a readable Fogel run record"):
            load_run(tmp_path / f"{name}.npz")
    with open(tmp_path / "header.npz", "wb") as handle:
        np.savez(handle, **read_arrays(path), padding=np.zeros(100_000))
    data = (tmp_path / "header.npz").read_bytes()
    end = data.find(b"}", data.find(b"{'descr'", data.find(b"padding.npy")))
    (tmp_path / "header.npz").write_bytes(data[:end] + b" " + data[end + 1 :])
    with pytest.raises(ValueError, match="header.npz is not a readable Fogel run record"):
        load_run(tmp_path / "header.npz")


def test_a_record_of_the_other_system_is_named(tmp_path):
    from evolving_ttt.al_khateeb.engine import coevolve, save_coevolution_run
    from evolving_ttt.al_khateeb.evaluator import AlKhateebSettings

    record = coevolve(AlKhateebSettings(population=4, parents=2, generations=2, runs=1), seed=1)
    save_coevolution_run(record, tmp_path / "ak.npz")
    with pytest.raises(ValueError, match="'format' is 'al-khateeb-run'.*read it with load_coevolution_run"):
        load_run(tmp_path / "ak.npz")
    old = {k: v for k, v in read_arrays(tmp_path / "ak.npz").items() if k not in ("format", "version")}
    np.savez(tmp_path / "ak0.npz", **old)  # written before records named their format
    with pytest.raises(ValueError, match="'trial_numbers' is missing.*read it with load_coevolution_run"):
        load_run(tmp_path / "ak0.npz")


def test_a_record_written_before_the_format_field_loads_the_same(run_file, tmp_path):
    path, run = run_file
    arrays = read_arrays(path)
    old = {("config" if k == "settings" else k): v for k, v in arrays.items() if k not in ("format", "version")}
    np.savez_compressed(tmp_path / "old.npz", **old)
    assert_same_run(load_run(tmp_path / "old.npz"), run)
    assert str(read_arrays(path)["format"]) == RUN_FORMAT and int(read_arrays(path)["version"]) == 2


def test_a_record_of_version_1_holds_its_settings_as_config_and_loads_the_same(run_file):
    # Version 2 renamed the settings' array from "config" to "settings" (one vocabulary); version 1 is still read.
    path, record = run_file
    arrays = read_arrays(path)
    assert "settings" in arrays and "config" not in arrays
    assert_same_run(load_run(rewrite(path, version=np.array(1), config=arrays["settings"], settings=None)), record)


@pytest.mark.parametrize("version, wrong, right", [(2, "config", "settings"), (1, "settings", "config")])
def test_a_record_with_the_other_versions_name_for_its_settings_is_refused(run_file, version, wrong, right):
    path, _ = run_file
    changes = {"version": np.array(version), "settings": None, wrong: read_arrays(path)["settings"]}
    with pytest.raises(ValueError, match=rf"\(Fogel run record\): field '{wrong}' is not a field of version {version}: "
                                         rf"its settings are under '{right}'"):  # fmt: skip
        load_run(rewrite(path, **changes))


def test_save_run_writes_exactly_the_name_given_whole_and_checked(run_file, tmp_path):
    _, run = run_file
    save_run(run, tmp_path / "run.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]
    assert_same_run(load_run(tmp_path / "run.txt"), run)
    before = (tmp_path / "run.txt").read_bytes()
    broken = [
        EvolutionRun(run.settings, run.seed, run.trial_numbers, run.best_score * np.nan, run.mean_score,
                     run.mean_hidden, run.final_parents, run.final_points, run.best_networks),
        EvolutionRun(run.settings, run.seed, run.trial_numbers, run.best_score[:, :1], run.mean_score,
                     run.mean_hidden, run.final_parents, run.final_points, run.best_networks),
        EvolutionRun(run.settings, -1, run.trial_numbers, run.best_score, run.mean_score, run.mean_hidden,
                     run.final_parents, run.final_points, run.best_networks),
        EvolutionRun(run.settings, run.seed, (0, 0), run.best_score, run.mean_score, run.mean_hidden,
                     run.final_parents, run.final_points, run.best_networks),
        EvolutionRun(run.settings, run.seed, run.trial_numbers, run.best_score, run.mean_score, run.mean_hidden,
                     run.final_parents, -run.final_points - 1, run.best_networks),
        EvolutionRun(run.settings, 2**64, run.trial_numbers, run.best_score, run.mean_score, run.mean_hidden,
                     run.final_parents, run.final_points, run.best_networks),
    ]  # fmt: skip
    for bad in broken:
        with pytest.raises(ValueError, match="run.txt was not written"):
            save_run(bad, tmp_path / "run.txt")
        assert (tmp_path / "run.txt").read_bytes() == before
    with pytest.raises(ValueError, match="run must be an EvolutionRun"):
        save_run("run", tmp_path / "other.npz")
    with pytest.raises(ValueError, match="does not exist"):
        save_run(run, tmp_path / "no" / "run.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


# --- network files: each case the issue names -----------------------------------------------------------------


def network_record(tmp_path, **changes):
    path = tmp_path / "net.json"
    save_network(random_network(np.random.default_rng(2)), path, seed=1)
    record = json.loads(path.read_text())
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (lambda r: json_text({**r, "output_bias": ["@BIGINT@"] * 9}), "more than 30 digits"),
        (lambda r: json_text({**r, "output_bias": ["@E400@"] * 9}), "too large"),
        (lambda r: json_text({**r, "output_bias": ["@NAN@"] * 9}), "the number NaN is not allowed"),
        (lambda r: json_text({**r, "output_bias": ["@DEEP@"] * 9}), "nests deeper than 200"),
        (lambda r: json_text({**r, "seed": "@DEEP201@"}), "nests deeper than 200"),
        (lambda r: json_text({**r, "output_bias": [str(v) for v in r["output_bias"]]}), "must hold numbers only"),
        (lambda r: json_text({**r, "output_bias": [True] * 9}), "must hold numbers only; it holds bool"),
        (lambda r: json_text({**r, "output_bias": [0.5] * 8 + [[0.5]]}), "must be a 1-dimensional array"),
        (lambda r: json_text({**r, "hidden_weights": r["hidden_weights"] + [[0.5]]}), "'hidden_weights' is not a"),
        (lambda r: json_text({**r, "hidden_count": True}), "'hidden_count' must be a whole number"),
        (lambda r: json_text({**r, "version": 1.0}), "'version' must be a whole number"),
        (lambda r: json_text({**r, "format": "al-khateeb-evaluator"}), 'it needs "format": "fogel-ttt-network"'),
        (lambda r: json_text([r]), "is not a network file"),
        (lambda r: "", "not valid JSON"),
        (lambda r: json_text(r)[:-30], "not valid JSON"),
    ],
)
def test_a_bad_network_file_says_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text(network_record(tmp_path)))
    with pytest.raises(ValueError, match=message) as error:
        load_network(path)
    assert "bad.json" in str(error.value)


def test_a_missing_or_unreadable_network_file_says_so(tmp_path):
    with pytest.raises(ValueError, match="missing.json could not be read"):
        load_network(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="could not be read"):
        load_network(tmp_path)
    (tmp_path / "latin.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(ValueError, match="latin.json is not valid JSON"):
        load_network(tmp_path / "latin.json")


@pytest.mark.parametrize("field", NETWORK_FIELDS)
def test_provenance_cannot_override_the_format_fields(tmp_path, field):
    with pytest.raises(ValueError, match=rf"may not set the format's own field\(s\) \['{field}'\]"):
        save_network(random_network(np.random.default_rng(3)), tmp_path / "net.json", **{field: 1})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("provenance", "message"),
    [
        ({"seed": float("nan")}, "Out of range float values"),
        ({"seed": 10**400}, "more than 30 digits"),
        ({"experiment": object()}, "not JSON serializable"),
        ({"deep": json.loads("[" * 300 + "]" * 300)}, "nests deeper than 200"),
    ],
)
@pytest.mark.slow
def test_save_network_refuses_what_load_network_would_refuse_and_keeps_the_old_file(tmp_path, provenance, message):
    network = random_network(np.random.default_rng(4))
    path = tmp_path / "net.json"
    save_network(network, path, seed=1)
    before = path.read_text()
    with pytest.raises(ValueError, match=message):
        save_network(network, path, **provenance)
    assert path.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["net.json"]
    deep = {"deep": None}
    for _ in range(100_000):
        deep = {"deep": deep}
    with pytest.raises(ValueError, match="net.json was not written"):
        save_network(network, path, note=deep)
    assert path.read_text() == before


def test_save_network_writes_exactly_the_name_given(tmp_path):
    network = random_network(np.random.default_rng(5))
    save_network(network, tmp_path / "champion.txt", seed=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["champion.txt"]
    loaded, provenance = load_network(tmp_path / "champion.txt")
    assert all(same_bits(getattr(loaded, n), getattr(network, n)) for n in WEIGHTS) and provenance == {"seed": 2}


def test_the_committed_champion_loads_and_saves_to_the_same_text(champion_path, tmp_path):
    network, provenance = load_network(champion_path)
    assert network.hidden_count == 10 and provenance["seed"] == 1 and provenance["trial"] == 0
    save_network(network, tmp_path / "champion.json", **provenance)
    assert (tmp_path / "champion.json").read_text() == champion_path.read_text()


# --- the memory estimate and the types of arguments -------------------------------------------------------------


def test_the_memory_estimate_counts_the_generations_and_the_recorded_networks():
    paper = estimated_memory(fe.PAPER_EXPERIMENT, workers=2)
    assert 100e6 < paper < 200e6
    huge = FogelSettings(generations=10**9)
    assert estimated_memory(huge) > 1e12 and estimated_memory(huge, 8) > 1e12
    longer = FogelSettings(generations=8000)
    assert estimated_memory(longer) - estimated_memory(fe.PAPER_EXPERIMENT) > 3 * 8 * 20 * 7200
    assert estimated_memory(longer, record_best=True) - estimated_memory(longer) > 20 * 8000 * 1600
    assert estimated_memory(FogelSettings(generations=10**400)) == fe.MEMORY_ESTIMATE_CAP


def test_evolve_with_a_billion_generations_is_refused_by_the_estimate(tmp_path, monkeypatch, capsys):
    import evolving_ttt.cli as cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the run started although the memory estimate should refuse it")

    monkeypatch.setattr(cli, "run_system", must_not_run)
    with pytest.raises(SystemExit) as stop:
        cli.main(["evolve", "--quiet", "--generations", str(10**9), "--out", str(tmp_path / "run.npz")])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "Traceback" not in error and "memory" in error


NETWORK = random_network(np.random.default_rng(6))
BOARD = np.zeros(9, dtype=np.int8)


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: fn.network_move(None, BOARD), "network"),
        (lambda: fn.network_outputs("net", BOARD), "network"),
        (lambda: fn.network_preactivations(fn.stack_networks([NETWORK]), BOARD), "network"),
        (lambda: fn.stack_networks([None]), "networks"),
        (lambda: fn.stack_networks(None), "networks"),
        (lambda: fn.concatenate_populations([]), "populations"),
        (lambda: fn.concatenate_populations([NETWORK]), "populations"),
        (lambda: fn.random_population(None, 3), "rng"),
        (lambda: fn.random_network(5), "rng"),
        (lambda: fn.population_preactivations(NETWORK, np.zeros((1, 1, 9))), "population"),
        (lambda: fn.population_outputs(fn.stack_networks([NETWORK]), np.zeros((1, 9))), "boards"),
        (lambda: fn.population_moves(None, np.zeros((1, 1, 9))), "population"),
        (lambda: fn.population_moves(fn.stack_networks([NETWORK]), "x"), "boards"),
        (lambda: fn.hidden_slot_mask("x"), "hidden_count"),
        (lambda: fn.batch_rows(None, np.zeros((3, 1), dtype=int)), "batch"),
        (lambda: save_network(None, "net.json"), "network"),
        (lambda: save_network(NETWORK, None), "path"),
        (lambda: load_network(None), "path"),
        (lambda: load_network(5), "path"),
        (lambda: Network(None, None, None, None), "hidden_weights"),
        (lambda: evolve("config"), "config"),
        (lambda: evolve(SMALL, seed="1"), "seed"),
        (lambda: evolve(SMALL, seed=2**64), "seed"),
        (lambda: evolve(SMALL, trials=1), "trials"),
        (lambda: evolve(SMALL, trials=[0.5]), "trials"),
        (lambda: evolve(SMALL, workers="2"), "workers"),
        (lambda: fe.merge_runs([]), "runs"),
        (lambda: fe.merge_runs([None]), "runs"),
        (lambda: estimated_memory("config"), "config"),
        (lambda: estimated_memory(SMALL, "2"), "workers"),
        (lambda: save_run(None, "run.npz"), "run"),
        (lambda: load_run(None), "path"),
        (lambda: fe.run_experiment("config"), "config"),
        (lambda: fe.run_experiment(SMALL, seed=1.5), "seed"),
        (lambda: fe.champion_provenance(None), "run"),
        (lambda: fe.trial_generators("1", 2), "seed"),
        (lambda: FogelSettings.from_dict("config"), "data"),
        (lambda: FogelSettings.from_dict({}), "experiment configuration"),
    ],
)
def test_public_functions_given_the_wrong_type_raise_a_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=re.escape(argument)):
        call()
