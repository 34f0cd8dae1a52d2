"""Chapters 6 and 7: evolve, saving and loading runs, Figure 2 statistics, network files and the champion."""

import json
import math

import numpy as np
import pytest

from evolving_ttt.fogel import evolution as fogel_evolution
from evolving_ttt.fogel.engine import play_protocol_batch
from evolving_ttt.fogel.evolution import (
    FogelSettings,
    champion_provenance,
    evolve,
    load_run,
    merge_runs,
    run_experiment,
    save_run,
    trial_generators,
)
from evolving_ttt.fogel.network import Network, load_network, random_network, random_population, save_network
from evolving_ttt.fogel.selection import SelectionSettings, draw_generation, game_payoffs, generation_step
from evolving_ttt.rule_base import OpponentRules
from evolving_ttt.run_cache import RUN_CACHE_VARIABLE
from evolving_ttt.statistics import mean_with_confidence, t_quantile_975

ARRAY_NAMES = ("hidden_weights", "hidden_bias", "output_weights", "output_bias")
SMALL = FogelSettings(parents=10, generations=15, trials=3)


def assert_same_population(a, b):
    assert a.shape == b.shape
    for x, y in zip(a.arrays(), b.arrays(), strict=True):
        assert x.shape == y.shape and np.array_equal(x, y)


def assert_same_run(a, b, rows=slice(None)):
    for name in ("best_score", "mean_score", "mean_hidden", "final_points"):
        assert np.array_equal(getattr(a, name)[rows], getattr(b, name)), name
    assert_same_population(a.final_parents[rows], b.final_parents)


@pytest.fixture(scope="module")
def small_run():
    return evolve(SMALL, seed=5)


# --- evolve ----------------------------------------------------------------------------------------------


def test_evolve_records_the_expected_shapes(small_run):
    run = small_run
    assert run.settings == SMALL and run.seed == 5 and run.trial_numbers == (0, 1, 2)
    for name in ("best_score", "mean_score", "mean_hidden"):
        assert getattr(run, name).shape == (3, 15)
    assert run.final_parents.shape == (3, 10) and run.final_points.shape == (3, 10)
    assert run.best_networks is None
    assert np.all((run.mean_hidden >= 1) & (run.mean_hidden <= 10))
    assert np.all(run.best_score >= run.mean_score)
    assert np.all(run.best_score <= 32) and np.all(run.mean_score >= -320)
    assert np.all(np.diff(run.final_points, axis=1) <= 0)  # best first
    assert np.all((run.final_points >= 0) & (run.final_points <= 10))
    best = run.best_network(2)
    assert best.hidden_count == run.final_parents.hidden_count[2, 0]


def test_same_seed_gives_identical_runs_and_different_seeds_differ(small_run):
    again = evolve(SMALL, seed=5)
    assert_same_run(small_run, again)
    other = evolve(SMALL, seed=6)
    assert not np.array_equal(small_run.best_score, other.best_score)
    assert not np.array_equal(small_run.final_parents.hidden_weights, other.final_parents.hidden_weights)


def test_a_subset_of_trials_equals_the_rows_of_the_full_run(small_run):
    alone = evolve(SMALL, seed=5, trials=[1])
    assert alone.trial_numbers == (1,)
    assert_same_run(small_run, alone, rows=[1])
    assert_same_network(alone.best_network(1), small_run.best_network(1))
    reordered = evolve(SMALL, seed=5, trials=[2, 0])
    assert reordered.trial_numbers == (2, 0)
    assert_same_run(small_run, reordered, rows=[2, 0])


def assert_same_network(a, b):
    for name in ARRAY_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_two_workers_give_the_same_run_bit_for_bit(small_run):
    parallel = evolve(SMALL, seed=5, workers=2)
    assert parallel.trial_numbers == small_run.trial_numbers
    assert_same_run(small_run, parallel)


