"""The run cache (evolving_ttt.run_cache.cached_run): every entry is checked against its key and its checksum, a
damaged or mismatched entry is reported and computed again, a bad folder fails before the run, writers of one key
never collide."""

import hashlib
import json
import multiprocessing
import os
import queue
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evolving_ttt.reading import read_npz
from evolving_ttt.records import save_npz
from evolving_ttt.run_cache import COMPUTING_SUFFIX, RUN_CACHE_VARIABLE, RunCacheWarning, cached_run


def run_of(seed: int) -> dict[str, np.ndarray]:
    """A small stand-in for a run: its arrays depend on the seed."""
    generator = np.random.default_rng(seed)
    return {"curve": generator.uniform(-1, 1, 200), "counts": generator.integers(0, 9, (20, 9))}


def save(run, path):
    save_npz(path, run, "test run")


def load(path):
    return read_npz(path, "test run")


def same(one, two) -> bool:
    return set(one) == set(two) and all(np.array_equal(one[name], two[name]) for name in one)


class Computer:
    """``compute`` for a seed, counting its calls."""

    def __init__(self, seed: int):
        self.seed, self.calls = seed, 0

    def __call__(self):
        self.calls += 1
        return run_of(self.seed)


def run_cached(seed: int, compute=None, name: str = "run"):
    compute = compute or Computer(seed)
    return cached_run(name, {"config": {"parents": 6}, "seed": seed}, ".npz", compute, save, load)


def entries(folder: Path) -> list[Path]:
    return sorted(path for path in folder.iterdir()
                  if path.name != ".run-cache.lock" and not path.name.endswith(COMPUTING_SUFFIX))


def only_entry(folder: Path) -> Path:
    found = [path for path in entries(folder) if path.suffix == ".npz"]
    assert len(found) == 1, entries(folder)
    return found[0]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(RUN_CACHE_VARIABLE, str(folder))
    return folder


def test_a_run_is_computed_once_stored_with_its_key_and_checksum_and_read_back(cache):
    first = Computer(1)
    assert same(run_cached(1, first), run_of(1)) and first.calls == 1
    entry = only_entry(cache)
    key_file = entry.with_name(entry.name + ".key")
    assert entries(cache) == [entry, key_file]  # no partial file is left
    record = json.loads(key_file.read_text())
    assert record["key"] == {"config": {"parents": 6}, "seed": 1} and record["format"] == "ttt-run-cache-key"
    assert record["entry"] == entry.name and len(record["sha256"]) == 64 and record["bytes"] == entry.stat().st_size
    again = Computer(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same(run_cached(1, again), run_of(1))
    assert again.calls == 0


def test_without_the_variable_the_run_is_always_computed_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(RUN_CACHE_VARIABLE, raising=False)
    monkeypatch.chdir(tmp_path)
    compute = Computer(2)
    run_cached(2, compute)
    run_cached(2, compute)
    assert compute.calls == 2 and not list(tmp_path.iterdir())


def truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def flip(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :]


DAMAGE = {"truncated": truncate, "bit-flipped": flip, "empty": lambda data: b""}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_is_reported_by_name_computed_again_and_replaced(cache, damage):
    run_cached(3)
    entry = only_entry(cache)
    entry.write_bytes(DAMAGE[damage](entry.read_bytes()))
    compute = Computer(3)
    with pytest.warns(RunCacheWarning, match=f"{entry.name} does not match the checksum"):
        assert same(run_cached(3, compute), run_of(3))
    assert compute.calls == 1
    assert same(load(entry), run_of(3))  # replaced by a whole entry
    again = Computer(3)
    run_cached(3, again)
    assert again.calls == 0


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_with_a_matching_checksum_is_caught_by_its_loader(cache, damage):
    """Someone damaged the entry and rewrote the checksum: the loader's ValueError counts as damage."""
    run_cached(4)
    entry = only_entry(cache)
    key_file = entry.with_name(entry.name + ".key")
    entry.write_bytes(DAMAGE[damage](entry.read_bytes()))
    record = json.loads(key_file.read_text())
    record["sha256"] = hashlib.sha256(entry.read_bytes()).hexdigest()
    key_file.write_text(json.dumps(record))
    compute = Computer(4)
    with pytest.warns(RunCacheWarning, match=f"{entry.name} could not be read .*not a readable test run"):
        assert same(run_cached(4, compute), run_of(4))
    assert compute.calls == 1 and same(load(entry), run_of(4))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda key_file: key_file.unlink(), "has no key file"),
        (lambda key_file: key_file.write_text(""), "has a damaged key file"),
        (lambda key_file: key_file.write_text("[" * 10_000), "has a damaged key file"),
        (lambda key_file: key_file.write_text('{"format": "other", "version": 1}'),
         r"has a key file \S+ that is not a run-cache key"),
        (lambda key_file: key_file.write_bytes(key_file.read_bytes()[:-30]), "has a damaged key file"),
    ],
)
def test_a_missing_or_damaged_key_file_is_reported_and_the_run_computed_again(cache, change, message):
    run_cached(5)
    entry = only_entry(cache)
    change(entry.with_name(entry.name + ".key"))
    compute = Computer(5)
    with pytest.warns(RunCacheWarning, match=f"{entry.name} {message}"):
        assert same(run_cached(5, compute), run_of(5))
    assert compute.calls == 1
    again = Computer(5)
    run_cached(5, again)
    assert again.calls == 0


