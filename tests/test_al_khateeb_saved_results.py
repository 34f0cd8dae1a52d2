"""Chapter 15's saved measurements (evolving_ttt.al_khateeb.saved_results): written from the runs they describe,
read back with every field checked, and re-checked to the bit from a part of the work."""

import dataclasses
import json

import numpy as np
import pytest

from evolving_ttt.al_khateeb.engine import run_coevolution
from evolving_ttt.al_khateeb.evaluator import PAPER_AL_KHATEEB, OnePlySettings
from evolving_ttt.al_khateeb.results import progress_curve
from evolving_ttt.al_khateeb.saved_results import (
    RESULTS_FILE,
    YARDSTICK_FIELDS,
    load_al_khateeb_results,
    other_readings,
    progress_checkpoints,
    progress_yardsticks,
    reading_config,
    reading_field,
    recheck_al_khateeb_results,
    write_al_khateeb_results,
)

SMALL = dataclasses.replace(PAPER_AL_KHATEEB, runs=3, generations=40)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "results.json"
    write_al_khateeb_results(path, settings=SMALL, seed=3, reading_generations=20, workers=1, progress=False,
                             command="test")  # fmt: skip
    return path


@pytest.fixture(scope="module")
def run():
    return run_coevolution(SMALL, seed=3, progress=False, workers=1)


@pytest.mark.slow
def test_the_file_holds_the_curves_and_players_of_the_runs_it_names(written, run):
    saved = load_al_khateeb_results(written)
    assert saved.settings == SMALL and saved.seed == 3 and saved.reading_generations == 20
    assert saved.checkpoints.tolist() == [1, 20, 40]
    for name, tables in progress_yardsticks().items():
        assert np.array_equal(saved.curves[name], progress_curve(run, *tables, generations=[1, 20, 40]))
    assert list(saved.readings) == other_readings(SMALL.player)
    assert len(saved.readings) == 3 and SMALL.player not in saved.readings
    for settings, players in saved.readings.items():
        again = run_coevolution(reading_config(SMALL, settings, 20), seed=3, progress=False, workers=1)
        assert again.settings.player == settings and again.settings.generations == 20
        assert np.array_equal(players, again.players())
    assert json.loads(written.read_text())["command"] == "test"


@pytest.mark.slow
def test_the_recheck_finds_the_same_bits_and_finds_one_changed_number(written, run, tmp_path):
    saved = load_al_khateeb_results(written)
    check = recheck_al_khateeb_results(saved, run, checkpoints=2, runs=(0, 2))
    assert check.all_same and (check.curve_values, check.players) == (2 * 3 * 2 * 2 * 3, 6)
    assert "72 of 72 numbers the same bits" in check.text() and "6 of 6 final players" in check.text()
    record = json.loads(written.read_text())
    curve = np.array(record["curve_perfect"])
    largest = int(np.argmax(curve[1, -1, 0]))  # one bit of the last checkpoint, which is checked
    curve[1, -1, 0, largest] = np.nextafter(curve[1, -1, 0, largest], 0)
    record["curve_perfect"] = curve.tolist()
    players = np.array(record[reading_field(OnePlySettings("x", "rules"))])
    players[2, 5] = np.nextafter(players[2, 5], 10)
    record[reading_field(OnePlySettings("x", "rules"))] = players.tolist()
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(record))
    check = recheck_al_khateeb_results(load_al_khateeb_results(changed), run, checkpoints=2, runs=(0, 2))
    assert not check.all_same
    assert (check.curve_values - check.curve_same, check.players - check.players_same) == (1, 1)