def test_evolve_with_record_best_matches_a_hand_written_loop():
    settings = FogelSettings(
        parents=6, generations=4, trials=2,
        rules=OpponentRules(first_reply="rules"), selection=SelectionSettings(payoff=(1, -1, 0), comparisons=7),
    )  # fmt: skip
    run = evolve(settings, seed=11, record_best=True)
    assert run.best_networks.shape == (2, 4)
    assert run.best_networks.hidden_weights.shape == (2, 4, 10, 9)
    for trial, rng in enumerate(trial_generators(11, 2)):
        parents = random_population(rng, 6)
        for g in range(4):
            draws = draw_generation(rng, 6, 7)
            step = generation_step(parents, draws, settings.rules, settings.mutation, settings.selection)
            assert run.best_score[trial, g] == step.scores.max()
            assert run.mean_score[trial, g] == pytest.approx(step.scores.mean(), abs=1e-12)
            assert run.mean_hidden[trial, g] == pytest.approx(step.scored.hidden_count.mean(), abs=1e-12)
            leader = int(np.argmax(step.scores))
            assert_same_population(run.best_networks[trial, g], step.scored[leader])
            # the recorded network's own sampled score is the best score
            leader_net = run.best_networks[trial, g : g + 1]
            results = play_protocol_batch(leader_net, draws.games[leader][None], settings.rules)
            assert game_payoffs(results, settings.selection.payoff).sum() == run.best_score[trial, g]
            parents = step.parents
        assert_same_population(run.final_parents[trial], parents)
        assert np.array_equal(run.final_points[trial], step.points[step.chosen])
    # with workers the recorded networks are the same
    parallel = evolve(settings, seed=11, record_best=True, workers=2)
    assert_same_population(parallel.best_networks, run.best_networks)


def test_save_run_and_load_run_round_trip(small_run, tmp_path):
    path = tmp_path / "run.npz"
    save_run(small_run, path)
    loaded = load_run(path)
    assert loaded.settings == small_run.settings
    assert loaded.seed == small_run.seed and type(loaded.seed) is int
    assert loaded.trial_numbers == small_run.trial_numbers
    assert_same_run(small_run, loaded)
    subset = evolve(SMALL, seed=5, trials=[2])
    save_run(subset, path)
    assert load_run(path).trial_numbers == (2,)
    assert_same_network(load_run(path).best_network(2), small_run.best_network(2))


def test_save_run_keeps_the_recorded_best_networks(tmp_path):
    settings = FogelSettings(parents=6, generations=3, trials=2)
    run = evolve(settings, seed=4, record_best=True)
    path = tmp_path / "best.npz"
    save_run(run, path)
    loaded = load_run(path)
    assert loaded.best_networks is not None
    assert_same_population(loaded.best_networks, run.best_networks)
    assert_same_run(run, loaded)


def test_run_experiment_is_evolve_with_record_best_and_shares_runs_through_the_cache(tmp_path, monkeypatch):
    settings = FogelSettings(parents=6, generations=3, trials=2)
    expected = evolve(settings, seed=9, record_best=True)
    monkeypatch.delenv(RUN_CACHE_VARIABLE, raising=False)
    plain = run_experiment(settings, seed=9, progress=False, workers=1)
    assert_same_run(expected, plain)
    assert_same_population(plain.best_networks, expected.best_networks)
    cache = tmp_path / "cache"
    monkeypatch.setenv(RUN_CACHE_VARIABLE, str(cache))
    first = run_experiment(settings, seed=9, progress=False, workers=2)
    assert_same_run(expected, first)
    saved = sorted(cache.glob("*.npz"))
    assert len(saved) == 1 and ".partial" not in saved[0].name

    def no_evolving(*args, **kwargs):
        raise AssertionError("a cached run must be read back, not computed again")

    monkeypatch.setattr(fogel_evolution, "evolve", no_evolving)
    again = run_experiment(settings, seed=9, progress=False, workers=1)
    assert_same_run(expected, again)
    assert_same_population(again.best_networks, expected.best_networks)
    assert again.settings == settings and again.seed == 9
    # another seed is another run: it is not answered from the cache
    with pytest.raises(AssertionError, match="must be read back"):
        run_experiment(settings, seed=10, progress=False, workers=1)