def test_an_entry_of_another_key_renamed_into_place_is_detected_and_computed_again(cache):
    run_cached(1)
    entry_one = only_entry(cache)
    run_cached(2, name="other")
    entry_two = next(path for path in entries(cache) if path.name.startswith("other-") and path.suffix == ".npz")
    # the entry alone: its bytes are not those its key file vouches for
    entry_one.write_bytes(entry_two.read_bytes())
    compute = Computer(1)
    with pytest.warns(RunCacheWarning, match=f"{entry_one.name} does not match the checksum"):
        assert same(run_cached(1, compute), run_of(1))
    assert compute.calls == 1
    # the entry and its key file together: the key names seed 2, the run asked for is seed 1
    entry_two.replace(entry_one)
    entry_two.with_name(entry_two.name + ".key").replace(entry_one.with_name(entry_one.name + ".key"))
    compute = Computer(1)
    with pytest.warns(RunCacheWarning, match=f"{entry_one.name} holds the run of another key \\(its seed differ"):
        assert same(run_cached(1, compute), run_of(1))
    assert compute.calls == 1 and same(load(entry_one), run_of(1))


def test_an_old_entry_without_key_file_is_not_trusted(cache):
    """An entry as the cache wrote them before it kept keys (another seed's run, say) is computed again."""
    run_cached(7)
    entry = only_entry(cache)
    entry.with_name(entry.name + ".key").unlink()
    save(run_of(8), entry)
    compute = Computer(7)
    with pytest.warns(RunCacheWarning, match="has no key file"):
        assert same(run_cached(7, compute), run_of(7))


def never_computed():
    raise AssertionError("the run must not be computed when the cache folder is unusable")


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_cache_path_that_is_a_file_fails_before_the_run(tmp_path, monkeypatch, where):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    folder = blocker if where == "a file" else blocker / "inside"
    monkeypatch.setenv(RUN_CACHE_VARIABLE, str(folder))
    with pytest.raises(ValueError, match=f"{RUN_CACHE_VARIABLE}={folder}: "):
        cached_run("run", {"seed": 1}, ".npz", never_computed, save, load)
    assert blocker.read_text() == "not a folder"


def test_a_folder_in_place_of_the_entry_fails_before_the_run(cache):
    run_cached(9)
    entry = only_entry(cache)
    entry.unlink()
    entry.mkdir()
    with pytest.raises(ValueError, match=f"{entry.name} is a folder"):
        cached_run("run", {"config": {"parents": 6}, "seed": 9}, ".npz", never_computed, save, load)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"name": "../up"}, "name must be a plain file name"),
        ({"name": ""}, "name must be a plain file name"),
        ({"name": 3}, "name must be a plain file name"),
        ({"suffix": "npz"}, "suffix must be"),
        ({"compute": None}, "compute must be a function"),
        ({"load": "load_run"}, "load must be a function"),
        ({"key": ["seed", 1]}, "key must be a dict"),
        ({"key": {"seed": float("nan")}}, "key must be a JSON object"),
        ({"key": {"seed": object()}}, "key must be a JSON object"),
    ],
)
def test_bad_arguments_are_a_value_error_naming_them(cache, arguments, message):
    given_arguments = {"name": "run", "key": {"seed": 1}, "suffix": ".npz", "compute": never_computed,
                       "save": save, "load": load, **arguments}  # fmt: skip
    with pytest.raises(ValueError, match=message):
        cached_run(**given_arguments)


def test_an_interrupted_save_leaves_no_partial_file_and_no_entry(cache):
    def interrupted_save(run, path):
        save(run, path)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached_run("run", {"seed": 1}, ".npz", Computer(1), interrupted_save, load)
    assert entries(cache) == []
    compute = Computer(1)
    run_cached(1, compute)
    assert compute.calls == 1


def test_a_run_that_cannot_be_stored_is_returned_with_a_warning(cache):
    def failing_save(run, path):
        Path(path).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.warns(RunCacheWarning, match="could not be stored .*No space left on device.*returned, not shared"):
        assert same(cached_run("run", {"seed": 1}, ".npz", Computer(1), failing_save, load), run_of(1))
    assert entries(cache) == []


# --- Concurrent callers of one key: one computes, the others wait and read its entry ------------------------------


def compute_slowly(seed, computed):
    def compute():
        computed.put(seed)
        time.sleep(0.3)  # long enough for every other caller to be waiting for the entry
        return run_of(seed)

    return compute