def test_the_writer_writes_version_2_and_a_file_of_version_1_holds_the_settings_as_config(written, tmp_path):
    record = json.loads(written.read_text())
    assert record["version"] == 2 and record["settings"] == SMALL.as_dict() and "config" not in record
    old = {("config" if key == "settings" else key): value for key, value in record.items()} | {"version": 1}
    (tmp_path / "v1.json").write_text(json.dumps(old))
    new, again = load_al_khateeb_results(written), load_al_khateeb_results(tmp_path / "v1.json")
    assert again.settings == new.settings == SMALL and again.seed == new.seed
    assert all(np.array_equal(again.curves[name], new.curves[name]) for name in YARDSTICK_FIELDS)


def test_the_recheck_refuses_another_run(written):
    other = run_coevolution(SMALL, seed=4, progress=False, workers=1)
    with pytest.raises(ValueError, match="run must be the run the saved results were made from"):
        recheck_al_khateeb_results(load_al_khateeb_results(written), other)


def test_the_writer_refuses_bad_arguments_before_running(tmp_path):
    with pytest.raises(ValueError, match="reading_generations must be from 1 to 40"):
        write_al_khateeb_results(tmp_path / "r.json", settings=SMALL, reading_generations=41, progress=False)
    with pytest.raises(ValueError, match="provenance may not set"):
        write_al_khateeb_results(tmp_path / "r.json", settings=SMALL, progress=False, seed=1, checkpoints=[1])
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(format="other"), "field 'format' must be 'al-khateeb-saved-results'"),
        (lambda r: r.update(version=3), "field 'version' is 3"),
        (lambda r: r.update(checkpoints=[1, 20]), "field 'checkpoints' must be generation 1 and every 20th to 40"),
        (lambda r: r["curve_rule_base"][0][0][0].__setitem__(0, 0.75), "must hold .* probabilities that sum to 1"),
        (lambda r: r["curve_perfect"][0].pop(), "field 'curve_perfect' is not a regular array"),
        (lambda r: r["curve_perfect"].pop(), r"'curve_perfect' has shape \(2, 3, 2, 3\); expected \(3, 3, 2, 3\)"),
        (lambda r: r.pop("players_x_rules"), "field 'players_x_rules' is missing"),
        (lambda r: r["players_mover_rules"][0].__setitem__(3, "1.5"), "field 'players_mover_rules' must hold numbers"),
        (lambda r: r.update(seed=-1), "field 'seed' is -1"),
        (lambda r: r.update(config=r.pop("settings")), "field 'config' is not a field of version 2: its settings "
                                                       "are under 'settings'"),  # fmt: skip
        (lambda r: r.update(version=1), "field 'settings' is not a field of version 1: its settings are under "
                                        "'config'"),  # fmt: skip
    ],
    ids=["format", "version", "checkpoints", "sums", "ragged", "shape", "missing reading", "text", "seed",
         "config in version 2", "settings in version 1"],
)
def test_a_damaged_file_is_one_value_error_naming_the_file_and_field(written, tmp_path, change, message):
    record = json.loads(written.read_text())
    change(record)
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=message) as raised:
        load_al_khateeb_results(damaged)
    assert "damaged.json" in str(raised.value)


def test_the_committed_file_holds_the_papers_run_and_the_three_other_readings():
    saved = load_al_khateeb_results(RESULTS_FILE)
    # The committed file is of version 1, which holds the settings as "config"; it is read as it is (one vocabulary).
    committed = json.loads(RESULTS_FILE.read_text())
    assert committed["version"] == 1 and "config" in committed and "settings" not in committed
    assert saved.settings == PAPER_AL_KHATEEB and saved.config is saved.settings
    assert saved.seed == 1 and saved.reading_generations == 1000
    assert np.array_equal(saved.checkpoints, progress_checkpoints(2000)) and len(saved.checkpoints) == 101
    assert set(saved.curves) == set(YARDSTICK_FIELDS)
    assert [(s.view, s.winning_moves) for s in saved.readings] == [("mover", "rules"), ("x", "evaluator"),
                                                                   ("x", "rules")]  # fmt: skip
    # A perfect player never loses: no network ever wins against it.
    assert np.all(saved.curves["the perfect player"][..., 0] == 0)