def test_merge_runs(small_run):
    parts = [evolve(SMALL, seed=5, trials=[k]) for k in (0, 1, 2)]
    merged = merge_runs(parts)
    assert merged.trial_numbers == (0, 1, 2)
    assert_same_run(small_run, merged)
    with pytest.raises(ValueError, match="same configuration and seed"):
        merge_runs([parts[0], evolve(SMALL, seed=6, trials=[1])])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trials": [3]}, r"trials must be trial numbers from 0 to 2; got \[3\]"),
        ({"trials": [-1]}, r"trials must be trial numbers from 0 to 2"),
        ({"trials": []}, r"trials must be trial numbers from 0 to 2"),
        ({"workers": 0}, r"workers must be a whole number >= 1; got 0"),
        ({"seed": -1}, r"seed must be a whole number >= 0; got -1"),
        ({"seed": 1.5}, r"seed must be a whole number >= 0"),
        ({"seed": True}, r"seed must be a whole number >= 0"),
    ],
)
def test_evolve_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        evolve(SMALL, **{"seed": 1, **kwargs})


def test_best_network_of_a_trial_not_in_the_run():
    run = evolve(FogelSettings(parents=6, generations=1, trials=3), seed=1, trials=[2])
    with pytest.raises(ValueError, match=r"trial 0 is not in this run; it holds trials \[2\]"):
        run.best_network(0)


def test_a_repeated_trial_number_is_rejected():
    """Each trial has one generator: running it twice in one batch would interleave its draws."""
    settings = FogelSettings(parents=6, generations=3, trials=3)
    for workers in (1, 2):
        with pytest.raises(ValueError, match=r"trials must not repeat a trial number.*got \[1, 1\]"):
            evolve(settings, seed=2, trials=[1, 1], workers=workers)


def test_trial_generators_are_independent_streams():
    a = [g.random(4) for g in trial_generators(3, 3)]
    b = [g.random(4) for g in trial_generators(3, 5)[:3]]
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], a[1])
    with pytest.raises(ValueError, match="trials must be a whole number >= 1"):
        trial_generators(3, 0)


# --- Figure 2 statistics ----------------------------------------------------------------------------------


def test_t_quantile_975():
    assert t_quantile_975(19) == pytest.approx(2.0930, abs=1e-3)
    assert t_quantile_975(1000) == pytest.approx(1.962, abs=1e-3)
    assert t_quantile_975(10) == pytest.approx(2.2281, abs=1e-3)
    assert t_quantile_975(5) == pytest.approx(2.5706, abs=1e-3)
    values = [t_quantile_975(df) for df in range(5, 200)]
    assert all(a > b for a, b in zip(values, values[1:], strict=False))
    with pytest.raises(ValueError, match="df must be a whole number >= 1; got 0"):
        t_quantile_975(0)


def test_mean_with_confidence_by_hand():
    curves = np.arange(20.0)[:, None] * np.array([1.0, 2.0]) + np.array([0.0, 3.0])  # 20 trials, 2 generations
    mean, low, high = mean_with_confidence(curves)
    assert mean.tolist() == [9.5, 22.0]
    sd = math.sqrt(sum((k - 9.5) ** 2 for k in range(20)) / 19)  # 5.9161
    half = 2.0930 * sd / math.sqrt(20) * np.array([1.0, 2.0])
    assert np.allclose(high - mean, half, rtol=1e-4)
    assert np.allclose(mean - low, half, rtol=1e-4)
    constant = mean_with_confidence(np.full((5, 3), 7.0))
    assert all(np.array_equal(part, [7.0] * 3) for part in constant)
    with pytest.raises(ValueError, match="at least 2 trials"):
        mean_with_confidence(np.zeros((1, 4)))


# --- network files ----------------------------------------------------------------------------------------