def race_in_process(folder, barrier, results, computed, index, round_):
    os.environ[RUN_CACHE_VARIABLE] = folder
    barrier.wait(timeout=30)  # every caller asks for the run at the same moment
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_cached(round_, compute_slowly(round_, computed))
    results.put((index, round_, same(run, run_of(round_)), [str(w.message) for w in caught]))


def check_one_valid_entry_per_key(folder: Path, seeds) -> None:
    names = [path.name for path in entries(folder)]
    assert not [name for name in names if ".partial" in name], names
    assert len(names) == 2 * len(seeds), names  # an entry and its key file per key
    for seed in seeds:
        compute = Computer(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert same(run_cached(seed, compute), run_of(seed))
        assert compute.calls == 0


@pytest.mark.slow
def test_concurrent_processes_asking_for_one_key_compute_it_once_and_all_get_it(cache):
    context = multiprocessing.get_context("fork")
    callers, rounds = 4, [11, 12, 13]
    results, computed = context.Queue(), context.Queue()
    for round_ in rounds:
        barrier = context.Barrier(callers)
        processes = [context.Process(target=race_in_process, args=(str(cache), barrier, results, computed, k, round_))
                     for k in range(callers)]  # fmt: skip
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
        assert [process.exitcode for process in processes] == [0] * callers
    reports = [results.get(timeout=10) for _ in range(callers * len(rounds))]
    assert all(ok for _, _, ok, _ in reports)
    assert [w for *_, w in reports if w] == []  # no caller saw a half-written or foreign entry
    computations = []
    while not computed.empty():
        computations.append(computed.get(timeout=10))
    assert sorted(computations) == rounds  # each key computed by one process only
    check_one_valid_entry_per_key(cache, rounds)


def test_concurrent_threads_asking_for_one_key_compute_it_once_and_all_get_it(cache):
    callers = 6
    barrier = threading.Barrier(callers)
    computed: queue.Queue = queue.Queue()
    outcomes: list[bool] = []

    def caller():
        barrier.wait(timeout=30)
        outcomes.append(same(run_cached(21, compute_slowly(21, computed)), run_of(21)))

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert outcomes == [True] * callers
    assert computed.qsize() == 1
    check_one_valid_entry_per_key(cache, [21])


def test_a_caller_waiting_for_a_key_computes_it_when_the_process_computing_it_dies(cache):
    """The lock of a run being computed goes with its process: after a ``kill -9`` the next caller computes."""
    context = multiprocessing.get_context("fork")
    started = context.Event()

    def hold_forever():
        os.environ[RUN_CACHE_VARIABLE] = str(cache)

        def compute():
            started.set()
            time.sleep(600)

        run_cached(31, compute)

    holder = context.Process(target=hold_forever)
    holder.start()
    try:
        assert started.wait(30)
        waiting = Computer(31)
        killer = threading.Timer(0.5, holder.kill)
        killer.start()
        begun = time.monotonic()
        assert same(run_cached(31, waiting), run_of(31))
        assert waiting.calls == 1 and time.monotonic() - begun >= 0.4  # it waited for the holder, then computed
    finally:
        holder.kill()
        holder.join(10)
    check_one_valid_entry_per_key(cache, [31])


# --- Random damage: the right run, or a warning and the right run; nothing else ---------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    target=st.sampled_from(["entry", "key"]),
    how=st.sampled_from(["truncate", "flip", "append"]),
    where=st.floats(0, 1),
    bit=st.integers(0, 7),
)
def test_random_damage_to_an_entry_or_its_key_gives_the_right_run(target, how, where, bit):
    previous = os.environ.get(RUN_CACHE_VARIABLE)
    with tempfile.TemporaryDirectory() as folder:
        os.environ[RUN_CACHE_VARIABLE] = folder
        try:
            cached_run("run", {"seed": 6}, ".npz", Computer(6), save, load)
            entry = next(Path(folder).glob("run-*.npz"))
            path = entry if target == "entry" else entry.with_name(entry.name + ".key")
            data = path.read_bytes()
            at = min(int(where * len(data)), len(data) - 1)
            if how == "truncate":
                data = data[:at]
            elif how == "flip":
                data = data[:at] + bytes([data[at] ^ (1 << bit)]) + data[at + 1 :]
            else:
                data = data + b"\0" * (bit + 1)
            path.write_bytes(data)
            compute = Computer(6)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                run = cached_run("run", {"seed": 6}, ".npz", compute, save, load)
            assert same(run, run_of(6))
            messages = [str(w.message) for w in caught if issubclass(w.category, RunCacheWarning)]
            assert compute.calls == len(messages) and compute.calls in (0, 1)
            if messages:
                assert entry.name in messages[0]
            again = Computer(6)
            assert same(cached_run("run", {"seed": 6}, ".npz", again, save, load), run_of(6)) and again.calls == 0
        finally:
            if previous is None:
                del os.environ[RUN_CACHE_VARIABLE]
            else:
                os.environ[RUN_CACHE_VARIABLE] = previous
