"""Chapter 13's saved readings (evolving_ttt.fogel.saved_readings): written from the runs they describe, read back
with every member checked, and re-checked to the bit by running one trial of every reading again."""

import dataclasses

import numpy as np
import pytest

from evolving_ttt.fogel.evolution import PAPER_EXPERIMENT, run_experiment
from evolving_ttt.fogel.exact import exact_scores
from evolving_ttt.fogel.saved_readings import (
    MEASURES,
    READINGS_FILE,
    fogel_readings,
    load_fogel_readings,
    recheck_fogel_readings,
    write_fogel_readings,
)
from evolving_ttt.reading import read_npz
from evolving_ttt.records import save_npz
from evolving_ttt.rule_base import PAPER_RULES

SMALL = dataclasses.replace(PAPER_EXPERIMENT, trials=3, generations=12, parents=8)
READINGS = fogel_readings(SMALL)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "readings.npz"
    write_fogel_readings(path, seed=2, readings=READINGS, workers=1, progress=False, command="test")
    return path


def test_the_five_readings_each_change_one_setting_of_the_baseline():
    baseline = READINGS["paper (baseline)"]
    assert list(READINGS)[0] == "paper (baseline)" and len(READINGS) == 5
    for name, settings in list(READINGS.items())[1:]:
        parts = ("rules", "selection", "mutation")
        changed = [part for part in parts if getattr(settings, part) != getattr(baseline, part)]
        assert len(changed) == 1, name
    assert READINGS["rule (d) on X's lines"].rules != PAPER_RULES


@pytest.mark.slow
def test_the_file_holds_what_the_runs_measure(written):
    saved = load_fogel_readings(written, READINGS)
    assert saved.seed == 2 and saved.configs == READINGS and set(saved.measures) == set(MEASURES)
    for name, settings in READINGS.items():
        run = run_experiment(settings, seed=2, progress=False, workers=1)
        assert np.array_equal(saved["best_score"][name], run.best_score)
        assert np.array_equal(saved["plotted_paper"][name], exact_scores(run.best_networks)[0])
        own_mean, own_var = exact_scores(run.final_parents, settings.rules)
        assert np.array_equal(saved["final_mean_own"][name], own_mean)
        assert np.array_equal(saved["final_var_own"][name], own_var)
        assert saved["never_loses"][name].shape == (3,) and saved["never_loses"][name].dtype == bool
    assert str(read_npz(written, "x")["command"]) == "test"


@pytest.mark.slow
def test_the_recheck_finds_the_same_bits_and_finds_one_changed_number(written, tmp_path):
    saved = load_fogel_readings(written, READINGS)
    check = recheck_fogel_readings(saved, trials=(0, 2))
    assert check.all_same and check.values == 5 * 2 * (2 * 12 + 4 * 8 + 1)
    assert check.text() == f"{check.values:,} of {check.values:,} saved numbers computed again, the same bits"
    arrays = dict(read_npz(written, "x"))
    arrays["plotted_paper"] = arrays["plotted_paper"].copy()
    arrays["plotted_paper"][3, 2, 7] = np.nextafter(arrays["plotted_paper"][3, 2, 7], 100)
    arrays["never_loses"] = arrays["never_loses"].copy()
    arrays["never_loses"][1, 0] = ~arrays["never_loses"][1, 0]
    changed = tmp_path / "changed.npz"
    save_npz(changed, arrays)
    check = recheck_fogel_readings(load_fogel_readings(changed, READINGS), trials=(0, 2))
    assert check.values - check.same == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a.update(format=np.array("other")), "field 'format' must be 'fogel-saved-readings'"),
        (lambda a: a.update(version=np.array(3)), "field 'version' is 3"),
        (lambda a: a.update(settings_1=a["settings_2"]), "field 'settings_1' must be the settings of the reading"),
        (lambda a: a.update(settings_5=a["settings_0"]), "field 'settings_5' is one reading too many"),
        (lambda a: a.update(config_0=a.pop("settings_0")), "field 'config_0' is not a field of version 2: its "
                                                           "settings are under 'settings_0'"),  # fmt: skip
        (lambda a: a.update(version=np.array(1)), "field 'settings_0' is not a field of version 1: its settings "
                                                  "are under 'config_0'"),  # fmt: skip
        (lambda a: a.pop("plotted_paper"), "field 'plotted_paper' is missing"),
        (lambda a: a.update(best_score=a["best_score"][:, :2]), "field 'best_score' has shape"),
        (lambda a: a.update(final_var_own=-a["final_var_own"] - 1), "field 'final_var_own' holds .*below 0"),
        (lambda a: a.update(never_loses=a["never_loses"].astype(float)), "field 'never_loses' must hold true/false"),
    ],
    ids=["format", "version", "settings", "extra reading", "config in version 2", "settings in version 1", "missing",
         "shape", "negative variance", "not booleans"],
)
@pytest.mark.slow
def test_a_damaged_file_is_one_value_error_naming_the_file_and_member(written, tmp_path, change, message):
    arrays = dict(read_npz(written, "x"))
    change(arrays)
    damaged = tmp_path / "damaged.npz"
    save_npz(damaged, arrays)
    with pytest.raises(ValueError, match=message) as raised:
        load_fogel_readings(damaged, READINGS)
    assert "damaged.npz" in str(raised.value)


def test_the_writer_writes_version_2_and_a_file_of_version_1_names_the_settings_config(written, tmp_path):
    arrays = dict(read_npz(written, "x"))
    assert int(arrays["version"]) == 2 and {f"settings_{k}" for k in range(5)} <= set(arrays)
    assert not any(name.startswith("config") for name in arrays)
    old = {(name.replace("settings_", "config_") if name.startswith("settings_") else name): value
           for name, value in arrays.items()} | {"version": np.array(1)}  # fmt: skip
    save_npz(tmp_path / "v1.npz", old)
    new, again = load_fogel_readings(written, READINGS), load_fogel_readings(tmp_path / "v1.npz", READINGS)
    assert again.settings == new.settings == READINGS and again.seed == new.seed
    assert all(np.array_equal(again[m][r], new[m][r]) for m in MEASURES for r in READINGS)


def test_the_writer_refuses_provenance_that_would_replace_a_member(tmp_path):
    with pytest.raises(ValueError, match="provenance may not set"):
        write_fogel_readings(tmp_path / "r.npz", readings=READINGS, progress=False, best_score=[1])
    assert not (tmp_path / "r.npz").exists()


def test_the_committed_file_holds_the_five_full_runs_of_chapter_13():
    saved = load_fogel_readings(READINGS_FILE)
    assert saved.seed == 1 and list(saved.settings) == list(fogel_readings()) and saved.configs is saved.settings
    # The committed file is of version 1, which names the settings config_K; it is read as it is (one vocabulary).
    committed = read_npz(READINGS_FILE, "x")
    assert int(committed["version"]) == 1 and "config_0" in committed and "settings_0" not in committed
    assert saved["plotted_paper"]["paper (baseline)"].shape == (20, 800)
    assert saved["final_mean_paper"]["spread as variance"].shape == (20, 50)