def test_save_and_load_network_round_trip(tmp_path):
    rng = np.random.default_rng(8)
    network = random_network(rng)
    # awkward floats survive: subnormals, many digits, negative zero
    weights = np.array(network.hidden_weights)
    weights[0, :3] = [5e-324, 1 / 3, -0.0]
    network = Network(weights, network.hidden_bias, network.output_weights, network.output_bias)
    path = tmp_path / "net.json"
    save_network(network, path, seed=4, trial=2, note="hand made")
    loaded, provenance = load_network(path)
    assert_same_network(loaded, network)
    assert np.signbit(loaded.hidden_weights[0, 2])
    assert provenance == {"seed": 4, "trial": 2, "note": "hand made"}
    record = json.loads(path.read_text())
    assert record["format"] == "fogel-ttt-network" and record["version"] == 1
    assert record["hidden_count"] == network.hidden_count


def write_record(path, changes=None, drop=()):
    network = random_network(np.random.default_rng(1))
    save_network(network, path)
    record = json.loads(path.read_text())
    record.update(changes or {})
    for name in drop:
        del record[name]
    path.write_text(json.dumps(record))
    return record


@pytest.mark.parametrize(
    ("changes", "drop", "message"),
    [
        ({"format": "something-else"}, (), r'is not a network file: it needs "format": "fogel-ttt-network"'),
        ({}, ("format",), r"is not a network file"),
        ({"version": 2}, (), r"unsupported version 2; this code reads version 1"),
        ({}, ("version",), r"unsupported version None"),
        ({}, ("output_bias",), r"net.json \(network file\): field 'output_bias' is missing"),
        ({}, ("hidden_count", "hidden_bias"), r"field 'hidden_count' is missing"),
        ({"output_bias": [0.0] * 8}, (), r"field 'output_bias' has shape \(8,\); expected \(9,\)"),
        ({"hidden_bias": [[0.0]]}, (), r"field 'hidden_bias' must be a 1-dimensional array"),
        ({"hidden_weights": [[0.0] * 9] * 11}, (), r"field 'hidden_weights' has shape \(11, 9\)"),
        ({"hidden_count": 99}, (), r"field 'hidden_count' is 99; expected 1 to 10"),
        ({"hidden_count": 10.0}, (), r"field 'hidden_count' must be a whole number"),
        ({"output_bias": [float("nan")] + [0.0] * 8}, (), r"net.json is not valid JSON: the number NaN"),
        ({"output_bias": [float("inf")] + [0.0] * 8}, (), r"net.json is not valid JSON: the number Infinity"),
        ({"output_bias": ["a"] * 9}, (), r"field 'output_bias' must hold numbers only; it holds str 'a'"),
        ({"output_bias": [True] + [0.0] * 8}, (), r"field 'output_bias' must hold numbers only; it holds bool"),
        ({"output_bias": [[0.0]] * 9}, (), r"field 'output_bias' must be a 1-dimensional array"),
    ],
)
def test_load_network_rejects_bad_files(tmp_path, changes, drop, message):
    path = tmp_path / "net.json"
    write_record(path, changes, drop)
    with pytest.raises(ValueError, match=message):
        load_network(path)


def test_load_network_rejects_non_json(tmp_path):
    path = tmp_path / "net.json"
    path.write_text("this is { not json")
    with pytest.raises(ValueError, match=r"net.json is not valid JSON"):
        load_network(path)
    path.write_text("[1, 2, 3]")
    with pytest.raises(ValueError, match="is not a network file"):
        load_network(path)


# --- the committed champion -------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_committed_champion_is_reproduced_by_its_recorded_run(champion):
    network, provenance = champion
    assert network.hidden_count == 10
    assert {"seed", "trial", "generation", "experiment"} <= set(provenance)
    settings = FogelSettings.from_dict(provenance["experiment"])
    assert provenance["generation"] == settings.generations
    run = evolve(settings, seed=provenance["seed"], trials=[provenance["trial"]])
    assert_same_network(run.best_network(provenance["trial"]), network)
    recorded = champion_provenance(run, provenance["trial"])
    assert {k: recorded[k] for k in ("seed", "trial", "generation", "experiment")} == {
        k: provenance[k] for k in ("seed", "trial", "generation", "experiment")
    }
